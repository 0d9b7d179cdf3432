//! Validation of ResourceClaims, ResourceClaimTemplates and DeviceClasses
//! (upstream 1.34's pkg/apis/resource/validation for the claim spec, the
//! claim status, the template's metadata and the class spec).

use serde_json::{json, Value};

use super::common::{
    device_class, device_configuration, dns_label, driver_name, fully_qualified_name,
    node_selector, pool_name, request_name_ref, request_names, selectors, validate_set,
    validate_slice, MAX_CONFIGS, MAX_CONSTRAINTS, MAX_FIRST_AVAILABLE, MAX_REQUESTS,
};
use super::gojson::{self as g, structure};
use crate::registry::helpers::{invalid_raw, items, s, validate_labels};
use crate::registry::validation::{self, FieldError};

const IMMUTABLE: &str = "field is immutable";
const RESERVED_FOR_MAX: usize = 256;
const ALLOCATION_RESULTS_MAX: usize = 32;
const DEVICE_STATUS_MAX_CONDITIONS: usize = 8;
const DEVICE_STATUS_DATA_MAX: usize = 10 * 1024;

// ---- the claim spec ----

/// upstream's validateDeviceAllocationMode.
fn allocation_mode(r: &Value, path: &str) -> Vec<FieldError> {
    let count = r["count"].as_i64().unwrap_or(0);
    match s(r, "allocationMode") {
        "All" if count != 0 => vec![FieldError::invalid(
            format!("{path}.count"),
            json!(count),
            "must not be specified when allocationMode is 'All'",
        )],
        "ExactCount" if count <= 0 => vec![FieldError::invalid(
            format!("{path}.count"),
            json!(count),
            "must be greater than zero",
        )],
        "All" | "ExactCount" => Vec::new(),
        other => vec![FieldError::not_supported(
            format!("{path}.allocationMode"),
            json!(other),
            &["All", "ExactCount"],
        )],
    }
}

/// The fields an exact request and a subrequest share.
fn request_body(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = device_class(s(r, "deviceClassName"), &format!("{path}.deviceClassName"));
    errs.extend(selectors(&r["selectors"], &format!("{path}.selectors")));
    errs.extend(allocation_mode(r, path));
    errs
}

fn device_request(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = dns_label(s(r, "name"), &format!("{path}.name"));
    let first = !items(&r["firstAvailable"]).is_empty();
    let exactly = r["exactly"].is_object();
    match (exactly, first) {
        (false, false) => errs.push(FieldError::required(
            path,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (true, true) => errs.push(FieldError::invalid(
            path,
            Value::Null,
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (false, true) => errs.extend(validate_set(
            &r["firstAvailable"],
            Some(MAX_FIRST_AVAILABLE),
            &format!("{path}.firstAvailable"),
            Some("name"),
            |sr, p| {
                let mut e = dns_label(s(sr, "name"), &format!("{p}.name"));
                e.extend(request_body(sr, p));
                e
            },
        )),
        (true, false) => errs.extend(request_body(&r["exactly"], &format!("{path}.exactly"))),
    }
    errs
}

/// upstream's validateDeviceClaim at `path` (`spec.devices` of a claim).
pub fn device_claim(devices: &Value, path: &str, stored: bool) -> Vec<FieldError> {
    let names = request_names(devices);
    let mut errs = validate_set(
        &devices["requests"],
        Some(MAX_REQUESTS),
        &format!("{path}.requests"),
        Some("name"),
        device_request,
    );
    errs.extend(validate_slice(
        &devices["constraints"],
        Some(MAX_CONSTRAINTS),
        &format!("{path}.constraints"),
        |c, p| {
            let mut e = validate_set(
                &c["requests"],
                Some(MAX_REQUESTS),
                &format!("{p}.requests"),
                None,
                |n, q| request_name_ref(n.as_str().unwrap_or(""), q, &names),
            );
            match c["matchAttribute"].as_str() {
                Some(a) => e.extend(fully_qualified_name(a, &format!("{p}.matchAttribute"))),
                None => e.push(FieldError::required(format!("{p}.matchAttribute"), "")),
            }
            e
        },
    ));
    errs.extend(validate_slice(
        &devices["config"],
        Some(MAX_CONFIGS),
        &format!("{path}.config"),
        |c, p| {
            let mut e = validate_set(
                &c["requests"],
                Some(MAX_REQUESTS),
                &format!("{p}.requests"),
                None,
                |n, q| request_name_ref(n.as_str().unwrap_or(""), q, &names),
            );
            e.extend(device_configuration(c, p, stored));
            e
        },
    ));
    errs
}

// ---- the claim spec as upstream quotes it ----

fn toleration_go(t: &Value) -> String {
    structure(&[
        ("Key", g::str_field(&t["key"])),
        ("Operator", g::str_field(&t["operator"])),
        ("Value", g::str_field(&t["value"])),
        ("Effect", g::str_field(&t["effect"])),
        ("TolerationSeconds", g::opt_scalar(&t["tolerationSeconds"])),
    ])
}

fn selector_go(sel: &Value) -> String {
    structure(&[(
        "CEL",
        g::opt_struct(&sel["cel"], |c| {
            structure(&[("Expression", g::str_field(&c["expression"]))])
        }),
    )])
}

fn capacity_go(c: &Value) -> String {
    g::opt_struct(c, |c| {
        structure(&[("Requests", g::string_map(&c["requests"]))])
    })
}

fn exact_go(e: &Value) -> String {
    structure(&[
        ("DeviceClassName", g::str_field(&e["deviceClassName"])),
        ("Selectors", g::list(&e["selectors"], selector_go)),
        ("AllocationMode", g::str_field(&e["allocationMode"])),
        ("Count", g::int(&e["count"])),
        ("AdminAccess", g::opt_scalar(&e["adminAccess"])),
        ("Tolerations", g::list(&e["tolerations"], toleration_go)),
        ("Capacity", capacity_go(&e["capacity"])),
    ])
}

fn subrequest_go(r: &Value) -> String {
    structure(&[
        ("Name", g::str_field(&r["name"])),
        ("DeviceClassName", g::str_field(&r["deviceClassName"])),
        ("Selectors", g::list(&r["selectors"], selector_go)),
        ("AllocationMode", g::str_field(&r["allocationMode"])),
        ("Count", g::int(&r["count"])),
        ("Tolerations", g::list(&r["tolerations"], toleration_go)),
        ("Capacity", capacity_go(&r["capacity"])),
    ])
}

fn opaque_go(o: &Value) -> String {
    structure(&[
        ("Driver", g::str_field(&o["driver"])),
        (
            "Parameters",
            o.get("parameters")
                .map(g::any)
                .unwrap_or_else(|| "null".into()),
        ),
    ])
}

/// The internal ResourceClaimSpec as json.Marshal writes it.
pub fn claim_spec_go(spec: &Value) -> String {
    let d = &spec["devices"];
    let request = |r: &Value| {
        structure(&[
            ("Name", g::str_field(&r["name"])),
            ("Exactly", g::opt_struct(&r["exactly"], exact_go)),
            (
                "FirstAvailable",
                g::list(&r["firstAvailable"], subrequest_go),
            ),
        ])
    };
    let constraint = |c: &Value| {
        structure(&[
            ("Requests", g::strings(&c["requests"])),
            ("MatchAttribute", g::opt_str(&c["matchAttribute"])),
            ("DistinctAttribute", g::opt_str(&c["distinctAttribute"])),
        ])
    };
    let config = |c: &Value| {
        structure(&[
            ("Requests", g::strings(&c["requests"])),
            ("Opaque", g::opt_struct(&c["opaque"], opaque_go)),
        ])
    };
    structure(&[(
        "Devices",
        structure(&[
            ("Requests", g::list(&d["requests"], request)),
            ("Constraints", g::list(&d["constraints"], constraint)),
            ("Config", g::list(&d["config"], config)),
        ]),
    )])
}

/// The internal ResourceClaimTemplateSpec: its ObjectMeta is embedded, so
/// the metadata's own (tagged) fields come first, then `Spec`.
pub fn template_spec_go(spec: &Value) -> String {
    let m = &spec["metadata"];
    let mut fields: Vec<(&str, String)> = Vec::new();
    for k in [
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
    ] {
        if let Some(v) = m[k].as_str().filter(|v| !v.is_empty()) {
            fields.push((k, g::string(v)));
        }
    }
    if let Some(n) = m["generation"].as_i64().filter(|n| *n != 0) {
        fields.push(("generation", n.to_string()));
    }
    fields.push(("creationTimestamp", g::opt_str(&m["creationTimestamp"])));
    for k in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        if !m[k].is_null() {
            fields.push((k, g::any(&m[k])));
        }
    }
    for k in [
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    ] {
        if !crate::registry::helpers::is_empty(&m[k]) {
            fields.push((k, g::any(&m[k])));
        }
    }
    fields.push(("Spec", claim_spec_go(&spec["spec"])));
    structure(&fields)
}

// ---- claims, templates, classes ----

pub fn validate_claim(obj: &Value) -> Vec<FieldError> {
    device_claim(&obj["spec"]["devices"], "spec.devices", false)
}

/// 1.34's update checks: the whole claim again, the spec's immutability,
/// then the spec once more as stored (so its errors show twice, as upstream's).
pub fn validate_claim_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_claim(new);
    if new["spec"] != old["spec"] {
        errs.push(invalid_raw("spec", &claim_spec_go(&new["spec"]), IMMUTABLE));
    }
    errs.extend(device_claim(&new["spec"]["devices"], "spec.devices", true));
    if new["status"] != old["status"] {
        errs.extend(claim_status(new, old));
    }
    errs
}

/// corevalidation.ValidateTemplateObjectMeta: only labels and annotations.
fn template_metadata(m: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ann_path = format!("{path}.annotations");
    if let Some(ann) = m["annotations"].as_object() {
        let mut total = 0usize;
        for (k, v) in ann {
            for msg in validation::qualified_name(&k.to_lowercase()) {
                errs.push(FieldError::invalid(ann_path.clone(), json!(k), msg));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > 256 * 1024 {
            errs.push(FieldError::too_long(ann_path, 256 * 1024));
        }
    }
    validate_labels(&m["labels"], &format!("{path}.labels"), &mut errs);
    if let Some(obj) = m.as_object() {
        // ObjectMeta's fields in Go order; the JSON name is Go's with a lower-case first letter.
        for (json_name, go_name) in [
            ("name", "name"),
            ("generateName", "generateName"),
            ("namespace", "namespace"),
            ("selfLink", "selfLink"),
            ("uid", "uID"),
            ("resourceVersion", "resourceVersion"),
            ("generation", "generation"),
            ("creationTimestamp", "creationTimestamp"),
            ("deletionTimestamp", "deletionTimestamp"),
            ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
            ("ownerReferences", "ownerReferences"),
            ("finalizers", "finalizers"),
            ("managedFields", "managedFields"),
        ] {
            let set = obj.get(json_name).is_some_and(|v| match v {
                Value::Number(n) => n.as_i64() != Some(0),
                other => !crate::registry::helpers::is_empty(other),
            });
            if set {
                errs.push(FieldError::forbidden(
                    format!("{path}.{go_name}"),
                    "cannot be set",
                ));
            }
        }
    }
    errs
}

fn template_spec(spec: &Value, stored: bool) -> Vec<FieldError> {
    let mut errs = template_metadata(&spec["metadata"], "spec.metadata");
    errs.extend(device_claim(
        &spec["spec"]["devices"],
        "spec.spec.devices",
        stored,
    ));
    errs
}

pub fn validate_template(obj: &Value) -> Vec<FieldError> {
    template_spec(&obj["spec"], false)
}

pub fn validate_template_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_template(new);
    if new["spec"] != old["spec"] {
        errs.push(invalid_raw(
            "spec",
            &template_spec_go(&new["spec"]),
            IMMUTABLE,
        ));
    }
    errs.extend(template_spec(&new["spec"], true));
    errs
}

/// upstream's validateDeviceClassSpec; with the old spec, unchanged
/// selectors and configs count as stored.
fn class_spec(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = selectors(&spec["selectors"], "spec.selectors");
    let stored = old.is_some_and(|o| o["config"] == spec["config"]);
    errs.extend(validate_slice(
        &spec["config"],
        Some(MAX_CONFIGS),
        "spec.config",
        |c, p| device_configuration(c, p, stored),
    ));
    errs
}

pub fn validate_class(obj: &Value) -> Vec<FieldError> {
    class_spec(&obj["spec"], None)
}

/// 1.34's update: the class as on create, then the spec against the old one.
pub fn validate_class_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_class(new);
    errs.extend(class_spec(&new["spec"], Some(&old["spec"])));
    errs
}

// ---- the claim status (its subresource's writes) ----

fn allocation_config(
    c: &Value,
    path: &str,
    names: &[(String, Option<Vec<String>>)],
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match s(c, "source") {
        "" => errs.push(FieldError::required(format!("{path}.source"), "")),
        "FromClaim" | "FromClass" => {}
        other => errs.push(FieldError::not_supported(
            format!("{path}.source"),
            json!(other),
            &["FromClaim", "FromClass"],
        )),
    }
    errs.extend(validate_set(
        &c["requests"],
        Some(MAX_REQUESTS),
        &format!("{path}.requests"),
        None,
        |n, q| request_name_ref(n.as_str().unwrap_or(""), q, names),
    ));
    errs.extend(device_configuration(c, path, false));
    errs
}

fn allocation(a: &Value, names: &[(String, Option<Vec<String>>)]) -> Vec<FieldError> {
    let path = "status.allocation.devices";
    let mut errs = validate_slice(
        &a["devices"]["results"],
        Some(ALLOCATION_RESULTS_MAX),
        &format!("{path}.results"),
        |r, p| {
            let mut e = request_name_ref(s(r, "request"), &format!("{p}.request"), names);
            e.extend(driver_name(s(r, "driver"), &format!("{p}.driver")));
            e.extend(pool_name(s(r, "pool"), &format!("{p}.pool")));
            e.extend(dns_label(s(r, "device"), &format!("{p}.device")));
            e
        },
    );
    errs.extend(validate_slice(
        &a["devices"]["config"],
        Some(2 * MAX_CONFIGS),
        &format!("{path}.config"),
        |c, p| allocation_config(c, p, names),
    ));
    if a["nodeSelector"].is_object() {
        errs.extend(node_selector(
            &a["nodeSelector"],
            "status.allocation.nodeSelector",
        ));
    }
    errs
}

fn device_id(d: &Value) -> String {
    format!("{}/{}/{}", s(d, "driver"), s(d, "pool"), s(d, "device"))
}

/// upstream's ValidateResourceClaimStatusUpdate (conditions are only counted).
pub fn claim_status(new: &Value, old: &Value) -> Vec<FieldError> {
    let (st, old_st) = (&new["status"], &old["status"]);
    let names = request_names(&new["spec"]["devices"]);
    let mut errs = Vec::new();
    let reserved = items(&st["reservedFor"]);
    errs.extend(validate_slice(
        &st["reservedFor"],
        Some(RESERVED_FOR_MAX),
        "status.reservedFor",
        |r, p| {
            ["resource", "name", "uid"]
                .iter()
                .filter(|k| s(r, k).is_empty())
                .map(|k| FieldError::required(format!("{p}.{k}"), ""))
                .collect()
        },
    ));
    let mut uids: Vec<&str> = Vec::new();
    for (i, r) in reserved.iter().enumerate() {
        let uid = s(r, "uid");
        if uids.contains(&uid) {
            errs.push(FieldError::duplicate(
                format!("status.reservedFor[{i}].uid"),
                json!(uid),
            ));
        } else {
            uids.push(uid);
        }
    }
    let allocated: Vec<String> = items(&st["allocation"]["devices"]["results"])
        .iter()
        .map(device_id)
        .collect();
    let devices = items(&st["devices"]);
    let mut seen: Vec<String> = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let p = format!("status.devices[{i}]");
        errs.extend(driver_name(s(d, "driver"), &format!("{p}.driver")));
        errs.extend(pool_name(s(d, "pool"), &format!("{p}.pool")));
        errs.extend(dns_label(s(d, "device"), &format!("{p}.device")));
        let id = device_id(d);
        if !allocated.contains(&id) {
            errs.push(FieldError::invalid(
                p.clone(),
                json!(id),
                "must be an allocated device in the claim",
            ));
        }
        let conditions = items(&d["conditions"]).len();
        if conditions > DEVICE_STATUS_MAX_CONDITIONS {
            errs.push(FieldError::too_many(
                format!("{p}.conditions"),
                conditions,
                DEVICE_STATUS_MAX_CONDITIONS,
            ));
        }
        if let Some(data) = d.get("data").filter(|v| !v.is_null()) {
            errs.extend(super::common::raw_extension(
                Some(data),
                &format!("{p}.data"),
                false,
                DEVICE_STATUS_DATA_MAX,
            ));
        }
        if seen.contains(&id) {
            errs.push(FieldError::duplicate(format!("{p}.deviceID"), json!(id)));
        } else {
            seen.push(id);
        }
    }
    let has_alloc = st["allocation"].is_object();
    if !reserved.is_empty() {
        if !has_alloc {
            errs.push(FieldError::forbidden(
                "status.reservedFor",
                "may not be specified when `allocated` is not set",
            ));
        } else if crate::registry::meta::is_deleting(new) {
            let before = items(&old_st["reservedFor"]);
            if reserved.iter().any(|r| !before.contains(r)) {
                errs.push(FieldError::forbidden(
                    "status.reservedFor",
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                ));
            }
        }
    }
    if has_alloc && old_st["allocation"].is_object() {
        if st["allocation"] != old_st["allocation"] {
            errs.push(invalid_raw(
                "status.allocation",
                &g::any(&st["allocation"]),
                IMMUTABLE,
            ));
        }
    } else if has_alloc {
        errs.extend(allocation(&st["allocation"], &names));
    }
    errs
}
