//! Deployment (upstream's pkg/registry/apps/deployment).

use serde_json::{json, Value};

use super::{
    default_template, int_cell, spec_mut, validate_selector_and_template,
    validate_selector_immutable, validate_workload_template, wide_columns,
};
use crate::registry::helpers::nonnegative;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

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
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpecAndLabels
    }

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
        let mut errs = validate_selector_and_template(obj, "deployment");
        // ValidateDeploymentSpec: the template as a ReplicaSet's.
        errs.extend(validate_workload_template(obj, "ReplicaSet"));
        let spec = &obj["spec"];
        nonnegative(
            "spec.revisionHistoryLimit",
            &spec["revisionHistoryLimit"],
            &mut errs,
        );
        if let Some(pds) = spec["progressDeadlineSeconds"].as_i64() {
            nonnegative("spec.progressDeadlineSeconds", &json!(pds), &mut errs);
            if pds <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
                errs.push(FieldError::invalid(
                    "spec.progressDeadlineSeconds",
                    json!(pds),
                    "must be greater than minReadySeconds",
                ));
            }
        }
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
