//! Strategies of the core (`""`) group kinds people use most.
//!
//! One file per kind, named as upstream's pkg/registry/core/<kind>, so a
//! kind's strategy is found by its name; this module keeps only what
//! several kinds share (resource names and quantities, volume access
//! modes and classes) and re-exports every strategy, so
//! `registry::core::PodStrategy` and the like stay the paths callers use.

pub mod binding;
mod component_status;
mod config_map;
mod endpoints;
mod event;
mod limit_range;
mod namespace;
mod node;
mod persistent_volume;
mod persistent_volume_claim;
mod pod;
mod pod_template;
mod replication_controller;
mod resource_quota;
pub(crate) mod resource_requirements;
mod secret;
mod service;
mod service_account;

pub use component_status::ComponentStatusStrategy;
pub use config_map::ConfigMapStrategy;
pub use endpoints::EndpointsStrategy;
pub use event::EventStrategy;
pub use limit_range::LimitRangeStrategy;
pub use namespace::{ensure_system_namespaces, NamespaceStrategy, SYSTEM_NAMESPACES};
pub use node::NodeStrategy;
pub use persistent_volume::PersistentVolumeStrategy;
pub use persistent_volume_claim::PersistentVolumeClaimStrategy;
pub use pod::{
    binding_update, default_pod_spec, ephemeral_containers_update, set_allow_privileged,
    validate_ephemeral_containers_update, validate_pod_spec, PodStrategy,
};
pub use pod_template::PodTemplateStrategy;
pub use replication_controller::ReplicationControllerStrategy;
pub use resource_quota::ResourceQuotaStrategy;
pub use secret::SecretStrategy;
pub use service::ServiceStrategy;
pub use service_account::ServiceAccountStrategy;

use serde_json::{json, Map, Value};

use super::helpers as kh;
use super::validation::{self, FieldError};

fn obj_mut<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    v.get_mut(key).and_then(Value::as_object_mut)
}

// ======================================================================
// Volumes, nodes, events, quotas and the other core kinds (upstream's
// pkg/registry/core/*, pkg/apis/core/v1/defaults.go, ValidatePersistent*,
// ValidateNode*, legacyValidateEvent, ValidateLimitRange,
// ValidateResourceQuota*, ValidateEndpoints, ValidateReplicationController*,
// ValidatePodTemplate and the matching printers).

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// upstream's standardResources (helper.IsStandardResourceName).
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];
/// upstream's standardQuotaResources.
const STANDARD_QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];
/// upstream's integerResources.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_hugepages(name: &str) -> bool {
    ["hugepages-", "requests.hugepages-", "limits.hugepages-"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// upstream's validateResourceName.
fn validate_resource_name(name: &str, path: &str, errs: &mut Vec<FieldError>) -> bool {
    let before = errs.len();
    for m in validation::qualified_name(name) {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
    if errs.len() > before {
        return false;
    }
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !is_hugepages(name) {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must be a standard resource type or fully qualified",
        ));
        return false;
    }
    true
}

/// upstream's ValidatePositiveQuantityValue.
fn positive_quantity(v: &Value, path: &str, errs: &mut Vec<FieldError>) -> bool {
    if kh::quantity(v).is_none_or(|q| q <= 0) {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be greater than zero",
        ));
        return false;
    }
    true
}

/// upstream's ValidateResourceQuantityValue.
fn resource_quantity_value(resource: &str, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let q = kh::quantity(v).unwrap_or(0);
    if q < 0 {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be greater than or equal to 0",
        ));
    }
    if INTEGER_RESOURCES.contains(&resource) && q % 1_000_000_000 != 0 {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be an integer",
        ));
    }
}

fn validate_access_modes(modes: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let (mut rwop, mut other) = (false, false);
    for m in kh::strings(modes) {
        if !ACCESS_MODES.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(path, json!(m), &ACCESS_MODES));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
}

/// helper.GetAccessModesAsString.
fn access_modes_string(modes: &Value) -> String {
    let modes = kh::strings(modes);
    let mut out = Vec::new();
    for (m, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if modes.iter().any(|x| x == m) {
            out.push(short);
        }
    }
    out.join(",")
}

fn volume_mode_cell(o: &Value) -> Value {
    json!(o["spec"]["volumeMode"].as_str().unwrap_or("<unset>"))
}

fn vac_cell(o: &Value) -> Value {
    json!(o["spec"]["volumeAttributesClassName"]
        .as_str()
        .unwrap_or("<unset>"))
}

fn validate_class_name(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = v.as_str().filter(|n| !n.is_empty()) {
        for m in validation::dns1123_subdomain(n) {
            errs.push(FieldError::invalid(path, json!(n), m));
        }
    }
}

/// What the per-kind tests share: errors as (field, message) pairs and a
/// row of table cells.
#[cfg(test)]
mod test_support {
    use serde_json::Value;

    use crate::registry::strategy::Column;
    use crate::registry::validation::FieldError;

    pub(crate) fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    pub(crate) fn cells(cols: &[Column], o: &Value) -> Vec<Value> {
        cols.iter().map(|c| (c.cell)(o)).collect()
    }
}
