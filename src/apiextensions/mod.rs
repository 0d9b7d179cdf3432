//! The apiextensions server, last of the chain. It will serve
//! CustomResourceDefinitions and their custom resources; until then it owns
//! no routes and everything falls through to the not-found handler.

use crate::server::GenericServer;

pub fn server() -> GenericServer {
    GenericServer::new("apiextensions-apiserver")
}
