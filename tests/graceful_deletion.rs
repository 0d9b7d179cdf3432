//! Graceful pod deletion as kube-apiserver does it (issue 21, point 6): a
//! pod on a node is marked with `deletionTimestamp` and
//! `deletionGracePeriodSeconds` and stays `Terminating` until a kubelet (or
//! `kubectl delete --grace-period=0 --force`) removes it; a pod never
//! scheduled, or already finished, goes at once.

mod common;

use common::http::send;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::{run, runtime, Kapi};
use serde_json::{json, Value};

fn pod(name: &str, node: Option<&str>, grace: Option<i64>, finalizers: &[&str]) -> Value {
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "finalizers": finalizers},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    if let Some(g) = grace {
        p["spec"]["terminationGracePeriodSeconds"] = json!(g);
    }
    p
}

fn seconds_ahead(ts: &Value) -> i64 {
    let t = DateTime::parse_from_rfc3339(ts.as_str().expect("deletionTimestamp"))
        .expect("rfc3339")
        .with_timezone(&Utc);
    (t - Utc::now()).num_seconds()
}

#[test]
fn scheduled_pods_terminate_gracefully_and_others_go_at_once() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let pods = format!("{}/api/v1/namespaces/default/pods", k.url);

        // A scheduled pod with the default grace period (30 s).
        let (code, created) = send(
            &c,
            "POST",
            &pods,
            Some(pod("on-node", Some("node-1"), None, &[])),
        )
        .await;
        assert_eq!(code, 201, "{created}");
        assert_eq!(created["spec"]["terminationGracePeriodSeconds"], 30);
        let (code, marked) = send(&c, "DELETE", &format!("{pods}/on-node"), None).await;
        assert_eq!(code, 200, "{marked}");
        assert_eq!(
            marked["kind"], "Pod",
            "pods answer a delete with the pod: {marked}"
        );
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
        let ahead = seconds_ahead(&marked["metadata"]["deletionTimestamp"]);
        assert!(
            (25..=31).contains(&ahead),
            "deletionTimestamp {ahead} s ahead"
        );
        let (code, still) = send(&c, "GET", &format!("{pods}/on-node"), None).await;
        assert_eq!(code, 200, "the pod stays until its kubelet removes it");
        assert_eq!(
            still["metadata"]["resourceVersion"],
            marked["metadata"]["resourceVersion"]
        );

        // Deleting again without a shorter grace period changes nothing.
        let (code, again) = send(&c, "DELETE", &format!("{pods}/on-node"), None).await;
        assert_eq!(code, 200);
        assert_eq!(
            again["metadata"]["resourceVersion"],
            marked["metadata"]["resourceVersion"]
        );
        let (_, longer) = send(
            &c,
            "DELETE",
            &format!("{pods}/on-node?gracePeriodSeconds=60"),
            None,
        )
        .await;
        assert_eq!(
            longer["metadata"]["deletionGracePeriodSeconds"], 30,
            "a grace period may only shrink"
        );

        // A shorter one moves the deadline forward.
        let (code, shorter) = send(
            &c,
            "DELETE",
            &format!("{pods}/on-node?gracePeriodSeconds=10"),
            None,
        )
        .await;
        assert_eq!(code, 200, "{shorter}");
        assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
        let ahead = seconds_ahead(&shorter["metadata"]["deletionTimestamp"]);
        assert!(
            (5..=11).contains(&ahead),
            "shortened deletionTimestamp {ahead} s ahead"
        );

        // Grace 0 (what --force sends) removes it.
        let (code, gone) = send(
            &c,
            "DELETE",
            &format!("{pods}/on-node?gracePeriodSeconds=0"),
            None,
        )
        .await;
        assert_eq!(code, 200, "{gone}");
        assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
        let (code, _) = send(&c, "GET", &format!("{pods}/on-node"), None).await;
        assert_eq!(code, 404);

        // The pod's own grace period is used when the delete names none.
        send(
            &c,
            "POST",
            &pods,
            Some(pod("short", Some("node-1"), Some(5), &[])),
        )
        .await;
        let (_, marked) = send(&c, "DELETE", &format!("{pods}/short"), None).await;
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 5);

        // Never scheduled: removed at once, marked with grace 0 on the way.
        send(&c, "POST", &pods, Some(pod("pending", None, None, &[]))).await;
        let (code, gone) = send(&c, "DELETE", &format!("{pods}/pending"), None).await;
        assert_eq!(code, 200);
        assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0, "{gone}");
        let (code, _) = send(&c, "GET", &format!("{pods}/pending"), None).await;
        assert_eq!(code, 404);

        // Finished: removed at once too.
        let (_, done) = send(
            &c,
            "POST",
            &pods,
            Some(pod("done", Some("node-1"), None, &[])),
        )
        .await;
        let mut status = done.clone();
        status["status"]["phase"] = json!("Succeeded");
        let (code, s) = send(&c, "PUT", &format!("{pods}/done/status"), Some(status)).await;
        assert_eq!(code, 200, "{s}");
        send(&c, "DELETE", &format!("{pods}/done"), None).await;
        let (code, _) = send(&c, "GET", &format!("{pods}/done"), None).await;
        assert_eq!(code, 404);

        // A finalizer removed while the grace period runs does not end it.
        send(
            &c,
            "POST",
            &pods,
            Some(pod("held", Some("node-1"), None, &["example.com/hold"])),
        )
        .await;
        let (_, marked) = send(&c, "DELETE", &format!("{pods}/held"), None).await;
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
        let patch = json!([{"op": "remove", "path": "/metadata/finalizers"}]);
        let r = c
            .patch(format!("{pods}/held"))
            .header("Content-Type", "application/json-patch+json")
            .body(patch.to_string())
            .send()
            .await
            .expect("patch");
        assert_eq!(r.status().as_u16(), 200);
        let (code, held) = send(&c, "GET", &format!("{pods}/held"), None).await;
        assert_eq!(code, 200, "still within its grace period: {held}");

        // Other kinds are not graceful: a ConfigMap goes at once whatever
        // the grace period asked for.
        let cms = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        send(
            &c,
            "POST",
            &cms,
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})),
        )
        .await;
        let (code, _) = send(
            &c,
            "DELETE",
            &format!("{cms}/cm?gracePeriodSeconds=30"),
            None,
        )
        .await;
        assert_eq!(code, 200);
        let (code, _) = send(&c, "GET", &format!("{cms}/cm"), None).await;
        assert_eq!(code, 404);
    });
}

/// What a user types: `kubectl delete` of a scheduled pod leaves it
/// Terminating (kubectl waits for it, so `--wait=false`), and `--force
/// --grace-period=0` removes it, printing kubectl's warning.
#[test]
fn kubectl_sees_terminating_pods_and_force_deletes_them() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(
        &["apply", "-f", "-"],
        &pod("web", Some("node-1"), None, &[]).to_string(),
    );
    assert!(ok, "{err}");
    let (ok, out, err) = run(k.kubectl().args(["delete", "pod", "web", "--wait=false"]));
    assert!(ok, "{err}");
    assert!(out.contains("pod \"web\" deleted"), "{out}");
    let (ok, out, err) = run(k.kubectl().args(["get", "pod", "web", "--no-headers"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("Terminating"),
        "kubectl shows the pod Terminating: {out}"
    );

    let (ok, out, err) =
        run(k
            .kubectl()
            .args(["delete", "pod", "web", "--grace-period=0", "--force"]));
    assert!(ok, "{err}");
    assert!(out.contains("force deleted"), "{out}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (ok, _, err) = run(k.kubectl().args(["get", "pod", "web"]));
        if !ok && err.contains("NotFound") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still there: {err}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A pod bound to a node that does not exist (no kubelet will ever stop
/// it) does not keep its namespace Terminating forever: the pod garbage
/// collector deletes it once the node has been missing for its quarantine
/// (40 s, upstream's), and the namespace then goes.
#[test]
fn pods_on_missing_nodes_do_not_keep_their_namespace() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let api = format!("{}/api/v1", k.url);
        let (code, _) = send(
            &c,
            "POST",
            &format!("{api}/namespaces"),
            Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ghosts"}})),
        )
        .await;
        assert_eq!(code, 201);
        let mut p = pod("on-ghost", Some("ghost-node"), None, &[]);
        p["metadata"]["namespace"] = json!("ghosts");
        let (code, body) = send(
            &c,
            "POST",
            &format!("{api}/namespaces/ghosts/pods"),
            Some(p),
        )
        .await;
        assert_eq!(code, 201, "{body}");
        let (code, _) = send(&c, "DELETE", &format!("{api}/namespaces/ghosts"), None).await;
        assert_eq!(code, 200);
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        loop {
            let (code, ns) = send(&c, "GET", &format!("{api}/namespaces/ghosts"), None).await;
            if code == 404 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "namespace still there: {ns}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
}
