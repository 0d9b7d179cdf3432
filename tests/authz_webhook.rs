//! Issue 24: `--authorization-mode=RBAC,Webhook` with
//! `--authorization-webhook-config-file`. What RBAC has no opinion on is
//! sent to the webhook as a SubjectAccessReview: `allowed` allows,
//! `denied` forbids, neither forbids at the end of the chain; answers are
//! cached.

mod common;

use std::sync::{Arc, Mutex};

use common::{run, Kapi};
use serde_json::{json, Value};

/// Allows alice to list pods and manage roles, denies secrets outright,
/// no opinion otherwise.
async fn webhook() -> (String, Arc<Mutex<Vec<Value>>>) {
    common::http::review_webhook("/authorize", |review| {
        let ra = &review["spec"]["resourceAttributes"];
        let alice = review["spec"]["user"] == "alice";
        if alice && ra["resource"] == "pods" && ra["verb"] == "list" {
            json!({"allowed": true, "reason": "alice lists pods"})
        } else if alice
            && ra["resource"] == "roles"
            && (ra["verb"] == "create" || ra["verb"] == "escalate")
        {
            json!({"allowed": true, "reason": "alice manages roles"})
        } else if ra["resource"] == "secrets" {
            json!({"allowed": false, "denied": true, "reason": "no secrets here"})
        } else {
            json!({"allowed": false})
        }
    })
    .await
}

fn files(dir: &std::path::Path, server: &str) -> (String, String) {
    let kubeconfig = dir.join("authz.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: authz\n  cluster: {{server: \"{server}\"}}\n\
             users:\n- name: kapi\n  user: {{}}\ncontexts:\n- name: authz\n  context: {{cluster: authz, user: kapi}}\n\
             current-context: authz\n"
        ),
    )
    .expect("write");
    let tokens = dir.join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,a-1,\"devs\"\n").expect("write");
    (
        kubeconfig.to_string_lossy().into_owned(),
        tokens.to_string_lossy().into_owned(),
    )
}

#[test]
fn what_rbac_leaves_open_the_webhook_decides() {
    let rt = common::runtime();
    let (url, got) = rt.block_on(webhook());
    let tmp = tempfile::tempdir().expect("tempdir");
    let (kubeconfig, tokens) = files(tmp.path(), &url);
    let k = Kapi::start(&[
        "--authorization-mode=RBAC,Webhook",
        &format!("--authorization-webhook-config-file={kubeconfig}"),
        &format!("--token-auth-file={tokens}"),
    ]);
    let alice = |path: &str| {
        let url = format!("{}{path}", k.url);
        let client = k.anonymous_client();
        async move {
            let r = client
                .get(url)
                .bearer_auth("alice-token")
                .send()
                .await
                .expect("get");
            (r.status().as_u16(), r.text().await.unwrap_or_default())
        }
    };
    rt.block_on(async {
        assert_eq!(alice("/api/v1/namespaces/default/pods").await.0, 200);
        assert_eq!(alice("/api/v1/namespaces/default/pods").await.0, 200);
        let (status, body) = alice("/api/v1/namespaces/default/secrets").await;
        assert_eq!(status, 403, "{body}");
        let (status, body) = alice("/api/v1/namespaces/default/configmaps").await;
        assert_eq!(status, 403, "{body}");
        assert!(
            body.contains("User \\\"alice\\\" cannot list resource \\\"configmaps\\\""),
            "{body}"
        );
        // RBAC's escalation check asks the webhook too: `escalate` granted
        // there lets alice create a Role with rules she does not hold.
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]});
        let r = k
            .anonymous_client()
            .post(format!(
                "{}/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
                k.url
            ))
            .bearer_auth("alice-token")
            .json(&role)
            .send()
            .await
            .expect("post");
        let status = r.status().as_u16();
        assert_eq!(status, 201, "{}", r.text().await.unwrap_or_default());
    });
    {
        let reviews = got.lock().expect("lock");
        let resources: Vec<&str> = reviews
            .iter()
            .filter(|r| r["spec"]["user"] == "alice")
            .filter_map(|r| r["spec"]["resourceAttributes"]["resource"].as_str())
            .collect();
        // The allowed answer is cached: pods were asked about once.
        assert_eq!(
            resources.iter().filter(|r| **r == "pods").count(),
            1,
            "{resources:?}"
        );
        assert!(resources.contains(&"secrets") && resources.contains(&"configmaps"));
        let first = reviews
            .iter()
            .find(|r| r["spec"]["user"] == "alice")
            .expect("a review of alice");
        assert_eq!(first["apiVersion"], "authorization.k8s.io/v1beta1");
        assert_eq!(
            first["spec"]["group"],
            json!(["devs", "system:authenticated"])
        );
        assert_eq!(first["spec"]["resourceAttributes"]["namespace"], "default");
        assert_eq!(first["spec"]["resourceAttributes"]["verb"], "list");
    }
    // kubectl auth can-i asks through SelfSubjectAccessReview: same answer.
    // (The webhook runs on this thread's runtime: kubectl runs beside it.)
    let ca = k.data_dir.join("pki/ca.crt");
    let can_i = |what: &'static [&'static str]| {
        let (url, ca) = (k.url.clone(), ca.clone());
        rt.block_on(async move {
            tokio::task::spawn_blocking(move || {
                let mut kc = std::process::Command::new(common::kubectl_path());
                kc.env("KUBECONFIG", "/dev/null")
                    .args(["--server", &url, "--certificate-authority"])
                    .arg(&ca)
                    .args(["--token", "alice-token", "auth", "can-i"])
                    .args(what);
                run(&mut kc).1.trim().to_string()
            })
            .await
            .expect("kubectl")
        })
    };
    assert_eq!(can_i(&["list", "pods"]), "yes");
    assert_eq!(can_i(&["list", "secrets"]), "no - no secrets here");
}

#[test]
fn the_webhook_mode_needs_its_file_and_the_file_its_mode() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (kubeconfig, _) = files(tmp.path(), "http://127.0.0.1:1/authorize");
    for (args, want) in [
        (
            vec!["--authorization-mode=RBAC,Webhook".to_string()],
            "authorization-mode Webhook's authorization config file not passed",
        ),
        (
            vec![format!("--authorization-webhook-config-file={kubeconfig}")],
            "cannot specify --authorization-webhook-config-file without mode Webhook",
        ),
    ] {
        let out = std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(tmp.path().join("data"))
            .args(&args)
            .output()
            .expect("run kapi");
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
