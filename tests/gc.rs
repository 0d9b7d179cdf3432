//! The garbage collector through kubectl: background, foreground and orphan
//! cascading deletion of a hand-made Deployment → ReplicaSets → Pods chain
//! (kapi runs no deployment controller), custom resource owners and
//! cluster-scoped owners of namespaced objects.

mod common;

use std::time::{Duration, Instant};

use common::{run, Kapi};
use serde_json::Value;

/// How long the collector may take for a cascade.
const CASCADE: Duration = Duration::from_secs(5);

fn create(k: &Kapi, yaml: &str) {
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], yaml);
    assert!(ok, "{err}\n{yaml}");
}

fn kubectl(k: &Kapi, args: &[&str]) -> String {
    let (ok, out, err) = run(k.kubectl().args(args).arg("--request-timeout=20s"));
    assert!(ok, "kubectl {args:?}: {err}");
    out
}

fn get_json(k: &Kapi, args: &[&str]) -> Option<Value> {
    let (ok, out, err) = run(k
        .kubectl()
        .args(["get", "-o", "json", "--request-timeout=20s"])
        .args(args));
    if !ok {
        assert!(err.contains("NotFound"), "kubectl get {args:?}: {err}");
        return None;
    }
    Some(serde_json::from_str(&out).expect("json"))
}

fn uid(k: &Kapi, args: &[&str]) -> String {
    let v = get_json(k, args).unwrap_or_else(|| panic!("{args:?} not found"));
    v["metadata"]["uid"].as_str().expect("uid").to_string()
}

/// Names (`kind/name`) of the objects of these kinds in a namespace.
fn names(k: &Kapi, ns: &str, kinds: &str) -> Vec<String> {
    kubectl(k, &["get", kinds, "-n", ns, "-o", "name"])
        .lines()
        .map(String::from)
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    start.elapsed()
}

fn owner_ref(api_version: &str, kind: &str, name: &str, uid: &str) -> String {
    format!(
        "  ownerReferences:\n  - {{apiVersion: {api_version}, kind: {kind}, name: {name}, uid: {uid}, controller: true, blockOwnerDeletion: true}}\n"
    )
}

/// A Deployment `d` with ReplicaSets `d-1` and `d-2`, each owning two Pods,
/// as a deployment controller would have made them. `hold` puts a finalizer
/// on pod `d-1-a`. Returns the Deployment's uid.
fn deployment_chain(k: &Kapi, ns: &str, hold: bool) -> String {
    create(
        k,
        &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n"),
    );
    let template = "    metadata:\n      labels: {app: d}\n    spec:\n      containers:\n      - {name: c, image: nginx}\n";
    create(
        k,
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: {ns}\nspec:\n  selector:\n    matchLabels: {{app: d}}\n  template:\n{template}"
        ),
    );
    let d = uid(k, &["deployment", "d", "-n", ns]);
    for rs in ["d-1", "d-2"] {
        create(
            k,
            &format!(
                "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {rs}\n  namespace: {ns}\n{}spec:\n  selector:\n    matchLabels: {{app: d}}\n  template:\n{template}",
                owner_ref("apps/v1", "Deployment", "d", &d)
            ),
        );
        let rs_uid = uid(k, &["replicaset", rs, "-n", ns]);
        for p in ["a", "b"] {
            let finalizers = if hold && rs == "d-1" && p == "a" {
                "  finalizers: [example.com/hold]\n"
            } else {
                ""
            };
            create(
                k,
                &format!(
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {rs}-{p}\n  namespace: {ns}\n  labels: {{app: d}}\n{finalizers}{}spec:\n  containers:\n  - {{name: c, image: nginx}}\n",
                    owner_ref("apps/v1", "ReplicaSet", rs, &rs_uid)
                ),
            );
        }
    }
    assert_eq!(names(k, ns, "replicasets,pods").len(), 6);
    d
}

#[test]
fn background_deletion_collects_replicasets_and_pods() {
    let k = Kapi::start(&[]);
    deployment_chain(&k, "bg", false);
    // Nothing is collected while the owners exist.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(names(&k, "bg", "replicasets,pods").len(), 6);

    kubectl(
        &k,
        &["delete", "deployment", "d", "-n", "bg", "--timeout=20s"],
    );
    assert!(get_json(&k, &["deployment", "d", "-n", "bg"]).is_none());
    wait_until("replicasets and pods collected", CASCADE, || {
        names(&k, "bg", "replicasets,pods").is_empty()
    });
}

#[test]
fn foreground_deletion_waits_for_blocking_dependents() {
    let k = Kapi::start(&[]);
    deployment_chain(&k, "fg", true);
    kubectl(
        &k,
        &[
            "delete",
            "deployment",
            "d",
            "-n",
            "fg",
            "--cascade=foreground",
            "--wait=false",
        ],
    );
    // Everything not held by the pod's finalizer goes; the rest is deleting.
    wait_until("unheld dependents collected", CASCADE, || {
        names(&k, "fg", "replicasets,pods") == ["replicaset.apps/d-1", "pod/d-1-a"]
    });
    std::thread::sleep(Duration::from_millis(800));
    let d = get_json(&k, &["deployment", "d", "-n", "fg"]).expect("the deployment waits");
    assert!(d["metadata"]["deletionTimestamp"].is_string(), "{d}");
    assert_eq!(
        d["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"])
    );
    // The ReplicaSet has Pods of its own, so it is deleted in the foreground too.
    let rs = get_json(&k, &["replicaset", "d-1", "-n", "fg"]).expect("rs");
    assert!(rs["metadata"]["deletionTimestamp"].is_string(), "{rs}");
    assert_eq!(
        rs["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"])
    );
    let pod = get_json(&k, &["pod", "d-1-a", "-n", "fg"]).expect("pod");
    assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{pod}");

    kubectl(
        &k,
        &[
            "patch",
            "pod",
            "d-1-a",
            "-n",
            "fg",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
    );
    wait_until("the deployment goes last", CASCADE, || {
        get_json(&k, &["deployment", "d", "-n", "fg"]).is_none()
    });
    assert!(names(&k, "fg", "replicasets,pods").is_empty());

    // Without anything held, kubectl's own wait ends when the cascade is done.
    deployment_chain(&k, "fg2", false);
    let start = Instant::now();
    kubectl(
        &k,
        &[
            "delete",
            "deployment",
            "d",
            "-n",
            "fg2",
            "--cascade=foreground",
            "--timeout=20s",
        ],
    );
    assert!(start.elapsed() < CASCADE, "took {:?}", start.elapsed());
    assert!(names(&k, "fg2", "deployments,replicasets,pods").is_empty());
}

#[test]
fn orphan_deletion_keeps_dependents_and_drops_their_references() {
    let k = Kapi::start(&[]);
    let d = deployment_chain(&k, "or", false);
    kubectl(
        &k,
        &[
            "delete",
            "deployment",
            "d",
            "-n",
            "or",
            "--cascade=orphan",
            "--timeout=20s",
        ],
    );
    wait_until("the deployment goes", CASCADE, || {
        get_json(&k, &["deployment", "d", "-n", "or"]).is_none()
    });
    std::thread::sleep(Duration::from_millis(800));
    let rss = get_json(&k, &["replicasets", "-n", "or"]).expect("list");
    let items = rss["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{rss}");
    for rs in items {
        assert!(rs["metadata"]["deletionTimestamp"].is_null(), "{rs}");
        let refs = rs["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(refs.iter().all(|r| r["uid"] != d.as_str()), "{rs}");
    }
    let pods = get_json(&k, &["pods", "-n", "or"]).expect("list");
    let items = pods["items"].as_array().expect("items");
    assert_eq!(items.len(), 4, "{pods}");
    for p in items {
        assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
    }

    // The orphans belong to nobody now; deleting one ReplicaSet in the
    // background still collects its pods.
    kubectl(
        &k,
        &["delete", "replicaset", "d-1", "-n", "or", "--timeout=20s"],
    );
    wait_until("pods of d-1 collected", CASCADE, || {
        names(&k, "or", "pods") == ["pod/d-2-a", "pod/d-2-b"]
    });
}

#[test]
fn custom_and_cluster_scoped_owners() {
    let k = Kapi::start(&[]);
    create(&k, common::WIDGET_CRD);
    wait_until("widgets served", Duration::from_secs(10), || {
        run(k.kubectl().args(["get", "widgets"])).0
    });
    create(
        &k,
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n",
    );
    let w = uid(&k, &["widget", "w", "-n", "default"]);
    create(
        &k,
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: of-widget\n  namespace: default\n{}",
            owner_ref("example.com/v1", "Widget", "w", &w)
        ),
    );
    create(
        &k,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules: []\n",
    );
    let r = uid(&k, &["clusterrole", "r"]);
    let stale = "00000000-0000-0000-0000-000000000000";
    let cm = |name: &str, refs: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n{refs}")
    };
    // A cluster-scoped owner of a namespaced object.
    create(
        &k,
        &cm(
            "of-role",
            &owner_ref("rbac.authorization.k8s.io/v1", "ClusterRole", "r", &r),
        ),
    );
    // Same name, another uid: that owner is gone.
    create(
        &k,
        &cm(
            "of-old-role",
            &owner_ref("rbac.authorization.k8s.io/v1", "ClusterRole", "r", stale),
        ),
    );
    // Two owners, one of them gone: the object stays, the dangling reference goes.
    let two = format!(
        "  ownerReferences:\n  - {{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: r, uid: {r}}}\n  - {{apiVersion: example.com/v1, kind: Widget, name: gone, uid: {stale}}}\n"
    );
    create(&k, &cm("of-two", &two));
    // A cluster-scoped object cannot have a namespaced owner: left alone.
    create(
        &k,
        &format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: invalid\n{}rules: []\n",
            owner_ref("v1", "ConfigMap", "nothing", stale)
        ),
    );
    // An owner of a kind nobody serves: left alone, as upstream does.
    create(
        &k,
        &cm(
            "of-unknown",
            &owner_ref("unknown.example.com/v1", "Thing", "t", stale),
        ),
    );

    wait_until(
        "the object of a replaced owner is collected",
        CASCADE,
        || get_json(&k, &["configmap", "of-old-role", "-n", "default"]).is_none(),
    );
    wait_until("the dangling reference is removed", CASCADE, || {
        get_json(&k, &["configmap", "of-two", "-n", "default"]).is_some_and(|v| {
            v["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|a| a.len() == 1 && a[0]["uid"] == r.as_str())
        })
    });

    kubectl(
        &k,
        &["delete", "widget", "w", "-n", "default", "--timeout=20s"],
    );
    wait_until("the widget's configmap is collected", CASCADE, || {
        get_json(&k, &["configmap", "of-widget", "-n", "default"]).is_none()
    });
    kubectl(&k, &["delete", "clusterrole", "r", "--timeout=20s"]);
    wait_until(
        "the cluster role's configmaps are collected",
        CASCADE,
        || {
            names(&k, "default", "configmaps")
                .iter()
                .all(|n| n != "configmap/of-role" && n != "configmap/of-two")
        },
    );
    std::thread::sleep(Duration::from_millis(800));
    assert!(get_json(&k, &["clusterrole", "invalid"]).is_some());
    assert!(get_json(&k, &["configmap", "of-unknown", "-n", "default"]).is_some());
}
