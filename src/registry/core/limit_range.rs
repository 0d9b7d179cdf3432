//! LimitRange (upstream's pkg/registry/core/limitrange, ValidateLimitRange
//! and SetDefaults_LimitRangeItem): per-type min/max/default resource bounds,
//! whose consistency (min <= default <= max) is the bulk of the rules.

use serde_json::{json, Map, Value};

use super::validate_resource_name;
use crate::registry::helpers as kh;
use crate::registry::strategy::Strategy;
use crate::registry::validation::{self, FieldError};

pub struct LimitRangeStrategy;

fn validate_limit_resource_name(ty: &str, name: &str, path: &str, errs: &mut Vec<FieldError>) {
    let ok = validate_resource_name(name, path, errs);
    if ty == "Pod" || ty == "Container" {
        if !name.contains('/') {
            let std = ["cpu", "memory", "ephemeral-storage"].contains(&name)
                || name.starts_with("hugepages-");
            if !std {
                errs.push(FieldError::invalid(
                    path,
                    json!(name),
                    "must be a standard resource for containers",
                ));
            }
        } else if ok && name.starts_with("kubernetes.io/") {
            errs.push(FieldError::invalid(
                path,
                json!(name),
                "doesn't follow extended resource name standard",
            ));
        }
    }
}

fn validate_limit_range(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut types: Vec<String> = Vec::new();
    for (i, limit) in kh::items(&obj["spec"]["limits"]).iter().enumerate() {
        let ip = format!("spec.limits[{i}]");
        let ty = kh::s(limit, "type");
        let before = errs.len();
        for m in validation::qualified_name(ty) {
            errs.push(FieldError::invalid(format!("{ip}.type"), json!(ty), m));
        }
        if errs.len() == before
            && !ty.contains('/')
            && !["Pod", "Container", "PersistentVolumeClaim"].contains(&ty)
        {
            errs.push(FieldError::invalid(
                format!("{ip}.type"),
                json!(ty),
                "must be a standard limit type or fully qualified",
            ));
        }
        if types.iter().any(|t| t == ty) {
            errs.push(FieldError::duplicate(format!("{ip}.type"), json!(ty)));
        }
        types.push(ty.to_string());

        let mut maps: std::collections::BTreeMap<&str, Map<String, Value>> = Default::default();
        let mut keys: std::collections::BTreeSet<String> = Default::default();
        let mut collect = |field: &'static str, errs: &mut Vec<FieldError>| {
            let m = limit[field].as_object().cloned().unwrap_or_default();
            for k in m.keys() {
                validate_limit_resource_name(ty, k, &format!("{ip}.{field}[{k}]"), errs);
                keys.insert(k.clone());
            }
            maps.insert(field, m);
        };
        collect("max", &mut errs);
        collect("min", &mut errs);
        if ty == "Pod" {
            for f in ["default", "defaultRequest"] {
                if limit[f].as_object().is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        format!("{ip}.{f}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            collect("default", &mut errs);
            collect("defaultRequest", &mut errs);
        }
        if ty == "PersistentVolumeClaim"
            && limit["min"]["storage"].is_null()
            && limit["max"]["storage"].is_null()
        {
            errs.push(FieldError::required(
                format!("{ip}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        collect("maxLimitRequestRatio", &mut errs);
        for k in &keys {
            let get = |f: &str| maps.get(f).and_then(|m| m.get(k)).cloned();
            let qv = |v: &Option<Value>| v.as_ref().and_then(kh::quantity);
            let qs = |v: &Option<Value>| v.as_ref().map(kh::quantity_str).unwrap_or_default();
            let (min, max, def, req, ratio) = (
                get("min"),
                get("max"),
                get("default"),
                get("defaultRequest"),
                get("maxLimitRequestRatio"),
            );
            let gt = |a: &Option<Value>, b: &Option<Value>| match (qv(a), qv(b)) {
                (Some(x), Some(y)) => x > y,
                _ => false,
            };
            let mut push = |field: &str, v: &Option<Value>, msg: String| {
                errs.push(FieldError::invalid(
                    format!("{ip}.{field}[{k}]"),
                    json!(qs(v)),
                    msg,
                ))
            };
            if gt(&min, &max) {
                push(
                    "min",
                    &min,
                    format!(
                        "min value {} is greater than max value {}",
                        qs(&min),
                        qs(&max)
                    ),
                );
            }
            if gt(&min, &req) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "min value {} is greater than default request value {}",
                        qs(&min),
                        qs(&req)
                    ),
                );
            }
            if gt(&req, &max) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "default request value {} is greater than max value {}",
                        qs(&req),
                        qs(&max)
                    ),
                );
            }
            if gt(&req, &def) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "default request value {} is greater than default limit value {}",
                        qs(&req),
                        qs(&def)
                    ),
                );
            }
            if gt(&min, &def) {
                push(
                    "default",
                    &min,
                    format!(
                        "min value {} is greater than default value {}",
                        qs(&min),
                        qs(&def)
                    ),
                );
            }
            if gt(&def, &max) {
                push(
                    "default",
                    &max,
                    format!(
                        "default value {} is greater than max value {}",
                        qs(&def),
                        qs(&max)
                    ),
                );
            }
            if qv(&ratio).is_some_and(|r| r < 1_000_000_000) {
                push(
                    "maxLimitRequestRatio",
                    &ratio,
                    format!("ratio {} is less than 1", qs(&ratio)),
                );
            }
            if let (Some(r), Some(mn), Some(mx)) = (qv(&ratio), qv(&min), qv(&max)) {
                if mn > 0 {
                    let limit = mx as f64 / mn as f64;
                    if r as f64 / 1e9 > limit {
                        push(
                            "maxLimitRequestRatio",
                            &ratio,
                            format!("ratio {} is greater than max/min = {limit:.6}", qs(&ratio)),
                        );
                    }
                }
            }
            let overcommit = !(k.starts_with("hugepages-")
                || k.contains('/') && !k.starts_with("kubernetes.io/"));
            if !overcommit {
                if let (Some(d), Some(r)) = (qv(&def), qv(&req)) {
                    if d != r {
                        push(
                            "defaultRequest",
                            &req,
                            format!(
                                "default value {} must equal to defaultRequest value {} in {k}",
                                qs(&def),
                                qs(&req)
                            ),
                        );
                    }
                }
            }
        }
    }
    errs
}

impl Strategy for LimitRangeStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        let Some(limits) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut("limits"))
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        for item in limits.iter_mut().filter_map(Value::as_object_mut) {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            let max = item
                .get("max")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let min = item
                .get("min")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut def = item
                .get("default")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut req = item
                .get("defaultRequest")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for (k, v) in &max {
                def.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in &def {
                req.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in &min {
                req.entry(k.clone()).or_insert_with(|| v.clone());
            }
            if !def.is_empty() {
                item.insert("default".into(), Value::Object(def));
            }
            if !req.is_empty() {
                item.insert("defaultRequest".into(), Value::Object(req));
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_limit_range(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::msgs;

    #[test]
    fn limit_ranges() {
        let mut o = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}});
        LimitRangeStrategy.default(&mut o);
        let item = &o["spec"]["limits"][0];
        assert_eq!(item["default"], json!({"cpu": "2"}));
        assert_eq!(
            item["defaultRequest"],
            json!({"cpu": "2", "memory": "64Mi"})
        );
        assert!(LimitRangeStrategy.validate(&o).is_empty());
        let bad = json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "Widget"},
            {"type": "PersistentVolumeClaim"},
            {"type": "Container", "max": {"gpus": "1"}}]}});
        assert_eq!(
            msgs(&LimitRangeStrategy.validate(&bad)),
            [
                ("spec.limits[0].min[cpu]".to_string(), "Invalid value: \"2\": min value 2 is greater than max value 1".to_string()),
                ("spec.limits[1].default".into(), "Forbidden: may not be specified when `type` is 'Pod'".into()),
                ("spec.limits[2].type".into(), "Invalid value: \"Widget\": must be a standard limit type or fully qualified".into()),
                ("spec.limits[3].limits".into(), "Required value: either minimum or maximum storage value is required, but neither was provided".into()),
                ("spec.limits[4].type".into(), "Duplicate value: \"Container\"".into()),
                ("spec.limits[4].max[gpus]".into(), "Invalid value: \"gpus\": must be a standard resource type or fully qualified".into()),
                ("spec.limits[4].max[gpus]".into(), "Invalid value: \"gpus\": must be a standard resource for containers".into()),
            ]
        );
    }
}
