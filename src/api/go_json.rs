//! Built-in objects written as upstream writes them: Go's encoding/json
//! emits a struct's fields in declaration order (`kind`, `apiVersion`,
//! `metadata`, `spec`, `status`; `name` before `namespace`), map keys
//! sorted, and `<`, `>`, `&`, U+2028 and U+2029 escaped. The field order
//! comes from the Go types (src/api/protobuf/zero_values.rs, generated);
//! keys the Go types do not know (none, for valid objects) follow, sorted.
//! Custom resources are maps upstream, so sorted keys are already right.

use serde_json::{Map, Value};

use super::protobuf::zero_values::GO_ORDER;

type Fields = &'static [(&'static str, &'static str, u8)];

/// `how` in [`GO_ORDER`]: 0 is a plain field.
const MAP: u8 = 1;
const INLINE: u8 = 2;

fn fields_of(message: &str) -> Option<Fields> {
    GO_ORDER
        .binary_search_by(|(m, _)| (*m).cmp(message))
        .ok()
        .map(|i| GO_ORDER[i].1)
        .or_else(|| {
            AGGREGATOR_ORDER
                .iter()
                .find(|(m, _)| *m == message)
                .map(|(_, f)| *f)
        })
}

const APISERVICE: &str = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService";
const APISERVICE_LIST: &str = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList";

/// kube-aggregator's types, which the generated table (k8s.io/api and
/// apimachinery) does not cover, as its Go structs declare them.
static AGGREGATOR_ORDER: &[(&str, &[(&str, &str, u8)])] = &[
    (
        APISERVICE,
        &[
            ("", "io.k8s.apimachinery.pkg.apis.meta.v1.TypeMeta", INLINE),
            (
                "metadata",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                0,
            ),
            (
                "spec",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec",
                0,
            ),
            (
                "status",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus",
                0,
            ),
        ],
    ),
    (
        APISERVICE_LIST,
        &[
            ("", "io.k8s.apimachinery.pkg.apis.meta.v1.TypeMeta", INLINE),
            (
                "metadata",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
                0,
            ),
            ("items", APISERVICE, 0),
        ],
    ),
    (
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec",
        &[
            (
                "service",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference",
                0,
            ),
            ("group", "", 0),
            ("version", "", 0),
            ("insecureSkipTLSVerify", "", 0),
            ("caBundle", "", 0),
            ("groupPriorityMinimum", "", 0),
            ("versionPriority", "", 0),
        ],
    ),
    (
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference",
        &[("namespace", "", 0), ("name", "", 0), ("port", "", 0)],
    ),
    (
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus",
        &[(
            "conditions",
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition",
            0,
        )],
    ),
    (
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition",
        &[
            ("type", "", 0),
            ("status", "", 0),
            ("lastTransitionTime", "", 0),
            ("reason", "", 0),
            ("message", "", 0),
        ],
    ),
];

/// The object in Go's order when `api_version`/`kind` is a built-in kind,
/// else in sorted order (serde_json's), with Go's escaping either way.
pub fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, v, v.as_object().and_then(own_fields), false);
    out
}

/// The object in the Go order of the struct `message` names (the
/// discovery documents, which do not all name their own kind).
pub fn to_vec_as(v: &Value, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    write_value(&mut out, v, fields_of(message), false);
    out
}

/// The field order of an object that names its own kind: a built-in kind,
/// or one of meta.k8s.io's (Tables and their rows' objects, partial
/// metadata) that have no storage of their own.
fn own_fields(m: &Map<String, Value>) -> Option<Fields> {
    let av = m.get("apiVersion").and_then(Value::as_str)?;
    let kind = m.get("kind").and_then(Value::as_str)?;
    let message = super::protobuf::message_for_kind(av, kind).or(match (av, kind) {
        ("meta.k8s.io/v1" | "meta.k8s.io/v1beta1", "Table") => {
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.Table")
        }
        ("meta.k8s.io/v1" | "meta.k8s.io/v1beta1", "PartialObjectMetadata") => {
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata")
        }
        ("meta.k8s.io/v1" | "meta.k8s.io/v1beta1", "PartialObjectMetadataList") => {
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList")
        }
        ("apiregistration.k8s.io/v1", "APIService") => Some(APISERVICE),
        ("apiregistration.k8s.io/v1", "APIServiceList") => Some(APISERVICE_LIST),
        _ => None,
    })?;
    fields_of(message)
}

fn write_value(out: &mut Vec<u8>, v: &Value, fields: Option<Fields>, is_map: bool) {
    match v {
        Value::Object(m) if is_map => {
            out.push(b'{');
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write_value(out, val, fields, false);
            }
            out.push(b'}');
        }
        Value::Object(m) => match fields {
            Some(f) => {
                out.push(b'{');
                let mut written: Vec<&str> = Vec::with_capacity(m.len());
                write_struct(out, m, f, &mut written);
                for (k, val) in m {
                    if !written.contains(&k.as_str()) {
                        if !written.is_empty() {
                            out.push(b',');
                        }
                        written.push(k);
                        write_string(out, k);
                        out.push(b':');
                        write_value(out, val, None, false);
                    }
                }
                out.push(b'}');
            }
            None => write_value(out, v, None, true),
        },
        Value::Array(a) => {
            out.push(b'[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, fields, false);
            }
            out.push(b']');
        }
        Value::String(s) => write_string(out, s),
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

fn write_raw(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Object(m) => write_value(out, v, own_fields(m), false),
        Value::Array(a) => {
            out.push(b'[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_raw(out, item);
            }
            out.push(b']');
        }
        other => write_value(out, other, None, false),
    }
}

fn write_struct<'a>(
    out: &mut Vec<u8>,
    m: &'a Map<String, Value>,
    fields: Fields,
    written: &mut Vec<&'a str>,
) {
    for &(name, target, how) in fields {
        if how == INLINE {
            if let Some(inner) = fields_of(target) {
                write_struct(out, m, inner, written);
            }
            continue;
        }
        let Some((key, val)) = m.get_key_value(name) else {
            continue;
        };
        if written.contains(&key.as_str()) {
            continue;
        }
        if !written.is_empty() {
            out.push(b',');
        }
        written.push(key);
        write_string(out, key);
        out.push(b':');
        if target.is_empty() && how != MAP {
            // A RawExtension (a Table row's object, a List's items): the
            // object's own kind decides its order; anything else (a custom
            // resource's fields included) stays sorted, as upstream's maps.
            write_raw(out, val);
            continue;
        }
        let target = if target.is_empty() {
            None
        } else {
            fields_of(target)
        };
        write_value(out, val, target, how == MAP);
    }
}

/// Bytes a Go string encoder does not copy as they are: control
/// characters, `"` and `\\`, the HTML characters `<`, `>` and `&`, and
/// 0xE2, which starts U+2028 and U+2029.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'<' as usize] = true;
    t[b'>' as usize] = true;
    t[b'&' as usize] = true;
    t[0xE2] = true;
    t
};

/// Bytes a string is checked by at a time: the check has no early exit,
/// so the compiler does it with vector instructions.
const CHUNK: usize = 16;

/// [`SPECIAL`] as comparisons, which vectorize where a table lookup does
/// not. Written with few distinct constants (`"` and `&` differ only in
/// bit 2, `<` and `>` in bit 1): spelled out byte by byte, the compiler
/// turned the check into a bit-table lookup per byte instead.
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    ((b | 4) == b'&') | ((b | 2) == b'>') | (b == b'\\') | (b == 0xE2) | (b < 0x20)
}

/// A string as Go's `encoding/json` writes it (HTML-safe, U+2028 and
/// U+2029 escaped): one pass, copying the runs between escapes whole.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    // Bytes before this were looked at one by one or found plain by chunk.
    let mut chunked_to = 0;
    while i < bytes.len() {
        if i >= chunked_to {
            // Most strings have nothing to escape: skip them by chunks.
            while let Some(chunk) = bytes.get(i..i + CHUNK) {
                if chunk
                    .iter()
                    .fold(0u8, |any, &b| any | u8::from(needs_escape(b)))
                    != 0
                {
                    break;
                }
                i += CHUNK;
            }
            // The chunk with an escape (or the tail) goes byte by byte.
            chunked_to = i + CHUNK;
            if i >= bytes.len() {
                break;
            }
        }
        let b = bytes[i];
        if !SPECIAL[b as usize] {
            i += 1;
            continue;
        }
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'<' => b"\\u003c",
            b'>' => b"\\u003e",
            b'&' => b"\\u0026",
            0xE2 => match bytes.get(i + 1..i + 3) {
                Some([0x80, 0xA8]) => b"\\u2028",
                Some([0x80, 0xA9]) => b"\\u2029",
                // Another character starting with 0xE2: copied as it is.
                _ => {
                    i += 1;
                    continue;
                }
            },
            _ => {
                out.extend_from_slice(&bytes[run..i]);
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xF)]);
                i += 1;
                run = i;
                continue;
            }
        };
        out.extend_from_slice(&bytes[run..i]);
        out.extend_from_slice(escape);
        i += if b == 0xE2 { 3 } else { 1 };
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every escape Go makes, and what it leaves: the same bytes as
    /// serde_json's escaping followed by Go's HTML and line-separator
    /// escapes, for every ASCII byte and the characters around U+2028.
    #[test]
    fn strings_escape_as_go_does() {
        fn reference(s: &str) -> String {
            let plain = serde_json::to_string(s).expect("json");
            plain
                .replace('<', "\\u003c")
                .replace('>', "\\u003e")
                .replace('&', "\\u0026")
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029")
        }
        let mut cases: Vec<String> = (0u8..0x80).map(|b| format!("a{}b", b as char)).collect();
        cases.extend(
            [
                "",
                "plain",
                "\u{2027}\u{2028}\u{2029}\u{202a}",
                "€ and ≠ (both start 0xE2)",
                "<a href=\"x\">&amp;</a>",
                "tab\tnl\ncr\r\u{8}\u{c}\u{1f}",
                "ends with \u{2028}",
                "日本語 ✓",
            ]
            .map(String::from),
        );
        // Long strings, checked by chunks: each escape at every position
        // around the chunk boundaries, U+2028 straddling them too.
        for special in ["\"", "\\", "<", "&", "\n", "\u{1}", "\u{2028}", "€"] {
            for at in 0..3 * CHUNK {
                let mut s = "x".repeat(at);
                s.push_str(special);
                s.push_str(&"y".repeat(2 * CHUNK));
                s.push_str(special);
                cases.push(s);
            }
        }
        cases.push("p".repeat(1024));
        for s in cases {
            let mut out = Vec::new();
            write_string(&mut out, &s);
            assert_eq!(
                String::from_utf8(out).expect("utf8"),
                reference(&s),
                "for {}",
                s.escape_debug()
            );
        }
    }

    #[test]
    fn the_chunk_check_escapes_what_the_table_does() {
        for b in 0..=u8::MAX {
            assert_eq!(needs_escape(b), SPECIAL[usize::from(b)], "byte {b:#x}");
        }
    }

    #[test]
    fn a_deployment_comes_out_in_go_order() {
        let v = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"uid": "u", "name": "web", "namespace": "ns", "labels": {"b": "1", "a": "2"}},
            "status": {},
            "spec": {"template": {"spec": {"containers": [{"image": "i", "name": "c"}]}}, "replicas": 1}
        });
        let got = String::from_utf8(to_vec(&v)).unwrap();
        assert_eq!(
            got,
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"ns","uid":"u","labels":{"a":"2","b":"1"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{}}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&got).unwrap(), v);
    }

    #[test]
    fn unknown_kinds_are_sorted_and_strings_escaped_as_go() {
        let v = json!({"kind": "Widget", "apiVersion": "example.com/v1", "spec": {"q": "a<b>&c\u{2028}"}});
        assert_eq!(
            String::from_utf8(to_vec(&v)).unwrap(),
            r#"{"apiVersion":"example.com/v1","kind":"Widget","spec":{"q":"a\u003cb\u003e\u0026c\u2028"}}"#
        );
    }
}
