//! The aggregator, first server of the chain. It serves the merged
//! discovery documents of all three servers, owns APIServices, and proxies
//! the group versions of remote APIServices to their servers ([`proxy`]).
//! Its controllers register built-in and CRD group versions as local
//! APIServices ([`autoregister`]), keep every APIService's Available
//! condition ([`available`]) and publish the front-proxy trust
//! ([`authentication_info`]); [`sample`] is an aggregated API server to
//! try it all with.

pub mod authentication_info;
pub mod autoregister;
pub mod available;
pub mod proxy;
pub mod register;
pub mod sample;

use std::sync::Arc;

use axum::extract::{Path, RawQuery, Request};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use parking_lot::RwLock;
use sha2::Digest;

use crate::api::catalog::Catalog;
use crate::endpoints::discovery;
use crate::endpoints::openapi::OpenApi;
use crate::server::chain::page_not_found;
use crate::server::GenericServer;

/// Whether the Accept header prefers OpenAPI v2 in protobuf over JSON:
/// the first acceptable range in the client's order (and q-values) wins,
/// as kube-openapi negotiates; anything else is JSON.
fn wants_openapi_protobuf(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mut ranges: Vec<(f32, usize, &str)> = accept
        .split(',')
        .enumerate()
        .map(|(i, r)| {
            let q = r
                .split(';')
                .skip(1)
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            (q, i, r.trim())
        })
        .filter(|(q, _, _)| *q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, r) in ranges {
        if crate::endpoints::openapi_pb::is_protobuf_range(r) {
            return true;
        }
        let t = r.split(';').next().unwrap_or("").trim();
        if matches!(t, "application/json" | "application/*" | "*/*") {
            return false;
        }
    }
    false
}

fn openapi_response(body: Bytes, etag: &str, headers: &HeaderMap, immutable: bool) -> Response {
    openapi_response_as(body, etag, headers, immutable, "application/json")
}

fn openapi_response_as(
    body: Bytes,
    etag: &str,
    headers: &HeaderMap,
    immutable: bool,
    content_type: &'static str,
) -> Response {
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag)
    {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    let mut r = (StatusCode::OK, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    if immutable {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
    }
    r
}

/// `address` is `host:port` as clients reach the server (for `/api`);
/// `proxy` routes the group versions of remote APIServices (none offline).
pub fn server(
    catalog: Catalog,
    address: Arc<RwLock<String>>,
    proxy: Option<Arc<proxy::Proxy>>,
) -> GenericServer {
    let openapi = OpenApi::new(catalog.clone());
    let (o1, o2, o3) = (openapi.clone(), openapi.clone(), openapi);
    let (c0, c1, c2, c3, c4) = (
        catalog.clone(),
        catalog.clone(),
        catalog.clone(),
        catalog.clone(),
        catalog,
    );
    let discovery_proxy = proxy.clone();
    let mut server = GenericServer::new("aggregator");
    if let Some(p) = proxy {
        server = server.with_interceptor(Arc::new(move |req| p.intercept(req)));
    }
    server
        .route("/openapi/v2", &[Method::GET], move |headers: HeaderMap| {
            let o = o1.clone();
            async move {
                let d = o.documents().await;
                if wants_openapi_protobuf(&headers) {
                    openapi_response_as(
                        d.v2_protobuf.clone(),
                        &d.v2_protobuf_etag,
                        &headers,
                        false,
                        crate::endpoints::openapi_pb::CONTENT_TYPE,
                    )
                } else {
                    openapi_response(d.v2.clone(), &d.v2_etag, &headers, false)
                }
            }
        })
        .route("/openapi/v3", &[Method::GET], move |headers: HeaderMap| {
            let o = o2.clone();
            async move {
                let d = o.documents().await;
                let etag = format!("\"{:x}\"", sha2::Sha256::digest(&d.v3_index));
                openapi_response(d.v3_index.clone(), &etag, &headers, false)
            }
        })
        .route(
            "/openapi/v3/{*path}",
            &[Method::GET],
            move |Path(path): Path<String>, RawQuery(q): RawQuery, headers: HeaderMap| {
                let o = o3.clone();
                async move {
                    let d = o.documents().await;
                    match d.v3.get(path.trim_matches('/')) {
                        Some((body, hash)) => {
                            let asked = q
                                .as_deref()
                                .and_then(|q| q.strip_prefix("hash="))
                                .unwrap_or("");
                            openapi_response(
                                body.clone(),
                                &format!("\"{hash}\""),
                                &headers,
                                asked == hash,
                            )
                        }
                        None => page_not_found(),
                    }
                }
            },
        )
        .route("/api", &[Method::GET], move |headers: HeaderMap| {
            let address = address.read().clone();
            let c = c0.clone();
            async move {
                let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
                match discovery::aggregated_version(accept) {
                    Some(v) => discovery::respond_aggregated(
                        &discovery::aggregated(&c, true, v),
                        v,
                        &headers,
                    ),
                    None => discovery::respond(&discovery::api_versions(&address), &headers),
                }
            }
        })
        .route("/apis", &[Method::GET], move |headers: HeaderMap| {
            let c = c1.clone();
            async move {
                let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
                match discovery::aggregated_version(accept) {
                    Some(v) => discovery::respond_aggregated(
                        &discovery::aggregated(&c, false, v),
                        v,
                        &headers,
                    ),
                    None => discovery::respond(&discovery::api_group_list(&c), &headers),
                }
            }
        })
        .route(
            "/apis/{group}",
            &[Method::GET],
            move |Path(group): Path<String>, headers: HeaderMap| {
                let c = c2.clone();
                async move {
                    match discovery::api_group(&c, &group) {
                        Some(doc) => discovery::respond(&doc, &headers),
                        None => page_not_found(),
                    }
                }
            },
        )
        .route(
            "/api/{version}",
            &[Method::GET],
            move |Path(version): Path<String>, headers: HeaderMap| {
                let c = c3.clone();
                async move {
                    match discovery::resource_list(&c, "", &version) {
                        Some(doc) => discovery::respond(&doc, &headers),
                        None => page_not_found(),
                    }
                }
            },
        )
        .route(
            "/apis/{group}/{version}",
            &[Method::GET],
            move |Path((group, version)): Path<(String, String)>, req: Request| {
                let c = c4.clone();
                // A remote APIService's discovery document is its server's.
                let proxied = match discovery_proxy.as_ref() {
                    Some(p) => p.intercept(req),
                    None => Err(req),
                };
                async move {
                    let req = match proxied {
                        Ok(served) => return served.await,
                        Err(req) => req,
                    };
                    match discovery::resource_list(&c, &group, &version) {
                        Some(doc) => discovery::respond(&doc, req.headers()),
                        None => page_not_found(),
                    }
                }
            },
        )
}
