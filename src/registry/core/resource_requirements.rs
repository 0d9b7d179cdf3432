//! upstream's ValidateContainerResourceRequirements: what a container (or
//! a RuntimeClass's pod overhead) may ask for. Names are standard
//! container resources or extended ones; values are non-negative, whole
//! for extended resources, multiples of the page for huge pages; a request
//! stays within its limit, and equals it where the resource cannot be
//! overcommitted.

use serde_json::{json, Value};

use super::STANDARD_RESOURCES;
use crate::api::quantity::Quantity;
use crate::registry::validation::{self, FieldError};

const NANO: i128 = 1_000_000_000;

/// helper.IsNativeResource.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// helper.IsHugePageResourceName.
fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// helper.IsExtendedResourceName.
pub(crate) fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && validation::qualified_name(&format!("requests.{name}")).is_empty()
}

/// helper.IsOvercommitAllowed.
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_hugepages(name)
}

/// upstream's validateContainerResourceName (validateResourceName first).
fn validate_name(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    let msgs = validation::qualified_name(name);
    let qualified = msgs.is_empty();
    for m in msgs {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
    let standard = STANDARD_RESOURCES.contains(&name)
        || is_hugepages(name)
        || name.starts_with("requests.hugepages-")
        || name.starts_with("limits.hugepages-");
    if qualified && !name.contains('/') && !standard {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must be a standard resource type or fully qualified",
        ));
    }
    if !name.contains('/') {
        if !["cpu", "memory", "ephemeral-storage"].contains(&name) && !is_hugepages(name) {
            errs.push(FieldError::invalid(
                path,
                json!(name),
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "doesn't follow extended resource name standard",
        ));
    }
}

/// helper.IsHugePageResourceValueDivisible.
fn hugepages_divisible(name: &str, q: Quantity) -> bool {
    let Some(page) = Quantity::parse(&name["hugepages-".len()..]) else {
        return false;
    };
    if page.nanos <= 0 || page.nanos % NANO != 0 {
        return false;
    }
    // Quantity.Value() rounds up to a whole number.
    let value = (q.nanos + NANO - 1).div_euclid(NANO);
    value % (page.nanos / NANO) == 0
}

/// upstream's ValidateResourceQuantityValue, and the huge page check, for
/// one entry of `limits` or `requests`.
fn validate_value(name: &str, q: Quantity, path: &str, errs: &mut Vec<FieldError>) {
    let shown = q.to_string();
    if q.nanos < 0 {
        errs.push(FieldError::invalid(
            path,
            json!(shown),
            "must be greater than or equal to 0",
        ));
    }
    if is_extended(name) && q.nanos % NANO != 0 {
        errs.push(FieldError::invalid(
            path,
            json!(shown),
            "must be an integer",
        ));
    }
    if is_hugepages(name) && !hugepages_divisible(name, q) {
        errs.push(FieldError::invalid(
            path,
            json!(shown),
            format!("{shown} is not positive integer multiple of {name}"),
        ));
    }
}

/// The entries of a resource list, in key order (upstream ranges over a
/// Go map, so it promises no order); values that are no quantity were
/// refused when the object was decoded.
fn entries(list: &Value) -> Vec<(&str, Quantity)> {
    list.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str(), Quantity::from_value(v).unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

/// upstream's ValidateContainerResourceRequirements of `requirements`
/// (`{limits, requests}`) at `path`.
pub fn validate(requirements: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let limits = entries(&requirements["limits"]);
    let requests = entries(&requirements["requests"]);
    let (mut cpu_or_memory, mut hugepages) = (false, false);
    for &(name, q) in &limits {
        let at = format!("{path}.limits[{name}]");
        validate_name(name, &at, errs);
        validate_value(name, q, &at, errs);
        hugepages |= is_hugepages(name);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    for &(name, q) in &requests {
        let at = format!("{path}.requests[{name}]");
        validate_name(name, &at, errs);
        validate_value(name, q, &at, errs);
        match limits.iter().find(|(l, _)| *l == name) {
            Some(&(_, limit)) if q != limit && !overcommit_allowed(name) => {
                errs.push(FieldError::invalid(
                    format!("{path}.requests"),
                    json!(q.to_string()),
                    format!("must be equal to {name} limit of {limit}"),
                ));
            }
            Some(&(_, limit)) if q > limit => {
                errs.push(FieldError::invalid(
                    format!("{path}.requests"),
                    json!(q.to_string()),
                    format!("must be less than or equal to {name} limit of {limit}"),
                ));
            }
            Some(_) => {}
            None if !overcommit_allowed(name) => errs.push(FieldError::required(
                format!("{path}.limits"),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        hugepages |= is_hugepages(name);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    if hugepages && !cpu_or_memory {
        errs.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(requirements: Value) -> Vec<String> {
        let mut errs = Vec::new();
        validate(&requirements, "spec.containers[0].resources", &mut errs);
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.message()))
            .collect()
    }

    #[test]
    fn requests_within_limits_and_no_negative_values() {
        assert!(messages(
            json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})
        )
        .is_empty());
        assert_eq!(
            messages(json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1500m"}})),
            ["spec.containers[0].resources.requests: Invalid value: \"1500m\": must be less than or equal to cpu limit of 1"]
        );
        assert_eq!(
            messages(json!({"requests": {"cpu": "-1"}})),
            ["spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"]
        );
        assert_eq!(
            messages(json!({"requests": {"pods": "1"}})),
            ["spec.containers[0].resources.requests[pods]: Invalid value: \"pods\": must be a standard resource for containers"]
        );
    }

    #[test]
    fn extended_resources_are_whole_and_not_overcommitted() {
        assert!(messages(
            json!({"limits": {"example.com/gpu": "2"}, "requests": {"example.com/gpu": "2"}})
        )
        .is_empty());
        assert_eq!(
            messages(json!({"limits": {"example.com/gpu": "2"}, "requests": {"example.com/gpu": "1"}})),
            ["spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to example.com/gpu limit of 2"]
        );
        assert_eq!(
            messages(json!({"requests": {"example.com/gpu": "1"}})),
            ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]
        );
        assert_eq!(
            messages(json!({"limits": {"example.com/gpu": "500m"}})),
            ["spec.containers[0].resources.limits[example.com/gpu]: Invalid value: \"500m\": must be an integer"]
        );
    }

    #[test]
    fn huge_pages_need_cpu_or_memory_and_whole_pages() {
        assert_eq!(
            messages(
                json!({"limits": {"hugepages-2Mi": "4Mi"}, "requests": {"hugepages-2Mi": "4Mi"}})
            ),
            ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]
        );
        assert_eq!(
            messages(json!({"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}})),
            ["spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi"]
        );
    }
}
