//! Validators resource.k8s.io's kinds share, as upstream's
//! pkg/apis/resource/validation helpers of 1.34: names (drivers, pools,
//! devices, qualified attribute names), lists with a size limit and unique
//! keys, device configuration, CEL selectors, node selectors.

use serde_json::{json, Value};

use super::gojson;
use crate::registry::helpers::{items, label_name, s};
use crate::registry::validation::{self, FieldError};

/// DeviceRequestsMaxSize, DeviceConstraintsMaxSize, DeviceConfigMaxSize,
/// DeviceSelectorsMaxSize.
pub const MAX_REQUESTS: usize = 32;
pub const MAX_CONSTRAINTS: usize = 32;
pub const MAX_CONFIGS: usize = 32;
pub const MAX_SELECTORS: usize = 32;
pub const MAX_FIRST_AVAILABLE: usize = 8;
const CEL_MAX_LENGTH: usize = 10 * 1024;
const OPAQUE_PARAMETERS_MAX_LENGTH: usize = 10 * 1024;
const POOL_NAME_MAX_LENGTH: usize = 253;
const DEVICE_MAX_ID_LENGTH: usize = 32;
const C_IDENTIFIER_MSG: &str = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')";

/// corevalidation.ValidateDNS1123Label.
pub fn dns_label(v: &str, path: &str) -> Vec<FieldError> {
    validation::dns1123_label(v)
        .into_iter()
        .map(|m| FieldError::invalid(path, json!(v), m))
        .collect()
}

/// corevalidation.ValidateDNS1123Subdomain.
pub fn dns_subdomain(v: &str, path: &str) -> Vec<FieldError> {
    validation::dns1123_subdomain(v)
        .into_iter()
        .map(|m| FieldError::invalid(path, json!(v), m))
        .collect()
}

/// corevalidation.ValidateCSIDriverName, which DRA drivers share.
pub fn driver_name(v: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if v.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if v.len() > 63 {
        errs.push(FieldError::too_long(path, 63));
    }
    for m in validation::dns1123_subdomain(&v.to_lowercase()) {
        errs.push(FieldError::invalid(path, json!(v), m));
    }
    errs
}

/// A pool name: DNS subdomains separated by slashes, at most 253 bytes.
pub fn pool_name(v: &str, path: &str) -> Vec<FieldError> {
    if v.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errs = Vec::new();
    if v.len() > POOL_NAME_MAX_LENGTH {
        errs.push(FieldError::too_long(path, POOL_NAME_MAX_LENGTH));
    }
    for part in v.split('/') {
        errs.extend(dns_subdomain(part, path));
    }
    errs
}

/// A device class reference: required, a DNS subdomain.
pub fn device_class(v: &str, path: &str) -> Vec<FieldError> {
    if v.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    dns_subdomain(v, path)
}

fn c_identifier(id: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if id.len() > DEVICE_MAX_ID_LENGTH {
        errs.push(FieldError::too_long(path, DEVICE_MAX_ID_LENGTH));
    }
    let b = id.as_bytes();
    let ok = !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if !ok {
        errs.push(FieldError::type_invalid(path, json!(id), C_IDENTIFIER_MSG));
    }
    errs
}

/// A QualifiedName: a C identifier, optionally behind a driver-name domain.
pub fn qualified_name(name: &str, path: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "name required")];
    }
    let parts: Vec<&str> = name.split('/').collect();
    let mut errs = Vec::new();
    match parts.as_slice() {
        [id] => errs.extend(c_identifier(id, path)),
        [domain, id] => {
            if domain.is_empty() {
                errs.push(FieldError::required(path, "the domain must not be empty"));
            } else {
                errs.extend(driver_name(domain, path));
            }
            if id.is_empty() {
                errs.push(FieldError::required(path, "the name must not be empty"));
            } else {
                errs.extend(c_identifier(id, path));
            }
        }
        // Upstream does not look at names with more than one slash.
        _ => {}
    }
    errs
}

/// A FullyQualifiedName: a qualified name that has its domain.
pub fn fully_qualified_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = qualified_name(name, path);
    if !name.is_empty() && !name.contains('/') {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must include a domain",
        ));
    }
    errs
}

/// A map key as `field.Path.Key` prints it, long keys shortened in the middle.
pub fn key_path(path: &str, key: &str, max: usize) -> String {
    let max = max.max(16);
    if key.len() <= max {
        return format!("{path}[{key}]");
    }
    let remaining = max - 3;
    let (head, cut) = (remaining.div_ceil(2), key.len() - remaining / 2);
    if !key.is_char_boundary(head) || !key.is_char_boundary(cut) {
        return format!("{path}[{key}]");
    }
    format!("{path}[{}...{}]", &key[..head], &key[cut..])
}

/// upstream's validateSlice: every item, then the size limit.
pub fn validate_slice(
    list: &Value,
    max: Option<usize>,
    path: &str,
    mut item: impl FnMut(&Value, &str) -> Vec<FieldError>,
) -> Vec<FieldError> {
    let all = items(list);
    let mut errs = Vec::new();
    for (i, v) in all.iter().enumerate() {
        errs.extend(item(v, &format!("{path}[{i}]")));
    }
    if let Some(max) = max {
        if all.len() > max {
            errs.push(FieldError::too_many(path, all.len(), max));
        }
    }
    errs
}

/// upstream's validateSet: validateSlice plus a Duplicate for each repeated
/// key, at the item (or at its `key_field` when the key is one of its fields).
pub fn validate_set(
    list: &Value,
    max: Option<usize>,
    path: &str,
    key_field: Option<&str>,
    item: impl FnMut(&Value, &str) -> Vec<FieldError>,
) -> Vec<FieldError> {
    let mut errs = validate_slice(list, max, path, item);
    let mut seen: Vec<Value> = Vec::new();
    for (i, v) in items(list).iter().enumerate() {
        let key = match key_field {
            Some(f) => json!(v[f].as_str().unwrap_or("")),
            None => v.clone(),
        };
        if seen.contains(&key) {
            let at = match key_field {
                Some(f) => format!("{path}[{i}].{f}"),
                None => format!("{path}[{i}]"),
            };
            errs.push(FieldError::duplicate(at, key));
        } else {
            seen.push(key);
        }
    }
    errs
}

/// The request names of a claim: request → its subrequest names (None
/// for a request without `firstAvailable`).
pub fn request_names(devices: &Value) -> Vec<(String, Option<Vec<String>>)> {
    items(&devices["requests"])
        .iter()
        .map(|r| {
            let subs = items(&r["firstAvailable"]);
            let names = (!subs.is_empty())
                .then(|| subs.iter().map(|sr| s(sr, "name").to_string()).collect());
            (s(r, "name").to_string(), names)
        })
        .collect()
}

fn names_have(names: &[(String, Option<Vec<String>>)], reference: &str) -> bool {
    let segs: Vec<&str> = reference.split('/').collect();
    let Some((_, subs)) = names.iter().find(|(n, _)| n == segs[0]) else {
        return false;
    };
    match segs.len() {
        1 => true,
        2 => subs
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == segs[1])),
        _ => false,
    }
}

const REQUEST_REF_MSG: &str =
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// upstream's validateRequestNameRef.
pub fn request_name_ref(
    reference: &str,
    path: &str,
    names: &[(String, Option<Vec<String>>)],
) -> Vec<FieldError> {
    let segs: Vec<&str> = reference.split('/').collect();
    if segs.len() > 2 {
        return vec![FieldError::invalid(path, json!(reference), REQUEST_REF_MSG)];
    }
    let mut errs = Vec::new();
    for seg in &segs {
        errs.extend(dns_label(seg, path));
    }
    if !names_have(names, reference) {
        errs.push(FieldError::invalid(path, json!(reference), REQUEST_REF_MSG));
    }
    errs
}

/// upstream's validateRawExtension. `raw` is the decoded value; its size is
/// that of its compact JSON (what a client usually sends).
pub fn raw_extension(raw: Option<&Value>, path: &str, stored: bool, max: usize) -> Vec<FieldError> {
    let Some(v) = raw else {
        return vec![FieldError::required(path, "")];
    };
    if !stored && serde_json::to_string(v).map(|t| t.len()).unwrap_or(0) > max {
        return vec![FieldError::too_long(path, max)];
    }
    match v {
        Value::Null => vec![FieldError::required(path, "")],
        Value::Object(_) => Vec::new(),
        _ => vec![FieldError::invalid(
            path,
            json!("<value omitted>"),
            "parameters must be a valid JSON object",
        )],
    }
}

/// upstream's validateDeviceConfiguration at `path` (the item that inlines it).
pub fn device_configuration(config: &Value, path: &str, stored: bool) -> Vec<FieldError> {
    let opaque = &config["opaque"];
    if !opaque.is_object() {
        return vec![FieldError::required(format!("{path}.opaque"), "")];
    }
    let mut errs = driver_name(s(opaque, "driver"), &format!("{path}.opaque.driver"));
    errs.extend(raw_extension(
        opaque.get("parameters"),
        &format!("{path}.opaque.parameters"),
        stored,
        OPAQUE_PARAMETERS_MAX_LENGTH,
    ));
    errs
}

/// A CEL selector expression's compile error, as far as kapi's CEL parser
/// finds one (syntax only: no type checking against the DRA environment).
fn cel_compile_error(expression: &str) -> Option<String> {
    let device = json!({"driver": "", "attributes": {}, "capacity": {}});
    let mut act = crate::cel::admission::Activation::new(&[("device", Some(&device))]);
    match act.eval(expression) {
        Err(e) => e
            .strip_prefix("compilation error: ")
            .map(|why| format!("compilation failed: {why}")),
        Ok(_) => None,
    }
}

/// upstream's validateSelector (a `cel` selector is required).
pub fn selector(sel: &Value, path: &str) -> Vec<FieldError> {
    let cel = &sel["cel"];
    if !cel.is_object() {
        return vec![FieldError::required(format!("{path}.cel"), "")];
    }
    let expr = s(cel, "expression");
    let at = format!("{path}.cel.expression");
    if expr.len() > CEL_MAX_LENGTH {
        return vec![FieldError::too_long(at, CEL_MAX_LENGTH)];
    }
    match cel_compile_error(expr) {
        Some(why) => vec![FieldError::invalid(at, json!(expr), why)],
        None => Vec::new(),
    }
}

pub fn selectors(list: &Value, path: &str) -> Vec<FieldError> {
    validate_slice(list, Some(MAX_SELECTORS), path, selector)
}

/// corevalidation.ValidateNodeSelector (label values checked).
pub fn node_selector(sel: &Value, path: &str) -> Vec<FieldError> {
    let terms_path = format!("{path}.nodeSelectorTerms");
    let terms = items(&sel["nodeSelectorTerms"]);
    if terms.is_empty() {
        return vec![FieldError::required(
            terms_path,
            "must have at least one node selector term",
        )];
    }
    let mut errs = Vec::new();
    for (i, t) in terms.iter().enumerate() {
        let tp = format!("{terms_path}[{i}]");
        for (j, r) in items(&t["matchExpressions"]).iter().enumerate() {
            errs.extend(node_selector_requirement(
                r,
                &format!("{tp}.matchExpressions[{j}]"),
            ));
        }
        for (j, r) in items(&t["matchFields"]).iter().enumerate() {
            errs.extend(node_field_requirement(r, &format!("{tp}.matchFields[{j}]")));
        }
    }
    errs
}

fn node_selector_requirement(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = items(&r["values"]);
    let op = s(r, "operator");
    match op {
        "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
            format!("{path}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            format!("{path}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required(
            format!("{path}.values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        _ => errs.push(FieldError::invalid(
            format!("{path}.operator"),
            json!(op),
            "not a valid selector operator",
        )),
    }
    label_name(s(r, "key"), &format!("{path}.key"), &mut errs);
    for (i, v) in values.iter().enumerate() {
        let v = v.as_str().unwrap_or("");
        for m in validation::label_value(v) {
            errs.push(FieldError::invalid(
                format!("{path}.values[{i}]"),
                json!(v),
                m,
            ));
        }
    }
    errs
}

fn node_field_requirement(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = items(&r["values"]);
    let op = s(r, "operator");
    match op {
        "In" | "NotIn" if values.len() != 1 => errs.push(FieldError::required(
            format!("{path}.values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        )),
        "In" | "NotIn" => {}
        _ => errs.push(FieldError::invalid(
            format!("{path}.operator"),
            json!(op),
            "not a valid selector operator",
        )),
    }
    let key = s(r, "key");
    if key != "metadata.name" {
        errs.push(FieldError::invalid(
            format!("{path}.key"),
            json!(key),
            "not a valid field selector key",
        ));
    } else {
        for (i, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or("");
            errs.extend(dns_subdomain(v, &format!("{path}.values[{i}]")));
        }
    }
    errs
}

/// The node selector terms as upstream quotes them in a field error.
pub fn node_selector_terms_go(terms: &Value) -> String {
    gojson::list(terms, gojson::node_selector_term)
}
