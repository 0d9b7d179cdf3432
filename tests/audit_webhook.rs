//! `--audit-webhook-config-file`: audit events reach a webhook as
//! audit.k8s.io/v1 EventLists in batches of `--audit-webhook-batch-max-size`,
//! or sooner after `--audit-webhook-batch-max-wait`; blocking modes are
//! refused by name.

mod common;

use std::time::Duration;

use common::Kapi;
use serde_json::{json, Value};

const POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources:\n  - group: ''\n    resources: [configmaps]\n- level: None\n";

#[test]
fn audit_events_are_posted_to_the_webhook_in_batches() {
    let rt = common::runtime();
    let (url, got) = rt.block_on(common::http::review_webhook("/audit", |_| json!({})));
    let dir = tempfile::tempdir().expect("tmp");
    let config = common::http::webhook_kubeconfig(dir.path(), "audit.kubeconfig", &url, None);
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("write");
    let k = Kapi::start(&[
        &format!("--audit-policy-file={}", policy.display()),
        &format!("--audit-webhook-config-file={config}"),
        "--audit-webhook-batch-max-size=2",
        "--audit-webhook-batch-max-wait=300ms",
    ]);
    rt.block_on(async {
        let c = k.admin_client();
        for name in ["a1", "a2", "a3"] {
            let r = c
                .post(format!("{}/api/v1/namespaces/default/configmaps", k.url))
                .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
                .send()
                .await
                .expect("create");
            assert_eq!(r.status(), 201);
        }
        // Two full batches' worth of creates, the last one sent by the wait.
        let mut lists: Vec<Value> = Vec::new();
        for _ in 0..100 {
            lists = got.lock().expect("lock").clone();
            let created = lists
                .iter()
                .flat_map(|l| l["items"].as_array().cloned().unwrap_or_default())
                .filter(|e| e["verb"] == "create")
                .count();
            if created == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let events: Vec<Value> = lists
            .iter()
            .flat_map(|l| l["items"].as_array().cloned().unwrap_or_default())
            .collect();
        for l in &lists {
            assert_eq!(l["kind"], "EventList");
            assert_eq!(l["apiVersion"], "audit.k8s.io/v1");
            let n = l["items"].as_array().map_or(0, Vec::len);
            assert!((1..=2).contains(&n), "a batch of {n}: {l}");
        }
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["verb"] == "create")
            .filter_map(|e| e["objectRef"]["name"].as_str())
            .collect();
        assert_eq!(names, ["a1", "a2", "a3"], "{events:?}");
        let first = &events[0];
        assert_eq!(first["kind"], "Event");
        assert_eq!(first["level"], "Metadata");
        assert_eq!(first["stage"], "ResponseComplete");
        assert_eq!(first["user"]["username"], "kubernetes-admin");
        assert!(
            events
                .iter()
                .all(|e| e["objectRef"]["resource"] == "configmaps"),
            "only what the policy audits"
        );
    });
}

#[test]
fn blocking_modes_are_refused_by_name() {
    let err = common::serve_refused(&["--audit-webhook-mode=blocking"]);
    assert!(
        err.contains(r#"invalid value for --audit-webhook-mode: kapi sends audit webhooks in batches only, not "blocking""#),
        "{err}"
    );
}
