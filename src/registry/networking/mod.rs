//! Strategies of networking.k8s.io: Ingress, IngressClass and
//! NetworkPolicy (upstream's pkg/registry/networking,
//! pkg/apis/networking/v1/defaults.go and pkg/apis/networking/validation).
//!
//! One file per kind, named as upstream's pkg/registry/networking/<kind>;
//! the strategies are re-exported here, so
//! `registry::networking::IngressStrategy` and the like stay the paths
//! callers use.

mod ingress;
mod ingress_class;
mod network_policy;

pub use ingress::IngressStrategy;
pub use ingress_class::IngressClassStrategy;
pub use network_policy::NetworkPolicyStrategy;

use serde_json::{json, Value};

use crate::registry::helpers::s;
use crate::registry::validation::{self, FieldError};

/// upstream's validateIngressTypedLocalObjectReference.
fn validate_typed_local_ref(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if r.is_null() {
        return;
    }
    if let Some(g) = r["apiGroup"].as_str() {
        for m in validation::dns1123_subdomain(g) {
            errs.push(FieldError::invalid(format!("{path}.apiGroup"), json!(g), m));
        }
    }
    for (key, what) in [("kind", "kind is required"), ("name", "name is required")] {
        let v = s(r, key);
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), what));
        } else {
            for m in validation::path_segment_name(v) {
                errs.push(FieldError::invalid(format!("{path}.{key}"), json!(v), m));
            }
        }
    }
}
