//! Strategies of the apps group: workloads with a selector and a pod template
//! (upstream's pkg/registry/apps).
//!
//! One file per kind, named as upstream's pkg/registry/apps/<kind>; this
//! module keeps what the workloads share (the selector and template rules,
//! the wide printer columns) and re-exports every strategy, so
//! `registry::apps::DeploymentStrategy` and the like stay the paths callers
//! use.

mod controller_revision;
mod daemon_set;
mod deployment;
mod replica_set;
mod stateful_set;

pub use controller_revision::ControllerRevisionStrategy;
pub use daemon_set::DaemonSetStrategy;
pub use deployment::DeploymentStrategy;
pub use replica_set::ReplicaSetStrategy;
pub use stateful_set::StatefulSetStrategy;

use serde_json::{json, Map, Value};

use super::core::{default_pod_spec, validate_pod_spec};
use super::helpers::nonnegative;
use super::strategy::Column;
use super::validation::FieldError;
use crate::api::selector::LabelSelector;

fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("spec").and_then(Value::as_object_mut)
}

fn default_template(spec: &mut Map<String, Value>) {
    if let Some(ps) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        default_pod_spec(ps);
    }
}

/// Selector present, valid, non-empty and matching the template's labels.
/// `kind` names the kind in the empty selector's message as upstream's
/// does ("deployment" for ReplicaSets too).
fn validate_selector_and_template(obj: &Value, kind: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    let sel = &spec["selector"];
    let parsed: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> =
        serde_json::from_value(sel.clone()).ok();
    let empty = sel.is_null()
        || sel.as_object().is_some_and(|m| {
            m.values().all(|v| {
                v.is_null()
                    || v.as_object().is_some_and(|x| x.is_empty())
                    || v.as_array().is_some_and(|x| x.is_empty())
            })
        });
    if sel.is_null() {
        errs.push(FieldError::required("spec.selector", ""));
    } else if empty {
        errs.push(FieldError::invalid(
            "spec.selector",
            sel.clone(),
            format!("empty selector is invalid for {kind}"),
        ));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    if let (false, Some(p)) = (empty, parsed) {
        match LabelSelector::from_api(&p) {
            Ok(s) => {
                let map: std::collections::BTreeMap<String, String> = labels
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                if !s.matches(&map) {
                    errs.push(FieldError::invalid(
                        "spec.template.metadata.labels",
                        if labels.is_null() {
                            json!({})
                        } else {
                            labels.clone()
                        },
                        "`selector` does not match template `labels`",
                    ));
                }
            }
            Err(e) => errs.push(FieldError::invalid("spec.selector", sel.clone(), e)),
        }
    }
    errs.extend(validate_pod_spec(
        &spec["template"]["spec"],
        "spec.template.spec",
    ));
    if let Some(r) = spec["replicas"].as_i64() {
        if r < 0 {
            errs.push(FieldError::invalid(
                "spec.replicas",
                json!(r),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

/// What the workloads' validation adds to the pod template's: the pods
/// restart Always and have no activeDeadlineSeconds (`kind` as upstream's
/// Forbidden message names it), and spec.minReadySeconds is not negative.
fn validate_workload_template(obj: &Value, kind: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let pod = &obj["spec"]["template"]["spec"];
    if let Some(rp) = pod["restartPolicy"].as_str() {
        if rp != "Always" {
            errs.push(FieldError::not_supported(
                "spec.template.spec.restartPolicy",
                json!(rp),
                &["Always"],
            ));
        }
    }
    if !pod["activeDeadlineSeconds"].is_null() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    nonnegative(
        "spec.minReadySeconds",
        &obj["spec"]["minReadySeconds"],
        &mut errs,
    );
    errs
}

fn validate_selector_immutable(new: &Value, old: &Value) -> Vec<FieldError> {
    if new["spec"]["selector"] != old["spec"]["selector"] {
        vec![FieldError::invalid(
            "spec.selector",
            new["spec"]["selector"].clone(),
            "field is immutable",
        )]
    } else {
        Vec::new()
    }
}

fn int_cell(o: &Value, path: &[&str]) -> Value {
    let mut v = o;
    for p in path {
        v = &v[*p];
    }
    json!(v.as_i64().unwrap_or(0))
}

fn containers_cell(o: &Value) -> Value {
    let names: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    json!(names.join(","))
}

fn images_cell(o: &Value) -> Value {
    let names: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["image"].as_str()).collect())
        .unwrap_or_default();
    json!(names.join(","))
}

fn selector_cell(o: &Value) -> Value {
    let sel = &o["spec"]["selector"];
    let mut parts: Vec<String> = sel["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    for e in sel["matchExpressions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let vals: Vec<&str> = e["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let key = e["key"].as_str().unwrap_or("");
        parts.push(match e["operator"].as_str().unwrap_or("") {
            "In" => format!("{key} in ({})", vals.join(",")),
            "NotIn" => format!("{key} notin ({})", vals.join(",")),
            "Exists" => key.to_string(),
            _ => format!("!{key}"),
        });
    }
    json!(if parts.is_empty() {
        "<none>".to_string()
    } else {
        parts.join(",")
    })
}

fn wide_columns() -> Vec<Column> {
    vec![
        Column {
            name: "Containers",
            kind: "string",
            format: "",
            description: "Names of each container in the template.",
            priority: 1,
            cell: containers_cell,
        },
        Column {
            name: "Images",
            kind: "string",
            format: "",
            description: "Images referenced by each container in the template.",
            priority: 1,
            cell: images_cell,
        },
        Column {
            name: "Selector",
            kind: "string",
            format: "",
            description: "Label selector for pods.",
            priority: 1,
            cell: selector_cell,
        },
    ]
}
