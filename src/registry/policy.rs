//! Strategies of the policy group: PodDisruptionBudget (upstream's
//! pkg/registry/policy/poddisruptionbudget and pkg/apis/policy/validation).

use serde_json::{json, Value};

use super::helpers::{self, invalid_raw};
use super::strategy::{age_column, name_column, Column, Strategy};
use super::validation::FieldError;

pub struct PodDisruptionBudgetStrategy;

/// An IntOrString as Go's `%#v` prints it in messages.
fn go_int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// upstream's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent.
fn validate_int_or_percent(v: &Value, field: &str, errs: &mut Vec<FieldError>) {
    match v {
        Value::Null => {}
        Value::String(s) => {
            for m in helpers::percent(s) {
                errs.push(invalid_raw(field, &go_int_or_string(v), &m));
            }
            let pct = s.strip_suffix('%').and_then(|n| n.parse::<i64>().ok());
            if pct.is_some_and(|p| p > 100) {
                errs.push(invalid_raw(
                    field,
                    &go_int_or_string(v),
                    "must not be greater than 100%",
                ));
            }
        }
        other => {
            let n = other.as_i64().unwrap_or(0);
            if n < 0 {
                errs.push(FieldError::invalid(
                    field,
                    json!(n),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
}

fn int_or_string_cell(v: &Value) -> Value {
    match v {
        Value::Null => json!("N/A"),
        Value::String(s) => json!(s),
        other => json!(other.to_string()),
    }
}

static PDB_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Min Available",
            kind: "string",
            format: "",
            description: "The minimum number of pods that must be available.",
            priority: 0,
            cell: |o| int_or_string_cell(&o["spec"]["minAvailable"]),
        },
        Column {
            name: "Max Unavailable",
            kind: "string",
            format: "",
            description: "The maximum number of pods that may be unavailable.",
            priority: 0,
            cell: |o| int_or_string_cell(&o["spec"]["maxUnavailable"]),
        },
        Column {
            name: "Allowed Disruptions",
            kind: "integer",
            format: "",
            description: "Calculated number of pods that may be disrupted at this time.",
            priority: 0,
            cell: |o| json!(o["status"]["disruptionsAllowed"].as_i64().unwrap_or(0)),
        },
        age_column(),
    ]
});

impl Strategy for PodDisruptionBudgetStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert(
                "status".into(),
                json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        if !spec["minAvailable"].is_null() && !spec["maxUnavailable"].is_null() {
            errs.push(FieldError::invalid(
                "spec",
                spec.clone(),
                "minAvailable and maxUnavailable cannot be both set",
            ));
        }
        validate_int_or_percent(&spec["minAvailable"], "spec.minAvailable", &mut errs);
        validate_int_or_percent(&spec["maxUnavailable"], "spec.maxUnavailable", &mut errs);
        errs.extend(helpers::validate_label_selector(
            &spec["selector"],
            "spec.selector",
        ));
        if let Some(p) = spec["unhealthyPodEvictionPolicy"].as_str() {
            if p != "AlwaysAllow" && p != "IfHealthyBudget" {
                errs.push(FieldError::not_supported(
                    "spec.unhealthyPodEvictionPolicy",
                    json!(p),
                    &["AlwaysAllow", "IfHealthyBudget"],
                ));
            }
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PDB_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        let ok = json!({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}});
        assert!(PodDisruptionBudgetStrategy.validate(&ok).is_empty());
        let both = json!({"spec": {"minAvailable": 1, "maxUnavailable": "10%"}});
        let errs = PodDisruptionBudgetStrategy.validate(&both);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec");
        assert!(errs[0]
            .message()
            .ends_with("minAvailable and maxUnavailable cannot be both set"));
        let bad = json!({"spec": {"minAvailable": "150%", "unhealthyPodEvictionPolicy": "Never"}});
        let got: Vec<(String, String)> = PodDisruptionBudgetStrategy
            .validate(&bad)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                ("spec.minAvailable".into(), "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%".into()),
                ("spec.unhealthyPodEvictionPolicy".into(), "Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"".into()),
            ]
        );
        let neg = json!({"spec": {"maxUnavailable": -1}});
        assert_eq!(
            PodDisruptionBudgetStrategy.validate(&neg)[0].message(),
            "Invalid value: -1: must be greater than or equal to 0"
        );
        let pct = json!({"spec": {"maxUnavailable": "x"}});
        assert!(PodDisruptionBudgetStrategy.validate(&pct)[0]
            .message()
            .contains("a valid percent string"));
    }

    #[test]
    fn status_and_cells() {
        let mut o = json!({"spec": {"maxUnavailable": "25%"}});
        PodDisruptionBudgetStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"]["disruptionsAllowed"], 0);
        let cells: Vec<Value> = PDB_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[1], "N/A");
        assert_eq!(cells[2], "25%");
        assert_eq!(cells[3], 0);
        assert_eq!(
            (PDB_COLUMNS[1].cell)(&json!({"spec": {"minAvailable": 2}})),
            "2"
        );
    }
}
