//! `--watch-cache=false` and `--watch-cache-sizes=<resource>#0`: reads go
//! to storage as upstream's etcd3 store serves them. Lists, gets and
//! watches (selectors, sendInitialEvents, resuming from a resourceVersion)
//! answer as with the cache; a watch from a compacted revision gets
//! upstream's 410 ERROR event; the request trace names where a read came
//! from.

mod common;

use std::process::Command;
use std::time::Duration;

use common::etcd::EtcdCluster;
use common::watch::{Next, WatchLines};
use common::{kapi_bin, run, runtime, Kapi};
use serde_json::{json, Value};

/// Where `kapi trace-request GET path` says the read came from.
fn read_from(k: &Kapi, path: &str) -> Vec<String> {
    let (ok, out, err) = run(Command::new(kapi_bin())
        .args(["trace-request", "GET", path, "-o", "json", "--kubeconfig"])
        .arg(&k.kubeconfig));
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    v["stages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .filter(|n| n.contains("watch cache"))
        .map(String::from)
        .collect()
}

async fn next_event(w: &mut WatchLines) -> Value {
    match w.next(Duration::from_secs(10)).await {
        Next::Event(v) => v,
        other => panic!("expected a watch event, got {other:?}"),
    }
}

fn name_of(ev: &Value) -> (&str, &str) {
    (
        ev["type"].as_str().unwrap_or(""),
        ev["object"]["metadata"]["name"].as_str().unwrap_or(""),
    )
}

#[test]
fn with_the_watch_cache_off_reads_come_from_storage_and_answer_the_same() {
    let etcd = EtcdCluster::start(1);
    let k = Kapi::start(&[
        "--etcd-servers",
        &etcd.endpoints()[0],
        "--watch-cache=false",
    ]);
    assert_eq!(
        read_from(&k, "/api/v1/namespaces/default/configmaps"),
        ["storage (watch cache off)"]
    );
    let c = k.admin_client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
    runtime().block_on(async {
        let create = |name: &str, label: &str| {
            c.post(&base)
                .json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "labels": {"x": label}}}))
                .send()
        };
        let r = create("a", "1").await.expect("create");
        assert_eq!(r.status(), 201);
        // A selector watch from now: the current state, then arrivals and
        // departures as the selector sees them.
        let resp = c
            .get(format!("{base}?watch=true&labelSelector=x%3D1&timeoutSeconds=20"))
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 200);
        let mut w = WatchLines::new(resp);
        assert_eq!(name_of(&next_event(&mut w).await), ("ADDED", "a"));
        let r = c
            .patch(format!("{base}/a"))
            .header("Content-Type", "application/merge-patch+json")
            .body(r#"{"metadata":{"labels":{"x":"2"}}}"#)
            .send()
            .await
            .expect("patch");
        assert_eq!(r.status(), 200);
        let moved: Value = r.json().await.expect("json");
        assert_eq!(name_of(&next_event(&mut w).await), ("DELETED", "a"));
        let r = create("b", "1").await.expect("create");
        assert_eq!(r.status(), 201);
        assert_eq!(name_of(&next_event(&mut w).await), ("ADDED", "b"));

        // A watch list: every object, then the bookmark that ends them.
        let resp = c
            .get(format!("{base}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=20"))
            .send()
            .await
            .expect("watch list");
        let mut w = WatchLines::new(resp);
        let mut names = Vec::new();
        let end = loop {
            let ev = next_event(&mut w).await;
            match name_of(&ev) {
                ("ADDED", name) => names.push(name.to_string()),
                _ => break ev,
            }
        };
        names.sort();
        // With the namespace's kube-root-ca.crt.
        assert_eq!(names, ["a", "b", "kube-root-ca.crt"]);
        assert_eq!(end["type"], "BOOKMARK");
        assert_eq!(
            end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );

        // Resuming after a resourceVersion replays what came after it.
        let rv = moved["metadata"]["resourceVersion"].as_str().expect("rv");
        let resp = c
            .get(format!("{base}?watch=true&resourceVersion={rv}&timeoutSeconds=20"))
            .send()
            .await
            .expect("watch");
        let mut w = WatchLines::new(resp);
        assert_eq!(name_of(&next_event(&mut w).await), ("ADDED", "b"));

        // Lists and gets hold to resourceVersion semantics.
        let list: Value = c
            .get(format!("{base}?resourceVersion=0"))
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        assert_eq!(list["items"].as_array().map(Vec::len), Some(3));
        let r = c
            .get(format!("{base}/a?resourceVersion=999999999"))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 504);
        let status: Value = r.json().await.expect("json");
        assert!(
            status["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("Timeout: Too large resource version: 999999999, current: "),
            "{status}"
        );

        // A watch from a compacted revision: upstream's etcd3 watcher's 410.
        etcd.compact(etcd.revision());
        let resp = c
            .get(format!("{base}?watch=true&resourceVersion={rv}&timeoutSeconds=5"))
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 200);
        let mut w = WatchLines::new(resp);
        let err = next_event(&mut w).await;
        assert_eq!(err["type"], "ERROR");
        assert_eq!(err["object"]["code"], 410);
        assert_eq!(
            err["object"]["message"],
            "The resourceVersion for the provided watch is too old."
        );
    });
}

#[test]
fn a_size_of_zero_turns_the_cache_off_for_that_resource_only() {
    let k = Kapi::start(&["--watch-cache-sizes=configmaps#0,deployments.apps#50"]);
    assert_eq!(
        read_from(&k, "/api/v1/namespaces/default/configmaps"),
        ["storage (watch cache off)"]
    );
    assert_eq!(
        read_from(&k, "/api/v1/namespaces/default/secrets"),
        ["watch cache"]
    );
    assert_eq!(
        read_from(&k, "/apis/apps/v1/namespaces/default/deployments"),
        ["watch cache"]
    );
    let err = common::serve_refused(&["--watch-cache-sizes=pods#-1"]);
    assert!(
        err.contains(
            "invalid value for --watch-cache-sizes: watch cache size cannot be negative: pods#-1"
        ),
        "{err}"
    );
}

/// upstream's cacheWatcher sends only what is newer than the revision a
/// watch asked for, and starts at once even when that revision is still
/// to come; initial events "not older than" a revision wait for it.
#[test]
fn a_watch_from_a_revision_still_to_come_starts_at_once_and_sends_what_follows_it() {
    for extra in [&[][..], &["--watch-cache=false"][..]] {
        let k = Kapi::start(extra);
        runtime().block_on(async {
            let c = k.admin_client();
            let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
            let create = |name: &str| {
                c.post(&base)
                    .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
                    .send()
            };
            let first: Value = create("first").await.expect("create").json().await.expect("json");
            let now: i64 = first["metadata"]["resourceVersion"].as_str().and_then(|r| r.parse().ok()).expect("rv");
            // A revision some writes ahead: the writes up to it are not
            // sent, the ones after it are. (Other writes, leases and
            // events, share the revision counter, so each write's own
            // revision decides.)
            let future = now + 20;
            let resp = c
                .get(format!("{base}?watch=true&resourceVersion={future}&timeoutSeconds=20"))
                .send()
                .await
                .expect("watch");
            assert_eq!(resp.status(), 200, "{extra:?}");
            let mut w = WatchLines::new(resp);
            assert!(matches!(w.next(Duration::from_millis(300)).await, Next::Idle), "{extra:?}");
            let (mut skipped, mut expected) = (0, Vec::new());
            for i in 0.. {
                let name = format!("w{i}");
                let made: Value = create(&name).await.expect("create").json().await.expect("json");
                let rv: i64 = made["metadata"]["resourceVersion"].as_str().and_then(|r| r.parse().ok()).expect("rv");
                if rv <= future {
                    skipped += 1;
                } else {
                    expected.push(name);
                    if expected.len() == 2 {
                        break;
                    }
                }
            }
            assert!(skipped > 0, "no write landed at or before {future}");
            for name in &expected {
                assert_eq!(name_of(&next_event(&mut w).await), ("ADDED", name.as_str()), "{extra:?}");
            }

            // Initial events not older than the current revision.
            let list: Value = c.get(&base).send().await.expect("list").json().await.expect("json");
            let rv = list["metadata"]["resourceVersion"].as_str().expect("rv").to_string();
            let resp = c
                .get(format!("{base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=20"))
                .send()
                .await
                .expect("watch");
            assert_eq!(resp.status(), 200, "{extra:?}");
            let mut w = WatchLines::new(resp);
            let mut names = Vec::new();
            loop {
                let ev = next_event(&mut w).await;
                if ev["type"] == "BOOKMARK" {
                    assert_eq!(ev["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
                    break;
                }
                names.push(name_of(&ev).1.to_string());
            }
            assert!(names.iter().any(|n| n == "first"), "{names:?}");
            assert_eq!(names.len(), skipped + 2 + 2, "{names:?}");
        });
    }
}

/// A metadata-only watch's bookmarks are PartialObjectMetadata, as every
/// object it gets: client-go decodes them by that kind.
#[test]
fn metadata_only_watches_get_partial_object_metadata_bookmarks() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let resp = c
            .get(format!("{}/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10", k.url))
            .header("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 200);
        let mut w = WatchLines::new(resp);
        loop {
            let ev = next_event(&mut w).await;
            assert_eq!(ev["object"]["kind"], "PartialObjectMetadata", "{ev}");
            assert_eq!(ev["object"]["apiVersion"], "meta.k8s.io/v1", "{ev}");
            if ev["type"] == "BOOKMARK" {
                break;
            }
        }
    });
}
