//! The kube-apiserver proper, the middle server of the chain: the built-in
//! API groups (as they land), `/version`, health, `/metrics` and the `/`
//! index.

pub mod allocator;
pub mod apf_config;
pub mod bootstrap;
pub mod gc;
pub mod manager;
pub mod namespace;
pub mod podgc;
pub mod repair;
pub mod resourcequota;
pub mod serviceaccounts;
pub mod storage_protection;

use std::sync::{Arc, OnceLock};

use axum::extract::{Path, RawQuery};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, Method};

use crate::server::healthz::{self, HealthCheck};
use crate::server::metrics::Metrics;
use crate::server::GenericServer;
use crate::version;

/// A document that is not an API object (the root paths, the version),
/// written as upstream's `WriteRawJSON` writes it: indented as Go's
/// `json.MarshalIndent(v, "", "  ")`, with no newline after.
fn raw_json(v: &impl serde::Serialize) -> Response {
    // Serialized as it is (a struct keeps its fields' order), then indented.
    let body = crate::api::indent_json(&serde_json::to_vec(v).unwrap_or_default());
    let mut r = Response::new(axum::body::Body::from(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The checks behind `/healthz`, `/livez` and `/readyz`.
#[derive(Debug, Clone, Default)]
pub struct Health {
    pub healthz: Arc<Vec<HealthCheck>>,
    pub livez: Arc<Vec<HealthCheck>>,
    pub readyz: Arc<Vec<HealthCheck>>,
}

/// Everything the kube-apiserver's non-resource routes read.
#[derive(Clone)]
pub struct Deps {
    pub health: Health,
    pub metrics: Metrics,
    /// Every path of every server, filled once the chain is built.
    pub root_paths: Arc<OnceLock<Vec<String>>>,
    /// The discovery paths of the groups served now (`/api/v1`,
    /// `/apis/apps/v1`, ...), custom resources' included.
    pub api_paths: Arc<dyn Fn() -> Vec<String> + Send + Sync>,
    /// `--profiling`: upstream installs `/debug/flags` with it.
    pub profiling: bool,
    /// ServiceAccount issuer discovery, with the external address its key
    /// set is named at.
    pub openid: Option<(
        Arc<crate::auth::openid_metadata::OpenIdMetadata>,
        Arc<parking_lot::RwLock<String>>,
    )>,
}

fn health_routes(
    server: GenericServer,
    endpoint: &'static str,
    checks: Arc<Vec<HealthCheck>>,
) -> GenericServer {
    let all = checks.clone();
    server
        .route(
            &format!("/{endpoint}"),
            &[Method::GET],
            move |RawQuery(q): RawQuery| {
                let all = all.clone();
                async move { healthz::serve_all(endpoint, &all, q.as_deref()).await }
            },
        )
        .route(
            &format!("/{endpoint}/{{*check}}"),
            &[Method::GET],
            move |Path(name): Path<String>| {
                let checks = checks.clone();
                async move { healthz::serve_one(&checks, &name).await }
            },
        )
}

pub fn server(deps: Deps) -> GenericServer {
    let Deps {
        health,
        metrics,
        root_paths,
        api_paths,
        profiling,
        openid,
    } = deps;
    // As upstream's index: every handler's path, each health check's
    // own, and each group version's discovery path; not `/` itself.
    let mut fixed: Vec<String> = Vec::new();
    for (endpoint, checks) in [
        ("healthz", &health.healthz),
        ("livez", &health.livez),
        ("readyz", &health.readyz),
    ] {
        fixed.extend(checks.iter().map(|c| format!("/{endpoint}/{}", c.name)));
    }
    if openid.is_some() {
        fixed.push(crate::auth::openid_metadata::CONFIGURATION_PATH.to_string());
        fixed.push(crate::auth::openid_metadata::JWKS_PATH.to_string());
    }
    fixed.push("/openapi/v3/".to_string());
    let fixed = Arc::new(fixed);
    let mut s = GenericServer::new("kube-apiserver")
        .route("/", &[Method::GET], move || {
            let (listed, fixed, api_paths) = (root_paths.clone(), fixed.clone(), api_paths.clone());
            async move {
                let mut paths: Vec<String> = listed
                    .get()
                    .into_iter()
                    .flatten()
                    .filter(|p| p.as_str() != "/")
                    .cloned()
                    .chain(fixed.iter().cloned())
                    .chain(api_paths())
                    .collect();
                paths.sort();
                paths.dedup();
                raw_json(&serde_json::json!({ "paths": paths }))
            }
        })
        .route("/version", &[Method::GET], || async {
            raw_json(&version::info())
        })
        .route("/metrics", &[Method::GET], move || {
            let m = metrics.clone();
            async move { metrics_text(m.render()) }
        });
    if profiling {
        s = crate::server::debug_flags::install(s);
    }
    if let Some((metadata, address)) = openid {
        s = openid_routes(s, metadata, address);
    }
    s = health_routes(s, "healthz", health.healthz);
    s = health_routes(s, "livez", health.livez);
    health_routes(s, "readyz", health.readyz)
}

/// upstream's OpenIDMetadataServer: both documents cacheable for an hour.
fn openid_routes(
    server: GenericServer,
    metadata: Arc<crate::auth::openid_metadata::OpenIdMetadata>,
    address: Arc<parking_lot::RwLock<String>>,
) -> GenericServer {
    use crate::auth::openid_metadata::{CONFIGURATION_PATH, JWKS_PATH};
    let respond = |body: Vec<u8>, content_type: &'static str| {
        let mut r = body.into_response();
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        r.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        );
        r
    };
    let keys = metadata.clone();
    server
        .route(CONFIGURATION_PATH, &[Method::GET], move || {
            let (metadata, address) = (metadata.clone(), address.clone());
            async move {
                let body = metadata.configuration(&address.read());
                respond(body, "application/json")
            }
        })
        .route(JWKS_PATH, &[Method::GET], move || {
            let keys = keys.clone();
            async move { respond(keys.jwks().to_vec(), "application/jwk-set+json") }
        })
}

fn metrics_text(body: String) -> Response {
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// Keeps `apiserver_storage_objects` current from the watch caches, as
/// upstream's storage-object-count tracker does.
pub async fn track_object_counts(
    cachers: crate::storage::cacher_set::CacherSet,
    metrics: Metrics,
    stop: tokio_util::sync::CancellationToken,
) {
    loop {
        for (prefix, n) in cachers.counts() {
            let resource = prefix
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string();
            metrics.set_storage_objects(&resource, n as i64);
        }
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_secs(10)) => {}
            _ = stop.cancelled() => return,
        }
    }
}
