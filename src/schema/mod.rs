//! Structural schemas of CustomResourceDefinitions, as upstream's
//! apiextensions-apiserver does them: the structural-schema rules and the
//! schema part of the CRD API validation (`pkg/apiserver/schema` and
//! `pkg/apis/apiextensions/validation`), pruning of unknown fields,
//! defaulting, and the kube-openapi validation custom resources go through
//! (with the list-type and embedded-resource checks of the custom resource
//! strategy). Its own module, below the registry (custom resources are
//! pruned, defaulted and validated there) and admission (webhook patches
//! are pruned).
//!
//! Everything works on `serde_json::Value`: a schema is a version's
//! `openAPIV3Schema` as stored in the CRD, an object a custom resource as
//! decoded from a request. `x-kubernetes-validations` (CEL) rules are not
//! evaluated or compiled here; only their placement is checked (they are
//! not allowed under logical junctors, like anything non-structural).
//!
//! The order upstream runs these on a write is: decode, prune (unknown
//! fields become warnings or strict errors), default, validate.

mod defaulting;
mod formats;
mod gofmt;
mod objectmeta;
mod openapi;
mod pruning;
mod structural;
mod validate;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

pub use defaulting::apply_defaults;
pub use openapi::to_openapi;
pub use pruning::prune;
pub use structural::{validate_status_root, validate_structural};
pub use validate::validate;

/// What upstream's storage codec does to a custom resource decoded from
/// storage or converted to a version (its `unstructuredSchemaCoercer`):
/// drops the fields the version's schema does not specify, and the nulls
/// it neither allows nor defaults, and coerces the metadata.
pub fn coerce(obj: &mut Value, schema: &Value) {
    prune(obj, schema);
    defaulting::prune_non_nullable_nulls(obj, Some(schema));
}

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
const LIST_TYPE: &str = "x-kubernetes-list-type";
const LIST_MAP_KEYS: &str = "x-kubernetes-list-map-keys";
const MAP_TYPE: &str = "x-kubernetes-map-type";
const VALIDATIONS: &str = "x-kubernetes-validations";

/// apiVersion, kind and metadata: what an (embedded) resource always keeps.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// A schema key that is present and not JSON null.
fn get<'a>(s: &'a Value, key: &str) -> Option<&'a Value> {
    s.get(key).filter(|v| !v.is_null())
}

fn type_of(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn str_of<'a>(s: &'a Value, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or("")
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn properties(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

fn property<'a>(s: &'a Value, name: &str) -> Option<&'a Value> {
    properties(s).and_then(|p| p.get(name))
}

/// `items` when it is a single schema (an array of schemas is not allowed).
fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|v| v.is_object())
}

/// What `additionalProperties` says.
#[derive(Clone, Copy)]
enum Additional<'a> {
    Absent,
    Bool(bool),
    Schema(&'a Value),
}

fn additional(s: &Value) -> Additional<'_> {
    match s.get("additionalProperties") {
        None | Some(Value::Null) => Additional::Absent,
        Some(Value::Bool(b)) => Additional::Bool(*b),
        Some(v) => Additional::Schema(v),
    }
}

fn str_list<'a>(s: &'a Value, key: &str) -> Vec<&'a str> {
    s.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn list<'a>(s: &'a Value, key: &str) -> &'a [Value] {
    s.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// An integer-valued schema keyword (maxLength and kin).
fn int_of(s: &Value, key: &str) -> Option<i64> {
    let v = get(s, key)?;
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

fn float_of(s: &Value, key: &str) -> Option<f64> {
    get(s, key).and_then(Value::as_f64)
}

/// `field.Path.Child`: "a.b", or "b" at the root.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `field.Path.Key`: "a[k]".
fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

/// `field.Path.Index`: "a[0]".
fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}
