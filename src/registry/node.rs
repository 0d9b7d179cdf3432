//! Strategy of node.k8s.io/v1 RuntimeClass (upstream's
//! pkg/registry/node/runtimeclass and pkg/apis/node/validation).

use serde_json::{json, Value};

use super::core::resource_requirements;
use super::helpers::{self, items, s};
use super::strategy::{age_column, name_column, Column, Strategy};
use super::validation::{self, FieldError};

pub struct RuntimeClassStrategy;

static RUNTIME_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        // The printer takes this description from ObjectMeta's docs, which have no `handler`.
        Column {
            name: "Handler",
            kind: "string",
            format: "",
            description: "",
            priority: 0,
            cell: |o| json!(s(o, "handler")),
        },
        age_column(),
    ]
});

/// upstream's ValidateContainerResourceRequirements over `{limits: podFixed}`.
fn validate_overhead(overhead: &Value, errs: &mut Vec<FieldError>) {
    if let Some(fixed) = overhead.get("podFixed").filter(|f| f.is_object()) {
        resource_requirements::validate(&json!({"limits": fixed}), "overhead", errs);
    }
}

/// Go's `%#v` of a core.Toleration (the value of a duplicate's error).
fn go_toleration(t: &Value) -> String {
    let seconds = if t["tolerationSeconds"].is_null() {
        "(*int64)(nil)".to_string()
    } else {
        "(*int64)(0xc000000000)".to_string()
    };
    format!(
        "core.Toleration{{Key:{:?}, Operator:{:?}, Value:{:?}, Effect:{:?}, TolerationSeconds:{seconds}}}",
        s(t, "key"),
        s(t, "operator"),
        s(t, "value"),
        s(t, "effect")
    )
}

/// upstream's ValidateTolerations (called by node validation with the
/// `tolerations` step twice in the path, as upstream does).
pub(crate) fn validate_tolerations(tolerations: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    for (i, t) in tolerations.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let (key, op, value, effect) =
            (s(t, "key"), s(t, "operator"), s(t, "value"), s(t, "effect"));
        if !key.is_empty() {
            helpers::label_name(key, &format!("{p}.key"), errs);
        }
        if key.is_empty() && op != "Exists" {
            errs.push(FieldError::invalid(
                format!("{p}.operator"),
                json!(op),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if !t["tolerationSeconds"].is_null() && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                format!("{p}.effect"),
                json!(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let msgs = validation::label_value(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.operator"),
                        json!(value),
                        msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.operator"),
                        json!(value),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                format!("{p}.operator"),
                json!(other),
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                json!(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

fn validate_scheduling(scheduling: &Value, errs: &mut Vec<FieldError>) {
    helpers::validate_labels(&scheduling["nodeSelector"], "scheduling.nodeSelector", errs);
    let tolerations = items(&scheduling["tolerations"]);
    validate_tolerations(&tolerations, "scheduling.tolerations.tolerations", errs);
    let mut seen: Vec<[&str; 4]> = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let key = [s(t, "key"), s(t, "operator"), s(t, "value"), s(t, "effect")];
        if seen.contains(&key) {
            // The value is a Go struct, printed as `%#v`: it goes in as the detail.
            errs.push(FieldError {
                kind: validation::ErrorType::Duplicate,
                field: format!("scheduling.tolerations[{i}]"),
                value: None,
                detail: go_toleration(t),
            });
        } else {
            seen.push(key);
        }
    }
}

fn validate_runtime_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let handler = s(obj, "handler");
    for m in validation::dns1123_label(handler) {
        errs.push(FieldError::invalid("handler", json!(handler), m));
    }
    if !obj["overhead"].is_null() {
        validate_overhead(&obj["overhead"], &mut errs);
    }
    if !obj["scheduling"].is_null() {
        validate_scheduling(&obj["scheduling"], &mut errs);
    }
    errs
}

impl Strategy for RuntimeClassStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_runtime_class(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_runtime_class(new);
        helpers::immutable("handler", &new["handler"], &old["handler"], &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&RUNTIME_CLASS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errs(v: Vec<FieldError>) -> Vec<(String, String)> {
        v.into_iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    fn rc(extra: Value) -> Value {
        let mut o = json!({"metadata": {"name": "gvisor"}, "handler": "runsc"});
        if let (Some(m), Some(x)) = (o.as_object_mut(), extra.as_object()) {
            m.extend(x.clone());
        }
        o
    }

    #[test]
    fn valid_and_cells() {
        let o = rc(
            json!({"overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {"nodeSelector": {"runtime": "gvisor"}, "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}),
        );
        assert!(RuntimeClassStrategy.validate(&o).is_empty());
        assert_eq!((RUNTIME_CLASS_COLUMNS[1].cell)(&o), "runsc");
        assert_eq!(RUNTIME_CLASS_COLUMNS[1].description, "");
    }

    #[test]
    fn handler_must_be_a_label_and_is_immutable() {
        let o = rc(json!({"handler": "Run_SC"}));
        assert_eq!(errs(RuntimeClassStrategy.validate(&o)), [(
            "handler".to_string(),
            "Invalid value: \"Run_SC\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string()
        )]);
        assert_eq!(
            errs(RuntimeClassStrategy.validate(&rc(json!({"handler": ""}))))[0].0,
            "handler"
        );
        let got = errs(
            RuntimeClassStrategy.validate_update(&rc(json!({"handler": "kata"})), &rc(json!({}))),
        );
        assert_eq!(
            got,
            [(
                "handler".to_string(),
                "Invalid value: \"kata\": field is immutable".to_string()
            )]
        );
    }

    #[test]
    fn overhead() {
        let o = rc(
            json!({"overhead": {"podFixed": {"cpu": "-1", "foo": "1", "example.com/dev": "500m", "hugepages-2Mi": "3Mi"}}}),
        );
        let got = errs(RuntimeClassStrategy.validate(&o));
        assert_eq!(
            got,
            [
                (
                    "overhead.limits[cpu]".to_string(),
                    "Invalid value: \"-1\": must be greater than or equal to 0".to_string()
                ),
                (
                    "overhead.limits[example.com/dev]".into(),
                    "Invalid value: \"500m\": must be an integer".into()
                ),
                (
                    "overhead.limits[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource type or fully qualified"
                        .into()
                ),
                (
                    "overhead.limits[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource for containers".into()
                ),
                (
                    "overhead.limits[hugepages-2Mi]".into(),
                    "Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi"
                        .into()
                ),
            ]
        );
        let o = rc(json!({"overhead": {"podFixed": {"hugepages-2Mi": "4Mi"}}}));
        assert_eq!(
            errs(RuntimeClassStrategy.validate(&o)),
            [(
                "overhead".to_string(),
                "Forbidden: HugePages require cpu or memory".to_string()
            )]
        );
        let o = rc(json!({"overhead": {"podFixed": {"kubernetes.io/foo": "1"}}}));
        assert!(RuntimeClassStrategy.validate(&o).is_empty());
    }

    #[test]
    fn scheduling() {
        let o = rc(
            json!({"scheduling": {"nodeSelector": {"bad key": "v"}, "tolerations": [
                {"operator": "Equal", "value": "x"},
                {"key": "k", "operator": "Exists", "value": "v", "tolerationSeconds": 5, "effect": "NoSchedule"},
                {"key": "k", "operator": "Maybe", "effect": "Sometimes"},
                {"key": "a", "value": "b"},
                {"key": "a", "value": "b"},
            ]}}),
        );
        let got = errs(RuntimeClassStrategy.validate(&o));
        let fields: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "scheduling.nodeSelector",
                "scheduling.tolerations.tolerations[0].operator",
                "scheduling.tolerations.tolerations[1].effect",
                "scheduling.tolerations.tolerations[1].operator",
                "scheduling.tolerations.tolerations[2].operator",
                "scheduling.tolerations.tolerations[2].effect",
                "scheduling.tolerations[4]",
            ]
        );
        assert_eq!(got[1].1, "Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
        assert_eq!(got[2].1, "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set");
        assert_eq!(
            got[3].1,
            "Invalid value: \"v\": value must be empty when `operator` is 'Exists'"
        );
        assert_eq!(
            got[4].1,
            "Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\""
        );
        assert_eq!(got[5].1, "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
        assert_eq!(got[6].1, "Duplicate value: core.Toleration{Key:\"a\", Operator:\"\", Value:\"b\", Effect:\"\", TolerationSeconds:(*int64)(nil)}");
    }
}
