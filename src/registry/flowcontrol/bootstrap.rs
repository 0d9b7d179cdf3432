//! The configuration objects every kube-apiserver keeps (upstream's
//! bootstrap `default.go`): mandatory ones (`exempt`, `catch-all`), which
//! are recreated when deleted, and suggested ones, created when missing.
//! Each carries `apf.kubernetes.io/autoupdate-spec: "true"`; while it does,
//! the server puts the spec back to the one below.

use serde_json::{json, Value};

pub const AUTOUPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

const GROUP_ALL: &str = "*";

fn meta(name: &str) -> Value {
    json!({"name": name, "annotations": {AUTOUPDATE: "true"}})
}

fn level(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": meta(name),
        "spec": spec,
    })
}

fn queued(shares: i32, lendable: i32, queues: i32, hand: i32) -> Value {
    json!({"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares,
        "lendablePercent": lendable,
        "limitResponse": {"type": "Queue", "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": 50}},
    }})
}

fn schema(
    name: &str,
    level: &str,
    precedence: i32,
    distinguisher: Option<&str>,
    rules: Value,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": [rules],
    });
    if let Some(d) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": d});
    }
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": meta(name),
        "spec": spec,
    })
}

fn groups(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"kind": "Group", "group": {"name": n}}))
        .collect()
}

fn users(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"kind": "User", "user": {"name": n}}))
        .collect()
}

fn kube_system_service_accounts() -> Value {
    json!({"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "kube-system"}})
}

fn everything() -> (Value, Value) {
    (
        json!([{"verbs": ["*"], "apiGroups": [GROUP_ALL], "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]),
        json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    )
}

fn all_of(subjects: Value) -> Value {
    let (resource_rules, non_resource_rules) = everything();
    json!({"subjects": subjects, "resourceRules": resource_rules, "nonResourceRules": non_resource_rules})
}

/// `exempt` and `catch-all`, of both kinds: always present.
pub fn mandatory() -> Vec<Value> {
    vec![
        level(
            "catch-all",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0, "limitResponse": {"type": "Reject"}}}),
        ),
        level(
            "exempt",
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
        schema(
            "exempt",
            "exempt",
            1,
            None,
            all_of(groups(&["system:masters"])),
        ),
        schema(
            "catch-all",
            "catch-all",
            10000,
            Some("ByUser"),
            all_of(groups(&["system:unauthenticated", "system:authenticated"])),
        ),
    ]
}

/// The suggested levels and schemas, created when missing.
pub fn suggested() -> Vec<Value> {
    let nodes = groups(&["system:nodes"]);
    let mut leader_subjects = users(&["system:kube-controller-manager", "system:kube-scheduler"]);
    if let Some(a) = leader_subjects.as_array_mut() {
        a.push(kube_system_service_accounts());
    }
    vec![
        level("system", queued(30, 33, 64, 6)),
        level("node-high", queued(40, 25, 64, 6)),
        level("leader-election", queued(10, 0, 16, 4)),
        level("workload-high", queued(40, 50, 128, 6)),
        level("workload-low", queued(100, 90, 128, 6)),
        level("global-default", queued(20, 50, 128, 6)),
        schema(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            all_of(nodes.clone()),
        ),
        schema(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!({"subjects": nodes, "resourceRules": [
                {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"], "namespaces": ["*"], "clusterScope": true},
                {"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "namespaces": ["*"]},
            ]}),
        ),
        schema(
            "probes",
            "exempt",
            2,
            None,
            json!({"subjects": groups(&["system:unauthenticated", "system:authenticated"]),
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
        ),
        schema(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!({"subjects": leader_subjects, "resourceRules": [
                {"verbs": ["get", "create", "update"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "namespaces": ["*"]},
            ]}),
        ),
        schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(users(&["system:kube-controller-manager"])),
        ),
        schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(users(&["system:kube-scheduler"])),
        ),
        schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            all_of(json!([kube_system_service_accounts()])),
        ),
        schema(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            all_of(groups(&["system:serviceaccounts"])),
        ),
        schema(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            all_of(groups(&["system:unauthenticated", "system:authenticated"])),
        ),
    ]
}
