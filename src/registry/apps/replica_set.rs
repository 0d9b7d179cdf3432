//! ReplicaSet (upstream's pkg/registry/apps/replicaset).

use serde_json::{json, Value};

use super::{
    default_template, int_cell, spec_mut, validate_selector_and_template,
    validate_selector_immutable, validate_workload_template, wide_columns,
};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

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
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpecAndLabels
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = spec_mut(obj) else { return };
        set_default(spec, "replicas", json!(1));
        default_template(spec);
    }

    /// ValidateReplicaSetSpec.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_selector_and_template(obj, "deployment");
        errs.extend(validate_workload_template(obj, "ReplicaSet"));
        errs
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
