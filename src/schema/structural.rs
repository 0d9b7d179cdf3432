//! The checks a CRD version's `openAPIV3Schema` goes through on create and
//! update (v1, new CRD): upstream's ValidateStructural (invariants and
//! completeness, errors sorted), ValidateDefaults, and the per-node
//! ValidateCustomResourceDefinitionOpenAPISchema checks.

use serde_json::{Map, Value};

use super::gofmt::{self, error_string};
use super::{
    additional, child, flag, get, index, items, key, list, objectmeta, properties, property,
    pruning, str_list, str_of, type_of, validate, Additional, EMBEDDED, INT_OR_STRING,
    LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, META_FIELDS, PRESERVE, VALIDATIONS,
};
use crate::api::validation::FieldError;

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

// ---------------------------------------------------------------------------
// structural invariants

#[derive(Clone, Copy, PartialEq)]
enum Level {
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

fn invariants(s: &Value, lvl: Level, p: &str, errs: &mut Vec<FieldError>) {
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
        if let Err(e) = super::formats::regex(pattern) {
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

// ---------------------------------------------------------------------------
// completeness: whatever a junctor specifies must be in the structure too

fn completeness(s: &Value, p: &str, errs: &mut Vec<FieldError>) {
    value_completeness(s, Some(s), p, p, errs);
}

fn value_completeness(
    v: &Value,
    s: Option<&Value>,
    sp: &str,
    vp: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(
            sp,
            format!("because it is defined in {vp}"),
        ));
        return;
    };
    nested_completeness(get(v, "not"), Some(s), sp, &child(vp, "not"), errs);
    for j in ["allOf", "anyOf", "oneOf"] {
        for (i, x) in list(v, j).iter().enumerate() {
            nested_completeness(Some(x), Some(s), sp, &index(&child(vp, j), i), errs);
        }
    }
}

fn nested_completeness(
    v: Option<&Value>,
    s: Option<&Value>,
    sp: &str,
    vp: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(v) = v else {
        return;
    };
    let Some(s) = s else {
        errs.push(FieldError::required(
            sp,
            format!("because it is defined in {vp}"),
        ));
        return;
    };
    value_completeness(v, Some(s), sp, vp, errs);
    nested_completeness(
        items(v),
        items(s),
        &child(sp, "items"),
        &child(vp, "items"),
        errs,
    );
    if let Some(props) = properties(v) {
        for (k, vf) in props {
            let sp_k = key(&child(sp, "properties"), k);
            let vp_k = key(&child(vp, "properties"), k);
            match property(s, k) {
                Some(sf) => nested_completeness(Some(vf), Some(sf), &sp_k, &vp_k, errs),
                None => errs.push(FieldError::required(
                    sp_k,
                    format!("because it is defined in {vp_k}"),
                )),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// defaults: they must validate and be pruned

fn validate_defaults(root: &Value, p: &str, errs: &mut Vec<FieldError>) {
    walk_defaults(root, p, true, false, &[], errs);
}

/// A step from an embedded resource down to a schema node.
#[derive(Clone)]
enum Step {
    Field(String),
    Item,
}

fn walk_defaults(
    s: &Value,
    p: &str,
    is_root: bool,
    inside_meta: bool,
    steps: &[Step],
    errs: &mut Vec<FieldError>,
) {
    let embedded = is_root || flag(s, EMBEDDED);
    let (inside_meta, steps): (bool, Vec<Step>) = if embedded {
        (false, Vec::new())
    } else {
        (inside_meta, steps.to_vec())
    };
    if let Some(d) = get(s, "default") {
        let dp = child(p, "default");
        if inside_meta {
            // The default sits in the TypeMeta/ObjectMeta of an embedded
            // resource: it must make that resource's metadata valid.
            let obj = surround(d, &steps);
            let mut meta_errs = Vec::new();
            if let Some(e) = objectmeta::coerce_error(&obj, &Value::Null, "", true) {
                meta_errs.push(e);
            } else {
                objectmeta::validate("", &obj, &Value::Null, true, &mut meta_errs);
            }
            if !meta_errs.is_empty() {
                errs.push(gofmt::invalid(
                    &dp,
                    d,
                    format!("must result in valid metadata: {}", aggregate(&meta_errs)),
                ));
            } else {
                errs.extend(validate::openapi_errors(d, s, &dp));
            }
        } else {
            let mut pruned = d.clone();
            let mut unknown = Vec::new();
            pruning::prune_value(&mut pruned, Some(s), embedded, "", &mut unknown);
            if pruned != *d {
                errs.push(gofmt::invalid(&dp, d, "must not have unknown fields"));
            }
            if let Some(e) = objectmeta::coerce_error(d, s, &dp, embedded) {
                errs.push(e);
            } else {
                let mut meta_errs = Vec::new();
                objectmeta::validate(&dp, d, s, embedded, &mut meta_errs);
                if !meta_errs.is_empty() {
                    errs.extend(meta_errs);
                } else {
                    errs.extend(validate::openapi_errors(d, s, &dp));
                }
            }
        }
    }
    // additionalProperties are not followed: defaults there are not checked.
    if let Some(it) = items(s) {
        let mut st = steps.clone();
        st.push(Step::Item);
        walk_defaults(it, &child(p, "items"), false, inside_meta, &st, errs);
    }
    if let Some(props) = properties(s) {
        for (k, sub) in props {
            let sub_inside = inside_meta || (embedded && META_FIELDS.contains(&k.as_str()));
            let mut st = steps.clone();
            st.push(Step::Field(k.clone()));
            walk_defaults(
                sub,
                &key(&child(p, "properties"), k),
                false,
                sub_inside,
                &st,
                errs,
            );
        }
    }
}

/// The embedded resource a metadata default would produce (upstream's
/// SurroundingObjectFunc with TypeMeta validation/v1 Validation).
fn surround(d: &Value, steps: &[Step]) -> Value {
    let mut v = d.clone();
    for step in steps.iter().rev() {
        v = match step {
            Step::Item => Value::Array(vec![v]),
            Step::Field(k) => {
                let mut m = Map::new();
                m.insert(k.clone(), v);
                Value::Object(m)
            }
        };
    }
    let mut obj = match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    obj.entry("apiVersion")
        .or_insert_with(|| Value::String("validation/v1".into()));
    obj.entry("kind")
        .or_insert_with(|| Value::String("Validation".into()));
    Value::Object(obj)
}

/// utilerrors.NewAggregate(...).Error().
fn aggregate(errs: &[FieldError]) -> String {
    let mut msgs: Vec<String> = Vec::new();
    for e in errs {
        let field = if e.field.is_empty() {
            "<nil>"
        } else {
            e.field.as_str()
        };
        let m = format!("{field}: {}", e.message());
        if !msgs.contains(&m) {
            msgs.push(m);
        }
    }
    if msgs.len() == 1 {
        msgs.remove(0)
    } else {
        format!("[{}]", msgs.join(", "))
    }
}

// ---------------------------------------------------------------------------
// per-node checks of the CRD API validation

#[derive(Clone)]
struct Ctx {
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

fn api_schema(s: &Value, p: &str, ctx: &Ctx, is_root: bool, errs: &mut Vec<FieldError>) {
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
