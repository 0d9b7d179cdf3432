//! ConfigMap (upstream's pkg/registry/core/configmap), and the data-map rules
//! it shares with Secret: key syntax, the 1 MiB cap and `immutable`. The rules
//! live with ConfigMap, the plainer of the two kinds; secret.rs uses them.

use serde_json::{json, Value};

use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub(super) fn validate_data_keys(obj: &Value, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(data) = obj.get(field).and_then(Value::as_object) {
        for k in data.keys() {
            let ok = !k.is_empty()
                && k.len() <= 253
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !ok || k == "." || k == ".." {
                errs.push(FieldError::invalid(
                    format!("{field}[{k}]"),
                    Value::String(k.clone()),
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                ));
            }
        }
    }
}

/// upstream's `MaxSecretSize`, the cap on a ConfigMap's or Secret's data.
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The bytes a data map holds: strings as they are, base64 values decoded.
pub(super) fn data_bytes(obj: &Value, field: &str, base64_values: bool) -> usize {
    use base64::Engine;
    obj.get(field).and_then(Value::as_object).map_or(0, |m| {
        m.values()
            .filter_map(Value::as_str)
            .map(|s| {
                if base64_values {
                    base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_or(s.len(), |b| b.len())
                } else {
                    s.len()
                }
            })
            .sum()
    })
}

/// Data over the cap is refused for the whole object (an empty field path).
pub(super) fn validate_data_size(total: usize, errs: &mut Vec<FieldError>) {
    if total > MAX_DATA_BYTES {
        errs.push(FieldError::too_long("", MAX_DATA_BYTES));
    }
}

pub(super) fn validate_immutable_data(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    if old.get("immutable").and_then(Value::as_bool) == Some(true) {
        if new.get("immutable").and_then(Value::as_bool) != Some(true) {
            errs.push(FieldError::forbidden(
                "immutable",
                "field is immutable when `immutable` is set",
            ));
        }
        for field in ["data", "binaryData"] {
            if new.get(field) != old.get(field) {
                errs.push(FieldError::forbidden(
                    field,
                    "field is immutable when `immutable` is set",
                ));
            }
        }
    }
}

pub struct ConfigMapStrategy;

static CONFIGMAP_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Data",
            kind: "string",
            format: "",
            description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
            priority: 0,
            cell: |o| json!(o["data"].as_object().map_or(0, |m| m.len()) + o["binaryData"].as_object().map_or(0, |m| m.len())),
        },
        age_column(),
    ]
});

impl Strategy for ConfigMapStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_data_keys(obj, "data", &mut errs);
        validate_data_keys(obj, "binaryData", &mut errs);
        validate_data_size(
            data_bytes(obj, "data", false) + data_bytes(obj, "binaryData", true),
            &mut errs,
        );
        if let (Some(d), Some(b)) = (
            obj.get("data").and_then(Value::as_object),
            obj.get("binaryData").and_then(Value::as_object),
        ) {
            for k in d.keys().filter(|k| b.contains_key(*k)) {
                errs.push(FieldError::invalid(
                    format!("data[{k}]"),
                    Value::String(k.clone()),
                    "duplicate of key present in binaryData",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        validate_immutable_data(new, old, &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CONFIGMAP_COLUMNS)
    }
}
