//! Embedded resources (`x-kubernetes-embedded-resource: true`): their
//! ObjectMeta is decoded like upstream's `GetObjectMeta` (unknown fields
//! dropped, wrong types rejected), written back normalised, and validated
//! with the object-meta rules; apiVersion and kind are required.

use serde_json::{Map, Value};

use super::gofmt;
use super::{additional, child, flag, index, items, key, property, Additional, EMBEDDED};
use crate::api::meta::{self, NameRule};
use crate::api::validation::{self, FieldError};

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    Time,
    StrMap,
    StrList,
    Raw,
    List(&'static [(&'static str, Kind)]),
}

const OWNER_REFERENCE: &[(&str, Kind)] = &[
    ("apiVersion", Kind::Str),
    ("kind", Kind::Str),
    ("name", Kind::Str),
    ("uid", Kind::Str),
    ("controller", Kind::Bool),
    ("blockOwnerDeletion", Kind::Bool),
];

const MANAGED_FIELDS_ENTRY: &[(&str, Kind)] = &[
    ("manager", Kind::Str),
    ("operation", Kind::Str),
    ("apiVersion", Kind::Str),
    ("time", Kind::Time),
    ("fieldsType", Kind::Str),
    ("fieldsV1", Kind::Raw),
    ("subresource", Kind::Str),
];

/// metav1.ObjectMeta's JSON fields.
const OBJECT_META: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("generateName", Kind::Str),
    ("namespace", Kind::Str),
    ("selfLink", Kind::Str),
    ("uid", Kind::Str),
    ("resourceVersion", Kind::Str),
    ("generation", Kind::Int),
    ("creationTimestamp", Kind::Time),
    ("deletionTimestamp", Kind::Time),
    ("deletionGracePeriodSeconds", Kind::Int),
    ("labels", Kind::StrMap),
    ("annotations", Kind::StrMap),
    ("ownerReferences", Kind::List(OWNER_REFERENCE)),
    ("finalizers", Kind::StrList),
    ("managedFields", Kind::List(MANAGED_FIELDS_ENTRY)),
];

use crate::api::json_type_name as json_type;

fn go_type(k: Kind, struct_name: &str) -> String {
    match k {
        Kind::Str => "string".into(),
        Kind::Int => "int64".into(),
        Kind::Bool => "bool".into(),
        Kind::Time => "v1.Time".into(),
        Kind::StrMap => "map[string]string".into(),
        Kind::StrList => "[]string".into(),
        Kind::Raw => "v1.FieldsV1".into(),
        Kind::List(_) => format!("[]v1.{struct_name}"),
    }
}

fn mismatch(v: &Value, field: &str, go: &str) -> String {
    let what = match v {
        Value::Number(n) if n.as_i64().is_none() => format!("number {}", gofmt::number(n)),
        other => json_type(other).to_string(),
    };
    format!("json: cannot unmarshal {what} into Go struct field {field} of type {go}")
}

fn parse_time(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// The decoding error of one field value, if any (Go's encoding/json words).
fn check(v: &Value, k: Kind, field: &str, item_struct: &str) -> Option<String> {
    if v.is_null() {
        return None;
    }
    match k {
        Kind::Str => (!v.is_string()).then(|| mismatch(v, field, "string")),
        Kind::Bool => (!v.is_boolean()).then(|| mismatch(v, field, "bool")),
        Kind::Int => (v.as_i64().is_none()).then(|| mismatch(v, field, "int64")),
        Kind::Raw => (!v.is_object()).then(|| mismatch(v, field, "map[string]interface {}")),
        Kind::Time => match v.as_str() {
            None => Some(mismatch(v, field, "string")),
            Some(s) if parse_time(s).is_none() => Some(format!(
                "parsing time {} as \"2006-01-02T15:04:05Z07:00\": cannot parse {} as \"2006\"",
                gofmt::quote(s),
                gofmt::quote(s)
            )),
            Some(_) => None,
        },
        Kind::StrMap => match v.as_object() {
            None => Some(mismatch(v, field, "map[string]string")),
            Some(m) => m
                .values()
                .find(|x| !x.is_string() && !x.is_null())
                .map(|x| mismatch(x, field, "string")),
        },
        Kind::StrList => match v.as_array() {
            None => Some(mismatch(v, field, "[]string")),
            Some(a) => a
                .iter()
                .find(|x| !x.is_string() && !x.is_null())
                .map(|x| mismatch(x, field, "string")),
        },
        Kind::List(fields) => match v.as_array() {
            None => Some(mismatch(v, field, &go_type(k, item_struct))),
            Some(a) => a.iter().find_map(|item| match item {
                Value::Null => None,
                Value::Object(m) => fields.iter().find_map(|(name, fk)| {
                    m.get(*name)
                        .and_then(|x| check(x, *fk, &format!("{field}.{name}"), ""))
                }),
                other => Some(mismatch(other, field, &format!("v1.{item_struct}"))),
            }),
        },
    }
}

/// Why `metadata` does not decode into an ObjectMeta, if it does not.
pub(super) fn decode_error(metadata: &Value) -> Option<String> {
    match metadata {
        Value::Null => None,
        Value::Object(m) => OBJECT_META.iter().find_map(|(name, k)| {
            let item = match *name {
                "ownerReferences" => "OwnerReference",
                "managedFields" => "ManagedFieldsEntry",
                _ => "",
            };
            m.get(*name)
                .and_then(|v| check(v, *k, &format!("ObjectMeta.{name}"), item))
        }),
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            json_type(other)
        )),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Re-encodes one decoded struct the way ToUnstructured writes it back:
/// unknown fields dropped (and reported), omitempty fields left out, times
/// in RFC 3339 UTC.
fn normalize(
    m: &Map<String, Value>,
    fields: &[(&str, Kind)],
    omitempty: fn(&str) -> bool,
    path: &str,
    unknown: &mut Vec<String>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for k in m.keys() {
        if !fields.iter().any(|(n, _)| n == k) {
            unknown.push(child(path, k));
        }
    }
    for (name, kind) in fields {
        let v = m.get(*name).unwrap_or(&Value::Null);
        let nv = match (kind, v) {
            (Kind::Time, Value::String(s)) => match parse_time(s) {
                Some(t) => Value::String(t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                None => Value::Null,
            },
            (Kind::Int, Value::Number(n)) if *name == "generation" && n.as_i64() == Some(0) => {
                Value::Null
            }
            (Kind::List(item_fields), Value::Array(a)) => {
                let list: Vec<Value> = a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| match x.as_object() {
                        Some(o) => Value::Object(normalize(
                            o,
                            item_fields,
                            if *name == "ownerReferences" {
                                |f| f == "controller" || f == "blockOwnerDeletion"
                            } else {
                                |_| true
                            },
                            &index(&child(path, name), i),
                            unknown,
                        )),
                        None => Value::Object(Map::new()),
                    })
                    .collect();
                Value::Array(list)
            }
            (Kind::StrMap, Value::Object(o)) => Value::Object(
                o.iter()
                    .map(|(k, x)| {
                        (
                            k.clone(),
                            if x.is_null() {
                                Value::String(String::new())
                            } else {
                                x.clone()
                            },
                        )
                    })
                    .collect(),
            ),
            _ => v.clone(),
        };
        let keep = if omitempty(name) {
            !is_zero(&nv)
        } else {
            !nv.is_null() || matches!(kind, Kind::Str)
        };
        if keep {
            let nv = if nv.is_null() && matches!(kind, Kind::Str) {
                Value::String(String::new())
            } else {
                nv
            };
            out.insert((*name).to_string(), nv);
        }
    }
    out
}

/// What upstream's Coerce does to an embedded resource's metadata (with
/// unknown field paths returned): when it decodes, it is rewritten as
/// ObjectMeta, dropping unknown fields; when it does not, it is left for
/// validation to reject.
pub(super) fn coerce(metadata: &mut Value, path: &str, unknown: &mut Vec<String>) {
    if decode_error(metadata).is_some() {
        return;
    }
    let m = metadata.as_object().cloned().unwrap_or_default();
    // ObjectMeta's fields are all omitempty except deletionGracePeriodSeconds
    // and deletionTimestamp, which are pointers (and so only left out when nil).
    let out = normalize(
        &m,
        OBJECT_META,
        |f| f != "deletionGracePeriodSeconds" && f != "deletionTimestamp",
        path,
        unknown,
    );
    *metadata = Value::Object(out);
}

/// Walks the object for embedded resources and coerces their metadata
/// (upstream's objectmeta.Coerce, not at the root).
pub(super) fn coerce_tree(x: &mut Value, s: &Value, path: &str, unknown: &mut Vec<String>) {
    match x {
        Value::Object(m) => {
            if flag(s, EMBEDDED) {
                if let Some(md) = m.get_mut("metadata") {
                    coerce(md, &child(path, "metadata"), unknown);
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(p) = property(s, k) {
                    coerce_tree(v, p, &child(path, k), unknown);
                } else if let Additional::Schema(ap) = additional(s) {
                    coerce_tree(v, ap, &key(path, k), unknown);
                }
            }
        }
        Value::Array(a) => {
            if let Some(it) = items(s) {
                for (i, v) in a.iter_mut().enumerate() {
                    coerce_tree(v, it, &index(path, i), unknown);
                }
            }
        }
        _ => {}
    }
}

/// The first type error Coerce (without dropping) reports for embedded
/// resources in `x`, `is_root` treating `x` itself as embedded.
pub(super) fn coerce_error(x: &Value, s: &Value, path: &str, is_root: bool) -> Option<FieldError> {
    match x {
        Value::Object(m) => {
            if is_root || flag(s, EMBEDDED) {
                for (k, v) in m {
                    match k.as_str() {
                        "apiVersion" | "kind" if !v.is_string() => {
                            return Some(gofmt::invalid(child(path, k), v, "must be a string"));
                        }
                        "metadata" => {
                            if let Some(e) = decode_error(v) {
                                return Some(gofmt::invalid(child(path, "metadata"), v, e));
                            }
                        }
                        _ => {}
                    }
                }
            }
            for (k, v) in m {
                let e = if let Some(p) = property(s, k) {
                    coerce_error(v, p, &child(path, k), false)
                } else if let Additional::Schema(ap) = additional(s) {
                    coerce_error(v, ap, &key(path, k), false)
                } else {
                    None
                };
                if e.is_some() {
                    return e;
                }
            }
            None
        }
        Value::Array(a) => {
            let it = items(s)?;
            a.iter()
                .enumerate()
                .find_map(|(i, v)| coerce_error(v, it, &index(path, i), false))
        }
        _ => None,
    }
}

/// upstream's objectmeta.Validate: apiVersion, kind and metadata of every
/// embedded resource in `x` (and of `x` itself when `is_root`).
pub(super) fn validate(
    path: &str,
    x: &Value,
    s: &Value,
    is_root: bool,
    errs: &mut Vec<FieldError>,
) {
    match x {
        Value::Object(m) => {
            if is_root || flag(s, EMBEDDED) {
                validate_embedded(path, m, errs);
            }
            for (k, v) in m {
                if let Some(p) = property(s, k) {
                    validate(&child(path, k), v, p, false, errs);
                } else if let Additional::Schema(ap) = additional(s) {
                    validate(&key(path, k), v, ap, false, errs);
                }
            }
        }
        Value::Array(a) => {
            if let Some(it) = items(s) {
                for (i, v) in a.iter().enumerate() {
                    validate(&index(path, i), v, it, false, errs);
                }
            }
        }
        _ => {}
    }
}

fn validate_embedded(path: &str, x: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    if !x.contains_key("apiVersion") {
        errs.push(FieldError::required(child(path, "apiVersion"), ""));
    }
    if !x.contains_key("kind") {
        errs.push(FieldError::required(child(path, "kind"), ""));
    }
    for (k, v) in x {
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => errs.push(gofmt::invalid(
                    child(path, "apiVersion"),
                    v,
                    "must be a string",
                )),
                Some("") => errs.push(gofmt::invalid(
                    child(path, "apiVersion"),
                    v,
                    "must not be empty",
                )),
                Some(av) if av != "/" && av.matches('/').count() > 1 => errs.push(gofmt::invalid(
                    child(path, "apiVersion"),
                    v,
                    format!("unexpected GroupVersion string: {av}"),
                )),
                Some(_) => {}
            },
            "kind" => match v.as_str() {
                None => errs.push(gofmt::invalid(child(path, "kind"), v, "must be a string")),
                Some("") => errs.push(gofmt::invalid(child(path, "kind"), v, "must not be empty")),
                Some(kind) => {
                    let e = validation::dns1035_label(&kind.to_lowercase());
                    if !e.is_empty() {
                        errs.push(gofmt::invalid(
                            child(path, "kind"),
                            v,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                e.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" => {
                if let Some(e) = decode_error(v) {
                    errs.push(gofmt::invalid(child(path, "metadata"), v, e));
                    continue;
                }
                let mut md = v.as_object().cloned().unwrap_or_default();
                let name_empty = md
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty();
                if name_empty {
                    // upstream sets a fake name to avoid the required error
                    md.insert("name".into(), Value::String("fakename".into()));
                }
                let namespaced = !md
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty();
                let wrapped = serde_json::json!({ "metadata": md });
                let prefix = child(path, "metadata");
                for mut e in meta::validate(&wrapped, namespaced, NameRule::PathSegment) {
                    if let Some(rest) = e.field.strip_prefix("metadata") {
                        e.field = format!("{prefix}{rest}");
                    }
                    errs.push(e);
                }
            }
            _ => {}
        }
    }
}
