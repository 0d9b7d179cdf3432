//! Unit tests of NodeRestriction: node identity, labels, pod references,
//! PVC status fields, and the plugin run against nodes and pods.

use std::collections::BTreeSet;

use serde_json::json;

use super::persistent_volume_claims::{json_diff, pvc_without_kubelet_fields};
use super::pods::{references_config_maps, references_secrets, MIRROR_POD_ANNOTATION};
use super::*;

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn node_users() {
    let user = |name: &str, groups: &[&str]| UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    assert_eq!(
        node_identity(&user("system:node:n1", &[NODES_GROUP])),
        Some("n1")
    );
    assert_eq!(
        node_identity(&user("system:node:", &[NODES_GROUP])),
        Some("")
    );
    assert_eq!(node_identity(&user("system:node:n1", &[])), None);
    assert_eq!(node_identity(&user("n1", &[NODES_GROUP])), None);
}

#[test]
fn labels_a_kubelet_may_not_set() {
    let modified = set(&[
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "node.kubernetes.io/exclude-from-external-load-balancers",
        "a.node.kubernetes.io/x",
        "kubelet.kubernetes.io/x",
        "example.com/anything",
        "plain",
        "node-restriction.kubernetes.io/pci",
        "example.com.node-restriction.kubernetes.io/fips",
        "node-role.kubernetes.io/control-plane",
        "kubernetes.io/role",
        "foo.k8s.io/bar",
        "k8s.io/bar",
        "notkubernetes.io/x",
    ]);
    assert_eq!(
        forbidden_labels(&modified),
        vec![
            "example.com.node-restriction.kubernetes.io/fips",
            "foo.k8s.io/bar",
            "k8s.io/bar",
            "kubernetes.io/role",
            "node-restriction.kubernetes.io/pci",
            "node-role.kubernetes.io/control-plane",
        ]
    );
}

#[test]
fn labels_changed() {
    let old = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}});
    let new = json!({"metadata": {"labels": {"a": "1", "b": "x", "d": "4"}}});
    assert_eq!(modified_labels(&new, Some(&old)), set(&["b", "c", "d"]));
    assert_eq!(modified_labels(&new, None), set(&["a", "b", "d"]));
    assert!(modified_labels(&json!({}), Some(&json!({"metadata": {"labels": {}}}))).is_empty());
}

#[test]
fn semantic_equality() {
    assert!(semantic_eq(&json!(null), &json!([])));
    assert!(semantic_eq(&json!({"a": []}), &json!({})));
    assert!(!semantic_eq(&json!([{"key": "k"}]), &json!([])));
    assert!(!semantic_eq(&json!({"a": 1}), &json!({"a": 2})));
}

#[test]
fn pod_references() {
    assert!(references_secrets(
        &json!({"imagePullSecrets": [{"name": "s"}]})
    ));
    assert!(references_secrets(
        &json!({"containers": [{"env": [{"name": "e", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]})
    ));
    assert!(references_secrets(
        &json!({"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]})
    ));
    assert!(!references_secrets(
        &json!({"volumes": [{"name": "v", "azureFile": {"secretName": ""}}]})
    ));
    assert!(references_config_maps(
        &json!({"initContainers": [{"envFrom": [{"configMapRef": {"name": "c"}}]}]})
    ));
    assert!(!references_config_maps(
        &json!({"containers": [{"name": "c", "image": "i"}]})
    ));
}

fn kubelet(node: &str) -> UserInfo {
    UserInfo {
        name: format!("{NODE_USER_PREFIX}{node}"),
        groups: vec![NODES_GROUP.into()],
        ..Default::default()
    }
}

/// Runs the plugin as `user`; the refusal's message, if any.
#[allow(clippy::too_many_arguments)]
async fn run(
    env: &crate::admission::common::testing::Env,
    user: &UserInfo,
    op: Operation,
    plural: &str,
    ns: &str,
    name: &str,
    object: Option<Value>,
    old: Option<&Value>,
) -> Option<String> {
    let resource = env.resource("", "v1", plural);
    let mut a = Attributes {
        operation: op,
        resource: &resource,
        subresource: "",
        namespace: ns,
        name,
        object,
        old_object: old,
        user,
        dry_run: false,
        options: json!({}),
    };
    let plugin = NodeRestriction {
        authorizer: Arc::new(crate::auth::authorizer::AlwaysAllow),
    };
    let ctx = Context {
        registries: env.registries.clone(),
    };
    plugin.admit(&mut a, &ctx).await.err().map(|e| e.message)
}

#[tokio::test]
async fn a_kubelet_and_its_node() {
    let env = crate::admission::common::testing::env().await;
    let n1 = kubelet("n1");
    let node = |name: &str, labels: Value| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}});
    assert_eq!(
        run(
            &env,
            &n1,
            Operation::Create,
            "nodes",
            "",
            "n2",
            Some(node("n2", json!({}))),
            None
        )
        .await,
        Some("nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"".into())
    );
    assert_eq!(
        run(&env, &n1, Operation::Create, "nodes", "", "n1", Some(node("n1", json!({"kubernetes.io/role": "x"}))), None).await,
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: kubernetes.io/role".into())
    );
    let own = node("n1", json!({"kubernetes.io/hostname": "n1"}));
    assert_eq!(
        run(
            &env,
            &n1,
            Operation::Create,
            "nodes",
            "",
            "n1",
            Some(own.clone()),
            None
        )
        .await,
        None
    );
    let mut relabeled = own.clone();
    relabeled["metadata"]["labels"]["node-restriction.kubernetes.io/x"] = json!("y");
    assert_eq!(
        run(&env, &n1, Operation::Update, "nodes", "", "n1", Some(relabeled), Some(&own)).await,
        Some("nodes \"n1\" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x".into())
    );
    let mut tainted = own.clone();
    tainted["spec"]["taints"] = json!([{"key": "k", "effect": "NoSchedule"}]);
    assert_eq!(
        run(
            &env,
            &n1,
            Operation::Update,
            "nodes",
            "",
            "n1",
            Some(tainted),
            Some(&own)
        )
        .await,
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints".into())
    );
    // Anyone else, and a node user with no name, are judged otherwise.
    let admin = UserInfo {
        name: "admin".into(),
        ..Default::default()
    };
    assert_eq!(
        run(
            &env,
            &admin,
            Operation::Create,
            "nodes",
            "",
            "n2",
            Some(node("n2", json!({}))),
            None
        )
        .await,
        None
    );
    assert_eq!(
        run(
            &env,
            &kubelet(""),
            Operation::Create,
            "nodes",
            "",
            "n2",
            Some(node("n2", json!({}))),
            None
        )
        .await,
        Some(
            "nodes \"n2\" is forbidden: could not determine node from user \"system:node:\"".into()
        )
    );
}

#[tokio::test]
async fn a_kubelet_and_pods() {
    let env = crate::admission::common::testing::env().await;
    let stored = env
        .create(
            "",
            "v1",
            "nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        )
        .await;
    let uid = stored["metadata"]["uid"].clone();
    let n1 = kubelet("n1");
    let pod = |annotations: Value, owners: Value, spec: Value| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "ns", "annotations": annotations, "ownerReferences": owners},
               "spec": spec})
    };
    let mirror = json!({MIRROR_POD_ANNOTATION: "h"});
    let owner =
        json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": true}]);
    let spec = json!({"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]});
    let create = |p: Value| {
        run(
            &env,
            &n1,
            Operation::Create,
            "pods",
            "ns",
            "p",
            Some(p),
            None,
        )
    };
    assert_eq!(
        create(pod(mirror.clone(), owner.clone(), spec.clone())).await,
        None
    );
    assert_eq!(
        create(pod(json!({}), owner.clone(), spec.clone())).await,
        Some("pods \"p\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods".into())
    );
    let mut elsewhere = spec.clone();
    elsewhere["nodeName"] = json!("n2");
    assert_eq!(
        create(pod(mirror.clone(), owner.clone(), elsewhere)).await,
        Some("pods \"p\" is forbidden: node \"n1\" can only create pods with spec.nodeName set to itself".into())
    );
    let mut wrong_uid = owner.clone();
    wrong_uid[0]["uid"] = json!("other");
    assert_eq!(
        create(pod(mirror.clone(), wrong_uid, spec.clone())).await,
        Some(format!(
            "pods \"p\" is forbidden: node n1 UID mismatch: expected other got {}",
            uid.as_str().unwrap_or("")
        ))
    );
    let mut blocking = owner.clone();
    blocking[0]["blockOwnerDeletion"] = json!(true);
    assert_eq!(
        create(pod(mirror.clone(), blocking, spec.clone())).await,
        Some("pods \"p\" is forbidden: node \"n1\" must not set blockOwnerDeletion on an owner reference".into())
    );
    let mut with_secret = spec.clone();
    with_secret["volumes"] = json!([{"name": "v", "secret": {"secretName": "s"}}]);
    assert_eq!(
        create(pod(mirror.clone(), owner.clone(), with_secret)).await,
        Some(
            "pods \"p\" is forbidden: node \"n1\" can not create pods that reference secrets"
                .into()
        )
    );
    let theirs = pod(json!({}), json!([]), json!({"nodeName": "n2"}));
    assert_eq!(
        run(&env, &n1, Operation::Delete, "pods", "ns", "p", None, Some(&theirs)).await,
        Some("pods \"p\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself".into())
    );
    assert_eq!(
        run(&env, &n1, Operation::Update, "pods", "ns", "p", Some(theirs.clone()), Some(&theirs)).await,
        Some("pods \"p\" is forbidden: unexpected operation \"UPDATE\", node \"n1\" can only create and delete mirror pods".into())
    );
}

#[test]
fn pvc_status_fields() {
    let old = json!({"metadata": {"resourceVersion": "1"}, "spec": {"volumeName": "v"}, "status": {"phase": "Bound"}});
    let mut new = old.clone();
    new["metadata"]["resourceVersion"] = json!("2");
    new["status"]["capacity"] = json!({"storage": "1Gi"});
    new["status"]["conditions"] = json!([{"type": "Resizing", "status": "True"}]);
    assert!(semantic_eq(
        &pvc_without_kubelet_fields(&old),
        &pvc_without_kubelet_fields(&new)
    ));
    new["status"]["phase"] = json!("Lost");
    let mut diff = Vec::new();
    json_diff(
        &pvc_without_kubelet_fields(&old),
        &pvc_without_kubelet_fields(&new),
        "",
        &mut diff,
    );
    assert_eq!(diff, vec![".status.phase: \"Bound\" -> \"Lost\""]);
}
