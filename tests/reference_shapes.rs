//! Objects, tables, watch events and errors in the shape kube-apiserver
//! serves them: each object is made the way upstream's recorded answer says
//! it was made (its managedFields name the manager: kubectl create, kubectl
//! run, kubectl expose, or the server itself), read back, and compared with
//! upstream's answer restated here in our own words.
//!
//! The expectations come from upstream kube-apiserver v1.28.7's recorded
//! answers (../shared/reference, read by people, never by these tests),
//! moved to v1.34 where the API changed since: no `creationTimestamp: null`
//! in templates (metav1.Time is `omitzero` since 1.34), `metadata.generation`
//! on Pods (1.33), Job's `manualSelector` and `podReplacementPolicy`
//! defaults, the Status and Timezone columns of jobs and cronjobs (1.30),
//! field error values rendered as JSON (`["Bogus"]`, `{"a":"c"}`).
//!
//! Each expectation is an outline: one line per leaf of the JSON document,
//! `path = value`, in the order the keys come in the answer. One outline
//! states at once the key order at every level, the exact set of fields
//! (an extra zero value or a missing default is a line too many or too few),
//! the values (defaults included) and the managedFields entries. Values that
//! differ on every run are masked: uids (also inside labels and selectors),
//! resourceVersions, timestamps, continue tokens, and what a test masks on
//! top (generated names, allocated IPs, ages).

mod common;

use common::{runtime, Kapi};
use regex::Regex;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Outlines
// ---------------------------------------------------------------------------

/// A JSON value that keeps object keys in the order they were written
/// (serde_json's own Value sorts them here: no `preserve_order`).
enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = J;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_none<E>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<J, E> {
                Ok(J::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<J, E> {
                Ok(J::Num(n.to_string()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<J, E> {
                Ok(J::Num(n.to_string()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<J, E> {
                Ok(J::Num(n.to_string()))
            }
            fn visit_str<E>(self, s: &str) -> Result<J, E> {
                Ok(J::Str(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<J, E> {
                Ok(J::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(J::Arr(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, J>()? {
                    entries.push((k, v));
                }
                Ok(J::Obj(entries))
            }
        }
        d.deserialize_any(V)
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

/// `path.key`, or `path["key"]` for keys that are not plain words
/// (labels with dots and slashes, fieldsV1's `.` and `k:{...}`).
fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':'));
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (true, false) => format!("[{}]", quote(key)),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{}]", quote(key)),
    }
}

fn uuid() -> Regex {
    Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").expect("regex")
}

fn walk(j: &J, path: &str, key: &str, uuid: &Regex, out: &mut Vec<String>) {
    match j {
        J::Obj(entries) if entries.is_empty() => out.push(format!("{path} = {{}}")),
        J::Obj(entries) => {
            for (k, v) in entries {
                walk(v, &child(path, k), k, uuid, out);
            }
        }
        J::Arr(items) if items.is_empty() => out.push(format!("{path} = []")),
        J::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{path}[{i}]"), "", uuid, out);
            }
        }
        J::Str(s) => {
            let masked = match key {
                "uid" => "<uid>".to_string(),
                "resourceVersion" => "<rv>".to_string(),
                "creationTimestamp" | "time" | "lastTransitionTime" | "deletionTimestamp" => {
                    "<time>".to_string()
                }
                "continue" => "<continue>".to_string(),
                _ => uuid.replace_all(s, "<uid>").into_owned(),
            };
            out.push(format!("{path} = {}", quote(&masked)));
        }
        J::Num(n) => out.push(format!("{path} = {n}")),
        J::Bool(b) => out.push(format!("{path} = {b}")),
        J::Null => out.push(format!("{path} = null")),
    }
}

/// The outline of a JSON document: `path = value` per leaf, in key order.
fn outline(text: &str) -> Vec<String> {
    let j: J = serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    let mut out = Vec::new();
    walk(&j, "", "", &uuid(), &mut out);
    out
}

/// Compares the outline of `body` with `want` (one line per leaf; blank
/// lines and `//` comments are skipped) after the generic masks and the
/// test's own `masks` (regex, replacement), applied line by line. A mask
/// can collapse a subtree into one line (`path = [...]`): consecutive lines
/// a mask made equal count once.
fn check(what: &str, body: &str, want: &str, masks: &[(&str, &str)]) {
    let masks: Vec<(Regex, &str)> = masks
        .iter()
        .map(|(re, to)| (Regex::new(re).expect("mask regex"), *to))
        .collect();
    let mut got: Vec<String> = Vec::new();
    for original in outline(body) {
        let mut line = original.clone();
        for (re, to) in &masks {
            line = re.replace_all(&line, *to).into_owned();
        }
        if line != original && got.last() == Some(&line) {
            continue;
        }
        got.push(line);
    }
    let want: Vec<String> = want
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .map(String::from)
        .collect();
    if got == want {
        return;
    }
    let missing: Vec<&String> = want.iter().filter(|l| !got.contains(l)).collect();
    let extra: Vec<&String> = got.iter().filter(|l| !want.contains(l)).collect();
    let mut msg = format!("{what}: kapi's answer is not upstream's\n");
    if !missing.is_empty() {
        msg += "  upstream has, kapi has not:\n";
        for l in &missing {
            msg += &format!("    {l}\n");
        }
    }
    if !extra.is_empty() {
        msg += "  kapi has, upstream has not:\n";
        for l in &extra {
            msg += &format!("    {l}\n");
        }
    }
    // The lines both have, in kapi's order and in upstream's.
    let got_common: Vec<&String> = got.iter().filter(|l| want.contains(l)).collect();
    let want_common: Vec<&String> = want.iter().filter(|l| got.contains(l)).collect();
    if got_common != want_common {
        let at = got_common
            .iter()
            .zip(&want_common)
            .take_while(|(g, w)| g == w)
            .count();
        msg += &format!(
            "  lines both have come in another order, first at line {} of them:\n    kapi:     {}\n    upstream: {}\n",
            at + 1,
            got_common.get(at).map(|s| s.as_str()).unwrap_or("(end)"),
            want_common.get(at).map(|s| s.as_str()).unwrap_or("(end)")
        );
    }
    msg += "  kapi's whole answer, outlined:\n";
    for l in &got {
        msg += &format!("    {l}\n");
    }
    panic!("{msg}");
}

// ---------------------------------------------------------------------------
// Talking to kapi
// ---------------------------------------------------------------------------

struct Answer {
    version: reqwest::Version,
    code: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("header"))
            .unwrap_or("")
    }
}

fn call_with(
    k: &Kapi,
    client: reqwest::Client,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Answer {
    let url = format!("{}{}", k.url, path);
    runtime().block_on(async {
        let mut r = client.request(method.parse().expect("method"), &url);
        for (name, value) in headers {
            r = r.header(*name, *value);
        }
        if let Some(b) = body {
            r = r.body(b);
        }
        let resp = r
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: no answer: {e:?}"));
        let version = resp.version();
        let code = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.text().await.expect("body");
        Answer {
            version,
            code,
            headers,
            body,
        }
    })
}

/// A request as the admin (system:masters).
fn call(
    k: &Kapi,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Answer {
    call_with(k, k.admin_client(), method, path, headers, body)
}

fn get(k: &Kapi, path: &str) -> String {
    let a = call(k, "GET", path, &[], None);
    assert_eq!(a.code, 200, "GET {path}: {}", a.body);
    a.body
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const TABLE: (&str, &str) = ("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");

fn kubectl(k: &Kapi, args: &[&str]) -> String {
    let (ok, out, err) = common::run(k.kubectl().args(args));
    assert!(ok, "kubectl {args:?}: {err}");
    out
}

/// kapi with the namespace `ref` the reference objects live in.
fn start_ref() -> Kapi {
    let k = Kapi::start(&[]);
    kubectl(&k, &["create", "namespace", "ref"]);
    k
}

fn wait_until_found(k: &Kapi, path: &str) {
    for _ in 0..200 {
        if call(k, "GET", path, &[], None).code == 200 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{path} not there after 10 s");
}

fn create_deployment(k: &Kapi) {
    kubectl(
        k,
        &[
            "-n",
            "ref",
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
        ],
    );
}

fn create_configmap(k: &Kapi) {
    kubectl(
        k,
        &[
            "-n",
            "ref",
            "create",
            "configmap",
            "cm1",
            "--from-literal=a=b",
        ],
    );
}

fn run_pod(k: &Kapi) {
    k.wait_for_default_service_account("ref");
    kubectl(k, &["-n", "ref", "run", "pod1", "--image=nginx"]);
}

fn create_job(k: &Kapi) {
    kubectl(
        k,
        &["-n", "ref", "create", "job", "job1", "--image=busybox"],
    );
}

fn create_cronjob(k: &Kapi) {
    kubectl(
        k,
        &[
            "-n",
            "ref",
            "create",
            "cronjob",
            "cj1",
            "--image=busybox",
            "--schedule=*/5 * * * *",
        ],
    );
}

fn create_ingress(k: &Kapi) {
    kubectl(
        k,
        &[
            "-n",
            "ref",
            "create",
            "ingress",
            "ing1",
            "--rule=a.example/=web:80",
        ],
    );
}

fn expose_deployment(k: &Kapi) {
    create_deployment(k);
    kubectl(
        k,
        &["-n", "ref", "expose", "deployment", "web", "--port=80"],
    );
}

fn secure_port(k: &Kapi) -> String {
    k.url.rsplit(':').next().expect("port").to_string()
}

// ---------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------

const CONFIGMAP: &str = r#"
    kind = "ConfigMap"
    apiVersion = "v1"
    metadata.name = "cm1"
    metadata.namespace = "ref"
    metadata.uid = "<uid>"
    metadata.resourceVersion = "<rv>"
    metadata.creationTimestamp = "<time>"
    metadata.managedFields[0].manager = "kubectl-create"
    metadata.managedFields[0].operation = "Update"
    metadata.managedFields[0].apiVersion = "v1"
    metadata.managedFields[0].time = "<time>"
    metadata.managedFields[0].fieldsType = "FieldsV1"
    metadata.managedFields[0].fieldsV1.f:data["."] = {}
    metadata.managedFields[0].fieldsV1.f:data.f:a = {}
    data.a = "b"
"#;

/// `kubectl create configmap cm1 --from-literal=a=b`.
#[test]
fn configmap_made_by_kubectl_create() {
    let k = start_ref();
    create_configmap(&k);
    let body = get(&k, "/api/v1/namespaces/ref/configmaps/cm1");
    check("configmap", &body, CONFIGMAP, &[]);
}

/// `kubectl create secret generic s1 --from-literal=a=b`: the type is sent
/// by kubectl, so kubectl-create owns it.
#[test]
fn secret_made_by_kubectl_create() {
    let k = start_ref();
    kubectl(
        &k,
        &[
            "-n",
            "ref",
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=a=b",
        ],
    );
    let body = get(&k, "/api/v1/namespaces/ref/secrets/s1");
    check(
        "secret",
        &body,
        r#"
        kind = "Secret"
        apiVersion = "v1"
        metadata.name = "s1"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        metadata.managedFields[0].manager = "kubectl-create"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:data["."] = {}
        metadata.managedFields[0].fieldsV1.f:data.f:a = {}
        metadata.managedFields[0].fieldsV1.f:type = {}
        data.a = "Yg=="
        type = "Opaque"
        "#,
        &[],
    );
}

/// `kubectl expose deployment web --port=80`: a Service has no
/// metadata.generation; the allocated IP and the IP family fields are not
/// kubectl-expose's (allocation is the registry's, after managedFields).
#[test]
fn service_made_by_kubectl_expose() {
    let k = start_ref();
    expose_deployment(&k);
    let body = get(&k, "/api/v1/namespaces/ref/services/web");
    check(
        "service",
        &body,
        r#"
        kind = "Service"
        apiVersion = "v1"
        metadata.name = "web"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        metadata.labels.app = "web"
        metadata.managedFields[0].manager = "kubectl-expose"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels["."] = {}
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels.f:app = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:internalTrafficPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":80,\"protocol\":\"TCP\"}"]["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":80,\"protocol\":\"TCP\"}"].f:port = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":80,\"protocol\":\"TCP\"}"].f:protocol = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":80,\"protocol\":\"TCP\"}"].f:targetPort = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:selector = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:sessionAffinity = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:type = {}
        spec.ports[0].protocol = "TCP"
        spec.ports[0].port = 80
        spec.ports[0].targetPort = 80
        spec.selector.app = "web"
        spec.clusterIP = "<cluster ip>"
        spec.clusterIPs[0] = "<cluster ip>"
        spec.type = "ClusterIP"
        spec.sessionAffinity = "None"
        spec.ipFamilies[0] = "IPv4"
        spec.ipFamilyPolicy = "SingleStack"
        spec.internalTrafficPolicy = "Cluster"
        status.loadBalancer = {}
        "#,
        &[(
            r#"^(spec\.clusterIPs?(\[0\])?) = "10\.0\.0\.\d+"$"#,
            r#"$1 = "<cluster ip>""#,
        )],
    );
}

/// The `kubernetes` Service the server keeps in `default`: written by
/// kube-apiserver itself (manager `kube-apiserver`), with the first IP of
/// the service range and the server's own secure port as target port.
#[test]
fn the_kubernetes_service() {
    let k = Kapi::start(&[]);
    let body = get(&k, "/api/v1/namespaces/default/services/kubernetes");
    let port = secure_port(&k);
    check(
        "kubernetes service",
        &body,
        r#"
        kind = "Service"
        apiVersion = "v1"
        metadata.name = "kubernetes"
        metadata.namespace = "default"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        metadata.labels.component = "apiserver"
        metadata.labels.provider = "kubernetes"
        metadata.managedFields[0].manager = "kube-apiserver"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels["."] = {}
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels.f:component = {}
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels.f:provider = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:clusterIP = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:internalTrafficPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ipFamilyPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":443,\"protocol\":\"TCP\"}"]["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":443,\"protocol\":\"TCP\"}"].f:name = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":443,\"protocol\":\"TCP\"}"].f:port = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":443,\"protocol\":\"TCP\"}"].f:protocol = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:ports["k:{\"port\":443,\"protocol\":\"TCP\"}"].f:targetPort = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:sessionAffinity = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:type = {}
        spec.ports[0].name = "https"
        spec.ports[0].protocol = "TCP"
        spec.ports[0].port = 443
        spec.ports[0].targetPort = <secure port>
        spec.clusterIP = "10.0.0.1"
        spec.clusterIPs[0] = "10.0.0.1"
        spec.type = "ClusterIP"
        spec.sessionAffinity = "None"
        spec.ipFamilies[0] = "IPv4"
        spec.ipFamilyPolicy = "SingleStack"
        spec.internalTrafficPolicy = "Cluster"
        status.loadBalancer = {}
        "#,
        &[(
            &format!(r"^(spec\.ports\[0\]\.targetPort) = {port}$"),
            "$1 = <secure port>",
        )],
    );
}

/// `kubectl run pod1 --image=nginx`: defaults, then the admission plugins'
/// additions (ServiceAccount: the token volume and its mount, the account;
/// DefaultTolerationSeconds; Priority). managedFields are computed before
/// admission, so kubectl-run owns what it sent and the defaults only.
/// v1.34: metadata.generation is 1 on create (since 1.33).
#[test]
fn pod_made_by_kubectl_run() {
    let k = start_ref();
    run_pod(&k);
    let body = get(&k, "/api/v1/namespaces/ref/pods/pod1");
    check(
        "pod",
        &body,
        r#"
        kind = "Pod"
        apiVersion = "v1"
        metadata.name = "pod1"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        // v1.34
        metadata.generation = 1
        metadata.creationTimestamp = "<time>"
        metadata.labels.run = "pod1"
        metadata.managedFields[0].manager = "kubectl-run"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels["."] = {}
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels.f:run = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"]["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:image = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:imagePullPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:name = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:resources = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:terminationMessagePath = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:containers["k:{\"name\":\"pod1\"}"].f:terminationMessagePolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:dnsPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:enableServiceLinks = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:restartPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:schedulerName = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:securityContext = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:terminationGracePeriodSeconds = {}
        spec.volumes[0].name = "kube-api-access-<5>"
        spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds = 3607
        spec.volumes[0].projected.sources[0].serviceAccountToken.path = "token"
        spec.volumes[0].projected.sources[1].configMap.name = "kube-root-ca.crt"
        spec.volumes[0].projected.sources[1].configMap.items[0].key = "ca.crt"
        spec.volumes[0].projected.sources[1].configMap.items[0].path = "ca.crt"
        spec.volumes[0].projected.sources[2].downwardAPI.items[0].path = "namespace"
        spec.volumes[0].projected.sources[2].downwardAPI.items[0].fieldRef.apiVersion = "v1"
        spec.volumes[0].projected.sources[2].downwardAPI.items[0].fieldRef.fieldPath = "metadata.namespace"
        spec.volumes[0].projected.defaultMode = 420
        spec.containers[0].name = "pod1"
        spec.containers[0].image = "nginx"
        spec.containers[0].resources = {}
        spec.containers[0].volumeMounts[0].name = "kube-api-access-<5>"
        spec.containers[0].volumeMounts[0].readOnly = true
        spec.containers[0].volumeMounts[0].mountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
        spec.containers[0].terminationMessagePath = "/dev/termination-log"
        spec.containers[0].terminationMessagePolicy = "File"
        spec.containers[0].imagePullPolicy = "Always"
        spec.restartPolicy = "Always"
        spec.terminationGracePeriodSeconds = 30
        spec.dnsPolicy = "ClusterFirst"
        spec.serviceAccountName = "default"
        spec.serviceAccount = "default"
        spec.securityContext = {}
        spec.schedulerName = "default-scheduler"
        spec.tolerations[0].key = "node.kubernetes.io/not-ready"
        spec.tolerations[0].operator = "Exists"
        spec.tolerations[0].effect = "NoExecute"
        spec.tolerations[0].tolerationSeconds = 300
        spec.tolerations[1].key = "node.kubernetes.io/unreachable"
        spec.tolerations[1].operator = "Exists"
        spec.tolerations[1].effect = "NoExecute"
        spec.tolerations[1].tolerationSeconds = 300
        spec.priority = 0
        spec.enableServiceLinks = true
        spec.preemptionPolicy = "PreemptLowerPriority"
        status.phase = "Pending"
        status.qosClass = "BestEffort"
        "#,
        &[("kube-api-access-[a-z0-9]{5}", "kube-api-access-<5>")],
    );
}

const DEPLOYMENT: &str = r#"
    kind = "Deployment"
    apiVersion = "apps/v1"
    metadata.name = "web"
    metadata.namespace = "ref"
    metadata.uid = "<uid>"
    metadata.resourceVersion = "<rv>"
    metadata.generation = 1
    metadata.creationTimestamp = "<time>"
    metadata.labels.app = "web"
    metadata.managedFields[0].manager = "kubectl-create"
    metadata.managedFields[0].operation = "Update"
    metadata.managedFields[0].apiVersion = "apps/v1"
    metadata.managedFields[0].time = "<time>"
    metadata.managedFields[0].fieldsType = "FieldsV1"
    metadata.managedFields[0].fieldsV1.f:metadata.f:labels["."] = {}
    metadata.managedFields[0].fieldsV1.f:metadata.f:labels.f:app = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:progressDeadlineSeconds = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:replicas = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:revisionHistoryLimit = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:selector = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:strategy.f:rollingUpdate["."] = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:strategy.f:rollingUpdate.f:maxSurge = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:strategy.f:rollingUpdate.f:maxUnavailable = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:strategy.f:type = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata.f:labels["."] = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata.f:labels.f:app = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"]["."] = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:image = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:imagePullPolicy = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:name = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:resources = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:terminationMessagePath = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"nginx\"}"].f:terminationMessagePolicy = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:dnsPolicy = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:restartPolicy = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:schedulerName = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:securityContext = {}
    metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:terminationGracePeriodSeconds = {}
    spec.replicas = 1
    spec.selector.matchLabels.app = "web"
    // v1.34: no creationTimestamp: null in the template's metadata
    spec.template.metadata.labels.app = "web"
    spec.template.spec.containers[0].name = "nginx"
    spec.template.spec.containers[0].image = "nginx:1.27"
    spec.template.spec.containers[0].resources = {}
    spec.template.spec.containers[0].terminationMessagePath = "/dev/termination-log"
    spec.template.spec.containers[0].terminationMessagePolicy = "File"
    spec.template.spec.containers[0].imagePullPolicy = "IfNotPresent"
    spec.template.spec.restartPolicy = "Always"
    spec.template.spec.terminationGracePeriodSeconds = 30
    spec.template.spec.dnsPolicy = "ClusterFirst"
    spec.template.spec.securityContext = {}
    spec.template.spec.schedulerName = "default-scheduler"
    spec.strategy.type = "RollingUpdate"
    spec.strategy.rollingUpdate.maxUnavailable = "25%"
    spec.strategy.rollingUpdate.maxSurge = "25%"
    spec.revisionHistoryLimit = 10
    spec.progressDeadlineSeconds = 600
    status = {}
"#;

/// `kubectl create deployment web --image=nginx:1.27`.
#[test]
fn deployment_made_by_kubectl_create() {
    let k = start_ref();
    create_deployment(&k);
    let body = get(&k, "/apis/apps/v1/namespaces/ref/deployments/web");
    check("deployment", &body, DEPLOYMENT, &[]);
}

/// `kubectl create job job1 --image=busybox`. The selector and the
/// template's labels are generated by the strategy (after managedFields:
/// not kubectl-create's); the Job's own labels are the template's, copied
/// by defaulting (SetDefaults_Job), which runs again on every decode from
/// storage. v1.34 also defaults manualSelector and podReplacementPolicy
/// (owned by kubectl-create, as every default set on decode).
#[test]
fn job_made_by_kubectl_create() {
    let k = start_ref();
    create_job(&k);
    let body = get(&k, "/apis/batch/v1/namespaces/ref/jobs/job1");
    check(
        "job",
        &body,
        r#"
        kind = "Job"
        apiVersion = "batch/v1"
        metadata.name = "job1"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.generation = 1
        metadata.creationTimestamp = "<time>"
        metadata.labels["batch.kubernetes.io/controller-uid"] = "<uid>"
        metadata.labels["batch.kubernetes.io/job-name"] = "job1"
        metadata.labels.controller-uid = "<uid>"
        metadata.labels.job-name = "job1"
        metadata.managedFields[0].manager = "kubectl-create"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "batch/v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:spec.f:backoffLimit = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:completionMode = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:completions = {}
        // v1.34 defaults
        metadata.managedFields[0].fieldsV1.f:spec.f:manualSelector = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:parallelism = {}
        // v1.34 defaults
        metadata.managedFields[0].fieldsV1.f:spec.f:podReplacementPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:suspend = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"]["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:image = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:imagePullPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:name = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:resources = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:terminationMessagePath = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"job1\"}"].f:terminationMessagePolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:dnsPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:restartPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:schedulerName = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:securityContext = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:template.f:spec.f:terminationGracePeriodSeconds = {}
        spec.parallelism = 1
        spec.completions = 1
        spec.backoffLimit = 6
        spec.selector.matchLabels["batch.kubernetes.io/controller-uid"] = "<uid>"
        // v1.34
        spec.manualSelector = false
        // v1.34: no creationTimestamp: null in the template's metadata
        spec.template.metadata.labels["batch.kubernetes.io/controller-uid"] = "<uid>"
        spec.template.metadata.labels["batch.kubernetes.io/job-name"] = "job1"
        spec.template.metadata.labels.controller-uid = "<uid>"
        spec.template.metadata.labels.job-name = "job1"
        spec.template.spec.containers[0].name = "job1"
        spec.template.spec.containers[0].image = "busybox"
        spec.template.spec.containers[0].resources = {}
        spec.template.spec.containers[0].terminationMessagePath = "/dev/termination-log"
        spec.template.spec.containers[0].terminationMessagePolicy = "File"
        spec.template.spec.containers[0].imagePullPolicy = "Always"
        spec.template.spec.restartPolicy = "Never"
        spec.template.spec.terminationGracePeriodSeconds = 30
        spec.template.spec.dnsPolicy = "ClusterFirst"
        spec.template.spec.securityContext = {}
        spec.template.spec.schedulerName = "default-scheduler"
        spec.completionMode = "NonIndexed"
        spec.suspend = false
        // v1.34
        spec.podReplacementPolicy = "TerminatingOrFailed"
        status = {}
        "#,
        &[],
    );
}

/// `kubectl create cronjob cj1 --image=busybox --schedule='*/5 * * * *'`.
#[test]
fn cronjob_made_by_kubectl_create() {
    let k = start_ref();
    create_cronjob(&k);
    let body = get(&k, "/apis/batch/v1/namespaces/ref/cronjobs/cj1");
    check(
        "cronjob",
        &body,
        r#"
        kind = "CronJob"
        apiVersion = "batch/v1"
        metadata.name = "cj1"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.generation = 1
        metadata.creationTimestamp = "<time>"
        metadata.managedFields[0].manager = "kubectl-create"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "batch/v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:spec.f:concurrencyPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:failedJobsHistoryLimit = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:metadata.f:name = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"]["."] = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:image = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:imagePullPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:name = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:resources = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:terminationMessagePath = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers["k:{\"name\":\"cj1\"}"].f:terminationMessagePolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:dnsPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:restartPolicy = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:schedulerName = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:securityContext = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:terminationGracePeriodSeconds = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:schedule = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:successfulJobsHistoryLimit = {}
        metadata.managedFields[0].fieldsV1.f:spec.f:suspend = {}
        spec.schedule = "*/5 * * * *"
        spec.concurrencyPolicy = "Allow"
        spec.suspend = false
        // v1.34: no creationTimestamp: null next to the name...
        spec.jobTemplate.metadata.name = "cj1"
        // ...and an empty pod template metadata
        spec.jobTemplate.spec.template.metadata = {}
        spec.jobTemplate.spec.template.spec.containers[0].name = "cj1"
        spec.jobTemplate.spec.template.spec.containers[0].image = "busybox"
        spec.jobTemplate.spec.template.spec.containers[0].resources = {}
        spec.jobTemplate.spec.template.spec.containers[0].terminationMessagePath = "/dev/termination-log"
        spec.jobTemplate.spec.template.spec.containers[0].terminationMessagePolicy = "File"
        spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy = "Always"
        spec.jobTemplate.spec.template.spec.restartPolicy = "OnFailure"
        spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds = 30
        spec.jobTemplate.spec.template.spec.dnsPolicy = "ClusterFirst"
        spec.jobTemplate.spec.template.spec.securityContext = {}
        spec.jobTemplate.spec.template.spec.schedulerName = "default-scheduler"
        spec.successfulJobsHistoryLimit = 3
        spec.failedJobsHistoryLimit = 1
        status = {}
        "#,
        &[],
    );
}

/// `kubectl create ingress ing1 --rule=a.example/=web:80`: rules is atomic,
/// owned whole.
#[test]
fn ingress_made_by_kubectl_create() {
    let k = start_ref();
    create_ingress(&k);
    let body = get(
        &k,
        "/apis/networking.k8s.io/v1/namespaces/ref/ingresses/ing1",
    );
    check(
        "ingress",
        &body,
        r#"
        kind = "Ingress"
        apiVersion = "networking.k8s.io/v1"
        metadata.name = "ing1"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.generation = 1
        metadata.creationTimestamp = "<time>"
        metadata.managedFields[0].manager = "kubectl-create"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "networking.k8s.io/v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:spec.f:rules = {}
        spec.rules[0].host = "a.example"
        spec.rules[0].http.paths[0].path = "/"
        spec.rules[0].http.paths[0].pathType = "Exact"
        spec.rules[0].http.paths[0].backend.service.name = "web"
        spec.rules[0].http.paths[0].backend.service.port.number = 80
        status.loadBalancer = {}
        "#,
        &[],
    );
}

/// The `default` namespace the server makes at start: no generation (a
/// Namespace has none), written by `kube-apiserver`, which owns the
/// defaulted name label but not the finalizer the strategy adds.
#[test]
fn the_default_namespace() {
    let k = Kapi::start(&[]);
    let body = get(&k, "/api/v1/namespaces/default");
    check(
        "namespace default",
        &body,
        r#"
        kind = "Namespace"
        apiVersion = "v1"
        metadata.name = "default"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        metadata.labels["kubernetes.io/metadata.name"] = "default"
        metadata.managedFields[0].manager = "kube-apiserver"
        metadata.managedFields[0].operation = "Update"
        metadata.managedFields[0].apiVersion = "v1"
        metadata.managedFields[0].time = "<time>"
        metadata.managedFields[0].fieldsType = "FieldsV1"
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels["."] = {}
        metadata.managedFields[0].fieldsV1.f:metadata.f:labels["f:kubernetes.io/metadata.name"] = {}
        spec.finalizers[0] = "kubernetes"
        status.phase = "Active"
        "#,
        &[],
    );
}

/// The `scale` subresource of the Deployment: autoscaling/v1 Scale, the
/// Deployment's metadata without labels or managedFields.
#[test]
fn scale_of_a_deployment() {
    let k = start_ref();
    create_deployment(&k);
    let body = get(&k, "/apis/apps/v1/namespaces/ref/deployments/web/scale");
    check(
        "scale",
        &body,
        r#"
        kind = "Scale"
        apiVersion = "autoscaling/v1"
        metadata.name = "web"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        spec.replicas = 1
        status.replicas = 0
        status.selector = "app=web"
        "#,
        &[],
    );
}

/// The outline of one local APIService as an item of the list.
fn local_apiservice(i: usize, group: &str, version: &str, group_min: u32, prio: u32) -> String {
    let name = format!("{version}.{group}");
    let p = format!("items[{i}]");
    let mf = format!("{p}.metadata.managedFields[0]");
    let mut s = format!(
        r#"
        {p}.metadata.name = "{name}"
        {p}.metadata.uid = "<uid>"
        {p}.metadata.resourceVersion = "<rv>"
        {p}.metadata.creationTimestamp = "<time>"
        {p}.metadata.labels["kube-aggregator.kubernetes.io/automanaged"] = "onstart"
        {mf}.manager = "kube-apiserver"
        {mf}.operation = "Update"
        {mf}.apiVersion = "apiregistration.k8s.io/v1"
        {mf}.time = "<time>"
        {mf}.fieldsType = "FieldsV1"
        {mf}.fieldsV1.f:metadata.f:labels["."] = {{}}
        {mf}.fieldsV1.f:metadata.f:labels["f:kube-aggregator.kubernetes.io/automanaged"] = {{}}
        "#
    );
    // The core group's name is empty: omitted, so neither set nor owned.
    if !group.is_empty() {
        s += &format!("{mf}.fieldsV1.f:spec.f:group = {{}}\n");
    }
    s += &format!(
        r#"
        {mf}.fieldsV1.f:spec.f:groupPriorityMinimum = {{}}
        {mf}.fieldsV1.f:spec.f:version = {{}}
        {mf}.fieldsV1.f:spec.f:versionPriority = {{}}
        "#
    );
    if !group.is_empty() {
        s += &format!("{p}.spec.group = {}\n", quote(group));
    }
    s += &format!(
        r#"
        {p}.spec.version = "{version}"
        {p}.spec.groupPriorityMinimum = {group_min}
        {p}.spec.versionPriority = {prio}
        {p}.status.conditions[0].type = "Available"
        {p}.status.conditions[0].status = "True"
        {p}.status.conditions[0].lastTransitionTime = "<time>"
        {p}.status.conditions[0].reason = "Local"
        {p}.status.conditions[0].message = "Local APIServices are always available"
        "#
    );
    s
}

/// The APIServices the server registers for its own group versions, in
/// name order, with kube-apiserver's priorities. As list items they carry
/// no kind or apiVersion; the Available condition is set through the
/// status subresource without a managedFields entry of its own.
/// v1.34 serves flowcontrol v1 (not v1beta2/v1beta3) and resource.k8s.io v1.
#[test]
fn local_apiservices() {
    let k = Kapi::start(&[]);
    let body = get(&k, "/apis/apiregistration.k8s.io/v1/apiservices");
    let local: [(&str, &str, u32, u32); 21] = [
        ("", "v1", 18000, 1),
        ("admissionregistration.k8s.io", "v1", 16700, 15),
        ("apiextensions.k8s.io", "v1", 16700, 15),
        ("apps", "v1", 17800, 15),
        ("authentication.k8s.io", "v1", 17700, 15),
        ("authorization.k8s.io", "v1", 17600, 15),
        ("autoscaling", "v1", 17500, 15),
        ("batch", "v1", 17400, 15),
        ("certificates.k8s.io", "v1", 17300, 15),
        ("coordination.k8s.io", "v1", 16500, 15),
        ("discovery.k8s.io", "v1", 16200, 15),
        ("events.k8s.io", "v1", 17750, 15),
        ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
        ("networking.k8s.io", "v1", 17200, 15),
        ("node.k8s.io", "v1", 16300, 15),
        ("policy", "v1", 17100, 15),
        ("rbac.authorization.k8s.io", "v1", 17000, 15),
        ("resource.k8s.io", "v1", 16200, 21),
        ("scheduling.k8s.io", "v1", 16600, 15),
        ("storage.k8s.io", "v1", 16800, 15),
        ("autoscaling", "v2", 17500, 30),
    ];
    let mut want = String::from(
        r#"
        kind = "APIServiceList"
        apiVersion = "apiregistration.k8s.io/v1"
        metadata.resourceVersion = "<rv>"
        "#,
    );
    for (i, (group, version, group_min, prio)) in local.iter().enumerate() {
        want += &local_apiservice(i, group, version, *group_min, *prio);
    }
    check("apiservices", &body, &want, &[]);
}

/// A list read in pages of one (`limit=1`): the first page carries the
/// continue token and the count of what remains, the last one neither.
/// Items of a built-in kind have no kind or apiVersion of their own.
#[test]
fn a_paginated_list() {
    let k = start_ref();
    create_configmap(&k);
    // The root CA publisher's ConfigMap is the second one in the namespace.
    wait_until_found(&k, "/api/v1/namespaces/ref/configmaps/kube-root-ca.crt");
    let first = get(&k, "/api/v1/namespaces/ref/configmaps?limit=1");
    let mut want = String::from(
        r#"
        kind = "ConfigMapList"
        apiVersion = "v1"
        metadata.resourceVersion = "<rv>"
        metadata.continue = "<continue>"
        metadata.remainingItemCount = 1
        "#,
    );
    for line in CONFIGMAP.lines().map(str::trim) {
        if !line.is_empty() && !line.starts_with("kind ") && !line.starts_with("apiVersion ") {
            want += &format!("items[0].{line}\n");
        }
    }
    check("first page", &first, &want, &[]);
    let token: serde_json::Value = serde_json::from_str(&first).expect("json");
    let token = token["metadata"]["continue"].as_str().expect("continue");
    let last = get(
        &k,
        &format!("/api/v1/namespaces/ref/configmaps?limit=1&continue={token}"),
    );
    check(
        "last page",
        &last,
        r#"
        kind = "ConfigMapList"
        apiVersion = "v1"
        metadata.resourceVersion = "<rv>"
        items[0].metadata = <metadata>
        items[0].data["ca.crt"] = <pem>
        "#,
        &[
            (r"^(items\[0\]\.metadata)\..*$", "$1 = <metadata>"),
            (
                r#"^(items\[0\]\.data\["ca\.crt"\]) = "-----BEGIN CERTIFICATE-----.*"$"#,
                "$1 = <pem>",
            ),
        ],
    );
}

/// The same list as PartialObjectMetadataList (what `kubectl get` and the
/// garbage collector ask for): each item with its own kind and apiVersion,
/// metadata only.
#[test]
fn a_partial_object_metadata_list() {
    let k = start_ref();
    create_configmap(&k);
    let a = call(
        &k,
        "GET",
        "/api/v1/namespaces/ref/configmaps?fieldSelector=metadata.name%3Dcm1",
        &[(
            "Accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )],
        None,
    );
    assert_eq!(a.code, 200, "{}", a.body);
    check(
        "partial object metadata list",
        &a.body,
        r#"
        kind = "PartialObjectMetadataList"
        apiVersion = "meta.k8s.io/v1"
        metadata.resourceVersion = "<rv>"
        items[0].kind = "PartialObjectMetadata"
        items[0].apiVersion = "meta.k8s.io/v1"
        items[0].metadata.name = "cm1"
        items[0].metadata.namespace = "ref"
        items[0].metadata.uid = "<uid>"
        items[0].metadata.resourceVersion = "<rv>"
        items[0].metadata.creationTimestamp = "<time>"
        items[0].metadata.managedFields[0].manager = "kubectl-create"
        items[0].metadata.managedFields[0].operation = "Update"
        items[0].metadata.managedFields[0].apiVersion = "v1"
        items[0].metadata.managedFields[0].time = "<time>"
        items[0].metadata.managedFields[0].fieldsType = "FieldsV1"
        items[0].metadata.managedFields[0].fieldsV1.f:data["."] = {}
        items[0].metadata.managedFields[0].fieldsV1.f:data.f:a = {}
        "#,
        &[],
    );
}

/// Watch events of a ConfigMap's life, one JSON object a line: `type`, then
/// `object` with its kind and apiVersion. An object made with no field of
/// its own (only a name) has no managedFields at all; `kubectl label` adds
/// a second entry; the deletion carries the deletion's resourceVersion.
#[test]
fn watch_events() {
    let k = start_ref();
    wait_until_found(&k, "/api/v1/namespaces/ref/configmaps/kube-root-ca.crt");
    let list: serde_json::Value =
        serde_json::from_str(&get(&k, "/api/v1/namespaces/ref/configmaps")).expect("json");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    create_configmap(&k);
    let x3 = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x3"},"bogus":1}"#;
    let a = call(
        &k,
        "POST",
        "/api/v1/namespaces/ref/configmaps?fieldValidation=Warn",
        &[JSON],
        Some(x3.to_string()),
    );
    assert_eq!(a.code, 201, "{}", a.body);
    kubectl(&k, &["-n", "ref", "label", "configmap", "cm1", "x=y"]);
    let a = call(
        &k,
        "DELETE",
        "/api/v1/namespaces/ref/configmaps/x3",
        &[],
        None,
    );
    assert_eq!(a.code, 200, "{}", a.body);
    let a = call(
        &k,
        "GET",
        &format!("/api/v1/namespaces/ref/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=2"),
        &[],
        None,
    );
    assert_eq!(a.code, 200, "{}", a.body);
    let lines: Vec<&str> = a.body.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 4, "{}", a.body);
    let cm1 = |event: &str, rest: &str| {
        format!(
            r#"
            type = "{event}"
            object.kind = "ConfigMap"
            object.apiVersion = "v1"
            object.metadata.name = "cm1"
            object.metadata.namespace = "ref"
            object.metadata.uid = "<uid>"
            object.metadata.resourceVersion = "<rv>"
            object.metadata.creationTimestamp = "<time>"
            {rest}
            object.metadata.managedFields[0].manager = "kubectl-create"
            object.metadata.managedFields[0].operation = "Update"
            object.metadata.managedFields[0].apiVersion = "v1"
            object.metadata.managedFields[0].time = "<time>"
            object.metadata.managedFields[0].fieldsType = "FieldsV1"
            object.metadata.managedFields[0].fieldsV1.f:data["."] = {{}}
            object.metadata.managedFields[0].fieldsV1.f:data.f:a = {{}}
            "#
        )
    };
    check(
        "ADDED cm1",
        lines[0],
        &(cm1("ADDED", "") + r#"object.data.a = "b""#),
        &[],
    );
    let x3 = |event: &str| {
        format!(
            r#"
            type = "{event}"
            object.kind = "ConfigMap"
            object.apiVersion = "v1"
            object.metadata.name = "x3"
            object.metadata.namespace = "ref"
            object.metadata.uid = "<uid>"
            object.metadata.resourceVersion = "<rv>"
            object.metadata.creationTimestamp = "<time>"
            "#
        )
    };
    check("ADDED x3", lines[1], &x3("ADDED"), &[]);
    let labelled = cm1("MODIFIED", r#"object.metadata.labels.x = "y""#)
        + r#"
        object.metadata.managedFields[1].manager = "kubectl-label"
        object.metadata.managedFields[1].operation = "Update"
        object.metadata.managedFields[1].apiVersion = "v1"
        object.metadata.managedFields[1].time = "<time>"
        object.metadata.managedFields[1].fieldsType = "FieldsV1"
        object.metadata.managedFields[1].fieldsV1.f:metadata.f:labels["."] = {}
        object.metadata.managedFields[1].fieldsV1.f:metadata.f:labels.f:x = {}
        object.data.a = "b"
        "#;
    check("MODIFIED cm1", lines[2], &labelled, &[]);
    check("DELETED x3", lines[3], &x3("DELETED"), &[]);
}

// ---------------------------------------------------------------------------
// Tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`)
// ---------------------------------------------------------------------------

/// The outline of a Table's head and column definitions: (name, type,
/// format, priority) per column; descriptions are masked by `table_masks`.
fn table_head(columns: &[(&str, &str, &str, u32)]) -> String {
    let mut s = String::from(
        r#"
        kind = "Table"
        apiVersion = "meta.k8s.io/v1"
        metadata.resourceVersion = "<rv>"
        "#,
    );
    for (i, (name, kind, format, priority)) in columns.iter().enumerate() {
        let c = format!("columnDefinitions[{i}]");
        s += &format!(
            r#"
            {c}.name = "{name}"
            {c}.type = "{kind}"
            {c}.format = "{format}"
            {c}.description = <description>
            {c}.priority = {priority}
            "#
        );
    }
    s
}

/// Masks for tables: column descriptions (any text), the age cell at
/// `age`, and the rows' objects' managedFields (checked with the objects).
fn table_masks(age: usize) -> Vec<(String, String)> {
    vec![
        (
            r#"^(columnDefinitions\[\d+\]\.description) = ".+"$"#.to_string(),
            "$1 = <description>".to_string(),
        ),
        (
            format!(r#"^(rows\[\d+\]\.cells\[{age}\]) = "[0-9smhdy]+"$"#),
            "$1 = <age>".to_string(),
        ),
        (
            r"^(rows\[\d+\]\.object\.metadata\.managedFields)\[.*$".to_string(),
            "$1 = [...]".to_string(),
        ),
    ]
}

fn check_table(what: &str, k: &Kapi, path: &str, want: &str, age: usize, more: &[(&str, &str)]) {
    let a = call(k, "GET", path, &[TABLE], None);
    assert_eq!(a.code, 200, "{}", a.body);
    assert_eq!(a.header("content-type"), "application/json", "{what}");
    let masks = table_masks(age);
    let mut all: Vec<(&str, &str)> = masks
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    all.extend_from_slice(more);
    check(what, &a.body, want, &all);
}

const NAME: (&str, &str, &str, u32) = ("Name", "string", "name", 0);
const AGE: (&str, &str, &str, u32) = ("Age", "string", "", 0);

#[test]
fn table_of_configmaps() {
    let k = start_ref();
    create_configmap(&k);
    let want = table_head(&[NAME, ("Data", "string", "", 0), AGE])
        + r#"
        rows[0].cells[0] = "cm1"
        rows[0].cells[1] = 1
        rows[0].cells[2] = <age>
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "cm1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "configmaps",
        &k,
        "/api/v1/namespaces/ref/configmaps?fieldSelector=metadata.name%3Dcm1",
        &want,
        2,
        &[],
    );
}

#[test]
fn table_of_secrets() {
    let k = start_ref();
    kubectl(
        &k,
        &[
            "-n",
            "ref",
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=a=b",
        ],
    );
    let want = table_head(&[
        NAME,
        ("Type", "string", "", 0),
        ("Data", "string", "", 0),
        AGE,
    ]) + r#"
        rows[0].cells[0] = "s1"
        rows[0].cells[1] = "Opaque"
        rows[0].cells[2] = 1
        rows[0].cells[3] = <age>
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "s1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "secrets",
        &k,
        "/api/v1/namespaces/ref/secrets",
        &want,
        3,
        &[],
    );
}

#[test]
fn table_of_services() {
    let k = start_ref();
    expose_deployment(&k);
    let want = table_head(&[
        NAME,
        ("Type", "string", "", 0),
        ("Cluster-IP", "string", "", 0),
        ("External-IP", "string", "", 0),
        ("Port(s)", "string", "", 0),
        AGE,
        ("Selector", "string", "", 1),
    ]) + r#"
        rows[0].cells[0] = "web"
        rows[0].cells[1] = "ClusterIP"
        rows[0].cells[2] = "<cluster ip>"
        rows[0].cells[3] = "<none>"
        rows[0].cells[4] = "80/TCP"
        rows[0].cells[5] = <age>
        rows[0].cells[6] = "app=web"
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "web"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.labels.app = "web"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "services",
        &k,
        "/api/v1/namespaces/ref/services",
        &want,
        5,
        &[(
            r#"^(rows\[0\]\.cells\[2\]) = "10\.0\.0\.\d+"$"#,
            r#"$1 = "<cluster ip>""#,
        )],
    );
}

/// Pod columns; Restarts is a string cell ("0"), as its column type says.
#[test]
fn table_of_pods() {
    let k = start_ref();
    run_pod(&k);
    let want = table_head(&[
        NAME,
        ("Ready", "string", "", 0),
        ("Status", "string", "", 0),
        ("Restarts", "string", "", 0),
        AGE,
        ("IP", "string", "", 1),
        ("Node", "string", "", 1),
        ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1),
    ]) + r#"
        rows[0].cells[0] = "pod1"
        rows[0].cells[1] = "0/1"
        rows[0].cells[2] = "Pending"
        rows[0].cells[3] = "0"
        rows[0].cells[4] = <age>
        rows[0].cells[5] = "<none>"
        rows[0].cells[6] = "<none>"
        rows[0].cells[7] = "<none>"
        rows[0].cells[8] = "<none>"
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "pod1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        // v1.34
        rows[0].object.metadata.generation = 1
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.labels.run = "pod1"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table("pods", &k, "/api/v1/namespaces/ref/pods", &want, 4, &[]);
}

/// Deployment columns: Up-to-date and Available are integer cells under
/// string columns, as upstream's printer writes them.
#[test]
fn table_of_deployments() {
    let k = start_ref();
    create_deployment(&k);
    let want = table_head(&[
        NAME,
        ("Ready", "string", "", 0),
        ("Up-to-date", "string", "", 0),
        ("Available", "string", "", 0),
        AGE,
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]) + r#"
        rows[0].cells[0] = "web"
        rows[0].cells[1] = "0/1"
        rows[0].cells[2] = 0
        rows[0].cells[3] = 0
        rows[0].cells[4] = <age>
        rows[0].cells[5] = "nginx"
        rows[0].cells[6] = "nginx:1.27"
        rows[0].cells[7] = "app=web"
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "web"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.generation = 1
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.labels.app = "web"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "deployments",
        &k,
        "/apis/apps/v1/namespaces/ref/deployments",
        &want,
        4,
        &[],
    );
}

/// v1.34 (since 1.30): a Status column after the name; "Running" for a
/// Job no controller has touched.
#[test]
fn table_of_jobs() {
    let k = start_ref();
    create_job(&k);
    let want = table_head(&[
        NAME,
        ("Status", "string", "", 0),
        ("Completions", "string", "", 0),
        ("Duration", "string", "", 0),
        AGE,
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]) + r#"
        rows[0].cells[0] = "job1"
        rows[0].cells[1] = "Running"
        rows[0].cells[2] = "0/1"
        rows[0].cells[3] = ""
        rows[0].cells[4] = <age>
        rows[0].cells[5] = "job1"
        rows[0].cells[6] = "busybox"
        rows[0].cells[7] = "batch.kubernetes.io/controller-uid=<uid>"
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "job1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.generation = 1
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.labels["batch.kubernetes.io/controller-uid"] = "<uid>"
        rows[0].object.metadata.labels["batch.kubernetes.io/job-name"] = "job1"
        rows[0].object.metadata.labels.controller-uid = "<uid>"
        rows[0].object.metadata.labels.job-name = "job1"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "jobs",
        &k,
        "/apis/batch/v1/namespaces/ref/jobs",
        &want,
        4,
        &[],
    );
}

/// v1.34 (since 1.30): a Timezone column after the schedule.
#[test]
fn table_of_cronjobs() {
    let k = start_ref();
    create_cronjob(&k);
    let want = table_head(&[
        NAME,
        ("Schedule", "string", "", 0),
        ("Timezone", "string", "", 0),
        ("Suspend", "boolean", "", 0),
        ("Active", "integer", "", 0),
        ("Last Schedule", "string", "", 0),
        AGE,
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]) + r#"
        rows[0].cells[0] = "cj1"
        rows[0].cells[1] = "*/5 * * * *"
        rows[0].cells[2] = "<none>"
        rows[0].cells[3] = "False"
        rows[0].cells[4] = 0
        rows[0].cells[5] = "<none>"
        rows[0].cells[6] = <age>
        rows[0].cells[7] = "cj1"
        rows[0].cells[8] = "busybox"
        rows[0].cells[9] = "<none>"
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "cj1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.generation = 1
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "cronjobs",
        &k,
        "/apis/batch/v1/namespaces/ref/cronjobs",
        &want,
        6,
        &[],
    );
}

#[test]
fn table_of_ingresses() {
    let k = start_ref();
    create_ingress(&k);
    let want = table_head(&[
        NAME,
        ("Class", "string", "", 0),
        ("Hosts", "string", "", 0),
        ("Address", "string", "", 0),
        ("Ports", "string", "", 0),
        AGE,
    ]) + r#"
        rows[0].cells[0] = "ing1"
        rows[0].cells[1] = "<none>"
        rows[0].cells[2] = "a.example"
        rows[0].cells[3] = ""
        rows[0].cells[4] = "80"
        rows[0].cells[5] = <age>
        rows[0].object.kind = "PartialObjectMetadata"
        rows[0].object.apiVersion = "meta.k8s.io/v1"
        rows[0].object.metadata.name = "ing1"
        rows[0].object.metadata.namespace = "ref"
        rows[0].object.metadata.uid = "<uid>"
        rows[0].object.metadata.resourceVersion = "<rv>"
        rows[0].object.metadata.generation = 1
        rows[0].object.metadata.creationTimestamp = "<time>"
        rows[0].object.metadata.managedFields = [...]
        "#;
    check_table(
        "ingresses",
        &k,
        "/apis/networking.k8s.io/v1/namespaces/ref/ingresses",
        &want,
        5,
        &[],
    );
}

/// The four namespaces the server makes, and `ref`, in name order.
#[test]
fn table_of_namespaces() {
    let k = start_ref();
    let mut want = table_head(&[NAME, ("Status", "string", "", 0), AGE]);
    for (i, name) in [
        "default",
        "kube-node-lease",
        "kube-public",
        "kube-system",
        "ref",
    ]
    .iter()
    .enumerate()
    {
        let r = format!("rows[{i}]");
        want += &format!(
            r#"
            {r}.cells[0] = "{name}"
            {r}.cells[1] = "Active"
            {r}.cells[2] = <age>
            {r}.object.kind = "PartialObjectMetadata"
            {r}.object.apiVersion = "meta.k8s.io/v1"
            {r}.object.metadata.name = "{name}"
            {r}.object.metadata.uid = "<uid>"
            {r}.object.metadata.resourceVersion = "<rv>"
            {r}.object.metadata.creationTimestamp = "<time>"
            {r}.object.metadata.labels["kubernetes.io/metadata.name"] = "{name}"
            {r}.object.metadata.managedFields = [...]
            "#
        );
    }
    check_table("namespaces", &k, "/api/v1/namespaces", &want, 2, &[]);
}

/// Events have no Name column first, and an empty list still has its
/// columns and an empty `rows`.
#[test]
fn table_of_events() {
    let k = start_ref();
    let want = table_head(&[
        ("Last Seen", "string", "", 0),
        ("Type", "string", "", 0),
        ("Reason", "string", "", 0),
        ("Object", "string", "", 0),
        ("Subobject", "string", "", 1),
        ("Source", "string", "", 1),
        ("Message", "string", "", 0),
        ("First Seen", "string", "", 1),
        ("Count", "string", "", 1),
        ("Name", "string", "name", 1),
    ]) + "rows = []";
    check_table("events", &k, "/api/v1/namespaces/ref/events", &want, 0, &[]);
}

// ---------------------------------------------------------------------------
// Errors: Status bodies (kind, apiVersion, metadata, status, message,
// reason, details, code, in that order), their codes and content types.
// ---------------------------------------------------------------------------

const CM: &str = "/api/v1/namespaces/ref/configmaps";

fn check_status(what: &str, a: &Answer, code: u16, want: &str) {
    assert_eq!(a.code, code, "{what}: {}", a.body);
    assert_eq!(a.header("content-type"), "application/json", "{what}");
    check(what, &a.body, want, &[]);
}

fn configmap(name: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#)
}

/// v1.34 renders the bad value as JSON (`["Bogus"]`), not Go syntax.
#[test]
fn error_dry_run_with_an_unknown_value() {
    let k = start_ref();
    let a = call(
        &k,
        "POST",
        &format!("{CM}?dryRun=Bogus"),
        &[JSON],
        Some(configmap("d")),
    );
    check_status(
        "dryRun=Bogus",
        &a,
        422,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Bogus\"]: supported values: \"All\""
        reason = "Invalid"
        details.group = "meta.k8s.io"
        details.kind = "CreateOptions"
        details.causes[0].reason = "FieldValueNotSupported"
        details.causes[0].message = "Unsupported value: [\"Bogus\"]: supported values: \"All\""
        details.causes[0].field = "dryRun"
        code = 422
        "#,
    );
}

#[test]
fn error_exec_into_an_unscheduled_pod() {
    let k = start_ref();
    run_pod(&k);
    let a = call(
        &k,
        "POST",
        "/api/v1/namespaces/ref/pods/pod1/exec?command=ls&stdout=true",
        &[],
        None,
    );
    check_status(
        "exec",
        &a,
        400,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "pod pod1 does not have a host assigned"
        reason = "BadRequest"
        code = 400
        "#,
    );
}

#[test]
fn error_body_of_another_kind() {
    let k = start_ref();
    let body = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"km"}}"#;
    let a = call(&k, "POST", CM, &[JSON], Some(body.to_string()));
    check_status(
        "Secret posted as ConfigMap",
        &a,
        400,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
        reason = "BadRequest"
        code = 400
        "#,
    );
}

/// The message quotes Go's encoding/json error for the body.
#[test]
fn error_malformed_body() {
    let k = start_ref();
    let a = call(&k, "POST", CM, &[JSON], Some("{bad".to_string()));
    check_status(
        "{bad",
        &a,
        400,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({bad)"
        reason = "BadRequest"
        code = 400
        "#,
    );
}

#[test]
fn error_namespace_of_body_and_url_differ() {
    let k = start_ref();
    let body =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nm","namespace":"other"}}"#;
    let a = call(&k, "POST", CM, &[JSON], Some(body.to_string()));
    check_status(
        "namespace mismatch",
        &a,
        400,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "the namespace of the provided object does not match the namespace sent on the request"
        reason = "BadRequest"
        code = 400
        "#,
    );
}

/// Anonymous requests are on: an unauthenticated GET is system:anonymous,
/// forbidden (403, `details: {}`), and says nosniff.
#[test]
fn error_anonymous_request() {
    let k = Kapi::start(&[]);
    let a = call_with(&k, k.anonymous_client(), "GET", "/api", &[], None);
    check_status(
        "anonymous GET /api",
        &a,
        403,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "forbidden: User \"system:anonymous\" cannot get path \"/api\""
        reason = "Forbidden"
        details = {}
        code = 403
        "#,
    );
}

#[test]
fn error_forbidden_by_rbac() {
    let k = start_ref();
    let a = call(
        &k,
        "GET",
        "/api/v1/namespaces/ref/pods",
        &[("Impersonate-User", "jane")],
        None,
    );
    check_status(
        "jane lists pods",
        &a,
        403,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"ref\""
        reason = "Forbidden"
        details.kind = "pods"
        code = 403
        "#,
    );
}

/// Forbidden answers (Go's responsewriters.Forbidden) say nosniff, both
/// for an anonymous request and for a user RBAC refuses.
#[test]
fn forbidden_answers_say_nosniff() {
    let k = start_ref();
    let anonymous = call_with(&k, k.anonymous_client(), "GET", "/api", &[], None);
    assert_eq!(anonymous.code, 403, "{}", anonymous.body);
    let jane = call(
        &k,
        "GET",
        "/api/v1/namespaces/ref/pods",
        &[("Impersonate-User", "jane")],
        None,
    );
    assert_eq!(jane.code, 403, "{}", jane.body);
    for a in [&anonymous, &jane] {
        assert_eq!(a.header("x-content-type-options"), "nosniff", "{}", a.body);
    }
}

#[test]
fn error_namespace_not_found() {
    let k = Kapi::start(&[]);
    let a = call(&k, "GET", "/api/v1/namespaces/nosuch", &[], None);
    check_status(
        "namespaces/nosuch",
        &a,
        404,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "namespaces \"nosuch\" not found"
        reason = "NotFound"
        details.name = "nosuch"
        details.kind = "namespaces"
        code = 404
        "#,
    );
}

#[test]
fn error_object_not_found() {
    let k = start_ref();
    let a = call(&k, "GET", &format!("{CM}/nope"), &[], None);
    check_status(
        "configmaps/nope",
        &a,
        404,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "configmaps \"nope\" not found"
        reason = "NotFound"
        details.name = "nope"
        details.kind = "configmaps"
        code = 404
        "#,
    );
}

/// A path no API serves: Go's http.NotFound, plain text.
#[test]
fn error_unknown_path() {
    let k = Kapi::start(&[]);
    let a = call(&k, "GET", "/nonexistent", &[], None);
    assert_eq!(a.code, 404);
    assert_eq!(a.header("content-type"), "text/plain; charset=utf-8");
    assert_eq!(a.header("x-content-type-options"), "nosniff");
    assert_eq!(a.body, "404 page not found\n");
}

#[test]
fn error_method_not_allowed() {
    let k = start_ref();
    let a = call(&k, "PUT", CM, &[JSON], Some(configmap("x")));
    check_status(
        "PUT on a collection",
        &a,
        405,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "the server does not allow this method on the requested resource"
        reason = "MethodNotAllowed"
        details = {}
        code = 405
        "#,
    );
}

#[test]
fn error_not_acceptable() {
    let k = start_ref();
    create_configmap(&k);
    let a = call(
        &k,
        "GET",
        &format!("{CM}/cm1"),
        &[("Accept", "application/bogus")],
        None,
    );
    check_status(
        "Accept: application/bogus",
        &a,
        406,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        reason = "NotAcceptable"
        details = {}
        code = 406
        "#,
    );
}

#[test]
fn error_already_exists() {
    let k = start_ref();
    create_configmap(&k);
    let a = call(&k, "POST", CM, &[JSON], Some(configmap("cm1")));
    check_status(
        "second cm1",
        &a,
        409,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "configmaps \"cm1\" already exists"
        reason = "AlreadyExists"
        details.name = "cm1"
        details.kind = "configmaps"
        code = 409
        "#,
    );
}

#[test]
fn error_stale_resource_version() {
    let k = start_ref();
    create_configmap(&k);
    let body =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","resourceVersion":"1"}}"#;
    let a = call(
        &k,
        "PUT",
        &format!("{CM}/cm1"),
        &[JSON],
        Some(body.to_string()),
    );
    check_status(
        "PUT with resourceVersion 1",
        &a,
        409,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Operation cannot be fulfilled on configmaps \"cm1\": the object has been modified; please apply your changes to the latest version and try again"
        reason = "Conflict"
        details.name = "cm1"
        details.kind = "configmaps"
        code = 409
        "#,
    );
}

/// Server-side apply by another manager of a value kubectl-create owns.
#[test]
fn error_apply_conflict() {
    let k = start_ref();
    create_configmap(&k);
    let body =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"z"}}"#;
    let a = call(
        &k,
        "PATCH",
        &format!("{CM}/cm1?fieldManager=other"),
        &[("Content-Type", "application/apply-patch+yaml")],
        Some(body.to_string()),
    );
    check_status(
        "apply by other",
        &a,
        409,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .data.a"
        reason = "Conflict"
        details.causes[0].reason = "FieldManagerConflict"
        details.causes[0].message = "conflict with \"kubectl-create\" using v1"
        details.causes[0].field = ".data.a"
        code = 409
        "#,
    );
}

/// A body over 3 MiB, sent over HTTP/2 as clients do: the answer is a 413
/// Status, not a reset stream.
#[test]
fn error_request_too_large() {
    let k = start_ref();
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(3_200_000)
    );
    let a = call(&k, "POST", CM, &[JSON], Some(big));
    assert_eq!(a.version, reqwest::Version::HTTP_2, "not over HTTP/2");
    check_status(
        "3.2 MB body",
        &a,
        413,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Request entity too large: limit is 3145728"
        reason = "RequestEntityTooLarge"
        code = 413
        "#,
    );
}

/// The same request from curl over HTTP/2, as upstream's answer was
/// recorded: curl too gets the 413 Status.
#[test]
fn error_request_too_large_for_curl() {
    if !common::run(std::process::Command::new("curl").arg("--version")).0 {
        eprintln!("no curl here: nothing to check");
        return;
    }
    let k = start_ref();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("big.json");
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(3_200_000)
    );
    std::fs::write(&file, big).expect("write");
    let pki = k.data_dir.join("pki");
    let (ok, out, err) = common::run(
        std::process::Command::new("curl")
            .args(["-sS", "--http2", "-X", "POST"])
            .arg("--cacert")
            .arg(pki.join("ca.crt"))
            .arg("--cert")
            .arg(pki.join("admin.crt"))
            .arg("--key")
            .arg(pki.join("admin.key"))
            .args(["-H", "Content-Type: application/json"])
            .arg("--data-binary")
            .arg(format!("@{}", file.display()))
            .args(["-w", "\n%{http_code} %{http_version}"])
            .arg(format!("{}{CM}", k.url)),
    );
    assert!(ok, "curl got no answer: {err}");
    let (body, status) = out.rsplit_once('\n').expect("status line");
    assert_eq!(status, "413 2", "{out}");
    check(
        "3.2 MB body from curl",
        body,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Request entity too large: limit is 3145728"
        reason = "RequestEntityTooLarge"
        code = 413
        "#,
        &[],
    );
}

#[test]
fn error_unsupported_media_type() {
    let k = start_ref();
    let a = call(
        &k,
        "POST",
        CM,
        &[("Content-Type", "text/plain")],
        Some("x".to_string()),
    );
    check_status(
        "Content-Type: text/plain",
        &a,
        415,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        reason = "UnsupportedMediaType"
        code = 415
        "#,
    );
}

/// v1.34 renders the bad value as JSON (`{"a":"c"}`), not Go syntax.
#[test]
fn error_invalid_deployment() {
    let k = start_ref();
    let body = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#;
    let a = call(
        &k,
        "POST",
        "/apis/apps/v1/namespaces/ref/deployments",
        &[JSON],
        Some(body.to_string()),
    );
    check_status(
        "selector not matching the labels",
        &a,
        422,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: {\"a\":\"c\"}: `selector` does not match template `labels`"
        reason = "Invalid"
        details.name = "d"
        details.group = "apps"
        details.kind = "Deployment"
        details.causes[0].reason = "FieldValueInvalid"
        details.causes[0].message = "Invalid value: {\"a\":\"c\"}: `selector` does not match template `labels`"
        details.causes[0].field = "spec.template.metadata.labels"
        code = 422
        "#,
    );
}

/// Causes in validation order: metadata, then container by container the
/// checks common to all containers (image, ports) before the name's
/// uniqueness in the list.
#[test]
fn error_invalid_pod() {
    let k = start_ref();
    let body = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c"},{"name":"c","image":"i","ports":[{"containerPort":70000}]}]}}"#;
    let a = call(
        &k,
        "POST",
        "/api/v1/namespaces/ref/pods",
        &[JSON],
        Some(body.to_string()),
    );
    let subdomain = r#"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#;
    let name = format!(r#"Invalid value: \"Bad_Name\": {subdomain}"#);
    let want = format!(
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {{}}
        status = "Failure"
        message = "Pod \"Bad_Name\" is invalid: [metadata.name: {name}, spec.containers[0].image: Required value, spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[1].name: Duplicate value: \"c\"]"
        reason = "Invalid"
        details.name = "Bad_Name"
        details.kind = "Pod"
        details.causes[0].reason = "FieldValueInvalid"
        details.causes[0].message = "{name}"
        details.causes[0].field = "metadata.name"
        details.causes[1].reason = "FieldValueRequired"
        details.causes[1].message = "Required value"
        details.causes[1].field = "spec.containers[0].image"
        details.causes[2].reason = "FieldValueInvalid"
        details.causes[2].message = "Invalid value: 70000: must be between 1 and 65535, inclusive"
        details.causes[2].field = "spec.containers[1].ports[0].containerPort"
        details.causes[3].reason = "FieldValueDuplicate"
        details.causes[3].message = "Duplicate value: \"c\""
        details.causes[3].field = "spec.containers[1].name"
        code = 422
        "#
    );
    check_status("pod with four errors", &a, 422, &want);
}

#[test]
fn error_unknown_field_when_strict() {
    let k = start_ref();
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x2"},"bogus":1}"#;
    let a = call(
        &k,
        "POST",
        &format!("{CM}?fieldValidation=Strict"),
        &[JSON],
        Some(body.to_string()),
    );
    check_status(
        "bogus field, Strict",
        &a,
        400,
        r#"
        kind = "Status"
        apiVersion = "v1"
        metadata = {}
        status = "Failure"
        message = "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\""
        reason = "BadRequest"
        code = 400
        "#,
    );
}

/// With `fieldValidation=Warn` the object is made and the unknown field is
/// a warning; an object with no field of its own has no managedFields.
#[test]
fn warning_unknown_field() {
    let k = start_ref();
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x3"},"bogus":1}"#;
    let a = call(
        &k,
        "POST",
        &format!("{CM}?fieldValidation=Warn"),
        &[JSON],
        Some(body.to_string()),
    );
    assert_eq!(a.code, 201, "{}", a.body);
    assert_eq!(a.header("warning"), r#"299 - "unknown field \"bogus\"""#);
    check(
        "bogus field, Warn",
        &a.body,
        r#"
        kind = "ConfigMap"
        apiVersion = "v1"
        metadata.name = "x3"
        metadata.namespace = "ref"
        metadata.uid = "<uid>"
        metadata.resourceVersion = "<rv>"
        metadata.creationTimestamp = "<time>"
        "#,
        &[],
    );
}
