//! Strategies of the apps group: workloads with a selector and a pod template.

use serde_json::{json, Map, Value};

use super::core::{default_pod_spec, validate_pod_spec};
use super::strategy::{age_column, name_column, set_default, Column, Strategy};
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
fn validate_selector_and_template(obj: &Value) -> Vec<FieldError> {
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
            "empty selector is invalid for deployment",
        ));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    if let (false, Some(p)) = (empty, parsed) {
        match LabelSelector::from_api(&p) {
            Ok(s) => {
                let map = labels
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

// ---- Deployment ----

pub struct DeploymentStrategy;

static DEPLOYMENT_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let mut c = vec![
        name_column(),
        Column { name: "Ready", kind: "string", format: "", description: "Number of the pod with ready state", priority: 0, cell: |o| json!(format!("{}/{}", o["status"]["readyReplicas"].as_i64().unwrap_or(0), o["spec"]["replicas"].as_i64().unwrap_or(0))) },
        Column { name: "Up-to-date", kind: "string", format: "", description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", priority: 0, cell: |o| int_cell(o, &["status", "updatedReplicas"]) },
        Column { name: "Available", kind: "string", format: "", description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", priority: 0, cell: |o| int_cell(o, &["status", "availableReplicas"]) },
        age_column(),
    ];
    c.extend(wide_columns());
    c
});

impl Strategy for DeploymentStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(spec, "replicas", json!(1));
        set_default(spec, "strategy", json!({"type": "RollingUpdate"}));
        if let Some(st) = spec.get_mut("strategy").and_then(Value::as_object_mut) {
            if st
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("RollingUpdate")
                == "RollingUpdate"
            {
                set_default(st, "type", json!("RollingUpdate"));
                set_default(st, "rollingUpdate", json!({}));
                if let Some(ru) = st.get_mut("rollingUpdate").and_then(Value::as_object_mut) {
                    set_default(ru, "maxUnavailable", json!("25%"));
                    set_default(ru, "maxSurge", json!("25%"));
                }
            }
        }
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "progressDeadlineSeconds", json!(600));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_selector_and_template(obj);
        let ty = obj["spec"]["strategy"]["type"]
            .as_str()
            .unwrap_or("RollingUpdate");
        if !["RollingUpdate", "Recreate"].contains(&ty) {
            errs.push(FieldError::not_supported(
                "spec.strategy.type",
                json!(ty),
                &["Recreate", "RollingUpdate"],
            ));
        }
        if ty == "Recreate" && !obj["spec"]["strategy"]["rollingUpdate"].is_null() {
            errs.push(FieldError::forbidden(
                "spec.strategy.rollingUpdate",
                "may not be specified when strategy `type` is 'Recreate'",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(validate_selector_immutable(new, old));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&DEPLOYMENT_COLUMNS)
    }
}

// ---- ReplicaSet ----

pub struct ReplicaSetStrategy;

static REPLICASET_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let mut c = vec![
        name_column(),
        Column {
            name: "Desired",
            kind: "integer",
            format: "",
            description: "Replicas is the number of desired pods.",
            priority: 0,
            cell: |o| int_cell(o, &["spec", "replicas"]),
        },
        Column {
            name: "Current",
            kind: "integer",
            format: "",
            description: "Replicas is the most recently observed number of replicas.",
            priority: 0,
            cell: |o| int_cell(o, &["status", "replicas"]),
        },
        Column {
            name: "Ready",
            kind: "integer",
            format: "",
            description: "The number of ready replicas for this replica set.",
            priority: 0,
            cell: |o| int_cell(o, &["status", "readyReplicas"]),
        },
        age_column(),
    ];
    c.extend(wide_columns());
    c
});

impl Strategy for ReplicaSetStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(spec, "replicas", json!(1));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_selector_and_template(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(validate_selector_immutable(new, old));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&REPLICASET_COLUMNS)
    }
}

// ---- StatefulSet ----

pub struct StatefulSetStrategy;

static STATEFULSET_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let mut c = vec![
        name_column(),
        Column {
            name: "Ready",
            kind: "string",
            format: "",
            description: "Number of the pod with ready state",
            priority: 0,
            cell: |o| {
                json!(format!(
                    "{}/{}",
                    o["status"]["readyReplicas"].as_i64().unwrap_or(0),
                    o["spec"]["replicas"].as_i64().unwrap_or(0)
                ))
            },
        },
        age_column(),
    ];
    c.extend(wide_columns().into_iter().take(2));
    c
});

impl Strategy for StatefulSetStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(spec, "replicas", json!(1));
        set_default(spec, "podManagementPolicy", json!("OrderedReady"));
        set_default(
            spec,
            "updateStrategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
        );
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(
            spec,
            "persistentVolumeClaimRetentionPolicy",
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
        );
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_selector_and_template(obj);
        let pmp = obj["spec"]["podManagementPolicy"]
            .as_str()
            .unwrap_or("OrderedReady");
        if !["OrderedReady", "Parallel"].contains(&pmp) {
            errs.push(FieldError::not_supported(
                "spec.podManagementPolicy",
                json!(pmp),
                &["OrderedReady", "Parallel"],
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        // Only some StatefulSet spec fields may change.
        let strip = |v: &Value| {
            let mut s = v["spec"].clone();
            if let Some(m) = s.as_object_mut() {
                for k in [
                    "replicas",
                    "template",
                    "updateStrategy",
                    "persistentVolumeClaimRetentionPolicy",
                    "minReadySeconds",
                    "ordinals",
                    "revisionHistoryLimit",
                ] {
                    m.remove(k);
                }
            }
            s
        };
        if strip(new) != strip(old) {
            errs.push(FieldError::forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&STATEFULSET_COLUMNS)
    }
}

// ---- DaemonSet ----

pub struct DaemonSetStrategy;

static DAEMONSET_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let mut c = vec![
        name_column(),
        Column { name: "Desired", kind: "integer", format: "", description: "The total number of nodes that should be running the daemon pod.", priority: 0, cell: |o| int_cell(o, &["status", "desiredNumberScheduled"]) },
        Column { name: "Current", kind: "integer", format: "", description: "The number of nodes that are running at least 1 daemon pod.", priority: 0, cell: |o| int_cell(o, &["status", "currentNumberScheduled"]) },
        Column { name: "Ready", kind: "integer", format: "", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.", priority: 0, cell: |o| int_cell(o, &["status", "numberReady"]) },
        Column { name: "Up-to-date", kind: "integer", format: "", description: "The total number of nodes that are running updated daemon pod", priority: 0, cell: |o| int_cell(o, &["status", "updatedNumberScheduled"]) },
        Column { name: "Available", kind: "integer", format: "", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)", priority: 0, cell: |o| int_cell(o, &["status", "numberAvailable"]) },
        Column {
            name: "Node Selector",
            kind: "string",
            format: "",
            description: "NodeSelector is a selector which must be true for the pod to fit on a node.",
            priority: 0,
            cell: |o| {
                let sel: Vec<String> = o["spec"]["template"]["spec"]["nodeSelector"].as_object().map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect()).unwrap_or_default();
                json!(if sel.is_empty() { "<none>".to_string() } else { sel.join(",") })
            },
        },
        age_column(),
    ];
    c.extend(wide_columns());
    c
});

impl Strategy for DaemonSetStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(
            spec,
            "updateStrategy",
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
        );
        set_default(spec, "revisionHistoryLimit", json!(10));
        default_template(spec);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_selector_and_template(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(validate_selector_immutable(new, old));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&DAEMONSET_COLUMNS)
    }
}

// ---- ControllerRevision (pkg/registry/apps/controllerrevision) ----

pub struct ControllerRevisionStrategy;

/// The printer's Controller cell: the controlling owner as `kind.group/name`.
fn controller_cell(o: &Value) -> Value {
    let owner = o["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"].as_bool() == Some(true));
    let Some(r) = owner else {
        return json!("<none>");
    };
    let name = r["name"].as_str().unwrap_or("");
    let kind = r["kind"].as_str().unwrap_or("");
    let api_version = r["apiVersion"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let group_kind = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    if group_kind.is_empty() {
        json!(name)
    } else {
        json!(format!("{}/{name}", group_kind.to_lowercase()))
    }
}

static CONTROLLER_REVISION_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            Column {
                name: "Controller",
                kind: "string",
                format: "",
                description: "Controller of the object",
                priority: 0,
                cell: controller_cell,
            },
            Column {
                name: "Revision",
                kind: "string",
                format: "",
                description: "revision indicates the revision of the state represented by Data.",
                priority: 0,
                cell: |o| json!(o["revision"].as_i64().unwrap_or(0)),
            },
            age_column(),
        ]
    });

/// Go's `%#v` of the runtime.RawExtension holding `data` (its JSON bytes).
fn go_raw_extension(data: &Value) -> String {
    let raw = if data.is_null() {
        "[]uint8(nil)".to_string()
    } else {
        let bytes: Vec<String> = serde_json::to_vec(data)
            .unwrap_or_default()
            .iter()
            .map(|b| format!("{b:#x}"))
            .collect();
        format!("[]uint8{{{}}}", bytes.join(", "))
    };
    format!("runtime.RawExtension{{Raw:{raw}, Object:runtime.Object(nil)}}")
}

impl Strategy for ControllerRevisionStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        super::helpers::nonnegative("revision", &obj["revision"], &mut errs);
        match obj.get("data") {
            None | Some(Value::Null) => {
                errs.push(FieldError::required("data", "data is mandatory"))
            }
            Some(Value::Object(_)) => {}
            Some(_) => errs.push(FieldError::required(
                "data",
                "data must be a valid JSON object",
            )),
        }
        errs
    }

    /// The revision may change; the data may not.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        super::helpers::nonnegative("revision", &new["revision"], &mut errs);
        if new["data"] != old["data"] {
            errs.push(super::helpers::invalid_raw(
                "data",
                &go_raw_extension(&new["data"]),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CONTROLLER_REVISION_COLUMNS)
    }
}

#[cfg(test)]
mod controller_revision_tests {
    use super::*;

    fn msgs(v: Vec<FieldError>) -> Vec<(String, String)> {
        v.into_iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    #[test]
    fn data_and_revision() {
        let s = ControllerRevisionStrategy;
        let ok = json!({"metadata": {"name": "r", "namespace": "ns"}, "data": {"spec": {}}, "revision": 3});
        assert!(s.validate(&ok).is_empty());
        let bad = json!({"metadata": {"name": "r"}, "revision": -1});
        assert_eq!(
            msgs(s.validate(&bad)),
            [
                (
                    "revision".to_string(),
                    "Invalid value: -1: must be greater than or equal to 0".to_string()
                ),
                ("data".into(), "Required value: data is mandatory".into()),
            ]
        );
        let list = json!({"metadata": {"name": "r"}, "data": [1]});
        assert_eq!(
            msgs(s.validate(&list)),
            [(
                "data".to_string(),
                "Required value: data must be a valid JSON object".to_string()
            )]
        );
    }

    #[test]
    fn data_is_immutable_revision_is_not() {
        let s = ControllerRevisionStrategy;
        let old = json!({"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 1});
        let bumped = json!({"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 2});
        assert!(s.validate_update(&bumped, &old).is_empty());
        let changed = json!({"metadata": {"name": "r"}, "data": {"a": 2}, "revision": 1});
        assert_eq!(
            msgs(s.validate_update(&changed, &old)),
            [("data".to_string(), "Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, Object:runtime.Object(nil)}: field is immutable".to_string())]
        );
    }

    #[test]
    fn controller_cell_names_kind_and_group() {
        let o = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p"},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]}, "revision": 7});
        let cells: Vec<Value> = CONTROLLER_REVISION_COLUMNS
            .iter()
            .map(|c| (c.cell)(&o))
            .collect();
        assert_eq!(cells[1], "statefulset.apps/web");
        assert_eq!(cells[2], 7);
        assert_eq!(controller_cell(&json!({})), "<none>");
        let core = json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": true}]}});
        assert_eq!(controller_cell(&core), "replicationcontroller/rc");
    }
}
