//! `kapi trace-request` against a real server: the stages a request goes
//! through, what defaulting and admission changed, and that a dry run
//! stores nothing while `--commit` does.

mod common;

use std::process::Command;

use common::Kapi;
use serde_json::Value;

fn trace(k: &Kapi, manifest: &str, extra: &[&str]) -> (bool, Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("m.yaml");
    std::fs::write(&file, manifest).expect("write manifest");
    let (ok, out, err) = common::run(
        Command::new(common::kapi_bin())
            .args(["trace-request", "-o", "json", "--kubeconfig"])
            .arg(&k.kubeconfig)
            .arg("-f")
            .arg(&file)
            .args(extra),
    );
    let v = serde_json::from_str(&out).unwrap_or(Value::Null);
    (ok, v, err)
}

/// `kapi trace-request ARGS -o json` against `k`: the report.
fn trace_json(k: &Kapi, args: &[&str]) -> Value {
    let (ok, out, err) = common::run(
        Command::new(common::kapi_bin())
            .arg("trace-request")
            .args(args)
            .args(["-o", "json", "--kubeconfig"])
            .arg(&k.kubeconfig),
    );
    assert!(ok, "trace-request {args:?}: {err}");
    serde_json::from_str(&out).expect("json")
}

fn stage<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["stages"]
        .as_array()?
        .iter()
        .find(|s| s["name"].as_str() == Some(name))
}

fn names(v: &Value) -> Vec<String> {
    v["stages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str().map(String::from))
        .collect()
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: traced
  namespace: default
spec:
  containers:
  - name: c
    image: nginx
";

#[test]
fn create_is_traced_stage_by_stage_as_a_dry_run() {
    let k = Kapi::start(&[]);
    k.wait_for_default_service_account("default");
    let (ok, v, err) = trace(&k, POD, &[]);
    assert!(ok, "trace-request failed: {err}\n{v:#}");
    assert_eq!(v["code"], 201, "{v:#}");
    assert!(v["url"].as_str().unwrap_or("").contains("dryRun=All"));
    let got = names(&v);
    // The stages appear in the order the server runs them.
    let order = [
        "request",
        "authentication",
        "authorization",
        "decode",
        "defaulting",
        "validation",
        "storage",
        "response",
    ];
    let mut at = 0;
    for want in order {
        let pos = got[at..]
            .iter()
            .position(|n| n == want)
            .unwrap_or_else(|| panic!("no {want} stage after {:?} in {got:?}", &got[..at]));
        at += pos + 1;
    }
    assert_eq!(
        stage(&v, "authentication").unwrap()["detail"]["user"],
        "kubernetes-admin"
    );
    assert_eq!(
        stage(&v, "authorization").unwrap()["detail"]["decision"],
        "allow"
    );
    // Defaulting shows what it added: the pod's restartPolicy, the image pull policy for :latest.
    let defaulting = stage(&v, "defaulting").unwrap()["detail"]["patch"].to_string();
    assert!(defaulting.contains("/spec/restartPolicy"), "{defaulting}");
    assert!(defaulting.contains("imagePullPolicy"), "{defaulting}");
    // Mutating admission plugins each get a stage with what they changed:
    // the ServiceAccount plugin mounts the API access token.
    let sa =
        stage(&v, "admission/mutating/ServiceAccount").expect("ServiceAccount admission stage");
    assert!(
        sa["detail"]["patch"]
            .to_string()
            .contains("kube-api-access-"),
        "{sa:#}"
    );
    let routing = stage(&v, "routing").expect("routing stage");
    assert_eq!(routing["detail"]["server"], "kube-apiserver");
    assert_eq!(
        routing["detail"]["route"],
        "/api/v1/namespaces/{namespace}/pods"
    );
    assert_eq!(
        stage(&v, "read body").unwrap()["detail"]["contentType"],
        "application/json"
    );
    let storage = stage(&v, "storage").unwrap();
    assert_eq!(storage["outcome"], "skipped");
    assert_eq!(storage["detail"]["key"], "/registry/pods/default/traced");
    // A dry run is encoded as upstream's dry-run storage encodes it; only
    // the write is skipped.
    let got = names(&v);
    let at = |n: &str| got.iter().position(|g| g == n);
    assert!(
        at("encode") < at("storage") && at("encode").is_some(),
        "{got:?}"
    );
    assert!(stage(&v, "encode").unwrap()["detail"]["bytes"].as_u64() > Some(0));
    stages_add_up(&v);
    // A dry run stores nothing.
    let resp = common::runtime().block_on(async {
        k.admin_client()
            .get(format!("{}/api/v1/namespaces/default/pods/traced", k.url))
            .send()
            .await
            .expect("get")
            .status()
    });
    assert_eq!(resp, 404);
}

#[test]
fn commit_stores_and_reports_the_revision_and_errors_name_their_stage() {
    let k = Kapi::start(&[]);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: traced\n  namespace: default\ndata:\n  a: b\n";
    let (ok, v, err) = trace(&k, cm, &["--commit"]);
    assert!(ok, "{err}\n{v:#}");
    let storage = stage(&v, "storage").expect("storage stage");
    assert_eq!(storage["outcome"], "ok");
    let rv = storage["detail"]["resourceVersion"].as_str().unwrap_or("");
    assert_eq!(
        rv,
        v["response"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or("-")
    );
    // The same create again fails in storage with AlreadyExists.
    let (ok, v, _) = trace(&k, cm, &["--commit"]);
    assert!(!ok);
    assert_eq!(v["code"], 409);
    assert_eq!(stage(&v, "storage").unwrap()["outcome"], "error");
    // Apply of a field another manager owns is a conflict, and names it.
    let changed = cm.replace("a: b", "a: c");
    let (ok, v, _) = trace(&k, &changed, &["--verb", "apply"]);
    assert!(!ok);
    assert_eq!(v["code"], 409, "{v:#}");
    assert!(
        v["response"]["message"]
            .as_str()
            .unwrap_or("")
            .contains(".data.a"),
        "{v:#}"
    );
    // Forced, apply walks the update path with the stored resourceVersion.
    let (ok, v, err) = trace(&k, &changed, &["--verb", "apply", "--force-conflicts"]);
    assert!(ok, "{err}\n{v:#}");
    assert!(stage(&v, "decode").unwrap()["detail"]["currentResourceVersion"].is_string());
    assert_eq!(v["response"]["data"]["a"], "c");
    // An invalid object stops at validation, and the text output says why.
    let bad =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_Valid\n  namespace: default\n";
    let (ok, v, _) = trace(&k, bad, &[]);
    assert!(!ok);
    assert_eq!(v["code"], 422);
    assert_eq!(stage(&v, "validation").unwrap()["outcome"], "error");
    assert!(stage(&v, "storage").is_none(), "{v:#}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, bad).unwrap();
    let (ok, out, _) = common::run(
        Command::new(common::kapi_bin())
            .args(["trace-request", "--kubeconfig"])
            .arg(&k.kubeconfig)
            .arg("-f")
            .arg(&file),
    );
    assert!(!ok);
    assert!(out.contains("validation"), "{out}");
    assert!(out.contains("Invalid:"), "{out}");
}

#[test]
fn unknown_kinds_and_missing_servers_are_one_line_errors() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = trace(
        &k,
        "apiVersion: v1\nkind: Nope\nmetadata:\n  name: x\n",
        &[],
    );
    assert!(!ok);
    assert!(err.contains("does not serve kind \"Nope\""), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (ok, _, err) = trace(&k, "kind: ConfigMap\n", &[]);
    assert!(!ok);
    assert!(err.contains("no apiVersion"), "{err}");
}

#[test]
fn a_request_given_by_hand_with_a_patch_and_the_text_timeline() {
    let k = Kapi::start(&[]);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n  namespace: default\ndata:\n  a: b\n";
    let (ok, _, err) = trace(&k, cm, &["--commit"]);
    assert!(ok, "{err}");
    let (ok, out, err) = common::run(
        Command::new(common::kapi_bin())
            .args([
                "trace-request",
                "PATCH",
                "/api/v1/namespaces/default/configmaps/p",
            ])
            .args([
                "-p",
                r#"{"data":{"a":"patched"}}"#,
                "--type",
                "merge",
                "--kubeconfig",
            ])
            .arg(&k.kubeconfig),
    );
    assert!(ok, "{out}\n{err}");
    let first = out.lines().next().unwrap_or("");
    assert!(first.starts_with("PATCH https://"), "{out}");
    assert!(
        first.contains("dryRun=All") && first.ends_with("-> 200 (dry run: --commit stores it)"),
        "{out}"
    );
    for stage in [
        "authentication",
        "authorization",
        "routing",
        "read body",
        "decode",
        "validation",
        "storage",
        "response",
        "total",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(stage)),
            "no {stage} line in\n{out}"
        );
    }
    assert!(out.contains("merge-patch+json"), "{out}");
    // The dry run left the object alone; a GET is traced without dryRun.
    let v = trace_json(&k, &["GET", "/api/v1/namespaces/default/configmaps/p"]);
    assert_eq!(v["response"]["data"]["a"], "b");
    assert!(!v["url"].as_str().unwrap_or("").contains("dryRun"));
    assert_eq!(stage(&v, "routing").unwrap()["detail"]["verb"], "get");
    // A read shows where it was read from and what was encoded, and only
    // the request's own read (no reads made by the server on the way).
    let read = stage(&v, "watch cache").expect("watch cache stage");
    assert_eq!(read["detail"]["key"], "/registry/configmaps/default/p");
    assert_eq!(read["detail"]["found"], true);
    assert!(stage(&v, "encode").is_some(), "{v:#}");
    assert_eq!(
        names(&v),
        [
            "request",
            "authentication",
            "authorization",
            "routing",
            "watch cache",
            "encode",
            "response"
        ]
    );
    stages_add_up(&v);
    // A list too.
    let v = trace_json(&k, &["GET", "/api/v1/namespaces/default/configmaps"]);
    let read = stage(&v, "watch cache").expect("watch cache stage");
    assert_eq!(read["detail"]["operation"], "list");
    assert!(read["detail"]["items"].as_u64() >= Some(1), "{read}");
    // A PATCH shows what it changed, and is encoded though a dry run.
    let v = trace_json(
        &k,
        &[
            "PATCH",
            "/api/v1/namespaces/default/configmaps/p",
            "-p",
            r#"{"data":{"added":"x"}}"#,
            "--type",
            "merge",
        ],
    );
    let diff = stage(&v, "diff").expect("diff stage")["detail"]["patch"].clone();
    assert!(
        diff.as_array()
            .into_iter()
            .flatten()
            .any(|op| op["op"] == "add" && op["path"] == "/data/added" && op["value"] == "x"),
        "{diff:#}"
    );
    assert!(!diff.to_string().contains("resourceVersion"), "{diff:#}");
    assert!(stage(&v, "encode").is_some(), "{v:#}");
    stages_add_up(&v);
}

/// Each stage's time runs from the end of the one before, so the rows add
/// up to the total (each rounded to a microsecond).
fn stages_add_up(v: &Value) {
    let stages = v["stages"].as_array().expect("stages");
    let sum: u64 = stages.iter().filter_map(|s| s["micros"].as_u64()).sum();
    let total = v["totalMicros"]
        .as_u64()
        .or(v["total_micros"].as_u64())
        .expect("total");
    assert!(
        total >= sum && total - sum <= stages.len() as u64,
        "stages sum to {sum} µs, the total is {total} µs: {v:#}"
    );
}

#[test]
fn requests_without_the_header_carry_no_trace() {
    let k = Kapi::start(&[]);
    let resp = common::runtime().block_on(async {
        k.admin_client()
            .get(format!("{}/api/v1/namespaces/default", k.url))
            .send()
            .await
            .expect("get")
    });
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("kapi-trace").is_none());
}

/// `kapi trace-request ... | head -1`: a reader that stops early ends the
/// output quietly, as for other command-line tools (SIGPIPE), never with a
/// panic.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let k = Kapi::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\ndata:\n  a: b\n",
    )
    .expect("write");
    for output in ["text", "json"] {
        let mut child = Command::new(common::kapi_bin())
            .args(["trace-request", "-o", output, "--kubeconfig"])
            .arg(&k.kubeconfig)
            .arg("-f")
            .arg(&file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // The reader goes away before anything is written.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        use std::os::unix::process::ExitStatusExt;
        let quiet = out.status.code() == Some(0) || out.status.signal() == Some(libc::SIGPIPE);
        assert!(quiet, "-o {output}: {:?} {err}", out.status);
    }
}

/// A file of several objects, or of bad YAML, is one sentence naming the
/// file and the place, not a parser's diagram or its API advice.
#[test]
fn manifest_errors_are_one_line() {
    let k = Kapi::start(&[]);
    for (manifest, want) in [
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
            "holds 2 objects; trace-request follows one request, so give it a file with one",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n   bad: [\n",
            "not a YAML or JSON manifest: mapping values are not allowed in this context at line 5, column 7",
        ),
    ] {
        let (ok, _, err) = trace(&k, manifest, &[]);
        assert!(!ok);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.trim().ends_with(want), "{err}");
        assert!(!err.contains("from_str_multiple"), "{err}");
    }
}
