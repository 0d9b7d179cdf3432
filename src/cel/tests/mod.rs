//! Unit tests of CEL validation rules (`x-kubernetes-validations`), by
//! topic; the schemas and helpers the topics share are here.

mod compilation;
mod library;
mod lists_and_maps;
mod messages;
mod objects;
mod runtime;
mod transition_rules;

use serde_json::{json, Value};

use super::{compile_schema_rules, validate};
use crate::api::validation::{ErrorType, FieldError};

/// A CR schema with `spec` as given.
fn crd(spec: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
        }
    })
}

fn cr(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}, "spec": spec})
}

fn lines(errs: &[FieldError]) -> Vec<String> {
    errs.iter()
        .map(|e| format!("{}: {}", e.field, e.message()))
        .collect()
}

fn replicas_schema(rule: Value) -> Value {
    crd(json!({
        "type": "object",
        "x-kubernetes-validations": [rule],
        "properties": {
            "minReplicas": {"type": "integer"},
            "replicas": {"type": "integer"},
        }
    }))
}
