//! StatefulSet (upstream's pkg/registry/apps/statefulset).

use serde_json::{json, Value};

use super::{
    default_template, spec_mut, validate_selector_and_template, validate_workload_template,
    wide_columns,
};
use crate::registry::helpers::nonnegative;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

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
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpecAndLabels
    }

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

    /// ValidateStatefulSetSpec.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = &obj["spec"];
        let mut errs = Vec::new();
        match spec["podManagementPolicy"].as_str() {
            None | Some("OrderedReady" | "Parallel") => {}
            Some("") => errs.push(FieldError::required("spec.podManagementPolicy", "")),
            Some(other) => errs.push(FieldError::invalid(
                "spec.podManagementPolicy",
                json!(other),
                "must be 'OrderedReady' or 'Parallel'",
            )),
        }
        if spec["updateStrategy"]["type"] == "RollingUpdate" {
            nonnegative(
                "spec.updateStrategy.rollingUpdate.partition",
                &spec["updateStrategy"]["rollingUpdate"]["partition"],
                &mut errs,
            );
        }
        for when in ["whenDeleted", "whenScaled"] {
            if let Some(p) = spec["persistentVolumeClaimRetentionPolicy"][when].as_str() {
                if !["Retain", "Delete"].contains(&p) {
                    errs.push(FieldError::not_supported(
                        format!("spec.persistentVolumeClaimRetentionPolicy.{when}"),
                        json!(p),
                        &["Retain", "Delete"],
                    ));
                }
            }
        }
        errs.extend(validate_selector_and_template(obj, "statefulset"));
        errs.extend(validate_workload_template(obj, "StatefulSet"));
        nonnegative("spec.ordinals.start", &spec["ordinals"]["start"], &mut errs);
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
