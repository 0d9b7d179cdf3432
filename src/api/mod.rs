//! The API machinery shared by every server: Status errors and, as the
//! built-in API grows, the catalog of resources, selectors and Tables.

pub mod catalog;
pub mod protobuf;
pub mod selector;
pub mod status;
pub mod strict;

pub use status::{ApiError, Reason};

/// A JSON value's type as Go's `encoding/json` names it in decode errors
/// ("cannot unmarshal number into Go struct field ...").
pub fn json_type_name(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
