//! The aggregator, first server of the chain. It serves the merged
//! discovery documents of all three servers and owns APIServices; proxying
//! to aggregated API servers comes with the aggregator work (issue 9).

use std::sync::Arc;

use axum::extract::Path;
use http::{HeaderMap, Method};
use parking_lot::RwLock;

use crate::api::catalog::Catalog;
use crate::endpoints::discovery;
use crate::server::chain::page_not_found;
use crate::server::GenericServer;

/// `address` is `host:port` as clients reach the server (for `/api`).
pub fn server(catalog: Catalog, address: Arc<RwLock<String>>) -> GenericServer {
    let (c1, c2, c3, c4) = (catalog.clone(), catalog.clone(), catalog.clone(), catalog);
    GenericServer::new("aggregator")
        .route("/api", &[Method::GET], move |headers: HeaderMap| {
            let address = address.read().clone();
            async move { discovery::respond(&discovery::api_versions(&address), &headers) }
        })
        .route("/apis", &[Method::GET], move |headers: HeaderMap| {
            let c = c1.clone();
            async move { discovery::respond(&discovery::api_group_list(&c), &headers) }
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
            move |Path((group, version)): Path<(String, String)>, headers: HeaderMap| {
                let c = c4.clone();
                async move {
                    match discovery::resource_list(&c, &group, &version) {
                        Some(doc) => discovery::respond(&doc, &headers),
                        None => page_not_found(),
                    }
                }
            },
        )
}
