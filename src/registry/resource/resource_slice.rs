//! ResourceSlice (upstream's pkg/registry/resource/resourceslice); its
//! validation is in slice.rs.

use serde_json::{json, Value};

use super::slice;
use super::{description_column, each_mut, present, set_generation};
use crate::registry::helpers::{items, s};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ResourceSliceStrategy;

const NODE_DESCRIPTION: &str = "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.";
const DRIVER_DESCRIPTION: &str = "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. This field is immutable.";
const POOL_DESCRIPTION: &str = "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.";

pub(super) static SLICE_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
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
