//! Strategies of coordination.k8s.io: Lease (upstream's
//! pkg/registry/coordination/lease and pkg/apis/coordination/validation).

use serde_json::{json, Value};

use super::strategy::{age_column, name_column, Column, Strategy};
use super::validation::FieldError;

pub struct LeaseStrategy;

static LEASE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Holder", kind: "string", format: "", description: "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.", priority: 0, cell: |o| json!(o["spec"]["holderIdentity"].as_str().unwrap_or("")) },
        age_column(),
    ]
});

/// Coordinated leader election is off by default: its fields are dropped, as upstream does.
fn drop_disabled(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("strategy");
        spec.remove("preferredHolder");
    }
}

impl Strategy for LeaseStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_disabled(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if old["spec"]["strategy"].is_null() && old["spec"]["preferredHolder"].is_null() {
            drop_disabled(new);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        if let Some(d) = spec["leaseDurationSeconds"].as_i64() {
            if d <= 0 {
                errs.push(FieldError::invalid(
                    "spec.leaseDurationSeconds",
                    json!(d),
                    "must be greater than 0",
                ));
            }
        }
        if let Some(t) = spec["leaseTransitions"].as_i64() {
            if t < 0 {
                errs.push(FieldError::invalid(
                    "spec.leaseTransitions",
                    json!(t),
                    "must be greater than or equal to 0",
                ));
            }
        }
        let has_strategy = spec["strategy"].as_str().is_some_and(|s| !s.is_empty());
        if spec["preferredHolder"]
            .as_str()
            .is_some_and(|p| !p.is_empty())
            && !has_strategy
        {
            errs.push(FieldError::forbidden(
                "spec.preferredHolder",
                "may only be specified if `strategy` is defined",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&LEASE_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_and_cells() {
        let o = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}});
        assert!(LeaseStrategy.validate(&o).is_empty());
        assert_eq!((LEASE_COLUMNS[1].cell)(&o), "me");
        assert_eq!((LEASE_COLUMNS[1].cell)(&json!({})), "");
        let bad = json!({"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}});
        let got: Vec<(String, String)> = LeaseStrategy
            .validate(&bad)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "spec.leaseDurationSeconds".into(),
                    "Invalid value: 0: must be greater than 0".into()
                ),
                (
                    "spec.leaseTransitions".into(),
                    "Invalid value: -1: must be greater than or equal to 0".into()
                ),
            ]
        );
        let mut o = json!({"spec": {"strategy": "OldestEmulationVersion", "preferredHolder": "x"}});
        LeaseStrategy.prepare_for_create(&mut o);
        assert!(o["spec"]["strategy"].is_null());
    }
}
