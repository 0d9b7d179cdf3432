//! The built-in API checked against upstream kube-apiserver (v1.34)
//! behaviour through clients nobody here wrote: kubectl, the `kube` crate,
//! and raw HTTPS for the exact bodies of errors, Tables, lists and watches.
//! Every test starts its own kapi, so they run in parallel.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{runtime, Kapi};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// No command in this file may run longer than this.
const CMD_LIMIT: Duration = Duration::from_secs(60);
/// How long a test waits for one expected event.
const EVENT_LIMIT: Duration = Duration::from_secs(30);

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs a command to completion, killing it if it outlives `limit`.
fn run_limited(cmd: &mut Command, limit: Duration) -> Out {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().expect("spawn");
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let to = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let te = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = common::wait_timeout(&mut child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = to.join().unwrap_or_default();
    let stderr = te.join().unwrap_or_default();
    match status {
        Some(s) => Out {
            ok: s.success(),
            stdout,
            stderr,
        },
        None => {
            panic!("{shown} did not finish within {limit:?}\nstdout:\n{stdout}\nstderr:\n{stderr}")
        }
    }
}

fn kubectl(k: &Kapi, args: &[&str]) -> Out {
    run_limited(k.kubectl().args(args), CMD_LIMIT)
}

/// kubectl that must succeed; returns stdout.
fn kubectl_ok(k: &Kapi, args: &[&str]) -> String {
    let o = kubectl(k, args);
    assert!(
        o.ok,
        "kubectl {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        o.stdout, o.stderr
    );
    o.stdout
}

/// kubectl that must fail; returns stderr.
fn kubectl_err(k: &Kapi, args: &[&str]) -> String {
    let o = kubectl(k, args);
    assert!(
        !o.ok,
        "kubectl {args:?} succeeded but should not have\nstdout:\n{}",
        o.stdout
    );
    o.stderr
}

fn yaml_file(yaml: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("tempfile");
    f.write_all(yaml.as_bytes()).expect("write yaml");
    f.flush().expect("flush");
    f
}

/// `kubectl create -f` of a (multi-document) YAML; returns stdout.
fn kubectl_create(k: &Kapi, yaml: &str) -> String {
    let f = yaml_file(yaml);
    kubectl_ok(k, &["create", "-f", f.path().to_str().expect("path")])
}

fn namespace_doc(name: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n")
}

fn configmap_doc(ns: &str, name: &str, data: &[(&str, &str)]) -> String {
    let mut s =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\n");
    if !data.is_empty() {
        s.push_str("data:\n");
        for (k, v) in data {
            s.push_str(&format!("  {k}: {v:?}\n"));
        }
    }
    s
}

fn deployment_doc(ns: &str, name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"
    )
}

fn docs(parts: &[String]) -> String {
    parts.join("---\n")
}

/// The four kinds of the multi-document test, in namespace `ns`.
fn multi_doc(ns: &str) -> String {
    docs(&[
        namespace_doc(ns),
        configmap_doc(ns, "cm1", &[("a", "1"), ("b", "2")]),
        deployment_doc(ns, "web", 1),
        format!(
            "apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: {ns}
spec:
  selector:
    app: web
  ports:
  - port: 80
"
        ),
        format!(
            "apiVersion: v1
kind: Secret
metadata:
  name: s1
  namespace: {ns}
stringData:
  password: hunter2
"
        ),
    ])
}

/// Whitespace-split rows of kubectl's table output.
fn rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

/// A child process killed when dropped, so a failing test leaves nothing running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of a reader, sent over a channel by a thread.
fn line_channel<R: Read + Send + 'static>(r: R) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Receives lines until one satisfies `pred`, or panics at the deadline.
fn wait_line(
    rx: &mpsc::Receiver<String>,
    what: &str,
    seen: &mut Vec<String>,
    pred: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + EVENT_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if pred(&line) {
                    return line;
                }
            }
            Err(_) => panic!(
                "no {what} within {EVENT_LIMIT:?}; lines seen:\n{}",
                seen.join("\n")
            ),
        }
    }
}

// ---- raw HTTP ----

struct Resp {
    code: u16,
    headers: reqwest::header::HeaderMap,
    text: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("HTTP {} body is not JSON ({e}): {}", self.code, self.text))
    }
}

async fn call(
    c: &reqwest::Client,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
) -> Resp {
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = c.request(m, url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.body(b);
    }
    let r = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let code = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.expect("body");
    Resp {
        code,
        headers,
        text,
    }
}

const JSON_CT: (&str, &str) = ("Content-Type", "application/json");

async fn post_json(c: &reqwest::Client, url: &str, body: &Value) -> Resp {
    call(
        c,
        "POST",
        url,
        &[JSON_CT],
        Some(serde_json::to_vec(body).expect("json")),
    )
    .await
}

/// The ConfigMap upstream's root-CA publisher (kube-controller-manager)
/// puts in every namespace, shortly after the namespace exists.
const ROOT_CA: &str = "kube-root-ca.crt";

/// Waits until the root-CA publisher has made `kube-root-ca.crt` in `ns`, so
/// that a test which lists or watches the ConfigMaps there sees a settled
/// set rather than racing with the controller.
async fn root_ca_published(c: &reqwest::Client, url: &str, ns: &str) {
    let u = format!("{url}/api/v1/namespaces/{ns}/configmaps/{ROOT_CA}");
    let deadline = Instant::now() + EVENT_LIMIT;
    loop {
        if let Ok(r) = c.get(&u).send().await {
            if r.status().is_success() {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no {ROOT_CA} in {ns} within {EVENT_LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// [`root_ca_published`] for tests that are not inside a runtime.
fn wait_for_root_ca(k: &Kapi, ns: &str) {
    let c = k.admin_client();
    runtime().block_on(root_ca_published(&c, &k.url, ns));
}

fn cm_json(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

/// The fields every failure `Status` carries.
fn assert_failure(r: &Resp, code: u16, reason: &str) -> Value {
    let v = r.json();
    assert_eq!(r.code, code, "HTTP status; body: {}", r.text);
    assert_eq!(v["kind"], "Status", "{}", r.text);
    assert_eq!(v["apiVersion"], "v1", "{}", r.text);
    assert_eq!(v["status"], "Failure", "{}", r.text);
    assert_eq!(v["reason"], reason, "{}", r.text);
    assert_eq!(v["code"], code, "{}", r.text);
    v
}

/// A whole `Status` body equal to upstream's, field for field.
fn assert_status_body(r: &Resp, code: u16, expected: Value) {
    assert_eq!(r.code, code, "HTTP status; body: {}", r.text);
    assert_eq!(r.json(), expected, "body: {}", r.text);
}

fn status(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut v = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if let Some(d) = details {
        v["details"] = d;
    }
    v
}

fn causes(v: &Value) -> Vec<(String, String, String)> {
    v["details"]["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["reason"].as_str().unwrap_or("").to_string(),
                        c["field"].as_str().unwrap_or("").to_string(),
                        c["message"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

// ---- kube crate ----

async fn kube_client(k: &Kapi) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("read kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("config from kubeconfig");
    kube::Client::try_from(cfg).expect("kube client")
}

async fn kube_namespace(client: &kube::Client, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let api: kube::Api<Namespace> = kube::Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).expect("ns");
    api.create(&kube::api::PostParams::default(), &ns)
        .await
        .expect("create namespace");
}

fn kube_cm(name: &str, data: &[(&str, &str)]) -> k8s_openapi::api::core::v1::ConfigMap {
    let data: BTreeMap<String, String> = data
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    k8s_openapi::api::core::v1::ConfigMap {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    }
}

/// Runs a future under a deadline so that nothing can hang.
async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(EVENT_LIMIT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {EVENT_LIMIT:?}"))
}

// ---------------------------------------------------------------------------
// 1. kubectl
// ---------------------------------------------------------------------------

#[test]
fn kubectl_create_multi_document_and_get_formats() {
    let k = Kapi::start(&[]);
    let out = kubectl_create(&k, &multi_doc("kt"));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "namespace/kt created",
            "configmap/cm1 created",
            "deployment.apps/web created",
            "service/web created",
            "secret/s1 created",
        ],
        "{out}"
    );

    // -o yaml
    let y = kubectl_ok(&k, &["get", "configmap", "cm1", "-n", "kt", "-o", "yaml"]);
    let v: Value = serde_saphyr::from_str(&y).unwrap_or_else(|e| panic!("yaml ({e}):\n{y}"));
    assert_eq!(v["apiVersion"], "v1", "{y}");
    assert_eq!(v["kind"], "ConfigMap", "{y}");
    assert_eq!(v["data"], json!({"a": "1", "b": "2"}), "{y}");
    assert_eq!(v["metadata"]["namespace"], "kt", "{y}");
    for f in ["uid", "resourceVersion", "creationTimestamp"] {
        assert!(
            v["metadata"][f].as_str().is_some_and(|s| !s.is_empty()),
            "metadata.{f} missing:\n{y}"
        );
    }

    // -o json
    let j = kubectl_ok(&k, &["get", "deployment", "web", "-n", "kt", "-o", "json"]);
    let d: Value = serde_json::from_str(&j).expect("json");
    assert_eq!(d["apiVersion"], "apps/v1");
    assert_eq!(d["kind"], "Deployment");
    assert_eq!(d["spec"]["replicas"], 1);
    assert_eq!(d["metadata"]["generation"], 1, "{j}");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    // the default table
    let t = rows(&kubectl_ok(&k, &["get", "configmaps", "-n", "kt"]));
    assert_eq!(t[0], ["NAME", "DATA", "AGE"], "{t:?}");
    let cm1 = t.iter().find(|r| r[0] == "cm1").expect("cm1 row");
    assert_eq!(cm1[1], "2", "{t:?}");

    // -o wide: the priority-1 columns of upstream's Deployment printer
    let t = rows(&kubectl_ok(
        &k,
        &["get", "deployment", "web", "-n", "kt", "-o", "wide"],
    ));
    assert_eq!(
        t[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ],
        "{t:?}"
    );
    assert_eq!(t[1][0], "web");
    assert_eq!(t[1][1], "0/1", "{t:?}");
    assert_eq!(t[1][5..], ["nginx", "nginx:1.27", "app=web"], "{t:?}");

    let t = rows(&kubectl_ok(
        &k,
        &["get", "service", "web", "-n", "kt", "-o", "wide"],
    ));
    assert_eq!(
        t[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ],
        "{t:?}"
    );
    assert_eq!(t[1][0], "web");
    assert_eq!(t[1][1], "ClusterIP");
    assert_eq!(t[1][4], "80/TCP", "{t:?}");
    assert_eq!(t[1][6], "app=web", "{t:?}");

    // -o jsonpath
    let p = kubectl_ok(
        &k,
        &[
            "get",
            "configmap",
            "cm1",
            "-n",
            "kt",
            "-o",
            "jsonpath={.data.a}-{.data.b}-{.metadata.name}",
        ],
    );
    assert_eq!(p, "1-2-cm1");
    let p = kubectl_ok(
        &k,
        &["get", "secret", "s1", "-n", "kt", "-o", "jsonpath={.type}"],
    );
    assert_eq!(p, "Opaque");
}

#[test]
fn kubectl_secret_string_data_becomes_data() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &multi_doc("ks"));
    let p = kubectl_ok(
        &k,
        &[
            "get",
            "secret",
            "s1",
            "-n",
            "ks",
            "-o",
            "jsonpath={.data.password}",
        ],
    );
    // base64("hunter2"); upstream never returns stringData (it is write-only).
    assert_eq!(p, "aHVudGVyMg==");
    let j: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &["get", "secret", "s1", "-n", "ks", "-o", "json"],
    ))
    .expect("json");
    assert!(j.get("stringData").is_none(), "{j}");
    let t = rows(&kubectl_ok(&k, &["get", "secret", "s1", "-n", "ks"]));
    assert_eq!(t[0], ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(t[1][..3], ["s1", "Opaque", "1"], "{t:?}");
}

#[test]

fn kubectl_service_gets_a_cluster_ip() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &multi_doc("kip"));
    let ip = kubectl_ok(
        &k,
        &[
            "get",
            "service",
            "web",
            "-n",
            "kip",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ],
    );
    let parsed: std::net::IpAddr = ip
        .parse()
        .unwrap_or_else(|e| panic!("spec.clusterIP {ip:?} is not an IP: {e}"));
    assert!(!parsed.is_unspecified(), "{ip}");
    let ips = kubectl_ok(
        &k,
        &[
            "get",
            "service",
            "web",
            "-n",
            "kip",
            "-o",
            "jsonpath={.spec.clusterIPs[0]} {.spec.ipFamilies[0]} {.spec.ipFamilyPolicy} {.spec.sessionAffinity} {.spec.ports[0].protocol} {.spec.ports[0].targetPort}",
        ],
    );
    assert_eq!(ips, format!("{ip} IPv4 SingleStack None TCP 80"));
    // The default `kubernetes` service of upstream's bootstrap controller.
    let first = kubectl_ok(
        &k,
        &[
            "get",
            "service",
            "kubernetes",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ],
    );
    assert!(first.parse::<std::net::IpAddr>().is_ok(), "{first:?}");
}

#[test]
fn kubectl_deployment_is_defaulted_like_upstream() {
    let k = Kapi::start(&[]);
    kubectl_create(
        &k,
        &docs(&[namespace_doc("kd"), deployment_doc("kd", "web", 2)]),
    );
    let j = kubectl_ok(&k, &["get", "deployment", "web", "-n", "kd", "-o", "json"]);
    let d: Value = serde_json::from_str(&j).expect("json");
    let spec = &d["spec"];
    assert_eq!(spec["strategy"]["type"], "RollingUpdate", "{j}");
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%", "{j}");
    assert_eq!(
        spec["strategy"]["rollingUpdate"]["maxUnavailable"], "25%",
        "{j}"
    );
    assert_eq!(spec["revisionHistoryLimit"], 10, "{j}");
    assert_eq!(spec["progressDeadlineSeconds"], 600, "{j}");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always", "{j}");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst", "{j}");
    assert_eq!(pod["schedulerName"], "default-scheduler", "{j}");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30, "{j}");
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent", "{j}");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log", "{j}");
    assert_eq!(c["terminationMessagePolicy"], "File", "{j}");
}

#[test]
fn kubectl_get_watch_sees_added_modified_deleted() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &namespace_doc("kw"));
    let mut child = KillOnDrop(
        k.kubectl()
            .args([
                "get",
                "configmaps",
                "-n",
                "kw",
                "--watch-only",
                "--output-watch-events",
                "--request-timeout=60s",
                "-v=6",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl get -w"),
    );
    let out = line_channel(child.0.stdout.take().expect("stdout"));
    let err = line_channel(child.0.stderr.take().expect("stderr"));
    // -v=6 logs each response; the watch is open once its 200 is logged.
    let mut log = Vec::new();
    wait_line(&err, "open watch", &mut log, |l| {
        l.contains("watch=true") && l.contains("200 OK")
    });

    let mut seen = Vec::new();
    let event = |l: &str, ev: &str| {
        let t: Vec<&str> = l.split_whitespace().collect();
        t.len() >= 2 && t[0] == ev && t[1] == "w1"
    };
    kubectl_create(&k, &configmap_doc("kw", "w1", &[("k", "v")]));
    wait_line(&out, "ADDED w1", &mut seen, |l| event(l, "ADDED"));
    kubectl_ok(&k, &["label", "configmap", "w1", "-n", "kw", "step=2"]);
    wait_line(&out, "MODIFIED w1", &mut seen, |l| event(l, "MODIFIED"));
    kubectl_ok(&k, &["delete", "configmap", "w1", "-n", "kw"]);
    wait_line(&out, "DELETED w1", &mut seen, |l| event(l, "DELETED"));
    assert!(
        seen[0]
            .split_whitespace()
            .eq(["EVENT", "NAME", "DATA", "AGE"]),
        "{seen:?}"
    );
    drop(child);
}

#[test]
fn kubectl_label_annotate_selectors_replace_conflict_delete() {
    let k = Kapi::start(&[]);
    kubectl_create(
        &k,
        &docs(&[
            namespace_doc("kl"),
            configmap_doc("kl", "c1", &[("x", "1")]),
            configmap_doc("kl", "c2", &[("x", "2")]),
        ]),
    );
    // kl also gets the root-CA publisher's ConfigMap; wait for it so that the
    // lists below are settled.
    wait_for_root_ca(&k, "kl");
    assert_eq!(
        kubectl_ok(&k, &["label", "configmap", "c1", "-n", "kl", "env=prod"]).trim(),
        "configmap/c1 labeled"
    );
    assert_eq!(
        kubectl_ok(&k, &["annotate", "configmap", "c1", "-n", "kl", "note=hi"]).trim(),
        "configmap/c1 annotated"
    );
    let v: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &["get", "configmap", "c1", "-n", "kl", "-o", "json"],
    ))
    .expect("json");
    assert_eq!(v["metadata"]["labels"], json!({"env": "prod"}));
    assert_eq!(v["metadata"]["annotations"]["note"], "hi");
    // A label that exists already needs --overwrite, as upstream.
    let e = kubectl_err(&k, &["label", "configmap", "c1", "-n", "kl", "env=dev"]);
    assert!(e.contains("already has a value (prod)"), "{e}");

    // Selectors
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmaps",
                "-n",
                "kl",
                "-l",
                "env=prod",
                "-o",
                "name"
            ]
        ),
        "configmap/c1\n"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmaps",
                "-n",
                "kl",
                "-l",
                "env!=prod",
                "-o",
                "name"
            ]
        ),
        // != also matches objects without the label, as upstream's does.
        "configmap/c2\nconfigmap/kube-root-ca.crt\n"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmaps",
                "-n",
                "kl",
                "--field-selector",
                "metadata.name=c2",
                "-o",
                "name"
            ]
        ),
        "configmap/c2\n"
    );
    let e = kubectl_err(
        &k,
        &[
            "get",
            "configmaps",
            "-n",
            "kl",
            "--field-selector",
            "data.x=1",
        ],
    );
    assert!(
        e.contains("field label not supported: data.x"),
        "upstream rejects unknown field selectors: {e}"
    );

    // replace with a stale resourceVersion
    let stale = kubectl_ok(&k, &["get", "configmap", "c1", "-n", "kl", "-o", "yaml"]);
    kubectl_ok(&k, &["label", "configmap", "c1", "-n", "kl", "bump=1"]);
    let f = yaml_file(&stale);
    let e = kubectl_err(&k, &["replace", "-f", f.path().to_str().expect("path")]);
    assert!(
        e.contains("Error from server (Conflict)")
            && e.contains(
                "Operation cannot be fulfilled on configmaps \"c1\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        "{e}"
    );
    // A fresh copy replaces fine.
    let fresh = kubectl_ok(&k, &["get", "configmap", "c1", "-n", "kl", "-o", "yaml"])
        .replace("x: \"1\"", "x: \"replaced\"");
    let f = yaml_file(&fresh);
    assert_eq!(
        kubectl_ok(&k, &["replace", "-f", f.path().to_str().expect("path")]).trim(),
        "configmap/c1 replaced"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmap",
                "c1",
                "-n",
                "kl",
                "-o",
                "jsonpath={.data.x}"
            ]
        ),
        "replaced"
    );

    // delete
    let out = kubectl_ok(&k, &["delete", "configmap", "c1", "-n", "kl"]);
    assert!(out.starts_with("configmap \"c1\" deleted"), "{out}");
    let e = kubectl_err(&k, &["get", "configmap", "c1", "-n", "kl"]);
    assert!(
        e.contains("Error from server (NotFound): configmaps \"c1\" not found"),
        "{e}"
    );
    assert_eq!(
        kubectl_ok(&k, &["get", "configmaps", "-n", "kl", "-o", "name"]),
        "configmap/c2\nconfigmap/kube-root-ca.crt\n"
    );
}

#[test]
fn kubectl_chunked_list_returns_every_item_once() {
    let k = Kapi::start(&[]);
    let mut parts = vec![namespace_doc("kc")];
    for i in 1..=5 {
        parts.push(configmap_doc("kc", &format!("p{i}"), &[]));
    }
    kubectl_create(&k, &docs(&parts));
    wait_for_root_ca(&k, "kc");
    let o = kubectl(
        &k,
        &[
            "get",
            "configmaps",
            "-n",
            "kc",
            "--chunk-size=2",
            "-o",
            "name",
            "-v=6",
        ],
    );
    assert!(o.ok, "{}", o.stderr);
    let names: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        names,
        [
            "configmap/kube-root-ca.crt",
            "configmap/p1",
            "configmap/p2",
            "configmap/p3",
            "configmap/p4",
            "configmap/p5"
        ],
        "{}",
        o.stdout
    );
    // It really paged: three requests, two of them with a continue token.
    let requests: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("/api/v1/namespaces/kc/configmaps?") && l.contains("limit=2"))
        .collect();
    assert_eq!(requests.len(), 3, "{}", o.stderr);
    assert_eq!(
        requests.iter().filter(|l| l.contains("continue=")).count(),
        2,
        "{}",
        o.stderr
    );
}

#[test]
fn kubectl_scale_deployment() {
    let k = Kapi::start(&[]);
    kubectl_create(
        &k,
        &docs(&[namespace_doc("kx"), deployment_doc("kx", "web", 1)]),
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &["scale", "deployment", "web", "-n", "kx", "--replicas=3"]
        )
        .trim(),
        "deployment.apps/web scaled"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                "kx",
                "-o",
                "jsonpath={.spec.replicas} {.metadata.generation}"
            ]
        ),
        "3 2"
    );
    // The Scale subresource itself, as autoscaling/v1.
    let s: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &[
            "get",
            "--raw",
            "/apis/apps/v1/namespaces/kx/deployments/web/scale",
        ],
    ))
    .expect("scale json");
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["apiVersion"], "autoscaling/v1");
    assert_eq!(s["spec"]["replicas"], 3);
    assert_eq!(s["status"]["selector"], "app=web");
    // --current-replicas is a precondition.
    let e = kubectl_err(
        &k,
        &[
            "scale",
            "deployment",
            "web",
            "-n",
            "kx",
            "--current-replicas=1",
            "--replicas=5",
        ],
    );
    assert!(
        e.contains("Expected replicas to be 1, was 3"),
        "kubectl checks the precondition against the server's Scale: {e}"
    );
}

#[test]
fn kubectl_validates_fields_against_the_server() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &namespace_doc("kv"));
    let f = yaml_file(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bog\n  namespace: kv\nbogus: 1\n",
    );
    let path = f.path().to_str().expect("path");
    // kubectl's default --validate=strict asks the server for Strict field validation.
    let e = kubectl_err(&k, &["create", "-f", path]);
    assert!(
        e.contains("Error from server (BadRequest)")
            && e.contains("strict decoding error: unknown field \"bogus\""),
        "{e}"
    );
    let o = kubectl(&k, &["create", "--validate=warn", "-f", path]);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.stdout.trim(), "configmap/bog created");
    assert!(
        o.stderr.contains("Warning: unknown field \"bogus\""),
        "{}",
        o.stderr
    );
    let out = kubectl_ok(&k, &["explain", "configmap.data"]);
    assert!(out.contains("FIELD: data <map[string]string>"), "{out}");
}

#[test]

fn kubectl_imperative_create() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &namespace_doc("ki"));
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "create",
                "configmap",
                "imp",
                "-n",
                "ki",
                "--from-literal=a=b"
            ]
        )
        .trim(),
        "configmap/imp created"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "create",
                "deployment",
                "imp",
                "-n",
                "ki",
                "--image=nginx:1.27"
            ]
        )
        .trim(),
        "deployment.apps/imp created"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmap",
                "imp",
                "-n",
                "ki",
                "-o",
                "jsonpath={.data.a}"
            ]
        ),
        "b"
    );
}

#[test]

fn kubectl_strategic_merge_patch_set_image_and_apply() {
    let k = Kapi::start(&[]);
    kubectl_create(
        &k,
        &docs(&[namespace_doc("kp"), deployment_doc("kp", "web", 1)]),
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "set",
                "image",
                "deployment/web",
                "-n",
                "kp",
                "nginx=nginx:1.28"
            ]
        )
        .trim(),
        "deployment.apps/web image updated"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                "kp",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}"
            ]
        ),
        "nginx:1.28"
    );
    // client-side apply: create, then change
    let f = yaml_file(&configmap_doc("kp", "ap", &[("a", "1")]));
    let path = f.path().to_str().expect("path");
    assert_eq!(
        kubectl_ok(&k, &["apply", "-f", path]).trim(),
        "configmap/ap created"
    );
    let f2 = yaml_file(&configmap_doc("kp", "ap", &[("a", "2")]));
    assert_eq!(
        kubectl_ok(&k, &["apply", "-f", f2.path().to_str().expect("path")]).trim(),
        "configmap/ap configured"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "get",
                "configmap",
                "ap",
                "-n",
                "kp",
                "-o",
                "jsonpath={.data.a}"
            ]
        ),
        "2"
    );
}

#[test]

fn kubectl_server_side_apply() {
    let k = Kapi::start(&[]);
    kubectl_create(&k, &namespace_doc("ka"));
    let f = yaml_file(&configmap_doc("ka", "ssa", &[("a", "1")]));
    let path = f.path().to_str().expect("path");
    assert_eq!(
        kubectl_ok(&k, &["apply", "--server-side", "-f", path]).trim(),
        "configmap/ssa serverside-applied"
    );
    let f2 = yaml_file(&configmap_doc("ka", "ssa", &[("a", "2")]));
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "apply",
                "--server-side",
                "-f",
                f2.path().to_str().expect("path")
            ]
        )
        .trim(),
        "configmap/ssa serverside-applied"
    );
    let v: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &[
            "get",
            "configmap",
            "ssa",
            "-n",
            "ka",
            "-o",
            "json",
            "--show-managed-fields",
        ],
    ))
    .expect("json");
    assert_eq!(v["data"]["a"], "2");
    assert_eq!(v["metadata"]["managedFields"][0]["manager"], "kubectl");
    assert_eq!(v["metadata"]["managedFields"][0]["operation"], "Apply");
}

// ---------------------------------------------------------------------------
// 2. The kube crate
// ---------------------------------------------------------------------------

#[test]
fn kube_typed_configmap_crud() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{DeleteParams, PostParams};
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("crud", async {
            kube_namespace(&client, "kube-crud").await;
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-crud");
            let created = api
                .create(&PostParams::default(), &kube_cm("c", &[("a", "1")]))
                .await
                .expect("create");
            let uid = created.metadata.uid.clone().expect("uid");
            let rv1 = created.metadata.resource_version.clone().expect("rv");
            assert_eq!(created.metadata.namespace.as_deref(), Some("kube-crud"));

            let got = api.get("c").await.expect("get");
            assert_eq!(got.metadata.uid.as_deref(), Some(uid.as_str()));
            assert_eq!(
                got.data
                    .as_ref()
                    .and_then(|d| d.get("a"))
                    .map(String::as_str),
                Some("1")
            );

            let mut changed = got.clone();
            changed.data = Some(BTreeMap::from([("a".to_string(), "2".to_string())]));
            let replaced = api
                .replace("c", &PostParams::default(), &changed)
                .await
                .expect("replace");
            let rv2 = replaced.metadata.resource_version.clone().expect("rv");
            assert_ne!(rv1, rv2);
            assert_eq!(
                replaced
                    .data
                    .as_ref()
                    .and_then(|d| d.get("a"))
                    .map(String::as_str),
                Some("2")
            );

            // Replacing with the old resourceVersion is a 409 Conflict.
            match api.replace("c", &PostParams::default(), &got).await {
                Err(kube::Error::Api(s)) => {
                    assert_eq!(s.code, 409);
                    assert_eq!(s.reason, "Conflict");
                    assert!(
                        s.message.contains("the object has been modified"),
                        "{}",
                        s.message
                    );
                }
                other => panic!("stale replace: {other:?}"),
            }
            // Creating it again is a 409 AlreadyExists.
            match api.create(&PostParams::default(), &kube_cm("c", &[])).await {
                Err(kube::Error::Api(s)) => {
                    assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
                }
                other => panic!("second create: {other:?}"),
            }

            let deleted = api
                .delete("c", &DeleteParams::default())
                .await
                .expect("delete");
            // A ConfigMap has no finalizers: gone at once, answered with a Status.
            let s = deleted
                .right()
                .expect("delete of an object without finalizers answers a Status");
            assert!(s.is_success(), "{s:?}");
            match api.get("c").await {
                Err(kube::Error::Api(s)) => {
                    assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
                    assert_eq!(s.message, "configmaps \"c\" not found");
                }
                other => panic!("get after delete: {other:?}"),
            }
            assert!(api.get_opt("c").await.expect("get_opt").is_none());
        })
        .await;
    });
}

#[test]
fn kube_list_pagination_follows_continue() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{ListParams, PostParams};
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("pagination", async {
            kube_namespace(&client, "kube-page").await;
            root_ca_published(&k.admin_client(), &k.url, "kube-page").await;
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-page");
            for i in 1..=5 {
                api.create(&PostParams::default(), &kube_cm(&format!("p{i}"), &[]))
                    .await
                    .expect("create");
            }
            let mut names = Vec::new();
            let mut pages = Vec::new();
            let mut token: Option<String> = None;
            loop {
                let mut lp = ListParams::default().limit(2);
                if let Some(t) = &token {
                    lp = lp.continue_token(t);
                }
                let page = api.list(&lp).await.expect("list page");
                pages.push((page.items.len(), page.metadata.remaining_item_count));
                names.extend(page.items.iter().filter_map(|c| c.metadata.name.clone()));
                token = page.metadata.continue_.clone().filter(|t| !t.is_empty());
                if token.is_none() {
                    break;
                }
                assert!(pages.len() < 10, "pagination does not end: {pages:?}");
            }
            assert_eq!(
                names,
                [ROOT_CA, "p1", "p2", "p3", "p4", "p5"],
                "pages: {pages:?}"
            );
            assert_eq!(pages, [(2, Some(4)), (2, Some(2)), (2, None)]);
        })
        .await;
    });
}

#[test]
fn kube_watch_sees_added_modified_deleted() {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{
        DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
    };
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("watch", async {
            kube_namespace(&client, "kube-watch").await;
            // Its root-CA ConfigMap made before the list, not during the watch.
            root_ca_published(&k.admin_client(), &k.url, "kube-watch").await;
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-watch");
            let rv = api
                .list(&ListParams::default())
                .await
                .expect("list")
                .metadata
                .resource_version
                .expect("list rv");
            let stream = api
                .watch(&WatchParams::default().timeout(20), &rv)
                .await
                .expect("watch");
            let mut stream = Box::pin(stream);
            api.create(&PostParams::default(), &kube_cm("w", &[("a", "1")]))
                .await
                .expect("create");
            api.patch(
                "w",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"a": "2"}, "metadata": {"labels": {"l": "x"}}})),
            )
            .await
            .expect("merge patch");
            api.delete("w", &DeleteParams::default())
                .await
                .expect("delete");

            let mut seen = Vec::new();
            while seen.len() < 3 {
                let ev = stream
                    .next()
                    .await
                    .unwrap_or_else(|| panic!("watch ended early after {seen:?}"))
                    .expect("watch event");
                match ev {
                    WatchEvent::Added(c) => seen.push(("ADDED", c)),
                    WatchEvent::Modified(c) => seen.push(("MODIFIED", c)),
                    WatchEvent::Deleted(c) => seen.push(("DELETED", c)),
                    WatchEvent::Bookmark(_) => {}
                    WatchEvent::Error(e) => panic!("watch error: {e:?}"),
                }
            }
            let types: Vec<&str> = seen.iter().map(|(t, _)| *t).collect();
            assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
            for (_, c) in &seen {
                assert_eq!(c.metadata.name.as_deref(), Some("w"));
            }
            let modified = &seen[1].1;
            assert_eq!(
                modified
                    .data
                    .as_ref()
                    .and_then(|d| d.get("a"))
                    .map(String::as_str),
                Some("2")
            );
            assert_eq!(
                modified
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("l"))
                    .map(String::as_str),
                Some("x")
            );
            // Resource versions only grow.
            let rvs: Vec<u64> = seen
                .iter()
                .map(|(_, c)| {
                    c.metadata
                        .resource_version
                        .as_deref()
                        .and_then(|r| r.parse().ok())
                        .expect("numeric rv")
                })
                .collect();
            assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");
        })
        .await;
    });
}

#[test]
fn kube_runtime_watcher_lists_then_follows() {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
    use kube::runtime::watcher;
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("runtime watcher", async {
            kube_namespace(&client, "kube-rt").await;
            root_ca_published(&k.admin_client(), &k.url, "kube-rt").await;
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-rt");
            api.create(&PostParams::default(), &kube_cm("before", &[]))
                .await
                .expect("create before");
            let mut stream = Box::pin(watcher(api.clone(), watcher::Config::default()));
            let mut log = Vec::new();
            // Init, the existing object, InitDone.
            let mut initial = Vec::new();
            loop {
                match stream
                    .next()
                    .await
                    .expect("watcher stream ended")
                    .expect("watcher error")
                {
                    watcher::Event::Init => {}
                    watcher::Event::InitApply(c) => {
                        initial.push(c.metadata.name.unwrap_or_default())
                    }
                    watcher::Event::InitDone => break,
                    other => panic!("before InitDone: {other:?}"),
                }
            }
            assert_eq!(initial, ["before", ROOT_CA]);
            api.create(&PostParams::default(), &kube_cm("after", &[]))
                .await
                .expect("create after");
            api.patch(
                "after",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"k": "v"}})),
            )
            .await
            .expect("patch");
            api.delete("after", &DeleteParams::default())
                .await
                .expect("delete");
            while log.len() < 3 {
                match stream
                    .next()
                    .await
                    .expect("watcher stream ended")
                    .expect("watcher error")
                {
                    watcher::Event::Apply(c) => log.push(format!(
                        "apply {} {:?}",
                        c.metadata.name.unwrap_or_default(),
                        c.data.unwrap_or_default()
                    )),
                    watcher::Event::Delete(c) => {
                        log.push(format!("delete {}", c.metadata.name.unwrap_or_default()))
                    }
                    other => panic!("unexpected {other:?} after {log:?}"),
                }
            }
            assert_eq!(
                log,
                [
                    "apply after {}",
                    "apply after {\"k\": \"v\"}",
                    "delete after"
                ]
            );
        })
        .await;
    });
}

// ---------------------------------------------------------------------------
// 3. Raw HTTP: exact upstream bodies
// ---------------------------------------------------------------------------

#[test]
fn status_not_found_already_exists_conflict() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let r = call(&c, "GET", &format!("{base}/nope"), &[], None).await;
        assert_status_body(
            &r,
            404,
            status(
                404,
                "NotFound",
                "configmaps \"nope\" not found",
                Some(json!({"name": "nope", "kind": "configmaps"})),
            ),
        );
        // a group's resource is qualified by its group
        let r = call(
            &c,
            "GET",
            &format!("{}/apis/apps/v1/namespaces/default/deployments/nope", k.url),
            &[],
            None,
        )
        .await;
        assert_status_body(
            &r,
            404,
            status(
                404,
                "NotFound",
                "deployments.apps \"nope\" not found",
                Some(json!({"name": "nope", "group": "apps", "kind": "deployments"})),
            ),
        );

        let r = post_json(&c, &base, &cm_json("x", json!({"k": "1"}))).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let created = r.json();
        let r = post_json(&c, &base, &cm_json("x", json!({}))).await;
        assert_status_body(
            &r,
            409,
            status(
                409,
                "AlreadyExists",
                "configmaps \"x\" already exists",
                Some(json!({"name": "x", "kind": "configmaps"})),
            ),
        );

        // PUT with the current resourceVersion works, then the same one is stale.
        let mut obj = created.clone();
        obj["data"]["k"] = json!("2");
        let r = call(
            &c,
            "PUT",
            &format!("{base}/x"),
            &[JSON_CT],
            Some(serde_json::to_vec(&obj).expect("json")),
        )
        .await;
        assert_eq!(r.code, 200, "{}", r.text);
        assert_ne!(
            r.json()["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]
        );
        obj["data"]["k"] = json!("3");
        let r = call(
            &c,
            "PUT",
            &format!("{base}/x"),
            &[JSON_CT],
            Some(serde_json::to_vec(&obj).expect("json")),
        )
        .await;
        assert_status_body(
            &r,
            409,
            status(
                409,
                "Conflict",
                "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; please apply your changes to the latest version and try again",
                Some(json!({"name": "x", "kind": "configmaps"})),
            ),
        );
        let r = call(&c, "GET", &format!("{base}/x"), &[], None).await;
        assert_eq!(r.json()["data"]["k"], "2", "the conflicting write changed nothing");
    });
}

#[test]

fn writes_record_managed_fields() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let r = post_json(
            &c,
            &format!("{base}?fieldManager=tester"),
            &cm_json("mf", json!({"a": "1"})),
        )
        .await;
        assert_eq!(r.code, 201, "{}", r.text);
        let v = r.json();
        let mf = &v["metadata"]["managedFields"];
        assert_eq!(mf.as_array().map(Vec::len), Some(1), "{v}");
        assert_eq!(mf[0]["manager"], "tester", "{v}");
        assert_eq!(mf[0]["operation"], "Update", "{v}");
        assert_eq!(mf[0]["apiVersion"], "v1", "{v}");
        assert_eq!(mf[0]["fieldsType"], "FieldsV1", "{v}");
        assert_eq!(mf[0]["fieldsV1"]["f:data"]["f:a"], json!({}), "{v}");
    });
}

#[test]
fn status_invalid_pod_and_deployment() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 70000}]}]}
        });
        let r = post_json(
            &c,
            &format!("{}/api/v1/namespaces/default/pods", k.url),
            &pod,
        )
        .await;
        let v = assert_failure(&r, 422, "Invalid");
        let msg = v["message"].as_str().unwrap_or("");
        assert!(msg.starts_with("Pod \"Bad_Name\" is invalid: ["), "{msg}");
        for part in [
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.containers[0].image: Required value",
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ] {
            assert!(msg.contains(part), "message lacks {part:?}:\n{msg}");
        }
        assert_eq!(v["details"]["name"], "Bad_Name");
        assert_eq!(v["details"]["kind"], "Pod");
        assert!(v["details"].get("group").is_none(), "{v}");
        let cs = causes(&v);
        let has = |reason: &str, field: &str, message: &str| {
            cs.iter()
                .any(|(r, f, m)| r == reason && f == field && m.starts_with(message))
        };
        assert!(
            has("FieldValueInvalid", "metadata.name", "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"),
            "{cs:?}"
        );
        assert!(
            has("FieldValueRequired", "spec.containers[0].image", "Required value"),
            "{cs:?}"
        );
        assert!(
            has(
                "FieldValueInvalid",
                "spec.containers[0].ports[0].containerPort",
                "Invalid value: 70000: must be between 1 and 65535, inclusive"
            ),
            "{cs:?}"
        );
        // nothing was stored
        let r = call(
            &c,
            "GET",
            &format!("{}/api/v1/namespaces/default/pods", k.url),
            &[],
            None,
        )
        .await;
        assert_eq!(r.json()["items"], json!([]));

        let deploy = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "b"}},
                             "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
            }
        });
        let r = post_json(
            &c,
            &format!("{}/apis/apps/v1/namespaces/default/deployments", k.url),
            &deploy,
        )
        .await;
        let v = assert_failure(&r, 422, "Invalid");
        let msg = v["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: ")
                && msg.ends_with("`selector` does not match template `labels`"),
            "{msg}"
        );
        assert_eq!(v["details"]["name"], "d");
        assert_eq!(v["details"]["group"], "apps");
        assert_eq!(v["details"]["kind"], "Deployment");
        let cs = causes(&v);
        assert_eq!(cs.len(), 1, "{cs:?}");
        assert_eq!(cs[0].0, "FieldValueInvalid");
        assert_eq!(cs[0].1, "spec.template.metadata.labels");
    });
}

#[test]
fn status_bad_request_bodies() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);

        let r = call(&c, "POST", &base, &[JSON_CT], Some(b"{\"kind\": \"ConfigMap\",".to_vec())).await;
        let v = assert_failure(&r, 400, "BadRequest");
        let msg = v["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "),
            "{msg}"
        );

        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
        let r = post_json(&c, &base, &secret).await;
        let v = assert_failure(&r, 400, "BadRequest");
        let msg = v["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("Secret in version \"v1\" cannot be handled as a ConfigMap"),
            "{msg}"
        );

        let mut other = cm_json("m", json!({}));
        other["metadata"]["namespace"] = json!("other");
        let r = post_json(&c, &base, &other).await;
        let v = assert_failure(&r, 400, "BadRequest");
        assert_eq!(
            v["message"],
            "the namespace of the provided object does not match the namespace sent on the request"
        );

        // PUT whose body names another object
        let r = post_json(&c, &base, &cm_json("n1", json!({}))).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let r = call(
            &c,
            "PUT",
            &format!("{base}/n1"),
            &[JSON_CT],
            Some(serde_json::to_vec(&cm_json("n2", json!({}))).expect("json")),
        )
        .await;
        let v = assert_failure(&r, 400, "BadRequest");
        assert_eq!(
            v["message"],
            "the name of the object (n2) does not match the name on the URL (n1)"
        );
    });
}

#[test]
fn bad_request_status_has_no_details() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let mut other = cm_json("m", json!({}));
        other["metadata"]["namespace"] = json!("other");
        let r = post_json(&c, &base, &other).await;
        assert_status_body(
            &r,
            400,
            status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
                None,
            ),
        );
    });
}

#[test]
fn status_too_large_unsupported_media_not_acceptable() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);

        let big = "x".repeat(3 * 1024 * 1024 + 1024);
        let body = serde_json::to_vec(&cm_json("big", json!({ "k": big }))).expect("json");
        let r = call(&c, "POST", &base, &[JSON_CT], Some(body)).await;
        assert_status_body(
            &r,
            413,
            status(
                413,
                "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728",
                None,
            ),
        );

        let r = call(
            &c,
            "POST",
            &base,
            &[("Content-Type", "text/plain")],
            Some(serde_json::to_vec(&cm_json("t", json!({}))).expect("json")),
        )
        .await;
        let v = assert_failure(&r, 415, "UnsupportedMediaType");
        let msg = v["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"),
            "{msg}"
        );
        assert!(v.get("details").is_none(), "{v}");

        let r = call(&c, "GET", &base, &[("Accept", "text/html")], None).await;
        let v = assert_failure(&r, 406, "NotAcceptable");
        assert!(
            v["message"].as_str().unwrap_or("").contains("application/json"),
            "{v}"
        );

        // nothing was created by any of them (the root-CA publisher's
        // ConfigMap may or may not be there yet: not ours)
        let r = call(&c, "GET", &base, &[], None).await;
        let names: Vec<String> = r.json()["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .filter(|n| n != ROOT_CA)
            .collect();
        assert!(names.is_empty(), "{}", r.text);
    });
}

#[test]
fn status_unknown_resource_missing_namespace_method_not_allowed() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let r = call(
            &c,
            "GET",
            &format!("{}/api/v1/nosuchresources", k.url),
            &[],
            None,
        )
        .await;
        assert_status_body(
            &r,
            404,
            status(
                404,
                "NotFound",
                "the server could not find the requested resource",
                Some(json!({})),
            ),
        );

        let r = post_json(
            &c,
            &format!("{}/api/v1/namespaces/nosuch/configmaps", k.url),
            &cm_json("x", json!({})),
        )
        .await;
        assert_status_body(
            &r,
            404,
            status(
                404,
                "NotFound",
                "namespaces \"nosuch\" not found",
                Some(json!({"name": "nosuch", "kind": "namespaces"})),
            ),
        );

        let not_allowed = status(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            Some(json!({})),
        );
        // componentstatuses serve get and list only
        let r = call(
            &c,
            "DELETE",
            &format!("{}/api/v1/componentstatuses", k.url),
            &[],
            None,
        )
        .await;
        assert_status_body(&r, 405, not_allowed.clone());
        // tokenreviews serve create only
        let r = call(
            &c,
            "GET",
            &format!("{}/apis/authentication.k8s.io/v1/tokenreviews", k.url),
            &[],
            None,
        )
        .await;
        assert_status_body(&r, 405, not_allowed.clone());
        // namespaces have no deletecollection
        let r = call(
            &c,
            "DELETE",
            &format!("{}/api/v1/namespaces", k.url),
            &[],
            None,
        )
        .await;
        assert_status_body(&r, 405, not_allowed);
    });
}

#[test]
fn field_validation_strict_warn_ignore() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let with_bogus = |name: &str| {
            let mut v = cm_json(name, json!({"a": "1"}));
            v["bogus"] = json!(1);
            v
        };

        let r = post_json(&c, &format!("{base}?fieldValidation=Strict"), &with_bogus("s")).await;
        let v = assert_failure(&r, 400, "BadRequest");
        assert_eq!(
            v["message"],
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\""
        );

        // Warn is the default: stored, with a warning header
        let r = post_json(&c, &base, &with_bogus("w")).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let warnings: Vec<&str> = r
            .headers
            .get_all("warning")
            .iter()
            .filter_map(|h| h.to_str().ok())
            .collect();
        assert_eq!(warnings, ["299 - \"unknown field \\\"bogus\\\"\""]);
        assert!(r.json().get("bogus").is_none(), "{}", r.text);

        let r = post_json(&c, &format!("{base}?fieldValidation=Ignore"), &with_bogus("i")).await;
        assert_eq!(r.code, 201, "{}", r.text);
        assert!(r.headers.get("warning").is_none(), "{:?}", r.headers);

        let r = call(&c, "GET", &format!("{base}/s"), &[], None).await;
        assert_eq!(r.code, 404, "the strict create stored nothing");
    });
}

#[test]
fn dry_run_create_is_not_stored_and_bad_dry_run_is_invalid() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let r = post_json(&c, &format!("{base}?dryRun=All"), &cm_json("dry", json!({"a": "1"}))).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let v = r.json();
        assert_eq!(v["metadata"]["name"], "dry");
        assert_eq!(v["metadata"]["namespace"], "default");
        assert!(v["metadata"]["uid"].as_str().is_some_and(|u| !u.is_empty()), "{v}");
        assert!(v["metadata"]["creationTimestamp"].is_string(), "{v}");
        assert!(v["metadata"].get("resourceVersion").is_none(), "{v}");
        let r = call(&c, "GET", &format!("{base}/dry"), &[], None).await;
        assert_eq!(r.code, 404, "dry-run object was stored: {}", r.text);

        let r = post_json(&c, &format!("{base}?dryRun=Bogus"), &cm_json("dry", json!({}))).await;
        assert_status_body(
            &r,
            422,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Bogus\"]: supported values: \"All\"",
                "reason": "Invalid",
                "details": {"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [{
                    "reason": "FieldValueNotSupported",
                    "message": "Unsupported value: [\"Bogus\"]: supported values: \"All\"",
                    "field": "dryRun"
                }]},
                "code": 422
            }),
        );
        let r = call(&c, "GET", &format!("{base}/dry"), &[], None).await;
        assert_eq!(r.code, 404, "{}", r.text);

        // dry-run delete leaves the object
        let r = post_json(&c, &base, &cm_json("keep", json!({}))).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let r = call(&c, "DELETE", &format!("{base}/keep?dryRun=All"), &[], None).await;
        assert_eq!(r.code, 200, "{}", r.text);
        let r = call(&c, "GET", &format!("{base}/keep"), &[], None).await;
        assert_eq!(r.code, 200, "dry-run delete removed the object: {}", r.text);
    });
}

#[test]
fn table_and_partial_object_metadata() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        root_ca_published(&c, &k.url, "default").await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        for (name, data) in [("t1", json!({"a": "1", "b": "2"})), ("t2", json!({}))] {
            let r = post_json(&c, &base, &cm_json(name, data)).await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        let r = call(
            &c,
            "GET",
            &base,
            &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            None,
        )
        .await;
        assert_eq!(r.code, 200, "{}", r.text);
        let t = r.json();
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert!(t["metadata"]["resourceVersion"].is_string(), "{t}");
        let cols: Vec<&str> = t["columnDefinitions"]
            .as_array()
            .expect("columnDefinitions")
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(cols, ["Name", "Data", "Age"]);
        assert_eq!(t["columnDefinitions"][0]["format"], "name");
        let rows = t["rows"].as_array().expect("rows");
        // the root-CA publisher's ConfigMap (one key, ca.crt), then ours
        assert_eq!(rows.len(), 3, "{t}");
        assert_eq!(rows[0]["cells"][0], ROOT_CA, "{t}");
        assert_eq!(rows[0]["cells"][1], 1, "{t}");
        assert_eq!(rows[1]["cells"][0], "t1");
        assert_eq!(rows[1]["cells"][1], 2);
        assert!(rows[1]["cells"][2].is_string(), "{t}");
        assert_eq!(rows[2]["cells"][0], "t2");
        assert_eq!(rows[2]["cells"][1], 0);
        // includeObject defaults to Metadata
        assert_eq!(rows[1]["object"]["kind"], "PartialObjectMetadata", "{t}");
        assert_eq!(rows[1]["object"]["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(rows[1]["object"]["metadata"]["name"], "t1");
        assert!(rows[1]["object"].get("data").is_none());

        // a single object as a Table, with the whole object
        let r = call(
            &c,
            "GET",
            &format!("{base}/t1?includeObject=Object"),
            &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            None,
        )
        .await;
        let t = r.json();
        assert_eq!(t["kind"], "Table", "{t}");
        assert_eq!(t["rows"].as_array().map(Vec::len), Some(1));
        assert_eq!(t["rows"][0]["object"]["kind"], "ConfigMap");
        assert_eq!(t["rows"][0]["object"]["data"]["a"], "1");

        let r = call(
            &c,
            "GET",
            &base,
            &[(
                "Accept",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            )],
            None,
        )
        .await;
        assert_eq!(r.code, 200, "{}", r.text);
        let l = r.json();
        assert_eq!(l["kind"], "PartialObjectMetadataList");
        assert_eq!(l["apiVersion"], "meta.k8s.io/v1");
        let items = l["items"].as_array().expect("items");
        assert_eq!(items.len(), 3, "{l}");
        for (i, name) in [ROOT_CA, "t1", "t2"].iter().enumerate() {
            assert_eq!(items[i]["kind"], "PartialObjectMetadata");
            assert_eq!(items[i]["apiVersion"], "meta.k8s.io/v1");
            assert_eq!(items[i]["metadata"]["name"], *name);
            assert!(items[i].get("data").is_none());
        }
        let r = call(
            &c,
            "GET",
            &format!("{base}/t1"),
            &[(
                "Accept",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
            )],
            None,
        )
        .await;
        let p = r.json();
        assert_eq!(p["kind"], "PartialObjectMetadata", "{p}");
        assert_eq!(p["metadata"]["name"], "t1");
        assert!(p.get("data").is_none());
    });
}

#[test]
fn list_limit_has_continue_and_remaining_item_count() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        // six in all: the root-CA publisher's ConfigMap and l1..l5
        root_ca_published(&c, &k.url, "default").await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        for i in 1..=5 {
            let r = post_json(&c, &base, &cm_json(&format!("l{i}"), json!({}))).await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        let r = call(&c, "GET", &format!("{base}?limit=2"), &[], None).await;
        assert_eq!(r.code, 200, "{}", r.text);
        let v = r.json();
        assert_eq!(v["kind"], "ConfigMapList");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["items"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["metadata"]["remainingItemCount"], 4, "{}", v["metadata"]);
        assert!(
            v["metadata"]["continue"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "{}",
            v["metadata"]
        );
        assert_eq!(v["items"][0]["metadata"]["name"], ROOT_CA);
        assert_eq!(v["items"][1]["metadata"]["name"], "l1");
        // An unparseable token is a 400, as upstream's.
        let r = call(
            &c,
            "GET",
            &format!("{base}?limit=2&continue=bogus"),
            &[],
            None,
        )
        .await;
        assert_failure(&r, 400, "BadRequest");
    });
}

/// Pages through `url` (which has `limit=`), returning each page's item
/// names, remainingItemCount and resourceVersion.
async fn pages(c: &reqwest::Client, url: &str) -> Vec<(Vec<String>, Option<i64>, String)> {
    let mut out = Vec::new();
    let mut next = url.to_string();
    for _ in 0..10 {
        let r = call(c, "GET", &next, &[], None).await;
        assert_eq!(r.code, 200, "{next}: {}", r.text);
        let v = r.json();
        let names = v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        out.push((
            names,
            v["metadata"]["remainingItemCount"].as_i64(),
            v["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ));
        match v["metadata"]["continue"].as_str().filter(|c| !c.is_empty()) {
            Some(t) => next = format!("{url}&continue={}", t.replace('=', "%3D")),
            None => return out,
        }
    }
    panic!("more than 10 pages: {out:?}");
}

#[test]
fn list_pages_of_cluster_scoped_resource_cover_every_item_once() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces", k.url);
        for n in ["ns-a", "ns-b", "ns-c"] {
            let r = post_json(
                &c,
                &base,
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
            )
            .await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        let all: Vec<String> = call(&c, "GET", &base, &[], None).await.json()["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        assert!(
            all.len() >= 7,
            "the four system namespaces and three more: {all:?}"
        );
        let got = pages(&c, &format!("{base}?limit=2")).await;
        let names: Vec<String> = got.iter().flat_map(|p| p.0.clone()).collect();
        assert_eq!(names, all, "pages: {got:?}");
        assert!(got.iter().all(|p| p.2 == got[0].2), "one snapshot: {got:?}");
    });
}

#[test]
fn list_pages_after_the_first_carry_remaining_item_count() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces", k.url);
        for n in ["ns-a", "ns-b", "ns-c"] {
            let r = post_json(
                &c,
                &base,
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
            )
            .await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        let total = call(&c, "GET", &base, &[], None).await.json()["items"]
            .as_array()
            .map(Vec::len)
            .expect("items") as i64;
        let got = pages(&c, &format!("{base}?limit=2")).await;
        let remaining: Vec<Option<i64>> = got.iter().map(|p| p.1).collect();
        let mut want = Vec::new();
        let mut left = total;
        while left > 2 {
            left -= 2;
            want.push(Some(left));
        }
        want.push(None);
        assert_eq!(remaining, want, "pages: {got:?}");
    });
}

#[test]
fn list_pages_of_a_namespace_cover_every_item_once() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        root_ca_published(&c, &k.url, "default").await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        for i in 1..=5 {
            let r = post_json(&c, &base, &cm_json(&format!("l{i}"), json!({}))).await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        let got = pages(&c, &format!("{base}?limit=2")).await;
        let names: Vec<String> = got.iter().flat_map(|p| p.0.clone()).collect();
        assert_eq!(
            names,
            [ROOT_CA, "l1", "l2", "l3", "l4", "l5"],
            "pages: {got:?}"
        );
        assert!(got.iter().all(|p| p.2 == got[0].2), "one snapshot: {got:?}");
    });
}

#[test]
fn table_and_partial_lists_carry_remaining_item_count() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        // six in all: the root-CA publisher's ConfigMap and r1..r5
        root_ca_published(&c, &k.url, "default").await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        for i in 1..=5 {
            let r = post_json(&c, &base, &cm_json(&format!("r{i}"), json!({}))).await;
            assert_eq!(r.code, 201, "{}", r.text);
        }
        for accept in [
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
        ] {
            let v = call(
                &c,
                "GET",
                &format!("{base}?limit=2"),
                &[("Accept", accept)],
                None,
            )
            .await
            .json();
            assert!(v["metadata"]["continue"].is_string(), "{accept}: {v}");
            assert_eq!(
                v["metadata"]["remainingItemCount"], 4,
                "{accept}: {}",
                v["metadata"]
            );
        }
    });
}

#[test]
fn raw_watch_streams_events_and_honours_timeout() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        // The root-CA publisher's ConfigMap made before the list, so that the
        // watch from the list's resourceVersion sees only ours.
        root_ca_published(&c, &k.url, "default").await;
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let list = call(&c, "GET", &base, &[], None).await.json();
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .expect("list rv")
            .to_string();
        // Made after the list: the watch from its resourceVersion replays it.
        let r = post_json(&c, &base, &cm_json("wa", json!({"a": "1"}))).await;
        assert_eq!(r.code, 201, "{}", r.text);

        let started = Instant::now();
        let mut resp = c
            .get(format!(
                "{base}?watch=true&resourceVersion={rv}&timeoutSeconds=3"
            ))
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap_or(""),
            "application/json"
        );
        let r = call(
            &c,
            "PATCH",
            &format!("{base}/wa"),
            &[("Content-Type", "application/merge-patch+json")],
            Some(br#"{"data":{"a":"2"}}"#.to_vec()),
        )
        .await;
        assert_eq!(r.code, 200, "{}", r.text);

        let mut buf = Vec::new();
        within("watch stream end", async {
            while let Some(chunk) = resp.chunk().await.expect("chunk") {
                buf.extend_from_slice(&chunk);
            }
        })
        .await;
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(2500) && elapsed < Duration::from_secs(15),
            "timeoutSeconds=3 ended the watch after {elapsed:?}"
        );
        let text = String::from_utf8(buf).expect("utf8");
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {l:?}: {e}")))
            .collect();
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(types, ["ADDED", "MODIFIED"], "{text}");
        assert!(
            text.starts_with("{\"type\":\"ADDED\",\"object\":{"),
            "{text}"
        );
        for e in &events {
            assert_eq!(e["object"]["kind"], "ConfigMap", "{e}");
            assert_eq!(e["object"]["apiVersion"], "v1", "{e}");
            assert_eq!(e["object"]["metadata"]["name"], "wa", "{e}");
        }
        assert_eq!(events[1]["object"]["data"]["a"], "2");
    });
}

// ---------------------------------------------------------------------------
// 4. Discovery against upstream v1.34
// ---------------------------------------------------------------------------

/// Group versions kube-apiserver v1.34 serves by default (with apiextensions
/// and the aggregator).
const SERVED_1_34: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "apiextensions.k8s.io/v1",
    "apiregistration.k8s.io/v1",
    "apps/v1",
    "authentication.k8s.io/v1",
    "authorization.k8s.io/v1",
    "autoscaling/v2",
    "autoscaling/v1",
    "batch/v1",
    "certificates.k8s.io/v1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "events.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1",
    "networking.k8s.io/v1",
    "node.k8s.io/v1",
    "policy/v1",
    "rbac.authorization.k8s.io/v1",
    "resource.k8s.io/v1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1",
];

const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const STATUS: &[&str] = &["get", "patch", "update"];
const PROXY: &[&str] = &["create", "delete", "get", "patch", "update"];

/// One row of upstream's discovery document.
struct Expect {
    gv: &'static str,
    name: &'static str,
    namespaced: bool,
    kind: &'static str,
    verbs: &'static [&'static str],
    /// `None`: not checked; `Some(&[])`: none.
    short: Option<&'static [&'static str]>,
    categories: Option<&'static [&'static str]>,
    /// group/version of a subresource's kind when it is another group's.
    other_gv: Option<(&'static str, &'static str)>,
}

const fn res(
    gv: &'static str,
    name: &'static str,
    namespaced: bool,
    kind: &'static str,
    verbs: &'static [&'static str],
) -> Expect {
    Expect {
        gv,
        name,
        namespaced,
        kind,
        verbs,
        short: None,
        categories: None,
        other_gv: None,
    }
}

const fn short(mut e: Expect, s: &'static [&'static str]) -> Expect {
    e.short = Some(s);
    e
}

const fn all_category(mut e: Expect) -> Expect {
    e.categories = Some(&["all"]);
    e
}

const fn other(mut e: Expect, g: &'static str, v: &'static str) -> Expect {
    e.other_gv = Some((g, v));
    e
}

fn upstream_1_34() -> Vec<Expect> {
    vec![
        all_category(short(res("v1", "pods", true, "Pod", ALL), &["po"])),
        res(
            "v1",
            "pods/attach",
            true,
            "PodAttachOptions",
            &["create", "get"],
        ),
        res("v1", "pods/binding", true, "Binding", &["create"]),
        res("v1", "pods/ephemeralcontainers", true, "Pod", STATUS),
        other(
            res("v1", "pods/eviction", true, "Eviction", &["create"]),
            "policy",
            "v1",
        ),
        res(
            "v1",
            "pods/exec",
            true,
            "PodExecOptions",
            &["create", "get"],
        ),
        res("v1", "pods/log", true, "Pod", &["get"]),
        res(
            "v1",
            "pods/portforward",
            true,
            "PodPortForwardOptions",
            &["create", "get"],
        ),
        res("v1", "pods/proxy", true, "PodProxyOptions", PROXY),
        res("v1", "pods/resize", true, "Pod", STATUS),
        res("v1", "pods/status", true, "Pod", STATUS),
        short(
            res(
                "v1",
                "namespaces",
                false,
                "Namespace",
                &[
                    "create", "delete", "get", "list", "patch", "update", "watch",
                ],
            ),
            &["ns"],
        ),
        res("v1", "namespaces/finalize", false, "Namespace", &["update"]),
        res("v1", "namespaces/status", false, "Namespace", STATUS),
        short(
            res("v1", "serviceaccounts", true, "ServiceAccount", ALL),
            &["sa"],
        ),
        other(
            res(
                "v1",
                "serviceaccounts/token",
                true,
                "TokenRequest",
                &["create"],
            ),
            "authentication.k8s.io",
            "v1",
        ),
        all_category(short(res("v1", "services", true, "Service", ALL), &["svc"])),
        res("v1", "services/proxy", true, "ServiceProxyOptions", PROXY),
        res("v1", "services/status", true, "Service", STATUS),
        short(res("v1", "configmaps", true, "ConfigMap", ALL), &["cm"]),
        short(res("v1", "secrets", true, "Secret", ALL), &[]),
        short(
            res(
                "v1",
                "componentstatuses",
                false,
                "ComponentStatus",
                &["get", "list"],
            ),
            &["cs"],
        ),
        res("v1", "bindings", true, "Binding", &["create"]),
        short(res("v1", "nodes", false, "Node", ALL), &["no"]),
        res("v1", "nodes/proxy", false, "NodeProxyOptions", PROXY),
        res("v1", "nodes/status", false, "Node", STATUS),
        all_category(short(
            res(
                "v1",
                "replicationcontrollers",
                true,
                "ReplicationController",
                ALL,
            ),
            &["rc"],
        )),
        other(
            res("v1", "replicationcontrollers/scale", true, "Scale", STATUS),
            "autoscaling",
            "v1",
        ),
        short(res("v1", "events", true, "Event", ALL), &["ev"]),
        all_category(short(
            res("apps/v1", "deployments", true, "Deployment", ALL),
            &["deploy"],
        )),
        other(
            res("apps/v1", "deployments/scale", true, "Scale", STATUS),
            "autoscaling",
            "v1",
        ),
        res("apps/v1", "deployments/status", true, "Deployment", STATUS),
        all_category(short(
            res("apps/v1", "statefulsets", true, "StatefulSet", ALL),
            &["sts"],
        )),
        all_category(short(
            res("apps/v1", "daemonsets", true, "DaemonSet", ALL),
            &["ds"],
        )),
        res(
            "authentication.k8s.io/v1",
            "tokenreviews",
            false,
            "TokenReview",
            &["create"],
        ),
        res(
            "authentication.k8s.io/v1",
            "selfsubjectreviews",
            false,
            "SelfSubjectReview",
            &["create"],
        ),
        res(
            "authorization.k8s.io/v1",
            "subjectaccessreviews",
            false,
            "SubjectAccessReview",
            &["create"],
        ),
        res(
            "authorization.k8s.io/v1",
            "localsubjectaccessreviews",
            true,
            "LocalSubjectAccessReview",
            &["create"],
        ),
        all_category(short(
            res(
                "autoscaling/v2",
                "horizontalpodautoscalers",
                true,
                "HorizontalPodAutoscaler",
                ALL,
            ),
            &["hpa"],
        )),
        all_category(res("batch/v1", "jobs", true, "Job", ALL)),
        all_category(short(
            res("batch/v1", "cronjobs", true, "CronJob", ALL),
            &["cj"],
        )),
        short(
            res(
                "policy/v1",
                "poddisruptionbudgets",
                true,
                "PodDisruptionBudget",
                ALL,
            ),
            &["pdb"],
        ),
        res("coordination.k8s.io/v1", "leases", true, "Lease", ALL),
        res(
            "discovery.k8s.io/v1",
            "endpointslices",
            true,
            "EndpointSlice",
            ALL,
        ),
        short(
            res("events.k8s.io/v1", "events", true, "Event", ALL),
            &["ev"],
        ),
        short(
            res("networking.k8s.io/v1", "ingresses", true, "Ingress", ALL),
            &["ing"],
        ),
        res(
            "networking.k8s.io/v1",
            "ingresses/status",
            true,
            "Ingress",
            STATUS,
        ),
        short(
            res(
                "networking.k8s.io/v1",
                "networkpolicies",
                true,
                "NetworkPolicy",
                ALL,
            ),
            &["netpol"],
        ),
        res(
            "rbac.authorization.k8s.io/v1",
            "clusterroles",
            false,
            "ClusterRole",
            ALL,
        ),
        res(
            "rbac.authorization.k8s.io/v1",
            "rolebindings",
            true,
            "RoleBinding",
            ALL,
        ),
        short(
            res(
                "storage.k8s.io/v1",
                "storageclasses",
                false,
                "StorageClass",
                ALL,
            ),
            &["sc"],
        ),
        res(
            "resource.k8s.io/v1",
            "resourceclaims",
            true,
            "ResourceClaim",
            ALL,
        ),
        res(
            "resource.k8s.io/v1",
            "resourceclaims/status",
            true,
            "ResourceClaim",
            STATUS,
        ),
        res(
            "resource.k8s.io/v1",
            "deviceclasses",
            false,
            "DeviceClass",
            ALL,
        ),
        short(
            res(
                "apiextensions.k8s.io/v1",
                "customresourcedefinitions",
                false,
                "CustomResourceDefinition",
                ALL,
            ),
            &["crd", "crds"],
        ),
        res(
            "apiextensions.k8s.io/v1",
            "customresourcedefinitions/status",
            false,
            "CustomResourceDefinition",
            STATUS,
        ),
        res(
            "apiregistration.k8s.io/v1",
            "apiservices",
            false,
            "APIService",
            ALL,
        ),
        res(
            "apiregistration.k8s.io/v1",
            "apiservices/status",
            false,
            "APIService",
            STATUS,
        ),
        res(
            "admissionregistration.k8s.io/v1",
            "validatingwebhookconfigurations",
            false,
            "ValidatingWebhookConfiguration",
            ALL,
        ),
        res(
            "admissionregistration.k8s.io/v1",
            "validatingadmissionpolicies",
            false,
            "ValidatingAdmissionPolicy",
            ALL,
        ),
        res(
            "flowcontrol.apiserver.k8s.io/v1",
            "flowschemas",
            false,
            "FlowSchema",
            ALL,
        ),
        res(
            "flowcontrol.apiserver.k8s.io/v1",
            "flowschemas/status",
            false,
            "FlowSchema",
            STATUS,
        ),
        res(
            "node.k8s.io/v1",
            "runtimeclasses",
            false,
            "RuntimeClass",
            ALL,
        ),
        short(
            res(
                "scheduling.k8s.io/v1",
                "priorityclasses",
                false,
                "PriorityClass",
                ALL,
            ),
            &["pc"],
        ),
        short(
            res(
                "certificates.k8s.io/v1",
                "certificatesigningrequests",
                false,
                "CertificateSigningRequest",
                ALL,
            ),
            &["csr"],
        ),
        res(
            "certificates.k8s.io/v1",
            "certificatesigningrequests/approval",
            false,
            "CertificateSigningRequest",
            STATUS,
        ),
    ]
}

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn discovery_matches_upstream_1_34() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let get = |path: String| {
            let c = c.clone();
            let url = format!("{}{path}", k.url);
            async move {
                let r = call(&c, "GET", &url, &[], None).await;
                assert_eq!(r.code, 200, "{url}: {}", r.text);
                r.json()
            }
        };

        let api = get("/api".into()).await;
        assert_eq!(api["kind"], "APIVersions", "{api}");
        assert_eq!(str_list(&api["versions"]), ["v1"]);

        let apis = get("/apis".into()).await;
        assert_eq!(apis["kind"], "APIGroupList", "{apis}");
        let mut served: Vec<String> = vec!["v1".into()];
        for g in apis["groups"].as_array().expect("groups") {
            let name = g["name"].as_str().expect("group name");
            let versions: Vec<String> = g["versions"]
                .as_array()
                .expect("versions")
                .iter()
                .map(|v| {
                    assert_eq!(
                        v["groupVersion"],
                        format!("{name}/{}", v["version"].as_str().unwrap_or("")),
                        "{g}"
                    );
                    v["groupVersion"].as_str().unwrap_or("").to_string()
                })
                .collect();
            assert_eq!(
                g["preferredVersion"]["groupVersion"].as_str(),
                versions.first().map(String::as_str),
                "the preferred version comes first: {g}"
            );
            if name == "autoscaling" {
                assert_eq!(versions, ["autoscaling/v2", "autoscaling/v1"], "{g}");
            }
            served.extend(versions);
        }
        let served_set: BTreeSet<&str> = served.iter().map(String::as_str).collect();
        let expected_set: BTreeSet<&str> = SERVED_1_34.iter().copied().collect();
        assert_eq!(
            served_set.len(),
            served.len(),
            "a group version is listed twice: {served:?}"
        );
        let missing: Vec<_> = expected_set.difference(&served_set).collect();
        let extra: Vec<_> = served_set.difference(&expected_set).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "group versions differ from v1.34's defaults: missing {missing:?}, extra {extra:?}"
        );

        // Every group version's resource list.
        let mut lists: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for gv in &served {
            let path = if gv == "v1" {
                "/api/v1".to_string()
            } else {
                format!("/apis/{gv}")
            };
            let l = get(path).await;
            assert_eq!(l["kind"], "APIResourceList", "{gv}: {l}");
            assert_eq!(l["groupVersion"], gv.as_str(), "{l}");
            let resources = l["resources"].as_array().cloned().unwrap_or_default();
            assert!(!resources.is_empty(), "{gv} serves no resources");
            let names: BTreeSet<&str> = resources
                .iter()
                .filter_map(|r| r["name"].as_str())
                .collect();
            for r in &resources {
                let name = r["name"].as_str().unwrap_or("");
                assert!(!name.is_empty() && r["kind"].is_string(), "{gv}: {r}");
                assert!(!str_list(&r["verbs"]).is_empty(), "{gv}: {r}");
                if let Some((parent, _)) = name.split_once('/') {
                    assert!(names.contains(parent), "{gv}: {name} has no parent");
                    assert_eq!(r["singularName"].as_str().unwrap_or(""), "", "{gv}: {r}");
                } else {
                    assert_eq!(
                        r["singularName"].as_str().unwrap_or(""),
                        r["kind"].as_str().unwrap_or("").to_lowercase(),
                        "{gv}: {r}"
                    );
                }
            }
            lists.insert(gv.clone(), resources);
        }

        let mut problems = Vec::new();
        for e in upstream_1_34() {
            let Some(r) = lists
                .get(e.gv)
                .and_then(|l| l.iter().find(|r| r["name"] == e.name))
            else {
                problems.push(format!("{} {}: not served", e.gv, e.name));
                continue;
            };
            let mut p = |what: &str, got: String, want: String| {
                if got != want {
                    problems.push(format!(
                        "{} {} {what}: got {got}, want {want}",
                        e.gv, e.name
                    ));
                }
            };
            p("kind", r["kind"].to_string(), json!(e.kind).to_string());
            p(
                "namespaced",
                r["namespaced"].to_string(),
                e.namespaced.to_string(),
            );
            let verbs: BTreeSet<String> = str_list(&r["verbs"]).into_iter().collect();
            let want: BTreeSet<String> = e.verbs.iter().map(|v| v.to_string()).collect();
            p("verbs", format!("{verbs:?}"), format!("{want:?}"));
            if let Some(s) = e.short {
                p(
                    "shortNames",
                    format!("{:?}", str_list(&r["shortNames"])),
                    format!("{s:?}"),
                );
            }
            if let Some(cats) = e.categories {
                p(
                    "categories",
                    format!("{:?}", str_list(&r["categories"])),
                    format!("{cats:?}"),
                );
            }
            let (g, v) = e.other_gv.unwrap_or(("", ""));
            p(
                "group",
                r["group"].as_str().unwrap_or("").to_string(),
                g.to_string(),
            );
            p(
                "version",
                r["version"].as_str().unwrap_or("").to_string(),
                v.to_string(),
            );
        }
        assert!(
            problems.is_empty(),
            "discovery differs from upstream v1.34:\n{}",
            problems.join("\n")
        );
    });
}
