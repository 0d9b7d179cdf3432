//! The aggregator, first server of the chain. It will own APIServices and
//! proxy to aggregated API servers; until then it owns no routes and
//! delegates every request to the kube-apiserver.

use crate::server::GenericServer;

pub fn server() -> GenericServer {
    GenericServer::new("aggregator")
}
