//! How Go prints the unstructured values (`interface{}` holding
//! `map[string]interface{}`, `[]interface{}`, `int64`, `float64`, ...) that
//! upstream puts into field errors, so messages read as upstream's do.

use serde_json::{Number, Value};

use crate::api::validation::{go_value, ErrorType, FieldError};

/// A float64 as `%v` prints it (strconv 'g' with the shortest precision,
/// exponent form below 1e-4 and from 1e+06 on).
pub(super) fn float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (neg, digits, exp) = decompose(f);
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&exp_form(&digits, exp));
    } else {
        out.push_str(&fixed_form(&digits, exp + 1));
    }
    out
}

/// A float64 as encoding/json marshals it ('f' between 1e-6 and 1e21).
pub(super) fn json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    if f == 0.0 {
        return "0".into();
    }
    let (neg, digits, exp) = decompose(f);
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        // strconv prints e-07; encoding/json cleans it up to e-7.
        let s = exp_form(&digits, exp);
        out.push_str(&s.replace("e-0", "e-"));
    } else {
        out.push_str(&fixed_form(&digits, exp + 1));
    }
    out
}

/// Sign, shortest round-trip digits and decimal exponent (d.ddd × 10^exp).
fn decompose(f: f64) -> (bool, String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0').to_string();
    let digits = if digits.is_empty() {
        "0".into()
    } else {
        digits
    };
    (f < 0.0, digits, exp.parse().unwrap_or(0))
}

fn exp_form(digits: &str, exp: i32) -> String {
    let mut out = String::new();
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
    out
}

/// Digits with the decimal point after `dp` of them.
fn fixed_form(digits: &str, dp: i32) -> String {
    let nd = digits.len() as i32;
    if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp >= nd {
        format!("{digits}{}", "0".repeat((dp - nd) as usize))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    }
}

/// A JSON number as Go holds it after decoding: int64 when it is an
/// integer that fits, float64 otherwise.
pub(super) fn number(n: &Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => float(n.as_f64().unwrap_or(0.0)),
    }
}

/// `strconv.Quote`.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `%#v` of a value inside an `interface{}` container.
fn sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}:{}", quote(k), sharp_v(x)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// How `field.Error` prints an unstructured bad value: `%v` for numbers
/// and bools, `%q` for strings, `%#v` for maps and slices, `"null"` for nil.
pub(super) fn repr(v: &Value) -> String {
    match v {
        Value::Null => quote("null"),
        Value::Array(_) | Value::Object(_) => sharp_v(v),
        other => sharp_v(other),
    }
}

/// encoding/json's rendering of a value (enum values in NotSupported).
pub(super) fn json(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => json_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(json).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}:{}", Value::String(k.clone()), json(x)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
    }
}

/// A field error carrying an unstructured bad value. When the shared
/// renderer would print the value differently from Go (maps, slices,
/// some floats, nil), the Go rendering goes into the detail instead, so
/// the message is upstream's either way.
pub(super) fn with_value(
    kind: ErrorType,
    field: impl Into<String>,
    value: &Value,
    detail: impl Into<String>,
) -> FieldError {
    let detail = detail.into();
    let r = repr(value);
    if go_value(value) == r {
        return FieldError {
            kind,
            field: field.into(),
            value: Some(value.clone()),
            detail,
        };
    }
    FieldError {
        kind,
        field: field.into(),
        value: None,
        detail: if detail.is_empty() {
            r
        } else {
            format!("{r}: {detail}")
        },
    }
}

pub(super) fn invalid(
    field: impl Into<String>,
    value: &Value,
    detail: impl Into<String>,
) -> FieldError {
    with_value(ErrorType::Invalid, field, value, detail)
}

/// `field.NotSupported` with Go's quoting of the supported values.
pub(super) fn not_supported(
    field: impl Into<String>,
    value: &Value,
    supported: &[String],
) -> FieldError {
    let detail = if supported.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = supported.iter().map(|s| quote(s)).collect();
        format!("supported values: {}", quoted.join(", "))
    };
    with_value(ErrorType::NotSupported, field, value, detail)
}

/// `field.TooLong` as of 1.32+: "may not be more than N bytes".
pub(super) fn too_long(field: impl Into<String>, max: i64) -> FieldError {
    FieldError {
        kind: ErrorType::TooLong,
        field: field.into(),
        value: None,
        detail: format!(
            "may not be more than {max} {}",
            if max == 1 { "byte" } else { "bytes" }
        ),
    }
}

/// `field.Error.Error()`: "field: body".
pub(super) fn error_string(e: &FieldError) -> String {
    format!("{}: {}", e.field, e.message())
}
