//! The generic API server: route tables and delegation, the handler chain,
//! health checks, post-start hooks, metrics and TLS serving. Nothing here
//! knows about particular resources.

pub mod audit;
pub mod audit_webhook;
pub mod chain;
mod coalesce;
pub mod debug_flags;
pub mod filters;
pub mod flowcontrol;
pub mod handler_chain;
pub mod healthz;
pub mod heap_release;
pub mod hooks;
mod impersonation;
pub mod instance_lock;
pub mod metrics;
pub mod serve;
pub mod sni;

pub use crate::api::request_info::RequestInfo;
pub use chain::{GenericServer, HandlerKind, RouteInfo};
