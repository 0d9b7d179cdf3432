//! Issue 22: API Priority and Fairness as upstream serves it. The
//! bootstrap configuration is there and comes back when deleted, responses
//! name the FlowSchema and priority level that classified them, and a flood
//! of lists by one user is shed with 429 and Retry-After while
//! system:masters, health probes and leader election keep answering.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Kapi;
use serde_json::{json, Value};

const TOKENS: &str =
    "flood-token,flooder,flooder-uid,flooders\nkcm-token,system:kube-controller-manager,kcm-uid\n";

fn start() -> (Kapi, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("tokens");
    let k = Kapi::start(&[
        "--token-auth-file",
        tokens.to_str().expect("path"),
        "--authorization-mode",
        "AlwaysAllow",
    ]);
    (k, dir)
}

fn token_client(k: &Kapi, token: &str) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(k.pki("ca.crt").as_bytes()).expect("ca");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().expect("header"),
    );
    reqwest::Client::builder()
        .add_root_certificate(ca)
        .default_headers(headers)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn get(c: &reqwest::Client, url: &str) -> Value {
    c.get(url)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json")
}

async fn uid_of(c: &reqwest::Client, k: &Kapi, plural: &str, name: &str) -> String {
    let v = get(
        c,
        &format!(
            "{}/apis/flowcontrol.apiserver.k8s.io/v1/{plural}/{name}",
            k.url
        ),
    )
    .await;
    v["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits until `f` holds, failing after `limit`.
async fn eventually<F, Fut>(what: &str, limit: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    while !f().await {
        assert!(t0.elapsed() < limit, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn bootstrap_configuration_and_the_response_headers() {
    let (k, _dir) = start();
    let admin = k.admin_client();
    common::runtime().block_on(async {
        // Upstream's mandatory and suggested objects, with the autoupdate
        // annotation.
        for (plural, names) in [
            (
                "flowschemas",
                &[
                    "exempt",
                    "catch-all",
                    "probes",
                    "system-leader-election",
                    "system-node-high",
                    "system-nodes",
                    "kube-controller-manager",
                    "kube-scheduler",
                    "kube-system-service-accounts",
                    "service-accounts",
                    "global-default",
                ][..],
            ),
            (
                "prioritylevelconfigurations",
                &[
                    "exempt",
                    "catch-all",
                    "system",
                    "node-high",
                    "leader-election",
                    "workload-high",
                    "workload-low",
                    "global-default",
                ],
            ),
        ] {
            let url = format!("{}/apis/flowcontrol.apiserver.k8s.io/v1/{plural}", k.url);
            eventually(
                &format!("every bootstrap {plural}"),
                Duration::from_secs(20),
                || {
                    let (admin, url) = (admin.clone(), url.clone());
                    async move {
                        let list = get(&admin, &url).await;
                        let have: Vec<&str> = list["items"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|i| i["metadata"]["name"].as_str())
                            .collect();
                        names.iter().all(|n| have.contains(n))
                    }
                },
            )
            .await;
            let one = get(&admin, &format!("{url}/{}", names[0])).await;
            assert_eq!(
                one["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"], "true",
                "{one}"
            );
        }
        // The headers name the schema and level by uid: exempt for the admin,
        // probes for an anonymous /readyz, global-default for a user.
        let exempt = uid_of(&admin, &k, "flowschemas", "exempt").await;
        let exempt_level = uid_of(&admin, &k, "prioritylevelconfigurations", "exempt").await;
        let probes = uid_of(&admin, &k, "flowschemas", "probes").await;
        let global = uid_of(&admin, &k, "flowschemas", "global-default").await;
        let header = |r: &reqwest::Response, h: &str| {
            r.headers()
                .get(h)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        eventually(
            "the admin is classified by the stored exempt schema",
            Duration::from_secs(10),
            || {
                let admin = admin.clone();
                let (url, exempt, exempt_level) = (
                    format!("{}/api/v1/namespaces", k.url),
                    exempt.clone(),
                    exempt_level.clone(),
                );
                async move {
                    let r = admin.get(url).send().await.expect("get");
                    header(&r, "X-Kubernetes-PF-FlowSchema-UID") == exempt
                        && header(&r, "X-Kubernetes-PF-PriorityLevel-UID") == exempt_level
                }
            },
        )
        .await;
        // Each object is taken into the configuration as the informers see
        // it: wait for the last ones.
        let anon = k.anonymous_client();
        let flooder = token_client(&k, "flood-token");
        eventually("probes and global-default classify", Duration::from_secs(10), || {
            let (anon, flooder) = (anon.clone(), flooder.clone());
            let (probes, global) = (probes.clone(), global.clone());
            let k = &k;
            async move {
                let r = anon.get(format!("{}/readyz", k.url)).send().await.expect("readyz");
                let probed = header(&r, "X-Kubernetes-PF-FlowSchema-UID") == probes;
                let r = flooder
                    .get(format!("{}/api/v1/namespaces/default/configmaps", k.url))
                    .send()
                    .await
                    .expect("get");
                assert_eq!(r.status(), 200);
                probed && header(&r, "X-Kubernetes-PF-FlowSchema-UID") == global
            }
        })
        .await;

        // Each schema says whether its level exists (kubectl's MISSINGPL).
        eventually("the Dangling conditions", Duration::from_secs(10), || {
            let admin = admin.clone();
            let url = format!("{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default", k.url);
            async move {
                let fs = get(&admin, &url).await;
                fs["status"]["conditions"].as_array().into_iter().flatten().any(|c| {
                    c["type"] == "Dangling" && c["status"] == "False" && c["reason"] == "Found"
                        && c["message"] == "This FlowSchema references the PriorityLevelConfiguration object named \"global-default\" and it exists"
                })
            }
        })
        .await;
        let (code, body) = common::http::send(&admin, "POST", &format!("{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", k.url), Some(json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "orphan"},
            "spec": {"priorityLevelConfiguration": {"name": "nowhere"}, "matchingPrecedence": 5000,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "nobody"}}], "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]},
        }))).await;
        assert_eq!(code, 201, "{body}");
        eventually("a dangling schema marked", Duration::from_secs(10), || {
            let admin = admin.clone();
            let url = format!("{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/orphan", k.url);
            async move {
                let fs = get(&admin, &url).await;
                fs["status"]["conditions"][0]["status"] == "True" && fs["status"]["conditions"][0]["reason"] == "NotFound"
            }
        })
        .await;
        let (ok, out, err) = common::run(k.kubectl().args(["get", "flowschemas", "orphan", "--no-headers"]));
        assert!(ok && out.trim_end().ends_with("True"), "MISSINGPL column: {out}{err}");

        // A deleted mandatory schema comes back (a new object).
        let url = format!(
            "{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/catch-all",
            k.url
        );
        let before = uid_of(&admin, &k, "flowschemas", "catch-all").await;
        let r = admin.delete(&url).send().await.expect("delete");
        assert_eq!(r.status(), 200);
        eventually("catch-all recreated", Duration::from_secs(10), || {
            let (admin, before) = (admin.clone(), before.clone());
            let k = &k;
            async move {
                let now = uid_of(&admin, k, "flowschemas", "catch-all").await;
                !now.is_empty() && now != before
            }
        })
        .await;
        // A spec changed by hand is put back while autoupdate is on.
        let r = admin
            .patch(format!(
                "{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default",
                k.url
            ))
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({"spec": {"matchingPrecedence": 2000}}).to_string())
            .send()
            .await
            .expect("patch");
        assert_eq!(r.status(), 200);
        eventually(
            "global-default's spec restored",
            Duration::from_secs(10),
            || {
                let admin = admin.clone();
                let url = format!(
                    "{}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default",
                    k.url
                );
                async move { get(&admin, &url).await["spec"]["matchingPrecedence"] == 9900 }
            },
        )
        .await;
    });
}

/// 64 clients of one user listing 5,000 objects as fast as they are let;
/// meanwhile system:masters gets, anonymous /readyz and a leader's Lease
/// renewal each answer within a second, and the flood sees 429s with
/// Retry-After.
#[test]
fn a_flood_of_lists_is_shed_while_the_exempt_and_leader_election_answer() {
    let (k, _dir) = start();
    let admin = k.admin_client();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // The flooder's own level: few seats, one short queue.
        let fc = format!("{}/apis/flowcontrol.apiserver.k8s.io/v1", k.url);
        let (code, body) = common::http::send(&admin, "POST", &format!("{fc}/prioritylevelconfigurations"), Some(json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "flood"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 5}}}},
        }))).await;
        assert_eq!(code, 201, "{body}");
        let (code, body) = common::http::send(&admin, "POST", &format!("{fc}/flowschemas"), Some(json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "flood"},
            "spec": {"priorityLevelConfiguration": {"name": "flood"}, "matchingPrecedence": 500,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "flooders"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]}]},
        }))).await;
        assert_eq!(code, 201, "{body}");
        // 5,000 ConfigMaps.
        let cms = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let created = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for w in 0..16 {
            let (admin, cms, created) = (admin.clone(), cms.clone(), created.clone());
            tasks.push(tokio::spawn(async move {
                for i in (w..5000).step_by(16) {
                    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}});
                    let r = admin.post(&cms).json(&cm).send().await.expect("create");
                    // Read to the end, as client-go does: a response
                    // dropped before its body arrived resets the stream,
                    // and h2's client ends a connection after 1,024 such
                    // resets whose late frames it no longer recognises
                    // (GOAWAY too_many_internal_resets).
                    let status = r.status();
                    let _ = r.bytes().await;
                    assert_eq!(status, 201);
                    created.fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
        for t in tasks {
            t.await.expect("create task");
        }
        // The flood classifies as the flooder's schema (the configuration
        // followed from storage).
        let flooder = token_client(&k, "flood-token");
        let flood_uid = uid_of(&admin, &k, "flowschemas", "flood").await;
        eventually("the flood schema in force", Duration::from_secs(10), || {
            let (flooder, url, uid) = (flooder.clone(), format!("{cms}?limit=1"), flood_uid.clone());
            async move {
                let r = flooder.get(url).send().await.expect("get");
                r.headers().get("X-Kubernetes-PF-FlowSchema-UID").and_then(|v| v.to_str().ok()) == Some(uid.as_str())
            }
        })
        .await;
        let stop = Arc::new(AtomicBool::new(false));
        let (served, shed, retry_after) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(true)));
        let mut flood = Vec::new();
        for _ in 0..64 {
            let (c, url, stop, served, shed, retry_after) = (flooder.clone(), cms.clone(), stop.clone(), served.clone(), shed.clone(), retry_after.clone());
            flood.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let Ok(r) = c.get(&url).send().await else { continue };
                    if r.status() == 429 {
                        if r.headers().get("Retry-After").and_then(|v| v.to_str().ok()) != Some("1") {
                            retry_after.store(false, Ordering::Relaxed);
                        }
                        shed.fetch_add(1, Ordering::Relaxed);
                        let _ = r.bytes().await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    } else {
                        let _ = r.bytes().await;
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        // What must keep answering, each within a second.
        let kcm = token_client(&k, "kcm-token");
        let lease_url = format!("{}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/flood-test", k.url);
        let r = kcm.post(format!("{}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", k.url))
            .json(&json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "flood-test"}, "spec": {"holderIdentity": "kcm", "leaseDurationSeconds": 15}}))
            .send().await.expect("lease");
        assert_eq!(r.status(), 201);
        let anon = k.anonymous_client();
        let mut worst = Duration::ZERO;
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(8) {
            let timed = |what: &str, t: Instant, worst: &mut Duration| {
                let took = t.elapsed();
                *worst = (*worst).max(took);
                assert!(took < Duration::from_secs(1), "{what} took {took:?} under the flood");
            };
            let t = Instant::now();
            let r = admin.get(format!("{cms}/cm-1")).send().await.expect("admin get");
            assert_eq!(r.status(), 200);
            timed("a system:masters get", t, &mut worst);
            let t = Instant::now();
            let r = anon.get(format!("{}/readyz", k.url)).send().await.expect("readyz");
            assert_eq!(r.status(), 200);
            timed("/readyz", t, &mut worst);
            let mut lease = get(&kcm, &lease_url).await;
            lease["spec"]["renewTime"] = json!(chrono_now());
            let t = Instant::now();
            let r = kcm.put(&lease_url).json(&lease).send().await.expect("renew");
            assert_eq!(r.status(), 200, "lease renewal");
            timed("a Lease renewal", t, &mut worst);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for f in flood {
            let _ = f.await;
        }
        let (served, shed) = (served.load(Ordering::Relaxed), shed.load(Ordering::Relaxed));
        assert!(shed > 0, "the flood was never shed ({served} lists served)");
        assert!(served > 0, "the flood was never served");
        assert!(retry_after.load(Ordering::Relaxed), "a 429 without Retry-After: 1");
        eprintln!("flood: {served} lists served, {shed} shed; slowest exempt or leader-election request {worst:?}");
        // The shedding is counted as upstream names it.
        let metrics = admin.get(format!("{}/metrics", k.url)).send().await.expect("metrics").text().await.expect("text");
        assert!(metrics.contains("apiserver_flowcontrol_rejected_requests_total{flow_schema=\"flood\",priority_level=\"flood\",reason=\"queue-full\"}"), "{}", metrics.lines().filter(|l| l.contains("flowcontrol")).collect::<Vec<_>>().join("\n"));
        assert!(metrics.contains("apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"}"));
    });
}

fn chrono_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// `--enable-priority-and-fairness=false`: max-in-flight, no APF headers.
#[test]
fn without_priority_and_fairness_there_are_no_apf_headers() {
    let k = Kapi::start(&["--enable-priority-and-fairness=false"]);
    common::runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!("{}/api/v1/namespaces", k.url))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
        assert!(r.headers().get("X-Kubernetes-PF-FlowSchema-UID").is_none());
    });
}
