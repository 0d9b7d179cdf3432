//! Values as upstream's field errors quote them. Since apimachinery 1.34 a
//! bad value that is not a string or a number is rendered with
//! `json.Marshal` of the *internal* Go type: exported field names as keys
//! (`{"Group":"","Resource":"services",...}`), every field present (`null`
//! for nil pointers, slices and maps), map keys sorted, and Go's HTML-safe
//! string escapes. These builders write that from the versioned JSON.

use serde_json::Value;

/// A Go JSON string (HTML-safe, U+2028 and U+2029 escaped), as
/// [`crate::api::go_json`] writes it.
pub fn string(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    crate::api::go_json::write_string(&mut out, s);
    // Only ASCII escapes were added to a `str`: always UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// A string field (Go's zero value `""` when missing).
pub fn str_field(v: &Value) -> String {
    string(v.as_str().unwrap_or(""))
}

/// A `*string` field.
pub fn opt_str(v: &Value) -> String {
    match v.as_str() {
        Some(s) => string(s),
        None => "null".into(),
    }
}

/// An integer field (0 when missing).
pub fn int(v: &Value) -> String {
    v.as_i64().unwrap_or(0).to_string()
}

/// A `*int64` or `*bool` field, or any other scalar pointer.
pub fn opt_scalar(v: &Value) -> String {
    match v {
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        Value::String(s) => string(s),
        _ => "null".into(),
    }
}

/// A slice: `null` when missing, else each item rendered by `item`.
pub fn list(v: &Value, item: impl Fn(&Value) -> String) -> String {
    match v.as_array() {
        Some(a) => format!("[{}]", a.iter().map(item).collect::<Vec<_>>().join(",")),
        None => "null".into(),
    }
}

/// A `[]string`.
pub fn strings(v: &Value) -> String {
    list(v, str_field)
}

/// A map with string values (quantities, labels): keys sorted.
pub fn string_map(v: &Value) -> String {
    match v.as_object() {
        Some(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", string(k), any(&m[k.as_str()])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        None => "null".into(),
    }
}

/// Untyped JSON (a RawExtension's bytes): compact, Go's escaping, sorted keys.
pub fn any(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        Value::Array(a) => format!("[{}]", a.iter().map(any).collect::<Vec<_>>().join(",")),
        Value::Object(_) => string_map(v),
        other => other.to_string(),
    }
}

/// A struct: fields in declaration order, already rendered.
pub fn structure(fields: &[(&str, String)]) -> String {
    let parts: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", parts.join(","))
}

/// A pointer to a struct: `null` when missing.
pub fn opt_struct(v: &Value, render: impl Fn(&Value) -> String) -> String {
    if v.is_object() {
        render(v)
    } else {
        "null".into()
    }
}

/// core.NodeSelectorRequirement.
fn node_selector_requirement(r: &Value) -> String {
    structure(&[
        ("Key", str_field(&r["key"])),
        ("Operator", str_field(&r["operator"])),
        ("Values", strings(&r["values"])),
    ])
}

/// core.NodeSelectorTerm.
pub fn node_selector_term(t: &Value) -> String {
    structure(&[
        (
            "MatchExpressions",
            list(&t["matchExpressions"], node_selector_requirement),
        ),
        (
            "MatchFields",
            list(&t["matchFields"], node_selector_requirement),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_like_go() {
        assert_eq!(string("a<b>&c"), r#""a\u003cb\u003e\u0026c""#);
        assert_eq!(strings(&json!(["x", "y"])), r#"["x","y"]"#);
        assert_eq!(strings(&Value::Null), "null");
        assert_eq!(
            any(&json!({"b": 1, "a": [true, "<"]})),
            r#"{"a":[true,"\u003c"],"b":1}"#
        );
        assert_eq!(
            node_selector_term(
                &json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]})
            ),
            r#"{"MatchExpressions":null,"MatchFields":[{"Key":"metadata.name","Operator":"In","Values":["n"]}]}"#
        );
    }
}
