//! The structural invariants (upstream's validateStructuralInvariants):
//! where types, `x-kubernetes-*` extensions and metadata may appear, and
//! what the value validations (junctors) may not specify.

use serde_json::{Map, Value};

use crate::api::validation::FieldError;
use crate::schema::{
    additional, child, flag, get, index, items, key, list, properties, property, str_of, type_of,
    Additional, EMBEDDED, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, PRESERVE, VALIDATIONS,
};

use super::is_zero;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Level {
    Root,
    Item,
    Field,
}

/// The anyOf of the int-or-string patterns: [{type: integer}, {type: string}].
fn is_int_or_string_any_of(any_of: &[Value]) -> bool {
    let only_type = |v: &Value, t: &str| {
        v.as_object().is_some_and(|m| {
            type_of(v) == t
                && m.iter().all(|(k, x)| {
                    k == "type" || !STRUCTURAL_KEYS.contains(&k.as_str()) || is_zero(x)
                })
        })
    };
    any_of.len() == 2 && only_type(&any_of[0], "integer") && only_type(&any_of[1], "string")
}

fn is_int_or_string_all_of(s: &Value) -> bool {
    list(s, "allOf")
        .first()
        .is_some_and(|first| is_int_or_string_any_of(list(first, "anyOf")))
}

pub(super) fn invariants(s: &Value, lvl: Level, p: &str, errs: &mut Vec<FieldError>) {
    let ty = type_of(s);
    if ty == "array" && items(s).is_none() {
        errs.push(FieldError::required(child(p, "items"), "must be specified"));
    }
    if let Some(it) = items(s) {
        invariants(it, Level::Item, &child(p, "items"), errs);
    }
    if let Some(props) = properties(s) {
        for (k, v) in props {
            invariants(v, Level::Field, &key(&child(p, "properties"), k), errs);
        }
    }
    let ap = additional(s);
    if !matches!(ap, Additional::Absent) {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                child(p, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Additional::Schema(ap) = ap {
            invariants(ap, Level::Field, &child(p, "additionalProperties"), errs);
        }
    }

    let int_or_string = flag(s, INT_OR_STRING);
    let preserve = flag(s, PRESERVE);
    let embedded = flag(s, EMBEDDED);
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            child(p, PRESERVE),
            Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            child(p, EMBEDDED),
            Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_any_of(list(s, "anyOf"));
    let skip_first_all_of_any_of = is_int_or_string_all_of(s);
    value_validation(s, skip_any_of, skip_first_all_of_any_of, lvl, p, errs);

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let msg = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errs.push(FieldError::required(child(p, "type"), msg));
        } else {
            errs.push(FieldError::invalid(
                child(p, "type"),
                Value::String(ty.into()),
                msg,
            ));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let msg = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(child(p, "type"), msg));
    }
    if embedded && !matches!(ap, Additional::Absent) {
        errs.push(FieldError::forbidden(
            child(p, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            child(p, "type"),
            Value::String(ty.into()),
            "must be object at the root",
        ));
    }
    for f in ["kind", "apiVersion"] {
        if let Some(fs) = property(s, f) {
            if check_metadata && type_of(fs) != "string" {
                errs.push(FieldError::invalid(
                    child(&key(&child(p, "properties"), f), "type"),
                    Value::String(type_of(fs).into()),
                    "must be string",
                ));
            }
        }
    }
    if let Some(md) = property(s, "metadata") {
        metadata_invariants(
            md,
            check_metadata,
            lvl,
            &key(&child(p, "properties"), "metadata"),
            errs,
        );
    }
    if embedded && !preserve && properties(s).is_none_or(Map::is_empty) {
        errs.push(FieldError::required(
            child(p, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// The keys NewStructural keeps (anything else, like example or
/// externalDocs, is dropped and so never counts).
const STRUCTURAL_KEYS: [&str; 35] = [
    "items",
    "properties",
    "additionalProperties",
    "description",
    "type",
    "title",
    "default",
    "nullable",
    PRESERVE,
    EMBEDDED,
    INT_OR_STRING,
    LIST_MAP_KEYS,
    LIST_TYPE,
    MAP_TYPE,
    VALIDATIONS,
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
];

fn metadata_invariants(
    s: &Value,
    check_metadata: bool,
    lvl: Level,
    p: &str,
    errs: &mut Vec<FieldError>,
) {
    if check_metadata && type_of(s) != "object" {
        errs.push(FieldError::invalid(
            child(p, "type"),
            Value::String(type_of(s).into()),
            "must be object",
        ));
    }
    if lvl != Level::Root {
        return;
    }
    // Only name and generateName may be restricted; type and default are
    // ignored here (default is refused by the API checks).
    let Some(m) = s.as_object() else {
        return;
    };
    let mut restricted = false;
    for (k, v) in m {
        if !STRUCTURAL_KEYS.contains(&k.as_str()) {
            continue;
        }
        match k.as_str() {
            "type" | "default" => {}
            "properties" => {
                let names: Vec<&String> = v
                    .as_object()
                    .map(|o| o.keys().collect())
                    .unwrap_or_default();
                let ok = names.iter().all(|n| *n == "name" || *n == "generateName");
                if !ok {
                    restricted = true;
                }
            }
            "not" | "additionalProperties" | "items" => {
                if !v.is_null() {
                    restricted = true;
                }
            }
            "exclusiveMaximum" | "exclusiveMinimum" | "uniqueItems" | "nullable" | PRESERVE
            | EMBEDDED | INT_OR_STRING => {
                if v.as_bool() == Some(true) {
                    restricted = true;
                }
            }
            LIST_TYPE | MAP_TYPE => {
                if !v.is_null() {
                    restricted = true;
                }
            }
            _ => {
                if !is_zero(v) {
                    restricted = true;
                }
            }
        }
    }
    if restricted {
        errs.push(FieldError::forbidden(
            p,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

fn value_validation(
    v: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    p: &str,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, x) in list(v, "anyOf").iter().enumerate() {
            nested(x, false, false, lvl, &index(&child(p, "anyOf"), i), errs);
        }
    }
    for (i, x) in list(v, "allOf").iter().enumerate() {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(x, skip, false, lvl, &index(&child(p, "allOf"), i), errs);
    }
    for (i, x) in list(v, "oneOf").iter().enumerate() {
        nested(x, false, false, lvl, &index(&child(p, "oneOf"), i), errs);
    }
    if let Some(n) = get(v, "not") {
        nested(n, false, false, lvl, &child(p, "not"), errs);
    }
    let pattern = str_of(v, "pattern");
    if !pattern.is_empty() {
        if let Err(e) = crate::schema::formats::regex(pattern) {
            errs.push(FieldError::invalid(
                child(p, "pattern"),
                Value::String(pattern.into()),
                format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
}

/// A schema under a logical junctor: only value validations may be there.
fn nested(
    v: &Value,
    skip_any_of: bool,
    skip_all_of_any_of: bool,
    lvl: Level,
    p: &str,
    errs: &mut Vec<FieldError>,
) {
    value_validation(v, skip_any_of, skip_all_of_any_of, lvl, p, errs);
    if let Some(it) = items(v) {
        nested(it, false, false, lvl, &child(p, "items"), errs);
    }
    if let Some(props) = properties(v) {
        for (k, x) in props {
            nested(
                x,
                false,
                false,
                Level::Field,
                &key(&child(p, "properties"), k),
                errs,
            );
        }
    }
    let forbid = |errs: &mut Vec<FieldError>, f: &str, what: &str| {
        errs.push(FieldError::forbidden(
            child(p, f),
            format!("must {what} to be structural"),
        ));
    };
    if !type_of(v).is_empty() {
        forbid(errs, "type", "be empty");
    }
    if !matches!(additional(v), Additional::Absent) {
        forbid(errs, "additionalProperties", "be undefined");
    }
    if get(v, "default").is_some() {
        forbid(errs, "default", "be undefined");
    }
    if !str_of(v, "title").is_empty() {
        forbid(errs, "title", "be empty");
    }
    if !str_of(v, "description").is_empty() {
        forbid(errs, "description", "be empty");
    }
    if flag(v, "nullable") {
        forbid(errs, "nullable", "be false");
    }
    if flag(v, PRESERVE) {
        forbid(errs, PRESERVE, "be false");
    }
    if flag(v, EMBEDDED) {
        forbid(errs, EMBEDDED, "be false");
    }
    if flag(v, INT_OR_STRING) {
        forbid(errs, INT_OR_STRING, "be false");
    }
    if !list(v, LIST_MAP_KEYS).is_empty() {
        forbid(errs, LIST_MAP_KEYS, "be empty");
    }
    if get(v, LIST_TYPE).is_some() {
        forbid(errs, LIST_TYPE, "be undefined");
    }
    if get(v, MAP_TYPE).is_some() {
        forbid(errs, MAP_TYPE, "be undefined");
    }
    if !list(v, VALIDATIONS).is_empty() {
        forbid(errs, VALIDATIONS, "be empty");
    }
    if property(v, "metadata").is_some() {
        errs.push(FieldError::forbidden(
            key(&child(p, "properties"), "metadata"),
            "must not be specified in a nested context",
        ));
    }
}
