//! Issue 24: `--etcd-servers-overrides` places a resource in an etcd cluster
//! of its own (events, as clusters do): its keys land there and nowhere
//! else, and the API serves, lists and watches it as any other resource,
//! though its revisions are that cluster's.

mod common;

use std::time::Duration;

use common::etcd::{etcdctl, EtcdCluster};
use common::{run, Kapi};
use serde_json::{json, Value};

fn keys(endpoint: &str, prefix: &str) -> Vec<String> {
    let (ok, out, err) = etcdctl(endpoint, &["get", "--prefix", prefix, "--keys-only"]);
    assert!(ok, "{err}");
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

fn event(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Tested", "message": "hello", "type": "Normal"})
}

#[test]
fn events_land_in_their_own_etcd() {
    let main = EtcdCluster::start(1);
    let events = EtcdCluster::start(1);
    let (main_url, events_url) = (main.endpoints()[0].clone(), events.endpoints()[0].clone());
    let k = Kapi::start(&[
        "--etcd-servers",
        &main_url,
        "--etcd-servers-overrides",
        &format!("/events#{events_url}"),
    ]);
    let client = k.admin_client();
    let base = format!("{}/api/v1/namespaces/default/events", k.url);
    common::runtime().block_on(async {
        // A watch from before the writes sees them, in the events cluster's
        // revisions.
        let watch = client
            .get(format!("{base}?watch=true&timeoutSeconds=5"))
            .send()
            .await
            .expect("watch");
        assert_eq!(watch.status(), 200);
        for name in ["e1", "e2"] {
            let r = client
                .post(&base)
                .json(&event(name))
                .send()
                .await
                .expect("post");
            assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
        }
        let body = tokio::time::timeout(Duration::from_secs(10), watch.text())
            .await
            .expect("watch ends")
            .expect("body");
        let added = body.lines().filter(|l| l.contains("\"ADDED\"")).count();
        assert_eq!(added, 2, "{body}");
        // A consistent list (no resourceVersion) reads them back.
        let list: Value = client
            .get(&base)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let names: Vec<&str> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|e| e["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["e1", "e2"], "{list}");
        // Updates keep working across both clusters' revisions.
        let mut e1: Value = client
            .get(format!("{base}/e1"))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        e1["message"] = json!("changed");
        let r = client
            .put(format!("{base}/e1"))
            .json(&e1)
            .send()
            .await
            .expect("put");
        assert_eq!(r.status(), 200);
    });
    // The events are in the events cluster only; everything else in main.
    assert_eq!(
        keys(&events_url, "/registry/events/"),
        ["/registry/events/default/e1", "/registry/events/default/e2"]
    );
    assert!(keys(&main_url, "/registry/events/").is_empty());
    assert!(keys(&events_url, "/registry/namespaces/").is_empty());
    assert!(!keys(&main_url, "/registry/namespaces/").is_empty());
    // kubectl sees them as anywhere else, also through events.k8s.io.
    let (ok, out, err) = run(k
        .kubectl()
        .args(["get", "events.events.k8s.io", "-o", "name"]));
    assert!(ok && out.contains("e1") && out.contains("e2"), "{out}{err}");
}

#[test]
fn overrides_are_checked_as_upstream_checks_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (value, extra, want) in [
        (
            "events#http://127.0.0.1:1",
            "--etcd-servers=http://127.0.0.1:1",
            "--etcd-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated",
        ),
        (
            "/events#http://127.0.0.1:1",
            "--v=0",
            "needs --etcd-servers",
        ),
    ] {
        let out = std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(tmp.path())
            .arg(format!("--etcd-servers-overrides={value}"))
            .arg(extra)
            .output()
            .expect("run kapi");
        assert!(!out.status.success(), "{value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{value}: {err}");
    }
}
