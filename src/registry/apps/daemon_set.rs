//! DaemonSet (upstream's pkg/registry/apps/daemonset).

use serde_json::{json, Value};

use super::{
    default_template, int_cell, spec_mut, validate_selector_and_template,
    validate_selector_immutable, validate_workload_template, wide_columns,
};
use crate::registry::helpers::nonnegative;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

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
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpecAndLabels
    }

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

    /// ValidateDaemonSetSpec.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_selector_and_template(obj, "daemonset");
        errs.extend(validate_workload_template(obj, "DaemonSet"));
        nonnegative(
            "spec.revisionHistoryLimit",
            &obj["spec"]["revisionHistoryLimit"],
            &mut errs,
        );
        errs
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
