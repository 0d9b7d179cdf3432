//! The API machinery shared by every server: Status errors and, as the
//! built-in API grows, the catalog of resources, selectors and Tables.

pub mod builtin;
pub mod catalog;
pub mod go_json;
pub mod json_syntax;
pub mod jsonpath;
pub mod meta;
pub mod partial_json;
pub mod protobuf;
pub mod quantity;
pub mod request_info;
pub mod routes;
pub mod selector;
pub mod status;
pub mod strict;
pub mod validation;

pub use status::{ApiError, Negotiable, Reason, StatusBody};

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

/// `json` ending in a newline, as Go's `json.Encoder` writes a document
/// (upstream's serializer encodes every API answer with one).
pub fn with_newline(json: bytes::Bytes) -> bytes::Bytes {
    if json.last() == Some(&b'\n') {
        return json;
    }
    let mut out = bytes::BytesMut::with_capacity(json.len() + 1);
    out.extend_from_slice(&json);
    out.extend_from_slice(b"\n");
    out.freeze()
}

/// Re-indents compact JSON as Go's `json.MarshalIndent(v, "", "  ")` lays
/// it out (keys in their order, `{}` and `[]` kept empty, no trailing
/// newline). Bytes that are not JSON come back trimmed but otherwise as
/// they were.
pub fn indent_json(compact: &[u8]) -> Vec<u8> {
    let src = compact.trim_ascii();
    let mut out = Vec::with_capacity(src.len() + src.len() / 4);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', depth * 2));
    };
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                out.push(c);
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                let mut j = i + 1;
                while j < src.len() && src[j].is_ascii_whitespace() {
                    j += 1;
                }
                if src.get(j) == Some(&close) {
                    out.push(c);
                    out.push(close);
                    i = j + 1;
                    continue;
                }
                out.push(c);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            c if c.is_ascii_whitespace() => {}
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod indent_tests {
    use super::indent_json;

    #[test]
    fn indents_as_go_marshal_indent() {
        let got =
            indent_json(br#"{"kind":"Status","a":[],"b":{},"c":[1,{"d":"x:,{"}],"e":"q\"}"}"#);
        let want = "{\n  \"kind\": \"Status\",\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x:,{\"\n    }\n  ],\n  \"e\": \"q\\\"}\"\n}";
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }
}

/// Go's `%q` of a string: how upstream quotes names and values in the
/// messages clients read.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
