//! The per-node checks of the CRD API validation (upstream's
//! ValidateCustomResourceDefinitionOpenAPISchema): types, formats,
//! defaults, list and map types, and where each keyword may appear.

use serde_json::Value;

use crate::api::validation::FieldError;
use crate::schema::gofmt;
use crate::schema::{
    additional, child, flag, get, index, items, key, list, properties, property, str_list, str_of,
    type_of, Additional, EMBEDDED, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, META_FIELDS, PRESERVE,
};

use super::set;

#[derive(Clone)]
pub(super) struct Ctx {
    allow_defaults: bool,
    disallow_reason: String,
    inside_resource_meta: bool,
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx {
            allow_defaults: true,
            disallow_reason: String::new(),
            inside_resource_meta: false,
        }
    }
}

impl Ctx {
    fn forbid_defaults(&self, reason: &str) -> Ctx {
        Ctx {
            allow_defaults: false,
            disallow_reason: reason.to_string(),
            ..self.clone()
        }
    }
}

const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn node_checks(s: &Value, p: &str, ctx: &Ctx, errs: &mut Vec<FieldError>) {
    let ty = type_of(s);
    if !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty) {
        let supported: Vec<&str> = OPENAPI_V3_TYPES.to_vec();
        errs.push(FieldError::not_supported(
            child(p, "type"),
            Value::String(ty.into()),
            &supported,
        ));
    }
    if get(s, "default").is_some() && !ctx.allow_defaults {
        let mut detail = "must not be set".to_string();
        if !ctx.disallow_reason.is_empty() {
            detail.push(' ');
            detail.push_str(&ctx.disallow_reason);
        }
        errs.push(FieldError::forbidden(child(p, "default"), detail));
    }
    if !str_of(s, "id").is_empty() {
        errs.push(FieldError::forbidden(child(p, "id"), "id is not supported"));
    }
    if get(s, "additionalItems").is_some() {
        errs.push(FieldError::forbidden(
            child(p, "additionalItems"),
            "additionalItems is not supported",
        ));
    }
    if set(s, "patternProperties").is_some() {
        errs.push(FieldError::forbidden(
            child(p, "patternProperties"),
            "patternProperties is not supported",
        ));
    }
    if set(s, "definitions").is_some() {
        errs.push(FieldError::forbidden(
            child(p, "definitions"),
            "definitions is not supported",
        ));
    }
    if get(s, "dependencies").is_some() {
        errs.push(FieldError::forbidden(
            child(p, "dependencies"),
            "dependencies is not supported",
        ));
    }
    if get(s, "$ref").is_some() {
        errs.push(FieldError::forbidden(
            child(p, "$ref"),
            "$ref is not supported",
        ));
    }
    if ty == "null" {
        errs.push(FieldError::forbidden(
            child(p, "type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if s.get("items")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        errs.push(FieldError::forbidden(
            child(p, "items"),
            "items must be a schema object and not an array",
        ));
    }
    if ctx.inside_resource_meta && flag(s, EMBEDDED) {
        errs.push(FieldError::forbidden(
            child(p, EMBEDDED),
            "must not be used inside of resource meta",
        ));
    }
}

pub(super) fn api_schema(s: &Value, p: &str, ctx: &Ctx, is_root: bool, errs: &mut Vec<FieldError>) {
    node_checks(s, p, ctx, errs);

    if flag(s, "uniqueItems") {
        errs.push(FieldError::forbidden(
            child(p, "uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }

    let props = properties(s);
    let has_props = props.is_some_and(|m| !m.is_empty());
    match additional(s) {
        Additional::Absent => {}
        ap => {
            if has_props && matches!(ap, Additional::Bool(false) | Additional::Schema(_)) {
                errs.push(FieldError::forbidden(
                    child(p, "additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                ));
            }
            let sub = if ctx.inside_resource_meta {
                ctx.forbid_defaults("inside additionalProperties applying to object metadata")
            } else {
                ctx.clone()
            };
            if let Additional::Schema(ap) = ap {
                api_schema(ap, &child(p, "additionalProperties"), &sub, false, errs);
            }
        }
    }

    if let Some(props) = props {
        for (k, v) in props {
            let mut sub = ctx.clone();
            if (is_root || flag(s, EMBEDDED)) && META_FIELDS.contains(&k.as_str()) {
                sub.inside_resource_meta = true;
                if is_root {
                    sub = sub.forbid_defaults(&format!("in top-level {k}"));
                }
            }
            api_schema(v, &key(&child(p, "properties"), k), &sub, false, errs);
        }
    }

    if let Some(n) = get(s, "not") {
        api_schema(n, &child(p, "not"), ctx, false, errs);
    }
    for j in ["allOf", "oneOf", "anyOf"] {
        for (i, x) in list(s, j).iter().enumerate() {
            api_schema(x, &index(&child(p, j), i), ctx, false, errs);
        }
    }
    if let Some(defs) = s.get("definitions").and_then(Value::as_object) {
        for (k, x) in defs {
            api_schema(x, &key(&child(p, "definitions"), k), ctx, false, errs);
        }
    }
    match s.get("items") {
        Some(it @ Value::Object(_)) => api_schema(it, &child(p, "items"), ctx, false, errs),
        Some(Value::Array(a)) => {
            for (i, x) in a.iter().enumerate() {
                api_schema(x, &index(&child(p, "items"), i), ctx, false, errs);
            }
        }
        _ => {}
    }
    if let Some(deps) = s.get("dependencies").and_then(Value::as_object) {
        for (k, x) in deps {
            if x.is_object() {
                api_schema(x, &key(&child(p, "dependencies"), k), ctx, false, errs);
            }
        }
    }

    if s.get(PRESERVE).and_then(Value::as_bool) == Some(false) {
        errs.push(FieldError::invalid(
            child(p, PRESERVE),
            Value::Bool(false),
            "must be true or undefined",
        ));
    }

    list_and_map_types(s, p, errs);
}

fn list_and_map_types(s: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let ty = type_of(s);
    let map_type = get(s, MAP_TYPE);
    if map_type.is_some() && ty != "object" {
        let msg = "must be object if x-kubernetes-map-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(child(p, "type"), msg));
        } else {
            errs.push(FieldError::invalid(
                child(p, "type"),
                Value::String(ty.into()),
                msg,
            ));
        }
    }
    if let Some(mt) = map_type {
        let v = mt.as_str().unwrap_or("");
        if v != "atomic" && v != "granular" {
            errs.push(gofmt::not_supported(
                child(p, MAP_TYPE),
                mt,
                &["atomic".to_string(), "granular".to_string()],
            ));
        }
    }

    let list_type = get(s, LIST_TYPE);
    let lt = list_type.and_then(Value::as_str).unwrap_or("");
    if list_type.is_some() && ty != "array" {
        let msg = "must be array if x-kubernetes-list-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(child(p, "type"), msg));
        } else {
            errs.push(FieldError::invalid(
                child(p, "type"),
                Value::String(ty.into()),
                msg,
            ));
        }
    } else if lt == "set" {
        if let Some(is) = items(s) {
            let items_p = child(p, "items");
            let msg = "must be atomic as item of a list with x-kubernetes-list-type=set";
            match type_of(is) {
                "array" => {
                    if let Some(ilt) = get(is, LIST_TYPE) {
                        if ilt.as_str() != Some("atomic") {
                            errs.push(gofmt::invalid(child(&items_p, LIST_TYPE), ilt, msg));
                        }
                    }
                }
                "object" if get(is, MAP_TYPE).and_then(Value::as_str) != Some("atomic") => {
                    // upstream reports the items' list type here
                    let v = get(is, LIST_TYPE).cloned().unwrap_or(Value::Null);
                    errs.push(gofmt::invalid(child(&items_p, MAP_TYPE), &v, msg));
                }
                _ => {}
            }
        }
    }
    if let Some(v) = list_type {
        if !matches!(lt, "atomic" | "set" | "map") {
            errs.push(gofmt::not_supported(
                child(p, LIST_TYPE),
                v,
                &["atomic".to_string(), "set".to_string(), "map".to_string()],
            ));
        }
    }

    let keys = str_list(s, LIST_MAP_KEYS);
    let keys_value = || Value::Array(keys.iter().map(|k| Value::String((*k).into())).collect());
    if !keys.is_empty() {
        let msg = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(child(p, LIST_TYPE), msg)),
            Some(v) if lt != "map" => errs.push(gofmt::invalid(child(p, LIST_TYPE), v, msg)),
            _ => {}
        }
    }
    if lt == "map" {
        if keys.is_empty() {
            errs.push(FieldError::required(
                child(p, LIST_MAP_KEYS),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match s.get("items") {
            None | Some(Value::Null) => errs.push(FieldError::required(
                child(p, "items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(it @ Value::Array(_)) => errs.push(gofmt::invalid(
                child(p, "items"),
                it,
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(is) => {
                let ity = type_of(is);
                if ity != "object" {
                    errs.push(FieldError::invalid(
                        child(&child(p, "items"), "type"),
                        Value::String(ity.into()),
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                } else {
                    let mut seen: Vec<&str> = Vec::new();
                    for k in &keys {
                        match property(is, k) {
                            Some(ks) => {
                                let kt = type_of(ks);
                                if kt == "array" || kt == "object" {
                                    errs.push(FieldError::invalid(
                                        child(&key(&child(&child(p, "items"), "properties"), k), "type"),
                                        Value::String(ity.into()),
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                    ));
                                }
                            }
                            None => errs.push(FieldError::invalid(
                                child(p, LIST_MAP_KEYS),
                                keys_value(),
                                "entries must all be names of item properties",
                            )),
                        }
                        if seen.contains(k) {
                            errs.push(FieldError::invalid(
                                child(p, LIST_MAP_KEYS),
                                keys_value(),
                                "must not contain duplicate entries",
                            ));
                        }
                        seen.push(k);
                    }
                }
            }
        }
    }

    // validateMapListKeysMapSet
    if let (Some(is), "set" | "map") = (items(s), lt) {
        if flag(is, "nullable") {
            errs.push(FieldError::forbidden(
                child(&child(p, "items"), "nullable"),
                format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let required = str_list(is, "required");
            for k in &keys {
                let Some(ks) = property(is, k) else {
                    continue;
                };
                let kp = key(&child(&child(p, "items"), "properties"), k);
                if !required.contains(k) && get(ks, "default").is_none() {
                    errs.push(FieldError::required(
                        child(&kp, "default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if flag(ks, "nullable") {
                    errs.push(FieldError::forbidden(
                        child(&kp, "nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
}
