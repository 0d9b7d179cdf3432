//! Unit tests of the schema module, by topic; the helpers shared by the
//! topics are here.

mod corner_cases;
mod crontab;
mod defaulting;
mod pruning;
mod rendering;
mod structural;
mod validation;

use serde_json::{json, Value};

use super::gofmt;
use super::*;
use crate::api::validation::FieldError;

const P: &str = "spec.versions[0].schema.openAPIV3Schema";

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter()
        .map(|e| format!("{}: {}", e.field, e.message()))
        .collect()
}

fn structural(s: Value) -> Vec<String> {
    msgs(&validate_structural(&s, P))
}

fn check(obj: Value, s: &Value) -> Vec<String> {
    msgs(&validate(&obj, s, ""))
}

fn root(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn spec(props: Value) -> Value {
    root(json!({"spec": {"type": "object", "properties": props}}))
}
