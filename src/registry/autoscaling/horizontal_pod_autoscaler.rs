//! HorizontalPodAutoscaler, served as autoscaling/v2 and v1 (upstream's
//! pkg/registry/autoscaling/horizontalpodautoscaler,
//! pkg/apis/autoscaling/v{1,2}/defaults.go and pkg/apis/autoscaling/validation).
//! Both versions share one strategy; an object's apiVersion tells its shape.

use serde_json::{json, Map, Value};

use crate::registry::helpers::{self, items, quantity, quantity_str, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

/// upstream's DefaultCPUUtilization.
pub const DEFAULT_CPU_UTILIZATION: i64 = 80;
const MAX_PERIOD_SECONDS: i64 = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

pub struct HorizontalPodAutoscalerStrategy;

fn is_v1(obj: &Value) -> bool {
    obj["apiVersion"].as_str() == Some("autoscaling/v1")
}

/// GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the user's fields over upstream's defaults.
fn default_scaling_rules(rules: Option<&Value>, up: bool) -> Value {
    let mut out = if up {
        json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]})
    } else {
        json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
    };
    if let (Some(from), Some(to)) = (rules.and_then(Value::as_object), out.as_object_mut()) {
        for k in [
            "selectPolicy",
            "stabilizationWindowSeconds",
            "policies",
            "tolerance",
        ] {
            if let Some(v) = from.get(k).filter(|v| !v.is_null()) {
                to.insert(k.into(), v.clone());
            }
        }
    }
    out
}

fn default_v2(spec: &mut Map<String, Value>) {
    set_default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(|a| a.is_empty())
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]),
        );
    }
    if let Some(b) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = default_scaling_rules(b.get("scaleUp"), true);
        let down = default_scaling_rules(b.get("scaleDown"), false);
        b.insert("scaleUp".into(), up);
        b.insert("scaleDown".into(), down);
    }
}

fn validate_cross_version_ref(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for key in ["kind", "name"] {
        let v = s(r, key);
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        } else {
            for m in validation::path_segment_name(v) {
                errs.push(FieldError::invalid(format!("{path}.{key}"), json!(v), m));
            }
        }
    }
}

fn validate_metric_identifier(id: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let name = s(id, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    } else {
        for m in validation::path_segment_name(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), json!(name), m));
        }
    }
}

fn validate_metric_target(t: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = s(t, "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&ty) {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            json!(ty),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        if !t[key].is_null() && quantity(&t[key]).is_none_or(|q| q <= 0) {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                json!(quantity_str(&t[key])),
                "must be positive",
            ));
        }
    }
    if let Some(u) = t["averageUtilization"].as_i64() {
        if u < 1 {
            errs.push(FieldError::invalid(
                format!("{path}.averageUtilization"),
                json!(u),
                "must be greater than 0",
            ));
        }
    }
}

fn validate_resource_source(src: &Value, path: &str, container: bool, errs: &mut Vec<FieldError>) {
    if s(src, "name").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    }
    if container {
        let c = s(src, "container");
        if c.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.container"),
                "must specify a container",
            ));
        } else {
            for m in validation::dns1123_label(c) {
                errs.push(FieldError::invalid(
                    format!("{path}.container"),
                    json!(c),
                    m,
                ));
            }
        }
    }
    let t = &src["target"];
    validate_metric_target(t, &format!("{path}.target"), errs);
    if t["averageUtilization"].is_null() && t["averageValue"].is_null() {
        errs.push(FieldError::required(
            format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if !t["averageUtilization"].is_null() && !t["averageValue"].is_null() {
        errs.push(FieldError::forbidden(
            format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

const METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

fn validate_metric_spec(m: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = s(m, "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            json!(ty),
            &METRIC_TYPES,
        ));
    }
    let mut present: Vec<&str> = Vec::new();
    for key in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        if m[key].is_null() {
            continue;
        }
        present.push(key);
        if present.len() > 1 {
            continue;
        }
        let src = &m[key];
        let sp = format!("{path}.{key}");
        match key {
            "object" => {
                validate_cross_version_ref(
                    &src["describedObject"],
                    &format!("{sp}.describedObject"),
                    errs,
                );
                validate_metric_identifier(&src["metric"], &format!("{sp}.metric"), errs);
                validate_metric_target(&src["target"], &format!("{sp}.target"), errs);
                if src["target"]["value"].is_null() && src["target"]["averageValue"].is_null() {
                    errs.push(FieldError::required(
                        format!("{sp}.target.averageValue"),
                        "must set either a target value or averageValue",
                    ));
                }
            }
            "external" => {
                validate_metric_identifier(&src["metric"], &format!("{sp}.metric"), errs);
                validate_metric_target(&src["target"], &format!("{sp}.target"), errs);
                let (v, a) = (&src["target"]["value"], &src["target"]["averageValue"]);
                if v.is_null() && a.is_null() {
                    errs.push(FieldError::required(
                        format!("{sp}.target.averageValue"),
                        "must set either a target value for metric or a per-pod target",
                    ));
                }
                if !v.is_null() && !a.is_null() {
                    errs.push(FieldError::forbidden(
                        format!("{sp}.target.value"),
                        "may not set both a target value for metric and a per-pod target",
                    ));
                }
            }
            "pods" => {
                validate_metric_identifier(&src["metric"], &format!("{sp}.metric"), errs);
                validate_metric_target(&src["target"], &format!("{sp}.target"), errs);
                if src["target"]["averageValue"].is_null() {
                    errs.push(FieldError::required(
                        format!("{sp}.target.averageValue"),
                        "must specify a positive target averageValue",
                    ));
                }
            }
            "resource" => validate_resource_source(src, &sp, false, errs),
            _ => validate_resource_source(src, &sp, true, errs),
        }
    }
    let expected = match ty {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.push(FieldError::not_supported(
                format!("{path}.type"),
                json!(ty),
                &METRIC_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && m[expected].is_null() {
        errs.push(FieldError::required(
            format!("{path}.{expected}"),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        for key in present.iter().filter(|k| **k != expected) {
            errs.push(FieldError::forbidden(
                format!("{path}.{key}"),
                "must populate the given metric source only",
            ));
        }
    }
}

fn validate_scaling_rules(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if r.is_null() {
        return;
    }
    if let Some(w) = r["stabilizationWindowSeconds"].as_i64() {
        if w < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                json!(w),
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                json!(w),
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = r["selectPolicy"].as_str() {
        if !["Disabled", "Max", "Min"].contains(&p) {
            errs.push(FieldError::not_supported(
                format!("{path}.selectPolicy"),
                json!(p),
                &["Disabled", "Max", "Min"],
            ));
        }
    }
    let policies = items(&r["policies"]);
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.iter().enumerate() {
        let pp = format!("{path}.policies[{i}]");
        let ty = s(p, "type");
        if ty != "Pods" && ty != "Percent" {
            errs.push(FieldError::not_supported(
                format!("{pp}.type"),
                json!(ty),
                &["Percent", "Pods"],
            ));
        }
        let value = p["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.value"),
                json!(value),
                "must be greater than zero",
            ));
        }
        let period = p["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                json!(period),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                json!(period),
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

/// The v2 metrics of an object of either version (v1's CPU target converted as upstream converts it).
fn metrics_of(o: &Value) -> Value {
    if is_v1(o) {
        match o["spec"]["targetCPUUtilizationPercentage"].as_i64() {
            Some(t) => {
                json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": t}}}])
            }
            None => json!([]),
        }
    } else {
        o["spec"]["metrics"].clone()
    }
}

fn validate_hpa(obj: &Value, min_lower_bound: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    let min = spec["minReplicas"].as_i64();
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if let Some(m) = min.filter(|m| *m < min_lower_bound) {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            json!(m),
            format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            json!(max),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    validate_cross_version_ref(&spec["scaleTargetRef"], "spec.scaleTargetRef", &mut errs);
    let metrics = items(&metrics_of(obj));
    let mut scales_to_zero_ok = false;
    for (i, m) in metrics.iter().enumerate() {
        validate_metric_spec(m, &format!("spec.metrics[{i}]"), &mut errs);
        if matches!(s(m, "type"), "Object" | "External") {
            scales_to_zero_ok = true;
        }
    }
    if min == Some(0) && !scales_to_zero_ok {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    if !is_v1(obj) {
        let b = &spec["behavior"];
        validate_scaling_rules(&b["scaleUp"], "spec.behavior.scaleUp", &mut errs);
        validate_scaling_rules(&b["scaleDown"], "spec.behavior.scaleDown", &mut errs);
    }
    errs
}

/// upstream's formatHPAMetrics.
fn format_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    let unknown = || "<unknown>".to_string();
    let q = |v: &Value| {
        if v.is_null() {
            unknown()
        } else {
            quantity_str(v)
        }
    };
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let st = statuses.get(i);
        let cur = |key: &str, field: &str| -> Option<Value> {
            st.map(|s| &s[key]["current"][field])
                .filter(|v| !v.is_null())
                .cloned()
        };
        let item = match s(spec, "type") {
            t @ ("External" | "Object") => {
                let key = if t == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = &spec[key]["target"];
                if !target["averageValue"].is_null() {
                    let c = cur(key, "averageValue")
                        .map(|v| q(&v))
                        .unwrap_or_else(unknown);
                    format!("{c}/{} (avg)", q(&target["averageValue"]))
                } else {
                    let c = cur(key, "value").map(|v| q(&v)).unwrap_or_else(unknown);
                    format!("{c}/{}", q(&target["value"]))
                }
            }
            "Pods" => {
                let c = cur("pods", "averageValue")
                    .map(|v| q(&v))
                    .unwrap_or_else(unknown);
                format!("{c}/{}", q(&spec["pods"]["target"]["averageValue"]))
            }
            t @ ("Resource" | "ContainerResource") => {
                let key = if t == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let src = &spec[key];
                let name = s(src, "name");
                let target = &src["target"];
                if !target["averageValue"].is_null() {
                    let c = cur(key, "averageValue")
                        .map(|v| q(&v))
                        .unwrap_or_else(unknown);
                    format!("{name}: {c}/{}", q(&target["averageValue"]))
                } else {
                    let c = cur(key, "averageUtilization")
                        .and_then(|v| v.as_i64())
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(unknown);
                    let t = target["averageUtilization"]
                        .as_i64()
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".into());
                    format!("{name}: {c}/{t}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(item);
    }
    let max = 2;
    if list.len() > max {
        let more = list.len() - max;
        list.truncate(max);
        return format!("{} + {more} more...", list.join(", "));
    }
    list.join(", ")
}

fn targets_cell(o: &Value) -> Value {
    let specs = items(&metrics_of(o));
    let statuses = if is_v1(o) {
        match o["status"]["currentCPUUtilizationPercentage"].as_i64() {
            Some(c) => vec![
                json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": c}}}),
            ],
            None => Vec::new(),
        }
    } else {
        items(&o["status"]["currentMetrics"])
    };
    json!(format_metrics(&specs, &statuses))
}

static HPA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Reference", kind: "string", format: "", description: "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.", priority: 0, cell: |o| json!(format!("{}/{}", s(&o["spec"]["scaleTargetRef"], "kind"), s(&o["spec"]["scaleTargetRef"], "name"))) },
        Column { name: "Targets", kind: "string", format: "", description: "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.", priority: 0, cell: targets_cell },
        Column { name: "MinPods", kind: "string", format: "", description: "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.", priority: 0, cell: |o| json!(o["spec"]["minReplicas"].as_i64().map(|m| m.to_string()).unwrap_or_else(|| "<unset>".into())) },
        Column { name: "MaxPods", kind: "string", format: "", description: "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.", priority: 0, cell: |o| json!(o["spec"]["maxReplicas"].as_i64().unwrap_or(0)) },
        Column { name: "Replicas", kind: "string", format: "", description: "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.", priority: 0, cell: |o| json!(o["status"]["currentReplicas"].as_i64().unwrap_or(0)) },
        age_column(),
    ]
});

impl Strategy for HorizontalPodAutoscalerStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn default(&self, obj: &mut Value) {
        let v1 = is_v1(obj);
        let Some(spec) = helpers::obj_mut(obj, "spec") else {
            return;
        };
        if v1 {
            set_default(spec, "minReplicas", json!(1));
            // Stored as v2 upstream, an unset target reads back as v2's default.
            set_default(
                spec,
                "targetCPUUtilizationPercentage",
                json!(DEFAULT_CPU_UTILIZATION),
            );
        } else {
            default_v2(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let status = if is_v1(obj) {
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        } else {
            json!({"desiredReplicas": 0})
        };
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), status);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_hpa(obj, 1)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let lower = if old["spec"]["minReplicas"].as_i64() == Some(0) {
            0
        } else {
            1
        };
        validate_hpa(new, lower)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&HPA_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}})
    }

    #[test]
    fn v2_defaults() {
        let mut o = v2();
        o["spec"]["behavior"] = json!({"scaleDown": {"stabilizationWindowSeconds": 60}});
        HorizontalPodAutoscalerStrategy.default(&mut o);
        HorizontalPodAutoscalerStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["minReplicas"], 1);
        assert_eq!(
            o["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(
            o["spec"]["behavior"]["scaleUp"]["policies"][0],
            json!({"type": "Pods", "value": 4, "periodSeconds": 15})
        );
        assert_eq!(
            o["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"],
            0
        );
        assert_eq!(
            o["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            60
        );
        assert_eq!(o["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
        assert_eq!(o["status"], json!({"desiredReplicas": 0}));
        assert!(HorizontalPodAutoscalerStrategy.validate(&o).is_empty());
        let cells: Vec<Value> = HPA_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[1], "Deployment/web");
        assert_eq!(cells[2], "cpu: <unknown>/80%");
        assert_eq!(cells[3], "1");
        assert_eq!(cells[4], 5);
        assert_eq!(cells[5], 0);
        let mut plain = v2();
        HorizontalPodAutoscalerStrategy.default(&mut plain);
        assert!(plain["spec"]["behavior"].is_null());
    }

    #[test]
    fn v1_defaults_and_cells() {
        let mut o = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}});
        HorizontalPodAutoscalerStrategy.default(&mut o);
        HorizontalPodAutoscalerStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["minReplicas"], 1);
        assert_eq!(o["spec"]["targetCPUUtilizationPercentage"], 80);
        assert!(o["spec"]["metrics"].is_null());
        assert!(HorizontalPodAutoscalerStrategy.validate(&o).is_empty());
        o["status"]["currentCPUUtilizationPercentage"] = json!(40);
        assert_eq!(targets_cell(&o), "cpu: 40%/80%");
        o["spec"]["targetCPUUtilizationPercentage"] = json!(0);
        let errs = HorizontalPodAutoscalerStrategy.validate(&o);
        assert_eq!(
            errs[0].field,
            "spec.metrics[0].resource.target.averageUtilization"
        );
    }

    #[test]
    fn validation() {
        let mut o = v2();
        o["spec"]["minReplicas"] = json!(6);
        o["spec"]["scaleTargetRef"] = json!({"kind": "Deployment"});
        o["spec"]["metrics"] = json!([{"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]);
        o["spec"]["behavior"] =
            json!({"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 4000}]}});
        let got: Vec<(String, String)> = HorizontalPodAutoscalerStrategy
            .validate(&o)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "spec.maxReplicas".into(),
                    "Invalid value: 5: must be greater than or equal to `minReplicas`".into()
                ),
                ("spec.scaleTargetRef.name".into(), "Required value".into()),
                (
                    "spec.metrics[0].pods".into(),
                    "Required value: must populate information for the given metric source".into()
                ),
                (
                    "spec.behavior.scaleUp.policies[0].value".into(),
                    "Invalid value: 0: must be greater than zero".into()
                ),
                (
                    "spec.behavior.scaleUp.policies[0].periodSeconds".into(),
                    "Invalid value: 4000: must be less than or equal to 1800".into()
                ),
            ]
        );
        let mut z = v2();
        z["spec"]["minReplicas"] = json!(0);
        z["spec"]["maxReplicas"] = json!(0);
        let got: Vec<String> = HorizontalPodAutoscalerStrategy
            .validate(&z)
            .iter()
            .map(|e| e.message())
            .collect();
        assert_eq!(
            got[0],
            "Invalid value: 0: must be greater than or equal to 1"
        );
        assert_eq!(got[1], "Invalid value: 0: must be greater than 0");
    }

    #[test]
    fn metrics_format() {
        let specs = vec![
            json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}),
            json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}),
            json!({"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "10"}}}),
        ];
        let statuses = vec![json!({"type": "Pods", "pods": {"current": {"averageValue": "500"}}})];
        assert_eq!(
            format_metrics(&specs, &statuses),
            "500/1k, memory: <unknown>/100Mi + 1 more..."
        );
        assert_eq!(format_metrics(&[], &[]), "<none>");
    }
}
