//! Secret (upstream's pkg/registry/core/secret). Apart from ConfigMap because
//! what is Secret-only matters: `stringData` is folded into `data`, a type
//! demands its keys and may not change; the shared data-map rules are in
//! config_map.rs.

use serde_json::{json, Value};

use super::config_map::{
    data_bytes, validate_data_keys, validate_data_size, validate_immutable_data,
};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct SecretStrategy;

static SECRET_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types", priority: 0, cell: |o| o["type"].clone() },
        Column {
            name: "Data",
            kind: "string",
            format: "",
            description: "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
            priority: 0,
            cell: |o| json!(o["data"].as_object().map_or(0, |m| m.len())),
        },
        age_column(),
    ]
});

impl Strategy for SecretStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            set_default(m, "type", json!("Opaque"));
            // stringData is write-only: merged into data, as upstream's conversion does.
            if let Some(Value::Object(sd)) = m.remove("stringData") {
                use base64::Engine;
                let data = m.entry("data").or_insert_with(|| json!({}));
                if let Some(d) = data.as_object_mut() {
                    for (k, v) in sd {
                        let text = v.as_str().unwrap_or("").to_string();
                        d.insert(
                            k,
                            json!(base64::engine::general_purpose::STANDARD.encode(text)),
                        );
                    }
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_data_keys(obj, "data", &mut errs);
        validate_data_size(data_bytes(obj, "data", true), &mut errs);
        let ty = obj["type"].as_str().unwrap_or("");
        let need = |key: &str, errs: &mut Vec<FieldError>| {
            if obj["data"].get(key).is_none() {
                errs.push(FieldError::required(format!("data[{key}]"), ""));
            }
        };
        match ty {
            "kubernetes.io/tls" => {
                need("tls.crt", &mut errs);
                need("tls.key", &mut errs);
            }
            "kubernetes.io/dockerconfigjson" => need(".dockerconfigjson", &mut errs),
            "kubernetes.io/basic-auth" => {}
            "kubernetes.io/ssh-auth" => need("ssh-privatekey", &mut errs),
            _ => {}
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("type") != old.get("type") {
            errs.push(FieldError::invalid(
                "type",
                new["type"].clone(),
                "field is immutable",
            ));
        }
        validate_immutable_data(new, old, &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SECRET_COLUMNS)
    }
}
