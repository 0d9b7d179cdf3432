//! Large collections on a real etcd (issue 17): 10,000 ConfigMaps of
//! ~1 KiB (about 12 MiB, three times gRPC's 4 MiB default message size)
//! listed whole, across namespaces and in pages, replayed by a watch, paged
//! through a compaction, deleted as a collection; and a namespace holding
//! more than 4 MiB deleted. The expectations are kube-apiserver's.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use common::etcd::EtcdCluster;
use common::watch::{rv_of, Next, WatchLines};
use common::{runtime, Kapi};
use futures::FutureExt;
use serde_json::{json, Value};

const COUNT: usize = 10_000;
const CLIENTS: usize = 32;
const PAGE: usize = 500;
/// For requests that move many MiB: above kapi's 60 s --request-timeout,
/// so that a slow answer shows as the server's, not the client's.
const BIG: Duration = Duration::from_secs(70);

/// upstream's `inconsistentContinue` (staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go).
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

fn name_of(i: usize) -> String {
    format!("cm-{i:05}")
}

fn configmap(name: &str, bytes: usize) -> Value {
    let filler: String = name.chars().cycle().take(bytes).collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"set": "large"}},
        "data": {"payload": filler}})
}

/// 32 clients, each its own HTTP/2 connection.
fn clients(k: &Kapi) -> Vec<reqwest::Client> {
    (0..CLIENTS).map(|_| k.admin_client()).collect()
}

async fn create_namespace(c: &reqwest::Client, url: &str, ns: &str) {
    let r = c
        .post(format!("{url}/api/v1/namespaces"))
        .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
        .send()
        .await
        .expect("create namespace");
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
}

/// Creates `count` ConfigMaps of `bytes` each in `ns` from 32 clients;
/// returns name -> resourceVersion of every create, all of which must be
/// acknowledged with 201.
async fn create_many(
    clients: &[reqwest::Client],
    url: &str,
    ns: &str,
    count: usize,
    bytes: usize,
) -> BTreeMap<String, i64> {
    let mut tasks = Vec::new();
    for (w, c) in clients.iter().enumerate() {
        let (c, base) = (
            c.clone(),
            format!("{url}/api/v1/namespaces/{ns}/configmaps"),
        );
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            let mut failures = Vec::new();
            let mut http2 = true;
            for i in (w..count).step_by(CLIENTS) {
                let name = name_of(i);
                match c.post(&base).json(&configmap(&name, bytes)).send().await {
                    Ok(r) => {
                        http2 &= r.version() == reqwest::Version::HTTP_2;
                        let code = r.status().as_u16();
                        let body: Value = r.json().await.unwrap_or_default();
                        match (code, rv_of(&body)) {
                            (201, Some(rv)) => out.push((name, rv)),
                            _ => failures.push(format!("POST {name}: {code} {body}")),
                        }
                    }
                    Err(e) => failures.push(format!("POST {name}: {e}")),
                }
            }
            (out, failures, http2)
        }));
    }
    let mut created = BTreeMap::new();
    let mut failures = Vec::new();
    for t in tasks {
        let (out, f, http2) = t.await.expect("create task");
        assert!(http2, "the clients did not speak HTTP/2");
        created.extend(out);
        failures.extend(f);
    }
    assert!(
        failures.is_empty(),
        "{} of {count} creates failed; the first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    created
}

/// GET returning (status, body as JSON or Null, body text head).
async fn get_json(c: &reqwest::Client, url: &str) -> (u16, Value, String) {
    let r = c
        .get(url)
        .timeout(BIG)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let code = r.status().as_u16();
    let bytes = r
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("GET {url} body: {e}"));
    let text: String = String::from_utf8_lossy(&bytes[..bytes.len().min(600)]).into();
    (
        code,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        text,
    )
}

fn names_with_rv(list: &Value) -> Vec<(String, i64)> {
    list["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|i| {
            let name = i["metadata"]["name"].as_str()?;
            // The root CA publisher's ConfigMap is not one of the test's.
            name.starts_with("cm-")
                .then(|| (name.to_string(), rv_of(i).unwrap_or(0)))
        })
        .collect()
}

/// Pages through `base` (a collection URL) with limit=500 from `token`;
/// returns every cm-* name in the order seen and the number of pages.
async fn page_through(
    c: &reqwest::Client,
    base: &str,
    mut token: Option<String>,
) -> (Vec<String>, usize) {
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(
            pages <= COUNT / PAGE + 5,
            "paging did not end after {pages} pages"
        );
        let url = match &token {
            Some(t) => format!("{base}?limit={PAGE}&continue={t}"),
            None => format!("{base}?limit={PAGE}"),
        };
        let (code, page, text) = get_json(c, &url).await;
        assert_eq!(code, 200, "page {pages}: {text}");
        let items = page["items"].as_array().map_or(0, Vec::len);
        assert!(
            items <= PAGE,
            "page {pages} has {items} items, more than limit={PAGE}"
        );
        seen.extend(names_with_rv(&page).into_iter().map(|(n, _)| n));
        token = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(String::from);
        if token.is_none() {
            return (seen, pages);
        }
    }
}

/// Runs one check, timing it; a failed assertion is recorded, not raised.
async fn check<F: std::future::Future<Output = ()>>(failures: &mut Vec<String>, name: &str, f: F) {
    let t = Instant::now();
    let outcome = AssertUnwindSafe(f).catch_unwind().await;
    let took = t.elapsed().as_secs_f64();
    match outcome {
        Ok(()) => eprintln!("[large_collections] {name}: ok in {took:.1} s"),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            eprintln!("[large_collections] {name}: FAILED in {took:.1} s");
            failures.push(format!("{name}: {msg}"));
        }
    }
}

fn step(name: &str, started: Instant) {
    eprintln!(
        "[large_collections] {name}: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn ten_thousand_configmaps_on_etcd() {
    let t0 = Instant::now();
    let cluster = EtcdCluster::start(1);
    let k = Kapi::start(&["--etcd-servers", &cluster.endpoints().join(",")]);
    let rt = runtime();
    rt.block_on(async {
        let c = k.admin_client();
        let ns = "large";
        create_namespace(&c, &k.url, ns).await;
        let base = format!("{}/api/v1/namespaces/{ns}/configmaps", k.url);
        let (code, before, text) = get_json(&c, &base).await;
        assert_eq!(code, 200, "{text}");
        let rv_before = rv_of(&before).expect("list resourceVersion");

        // 10,000 creates from 32 HTTP/2 clients.
        let t = Instant::now();
        let created = create_many(&clients(&k), &k.url, ns, COUNT, 1024).await;
        assert_eq!(created.len(), COUNT);
        step("10,000 creates", t);

        // Each check below runs even when one before it failed; the test
        // fails at the end with every failure.
        let mut failures = Vec::new();

        // An unpaged list returns everything, whatever the size.
        check(&mut failures, "unpaged list", async {
            let (code, list, text) = get_json(&c, &base).await;
            assert_eq!(code, 200, "unpaged list of ~12 MiB: {text}");
            let listed: BTreeMap<String, i64> = names_with_rv(&list).into_iter().collect();
            assert_eq!(listed.len(), COUNT, "the unpaged list has {} of {COUNT}", listed.len());
            assert!(listed == created, "the unpaged list differs from what was created");
            assert!(list["metadata"]["continue"].as_str().is_none_or(str::is_empty));
        })
        .await;

        // So does a list across all namespaces.
        check(&mut failures, "all-namespaces list", async {
            let (code, all, text) = get_json(&c, &format!("{}/api/v1/configmaps", k.url)).await;
            assert_eq!(code, 200, "all-namespaces list: {text}");
            let ours = all["items"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter(|i| {
                    i["metadata"]["namespace"] == ns
                        && i["metadata"]["name"].as_str().is_some_and(|n| n.starts_with("cm-"))
                })
                .count();
            assert_eq!(ours, COUNT, "the all-namespaces list has {ours} of {COUNT}");
        })
        .await;

        // Pages of 500 visit every object exactly once, in key order.
        check(&mut failures, "paged list", async {
            let (seen, pages) = page_through(&c, &base, None).await;
            let unique: BTreeSet<&String> = seen.iter().collect();
            assert_eq!(unique.len(), seen.len(), "paging returned duplicates");
            assert!(
                seen.iter().cloned().eq(created.keys().cloned()),
                "paging missed objects or returned them out of order: {} seen",
                seen.len()
            );
            assert!(pages >= COUNT / PAGE, "{pages} pages");
        })
        .await;

        // A watch from before the creates replays them all, in order.
        check(&mut failures, "watch replay", replay_watch(&c, &base, rv_before, &created)).await;

        // A continue token whose revision was compacted: 410 Expired with a
        // fresh token, then the rest of the list from that token.
        check(&mut failures, "continue across compaction", async {
            let (code, first, text) = get_json(&c, &format!("{base}?limit={PAGE}")).await;
            assert_eq!(code, 200, "{text}");
            let token = first["metadata"]["continue"].as_str().expect("a continue token").to_string();
            let first_names: Vec<String> = names_with_rv(&first).into_iter().map(|(n, _)| n).collect();
            // Revisions move past the token's (a key outside kapi's prefix),
            // then etcd forgets everything before them.
            let (ok, _, err) = common::etcd::etcdctl(&cluster.endpoints().join(","), &["put", "/compaction-bump", "x"]);
            assert!(ok, "{err}");
            let rev = cluster.revision();
            cluster.compact(rev);
            let (code, status, text) = get_json(&c, &format!("{base}?limit={PAGE}&continue={token}")).await;
            assert_eq!(code, 410, "GET {base}?limit={PAGE}&continue=<token at a compacted revision>: {text}");
            assert_eq!(status["kind"], "Status", "{text}");
            assert_eq!(status["reason"], "Expired", "{text}");
            assert_eq!(status["code"], 410, "{text}");
            assert_eq!(status["message"], INCONSISTENT_CONTINUE, "{text}");
            let fresh = status["metadata"]["continue"].as_str().unwrap_or("");
            assert!(
                !fresh.is_empty(),
                "410 for a compacted continue token carries no fresh token in metadata.continue \
                 (upstream's handleCompactedErrorForPaging sets one, at resourceVersion -1): {text}"
            );
            let (rest, _) = page_through(&c, &base, Some(fresh.to_string())).await;
            let mut whole = first_names.clone();
            whole.extend(rest);
            assert!(
                whole.iter().cloned().eq(created.keys().cloned()),
                "the first page and the pages after the fresh token are not every object once ({} names)",
                whole.len()
            );
        })
        .await;

        // DELETE on the collection removes all 10,000.
        check(&mut failures, "deletecollection", async {
            let r = c.delete(&base).timeout(BIG).send().await.expect("deletecollection");
            let code = r.status().as_u16();
            let body = r.bytes().await.expect("deletecollection body");
            assert_eq!(
                code,
                200,
                "deletecollection of {COUNT}: {}",
                String::from_utf8_lossy(&body[..body.len().min(600)])
            );
            let (code, after, text) = get_json(&c, &base).await;
            assert_eq!(code, 200, "{text}");
            let left = names_with_rv(&after);
            assert!(left.is_empty(), "{} objects survived deletecollection, e.g. {:?}", left.len(), left.first());
        })
        .await;

        assert!(failures.is_empty(), "{} check(s) failed:\n{}", failures.len(), failures.join("\n"));
    });
    step("total", t0);
}

/// `?watch=true&resourceVersion=<rv before the creates>` replays every
/// create as ADDED, in resourceVersion order, each once.
async fn replay_watch(c: &reqwest::Client, base: &str, from: i64, created: &BTreeMap<String, i64>) {
    let r = c
        .get(format!(
            "{base}?watch=true&resourceVersion={from}&timeoutSeconds=120"
        ))
        .timeout(Duration::from_secs(130))
        .send()
        .await
        .expect("watch");
    let code = r.status().as_u16();
    if code != 200 {
        panic!(
            "watch from resourceVersion {from} (before {COUNT} creates): {code} {}",
            r.text().await.unwrap_or_default()
        );
    }
    let mut lines = WatchLines::new(r);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: BTreeMap<String, i64> = BTreeMap::new();
    let mut last = from;
    while seen.len() < created.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "the watch replayed {} of {} creates within 60 s",
            seen.len(),
            created.len()
        );
        match lines.next(left).await {
            Next::Event(ev) => {
                let ty = ev["type"].as_str().unwrap_or("");
                if ty == "BOOKMARK" {
                    continue;
                }
                if ty == "ERROR" {
                    panic!(
                        "GET {base}?watch=true&resourceVersion={from} (the list's resourceVersion before {COUNT} creates) \
                         answered, after {} events, {ev}",
                        seen.len()
                    );
                }
                let name = ev["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                if !name.starts_with("cm-") {
                    continue;
                }
                let rv = rv_of(&ev["object"]).unwrap_or(0);
                assert_eq!(ty, "ADDED", "{name}: {ty} at {rv}");
                assert!(rv > last, "{name} at {rv} came after {last}: out of order");
                last = rv;
                assert_eq!(
                    created.get(&name),
                    Some(&rv),
                    "{name} at {rv} is not a create the test made"
                );
                assert!(
                    seen.insert(name.clone(), rv).is_none(),
                    "{name} replayed twice"
                );
            }
            Next::Idle => {}
            other => panic!(
                "the watch stopped after {} of {} creates: {other:?}",
                seen.len(),
                created.len()
            ),
        }
    }
}

#[test]
fn deleting_a_namespace_over_4_mib_finishes() {
    let t0 = Instant::now();
    let cluster = EtcdCluster::start(1);
    let k = Kapi::start(&["--etcd-servers", &cluster.endpoints().join(",")]);
    let rt = runtime();
    rt.block_on(async {
        let c = k.admin_client();
        let ns = "heavy";
        create_namespace(&c, &k.url, ns).await;
        // 640 ConfigMaps of 8 KiB: 5 MiB, over etcd's 4 MiB gRPC default.
        let count = 640;
        let created = create_many(&clients(&k), &k.url, ns, count, 8 * 1024).await;
        assert_eq!(created.len(), count);
        let base = format!("{}/api/v1/namespaces/{ns}/configmaps", k.url);
        let (code, _, text) = get_json(&c, &base).await;
        assert_eq!(code, 200, "unpaged list of 5 MiB: {text}");

        let r = c
            .delete(format!("{}/api/v1/namespaces/{ns}", k.url))
            .send()
            .await
            .expect("delete namespace");
        assert_eq!(r.status(), 200, "{:?}", r.text().await);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = String::new();
        loop {
            let (code, v, text) = get_json(&c, &format!("{}/api/v1/namespaces/{ns}", k.url)).await;
            if code == 404 {
                break;
            }
            if code == 200 {
                last = format!(
                    "phase {} conditions {}",
                    v["status"]["phase"], v["status"]["conditions"]
                );
            } else {
                last = format!("{code} {text}");
            }
            assert!(
                Instant::now() < deadline,
                "namespace {ns} with 5 MiB of ConfigMaps still exists 60 s after DELETE: {last}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let (code, after, text) = get_json(&c, &base).await;
        assert_eq!(code, 200, "{text}");
        assert!(
            names_with_rv(&after).is_empty(),
            "ConfigMaps of the deleted namespace remain"
        );
        let _ = last;
    });
    step("namespace deletion test total", t0);
}
