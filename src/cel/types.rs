//! The CEL view of a structural schema: the declared type of every node
//! (upstream's `SchemaDeclType`), the property-name escaping rules and the
//! small schema accessors the rest of the module shares.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

/// A CEL type as the checker sees it. `Dyn` is also what anything the
/// checker cannot know becomes, so that it never rejects what upstream accepts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// An object with properties: its accessible (escaped) field names.
    Object(Arc<BTreeMap<String, Ty>>),
    Opt(Box<Ty>),
    /// A type value (`int`, `type(x)`).
    Type,
    /// A value of one of the Kubernetes library types (quantity, URL, IP…).
    Ext(&'static str),
}

impl Ty {
    /// The name cel-go prints for the type in checker messages.
    pub(crate) fn name(&self) -> String {
        match self {
            Ty::Dyn => "dyn".into(),
            Ty::Null => "null_type".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Uint => "uint".into(),
            Ty::Double => "double".into(),
            Ty::String => "string".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Duration => "google.protobuf.Duration".into(),
            Ty::Timestamp => "google.protobuf.Timestamp".into(),
            Ty::List(e) => format!("list({})", e.name()),
            Ty::Map(k, v) => format!("map({}, {})", k.name(), v.name()),
            Ty::Object(_) => "object".into(),
            Ty::Opt(t) => format!("optional_type({})", t.name()),
            Ty::Type => "type".into(),
            Ty::Ext(n) => (*n).into(),
        }
    }

    /// Scalars whose mismatches the checker reports with certainty.
    pub(crate) fn is_scalar(&self) -> bool {
        matches!(
            self,
            Ty::Null
                | Ty::Bool
                | Ty::Int
                | Ty::Uint
                | Ty::Double
                | Ty::String
                | Ty::Bytes
                | Ty::Duration
                | Ty::Timestamp
        )
    }

    /// Known precisely enough to report an overload mismatch.
    pub(crate) fn is_known(&self) -> bool {
        !matches!(self, Ty::Dyn | Ty::Ext(_))
    }

    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }

    /// The common type of two alternatives (conditional branches, list elements).
    pub(crate) fn join(a: &Ty, b: &Ty) -> Ty {
        if a == b {
            return a.clone();
        }
        match (a, b) {
            (Ty::Null, other) | (other, Ty::Null)
                if matches!(other, Ty::Object(_) | Ty::Opt(_)) =>
            {
                other.clone()
            }
            (Ty::List(x), Ty::List(y)) => Ty::List(Box::new(Ty::join(x, y))),
            (Ty::Map(k1, v1), Ty::Map(k2, v2)) => {
                Ty::Map(Box::new(Ty::join(k1, k2)), Box::new(Ty::join(v1, v2)))
            }
            _ => Ty::Dyn,
        }
    }

    /// Whether a value of type `a` may be compared for equality with `b`
    /// (cel-go's `_==_(A, A)` after assignability).
    pub(crate) fn comparable(a: &Ty, b: &Ty) -> bool {
        if !a.is_known() || !b.is_known() {
            return true;
        }
        match (a, b) {
            (Ty::List(x), Ty::List(y)) => Ty::comparable(x, y),
            (Ty::Map(k1, v1), Ty::Map(k2, v2)) => Ty::comparable(k1, k2) && Ty::comparable(v1, v2),
            (Ty::Opt(x), Ty::Opt(y)) => Ty::comparable(x, y),
            (Ty::Null, Ty::Object(_) | Ty::Opt(_)) | (Ty::Object(_) | Ty::Opt(_), Ty::Null) => true,
            (Ty::Object(_), Ty::Object(_)) => true,
            (x, y) if x.is_scalar() && y.is_scalar() => x == y,
            (Ty::List(_), y) | (y, Ty::List(_)) => !y.is_scalar() && !matches!(y, Ty::Map(..)),
            (Ty::Map(..), y) | (y, Ty::Map(..)) => !y.is_scalar(),
            _ => true,
        }
    }
}

// ---------------------------------------------------------------------------
// Schema accessors

pub(crate) fn ty_of(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub(crate) fn is_int_or_string(s: &Value) -> bool {
    flag(s, "x-kubernetes-int-or-string")
}

pub(crate) fn is_embedded(s: &Value) -> bool {
    flag(s, "x-kubernetes-embedded-resource")
}

pub(crate) fn format_of(s: &Value) -> &str {
    s.get("format").and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn properties(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

/// The single items schema (not the tuple form).
pub(crate) fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|v| v.is_object())
}

/// The additionalProperties schema, when it is one (not a boolean).
pub(crate) fn additional_properties(s: &Value) -> Option<&Value> {
    s.get("additionalProperties").filter(|v| v.is_object())
}

pub(crate) fn list_type(s: &Value) -> &str {
    s.get("x-kubernetes-list-type")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub(crate) fn list_map_keys(s: &Value) -> Vec<&str> {
    s.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Upstream's `MapIsCorrelatable`: unset, granular and atomic maps correlate.
pub(crate) fn map_is_correlatable(s: &Value) -> bool {
    match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        None => true,
        Some(t) => t == "granular" || t == "atomic",
    }
}

pub(crate) fn rules(s: &Value) -> &[Value] {
    s.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn prop_has_type(props: &Map<String, Value>, name: &str, t: &str) -> bool {
    props.get(name).map(|p| ty_of(p) == t).unwrap_or(false)
}

/// Upstream's `WithTypeAndObjectMeta`: at a resource root, `apiVersion`,
/// `kind`, `metadata.name` and `metadata.generateName` are always declared,
/// and `metadata` is cut down to those two unless the schema declares them.
pub(crate) fn with_type_and_object_meta(s: &Value) -> Cow<'_, Value> {
    if let Some(props) = properties(s) {
        let meta_ok = props
            .get("metadata")
            .filter(|m| ty_of(m) == "object")
            .and_then(properties)
            .map(|mp| {
                prop_has_type(mp, "name", "string") && prop_has_type(mp, "generateName", "string")
            })
            .unwrap_or(false);
        if meta_ok
            && prop_has_type(props, "kind", "string")
            && prop_has_type(props, "apiVersion", "string")
        {
            return Cow::Borrowed(s);
        }
    }
    let mut out = match s {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let mut props = properties(s).cloned().unwrap_or_default();
    let string = serde_json::json!({"type": "string"});
    props.insert("kind".into(), string.clone());
    props.insert("apiVersion".into(), string.clone());
    props.insert(
        "metadata".into(),
        serde_json::json!({"type": "object", "properties": {"name": string.clone(), "generateName": string}}),
    );
    out.insert("properties".into(), Value::Object(props));
    Cow::Owned(Value::Object(out))
}

// ---------------------------------------------------------------------------
// Declared types

/// Upstream's `SchemaDeclType`: the CEL type of values of this schema, or
/// `None` when the schema is not exposed to CEL (unknown-type data preserved
/// by `x-kubernetes-preserve-unknown-fields`).
pub(crate) fn decl_type(s: &Value, is_resource_root: bool) -> Option<Ty> {
    if is_int_or_string(s) {
        return Some(Ty::Dyn);
    }
    let s = if is_resource_root {
        with_type_and_object_meta(s)
    } else {
        Cow::Borrowed(s)
    };
    let s = s.as_ref();
    match ty_of(s) {
        "array" => {
            let it = items(s)?;
            Some(Ty::List(Box::new(decl_type(it, is_embedded(it))?)))
        }
        "object" => {
            if let Some(ap) = additional_properties(s) {
                let v = decl_type(ap, is_embedded(ap))?;
                return Some(Ty::Map(Box::new(Ty::String), Box::new(v)));
            }
            let mut fields = BTreeMap::new();
            if let Some(props) = properties(s) {
                for (name, prop) in props {
                    if let (Some(t), Some(escaped)) =
                        (decl_type(prop, is_embedded(prop)), escape(name))
                    {
                        fields.insert(escaped, t);
                    }
                }
            }
            Some(Ty::Object(Arc::new(fields)))
        }
        "string" => Some(match format_of(s) {
            "byte" => Ty::Bytes,
            "duration" => Ty::Duration,
            "date" | "date-time" => Ty::Timestamp,
            _ => Ty::String,
        }),
        "boolean" => Some(Ty::Bool),
        "number" => Some(Ty::Double),
        "integer" => Some(Ty::Int),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Escaping

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Upstream's `cel.Escape`: the CEL identifier a property is accessed by, or
/// `None` when the name is not of the form `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*`.
pub(crate) fn escape(ident: &str) -> Option<String> {
    let first = ident.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&ident) {
        return Some(format!("__{ident}__"));
    }
    let mut out = String::with_capacity(ident.len());
    let b = ident.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'_' if b.get(i + 1) == Some(&b'_') => {
                out.push_str("__underscores__");
                i += 2;
                continue;
            }
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == b'_' => out.push(c as char),
            _ => return None,
        }
        i += 1;
    }
    Some(out)
}
