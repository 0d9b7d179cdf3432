//! The servers of the chain (aggregator -> kube-apiserver ->
//! apiextensions-apiserver) and their route tables.

use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::api::catalog::Catalog;
use crate::controlplane;
use crate::server::metrics::Metrics;
use crate::server::{GenericServer, RouteInfo};
use crate::{aggregator, apiextensions};

/// The servers of the chain in delegation order, with their non-resource
/// routes; `start` attaches the resource handlers.
pub(super) struct Servers {
    pub(super) aggregator: GenericServer,
    pub(super) kube: GenericServer,
    pub(super) extensions: GenericServer,
}

impl Servers {
    pub(super) fn new(
        catalog: &Catalog,
        address: Arc<RwLock<String>>,
        proxy: Option<Arc<aggregator::proxy::Proxy>>,
        deps: controlplane::Deps,
    ) -> Self {
        Servers {
            aggregator: aggregator::server(catalog.clone(), address, proxy),
            kube: controlplane::server(deps),
            extensions: apiextensions::server(),
        }
    }

    pub(super) fn route_table(&self) -> Vec<RouteInfo> {
        let mut routes = self.aggregator.route_table();
        routes.extend(self.kube.route_table());
        routes.extend(self.extensions.route_table());
        routes
    }
}

/// The non-resource routes of every server of the chain, in delegation
/// order, built exactly as `kapi serve` builds them but without storage,
/// listening or anything else started (for `kapi routes`).
pub fn route_tables(catalog: &Catalog) -> Vec<RouteInfo> {
    Servers::new(
        catalog,
        Arc::new(RwLock::new(String::new())),
        None,
        controlplane::Deps {
            health: controlplane::Health::default(),
            metrics: Metrics::default(),
            root_paths: Arc::new(OnceLock::new()),
            api_paths: Arc::new(Vec::new),
            openid: None,
            profiling: true,
        },
    )
    .route_table()
}
