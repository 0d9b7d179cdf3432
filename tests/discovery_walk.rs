//! Every verb discovery advertises is served: the test walks aggregated
//! discovery (`/api` and `/apis`, every group, every version, a CRD's too)
//! and, for every resource and subresource and every verb advertised, sends
//! one well-formed request as `system:masters`. None may answer 404, 405 or
//! 501, fail with 500 or hang; the requests that read or write an object must
//! succeed. The connect subresources (log, exec, attach, portforward, proxy)
//! reach a kubelet or a backend this server does not have: any other answer
//! is theirs to give, and the walk prints what each one answered.
//!
//! The walk runs in phases: setup (a namespace, a CRD with status and scale
//! subresources, the pods the binding and eviction subresources act on),
//! create (one object per kind, labelled `kapi-walk=doomed`), read and write
//! (get, list, watch, update, patch and every subresource), delete (those
//! objects, by name) and last deletecollection (only what carries the label).
//! Nothing the server made itself is deleted, and the test checks a few of
//! those objects are still there at the end.

mod common;

use common::manifests::{
    csr_pem_base64, manifest, pod, resources_of, Resource, AGG_V2, NODE, NS, SERVICE,
};
use common::{runtime, Kapi};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The label of every object the walk creates to delete.
const DOOMED: &str = "kapi-walk=doomed";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
/// Requests in flight at once.
const PARALLEL: usize = 8;
/// An answer slower than this is a hang.
const PATIENCE: Duration = Duration::from_secs(15);
/// The (resource, verb) pairs of the built-in kinds alone: the walk must
/// see at least these many, so it cannot pass by walking nothing.
const MIN_PAIRS: usize = 600;
/// Subresources that reach a node agent or a backend: no stored object.
const CONNECT: &[&str] = &["log", "exec", "attach", "portforward", "proxy"];

/// The CRD the walk covers: namespaced, with status and scale.
const WALKER_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "walkers.walk.example.com"},
  "spec": {
    "group": "walk.example.com",
    "scope": "Namespaced",
    "names": {"plural": "walkers", "singular": "walker", "kind": "Walker"},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
      "subresources": {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}
    }]
  }
}"#;

/// One advertised verb of a resource or subresource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pair {
    resource: String,
    sub: String,
    verb: String,
}

impl Pair {
    fn new(r: &Resource, sub: &str, verb: &str) -> Pair {
        Pair {
            resource: r.id(),
            sub: sub.to_string(),
            verb: verb.to_string(),
        }
    }

    fn show(&self) -> String {
        if self.sub.is_empty() {
            format!("{} {}", self.resource, self.verb)
        } else {
            format!("{}/{} {}", self.resource, self.sub, self.verb)
        }
    }
}

fn advertised(resources: &[Resource]) -> BTreeSet<Pair> {
    let mut pairs = BTreeSet::new();
    for r in resources {
        for v in &r.verbs {
            pairs.insert(Pair::new(r, "", v));
        }
        for (sub, verbs) in &r.subresources {
            for v in verbs {
                pairs.insert(Pair::new(r, sub, v));
            }
        }
    }
    pairs
}

fn method_of(verb: &str) -> &'static str {
    match verb {
        "create" => "POST",
        "update" => "PUT",
        "patch" => "PATCH",
        "delete" | "deletecollection" => "DELETE",
        _ => "GET",
    }
}

/// What one request got: its status (None: no answer) and body.
struct Answer {
    status: Option<u16>,
    body: Value,
    text: String,
}

impl Answer {
    /// A Status's reason and message, or the body's start.
    fn excerpt(&self) -> String {
        if let Some(m) = self.body["message"].as_str() {
            return format!("{}: {m}", self.body["reason"].as_str().unwrap_or(""));
        }
        let flat: String = self.text.split_whitespace().collect::<Vec<_>>().join(" ");
        flat.chars().take(200).collect()
    }
}

/// How much of an answer the walk reads.
#[derive(Clone, Copy)]
enum Read {
    Whole,
    /// A stream (a connect subresource): its status.
    Status,
    /// A watch: its first bytes, the first event.
    FirstChunk,
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// A read or write of an object the walk made: 2xx.
    Success,
    /// A connect subresource: anything but 404, 405, 501 or 500.
    AnyAnswer,
    /// A watch: 2xx, and a first event (if one came) that is no ERROR.
    Watch,
}

struct Outcome {
    pair: Pair,
    method: String,
    path: String,
    status: Option<u16>,
    excerpt: String,
    expect: Expect,
    failure: Option<String>,
}

impl Outcome {
    fn show(&self) -> String {
        let status = self
            .status
            .map_or_else(|| "no answer".to_string(), |s| s.to_string());
        format!(
            "{}: {} {} -> {status} {}",
            self.pair.show(),
            self.method,
            self.path,
            self.excerpt
        )
    }
}

struct Walk {
    c: reqwest::Client,
    base: String,
    outcomes: Mutex<Vec<Outcome>>,
    /// Resources whose object could not be created.
    unmade: Mutex<BTreeSet<String>>,
    csr: String,
}

impl Walk {
    async fn send(
        &self,
        method: &str,
        path: &str,
        ct: &str,
        body: Option<String>,
        read: Read,
    ) -> Answer {
        let mut rq = self
            .c
            .request(
                method.parse().expect("method"),
                format!("{}{path}", self.base),
            )
            .header("Accept", JSON);
        if let Some(b) = body {
            rq = rq.header("Content-Type", ct).body(b);
        }
        let exchange = async {
            let mut resp = rq.send().await?;
            let status = resp.status().as_u16();
            // An error's Status is always read.
            let text = match read {
                _ if status >= 300 => resp.text().await?,
                Read::Whole => resp.text().await?,
                Read::Status => String::new(),
                Read::FirstChunk => {
                    match tokio::time::timeout(Duration::from_secs(3), resp.chunk()).await {
                        Ok(Ok(Some(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
                        _ => String::new(),
                    }
                }
            };
            Ok::<_, reqwest::Error>((status, text))
        };
        match tokio::time::timeout(PATIENCE, exchange).await {
            Err(_) => Answer {
                status: None,
                body: Value::Null,
                text: format!("no answer in {PATIENCE:?}"),
            },
            Ok(Err(e)) => Answer {
                status: None,
                body: Value::Null,
                text: format!("transport error: {e}"),
            },
            Ok(Ok((status, text))) => Answer {
                status: Some(status),
                body: serde_json::from_str(&text).unwrap_or(Value::Null),
                text,
            },
        }
    }

    fn record(&self, pair: Pair, method: &str, path: &str, a: &Answer, expect: Expect) {
        let failure = match a.status {
            None => Some(a.text.clone()),
            Some(s @ (404 | 405 | 501 | 500)) => Some(format!("answered {s}")),
            Some(s) if expect != Expect::AnyAnswer && !(200..300).contains(&s) => {
                Some(format!("answered {s}, not a success"))
            }
            Some(_) if expect == Expect::Watch && first_event(&a.text)["type"] == "ERROR" => {
                Some("the watch's first event is an ERROR".to_string())
            }
            _ => None,
        }
        .map(|f| {
            if self.unmade.lock().expect("lock").contains(&pair.resource) && pair.verb != "create" {
                format!("{f} (its object could not be created)")
            } else {
                f
            }
        });
        self.outcomes.lock().expect("lock").push(Outcome {
            pair,
            method: method.to_string(),
            path: path.to_string(),
            status: a.status,
            excerpt: match expect {
                Expect::Watch if a.status == Some(200) => {
                    let event = first_event(&a.text);
                    let kind = event["type"].as_str().unwrap_or("(none within 3 s)");
                    match event["object"]["message"].as_str() {
                        Some(m) if kind == "ERROR" => format!("first event: ERROR {m}"),
                        _ => format!("first event: {kind}"),
                    }
                }
                _ => a.excerpt(),
            },
            expect,
            failure,
        });
    }

    async fn call(&self, pair: Pair, method: &str, path: &str, ct: &str, body: Option<Value>) {
        let a = self
            .send(method, path, ct, body.map(|b| b.to_string()), Read::Whole)
            .await;
        self.record(pair, method, path, &a, Expect::Success);
    }

    /// GET `from`, `edit` it, PUT it to `path`; a conflict (a controller
    /// wrote in between) is retried with the newer object, as clients do.
    async fn update(&self, pair: Pair, from: &str, path: &str, edit: fn(&mut Value)) {
        for attempt in 0..5 {
            let got = self.send("GET", from, JSON, None, Read::Whole).await;
            if got.status != Some(200) {
                self.record(pair, "GET (to update)", from, &got, Expect::Success);
                return;
            }
            let mut obj = got.body;
            edit(&mut obj);
            let put = self
                .send("PUT", path, JSON, Some(obj.to_string()), Read::Whole)
                .await;
            if put.status == Some(409) && attempt < 4 {
                continue;
            }
            self.record(pair, "PUT", path, &put, Expect::Success);
            return;
        }
    }

    async fn create(&self, r: &Resource) {
        if !r.has("create") {
            return;
        }
        let pair = Pair::new(r, "", "create");
        let path = r.collection();
        let Some(body) = manifest(r, &self.csr) else {
            let a = Answer {
                status: None,
                body: Value::Null,
                text: format!("the walk has no manifest for {} ({})", r.kind, r.id()),
            };
            self.unmade.lock().expect("lock").insert(r.id());
            self.record(pair, "POST", &path, &a, Expect::Success);
            return;
        };
        let a = self
            .send("POST", &path, JSON, Some(body.to_string()), Read::Whole)
            .await;
        if !a.status.is_some_and(|s| (200..300).contains(&s)) {
            self.unmade.lock().expect("lock").insert(r.id());
        }
        self.record(pair, "POST", &path, &a, Expect::Success);
    }

    /// Every verb but create and the deletions, then every subresource.
    async fn read_and_write(&self, r: &Resource) {
        let item = r.item();
        for verb in ["get", "list", "watch", "update", "patch"] {
            if !r.has(verb) {
                continue;
            }
            let pair = Pair::new(r, "", verb);
            match verb {
                "get" => self.call(pair, "GET", &item, JSON, None).await,
                "list" => self.call(pair, "GET", &r.collection(), JSON, None).await,
                "watch" => {
                    let path = format!("{}?watch=true&timeoutSeconds=1", r.collection());
                    let a = self.send("GET", &path, JSON, None, Read::FirstChunk).await;
                    self.record(pair, "GET", &path, &a, Expect::Watch);
                }
                "update" => {
                    self.update(pair, &item, &item, |o| {
                        o["metadata"]["labels"]["kapi-walk-updated"] = json!("true")
                    })
                    .await
                }
                _ => {
                    let patch = json!({"metadata": {"labels": {"kapi-walk-patched": "true"}}});
                    self.call(pair, "PATCH", &item, MERGE, Some(patch)).await
                }
            }
        }
        for (sub, verbs) in &r.subresources {
            for verb in verbs {
                self.subresource(r, sub, verb).await;
            }
        }
    }

    async fn subresource(&self, r: &Resource, sub: &str, verb: &str) {
        let pair = Pair::new(r, sub, verb);
        let path = format!("{}/{sub}", r.item());
        if CONNECT.contains(&sub) {
            let method = method_of(verb);
            let path = match sub {
                "proxy" => format!("{path}/walk"),
                "log" => format!("{path}?container=c"),
                "exec" => format!("{path}?command=true&container=c&stdout=true"),
                "attach" => format!("{path}?container=c&stdout=true"),
                _ => format!("{path}?ports=80"),
            };
            let (ct, body) = match method {
                "PATCH" => (MERGE, Some("{}".to_string())),
                "POST" | "PUT" => (JSON, Some("{}".to_string())),
                _ => (JSON, None),
            };
            let a = self.send(method, &path, ct, body, Read::Status).await;
            self.record(pair, method, &path, &a, Expect::AnyAnswer);
            return;
        }
        let pods = r.collection();
        match (sub, verb) {
            ("binding", "create") => {
                let body = json!({"apiVersion": "v1", "kind": "Binding",
                    "metadata": {"name": "walk-bind"},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}});
                let path = format!("{pods}/walk-bind/binding");
                self.call(pair, "POST", &path, JSON, Some(body)).await
            }
            ("eviction", "create") => {
                let body = json!({"apiVersion": "policy/v1", "kind": "Eviction",
                    "metadata": {"name": "walk-evict", "namespace": NS}});
                let path = format!("{pods}/walk-evict/eviction");
                self.call(pair, "POST", &path, JSON, Some(body)).await
            }
            ("token", "create") => {
                let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600}});
                self.call(pair, "POST", &path, JSON, Some(body)).await
            }
            (_, "get") => self.call(pair, "GET", &path, JSON, None).await,
            ("approval", "update") => self.update(pair, &path, &path, approve).await,
            // Served for PUT alone (upstream's FinalizeREST): the namespace
            // is read from the namespace.
            ("finalize", "update") => self.update(pair, &r.item(), &path, |_| {}).await,
            (_, "update") => self.update(pair, &path, &path, |_| {}).await,
            (_, "patch") => {
                self.call(pair, "PATCH", &path, MERGE, Some(json!({})))
                    .await
            }
            _ => {
                let a = Answer {
                    status: None,
                    body: Value::Null,
                    text: "the walk knows no request for this subresource verb".into(),
                };
                self.record(pair, method_of(verb), &path, &a, Expect::Success);
            }
        }
    }

    async fn delete(&self, r: &Resource) {
        if r.has("delete") {
            self.call(Pair::new(r, "", "delete"), "DELETE", &r.item(), JSON, None)
                .await;
        }
    }

    async fn delete_collection(&self, r: &Resource) {
        if r.has("deletecollection") {
            let path = format!("{}?labelSelector={DOOMED}", r.collection());
            self.call(
                Pair::new(r, "", "deletecollection"),
                "DELETE",
                &path,
                JSON,
                None,
            )
            .await;
        }
    }
}

/// The first event of a watch's first bytes (Null if none).
fn first_event(text: &str) -> Value {
    text.lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null)
}

/// The CSR approval: an Approved condition added to what was there.
fn approve(o: &mut Value) {
    let mut conditions = o["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !conditions.iter().any(|c| c["type"] == "Approved") {
        conditions.push(json!({"type": "Approved", "status": "True",
            "reason": "Walked", "message": "approved by the discovery walk"}));
    }
    o["status"]["conditions"] = Value::Array(conditions);
}

#[test]
fn every_advertised_verb_of_every_resource_is_served() {
    let started = Instant::now();
    let k = Kapi::start(&[]);
    let rt = runtime();
    let walk = Walk {
        c: k.admin_client(),
        base: k.url.clone(),
        outcomes: Mutex::new(Vec::new()),
        unmade: Mutex::new(BTreeSet::new()),
        csr: csr_pem_base64(),
    };
    let ok = |a: &Answer| a.status.is_some_and(|s| (200..300).contains(&s));

    // Setup: the namespace and the CRD; none of it is walked or deleted.
    rt.block_on(async {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}});
        let a = walk
            .send(
                "POST",
                "/api/v1/namespaces",
                JSON,
                Some(ns.to_string()),
                Read::Whole,
            )
            .await;
        assert!(ok(&a), "namespace {NS}: {:?} {}", a.status, a.text);
        let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let a = walk
            .send(
                "POST",
                path,
                JSON,
                Some(WALKER_CRD.to_string()),
                Read::Whole,
            )
            .await;
        assert!(ok(&a), "the walkers CRD: {:?} {}", a.status, a.text);
        let established = async {
            loop {
                let a = walk
                    .send(
                        "GET",
                        &format!("{path}/walkers.walk.example.com"),
                        JSON,
                        None,
                        Read::Whole,
                    )
                    .await;
                let conditions = a.body["status"]["conditions"].as_array().cloned();
                if conditions
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(20), established)
            .await
            .expect("the walkers CRD Established within 20 s");
    });
    k.wait_for_default_service_account(NS);
    // What the endpoints controller of a cluster writes for a Service that
    // selects no pod: its Endpoints, with no subsets. kapi runs no such
    // controller, and services/proxy reads them (503, no endpoints).
    rt.block_on(async {
        let a = walk
            .send(
                "POST",
                &format!("/api/v1/namespaces/{NS}/endpoints"),
                JSON,
                Some(
                    json!({"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": SERVICE}})
                    .to_string(),
                ),
                Read::Whole,
            )
            .await;
        assert!(ok(&a), "the service's endpoints: {:?} {}", a.status, a.text);
    });

    // Aggregated discovery, once it lists the CRD's resource.
    let resources = rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut all = Vec::new();
            for root in ["/api", "/apis"] {
                let r = walk
                    .c
                    .get(format!("{}{root}", walk.base))
                    .header("Accept", AGG_V2)
                    .send()
                    .await
                    .expect("discovery");
                assert_eq!(r.status(), 200, "aggregated discovery at {root}");
                let doc: Value = r.json().await.expect("discovery json");
                assert_eq!(doc["kind"], "APIGroupDiscoveryList", "{root}");
                all.extend(resources_of(&doc));
            }
            if all.iter().any(|r| r.plural == "walkers") {
                return all;
            }
            assert!(
                Instant::now() < deadline,
                "aggregated discovery never listed walkers.walk.example.com"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let advertised = advertised(&resources);
    let walker = resources
        .iter()
        .find(|r| r.plural == "walkers")
        .expect("walkers");
    let walker_subs: BTreeSet<&str> = walker
        .subresources
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(
        walker_subs,
        BTreeSet::from(["scale", "status"]),
        "the CRD's subresources in discovery"
    );

    let mut timings = Vec::new();
    let phase = Instant::now();
    rt.block_on(async {
        // What pods/binding, bindings and pods/eviction act on.
        for name in ["walk-bind", "walk-bind2", "walk-evict"] {
            let a = walk
                .send(
                    "POST",
                    &format!("/api/v1/namespaces/{NS}/pods"),
                    JSON,
                    Some(pod(name).to_string()),
                    Read::Whole,
                )
                .await;
            assert!(ok(&a), "pod {name}: {:?} {}", a.status, a.text);
        }
        stream::iter(&resources)
            .for_each_concurrent(PARALLEL, |r| walk.create(r))
            .await;
    });
    timings.push(("create", phase.elapsed()));
    let phase = Instant::now();
    rt.block_on(stream::iter(&resources).for_each_concurrent(PARALLEL, |r| walk.read_and_write(r)));
    timings.push(("read and write", phase.elapsed()));
    // Deletions last: first each object by name, then the collections,
    // which take only what carries the walk's label.
    let phase = Instant::now();
    rt.block_on(stream::iter(&resources).for_each_concurrent(PARALLEL, |r| walk.delete(r)));
    timings.push(("delete", phase.elapsed()));
    let phase = Instant::now();
    rt.block_on(
        stream::iter(&resources).for_each_concurrent(PARALLEL, |r| walk.delete_collection(r)),
    );
    timings.push(("deletecollection", phase.elapsed()));

    // What the server made itself is still there.
    let mut survivors = Vec::new();
    rt.block_on(async {
        for path in [
            "/api/v1/namespaces/default/services/kubernetes",
            "/api/v1/namespaces/kube-system",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/exempt",
            "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/walkers.walk.example.com",
        ] {
            let a = walk.send("GET", path, JSON, None, Read::Whole).await;
            if a.status != Some(200) {
                survivors.push(format!(
                    "{path} is gone after the walk: {:?} {}",
                    a.status,
                    a.excerpt()
                ));
            }
        }
    });

    let outcomes = walk.outcomes.into_inner().expect("outcomes");
    let exercised: BTreeSet<Pair> = outcomes.iter().map(|o| o.pair.clone()).collect();
    println!(
        "discovery walk: {} resources, {} advertised (resource, verb) pairs, {} requests, {:?} in all",
        resources.len(),
        advertised.len(),
        outcomes.len(),
        started.elapsed()
    );
    for (name, took) in &timings {
        println!("  {name}: {took:?}");
    }
    let mut first_events = std::collections::BTreeMap::<&str, usize>::new();
    for o in outcomes.iter().filter(|o| o.expect == Expect::Watch) {
        let event = o
            .excerpt
            .strip_prefix("first event: ")
            .unwrap_or("(no stream)");
        *first_events.entry(event.trim()).or_default() += 1;
    }
    println!("  the watches' first events: {first_events:?}");
    println!("what the connect subresources answered:");
    let mut connects: Vec<String> = outcomes
        .iter()
        .filter(|o| o.expect == Expect::AnyAnswer)
        .map(Outcome::show)
        .collect();
    connects.sort();
    for line in connects {
        println!("  {line}");
    }

    let mut failures: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.failure.as_ref().map(|f| format!("{} [{f}]", o.show())))
        .collect();
    failures.sort();
    for missing in advertised.difference(&exercised) {
        failures.push(format!("{}: advertised, never requested", missing.show()));
    }
    for extra in exercised.difference(&advertised) {
        failures.push(format!("{}: requested, never advertised", extra.show()));
    }
    failures.extend(survivors);
    assert!(
        advertised.len() >= MIN_PAIRS,
        "discovery advertises {} (resource, verb) pairs, fewer than the {MIN_PAIRS} of the built-in kinds",
        advertised.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} requests for {} advertised (resource, verb) pairs went wrong:\n{}",
        failures.len(),
        outcomes.len(),
        advertised.len(),
        failures.join("\n")
    );
}
