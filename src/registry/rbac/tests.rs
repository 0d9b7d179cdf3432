//! The rbac strategies' tests: rule validation across Role and ClusterRole,
//! binding defaults, validation and cells across both binding kinds.

use serde_json::{json, Value};

use super::role_binding::ROLE_BINDING_COLUMNS;
use super::*;
use crate::registry::meta::NameRule;
use crate::registry::strategy::Strategy;

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
            (
                "rules[0].verbs".into(),
                "Required value: verbs must contain at least one value".into()
            ),
            (
                "rules[1].nonResourceURLs".into(),
                "Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs"
                    .into()
            ),
            (
                "rules[2].apiGroups".into(),
                "Required value: resource rules must supply at least one api group".into()
            ),
            (
                "rules[2].resources".into(),
                "Required value: resource rules must supply at least one resource".into()
            ),
        ]
    );
    let cr = json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]});
    assert!(ClusterRoleStrategy.validate(&cr).is_empty());
    let mixed =
        json!({"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]});
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
