//! Strategies of flowcontrol.apiserver.k8s.io/v1: FlowSchema and
//! PriorityLevelConfiguration (upstream's pkg/registry/flowcontrol,
//! pkg/apis/flowcontrol/v1/defaults.go and pkg/apis/flowcontrol/validation).
//!
//! One file per kind, named as upstream's pkg/registry/flowcontrol/<kind>;
//! this module keeps what both share (the mandatory objects, semantic
//! equality, status conditions) and re-exports the strategies, so
//! `registry::flowcontrol::FlowSchemaStrategy` and the like stay the paths
//! callers use.

pub mod bootstrap;
mod flow_schema;
mod priority_level_configuration;

pub use flow_schema::FlowSchemaStrategy;
pub use priority_level_configuration::PriorityLevelConfigurationStrategy;

use serde_json::{json, Map, Value};

use super::helpers::{items, s};
use super::validation::FieldError;

/// Whether a field is present (a non-nil pointer in Go).
fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

// ---- mandatory objects (bootstrap.MandatoryFlowSchemas / ...PriorityLevelConfigurations) ----

fn mandatory_flow_schema(name: &str) -> Option<Value> {
    mandatory_spec("FlowSchema", name)
}

fn mandatory_priority_level(name: &str) -> Option<Value> {
    mandatory_spec("PriorityLevelConfiguration", name)
}

fn mandatory_spec(kind: &str, name: &str) -> Option<Value> {
    bootstrap::mandatory()
        .into_iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .map(|o| o["spec"].clone())
}

/// A spec as apiequality.Semantic compares it: nil and empty lists, and
/// missing and zero-valued strings and booleans, are the same.
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let x = semantic(x);
                let zero = match &x {
                    Value::Null => true,
                    Value::Bool(b) => !b,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty(),
                    Value::Number(_) => false,
                };
                if !zero {
                    out.insert(k.clone(), x);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn spec_value(spec: &Value) -> String {
    format!("{spec}")
}

/// ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus.
fn validate_conditions(status: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in items(&status["conditions"]).iter().enumerate() {
        let ty = s(c, "type");
        let p = format!("status.conditions[{i}].type");
        if seen.iter().any(|t| t == ty) {
            errs.push(FieldError::duplicate(p.clone(), json!(ty)));
        }
        seen.push(ty.to_string());
        if ty.is_empty() {
            errs.push(FieldError::required(p, "must not be empty"));
        }
    }
}

#[cfg(test)]
mod tests;
