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

mod claim;
mod common;
pub(crate) mod gojson;
mod slice;

#[cfg(test)]
mod tests;

use serde_json::{json, Map, Value};

use crate::registry::helpers::{items, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

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

// ---- DeviceClass ----

pub struct DeviceClassStrategy;

static NAME_AGE_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| vec![name_column(), age_column()]);

fn drop_disabled_class(new: &mut Value, old: Option<&Value>) {
    if old.is_some_and(|o| present(&o["spec"]["extendedResourceName"])) {
        return;
    }
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("extendedResourceName");
    }
}

impl Strategy for DeviceClassStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation(obj, 1);
        drop_disabled_class(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_disabled_class(new, Some(old));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_class(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_class_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAME_AGE_COLUMNS)
    }
}

// ---- ResourceClaim ----

pub struct ResourceClaimStrategy;

const STATE_DESCRIPTION: &str =
    "A summary of the current state (allocated, pending, reserved, etc.).";

/// The printer's resourceClaimState.
fn claim_state(o: &Value) -> Value {
    let deleted = crate::registry::meta::is_deleting(o);
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if o["status"]["allocation"].is_object() {
        states.push("allocated");
        if !items(&o["status"]["reservedFor"]).is_empty() {
            states.push("reserved");
        }
    } else if !deleted {
        states.push("pending");
    }
    json!(states.join(","))
}

static CLAIM_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        description_column("State", STATE_DESCRIPTION, claim_state),
        age_column(),
    ]
});

impl Strategy for ResourceClaimStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_claim_spec(spec);
        }
        if let Some(results) = obj
            .get_mut("status")
            .and_then(|s| s.get_mut("allocation"))
            .and_then(|a| a.get_mut("devices"))
        {
            each_mut(results, "results", default_tolerations);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(spec) = obj.get_mut("spec") {
            drop_disabled_claim_spec(spec, None);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(spec) = new.get_mut("spec") {
            drop_disabled_claim_spec(spec, Some(&old["spec"]));
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_claim(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_claim_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CLAIM_COLUMNS)
    }
}

// ---- ResourceClaimTemplate ----

pub struct ResourceClaimTemplateStrategy;

fn template_claim_spec(obj: &mut Value) -> Option<&mut Value> {
    obj.get_mut("spec").and_then(|s| s.get_mut("spec"))
}

impl Strategy for ResourceClaimTemplateStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = template_claim_spec(obj) {
            default_claim_spec(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(spec) = template_claim_spec(obj) {
            drop_disabled_claim_spec(spec, None);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(spec) = template_claim_spec(new) {
            drop_disabled_claim_spec(spec, Some(&old["spec"]["spec"]));
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_template(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_template_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAME_AGE_COLUMNS)
    }
}

// ---- ResourceSlice ----

pub struct ResourceSliceStrategy;

const NODE_DESCRIPTION: &str = "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.";
const DRIVER_DESCRIPTION: &str = "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. This field is immutable.";
const POOL_DESCRIPTION: &str = "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.";

static SLICE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        // A *string cell: null when the slice has no node name.
        description_column("Node", NODE_DESCRIPTION, |o| {
            o["spec"]["nodeName"]
                .as_str()
                .map_or(Value::Null, |n| json!(n))
        }),
        description_column("Driver", DRIVER_DESCRIPTION, |o| {
            json!(s(&o["spec"], "driver"))
        }),
        description_column("Pool", POOL_DESCRIPTION, |o| {
            json!(s(&o["spec"]["pool"], "name"))
        }),
        age_column(),
    ]
});

fn any_device(spec: &Value, f: impl Fn(&Value) -> bool) -> bool {
    items(&spec["devices"]).iter().any(f)
}

/// The slice's dropDisabledFields for the 1.34 gates.
fn drop_disabled_slice(new: &mut Value, old: Option<&Value>) {
    let old = old.map(|o| &o["spec"]);
    let in_use = |f: &dyn Fn(&Value) -> bool| old.is_some_and(f);
    let taints = in_use(&|o| any_device(o, |d| !items(&d["taints"]).is_empty()));
    let partitionable = in_use(&|o| {
        !items(&o["sharedCounters"]).is_empty()
            || present(&o["perDeviceNodeSelection"])
            || any_device(o, |d| {
                !items(&d["consumesCounters"]).is_empty()
                    || present(&d["nodeName"])
                    || present(&d["nodeSelector"])
                    || present(&d["allNodes"])
            })
    });
    let binding = in_use(&|o| {
        any_device(o, |d| {
            !items(&d["bindingConditions"]).is_empty()
                || !items(&d["bindingFailureConditions"]).is_empty()
                || present(&d["bindsToNode"])
        })
    });
    let capacity = in_use(&|o| {
        any_device(o, |d| {
            present(&d["allowMultipleAllocations"])
                || d["capacity"]
                    .as_object()
                    .is_some_and(|m| m.values().any(|c| present(&c["requestPolicy"])))
        })
    });
    let Some(spec) = new.get_mut("spec") else {
        return;
    };
    if !partitionable {
        if let Some(m) = spec.as_object_mut() {
            m.remove("sharedCounters");
            m.remove("perDeviceNodeSelection");
        }
    }
    each_mut(spec, "devices", |d| {
        if !taints {
            d.remove("taints");
        }
        if !partitionable {
            for k in ["consumesCounters", "nodeName", "nodeSelector", "allNodes"] {
                d.remove(k);
            }
        }
        if !binding {
            for k in [
                "bindingConditions",
                "bindingFailureConditions",
                "bindsToNode",
            ] {
                d.remove(k);
            }
        }
        if !capacity {
            d.remove("allowMultipleAllocations");
            if let Some(caps) = d.get_mut("capacity").and_then(Value::as_object_mut) {
                for c in caps.values_mut().filter_map(Value::as_object_mut) {
                    c.remove("requestPolicy");
                }
            }
        }
    });
}

impl Strategy for ResourceSliceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation(obj, 1);
        drop_disabled_slice(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_disabled_slice(new, Some(old));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        slice::slice_spec(&obj["spec"], None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        slice::slice_spec(&new["spec"], Some(&old["spec"]))
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SLICE_COLUMNS)
    }
}
