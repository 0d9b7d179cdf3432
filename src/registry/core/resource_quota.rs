//! ResourceQuota (upstream's pkg/registry/core/resourcequota and
//! ValidateResourceQuota*): hard limits per resource name and the scopes that
//! select what they count; the status is the quota controller's, never the
//! writer's.

use serde_json::{json, Value};

use super::{
    is_hugepages, resource_quantity_value, validate_resource_name, STANDARD_QUOTA_RESOURCES,
};
use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ResourceQuotaStrategy;

const QUOTA_SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

fn validate_quota_resources(m: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(m) = m.as_object() {
        for (k, v) in m {
            let p = format!("{path}[{k}]");
            validate_resource_name(k, &p, errs);
            if !k.contains('/')
                && !STANDARD_QUOTA_RESOURCES.contains(&k.as_str())
                && !is_hugepages(k)
            {
                errs.push(FieldError::invalid(
                    p.clone(),
                    json!(k),
                    "must be a standard resource for quota",
                ));
            }
            resource_quantity_value(k, v, &p, errs);
        }
    }
}

fn validate_resource_quota(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    validate_quota_resources(&spec["hard"], "spec.hard", &mut errs);
    let scopes = kh::strings(&spec["scopes"]);
    for sc in &scopes {
        if !QUOTA_SCOPES.contains(&sc.as_str()) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                spec["scopes"].clone(),
                "unsupported scope",
            ));
        }
    }
    let has = |s: &str| scopes.iter().any(|x| x == s);
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if has(a) && has(b) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                spec["scopes"].clone(),
                "conflicting scopes",
            ));
        }
    }
    for (i, e) in kh::items(&spec["scopeSelector"]["matchExpressions"])
        .iter()
        .enumerate()
    {
        let p = format!("spec.scopeSelector.matchExpressions[{i}]");
        let sn = kh::s(e, "scopeName");
        if !QUOTA_SCOPES.contains(&sn) {
            errs.push(FieldError::invalid(
                format!("{p}.scopeName"),
                json!(sn),
                "unsupported scope",
            ));
        }
        let values = kh::strings(&e["values"]);
        match kh::s(e, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{p}.values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.values"),
                        e["values"].clone(),
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                json!(other),
                "not a valid selector operator",
            )),
        }
    }
    validate_quota_resources(&obj["status"]["hard"], "status.hard", &mut errs);
    validate_quota_resources(&obj["status"]["used"], "status.used", &mut errs);
    errs
}

/// The Request and Limit cells: `resource: used/hard`, limits.* in the second.
fn quota_cells(o: &Value) -> (String, String) {
    let hard = o["status"]["hard"].as_object().cloned().unwrap_or_default();
    let (mut req, mut lim) = (Vec::new(), Vec::new());
    for (r, h) in &hard {
        let used = o["status"]["used"]
            .get(r.as_str())
            .map(kh::quantity_str)
            .unwrap_or_else(|| "0".into());
        let text = format!("{r}: {used}/{}", kh::quantity_str(h));
        if r.split('.').next() == Some("limits") && r.contains('.') {
            lim.push(text);
        } else {
            req.push(text);
        }
    }
    (req.join(", "), lim.join(", "))
}

static QUOTA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Request", kind: "string", format: "", description: "Request represents a minimum amount of cpu/memory that a container may consume.", priority: 0, cell: |o| json!(quota_cells(o).0) },
        Column { name: "Limit", kind: "string", format: "", description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", priority: 0, cell: |o| json!(quota_cells(o).1) },
        age_column(),
    ]
});

impl Strategy for ResourceQuotaStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_resource_quota(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let set = |v: &Value| {
            let mut s = kh::strings(&v["spec"]["scopes"]);
            s.sort();
            s.dedup();
            s
        };
        if set(new) != set(old) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                new["spec"]["scopes"].clone(),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&QUOTA_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    #[test]
    fn resource_quotas() {
        let mut o = json!({"spec": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"}}, "status": {"hard": {"x": "1"}}});
        ResourceQuotaStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"], json!({}));
        assert!(ResourceQuotaStrategy.validate(&o).is_empty());
        let bad = json!({"spec": {"hard": {"pods": "1.5", "foo": "1", "cpu": "-1"}, "scopes": ["BestEffort", "NotBestEffort"]}});
        assert_eq!(
            msgs(&ResourceQuotaStrategy.validate(&bad)),
            [
                (
                    "spec.hard[cpu]".to_string(),
                    "Invalid value: \"-1\": must be greater than or equal to 0".to_string()
                ),
                (
                    "spec.hard[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource type or fully qualified"
                        .into()
                ),
                (
                    "spec.hard[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource for quota".into()
                ),
                (
                    "spec.hard[pods]".into(),
                    "Invalid value: \"1.5\": must be an integer".into()
                ),
                (
                    "spec.scopes".into(),
                    "Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes".into()
                ),
            ]
        );
        let with_status = json!({"status": {"hard": {"pods": "10", "limits.cpu": "2", "cpu": "1"}, "used": {"pods": "3"}}});
        let c = cells(&QUOTA_COLUMNS, &with_status);
        assert_eq!(c[1], "cpu: 0/1, pods: 3/10");
        assert_eq!(c[2], "limits.cpu: 0/2");
        let mut new = o.clone();
        new["spec"]["scopes"] = json!(["BestEffort"]);
        assert_eq!(
            ResourceQuotaStrategy.validate_update(&new, &o)[0].field,
            "spec.scopes"
        );
    }
}
