//! Flags -> completed config, as upstream's `Options.Complete()`: defaults
//! resolved, paths derived, values checked, before anything starts.
//!
//! `options` holds the flags, `parse` their value parsers, `admission` and
//! `authorization` the plugin and mode lists, and `complete` turns them
//! into the `CompletedConfig`.

pub use crate::component_base::{clocks, duration, feature_gates};
pub use crate::controlplane::allocator::PortRange;
pub mod kube_apiserver;
pub mod runtime_config;

mod admission;
mod authorization;
mod complete;
mod options;
mod parse;

#[cfg(test)]
mod tests;

pub use authorization::AuthorizationMode;
pub use complete::{CompletedConfig, FlagError, StorageBackend};
pub use options::ServeOptions;

// Read by `kube_apiserver`'s flags as well.
use parse::{parse_port_range, parse_service_cidr};
