//! Unit tests of RBAC: rule matching, bindings and the index, aggregation,
//! covering and escalation messages.

use serde_json::{json, Value};

use super::*;
use crate::auth::authorizer::{Attributes, Decision};
use crate::auth::UserInfo;
use crate::auth::{AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP};

fn rule(v: Value) -> PolicyRule {
    PolicyRule::from_json(&v)
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn res<'a>(
    u: &'a UserInfo,
    verb: &'a str,
    ns: &'a str,
    resource: &'a str,
    sub: &'a str,
    name: &'a str,
) -> Attributes<'a> {
    Attributes {
        user: Some(u),
        verb,
        resource_request: true,
        api_group: "",
        namespace: ns,
        resource,
        subresource: sub,
        name,
        ..Default::default()
    }
}

#[test]
fn rule_matching() {
    let u = user("u", &[]);
    let r = rule(
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]}),
    );
    assert!(r.allows(&res(&u, "get", "n", "pods", "", "p")));
    assert!(r.allows(&res(&u, "list", "n", "pods", "", "")));
    assert!(!r.allows(&res(&u, "delete", "n", "pods", "", "p")));
    assert!(r.allows(&res(&u, "get", "n", "pods", "log", "p")));
    assert!(!r.allows(&res(&u, "get", "n", "pods", "exec", "p")));
    assert!(!r.allows(&res(&u, "get", "n", "secrets", "", "")));
    let mut apps = res(&u, "get", "n", "pods", "", "p");
    apps.api_group = "apps";
    assert!(!r.allows(&apps));

    let star = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
    assert!(star.allows(&apps));
    assert!(star.allows(&res(&u, "escalate", "", "clusterroles", "", "x")));

    let any_status = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}));
    assert!(any_status.allows(&res(&u, "get", "n", "pods", "status", "p")));
    assert!(any_status.allows(&res(&u, "get", "n", "services", "status", "s")));
    assert!(!any_status.allows(&res(&u, "get", "n", "pods", "", "p")));
    assert!(!any_status.allows(&res(&u, "get", "n", "pods", "log", "p")));
    // upstream has no `resource/*` wildcard: it names a subresource "*".
    let pods_any = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}));
    assert!(!pods_any.allows(&res(&u, "get", "n", "pods", "log", "p")));

    let named = rule(
        json!({"verbs": ["get", "list", "update"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cm1"]}),
    );
    assert!(named.allows(&res(&u, "get", "n", "configmaps", "", "cm1")));
    assert!(!named.allows(&res(&u, "get", "n", "configmaps", "", "cm2")));
    // A list has no name, so resourceNames never allow it.
    assert!(!named.allows(&res(&u, "list", "n", "configmaps", "", "")));

    let urls =
        rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*", "/logs*"]}));
    let path = |p: &'static str| Attributes {
        user: Some(&u),
        verb: "get",
        path: p,
        ..Default::default()
    };
    assert!(urls.allows(&path("/healthz")));
    assert!(!urls.allows(&path("/healthz/etcd")));
    assert!(urls.allows(&path("/apis/apps/v1")));
    assert!(!urls.allows(&path("/apis")));
    assert!(urls.allows(&path("/logs")));
    assert!(urls.allows(&path("/logs/kube.log")));
    assert!(!urls.allows(&Attributes {
        verb: "post",
        ..path("/healthz")
    }));
    let all = rule(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
    assert!(all.allows(&path("/anything")));
    // A resource rule never allows a path, and the other way round.
    assert!(!star.allows(&path("/healthz")));
    assert!(!all.allows(&res(&u, "get", "n", "pods", "", "")));
}

fn objects() -> Index {
    let crs = vec![
        json!({"metadata": {"name": "view"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
        json!({"metadata": {"name": "metrics"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}),
        json!({"metadata": {"name": "public"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/version"]}]}),
    ];
    let roles = vec![
        json!({"metadata": {"name": "pod-reader", "namespace": "ns1"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
    ];
    let crbs = vec![
        json!({"metadata": {"name": "public"}, "roleRef": {"kind": "ClusterRole", "name": "public"}, "subjects": [
            {"kind": "Group", "name": AUTHENTICATED_GROUP}, {"kind": "Group", "name": UNAUTHENTICATED_GROUP}]}),
        json!({"metadata": {"name": "carol-metrics"}, "roleRef": {"kind": "ClusterRole", "name": "metrics"}, "subjects": [{"kind": "User", "name": "carol"}]}),
        json!({"metadata": {"name": "dangling"}, "roleRef": {"kind": "ClusterRole", "name": "gone"}, "subjects": [{"kind": "User", "name": "carol"}]}),
    ];
    let rbs = vec![
        json!({"metadata": {"name": "alice-pods", "namespace": "ns1"}, "roleRef": {"kind": "Role", "name": "pod-reader"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"metadata": {"name": "bot-view", "namespace": "ns1"}, "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}),
        json!({"metadata": {"name": "bob-metrics", "namespace": "ns1"}, "roleRef": {"kind": "ClusterRole", "name": "metrics"}, "subjects": [{"kind": "User", "name": "bob"}]}),
    ];
    Index::build(&crs, &roles, &crbs, &rbs)
}

#[test]
fn bindings_grant_where_they_are() {
    let idx = objects();
    let alice = user("alice", &[AUTHENTICATED_GROUP]);
    assert_eq!(
        idx.authorize(&res(&alice, "list", "ns1", "pods", "", "")),
        Decision::Allow(
            "RBAC: allowed by RoleBinding \"alice-pods/ns1\" of Role \"pod-reader\" to User \"alice\"".into()
        )
    );
    assert_eq!(
        idx.authorize(&res(&alice, "list", "ns2", "pods", "", "")),
        Decision::NoOpinion
    );
    assert_eq!(
        idx.authorize(&res(&alice, "delete", "ns1", "pods", "", "p")),
        Decision::NoOpinion
    );
    // All namespaces (a cluster-wide list) is not granted by a RoleBinding.
    assert_eq!(
        idx.authorize(&res(&alice, "list", "", "pods", "", "")),
        Decision::NoOpinion
    );

    let bot = user(
        "system:serviceaccount:ns1:bot",
        &["system:serviceaccounts", AUTHENTICATED_GROUP],
    );
    assert_eq!(
        idx.authorize(&res(&bot, "get", "ns1", "pods", "", "p")),
        Decision::Allow(
            "RBAC: allowed by RoleBinding \"bot-view/ns1\" of ClusterRole \"view\" to ServiceAccount \"bot/ns1\"".into()
        )
    );
    let other_bot = user("system:serviceaccount:ns2:bot", &[AUTHENTICATED_GROUP]);
    assert_eq!(
        idx.authorize(&res(&other_bot, "get", "ns1", "pods", "", "p")),
        Decision::NoOpinion
    );

    let path = |u: &'static UserInfo, p: &'static str| Attributes {
        user: Some(u),
        verb: "get",
        path: p,
        ..Default::default()
    };
    let carol: &'static UserInfo = Box::leak(Box::new(user("carol", &[AUTHENTICATED_GROUP])));
    let bob: &'static UserInfo = Box::leak(Box::new(user("bob", &[AUTHENTICATED_GROUP])));
    let anon: &'static UserInfo = Box::leak(Box::new(UserInfo::anonymous()));
    assert_eq!(
        idx.authorize(&path(carol, "/metrics")),
        Decision::Allow("RBAC: allowed by ClusterRoleBinding \"carol-metrics\" of ClusterRole \"metrics\" to User \"carol\"".into())
    );
    // nonResourceURLs only come from ClusterRoleBindings.
    assert_eq!(idx.authorize(&path(bob, "/metrics")), Decision::NoOpinion);
    assert!(matches!(
        idx.authorize(&path(anon, "/healthz")),
        Decision::Allow(_)
    ));
    assert_eq!(idx.authorize(&path(anon, "/metrics")), Decision::NoOpinion);

    let (rules, errors) = idx.rules_for(carol, "ns1");
    assert_eq!(
        errors,
        ["clusterrole.rbac.authorization.k8s.io \"gone\" not found"]
    );
    let (r, n) = rules_json(&rules);
    assert!(r.is_empty());
    assert_eq!(n.len(), 2);
    let (rules, _) = idx.rules_for(&alice, "ns1");
    let (r, _) = rules_json(&rules);
    assert_eq!(
        r,
        vec![json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})]
    );
}

#[test]
fn aggregation_unions_selected_roles() {
    let all = vec![
        json!({"metadata": {"name": "view", "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
               "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}}),
        json!({"metadata": {"name": "b-extra", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
               "rules": [{"verbs": ["get"], "apiGroups": ["x.io"], "resources": ["widgets"]}, {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
        json!({"metadata": {"name": "a-base", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
               "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
        json!({"metadata": {"name": "other"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}),
    ];
    let got = aggregated_rules(&all[0], &all).expect("aggregated");
    assert_eq!(
        got,
        vec![
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            json!({"verbs": ["get"], "apiGroups": ["x.io"], "resources": ["widgets"]}),
        ]
    );
    assert!(aggregated_rules(&all[1], &all).is_none());
}

#[test]
fn covering_and_messages() {
    let owner = vec![
        rule(
            json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/status"]}),
        ),
        rule(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"]}),
        ),
        rule(json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})),
    ];
    let ok = |r: Value| covers(&owner, &[rule(r)]).0;
    assert!(ok(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    ));
    assert!(ok(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]})
    ));
    assert!(ok(
        json!({"verbs": ["list"], "apiGroups": [""], "resources": ["deployments/status"]})
    ));
    assert!(!ok(
        json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]})
    ));
    assert!(!ok(
        json!({"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]})
    ));
    assert!(ok(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]})
    ));
    assert!(!ok(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]})
    ));
    assert!(ok(
        json!({"verbs": ["get"], "nonResourceURLs": ["/apis/apps"]})
    ));
    assert!(!ok(json!({"verbs": ["get"], "nonResourceURLs": ["/api"]})));
    let admin = vec![rule(
        json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
    )];
    assert!(
        covers(
            &admin,
            &[rule(
                json!({"verbs": ["x"], "apiGroups": ["y"], "resources": ["z/w"]})
            )]
        )
        .0
    );
    assert!(
        !covers(
            &admin,
            &[rule(json!({"verbs": ["get"], "nonResourceURLs": ["/x"]}))]
        )
        .0
    );

    let (_, missing) = covers(
        &owner,
        &[rule(
            json!({"verbs": ["get", "delete", "watch"], "apiGroups": [""], "resources": ["pods", "secrets"]}),
        )],
    );
    let mut lines: Vec<String> = compact(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"watch\"]}",
            "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"watch\"]}",
        ]
    );
}

#[test]
fn escalation_message_as_upstream() {
    let idx = objects();
    let alice = user("alice", &["devs", AUTHENTICATED_GROUP]);
    let want = [rule(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
    )];
    assert!(confirm_no_escalation(&idx, &alice, "ns1", &want).is_ok());
    assert_eq!(
        confirm_no_escalation(&idx, &alice, "ns2", &want),
        Err("user \"alice\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}".into())
    );
}
