//! ReplicationController (upstream's pkg/registry/core/replicationcontroller
//! and ValidateReplicationController*): the core group's own workload, a pod
//! template plus a map selector that must match it; the template is checked
//! with the pod's rules (pod.rs).

use serde_json::{json, Value};

use super::obj_mut;
use super::pod::{default_pod_spec, validate_pod_spec};
use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ReplicationControllerStrategy;

fn labels_match(selector: &Value, labels: &Value) -> bool {
    selector.as_object().is_none_or(|sel| {
        sel.iter()
            .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str())
    })
}

fn validate_rc(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    kh::nonnegative("spec.minReadySeconds", &spec["minReadySeconds"], &mut errs);
    let sel = &spec["selector"];
    let empty = sel.as_object().is_none_or(|m| m.is_empty());
    if empty {
        errs.push(FieldError::required("spec.selector", ""));
    }
    kh::nonnegative("spec.replicas", &spec["replicas"], &mut errs);
    let t = &spec["template"];
    if t.is_null() {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    }
    let labels = &t["metadata"]["labels"];
    if !empty && !labels_match(sel, labels) {
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
    kh::validate_labels(labels, "spec.template.metadata.labels", &mut errs);
    errs.extend(validate_pod_spec(&t["spec"], "spec.template.spec"));
    let rp = t["spec"]["restartPolicy"].as_str().unwrap_or("");
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            json!(rp),
            &["Always"],
        ));
    }
    if let Some(ads) = t["spec"]["activeDeadlineSeconds"].as_i64() {
        errs.push(FieldError::invalid(
            "spec.template.spec.activeDeadlineSeconds",
            json!(ads),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}

static RC_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Desired", kind: "integer", format: "", description: "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", priority: 0, cell: |o| json!(o["spec"]["replicas"].as_i64().unwrap_or(0)) },
        Column { name: "Current", kind: "integer", format: "", description: "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", priority: 0, cell: |o| json!(o["status"]["replicas"].as_i64().unwrap_or(0)) },
        Column { name: "Ready", kind: "integer", format: "", description: "The number of ready replicas for this replication controller.", priority: 0, cell: |o| json!(o["status"]["readyReplicas"].as_i64().unwrap_or(0)) },
        age_column(),
        Column { name: "Containers", kind: "string", format: "", description: "Names of each container in the template.", priority: 1, cell: |o| json!(kh::container_cells(&o["spec"]["template"]["spec"]).0) },
        Column { name: "Images", kind: "string", format: "", description: "Images referenced by each container in the template.", priority: 1, cell: |o| json!(kh::container_cells(&o["spec"]["template"]["spec"]).1) },
        Column { name: "Selector", kind: "string", format: "", description: "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", priority: 1, cell: |o| json!(kh::format_labels(&o["spec"]["selector"])) },
    ]
});

impl Strategy for ReplicationControllerStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn default(&self, obj: &mut Value) {
        let labels = obj["spec"]["template"]["metadata"]["labels"].clone();
        if labels.is_object() {
            let empty = |v: &Value| v.as_object().is_none_or(|m| m.is_empty());
            if empty(&obj["spec"]["selector"]) {
                if let Some(spec) = obj_mut(obj, "spec") {
                    spec.insert("selector".into(), labels.clone());
                }
            }
            if empty(&obj["metadata"]["labels"]) {
                crate::registry::meta::meta_mut(obj).insert("labels".into(), labels);
            }
        }
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        set_default(spec, "replicas", json!(1));
        if let Some(ps) = spec
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            default_pod_spec(ps);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"replicas": 0}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_rc(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&RC_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    #[test]
    fn replication_controllers() {
        let mut o = json!({"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        ReplicationControllerStrategy.default(&mut o);
        ReplicationControllerStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["replicas"], 1);
        assert_eq!(o["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(o["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(o["status"], json!({"replicas": 0}));
        assert!(ReplicationControllerStrategy.validate(&o).is_empty());
        let c = cells(&RC_COLUMNS, &o);
        assert_eq!(c[1], 1);
        assert_eq!(c[2], 0);
        assert_eq!(c[5], "web");
        assert_eq!(c[6], "nginx");
        assert_eq!(c[7], "app=web");
        let mut bad = o.clone();
        bad["spec"]["selector"] = json!({"app": "db"});
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            msgs(&ReplicationControllerStrategy.validate(&bad)),
            [
                (
                    "spec.template.metadata.labels".to_string(),
                    "Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"
                        .to_string()
                ),
                (
                    "spec.template.spec.restartPolicy".into(),
                    "Unsupported value: \"Never\": supported values: \"Always\"".into()
                ),
            ]
        );
        let none = json!({"spec": {"template": {"spec": {"restartPolicy": "Always", "containers": [{"name": "a", "image": "b"}]}}}});
        assert_eq!(
            ReplicationControllerStrategy.validate(&none)[0].field,
            "spec.selector"
        );
    }
}
