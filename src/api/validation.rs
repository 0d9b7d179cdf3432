//! Field errors, as upstream's `field.ErrorList`, and the name rules every
//! object's metadata is checked against.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    Required,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    Duplicate,
    /// upstream's `field.TooMany` (FieldValueTooMany).
    TooMany,
    /// upstream's `field.TypeInvalid` (FieldValueTypeInvalid), printed like Invalid.
    TypeInvalid,
    /// upstream's `field.NotFound` (FieldValueNotFound).
    NotFound,
}

/// One field's problem.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: String,
    pub value: Option<Value>,
    pub detail: String,
}

/// Renders a bad value as upstream's field errors quote it (v1.34):
/// strings quoted, numbers and booleans bare, anything else as Go's
/// encoding/json writes it (`["a","b"]`, `{"k":"v"}`).
pub fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        other => String::from_utf8_lossy(&crate::api::go_json::to_vec(other)).into_owned(),
    }
}

impl FieldError {
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            kind: ErrorType::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        FieldError {
            kind: ErrorType::Invalid,
            field: field.into(),
            value: Some(value),
            detail: detail.into(),
        }
    }

    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError {
            kind: ErrorType::NotSupported,
            field: field.into(),
            value: Some(value),
            detail: format!("supported values: {}", list.join(", ")),
        }
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            kind: ErrorType::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// upstream's `field.NotFound`: the value names something that does not exist.
    pub fn not_found(field: impl Into<String>, value: Value) -> Self {
        FieldError {
            kind: ErrorType::NotFound,
            field: field.into(),
            value: Some(value),
            detail: String::new(),
        }
    }

    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        FieldError {
            kind: ErrorType::Duplicate,
            field: field.into(),
            value: Some(value),
            detail: String::new(),
        }
    }

    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        FieldError {
            kind: ErrorType::TooLong,
            field: field.into(),
            value: None,
            detail: format!("may not be more than {max} bytes"),
        }
    }

    /// upstream's `field.TooMany`: a list (or map) with more entries than allowed.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        FieldError {
            kind: ErrorType::TooMany,
            field: field.into(),
            value: Some(Value::from(actual)),
            detail: format!(
                "must have at most {max} {}",
                if max == 1 { "item" } else { "items" }
            ),
        }
    }

    /// upstream's `field.TypeInvalid`: the value is not of the schema's type.
    pub fn type_invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        FieldError {
            kind: ErrorType::TypeInvalid,
            field: field.into(),
            value: Some(value),
            detail: detail.into(),
        }
    }

    /// The `message` of the Status cause (without the field).
    pub fn message(&self) -> String {
        let head = match self.kind {
            ErrorType::Required => "Required value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::TooMany => "Too many",
            ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotFound => "Not found",
        };
        let mut m = head.to_string();
        if let Some(v) = &self.value {
            m.push_str(": ");
            m.push_str(&go_value(v));
        }
        if !self.detail.is_empty() {
            m.push_str(": ");
            m.push_str(&self.detail);
        }
        m
    }

    pub fn to_cause(&self) -> StatusCause {
        let reason = match self.kind {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotFound => "FieldValueNotFound",
        };
        StatusCause {
            reason: Some(reason.into()),
            message: Some(self.message()),
            field: Some(self.field.clone()),
        }
    }
}

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && s.as_bytes()[0] != b'-'
        && s.as_bytes()[s.len() - 1] != b'-'
}

/// DNS-1123 label: at most 63 characters.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_string());
    }
    if !is_label(s) {
        out.push(DNS1123_LABEL_MSG.to_string());
    }
    out
}

/// DNS-1123 subdomain: dot-separated labels, at most 253 characters.
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if s.is_empty() || !s.split('.').all(is_label) {
        out.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    out
}

/// DNS-1035 label (Service names): starts with a letter.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_string());
    }
    if !is_label(s) || !s.as_bytes()[0].is_ascii_lowercase() {
        out.push(DNS1035_LABEL_MSG.to_string());
    }
    out
}

/// Path segment names (RBAC and others): anything that is safe in a URL path.
pub fn path_segment_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s == "." || s == ".." {
        out.push(format!("may not be '{s}'"));
    }
    for bad in ["/", "%"] {
        if s.contains(bad) {
            out.push(format!("may not contain '{bad}'"));
        }
    }
    out
}

/// Label values: at most 63 characters of `[A-Za-z0-9_.-]`, alphanumeric at both ends.
pub fn label_value(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    if v.len() > 63 {
        out.push("must be no more than 63 characters".into());
    }
    let ok = v.is_empty()
        || (v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && v.as_bytes()[0].is_ascii_alphanumeric()
            && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric());
    if !ok {
        out.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into());
    }
    out
}

/// Qualified names (label and annotation keys): optional DNS prefix and a name.
pub fn qualified_name(k: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            out.push("prefix part must be non-empty".into());
        } else {
            out.extend(
                dns1123_subdomain(p)
                    .into_iter()
                    .map(|m| format!("prefix part {m}")),
            );
        }
    }
    if name.is_empty() {
        out.push("name part must be non-empty".into());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".into());
        }
        let ok = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && name.as_bytes()[0].is_ascii_alphanumeric()
            && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
        if !ok {
            out.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(dns1123_subdomain("example.com").is_empty());
        assert_eq!(dns1123_subdomain("Bad_Name").len(), 1);
        assert!(dns1123_label("a-1").is_empty());
        assert!(!dns1123_label("a.b").is_empty());
        assert!(!dns1035_label("1abc").is_empty());
        assert!(path_segment_name("system:admin").is_empty());
        assert!(!path_segment_name("a/b").is_empty());
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert!(!qualified_name("bad key").is_empty());
        assert!(!label_value("-x").is_empty());
    }

    #[test]
    fn messages_match_upstream() {
        let e = FieldError::invalid(
            "spec.containers[1].ports[0].containerPort",
            serde_json::json!(70000),
            "must be between 1 and 65535, inclusive",
        );
        assert_eq!(
            e.message(),
            "Invalid value: 70000: must be between 1 and 65535, inclusive"
        );
        assert_eq!(FieldError::required("x", "").message(), "Required value");
        assert_eq!(
            FieldError::duplicate("x", serde_json::json!("c")).message(),
            "Duplicate value: \"c\""
        );
        let m = FieldError::invalid(
            "l",
            serde_json::json!({"a": "c"}),
            "`selector` does not match template `labels`",
        );
        assert_eq!(
            m.message(),
            "Invalid value: {\"a\":\"c\"}: `selector` does not match template `labels`"
        );
    }
}
