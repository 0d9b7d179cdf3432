//! Patch errors: the HTTP answer each maps to and upstream's texts, with
//! Go's `%v`/`%s` formatting of decoded JSON that those texts use.

use std::fmt;

use serde_json::{Map, Value};

/// Which HTTP answer a patch error maps to, as upstream's
/// `interpretStrategicMergePatchError` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchErrorKind {
    /// 400: a malformed document or directive list.
    BadRequest,
    /// 422: lists of lists.
    Unprocessable,
    /// 500: everything else (upstream passes these errors through as they are).
    Internal,
}

/// A patch that cannot be applied. `message` is upstream's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    pub kind: PatchErrorKind,
    pub message: String,
}

impl PatchError {
    pub(super) fn new(kind: PatchErrorKind, message: impl Into<String>) -> Self {
        PatchError {
            kind,
            message: message.into(),
        }
    }

    pub(super) fn internal(message: impl Into<String>) -> Self {
        Self::new(PatchErrorKind::Internal, message)
    }

    /// The HTTP status code upstream answers with.
    pub fn code(&self) -> u16 {
        match self.kind {
            PatchErrorKind::BadRequest => 400,
            PatchErrorKind::Unprocessable => 422,
            PatchErrorKind::Internal => 500,
        }
    }

    pub(super) fn bad_json_doc() -> Self {
        Self::new(PatchErrorKind::BadRequest, "invalid JSON document")
    }

    pub(super) fn no_list_of_lists() -> Self {
        Self::new(
            PatchErrorKind::Unprocessable,
            "lists of lists are not supported",
        )
    }

    pub(super) fn bad_format_primitive_list() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of primitive list",
        )
    }

    pub(super) fn bad_format_retain_keys() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of retainKeys",
        )
    }

    pub(super) fn bad_format_set_element_order() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of setElementOrder list",
        )
    }

    pub(super) fn no_merge_key(m: &Map<String, Value>, key: &str) -> Self {
        Self::internal(format!(
            "map: {} does not contain declared merge key: {key}",
            go_map(m)
        ))
    }

    pub(super) fn bad_arg_type(expected: &str, actual: &Value) -> Self {
        Self::internal(format!(
            "expected a {expected}, but received a {}",
            go_type(actual)
        ))
    }

    pub(super) fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> Self {
        Self::internal(format!(
            "unknown patch type: {} in map: {}",
            go_s(directive),
            go_map(m)
        ))
    }

    pub(super) fn merging_lists() -> Self {
        Self::internal("merging lists cannot yet be specified in the patch")
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatchError {}

pub(super) const GO_MAP: &str = "map[string]interface {}";
pub(super) const GO_SLICE: &str = "[]interface {}";

/// Go's `reflect.TypeOf` of a decoded JSON value, formatted with `%s`.
pub(super) fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "%!s(<nil>)",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => GO_SLICE,
        Value::Object(_) => GO_MAP,
    }
}

/// Go's `%v` of a decoded JSON value.
pub(super) fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => go_map(m),
    }
}

/// Go's `%v` of a map: keys sorted.
pub(super) fn go_map(m: &Map<String, Value>) -> String {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{k}:{}", go_v(v)))
        .collect();
    format!("map[{}]", parts.join(" "))
}

/// Go's `%s` of a decoded JSON value.
pub(super) fn go_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        other => format!("%!s({}={})", go_type(other), go_v(other)),
    }
}
