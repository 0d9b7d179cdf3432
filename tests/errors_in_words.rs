//! Issue 23: errors are sentences. Failure paths of the CLI, of the API
//! and of storage, provoked one after another; none may show Rust's Debug
//! formatting (`Error(`, `Some(`, `{ kind:`, `tonic::`) in a CLI error, a
//! `Status` message or the log at default verbosity. (The shared helpers in
//! tests/common check the same on every failure the other tests provoke.)

mod common;

use std::process::Command;

use common::{assert_no_debug_shapes, Kapi};
use serde_json::{json, Value};

/// Runs kapi and returns its standard error, checked, and whether it failed.
fn kapi_fails(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(common::kapi_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .env("HOME", dir)
        .output()
        .expect("run kapi");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "kapi {args:?} succeeded");
    assert!(
        !err.trim().is_empty(),
        "kapi {args:?} failed without a word"
    );
    assert_no_debug_shapes(&format!("kapi {args:?}"), &err);
    err
}

#[test]
fn cli_failures_are_sentences() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("bad.yaml"), "kind: [unclosed\n").expect("write");
    std::fs::write(d.join("not-a-kubeconfig"), "just: text\n").expect("write");
    std::fs::write(d.join("file"), "a file, not a directory").expect("write");
    let file = d.join("file").to_string_lossy().into_owned();
    let under_file = format!("{file}/sub");
    for args in [
        &["servee"][..],
        &["serve", "--secure-prot", "1"],
        &["serve", "--secure-port", "notaport"],
        &["serve", "--data-dir", &under_file],
        &[
            "serve",
            "--secure-port",
            "0",
            "--data-dir",
            &under_file,
            "--etcd-servers",
            "http://127.0.0.1:1",
        ],
        &["serve", "--etcd-servers", "localhost:2379"],
        &["serve", "--token-auth-file", "/nonexistent/tokens.csv"],
        &[
            "serve",
            "--tls-cert-file",
            &file,
            "--tls-private-key-file",
            &file,
            "--secure-port",
            "0",
            "--data-dir",
            "d",
        ],
        &["routes", "--kubeconfig", "not-a-kubeconfig"],
        &["routes", "--kubeconfig", "/nonexistent"],
        &["routes", "--resource", "nosuch"],
        &["routes", "--match", "GET", "nope"],
        &["trace-request", "-f", "bad.yaml"],
        &["trace-request", "-f", "/nonexistent.yaml"],
        &["trace-request", "GET", "/api"],
        &["apiservice", "list"],
        &[
            "apiservice",
            "register",
            "--group",
            "x.example.com",
            "--version",
            "v1",
            "--url",
            "not a url",
        ],
        &["etcd", "dump", "--data-dir", "/nonexistent/kapi"],
        &["etcd", "dump", "--data-dir", &file],
        &["etcd", "dump", "--etcd-servers", "http://127.0.0.1:1"],
        &[
            "scaffold",
            "crd",
            "--group",
            "Not_A_Group",
            "--kind",
            "widget",
        ],
        &["completions", "tcsh"],
        &["kube-apiserver", "--no-such-flag"],
        &[
            "kube-apiserver",
            "--etcd-servers",
            "http://127.0.0.1:1",
            "--secure-port",
            "0",
            "--cert-dir",
            &under_file,
        ],
    ] {
        kapi_fails(d, args);
    }
}

#[test]
fn api_failures_are_sentences() {
    let k = Kapi::start(&[]);
    let c = k.admin_client();
    let anon = k.anonymous_client();
    let url = |p: &str| format!("{}{p}", k.url);
    let cms = url("/api/v1/namespaces/default/configmaps");
    common::runtime().block_on(async {
        let raw = |client: &reqwest::Client, method: &str, path: String, ct: &str, body: &str| {
            client
                .request(method.parse().expect("method"), path)
                .header("Content-Type", ct)
                .body(body.to_string())
                .send()
        };
        let mut answers: Vec<(u16, String)> = Vec::new();
        for (method, path, ct, body) in [
            ("POST", cms.clone(), "application/json", "{not json"),
            (
                "POST",
                cms.clone(),
                "application/json",
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}"#,
            ),
            (
                "POST",
                cms.clone(),
                "application/json",
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_Valid"}}"#,
            ),
            (
                "POST",
                cms.clone(),
                "application/json",
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":1}}"#,
            ),
            ("POST", cms.clone(), "application/yaml", "kind: [unclosed"),
            (
                "POST",
                cms.clone(),
                "application/vnd.kubernetes.protobuf",
                "\u{0}\u{1}garbage",
            ),
            ("POST", cms.clone(), "text/plain", "hello"),
            (
                "PATCH",
                format!("{cms}/missing"),
                "application/merge-patch+json",
                "{}",
            ),
            (
                "PATCH",
                format!("{cms}/missing"),
                "application/json-patch+json",
                "[{\"op\":\"bogus\"}]",
            ),
            (
                "PATCH",
                format!("{cms}/missing"),
                "application/apply-patch+yaml",
                "kind: [",
            ),
            (
                "PUT",
                format!("{cms}/x"),
                "application/json",
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}"#,
            ),
            (
                "GET",
                format!("{cms}?labelSelector=a%3D%3D%3Db"),
                "application/json",
                "",
            ),
            (
                "GET",
                format!("{cms}?resourceVersion=abc"),
                "application/json",
                "",
            ),
            (
                "GET",
                url("/apis/nosuch.example.com/v1/things"),
                "application/json",
                "",
            ),
            (
                "DELETE",
                format!("{cms}/missing"),
                "application/json",
                r#"{"preconditions":{"uid":"x"}}"#,
            ),
        ] {
            let r = raw(&c, method, path.clone(), ct, body).await.expect("send");
            let code = r.status().as_u16();
            let text = r.text().await.unwrap_or_default();
            answers.push((code, format!("{method} {path}: {text}")));
        }
        // Unauthenticated and forbidden.
        let r = raw(&anon, "GET", cms.clone(), "application/json", "")
            .await
            .expect("send");
        answers.push((r.status().as_u16(), r.text().await.unwrap_or_default()));
        // A conflict.
        let cm = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}});
        for _ in 0..2 {
            let (code, body) = common::http::send(&c, "POST", &cms, Some(cm.clone())).await;
            answers.push((code, body.to_string()));
        }
        for (code, text) in &answers {
            assert!((400..500).contains(code) || *code == 201, "{code}: {text}");
            let message =
                serde_json::from_str::<Value>(text.split_once(": ").map_or(text, |(_, b)| b))
                    .ok()
                    .and_then(|v| v["message"].as_str().map(String::from))
                    .unwrap_or_else(|| text.clone());
            assert_no_debug_shapes("a Status message", &message);
        }
    });
}

/// With etcd gone, kubectl's users read a 5xx in upstream's words and the
/// log says which etcd; no transport dump anywhere.
#[test]
fn storage_failures_are_sentences() {
    let mut cluster = common::etcd::EtcdCluster::start(1);
    let k = Kapi::start(&["--etcd-servers", &cluster.endpoints()[0]]);
    cluster.members[0].stop();
    let out = common::kubectl::run_limited(
        k.kubectl()
            .args(["create", "configmap", "c", "--from-literal=a=b"]),
        common::kubectl::CMD_LIMIT,
    );
    assert!(!out.ok, "a write without etcd succeeded");
    assert!(
        out.stderr.contains("could not be completed at this time"),
        "{}",
        out.stderr
    );
    let c = k.admin_client();
    common::runtime().block_on(async {
        let (code, body) = common::http::send(
            &c,
            "GET",
            &format!("{}/api/v1/namespaces/default/configmaps/x", k.url),
            None,
        )
        .await;
        assert!(code >= 500, "{code}: {body}");
    });
    // Dropping `k` checks its log at default verbosity.
}
