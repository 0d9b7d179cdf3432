//! Strategies of rbac.authorization.k8s.io: Role, ClusterRole, RoleBinding
//! and ClusterRoleBinding (upstream's pkg/registry/rbac,
//! pkg/apis/rbac/v1/defaults.go and pkg/apis/rbac/validation). Names are
//! path segments (`system:controller:foo`).

use serde_json::{json, Value};

use super::helpers::{self, invalid_raw, items, s, strings};
use super::meta::NameRule;
use super::strategy::{age_column, name_column, Column, Strategy};
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

static ROLE_BINDING_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    binding_columns("roleBinding", "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.")
});

static CLUSTER_ROLE_BINDING_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(
    || {
        binding_columns("clusterRoleBinding", "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.")
    },
);

// ---- Role ----

pub struct RoleStrategy;

impl Strategy for RoleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_rules(obj, true)
    }
}

// ---- ClusterRole ----

pub struct ClusterRoleStrategy;

impl Strategy for ClusterRoleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_rules(obj, false);
        let agg = &obj["aggregationRule"];
        if !agg.is_null() {
            let selectors = items(&agg["clusterRoleSelectors"]);
            if selectors.is_empty() {
                errs.push(FieldError::required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                ));
            }
            for (i, sel) in selectors.iter().enumerate() {
                let p = format!("aggregationRule.clusterRoleSelectors[{i}]");
                let sel_errs = helpers::validate_label_selector(sel, &p);
                let unusable = helpers::selector_matches(sel, &json!({})).is_none();
                errs.extend(sel_errs);
                if unusable {
                    errs.push(FieldError::invalid(
                        p,
                        sel.clone(),
                        "invalid label selector.",
                    ));
                }
            }
        }
        errs
    }
}

// ---- RoleBinding ----

pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn default(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_binding(obj, true)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_binding_update(new, old, true)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&ROLE_BINDING_COLUMNS)
    }
}

// ---- ClusterRoleBinding ----

pub struct ClusterRoleBindingStrategy;

impl Strategy for ClusterRoleBindingStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn default(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_binding(obj, false)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_binding_update(new, old, false)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CLUSTER_ROLE_BINDING_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_rules() {
        let ok = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        assert!(RoleStrategy.validate(&ok).is_empty());
        let bad = json!({"rules": [{"apiGroups": [""], "resources": ["pods"]}, {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, {"verbs": ["get"]}]});
        let got: Vec<(String, String)> = RoleStrategy
            .validate(&bad)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                ("rules[0].verbs".into(), "Required value: verbs must contain at least one value".into()),
                ("rules[1].nonResourceURLs".into(), "Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs".into()),
                ("rules[2].apiGroups".into(), "Required value: resource rules must supply at least one api group".into()),
                ("rules[2].resources".into(), "Required value: resource rules must supply at least one resource".into()),
            ]
        );
        let cr = json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]});
        assert!(ClusterRoleStrategy.validate(&cr).is_empty());
        let mixed = json!({"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]});
        assert_eq!(
            ClusterRoleStrategy.validate(&mixed)[0].detail,
            "rules cannot apply to both regular resources and non-resource URLs"
        );
        let agg = json!({"aggregationRule": {"clusterRoleSelectors": []}});
        assert_eq!(
            ClusterRoleStrategy.validate(&agg)[0].field,
            "aggregationRule.clusterRoleSelectors"
        );
        assert_eq!(RoleStrategy.name_rule(), NameRule::PathSegment);
    }

    #[test]
    fn binding_defaults_validation_cells() {
        let mut o = json!({"roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [
            {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "bot", "namespace": "ci"}]});
        RoleBindingStrategy.default(&mut o);
        assert_eq!(o["roleRef"]["apiGroup"], GROUP);
        assert_eq!(o["subjects"][0]["apiGroup"], GROUP);
        assert_eq!(o["subjects"][1]["apiGroup"], GROUP);
        assert!(o["subjects"][2]["apiGroup"].is_null());
        assert!(RoleBindingStrategy.validate(&o).is_empty());
        let cells: Vec<Value> = ROLE_BINDING_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[1], "ClusterRole/view");
        assert_eq!(cells[3], "alice");
        assert_eq!(cells[4], "devs");
        assert_eq!(cells[5], "ci/bot");

        let mut new = o.clone();
        new["roleRef"]["name"] = json!("edit");
        let errs = RoleBindingStrategy.validate_update(&new, &o);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "roleRef");
        assert_eq!(errs[0].message(), "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef");

        let bad = json!({"roleRef": {"apiGroup": "x", "kind": "Role", "name": ""}, "subjects": [
            {"kind": "Robot", "name": "r"}, {"kind": "ServiceAccount", "name": "sa", "apiGroup": "x"}, {"kind": "User", "name": "u", "apiGroup": ""}]});
        let got: Vec<(String, String)> = ClusterRoleBindingStrategy
            .validate(&bad)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                ("roleRef.apiGroup".into(), "Unsupported value: \"x\": supported values: \"rbac.authorization.k8s.io\"".into()),
                ("roleRef.kind".into(), "Unsupported value: \"Role\": supported values: \"ClusterRole\"".into()),
                ("roleRef.name".into(), "Required value".into()),
                ("subjects[0].kind".into(), "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"".into()),
                ("subjects[1].apiGroup".into(), "Unsupported value: \"x\": supported values: \"\"".into()),
                ("subjects[1].namespace".into(), "Required value".into()),
                ("subjects[2].apiGroup".into(), "Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"".into()),
            ]
        );
    }
}
