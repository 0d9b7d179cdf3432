//! Apply, patch and managedFields as users drive them: `kubectl apply`
//! (client- and server-side), `kubectl patch/scale/set/label/annotate/edit`,
//! and the `kube` crate's server-side apply with several field managers,
//! checked against upstream kube-apiserver (v1.34) behaviour.
//! Every test starts its own kapi, so they run in parallel.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
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

/// `kubectl get <what> -o json [--show-managed-fields]`, parsed.
fn get_json(k: &Kapi, what: &[&str], managed: bool) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    if managed {
        args.push("--show-managed-fields");
    }
    let out = kubectl_ok(k, &args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} is not JSON ({e}): {out}"))
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

/// `kubectl <verb...> -f <file of yaml>`.
fn kubectl_file(k: &Kapi, args: &[&str], yaml: &str) -> Out {
    let f = yaml_file(yaml);
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&["-f", f.path().to_str().expect("path")]);
    kubectl(k, &all)
}

fn kubectl_file_ok(k: &Kapi, args: &[&str], yaml: &str) -> String {
    let o = kubectl_file(k, args, yaml);
    assert!(
        o.ok,
        "kubectl {args:?} -f failed\nstdout:\n{}\nstderr:\n{}\nmanifest:\n{yaml}",
        o.stdout, o.stderr
    );
    o.stdout
}

fn namespace(k: &Kapi, ns: &str) {
    kubectl_ok(k, &["create", "namespace", ns]);
}

/// The Deployment (two containers, each with env vars and ports), Service and
/// ConfigMap of the multi-document manifest.
fn app_manifest(ns: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.27
        env:
        - name: MODE
          value: prod
        - name: DEBUG
          value: "false"
        ports:
        - containerPort: 80
          name: http
      - name: sidecar
        image: busybox:1.36
        env:
        - name: INTERVAL
          value: "10"
        ports:
        - containerPort: 9090
          name: metrics
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: {ns}
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: {ns}
data:
  greeting: hello
  level: info
"#
    )
}

/// The same manifest edited: the sidecar container and the DEBUG env var are
/// gone, and the app image changed.
fn app_manifest_edited(ns: &str) -> String {
    let full = app_manifest(ns);
    let without_sidecar = full.replace(
        "      - name: sidecar
        image: busybox:1.36
        env:
        - name: INTERVAL
          value: \"10\"
        ports:
        - containerPort: 9090
          name: metrics
",
        "",
    );
    let without_debug = without_sidecar.replace(
        "        - name: DEBUG
          value: \"false\"
",
        "",
    );
    let edited = without_debug.replace("nginx:1.27", "nginx:1.29");
    assert!(
        !edited.contains("sidecar") && !edited.contains("DEBUG") && edited.contains("nginx:1.29"),
        "edit of the manifest did not apply:\n{edited}"
    );
    edited
}

fn deployment_doc(ns: &str, name: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
  labels:
    app: {name}
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
      - name: app
        image: nginx:1.27
      - name: sidecar
        image: busybox:1.36
"#
    )
}

fn containers(d: &Value) -> Vec<Value> {
    d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn container_images(d: &Value) -> Vec<(String, String)> {
    containers(d)
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["image"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn managed_fields(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// (manager, operation, subresource) of every managedFields entry.
fn manager_summary(obj: &Value) -> Vec<(String, String, String)> {
    managed_fields(obj)
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or("").to_string(),
                e["operation"].as_str().unwrap_or("").to_string(),
                e["subresource"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The managedFields entry of `manager` with `operation`; panics listing them all.
fn mf_entry(obj: &Value, manager: &str, operation: &str) -> Value {
    let all = managed_fields(obj);
    let found: Vec<&Value> = all
        .iter()
        .filter(|e| e["manager"] == manager && e["operation"] == operation)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one {manager}/{operation} entry; managedFields:\n{}",
        serde_json::to_string_pretty(&all).unwrap_or_default()
    );
    let e = found[0].clone();
    assert_eq!(e["fieldsType"], "FieldsV1", "{e}");
    assert!(e["fieldsV1"].is_object(), "{e}");
    assert!(e["time"].is_string(), "{e}");
    e
}

/// The managedFields entry of `manager`, if any.
fn mf_find(obj: &Value, manager: &str) -> Option<Value> {
    managed_fields(obj)
        .into_iter()
        .find(|e| e["manager"] == manager)
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_else(|| panic!("no resourceVersion: {obj}"))
        .to_string()
}

// ---- raw HTTP ----

struct Resp {
    code: u16,
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
    content_type: &str,
    body: Option<Vec<u8>>,
) -> Resp {
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = c.request(m, url).header("Content-Type", content_type);
    if let Some(b) = body {
        req = req.body(b);
    }
    let r = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let code = r.status().as_u16();
    let text = r.text().await.expect("body");
    Resp { code, text }
}

async fn patch(c: &reqwest::Client, url: &str, content_type: &str, body: &Value) -> Resp {
    call(
        c,
        "PATCH",
        url,
        content_type,
        Some(serde_json::to_vec(body).expect("json")),
    )
    .await
}

const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

// ---- kube crate ----

async fn kube_client(k: &Kapi) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("read kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("config from kubeconfig");
    kube::Client::try_from(cfg).expect("kube client")
}

/// Runs a future under a deadline so that nothing can hang.
async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(EVENT_LIMIT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {EVENT_LIMIT:?}"))
}

fn cm_apply(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

fn cm_data(cm: &k8s_openapi::api::core::v1::ConfigMap) -> BTreeMap<String, String> {
    cm.data.clone().unwrap_or_default()
}

fn btree(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The managedFields of a typed object as JSON.
fn kube_mf(cm: &k8s_openapi::api::core::v1::ConfigMap) -> Value {
    json!({"metadata": {"managedFields": serde_json::to_value(&cm.metadata.managed_fields).expect("mf")}})
}

// ---- custom resources ----

const WIDGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.apply.example.com
spec:
  group: apply.example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
              color:
                type: string
              tags:
                type: array
                items:
                  type: string
"#;

/// Creates the Widget CRD and waits (with a deadline) until it is served.
fn install_widget_crd(k: &Kapi) {
    kubectl_file_ok(k, &["create"], WIDGET_CRD);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let o = kubectl(k, &["get", "widgets", "-A"]);
        if o.ok {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "widgets not served within 15s: {}",
            o.stderr
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ---------------------------------------------------------------------------
// 1. kubectl apply (client-side)
// ---------------------------------------------------------------------------

#[test]
fn kubectl_apply_multi_document_created_then_unchanged() {
    let k = Kapi::start(&[]);
    namespace(&k, "ap");
    let manifest = app_manifest("ap");
    let first = kubectl_file_ok(&k, &["apply"], &manifest);
    assert_eq!(
        first.lines().map(str::trim).collect::<Vec<_>>(),
        [
            "deployment.apps/web created",
            "service/web created",
            "configmap/web-config created"
        ],
        "first apply:\n{first}"
    );
    let second = kubectl_file_ok(&k, &["apply"], &manifest);
    assert_eq!(
        second.lines().map(str::trim).collect::<Vec<_>>(),
        [
            "deployment.apps/web unchanged",
            "service/web unchanged",
            "configmap/web-config unchanged"
        ],
        "second apply:\n{second}"
    );
    // What landed, and the last-applied annotation client-side apply keeps.
    let d = get_json(&k, &["deployment", "web", "-n", "ap"], false);
    assert_eq!(
        container_images(&d),
        [
            ("app".to_string(), "nginx:1.27".to_string()),
            ("sidecar".to_string(), "busybox:1.36".to_string())
        ]
    );
    let c = containers(&d);
    assert_eq!(
        c[0]["env"],
        json!([{"name": "MODE", "value": "prod"}, {"name": "DEBUG", "value": "false"}])
    );
    assert_eq!(c[0]["ports"][0]["containerPort"], 80, "{d}");
    assert_eq!(c[1]["ports"][0]["containerPort"], 9090, "{d}");
    let last: Value = serde_json::from_str(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap_or_else(|| panic!("no last-applied-configuration: {d}")),
    )
    .expect("last-applied is JSON");
    assert_eq!(last["kind"], "Deployment");
    assert_eq!(last["spec"]["replicas"], 2);
    let cm = get_json(&k, &["configmap", "web-config", "-n", "ap"], false);
    assert_eq!(cm["data"], json!({"greeting": "hello", "level": "info"}));
    let svc = get_json(&k, &["service", "web", "-n", "ap"], false);
    assert_eq!(svc["spec"]["ports"][0]["port"], 80, "{svc}");
}

#[test]
fn kubectl_apply_edited_manifest_removes_container_and_env_keeps_others_fields() {
    let k = Kapi::start(&[]);
    namespace(&k, "ed");
    kubectl_file_ok(&k, &["apply"], &app_manifest("ed"));
    // Other managers touch the Deployment and the ConfigMap.
    kubectl_ok(&k, &["label", "deployment", "web", "-n", "ed", "team=blue"]);
    kubectl_ok(
        &k,
        &["annotate", "deployment", "web", "-n", "ed", "owner=ops"],
    );
    kubectl_ok(&k, &["label", "configmap", "web-config", "-n", "ed", "x=y"]);

    let out = kubectl_file_ok(&k, &["apply"], &app_manifest_edited("ed"));
    assert_eq!(
        out.lines().map(str::trim).collect::<Vec<_>>(),
        [
            "deployment.apps/web configured",
            "service/web unchanged",
            "configmap/web-config unchanged"
        ],
        "apply of the edited manifest:\n{out}"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ed"], false);
    let c = containers(&d);
    assert_eq!(c.len(), 1, "only the app container remains: {c:?}");
    assert_eq!(c[0]["name"], "app");
    assert_eq!(c[0]["image"], "nginx:1.29");
    assert_eq!(c[0]["env"], json!([{"name": "MODE", "value": "prod"}]));
    assert_eq!(
        c[0]["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}])
    );
    assert_eq!(d["spec"]["replicas"], 2);
    // Fields owned by other managers survive the apply.
    assert_eq!(d["metadata"]["labels"]["team"], "blue", "{d}");
    assert_eq!(d["metadata"]["annotations"]["owner"], "ops", "{d}");
    let cm = get_json(&k, &["configmap", "web-config", "-n", "ed"], false);
    assert_eq!(cm["metadata"]["labels"]["x"], "y", "{cm}");
    // A third apply of the edited manifest changes nothing.
    let again = kubectl_file_ok(&k, &["apply"], &app_manifest_edited("ed"));
    assert!(
        again.contains("deployment.apps/web unchanged"),
        "re-apply:\n{again}"
    );
}

// ---------------------------------------------------------------------------
// 2. kubectl apply --server-side
// ---------------------------------------------------------------------------

#[test]
fn kubectl_server_side_apply_conflict_then_force_moves_ownership() {
    let k = Kapi::start(&[]);
    namespace(&k, "ss");
    let two = deployment_doc("ss", "api", 2);
    let five = deployment_doc("ss", "api", 5);
    assert_eq!(
        kubectl_file_ok(&k, &["apply", "--server-side"], &two).trim(),
        "deployment.apps/api serverside-applied"
    );
    let d = get_json(&k, &["deployment", "api", "-n", "ss"], true);
    assert_eq!(d["spec"]["replicas"], 2);
    let kubectl_entry = mf_entry(&d, "kubectl", "Apply");
    assert_eq!(kubectl_entry["apiVersion"], "apps/v1");
    assert_eq!(
        kubectl_entry["fieldsV1"]["f:spec"]["f:replicas"],
        json!({}),
        "{kubectl_entry}"
    );

    // A second manager changing a field the first one owns: a conflict.
    let o = kubectl_file(
        &k,
        &["apply", "--server-side", "--field-manager=other"],
        &five,
    );
    assert!(!o.ok, "conflicting apply succeeded:\n{}", o.stdout);
    assert!(
        o.stderr
            .contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas"#),
        "stderr:\n{}",
        o.stderr
    );
    assert!(o.stderr.contains("--force-conflicts"), "{}", o.stderr);
    let d = get_json(&k, &["deployment", "api", "-n", "ss"], false);
    assert_eq!(d["spec"]["replicas"], 2, "a conflict changes nothing");

    // The same apply with --force-conflicts wins and takes the field.
    assert_eq!(
        kubectl_file_ok(
            &k,
            &[
                "apply",
                "--server-side",
                "--field-manager=other",
                "--force-conflicts"
            ],
            &five,
        )
        .trim(),
        "deployment.apps/api serverside-applied"
    );
    let yaml = kubectl_ok(
        &k,
        &[
            "get",
            "deployment",
            "api",
            "-n",
            "ss",
            "-o",
            "yaml",
            "--show-managed-fields",
        ],
    );
    let d: Value = serde_saphyr::from_slice(yaml.as_bytes())
        .unwrap_or_else(|e| panic!("-o yaml is not YAML ({e}):\n{yaml}"));
    assert_eq!(d["spec"]["replicas"], 5);
    let other = mf_entry(&d, "other", "Apply");
    assert_eq!(
        other["fieldsV1"]["f:spec"]["f:replicas"],
        json!({}),
        "{other}"
    );
    let first = mf_entry(&d, "kubectl", "Apply");
    assert!(
        first["fieldsV1"]["f:spec"].get("f:replicas").is_none(),
        "kubectl still owns replicas: {first}"
    );
    // Both still share the fields they applied with equal values.
    assert!(
        first["fieldsV1"]["f:spec"]["f:template"].is_object(),
        "{first}"
    );
    assert!(
        other["fieldsV1"]["f:spec"]["f:template"].is_object(),
        "{other}"
    );
}

// ---------------------------------------------------------------------------
// 3. kubectl patch / scale / set image / label / annotate / edit
// ---------------------------------------------------------------------------

#[test]
fn kubectl_patch_json_merge_and_strategic() {
    let k = Kapi::start(&[]);
    namespace(&k, "pt");
    kubectl_file_ok(&k, &["create"], &deployment_doc("pt", "web", 1));

    // JSON patch.
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "deployment",
                "web",
                "-n",
                "pt",
                "--type",
                "json",
                "-p",
                r#"[{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/tier","value":"front"}]"#,
            ],
        )
        .trim(),
        "deployment.apps/web patched"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "pt"], false);
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        d["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );

    // Merge patch: sets a field and deletes a label with null.
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "deployment",
                "web",
                "-n",
                "pt",
                "--type",
                "merge",
                "-p",
                r#"{"metadata":{"labels":{"tier":null}},"spec":{"revisionHistoryLimit":4}}"#,
            ],
        )
        .trim(),
        "deployment.apps/web patched"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "pt"], false);
    assert_eq!(d["spec"]["revisionHistoryLimit"], 4);
    assert_eq!(d["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(container_images(&d).len(), 2, "merge patch kept containers");

    // Strategic merge patch: one container's image by its merge key; the
    // other container stays, in order.
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "deployment",
                "web",
                "-n",
                "pt",
                "--type",
                "strategic",
                "-p",
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"}]}}}}"#,
            ],
        )
        .trim(),
        "deployment.apps/web patched"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "pt"], false);
    assert_eq!(
        container_images(&d),
        [
            ("app".to_string(), "nginx:1.27".to_string()),
            ("sidecar".to_string(), "busybox:1.37".to_string())
        ]
    );
    // kubectl patch's default type is strategic; a patch that changes nothing
    // is reported as such.
    let rv_before = rv(&d);
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "deployment",
                "web",
                "-n",
                "pt",
                "-p",
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"}]}}}}"#,
            ],
        )
        .trim(),
        "deployment.apps/web patched (no change)"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "pt"], false);
    assert_eq!(rv(&d), rv_before, "a no-op patch bumped resourceVersion");

    // Merge patch replaces a list wholesale (RFC 7386), unlike strategic.
    kubectl_ok(
        &k,
        &[
            "patch",
            "deployment",
            "web",
            "-n",
            "pt",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"nginx:1.30"}]}}}}"#,
        ],
    );
    let d = get_json(&k, &["deployment", "web", "-n", "pt"], false);
    assert_eq!(
        container_images(&d),
        [("only".to_string(), "nginx:1.30".to_string())]
    );
}

#[test]
fn kubectl_scale_set_image_label_overwrite_annotate() {
    let k = Kapi::start(&[]);
    namespace(&k, "ops");
    kubectl_file_ok(&k, &["create"], &deployment_doc("ops", "web", 1));

    assert_eq!(
        kubectl_ok(
            &k,
            &["scale", "deployment", "web", "-n", "ops", "--replicas=4"]
        )
        .trim(),
        "deployment.apps/web scaled"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert_eq!(d["spec"]["replicas"], 4);
    // --current-replicas guards the scale.
    let err = kubectl_err(
        &k,
        &[
            "scale",
            "deployment",
            "web",
            "-n",
            "ops",
            "--current-replicas=2",
            "--replicas=6",
        ],
    );
    assert!(
        err.contains("Expected replicas to be 2, was 4"),
        "stderr:\n{err}"
    );

    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "set",
                "image",
                "deployment/web",
                "-n",
                "ops",
                "sidecar=busybox:1.37"
            ]
        )
        .trim(),
        "deployment.apps/web image updated"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert_eq!(
        container_images(&d),
        [
            ("app".to_string(), "nginx:1.27".to_string()),
            ("sidecar".to_string(), "busybox:1.37".to_string())
        ]
    );
    assert_eq!(d["spec"]["replicas"], 4);

    assert_eq!(
        kubectl_ok(&k, &["label", "deployment", "web", "-n", "ops", "team=a"]).trim(),
        "deployment.apps/web labeled"
    );
    let err = kubectl_err(&k, &["label", "deployment", "web", "-n", "ops", "team=b"]);
    assert!(
        err.contains("'team' already has a value (a), and --overwrite is false"),
        "stderr:\n{err}"
    );
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "label",
                "deployment",
                "web",
                "-n",
                "ops",
                "team=b",
                "--overwrite"
            ]
        )
        .trim(),
        "deployment.apps/web labeled"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert_eq!(d["metadata"]["labels"], json!({"app": "web", "team": "b"}));

    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "annotate",
                "deployment",
                "web",
                "-n",
                "ops",
                "note=first release"
            ]
        )
        .trim(),
        "deployment.apps/web annotated"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert_eq!(d["metadata"]["annotations"]["note"], "first release");
    kubectl_ok(
        &k,
        &[
            "annotate",
            "deployment",
            "web",
            "-n",
            "ops",
            "note=second",
            "--overwrite",
        ],
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert_eq!(d["metadata"]["annotations"]["note"], "second");
    assert_eq!(
        kubectl_ok(&k, &["annotate", "deployment", "web", "-n", "ops", "note-"]).trim(),
        "deployment.apps/web annotated"
    );
    let d = get_json(&k, &["deployment", "web", "-n", "ops"], false);
    assert!(
        d["metadata"]["annotations"].get("note").is_none(),
        "annotation not removed: {d}"
    );
    // Nothing else was disturbed along the way.
    assert_eq!(d["spec"]["replicas"], 4);
    assert_eq!(d["metadata"]["labels"]["team"], "b");
}

#[test]
fn kubectl_edit_with_a_scripted_editor() {
    let k = Kapi::start(&[]);
    namespace(&k, "edt");
    kubectl_file_ok(&k, &["create"], &deployment_doc("edt", "web", 1));
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nset -e\nsed -i 's/image: busybox:1.36/image: busybox:1.38/' \"$1\"\n",
    )
    .expect("write editor script");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("chmod editor script");
    }
    let o = run_limited(
        k.kubectl()
            .env("KUBE_EDITOR", &script)
            .env_remove("EDITOR")
            .args(["edit", "deployment", "web", "-n", "edt"]),
        CMD_LIMIT,
    );
    assert!(
        o.ok,
        "kubectl edit failed\nstdout:\n{}\nstderr:\n{}",
        o.stdout, o.stderr
    );
    assert_eq!(
        o.stdout.trim(),
        "deployment.apps/web edited",
        "{}",
        o.stderr
    );
    let d = get_json(&k, &["deployment", "web", "-n", "edt"], true);
    assert_eq!(
        container_images(&d),
        [
            ("app".to_string(), "nginx:1.27".to_string()),
            ("sidecar".to_string(), "busybox:1.38".to_string())
        ]
    );
    let e = mf_entry(&d, "kubectl-edit", "Update");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"sidecar\"}": {"f:image": {}}}}}}}),
        "{e}"
    );
    // An editor that changes nothing cancels the edit.
    let noop = dir.path().join("noop.sh");
    std::fs::write(&noop, "#!/bin/sh\nexit 0\n").expect("write noop script");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&noop, std::fs::Permissions::from_mode(0o755))
            .expect("chmod noop script");
    }
    let before = rv(&d);
    let o = run_limited(
        k.kubectl()
            .env("KUBE_EDITOR", &noop)
            .args(["edit", "deployment", "web", "-n", "edt"]),
        CMD_LIMIT,
    );
    assert!(o.ok, "no-op edit failed: {}", o.stderr);
    assert!(
        o.stderr.contains("Edit cancelled, no changes made."),
        "stdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
    let d = get_json(&k, &["deployment", "web", "-n", "edt"], false);
    assert_eq!(rv(&d), before);
}

// ---------------------------------------------------------------------------
// 4. managedFields as kubectl's commands leave them
// ---------------------------------------------------------------------------

#[test]
fn kubectl_commands_are_recorded_as_their_field_managers() {
    let k = Kapi::start(&[]);
    namespace(&k, "mf");
    // Client-side apply of a Deployment without labels.
    let manifest = deployment_doc("mf", "web", 1).replace("  labels:\n    app: web\n", "");
    assert!(!manifest.contains("  labels:\n    app: web\nspec"));
    kubectl_file_ok(&k, &["apply"], &manifest);
    kubectl_ok(&k, &["label", "deployment", "web", "-n", "mf", "team=blue"]);
    kubectl_ok(
        &k,
        &["annotate", "deployment", "web", "-n", "mf", "note=hi"],
    );
    kubectl_ok(
        &k,
        &[
            "set",
            "image",
            "deployment/web",
            "-n",
            "mf",
            "app=nginx:1.28",
        ],
    );
    kubectl_ok(
        &k,
        &[
            "patch",
            "deployment",
            "web",
            "-n",
            "mf",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"minReadySeconds":5}}"#,
        ],
    );
    // Server-side apply of another object.
    kubectl_file_ok(
        &k,
        &["apply", "--server-side"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: mf\ndata:\n  a: \"1\"\n",
    );

    let d = get_json(&k, &["deployment", "web", "-n", "mf"], true);
    let summary = manager_summary(&d);
    for (m, op) in [
        ("kubectl-client-side-apply", "Update"),
        ("kubectl-label", "Update"),
        ("kubectl-annotate", "Update"),
        ("kubectl-set", "Update"),
        ("kubectl-patch", "Update"),
    ] {
        assert!(
            summary
                .iter()
                .any(|(mm, oo, sub)| mm == m && oo == op && sub.is_empty()),
            "no {m}/{op} in {summary:?}"
        );
    }
    assert_eq!(summary.len(), 5, "{summary:?}");
    for e in managed_fields(&d) {
        assert_eq!(e["apiVersion"], "apps/v1", "{e}");
        assert_eq!(e["fieldsType"], "FieldsV1", "{e}");
    }
    let csa = mf_entry(&d, "kubectl-client-side-apply", "Update");
    let f = &csa["fieldsV1"];
    assert_eq!(
        f["f:metadata"]["f:annotations"]["f:kubectl.kubernetes.io/last-applied-configuration"],
        json!({}),
        "{csa}"
    );
    assert_eq!(f["f:spec"]["f:replicas"], json!({}), "{csa}");
    let app = &f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"];
    assert_eq!(app["f:name"], json!({}), "{csa}");
    // kubectl set image took the app image from client-side apply.
    assert!(app.get("f:image").is_none(), "image still owned: {csa}");
    let sidecar = &f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"sidecar\"}"];
    assert_eq!(sidecar["f:image"], json!({}), "{csa}");

    let label = mf_entry(&d, "kubectl-label", "Update");
    assert_eq!(
        label["fieldsV1"]["f:metadata"]["f:labels"]["f:team"],
        json!({}),
        "{label}"
    );
    assert!(label["fieldsV1"].get("f:spec").is_none(), "{label}");
    assert_eq!(
        mf_entry(&d, "kubectl-annotate", "Update")["fieldsV1"],
        json!({"f:metadata": {"f:annotations": {"f:note": {}}}})
    );
    assert_eq!(
        mf_entry(&d, "kubectl-set", "Update")["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"app\"}": {"f:image": {}}}}}}})
    );
    assert_eq!(
        mf_entry(&d, "kubectl-patch", "Update")["fieldsV1"],
        json!({"f:spec": {"f:minReadySeconds": {}}})
    );

    let cm = get_json(&k, &["configmap", "ssa", "-n", "mf"], true);
    assert_eq!(
        manager_summary(&cm),
        [("kubectl".into(), "Apply".into(), String::new())]
    );
    assert_eq!(
        mf_entry(&cm, "kubectl", "Apply")["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(mf_entry(&cm, "kubectl", "Apply")["apiVersion"], "v1");

    // Without --show-managed-fields kubectl hides them.
    let plain = get_json(&k, &["deployment", "web", "-n", "mf"], false);
    assert!(plain["metadata"].get("managedFields").is_none(), "{plain}");
}

#[test]

fn kubectl_scale_is_recorded_on_the_scale_subresource() {
    let k = Kapi::start(&[]);
    namespace(&k, "sc");
    kubectl_file_ok(&k, &["create"], &deployment_doc("sc", "web", 1));
    kubectl_ok(
        &k,
        &["scale", "deployment", "web", "-n", "sc", "--replicas=3"],
    );
    // kubectl scale sends no fieldManager, so the server names the manager
    // after the User-Agent's program name (kubectl's file name).
    let ua_manager = common::kubectl_path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .expect("kubectl file name");
    let d = get_json(&k, &["deployment", "web", "-n", "sc"], true);
    let e = mf_find(&d, &ua_manager)
        .unwrap_or_else(|| panic!("no {ua_manager} entry: {:?}", manager_summary(&d)));
    assert_eq!(e["operation"], "Update", "{e}");
    assert_eq!(e["apiVersion"], "apps/v1", "{e}");
    assert_eq!(e["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}), "{e}");
    assert_eq!(e["subresource"], "scale", "{e}");
    // The creator no longer owns replicas.
    let create = mf_entry(&d, "kubectl-create", "Update");
    assert!(
        create["fieldsV1"]["f:spec"].get("f:replicas").is_none(),
        "{create}"
    );
}

// ---------------------------------------------------------------------------
// 5. Server-side apply with the kube crate
// ---------------------------------------------------------------------------

#[test]
fn kube_apply_two_managers_conflict_force_and_release() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("two managers", async {
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
            let a = PatchParams::apply("manager-a");
            let b = PatchParams::apply("manager-b");

            // manager-a applies a and b (creating the object).
            let cm = api
                .patch(
                    "shared",
                    &a,
                    &Patch::Apply(cm_apply("shared", json!({"a": "1", "b": "2"}))),
                )
                .await
                .expect("manager-a apply");
            assert_eq!(cm_data(&cm), btree(&[("a", "1"), ("b", "2")]));
            let mf = kube_mf(&cm);
            assert_eq!(
                mf_entry(&mf, "manager-a", "Apply")["fieldsV1"],
                json!({"f:data": {"f:a": {}, "f:b": {}}})
            );

            // manager-b applies a different b: conflict.
            let conflicting = Patch::Apply(cm_apply("shared", json!({"b": "3"})));
            match api.patch("shared", &b, &conflicting).await {
                Err(kube::Error::Api(s)) => {
                    assert_eq!(s.code, 409, "{s:?}");
                    assert_eq!(s.reason, "Conflict", "{s:?}");
                    assert!(
                        s.message.contains(".data.b") && s.message.contains("manager-a"),
                        "{s:?}"
                    );
                    assert_eq!(
                        s.message,
                        r#"Apply failed with 1 conflict: conflict with "manager-a": .data.b"#
                    );
                    let causes = s
                        .details
                        .as_ref()
                        .map(|d| d.causes.clone())
                        .unwrap_or_default();
                    assert_eq!(causes.len(), 1, "{s:?}");
                    assert_eq!(causes[0].reason, "FieldManagerConflict", "{s:?}");
                    assert_eq!(causes[0].field, ".data.b", "{s:?}");
                    assert_eq!(causes[0].message, r#"conflict with "manager-a""#, "{s:?}");
                }
                other => panic!("manager-b's conflicting apply: {other:?}"),
            }
            let now = api.get("shared").await.expect("get");
            assert_eq!(cm_data(&now), btree(&[("a", "1"), ("b", "2")]));

            // With force manager-b takes b.
            let cm = api
                .patch("shared", &b.clone().force(), &conflicting)
                .await
                .expect("forced apply");
            assert_eq!(cm_data(&cm), btree(&[("a", "1"), ("b", "3")]));
            let mf = kube_mf(&cm);
            assert_eq!(
                mf_entry(&mf, "manager-a", "Apply")["fieldsV1"],
                json!({"f:data": {"f:a": {}}})
            );
            assert_eq!(
                mf_entry(&mf, "manager-b", "Apply")["fieldsV1"],
                json!({"f:data": {"f:b": {}}})
            );

            // manager-a drops b from its config: b is manager-b's, so it stays.
            let cm = api
                .patch(
                    "shared",
                    &a,
                    &Patch::Apply(cm_apply("shared", json!({"a": "1"}))),
                )
                .await
                .expect("manager-a re-apply");
            assert_eq!(cm_data(&cm), btree(&[("a", "1"), ("b", "3")]));

            // manager-b applies an empty data: nobody owns b any more, so it goes.
            let cm = api
                .patch("shared", &b, &Patch::Apply(cm_apply("shared", json!({}))))
                .await
                .expect("manager-b empty apply");
            assert_eq!(cm_data(&cm), btree(&[("a", "1")]));
            let got = api.get("shared").await.expect("get");
            assert_eq!(cm_data(&got), btree(&[("a", "1")]));
            let mf = kube_mf(&got);
            assert_eq!(
                mf_entry(&mf, "manager-a", "Apply")["fieldsV1"],
                json!({"f:data": {"f:a": {}}})
            );
            if let Some(e) = mf_find(&mf, "manager-b") {
                assert!(
                    e["fieldsV1"]["f:data"].get("f:b").is_none(),
                    "manager-b still owns b: {e}"
                );
            }
        })
        .await;
    });
}

#[test]
fn kube_apply_creates_and_a_noop_apply_keeps_resource_version() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let client = kube_client(&k).await;
        within("apply create / no-op", async {
            let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
            assert!(api.get_opt("fresh").await.expect("get_opt").is_none());
            let pp = PatchParams::apply("creator");
            let body = Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "fresh", "labels": {"l": "1"}},
                "data": {"k": "v"}
            }));
            let created = api.patch("fresh", &pp, &body).await.expect("apply create");
            assert_eq!(cm_data(&created), btree(&[("k", "v")]));
            assert!(created.metadata.uid.is_some());
            assert!(created.metadata.creation_timestamp.is_some());
            let rv1 = created.metadata.resource_version.clone().expect("rv");
            let mf = kube_mf(&created);
            assert_eq!(
                mf_entry(&mf, "creator", "Apply")["fieldsV1"],
                json!({"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:l": {}}}})
            );
            let time1 = mf_entry(&mf, "creator", "Apply")["time"].clone();

            // The same apply again changes nothing: same resourceVersion and
            // the same managedFields timestamp.
            let again = api.patch("fresh", &pp, &body).await.expect("no-op apply");
            assert_eq!(
                again.metadata.resource_version.as_deref(),
                Some(rv1.as_str())
            );
            let got = api.get("fresh").await.expect("get");
            assert_eq!(got.metadata.resource_version.as_deref(), Some(rv1.as_str()));
            assert_eq!(mf_entry(&kube_mf(&got), "creator", "Apply")["time"], time1);

            // A real change bumps it.
            let changed = api
                .patch(
                    "fresh",
                    &pp,
                    &Patch::Apply(json!({
                        "apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "fresh", "labels": {"l": "1"}},
                        "data": {"k": "w"}
                    })),
                )
                .await
                .expect("changing apply");
            assert_ne!(
                changed.metadata.resource_version.as_deref(),
                Some(rv1.as_str())
            );
            assert_eq!(cm_data(&changed), btree(&[("k", "w")]));
        })
        .await;

        // Over the wire: an apply that creates answers 201, one that updates 200.
        let c = k.admin_client();
        let url = format!(
            "{}/api/v1/namespaces/default/configmaps/wire?fieldManager=wire",
            k.url
        );
        let body = cm_apply("wire", json!({"x": "1"}));
        let r = patch(&c, &url, APPLY, &body).await;
        assert_eq!(r.code, 201, "{}", r.text);
        let r2 = patch(&c, &url, APPLY, &body).await;
        assert_eq!(r2.code, 200, "{}", r2.text);
        assert_eq!(rv(&r2.json()), rv(&r.json()));
        // Apply without a fieldManager is rejected.
        let r3 = patch(
            &c,
            &format!("{}/api/v1/namespaces/default/configmaps/wire", k.url),
            APPLY,
            &body,
        )
        .await;
        assert_eq!(r3.code, 422, "{}", r3.text);
        assert_eq!(r3.json()["reason"], "Invalid", "{}", r3.text);
    });
}

// ---------------------------------------------------------------------------
// 6. Patch corner cases over the wire
// ---------------------------------------------------------------------------

#[test]
fn noop_merge_patch_keeps_resource_version_and_failed_json_patch_test_is_422() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let r = call(
            &c,
            "POST",
            &base,
            "application/json",
            Some(serde_json::to_vec(&cm_apply("p", json!({"a": "1", "b": "2"}))).expect("json")),
        )
        .await;
        assert_eq!(r.code, 201, "{}", r.text);
        let rv0 = rv(&r.json());
        let url = format!("{base}/p");

        // A merge patch that changes nothing.
        let r = patch(&c, &url, MERGE, &json!({"data": {"a": "1"}})).await;
        assert_eq!(r.code, 200, "{}", r.text);
        assert_eq!(rv(&r.json()), rv0, "no-op merge patch: {}", r.text);
        // Nor does a no-op strategic or JSON patch.
        let r = patch(&c, &url, STRATEGIC, &json!({"data": {"b": "2"}})).await;
        assert_eq!(r.code, 200, "{}", r.text);
        assert_eq!(rv(&r.json()), rv0, "no-op strategic patch: {}", r.text);
        let r = patch(
            &c,
            &url,
            JSON_PATCH,
            &json!([{"op": "test", "path": "/data/a", "value": "1"}]),
        )
        .await;
        assert_eq!(r.code, 200, "{}", r.text);
        assert_eq!(rv(&r.json()), rv0, "no-op json patch: {}", r.text);
        let got = call(&c, "GET", &url, "application/json", None).await;
        assert_eq!(rv(&got.json()), rv0);

        // A merge patch that changes something bumps it.
        let r = patch(&c, &url, MERGE, &json!({"data": {"a": "9"}})).await;
        assert_eq!(r.code, 200, "{}", r.text);
        assert_ne!(rv(&r.json()), rv0);
        let rv1 = rv(&r.json());

        // A JSON patch whose `test` fails: 422 Invalid, nothing applied.
        let r = patch(
            &c,
            &url,
            JSON_PATCH,
            &json!([
                {"op": "test", "path": "/data/a", "value": "nope"},
                {"op": "replace", "path": "/data/a", "value": "x"}
            ]),
        )
        .await;
        assert_eq!(r.code, 422, "{}", r.text);
        let v = r.json();
        assert_eq!(v["kind"], "Status", "{v}");
        assert_eq!(v["status"], "Failure", "{v}");
        assert_eq!(v["reason"], "Invalid", "{v}");
        assert_eq!(v["code"], 422, "{v}");
        let got = call(&c, "GET", &url, "application/json", None).await.json();
        assert_eq!(got["data"], json!({"a": "9", "b": "2"}));
        assert_eq!(rv(&got), rv1);
    });
}

/// Upstream answers a failed JSON patch `test` with
/// `NewGenericServerResponse(422, "", GroupResource{}, "", err, 0, false)`,
/// which drops the patch library's text: the message is the generic one and
/// the details are empty.
#[test]

fn failed_json_patch_test_status_body_is_upstreams() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let r = call(
            &c,
            "POST",
            &base,
            "application/json",
            Some(serde_json::to_vec(&cm_apply("t", json!({"a": "1"}))).expect("json")),
        )
        .await;
        assert_eq!(r.code, 201, "{}", r.text);
        let r = patch(
            &c,
            &format!("{base}/t"),
            JSON_PATCH,
            &json!([{"op": "test", "path": "/data/a", "value": "2"}]),
        )
        .await;
        assert_eq!(r.code, 422, "{}", r.text);
        assert_eq!(
            r.json(),
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure",
                "message": "the server rejected our request due to an error in our request",
                "reason": "Invalid", "details": {}, "code": 422
            }),
            "{}",
            r.text
        );
    });
}

// ---------------------------------------------------------------------------
// 7. Custom resources
// ---------------------------------------------------------------------------

const CR_SMP_MESSAGE: &str = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

#[test]
fn custom_resources_take_merge_json_and_apply_but_not_strategic_patches() {
    let k = Kapi::start(&[]);
    install_widget_crd(&k);
    namespace(&k, "cr");
    kubectl_file_ok(
        &k,
        &["create"],
        "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: cr\nspec:\n  size: 1\n  color: red\n  tags: [a, b]\n",
    );

    // Merge patch.
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "widget",
                "w1",
                "-n",
                "cr",
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"size":2,"color":null}}"#,
            ],
        )
        .trim(),
        "widget.apply.example.com/w1 patched"
    );
    let w = get_json(&k, &["widget", "w1", "-n", "cr"], false);
    assert_eq!(w["spec"], json!({"size": 2, "tags": ["a", "b"]}));

    // JSON patch.
    assert_eq!(
        kubectl_ok(
            &k,
            &[
                "patch",
                "widget",
                "w1",
                "-n",
                "cr",
                "--type",
                "json",
                "-p",
                r#"[{"op":"add","path":"/spec/tags/-","value":"c"},{"op":"replace","path":"/spec/size","value":3}]"#,
            ],
        )
        .trim(),
        "widget.apply.example.com/w1 patched"
    );
    let w = get_json(&k, &["widget", "w1", "-n", "cr"], false);
    assert_eq!(w["spec"], json!({"size": 3, "tags": ["a", "b", "c"]}));
    let rv_before = rv(&w);

    // Strategic merge patch: 415, through kubectl and over the wire.
    let err = kubectl_err(
        &k,
        &[
            "patch",
            "widget",
            "w1",
            "-n",
            "cr",
            "--type",
            "strategic",
            "-p",
            r#"{"spec":{"size":4}}"#,
        ],
    );
    assert!(err.contains(CR_SMP_MESSAGE), "stderr:\n{err}");
    runtime().block_on(async {
        let c = k.admin_client();
        let url = format!(
            "{}/apis/apply.example.com/v1/namespaces/cr/widgets/w1",
            k.url
        );
        let r = patch(&c, &url, STRATEGIC, &json!({"spec": {"size": 4}})).await;
        assert_eq!(r.code, 415, "{}", r.text);
        let v = r.json();
        assert_eq!(v["kind"], "Status", "{v}");
        assert_eq!(v["status"], "Failure", "{v}");
        assert_eq!(v["reason"], "UnsupportedMediaType", "{v}");
        assert_eq!(v["code"], 415, "{v}");
        assert_eq!(v["message"], CR_SMP_MESSAGE, "{v}");
    });
    let w = get_json(&k, &["widget", "w1", "-n", "cr"], false);
    assert_eq!(w["spec"]["size"], 3);
    assert_eq!(rv(&w), rv_before);

    // Server-side apply: create, update, conflict with another manager.
    let doc = |size: u32, color: &str| {
        format!(
            "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w2\n  namespace: cr\nspec:\n  size: {size}\n  color: {color}\n"
        )
    };
    assert_eq!(
        kubectl_file_ok(&k, &["apply", "--server-side"], &doc(1, "blue")).trim(),
        "widget.apply.example.com/w2 serverside-applied"
    );
    assert_eq!(
        kubectl_file_ok(&k, &["apply", "--server-side"], &doc(2, "blue")).trim(),
        "widget.apply.example.com/w2 serverside-applied"
    );
    let w = get_json(&k, &["widget", "w2", "-n", "cr"], true);
    assert_eq!(w["spec"], json!({"size": 2, "color": "blue"}));
    let e = mf_entry(&w, "kubectl", "Apply");
    assert_eq!(e["apiVersion"], "apply.example.com/v1", "{e}");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:spec": {"f:color": {}, "f:size": {}}}),
        "{e}"
    );
    let o = kubectl_file(
        &k,
        &["apply", "--server-side", "--field-manager=painter"],
        &doc(2, "green"),
    );
    assert!(!o.ok, "conflicting apply succeeded: {}", o.stdout);
    assert!(
        o.stderr
            .contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.color"#),
        "stderr:\n{}",
        o.stderr
    );
    kubectl_file_ok(
        &k,
        &[
            "apply",
            "--server-side",
            "--field-manager=painter",
            "--force-conflicts",
        ],
        &doc(2, "green"),
    );
    let w = get_json(&k, &["widget", "w2", "-n", "cr"], true);
    assert_eq!(w["spec"], json!({"size": 2, "color": "green"}));
    assert_eq!(
        mf_entry(&w, "kubectl", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:size": {}}})
    );
    assert_eq!(
        mf_entry(&w, "painter", "Apply")["fieldsV1"],
        json!({"f:spec": {"f:color": {}, "f:size": {}}})
    );
}

/// Upstream's `errUnsupportedMediaType` status carries no `details` at all.
#[test]

fn custom_resource_strategic_patch_status_body_is_upstreams() {
    let k = Kapi::start(&[]);
    install_widget_crd(&k);
    kubectl_file_ok(
        &k,
        &["create"],
        "apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: 1\n",
    );
    runtime().block_on(async {
        let c = k.admin_client();
        let url = format!(
            "{}/apis/apply.example.com/v1/namespaces/default/widgets/w1",
            k.url
        );
        let r = patch(&c, &url, STRATEGIC, &json!({"spec": {"size": 4}})).await;
        assert_eq!(
            r.json(),
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": CR_SMP_MESSAGE,
                "reason": "UnsupportedMediaType", "code": 415
            }),
            "{}",
            r.text
        );
    });
}

/// kubectl moving an object from client-side to server-side apply: the
/// fields its last-applied-configuration still describes go over without
/// --force-conflicts (upstream's lastAppliedManager); one another writer
/// changed since is a conflict.
#[test]
fn kubectl_upgrades_client_side_apply_to_server_side_without_conflicts() {
    let k = Kapi::start(&[]);
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("cm.yaml");
    let write = |value: &str| {
        std::fs::write(
            &file,
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  namespace: default\n  labels: {{app: a}}\ndata:\n  a: \"{value}\"\n"),
        )
        .expect("write")
    };
    let path = file.to_string_lossy().into_owned();
    write("1");
    let (ok, _, err) = common::run(k.kubectl().args(["apply", "-f", &path]));
    assert!(ok, "{err}");
    write("2");
    let (ok, out, err) = common::run(k.kubectl().args(["apply", "--server-side", "-f", &path]));
    assert!(ok, "{out}{err}");
    let (_, got, _) =
        common::run(
            k.kubectl()
                .args(["get", "cm", "csa", "-o", "jsonpath={.data.a}"]),
        );
    assert_eq!(got, "2");
    // Another writer changes a field the applier last applied: a conflict.
    let (ok, _, err) = common::run(k.kubectl().args([
        "patch",
        "cm",
        "csa",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"app":"b"}}}"#,
    ]));
    assert!(ok, "{err}");
    let (ok, _, err) = common::run(k.kubectl().args(["apply", "--server-side", "-f", &path]));
    assert!(!ok, "applied over another writer's change");
    assert!(err.contains("conflict"), "{err}");
}
