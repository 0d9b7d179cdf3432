//! The apiextensions server, last of the chain: CustomResourceDefinitions
//! and the custom resources they define. Its controller keeps each CRD's
//! names and conditions right and its versions in the catalog, so routes,
//! discovery and OpenAPI follow CRDs as they come and go.

pub mod controller;

use crate::server::GenericServer;

pub fn server() -> GenericServer {
    GenericServer::new("apiextensions-apiserver")
}
