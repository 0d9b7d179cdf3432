//! Strategy of apiregistration.k8s.io: APIService (upstream's
//! kube-aggregator pkg/registry/apiservice and
//! pkg/apis/apiregistration/validation), with its Table columns as
//! `kubectl get apiservices` prints them: NAME, SERVICE, AVAILABLE, AGE.

use serde_json::{json, Value};

use super::meta::NameRule;
use super::strategy::{age_column, name_column, Column, Strategy};
use super::validation::{self, FieldError};

pub struct ApiServiceStrategy;

/// `Local`, or the `namespace/name` of the Service behind an aggregated API.
pub fn service_cell(o: &Value) -> Value {
    match o["spec"]["service"].as_object() {
        Some(s) => json!(format!(
            "{}/{}",
            s.get("namespace").and_then(Value::as_str).unwrap_or(""),
            s.get("name").and_then(Value::as_str).unwrap_or("")
        )),
        None => json!("Local"),
    }
}

/// `True`, `False (Reason)`, or `Unknown` without an Available condition.
pub fn available_cell(o: &Value) -> Value {
    let cond = o["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"));
    let Some(c) = cond else {
        return json!("Unknown");
    };
    let status = c["status"].as_str().unwrap_or("Unknown");
    let reason = c["reason"].as_str().unwrap_or("");
    if status == "True" || reason.is_empty() {
        json!(status)
    } else {
        json!(format!("{status} ({reason})"))
    }
}

static COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Service",
            kind: "string",
            format: "",
            description: "The reference to the service that hosts this API endpoint.",
            priority: 0,
            cell: service_cell,
        },
        Column {
            name: "Available",
            kind: "string",
            format: "",
            description: "Whether this service is available.",
            priority: 0,
            cell: available_cell,
        },
        age_column(),
    ]
});

pub const LOCAL_REASON: &str = "Local";
pub const LOCAL_MESSAGE: &str = "Local APIServices are always available";

impl Strategy for ApiServiceStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    /// upstream checks the name as a path segment, then as `version.group`.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn default(&self, obj: &mut Value) {
        if let Some(svc) = obj["spec"]["service"].as_object_mut() {
            svc.entry("port").or_insert(json!(443));
        }
        // `service` is a pointer and `group` omitempty in Go: a null or
        // empty one is not written (nor owned by the writer).
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            if spec.get("service").is_some_and(Value::is_null) {
                spec.remove("service");
            }
            if spec.get("group").is_some_and(|g| g == "") {
                spec.remove("group");
            }
        }
    }

    /// A local APIService (no `service`) is available from its creation,
    /// as upstream marks it in PrepareForCreate.
    fn prepare_for_create(&self, obj: &mut Value) {
        if obj["spec"]["service"].is_null() {
            let now = super::meta::now_rfc3339();
            if let Some(m) = obj.as_object_mut() {
                m.insert(
                    "status".into(),
                    json!({"conditions": [{"type": "Available", "status": "True",
                        "lastTransitionTime": now, "reason": LOCAL_REASON, "message": LOCAL_MESSAGE}]}),
                );
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&COLUMNS)
    }
}

/// upstream's ValidateAPIService.
pub fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    let group = spec["group"].as_str().unwrap_or("");
    let version = spec["version"].as_str().unwrap_or("");
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    let required = format!("{version}.{group}");
    if name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for m in validation::dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", json!(group), m));
        }
    }
    for m in validation::dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", json!(version), m));
    }
    let gpm = spec["groupPriorityMinimum"].as_i64().unwrap_or(0);
    if gpm <= 0 || gpm > 20000 {
        errs.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            json!(gpm),
            "must be positive and less than 20000",
        ));
    }
    let vp = spec["versionPriority"].as_i64().unwrap_or(0);
    if vp <= 0 || vp > 1000 {
        errs.push(FieldError::invalid(
            "spec.versionPriority",
            json!(vp),
            "must be positive and less than 1000",
        ));
    }
    let ca_len = spec["caBundle"].as_str().map_or(0, str::len);
    let insecure = spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false);
    let Some(svc) = spec["service"].as_object() else {
        if ca_len > 0 {
            errs.push(FieldError::invalid(
                "spec.caBundle",
                json!(format!("{} bytes", ca_len / 4 * 3)),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(FieldError::invalid(
                "spec.insecureSkipTLSVerify",
                json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    for field in ["namespace", "name"] {
        if svc
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            errs.push(FieldError::required(format!("spec.service.{field}"), ""));
        }
    }
    let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            "spec.service.port",
            json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if insecure && ca_len > 0 {
        errs.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            json!(true),
            "may not be true if caBundle is present",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_as_upstream_prints_them() {
        let local = json!({"spec": {}, "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}});
        assert_eq!(service_cell(&local), "Local");
        assert_eq!(available_cell(&local), "True");
        let remote = json!({"spec": {"service": {"namespace": "kube-system", "name": "w"}}, "status": {"conditions": [{"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck"}]}});
        assert_eq!(service_cell(&remote), "kube-system/w");
        assert_eq!(available_cell(&remote), "False (FailedDiscoveryCheck)");
        assert_eq!(available_cell(&json!({})), "Unknown");
    }

    #[test]
    fn validation() {
        let ok = json!({"metadata": {"name": "v1alpha1.wardle.example.com"}, "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000, "versionPriority": 15, "service": {"namespace": "kube-system", "name": "w", "port": 443}}});
        assert!(validate(&ok).is_empty(), "{:?}", validate(&ok));
        let legacy = json!({"metadata": {"name": "v1."}, "spec": {"group": "", "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1}});
        assert!(validate(&legacy).is_empty());
        let bad = json!({"metadata": {"name": "x"}, "spec": {"group": "g.io", "version": "v1", "groupPriorityMinimum": 0, "versionPriority": 1, "caBundle": "AAAA"}});
        let fields: Vec<String> = validate(&bad).iter().map(|e| e.field.clone()).collect();
        assert_eq!(
            fields,
            [
                "metadata.name",
                "spec.groupPriorityMinimum",
                "spec.caBundle"
            ]
        );
    }
}
