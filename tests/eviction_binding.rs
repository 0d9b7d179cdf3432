//! `pods/binding` and `pods/eviction` as upstream serves them (issue 20):
//! of two concurrent binds of one pod exactly one wins, and an eviction
//! asks the pod's PodDisruptionBudget, spending an allowed disruption or
//! answering 429 and leaving the pod.

mod common;

use common::http::{merge_patch, send};

use common::{runtime, Kapi};
use serde_json::json;

#[test]
fn concurrent_binds_of_one_pod_one_wins() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let pods = format!("{}/api/v1/namespaces/default/pods", k.url);
        for round in 0..10 {
            let name = format!("p{round}");
            let (code, _) = send(&c, "POST", &pods, Some(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))).await;
            assert_eq!(code, 201);
            let bind = |node: &str| {
                let (c, url) = (c.clone(), format!("{pods}/{name}/binding"));
                let body = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
                async move { send(&c, "POST", &url, Some(body)).await }
            };
            let (a, b) = tokio::join!(bind("node-a"), bind("node-b"));
            let mut codes = [a.0, b.0];
            codes.sort();
            assert_eq!(codes, [201, 409], "{a:?} {b:?}");
            let loser = if a.0 == 409 { &a.1 } else { &b.1 };
            assert_eq!(loser["reason"], "Conflict");
            let winner = if a.0 == 201 { "node-a" } else { "node-b" };
            assert_eq!(
                loser["message"],
                format!("Operation cannot be fulfilled on pods/binding \"{name}\": pod {name} is already assigned to node \"{winner}\"")
            );
            let (_, p) = send(&c, "GET", &format!("{pods}/{name}"), None).await;
            assert_eq!(p["spec"]["nodeName"], winner);
        }
    });
}

#[test]
fn evictions_respect_pod_disruption_budgets() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let pods = format!("{}/api/v1/namespaces/default/pods", k.url);
        let pdbs = format!("{}/apis/policy/v1/namespaces/default/poddisruptionbudgets", k.url);
        let running = |name: &str| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        };
        for name in ["db-0", "db-1"] {
            let (code, _) = send(&c, "POST", &pods, Some(running(name))).await;
            assert_eq!(code, 201);
            let (code, s) = merge_patch(&c, &format!("{pods}/{name}/status"), json!({"status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]}})).await;
            assert_eq!(code, 200, "{s}");
        }
        let (code, _) = send(&c, "POST", &pdbs, Some(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "db"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}}))).await;
        assert_eq!(code, 201);
        let evict = |name: &str| {
            let (c, url) = (c.clone(), format!("{pods}/{name}/eviction"));
            let body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}});
            async move { send(&c, "POST", &url, Some(body)).await }
        };

        // No disruption controller has looked at the budget yet.
        let (code, refused) = evict("db-0").await;
        assert_eq!(code, 429, "{refused}");
        assert_eq!(refused["reason"], "TooManyRequests");
        assert_eq!(refused["message"], "Cannot evict pod as it would violate the pod's disruption budget.");
        assert_eq!(refused["details"]["causes"][0], json!({"reason": "DisruptionBudget",
            "message": "The disruption budget db is still being processed by the server."}));

        // The budget allows nothing: 429, and the pod stays.
        let status = |allowed: i64| json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
            "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}});
        let (code, s) = merge_patch(&c, &format!("{pdbs}/db/status"), status(0)).await;
        assert_eq!(code, 200, "{s}");
        let (code, refused) = evict("db-0").await;
        assert_eq!(code, 429, "{refused}");
        assert_eq!(refused["details"]["causes"][0]["message"], "The disruption budget db needs 2 healthy pods and has 2 currently");
        let (code, _) = send(&c, "GET", &format!("{pods}/db-0"), None).await;
        assert_eq!(code, 200, "a refused eviction leaves the pod");

        // One disruption allowed: the first eviction spends it, the second is refused.
        merge_patch(&c, &format!("{pdbs}/db/status"), status(1)).await;
        let (code, ok) = evict("db-0").await;
        assert_eq!(code, 201, "{ok}");
        let (code, _) = send(&c, "GET", &format!("{pods}/db-0"), None).await;
        assert_eq!(code, 404);
        let (_, pdb) = send(&c, "GET", &format!("{pdbs}/db"), None).await;
        assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
        assert!(pdb["status"]["disruptedPods"]["db-0"].is_string(), "{pdb}");
        let (code, _) = evict("db-1").await;
        assert_eq!(code, 429);

        // A pod that never started is not protected.
        let (code, _) = send(&c, "POST", &pods, Some(running("db-2"))).await;
        assert_eq!(code, 201);
        let (code, ok) = evict("db-2").await;
        assert_eq!(code, 201, "{ok}");
    });
}
