//! Strategies of resource.k8s.io (dynamic resource allocation), served and
//! stored as v1: upstream 1.34's pkg/registry/resource/{deviceclass,
//! resourceclaim,resourceclaimtemplate,resourceslice}, the v1 defaults and
//! pkg/apis/resource/validation.
//!
//! The 1.34 feature gates decide which fields survive a write: on are
//! DRAAdminAccess, DRAPrioritizedList and DRAResourceClaimDeviceStatus; off
//! (alpha) are DRADeviceTaints, DRAPartitionableDevices,
//! DRADeviceBindingConditions, DRAConsumableCapacity and
//! DRAExtendedResource, whose fields are dropped unless the old object
//! already used them, as upstream's dropDisabledFields do.
//!
//! One file per kind, named as upstream's pkg/registry/resource/<kind>,
//! holds its strategy; the validation is in claim.rs (claims, templates,
//! classes) and slice.rs, with what they share in common.rs. This module
//! keeps the defaulting and field dropping several kinds share and
//! re-exports the strategies, so `registry::resource::ResourceClaimStrategy`
//! and the like stay the paths callers use.

mod claim;
mod common;
mod device_class;
pub(crate) mod gojson;
mod resource_claim;
mod resource_claim_template;
mod resource_slice;
mod slice;

#[cfg(test)]
mod tests;

pub use device_class::DeviceClassStrategy;
pub use resource_claim::ResourceClaimStrategy;
pub use resource_claim_template::ResourceClaimTemplateStrategy;
pub use resource_slice::ResourceSliceStrategy;

use serde_json::{json, Map, Value};

use crate::registry::helpers::items;
use crate::registry::strategy::{age_column, name_column, set_default, Column};

// ---- shared pieces ----

fn each_mut(v: &mut Value, key: &str, mut f: impl FnMut(&mut Map<String, Value>)) {
    if let Some(list) = v.get_mut(key).and_then(Value::as_array_mut) {
        for item in list.iter_mut().filter_map(Value::as_object_mut) {
            f(item);
        }
    }
}

fn set_generation(obj: &mut Value, g: i64) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("generation".into(), json!(g));
    }
}

/// Upstream sets no generation on claims and templates.
fn drop_generation(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("generation");
    }
}

fn default_tolerations(r: &mut Map<String, Value>) {
    if let Some(ts) = r.get_mut("tolerations").and_then(Value::as_array_mut) {
        for t in ts.iter_mut().filter_map(Value::as_object_mut) {
            set_default(t, "operator", json!("Equal"));
        }
    }
}

/// SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest.
fn default_request(r: &mut Map<String, Value>) {
    set_default(r, "allocationMode", json!("ExactCount"));
    if r.get("allocationMode").and_then(Value::as_str) == Some("ExactCount")
        && r.get("count").and_then(Value::as_i64).unwrap_or(0) == 0
    {
        r.insert("count".into(), json!(1));
    }
    default_tolerations(r);
}

/// The v1 defaults of a ResourceClaimSpec.
fn default_claim_spec(spec: &mut Value) {
    let Some(devices) = spec.get_mut("devices") else {
        return;
    };
    each_mut(devices, "requests", |r| {
        if let Some(e) = r.get_mut("exactly").and_then(Value::as_object_mut) {
            default_request(e);
        }
        if let Some(subs) = r.get_mut("firstAvailable").and_then(Value::as_array_mut) {
            for sr in subs.iter_mut().filter_map(Value::as_object_mut) {
                default_request(sr);
            }
        }
    });
}

/// Each exact request and subrequest of a claim spec.
fn for_each_request(spec: &mut Value, mut f: impl FnMut(&mut Map<String, Value>)) {
    let Some(devices) = spec.get_mut("devices") else {
        return;
    };
    each_mut(devices, "requests", |r| {
        if let Some(e) = r.get_mut("exactly").and_then(Value::as_object_mut) {
            f(e);
        }
        if let Some(subs) = r.get_mut("firstAvailable").and_then(Value::as_array_mut) {
            for sr in subs.iter_mut().filter_map(Value::as_object_mut) {
                f(sr);
            }
        }
    });
}

fn any_request(spec: &Value, f: impl Fn(&Value) -> bool) -> bool {
    items(&spec["devices"]["requests"])
        .iter()
        .any(|r| f(&r["exactly"]) || items(&r["firstAvailable"]).iter().any(&f))
}

fn present(v: &Value) -> bool {
    !v.is_null()
}

/// resourceclaimspec.DropDisabledFields for the 1.34 gates.
fn drop_disabled_claim_spec(spec: &mut Value, old: Option<&Value>) {
    let taints_in_use =
        old.is_some_and(|o| any_request(o, |r| !items(&r["tolerations"]).is_empty()));
    if !taints_in_use {
        for_each_request(spec, |r| {
            r.remove("tolerations");
        });
    }
    let capacity_in_use = old.is_some_and(|o| {
        items(&o["devices"]["constraints"])
            .iter()
            .any(|c| present(&c["distinctAttribute"]))
            || any_request(o, |r| present(&r["capacity"]))
    });
    if !capacity_in_use {
        if let Some(devices) = spec.get_mut("devices") {
            each_mut(devices, "constraints", |c| {
                c.remove("distinctAttribute");
            });
        }
        for_each_request(spec, |r| {
            r.remove("capacity");
        });
    }
}

fn description_column(
    name: &'static str,
    description: &'static str,
    cell: fn(&Value) -> Value,
) -> Column {
    Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 0,
        cell,
    }
}

static NAME_AGE_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| vec![name_column(), age_column()]);
