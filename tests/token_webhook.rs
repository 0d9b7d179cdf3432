//! Issue 24: `--authentication-token-webhook-config-file`. Tokens kapi does
//! not know go to the webhook as TokenReviews; its answer names the user,
//! and answers are cached for `--authentication-token-webhook-cache-ttl`.

mod common;

use std::sync::{Arc, Mutex};

use common::{run, Kapi};
use serde_json::{json, Value};

/// A token webhook: `good-token` is alice (group devs), anything else is
/// refused. Keeps every review it got.
async fn webhook() -> (String, Arc<Mutex<Vec<Value>>>) {
    common::http::review_webhook("/authenticate", |review| {
        if review["spec"]["token"] == "good-token" {
            json!({"authenticated": true, "user": {"username": "alice", "uid": "a-1",
                "groups": ["devs"], "extra": {"team": ["blue"]}}})
        } else {
            json!({"authenticated": false, "error": "unknown token"})
        }
    })
    .await
}

fn kubeconfig(dir: &std::path::Path, server: &str) -> String {
    common::http::webhook_kubeconfig(dir, "webhook.kubeconfig", server, None)
}

async fn whoami(k: &Kapi, token: &str) -> (u16, Value) {
    let r = k
        .anonymous_client()
        .post(format!(
            "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
            k.url
        ))
        .bearer_auth(token)
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .expect("post");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[test]
fn tokens_are_reviewed_by_the_webhook_and_answers_are_cached() {
    let rt = common::runtime();
    let (url, got) = rt.block_on(webhook());
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = kubeconfig(tmp.path(), &url);
    let k = Kapi::start(&[&format!(
        "--authentication-token-webhook-config-file={config}"
    )]);
    rt.block_on(async {
        let (status, review) = whoami(&k, "good-token").await;
        assert_eq!(status, 201, "{review}");
        let user = &review["status"]["userInfo"];
        assert_eq!(user["username"], "alice", "{review}");
        assert_eq!(user["uid"], "a-1");
        assert_eq!(user["groups"], json!(["devs", "system:authenticated"]));
        assert_eq!(user["extra"]["team"], json!(["blue"]));
        // Within the TTL the webhook is not asked again.
        let (status, _) = whoami(&k, "good-token").await;
        assert_eq!(status, 201);
        let (status, body) = whoami(&k, "wrong-token").await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["reason"], "Unauthorized");
    });
    {
        let reviews = got.lock().expect("lock");
        let asked: Vec<&str> = reviews
            .iter()
            .filter_map(|r| r["spec"]["token"].as_str())
            .collect();
        assert_eq!(
            asked,
            ["good-token", "wrong-token"],
            "cached answers are reused"
        );
        // upstream's default version, and the API server's audiences.
        assert_eq!(reviews[0]["apiVersion"], "authentication.k8s.io/v1beta1");
        assert_eq!(reviews[0]["kind"], "TokenReview");
        assert!(reviews[0]["spec"]["audiences"]
            .as_array()
            .is_some_and(|a| !a.is_empty()));
    }
    // kubectl with only the token. RBAC still decides: alice may not list.
    // (The webhook runs on this thread's runtime: kubectl runs beside it.)
    let (url, ca) = (k.url.clone(), k.data_dir.join("pki/ca.crt"));
    let (ok, _, err) = rt.block_on(async move {
        tokio::task::spawn_blocking(move || {
            let mut kc = std::process::Command::new(common::kubectl_path());
            kc.env("KUBECONFIG", "/dev/null")
                .args(["--server", &url, "--certificate-authority"])
                .arg(&ca)
                .args(["--token", "good-token", "get", "pods"]);
            run(&mut kc)
        })
        .await
        .expect("kubectl")
    });
    assert!(
        !ok && err.contains("User \"alice\" cannot list resource \"pods\""),
        "{err}"
    );
}

#[test]
fn reviews_go_in_the_version_asked_for_and_a_wrong_one_is_refused() {
    let rt = common::runtime();
    let (url, got) = rt.block_on(webhook());
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = kubeconfig(tmp.path(), &url);
    let k = Kapi::start(&[
        &format!("--authentication-token-webhook-config-file={config}"),
        "--authentication-token-webhook-version=v1",
        "--authentication-token-webhook-cache-ttl=0s",
    ]);
    rt.block_on(async {
        assert_eq!(whoami(&k, "good-token").await.0, 201);
        assert_eq!(whoami(&k, "good-token").await.0, 201);
    });
    {
        let reviews = got.lock().expect("lock");
        assert_eq!(reviews.len(), 2, "a zero TTL caches nothing");
        assert_eq!(reviews[0]["apiVersion"], "authentication.k8s.io/v1");
    }
    let out = std::process::Command::new(common::kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(tmp.path().join("other"))
        .arg(format!(
            "--authentication-token-webhook-config-file={config}"
        ))
        .arg("--authentication-token-webhook-version=v2")
        .output()
        .expect("run kapi");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unsupported authentication webhook version \"v2\", supported versions are \"v1\", \"v1beta1\""),
        "{err}"
    );
}
