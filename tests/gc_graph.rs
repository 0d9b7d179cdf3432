//! The event-driven control plane at scale, with the `kube` crate and
//! kubectl: a namespace of 2,000 objects of 10 kinds (built-in and custom)
//! emptied and gone; foreground deletion of a three-level chain taking
//! leaves first, as upstream orders it; owners that informers show after
//! their dependents (the collector's virtual nodes).

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{run, runtime, Kapi};
use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, PostParams, WatchEvent, WatchParams,
};
use kube::core::GroupVersionKind;
use serde_json::{json, Value};

async fn client(k: &Kapi) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

fn api(
    c: &kube::Client,
    ns: &str,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::namespaced_with(c.clone(), ns, &ar)
}

fn obj(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("object")
}

/// Creates all of them, 16 at a time; returns the created objects in order.
async fn create_all(api: &Api<DynamicObject>, objects: Vec<Value>) -> Vec<DynamicObject> {
    futures::stream::iter(objects)
        .map(|o| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &obj(o)).await }
        })
        .buffered(16)
        .try_collect()
        .await
        .expect("create")
}

fn kubectl_ok(k: &Kapi, args: &[&str]) -> String {
    let (ok, out, err) = run(k.kubectl().args(args));
    assert!(ok, "kubectl {args:?}: {err}");
    out
}

fn owner_ref(o: &DynamicObject, api_version: &str, kind: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": o.metadata.name,
        "uid": o.metadata.uid, "controller": true, "blockOwnerDeletion": true})
}

/// Serves the Widget custom resource.
fn install_widgets(k: &Kapi) {
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], common::WIDGET_CRD);
    assert!(ok, "{err}");
    kubectl_ok(
        k,
        &[
            "wait",
            "--for=condition=Established",
            "crd/widgets.example.com",
            "--timeout=20s",
        ],
    );
}

#[test]
fn a_namespace_with_2000_objects_of_10_kinds_is_emptied_and_gone() {
    const EACH: usize = 200;
    let k = Kapi::start(&[]);
    install_widgets(&k);
    kubectl_ok(&k, &["create", "namespace", "big"]);
    k.wait_for_default_service_account("big");
    let ns = "big";
    runtime().block_on(async {
        let c = client(&k).await;
        let meta = |i: usize| json!({"name": format!("o-{i}"), "namespace": ns});
        let kinds: Vec<(Api<DynamicObject>, Box<dyn Fn(usize) -> Value>)> = vec![
            (api(&c, ns, "", "v1", "ConfigMap", "configmaps"),
                Box::new(move |i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(i), "data": {"k": "v"}}))),
            (api(&c, ns, "", "v1", "Secret", "secrets"),
                Box::new(move |i| json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta(i), "stringData": {"k": "v"}}))),
            (api(&c, ns, "", "v1", "ServiceAccount", "serviceaccounts"),
                Box::new(move |i| json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(i)}))),
            (api(&c, ns, "", "v1", "Pod", "pods"),
                Box::new(move |i| json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta(i),
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))),
            (api(&c, ns, "", "v1", "Service", "services"),
                Box::new(move |i| json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(i),
                    "spec": {"clusterIP": "None", "selector": {"app": "x"}, "ports": [{"port": 80}]}}))),
            (api(&c, ns, "coordination.k8s.io", "v1", "Lease", "leases"),
                Box::new(move |i| json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta(i)}))),
            (api(&c, ns, "rbac.authorization.k8s.io", "v1", "Role", "roles"),
                Box::new(move |i| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(i),
                    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}))),
            (api(&c, ns, "rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
                Box::new(move |i| json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(i),
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": format!("o-{i}")},
                    "subjects": [{"kind": "User", "name": "someone"}]}))),
            (api(&c, ns, "apps", "v1", "Deployment", "deployments"),
                Box::new(move |i| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(i),
                    "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))),
            (api(&c, ns, "example.com", "v1", "Widget", "widgets"),
                Box::new(move |i| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta(i), "spec": {"size": i}}))),
        ];
        assert_eq!(kinds.len(), 10);
        for (api, make) in &kinds {
            create_all(api, (0..EACH).map(make).collect()).await;
        }
        for (api, _) in &kinds {
            let n = api.list(&Default::default()).await.expect("list").items.len();
            assert!(n >= EACH, "{n} of a kind");
        }
    });
    let started = Instant::now();
    kubectl_ok(
        &k,
        &["delete", "namespace", ns, "--wait=true", "--timeout=120s"],
    );
    let (ok, _, err) = run(k.kubectl().args(["get", "namespace", ns]));
    assert!(!ok && err.contains("NotFound"), "{err}");
    eprintln!(
        "namespace of {} objects deleted in {:?}",
        10 * EACH,
        started.elapsed()
    );
    // Nothing of it is left in any kind.
    for kind in [
        "configmaps",
        "secrets",
        "serviceaccounts",
        "pods",
        "services",
        "leases",
        "roles",
        "rolebindings",
        "deployments",
        "widgets",
    ] {
        let out = kubectl_ok(&k, &["get", kind, "-n", ns, "-o", "name"]);
        assert!(out.trim().is_empty(), "{kind} left: {out}");
    }
}

/// (kind, name, resourceVersion) of each DELETED event of a watch, until
/// `expected` were seen or the watch times out.
async fn deletions(
    api: Api<DynamicObject>,
    kind: &'static str,
    rv: String,
    expected: usize,
) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    let mut stream = api
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .expect("watch")
        .boxed();
    while let Some(ev) = stream.next().await {
        match ev.expect("event") {
            WatchEvent::Deleted(o) => {
                let rv: u64 = o
                    .metadata
                    .resource_version
                    .as_deref()
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0);
                out.push((
                    kind.to_string(),
                    o.metadata.name.clone().unwrap_or_default(),
                    rv,
                ));
                if out.len() == expected {
                    break;
                }
            }
            WatchEvent::Error(e) => panic!("watch error: {e:?}"),
            _ => {}
        }
    }
    out
}

#[test]
fn foreground_deletion_of_a_three_level_chain_takes_leaves_first() {
    const MIDDLE: usize = 50;
    const LEAVES: usize = 10;
    let k = Kapi::start(&[]);
    kubectl_ok(&k, &["create", "namespace", "chain"]);
    k.wait_for_default_service_account("chain");
    let ns = "chain";
    runtime().block_on(async {
        let c = client(&k).await;
        let deployments = api(&c, ns, "apps", "v1", "Deployment", "deployments");
        let replicasets = api(&c, ns, "apps", "v1", "ReplicaSet", "replicasets");
        let pods = api(&c, ns, "", "v1", "Pod", "pods");
        let template = json!({"metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let d = create_all(&deployments, vec![json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template}})]).await;
        let d_ref = owner_ref(&d[0], "apps/v1", "Deployment");
        let rss = create_all(&replicasets, (0..MIDDLE).map(|i| json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("d-{i}"), "ownerReferences": [d_ref]},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template}})).collect()).await;
        let mut leaves = Vec::new();
        for rs in &rss {
            let rs_ref = owner_ref(rs, "apps/v1", "ReplicaSet");
            let rs_name = rs.metadata.name.clone().unwrap_or_default();
            leaves.extend((0..LEAVES).map(|j| json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{rs_name}-{j}"), "ownerReferences": [rs_ref]},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}})));
        }
        let leaves = create_all(&pods, leaves).await;
        assert_eq!(leaves.len(), MIDDLE * LEAVES);
        let rv = leaves
            .iter()
            .filter_map(|p| p.metadata.resource_version.as_deref()?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            .to_string();
        let watches = tokio::spawn(futures::future::join3(
            deletions(pods.clone(), "Pod", rv.clone(), MIDDLE * LEAVES),
            deletions(replicasets.clone(), "ReplicaSet", rv.clone(), MIDDLE),
            deletions(deployments.clone(), "Deployment", rv.clone(), 1),
        ));
        let started = Instant::now();
        deployments
            .delete("d", &DeleteParams::foreground())
            .await
            .expect("delete");
        // The owner stays, deleting, with upstream's finalizer, while its
        // dependents go.
        let owner = deployments.get("d").await.expect("owner waits");
        assert!(owner.metadata.deletion_timestamp.is_some());
        assert_eq!(owner.metadata.finalizers.as_deref(), Some(&["foregroundDeletion".to_string()][..]));
        let (p, r, dd) = tokio::time::timeout(Duration::from_secs(90), watches)
            .await
            .expect("cascade within 90 s")
            .expect("watches");
        eprintln!("three-level foreground cascade of {} objects in {:?}", 1 + MIDDLE + MIDDLE * LEAVES, started.elapsed());
        assert_eq!(p.len(), MIDDLE * LEAVES, "pods deleted");
        assert_eq!(r.len(), MIDDLE, "replicasets deleted");
        assert_eq!(dd.len(), 1, "deployment deleted");
        // Leaves first: each ReplicaSet goes after all of its pods, the
        // Deployment after all ReplicaSets (resourceVersions order writes).
        let mut last_pod: HashMap<String, u64> = HashMap::new();
        for (_, name, rv) in &p {
            let rs = name.rsplit_once('-').map(|(a, _)| a.to_string()).unwrap_or_default();
            let e = last_pod.entry(rs).or_default();
            *e = (*e).max(*rv);
        }
        for (_, name, rv) in &r {
            let pods_done = last_pod.get(name).copied().unwrap_or(u64::MAX);
            assert!(pods_done < *rv, "ReplicaSet {name} deleted at {rv} before its last pod at {pods_done}");
        }
        let last_rs = r.iter().map(|(_, _, rv)| *rv).max().unwrap_or(u64::MAX);
        assert!(last_rs < dd[0].2, "Deployment deleted before its ReplicaSets");
        // Nothing is left.
        assert!(pods.list(&Default::default()).await.expect("list").items.is_empty());
        assert!(replicasets.list(&Default::default()).await.expect("list").items.is_empty());
    });
}

#[test]
fn owners_shown_after_their_dependents_are_handled_as_upstream() {
    let k = Kapi::start(&[]);
    install_widgets(&k);
    let ns = "default";
    runtime().block_on(async {
        let c = client(&k).await;
        let widgets = api(&c, ns, "example.com", "v1", "Widget", "widgets");
        let cms = api(&c, ns, "", "v1", "ConfigMap", "configmaps");
        // Owner and dependent made back to back, 50 times: the dependent's
        // event can reach the collector before its owner's (another
        // resource, another informer). The owner is then a virtual node,
        // confirmed present by storage: no dependent is collected.
        for i in 0..50 {
            let w = create_all(&widgets, vec![json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": format!("w-{i}")}})]).await;
            create_all(&cms, vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("dep-{i}"), "ownerReferences": [owner_ref(&w[0], "example.com/v1", "Widget")]}})]).await;
        }
        // A dependent whose owner does not exist (a uid no object has):
        // storage confirms the virtual owner absent and the dependent is
        // collected, even when an owner of that name is made later.
        create_all(&cms, vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "orphan-to-be", "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget",
                "name": "late", "uid": "8a1bd0a6-0000-4000-8000-000000000001", "blockOwnerDeletion": true}]}})]).await;
        create_all(&widgets, vec![json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "late"}})]).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while cms.get_opt("orphan-to-be").await.expect("get").is_some() {
            assert!(Instant::now() < deadline, "a dependent of an absent owner was not collected");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Meanwhile every dependent of a real owner is still there.
        for i in 0..50 {
            assert!(cms.get_opt(&format!("dep-{i}")).await.expect("get").is_some(), "dep-{i} collected");
        }
        // And goes with its owner.
        widgets.delete("w-7", &DeleteParams::background()).await.expect("delete");
        let deadline = Instant::now() + Duration::from_secs(20);
        while cms.get_opt("dep-7").await.expect("get").is_some() {
            assert!(Instant::now() < deadline, "dep-7 outlived its owner");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
}
