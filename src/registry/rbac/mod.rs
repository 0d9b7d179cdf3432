//! Strategies of rbac.authorization.k8s.io: Role, ClusterRole, RoleBinding
//! and ClusterRoleBinding (upstream's pkg/registry/rbac,
//! pkg/apis/rbac/v1/defaults.go and pkg/apis/rbac/validation). Names are
//! path segments (`system:controller:foo`).
//!
//! One file per kind, named as upstream's pkg/registry/rbac/<kind>; this
//! module keeps what they share (policy rule validation for the roles,
//! roleRef and subject defaulting, validation and printer columns for the
//! bindings) and re-exports every strategy, so `registry::rbac::RoleStrategy`
//! and the like stay the paths callers use.

mod cluster_role;
mod cluster_role_binding;
mod role;
mod role_binding;
#[cfg(test)]
mod tests;

pub use cluster_role::ClusterRoleStrategy;
pub use cluster_role_binding::ClusterRoleBindingStrategy;
pub use role::RoleStrategy;
pub use role_binding::RoleBindingStrategy;

use serde_json::{json, Value};

use super::helpers::{self, invalid_raw, items, s, strings};
use super::strategy::{age_column, name_column, Column};
use super::validation::{self, FieldError};

pub const GROUP: &str = "rbac.authorization.k8s.io";

/// upstream's ValidatePolicyRule.
fn validate_policy_rule(rule: &Value, namespaced: bool, path: &str, errs: &mut Vec<FieldError>) {
    if strings(&rule["verbs"]).is_empty() {
        errs.push(FieldError::required(
            format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = &rule["nonResourceURLs"];
    if !strings(urls).is_empty() {
        if namespaced {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                urls.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        let resourceful = ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| !items(&rule[*k]).is_empty());
        if resourceful {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                urls.clone(),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return;
    }
    if items(&rule["apiGroups"]).is_empty() {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if items(&rule["resources"]).is_empty() {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
}

fn validate_rules(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, r) in items(&obj["rules"]).iter().enumerate() {
        validate_policy_rule(r, namespaced, &format!("rules[{i}]"), &mut errs);
    }
    errs
}

/// SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding and SetDefaults_Subject.
fn default_binding(obj: &mut Value) {
    if let Some(rr) = helpers::obj_mut(obj, "roleRef") {
        if rr
            .get("apiGroup")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            rr.insert("apiGroup".into(), json!(GROUP));
        }
    }
    if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
        for sub in subjects.iter_mut().filter_map(Value::as_object_mut) {
            let empty = sub
                .get("apiGroup")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty();
            let kind = sub.get("kind").and_then(Value::as_str).unwrap_or("");
            if empty && (kind == "User" || kind == "Group") {
                sub.insert("apiGroup".into(), json!(GROUP));
            }
        }
    }
}

/// upstream's ValidateRoleBindingSubject.
fn validate_subject(sub: &Value, namespaced: bool, path: &str, errs: &mut Vec<FieldError>) {
    let name = s(sub, "name");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    let api_group = s(sub, "apiGroup");
    match s(sub, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for m in validation::dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(format!("{path}.name"), json!(name), m));
                }
            }
            if !api_group.is_empty() {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    json!(api_group),
                    &[""],
                ));
            }
            if !namespaced && s(sub, "namespace").is_empty() {
                errs.push(FieldError::required(format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if api_group != GROUP {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    json!(api_group),
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.kind"),
            json!(other),
            &["ServiceAccount", "User", "Group"],
        )),
    }
}

fn validate_binding(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rr = &obj["roleRef"];
    let group = s(rr, "apiGroup");
    if group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            json!(group),
            &[GROUP],
        ));
    }
    let kind = s(rr, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported(
            "roleRef.kind",
            json!(kind),
            kinds,
        ));
    }
    let name = s(rr, "name");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for m in validation::path_segment_name(name) {
            errs.push(FieldError::invalid("roleRef.name", json!(name), m));
        }
    }
    for (i, sub) in items(&obj["subjects"]).iter().enumerate() {
        validate_subject(sub, namespaced, &format!("subjects[{i}]"), &mut errs);
    }
    errs
}

/// The roleRef as Go's `%#v` prints an rbac.RoleRef.
fn go_role_ref(rr: &Value) -> String {
    format!(
        "rbac.RoleRef{{APIGroup:{:?}, Kind:{:?}, Name:{:?}}}",
        s(rr, "apiGroup"),
        s(rr, "kind"),
        s(rr, "name")
    )
}

fn validate_binding_update(new: &Value, old: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = validate_binding(new, namespaced);
    let key = |v: &Value| {
        let rr = &v["roleRef"];
        (
            s(rr, "apiGroup").to_string(),
            s(rr, "kind").to_string(),
            s(rr, "name").to_string(),
        )
    };
    if key(new) != key(old) {
        errs.push(invalid_raw(
            "roleRef",
            &go_role_ref(&new["roleRef"]),
            "cannot change roleRef",
        ));
    }
    errs
}

/// rbac.SubjectsStrings: users, groups and service accounts of a binding.
fn subjects_of(o: &Value, kind: &str) -> Value {
    let list: Vec<String> = items(&o["subjects"])
        .iter()
        .filter(|sub| s(sub, "kind") == kind)
        .map(|sub| {
            if kind == "ServiceAccount" {
                format!("{}/{}", s(sub, "namespace"), s(sub, "name"))
            } else {
                s(sub, "name").to_string()
            }
        })
        .collect();
    json!(list.join(", "))
}

fn binding_columns(which: &'static str, role_description: &'static str) -> Vec<Column> {
    let (users, groups, sas): (&'static str, &'static str, &'static str) = if which == "roleBinding"
    {
        (
            "Users in the roleBinding",
            "Groups in the roleBinding",
            "ServiceAccounts in the roleBinding",
        )
    } else {
        (
            "Users in the clusterRoleBinding",
            "Groups in the clusterRoleBinding",
            "ServiceAccounts in the clusterRoleBinding",
        )
    };
    vec![
        name_column(),
        Column {
            name: "Role",
            kind: "string",
            format: "",
            description: role_description,
            priority: 0,
            cell: |o| {
                json!(format!(
                    "{}/{}",
                    s(&o["roleRef"], "kind"),
                    s(&o["roleRef"], "name")
                ))
            },
        },
        age_column(),
        Column {
            name: "Users",
            kind: "string",
            format: "",
            description: users,
            priority: 1,
            cell: |o| subjects_of(o, "User"),
        },
        Column {
            name: "Groups",
            kind: "string",
            format: "",
            description: groups,
            priority: 1,
            cell: |o| subjects_of(o, "Group"),
        },
        Column {
            name: "ServiceAccounts",
            kind: "string",
            format: "",
            description: sas,
            priority: 1,
            cell: |o| subjects_of(o, "ServiceAccount"),
        },
    ]
}
