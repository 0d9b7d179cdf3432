//! Validation of ResourceSlices (upstream 1.34's validateResourceSliceSpec
//! for what survives the 1.34 feature gates: partitionable devices, device
//! taints, binding conditions and consumable capacity are off and their
//! fields are dropped before validation).

use serde_json::{json, Value};

use super::common::{
    dns_label, driver_name, key_path, node_selector, node_selector_terms_go, pool_name,
    qualified_name, validate_set,
};
use super::gojson;
use crate::registry::helpers::{invalid_raw, s};
use crate::registry::validation::{self, FieldError};

const MAX_DEVICES: usize = 128;
const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
const ATTRIBUTE_VALUE_MAX: usize = 64;
/// DeviceMaxDomainLength + "/" + DeviceMaxIDLength.
const ATTRIBUTE_KEY_MAX: usize = 63 + 1 + 32;
const IMMUTABLE: &str = "field is immutable";

/// semver.org 2.0.0, as upstream's semverRe.
fn is_semver(v: &str) -> bool {
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    if let Some(b) = build {
        let ok = b
            .split('.')
            .all(|id| !id.is_empty() && id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'));
        if !ok {
            return false;
        }
    }
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |id: &str| {
        !id.is_empty()
            && id.bytes().all(|c| c.is_ascii_digit())
            && (id == "0" || !id.starts_with('0'))
    };
    let nums: Vec<&str> = core.split('.').collect();
    if nums.len() != 3 || !nums.iter().all(|n| numeric(n)) {
        return false;
    }
    match pre {
        None => true,
        Some(p) => p.split('.').all(|id| {
            if id.is_empty() || !id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
                return false;
            }
            // A purely numeric identifier must not have leading zeros.
            !id.bytes().all(|c| c.is_ascii_digit()) || numeric(id)
        }),
    }
}

/// The internal DeviceAttribute, as quoted when it holds several values.
fn attribute_go(a: &Value) -> String {
    gojson::structure(&[
        ("IntValue", gojson::opt_scalar(&a["int"])),
        ("BoolValue", gojson::opt_scalar(&a["bool"])),
        ("StringValue", gojson::opt_str(&a["string"])),
        ("VersionValue", gojson::opt_str(&a["version"])),
    ])
}

fn attribute(a: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    if !a["bool"].is_null() {
        n += 1;
    }
    if !a["int"].is_null() {
        n += 1;
    }
    if let Some(v) = a["string"].as_str() {
        n += 1;
        if v.len() > ATTRIBUTE_VALUE_MAX {
            errs.push(FieldError::too_long(
                format!("{path}.string"),
                ATTRIBUTE_VALUE_MAX,
            ));
        }
    }
    if let Some(v) = a["version"].as_str() {
        n += 1;
        let p = format!("{path}.version");
        if !is_semver(v) {
            errs.push(FieldError::invalid(
                p.clone(),
                json!(v),
                "must be a string compatible with semver.org spec 2.0.0",
            ));
        }
        if v.len() > ATTRIBUTE_VALUE_MAX {
            errs.push(FieldError::too_long(p, ATTRIBUTE_VALUE_MAX));
        }
    }
    match n {
        0 => errs.push(FieldError::required(
            path,
            "exactly one value must be specified",
        )),
        1 => {}
        _ => errs.push(invalid_raw(
            path,
            &attribute_go(a),
            "exactly one value must be specified",
        )),
    }
    errs
}

fn sorted_keys(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

fn device(d: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = dns_label(s(d, "name"), &format!("{path}.name"));
    let (attrs, caps) = (&d["attributes"], &d["capacity"]);
    let total = sorted_keys(attrs).len() + sorted_keys(caps).len();
    if total > MAX_ATTRIBUTES_AND_CAPACITIES {
        errs.push(FieldError::invalid(
            path,
            json!(total),
            format!("the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"),
        ));
    }
    let attrs_path = format!("{path}.attributes");
    for k in sorted_keys(attrs) {
        let p = key_path(&attrs_path, &k, ATTRIBUTE_KEY_MAX);
        errs.extend(qualified_name(&k, &p));
        errs.extend(attribute(&attrs[k.as_str()], &p));
    }
    let caps_path = format!("{path}.capacity");
    for k in sorted_keys(caps) {
        errs.extend(qualified_name(
            &k,
            &key_path(&caps_path, &k, ATTRIBUTE_KEY_MAX),
        ));
    }
    errs
}

/// upstream's validateResourceSliceSpec; `old` on updates.
pub fn slice_spec(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = driver_name(s(spec, "driver"), "spec.driver");
    let pool = &spec["pool"];
    errs.extend(pool_name(s(pool, "name"), "spec.pool.name"));
    let count = pool["resourceSliceCount"].as_i64().unwrap_or(0);
    if count <= 0 {
        errs.push(FieldError::invalid(
            "spec.pool.resourceSliceCount",
            json!(count),
            "must be greater than zero",
        ));
    }
    let generation = pool["generation"].as_i64().unwrap_or(0);
    if generation < 0 {
        errs.push(FieldError::invalid(
            "spec.pool.generation",
            json!(generation),
            "must be greater than or equal to zero",
        ));
    }
    if let Some(old) = old {
        if s(pool, "name") != s(&old["pool"], "name") {
            errs.push(FieldError::invalid(
                "spec.pool.name",
                json!(s(pool, "name")),
                IMMUTABLE,
            ));
        }
        if s(spec, "driver") != s(old, "driver") {
            errs.push(FieldError::invalid(
                "spec.driver",
                json!(s(spec, "driver")),
                IMMUTABLE,
            ));
        }
        if spec["nodeName"].as_str() != old["nodeName"].as_str() {
            let v = spec["nodeName"].as_str().map_or(Value::Null, |n| json!(n));
            errs.push(FieldError::invalid("spec.nodeName", v, IMMUTABLE));
        }
    }
    let mut set: Vec<&str> = Vec::new();
    if let Some(n) = spec["nodeName"].as_str() {
        if n.is_empty() {
            errs.push(FieldError::invalid(
                "spec.nodeName",
                json!(n),
                "must be either unset or set to a non-empty string",
            ));
        } else {
            set.push("`nodeName`");
            for m in validation::dns1123_subdomain(n) {
                errs.push(FieldError::invalid("spec.nodeName", json!(n), m));
            }
        }
    }
    let sel = &spec["nodeSelector"];
    if sel.is_object() {
        set.push("`nodeSelector`");
        errs.extend(node_selector(sel, "spec.nodeSelector"));
        let terms = &sel["nodeSelectorTerms"];
        if terms.as_array().map_or(0, Vec::len) != 1 {
            errs.push(invalid_raw(
                "spec.nodeSelector.nodeSelectorTerms",
                &node_selector_terms_go(terms),
                "must have exactly one node selector term",
            ));
        }
    }
    for key in ["allNodes", "perDeviceNodeSelection"] {
        match spec[key].as_bool() {
            Some(true) => set.push(if key == "allNodes" {
                "`allNodes`"
            } else {
                "`perDeviceNodeSelection`"
            }),
            Some(false) => errs.push(FieldError::invalid(
                format!("spec.{key}"),
                json!(false),
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set.len() {
        0 => errs.push(FieldError::required("spec", ONE_OF)),
        1 => {}
        _ => errs.push(FieldError::invalid(
            "spec",
            json!(format!("{{{}}}", set.join(", "))),
            format!("{ONE_OF}, but multiple fields are set"),
        )),
    }
    errs.extend(validate_set(
        &spec["devices"],
        Some(MAX_DEVICES),
        "spec.devices",
        Some("name"),
        device,
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver() {
        for ok in ["1.2.3", "0.0.1-alpha.1", "1.0.0+build.5", "1.0.0-rc.1+b"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.2", "01.2.3", "1.2.3-01", "1.2.3-", "v1.2.3", "1.2.3+"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}
