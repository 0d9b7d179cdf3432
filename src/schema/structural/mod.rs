//! The checks a CRD version's `openAPIV3Schema` goes through on create and
//! update (v1, new CRD): upstream's ValidateStructural (invariants and
//! completeness, errors sorted), ValidateDefaults, and the per-node
//! ValidateCustomResourceDefinitionOpenAPISchema checks.
//!
//! Here: the entry points and NewStructural's refusals. The checks, by
//! upstream's names: the structural invariants (`invariants`),
//! completeness (`completeness`), ValidateDefaults (`defaults`) and the
//! per-node OpenAPI schema checks (`openapi_schema`).

use serde_json::Value;

use super::gofmt::{self, error_string};
use super::{
    additional, child, flag, get, items, list, properties, type_of, Additional, EMBEDDED,
    INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, PRESERVE, VALIDATIONS,
};
use crate::api::validation::FieldError;

mod completeness;
mod defaults;
mod invariants;
mod openapi_schema;

use completeness::completeness;
use defaults::validate_defaults;
use invariants::{invariants, Level};
use openapi_schema::{api_schema, Ctx};

/// Validates a CRD version's `openAPIV3Schema` as upstream does for a v1
/// CRD, `path` being where the schema sits
/// (`spec.versions[0].schema.openAPIV3Schema`).
///
/// The errors come in upstream's order: `nullable` at the root, then the
/// structural-schema errors (sorted like upstream sorts them) or, when the
/// schema is structural, the errors of its defaults, then the per-node
/// schema errors. `x-kubernetes-validations` rules are only checked for
/// placement (see the CEL module for the rules themselves).
pub fn validate_structural(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if flag(schema, "nullable") {
        errs.push(FieldError::forbidden(
            child(path, "nullable"),
            "nullable cannot be true at the root",
        ));
    }

    // NewStructural refuses some schemas outright; their problems are
    // reported by the per-node checks, or at the end if nothing else is.
    let init_err = new_structural_error(schema);
    if init_err.is_none() {
        let mut structural = Vec::new();
        invariants(schema, Level::Root, path, &mut structural);
        completeness(schema, path, &mut structural);
        structural.sort_by_key(error_string);
        if structural.is_empty() {
            validate_defaults(schema, path, &mut structural);
        }
        errs.extend(structural);
    }

    api_schema(schema, path, &Ctx::default(), true, &mut errs);

    if errs.is_empty() {
        if let Some(e) = init_err {
            errs.push(FieldError::invalid(path, Value::String(String::new()), e));
        }
    }
    errs
}

/// The root checks upstream adds when the status subresource is enabled
/// (`path` as for [`validate_structural`]): only a few keywords may be set
/// at the root, and the type may only be object, so that validation of
/// `.status` is not lost when status is validated on its own.
pub fn validate_status_root(schema: &Value, path: &str) -> Vec<FieldError> {
    // JSONSchemaProps' fields in declaration order, with their JSON names.
    const FIELDS: [(&str, &str); 44] = [
        ("ID", "id"),
        ("Schema", "$schema"),
        ("Ref", "$ref"),
        ("Description", "description"),
        ("Type", "type"),
        ("Format", "format"),
        ("Title", "title"),
        ("Default", "default"),
        ("Maximum", "maximum"),
        ("ExclusiveMaximum", "exclusiveMaximum"),
        ("Minimum", "minimum"),
        ("ExclusiveMinimum", "exclusiveMinimum"),
        ("MaxLength", "maxLength"),
        ("MinLength", "minLength"),
        ("Pattern", "pattern"),
        ("MaxItems", "maxItems"),
        ("MinItems", "minItems"),
        ("UniqueItems", "uniqueItems"),
        ("MultipleOf", "multipleOf"),
        ("Enum", "enum"),
        ("MaxProperties", "maxProperties"),
        ("MinProperties", "minProperties"),
        ("Required", "required"),
        ("Items", "items"),
        ("AllOf", "allOf"),
        ("OneOf", "oneOf"),
        ("AnyOf", "anyOf"),
        ("Not", "not"),
        ("Properties", "properties"),
        ("AdditionalProperties", "additionalProperties"),
        ("PatternProperties", "patternProperties"),
        ("Dependencies", "dependencies"),
        ("AdditionalItems", "additionalItems"),
        ("Definitions", "definitions"),
        ("ExternalDocs", "externalDocs"),
        ("Example", "example"),
        ("Nullable", "nullable"),
        ("XPreserveUnknownFields", PRESERVE),
        ("XEmbeddedResource", EMBEDDED),
        ("XIntOrString", INT_OR_STRING),
        ("XListMapKeys", LIST_MAP_KEYS),
        ("XListType", LIST_TYPE),
        ("XMapType", MAP_TYPE),
        ("XValidations", VALIDATIONS),
    ];
    const ALLOWED: [&str; 22] = [
        "Description",
        "Type",
        "Format",
        "Title",
        "Maximum",
        "ExclusiveMaximum",
        "Minimum",
        "ExclusiveMinimum",
        "MaxLength",
        "MinLength",
        "Pattern",
        "MaxItems",
        "MinItems",
        "UniqueItems",
        "MultipleOf",
        "Required",
        "Items",
        "Properties",
        "ExternalDocs",
        "Example",
        "XPreserveUnknownFields",
        "XValidations",
    ];
    for (name, json) in FIELDS {
        let Some(v) = schema.get(json) else {
            continue;
        };
        if is_zero(v) {
            continue;
        }
        if name == "Type" {
            if type_of(schema) != "object" {
                return vec![FieldError::invalid(
                    child(path, "type"),
                    v.clone(),
                    r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                )];
            }
            continue;
        }
        if !ALLOWED.contains(&name) {
            return vec![gofmt::invalid(
                path,
                schema,
                format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ALLOWED.join(" ")
                ),
            )];
        }
    }
    Vec::new()
}

/// Whether a value is its Go zero value once decoded (unset, false, "",
/// empty list or map).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(_) => false,
    }
}

fn set<'a>(s: &'a Value, k: &str) -> Option<&'a Value> {
    s.get(k).filter(|v| !is_zero(v))
}

/// NewStructural's refusals (checked on every node it converts).
fn new_structural_error(s: &Value) -> Option<String> {
    let checks: [(&str, &str); 7] = [
        ("id", "OpenAPIV3Schema 'id' is not supported"),
        ("$schema", "OpenAPIV3Schema 'schema' is not supported"),
        ("$ref", "OpenAPIV3Schema '$ref' is not supported"),
        (
            "patternProperties",
            "OpenAPIV3Schema 'patternProperties' is not supported",
        ),
        (
            "dependencies",
            "OpenAPIV3Schema 'dependencies' is not supported",
        ),
        (
            "additionalItems",
            "OpenAPIV3Schema 'additionalItems' is not supported",
        ),
        (
            "definitions",
            "OpenAPIV3Schema 'definitions' is not supported",
        ),
    ];
    for (k, msg) in checks {
        let present = match k {
            "additionalItems" => get(s, k).is_some(),
            "$ref" => get(s, k).is_some(),
            _ => set(s, k).is_some(),
        };
        if present {
            return Some(msg.to_string());
        }
    }
    if s.get(PRESERVE).and_then(Value::as_bool) == Some(false) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    if s.get("items").is_some_and(Value::is_array) {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into());
    }
    let mut subs: Vec<&Value> = Vec::new();
    if let Some(it) = items(s) {
        subs.push(it);
    }
    if let Some(p) = properties(s) {
        subs.extend(p.values());
    }
    if let Additional::Schema(ap) = additional(s) {
        subs.push(ap);
    }
    for j in ["allOf", "anyOf", "oneOf"] {
        subs.extend(list(s, j));
    }
    if let Some(n) = get(s, "not") {
        subs.push(n);
    }
    subs.into_iter().find_map(new_structural_error)
}
