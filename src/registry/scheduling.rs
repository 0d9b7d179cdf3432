//! Strategies of scheduling.k8s.io: PriorityClass (upstream's
//! pkg/registry/scheduling/priorityclass and pkg/apis/scheduling/validation).

use serde_json::{json, Value};

use super::helpers::s;
use super::strategy::{age_column, name_column, set_default, Column, Strategy};
use super::validation::FieldError;

/// upstream's HighestUserDefinablePriority.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";
/// upstream's SystemPriorityClasses: name, value.
const SYSTEM_PRIORITY_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

pub struct PriorityClassStrategy;

static PRIORITY_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Value", kind: "integer", format: "", description: "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.", priority: 0, cell: |o| json!(o["value"].as_i64().unwrap_or(0)) },
        Column { name: "Global-Default", kind: "boolean", format: "", description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.", priority: 0, cell: |o| json!(o["globalDefault"].as_bool().unwrap_or(false)) },
        age_column(),
        Column { name: "PreemptionPolicy", kind: "string", format: "", description: "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.", priority: 0, cell: |o| json!(s(o, "preemptionPolicy")) },
    ]
});

/// upstream's IsKnownSystemPriorityClass error, if any.
fn system_class_error(name: &str, value: i64, global_default: bool) -> Option<String> {
    match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) {
        None => Some(format!("{name} is not a known system priority class")),
        Some((_, v)) if *v != value => Some(format!("value of {name} PriorityClass must be {v}")),
        Some(_) if global_default => Some(format!(
            "globalDefault of {name} PriorityClass must be false"
        )),
        Some(_) => None,
    }
}

impl Strategy for PriorityClassStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            set_default(m, "preemptionPolicy", json!("PreemptLowerPriority"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = super::meta::name(obj);
        let value = obj["value"].as_i64().unwrap_or(0);
        if name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
            let gd = obj["globalDefault"].as_bool().unwrap_or(false);
            if let Some(e) = system_class_error(name, value, gd) {
                errs.push(FieldError::forbidden(
                    "metadata.name",
                    format!("priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {e}"),
                ));
            }
        } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
            errs.push(FieldError::forbidden(
                "value",
                format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"),
            ));
        }
        match obj.get("preemptionPolicy").and_then(Value::as_str) {
            None | Some("PreemptLowerPriority" | "Never") => {}
            Some("") => errs.push(FieldError::required("preemptionPolicy", "")),
            Some(other) => errs.push(FieldError::not_supported(
                "preemptionPolicy",
                json!(other),
                &["PreemptLowerPriority", "Never"],
            )),
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if new["value"] != old["value"] {
            errs.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        super::helpers::immutable(
            "preemptionPolicy",
            &new["preemptionPolicy"],
            &old["preemptionPolicy"],
            &mut errs,
        );
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PRIORITY_CLASS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validation_cells() {
        let mut o = json!({"metadata": {"name": "high"}, "value": 1000});
        PriorityClassStrategy.default(&mut o);
        assert_eq!(o["preemptionPolicy"], "PreemptLowerPriority");
        assert!(PriorityClassStrategy.validate(&o).is_empty());
        let cells: Vec<Value> = PRIORITY_CLASS_COLUMNS
            .iter()
            .map(|c| (c.cell)(&o))
            .collect();
        assert_eq!(cells[1], 1000);
        assert_eq!(cells[2], false);
        assert_eq!(cells[4], "PreemptLowerPriority");

        let big = json!({"metadata": {"name": "huge"}, "value": 2_000_000_000i64});
        let errs = PriorityClassStrategy.validate(&big);
        assert_eq!(errs[0].field, "value");
        assert_eq!(
            errs[0].message(),
            "Forbidden: maximum allowed value of a user defined priority is 1000000000"
        );
        let sys = json!({"metadata": {"name": "system-mine"}, "value": 1});
        let errs = PriorityClassStrategy.validate(&sys);
        assert_eq!(errs[0].message(), "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class");
        let bad = json!({"metadata": {"name": "x"}, "value": 1, "preemptionPolicy": "Sometimes"});
        assert_eq!(
            PriorityClassStrategy.validate(&bad)[0].field,
            "preemptionPolicy"
        );

        let mut new = o.clone();
        new["value"] = json!(5);
        let errs = PriorityClassStrategy.validate_update(&new, &o);
        assert_eq!(errs[0].field, "value");
        assert_eq!(
            errs[0].message(),
            "Forbidden: may not be changed in an update."
        );
    }
}
