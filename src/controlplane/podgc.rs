//! The pod garbage collector's orphan sweep (upstream's podgc
//! gcOrphaned): a pod bound to a node that has not existed for the
//! quarantine time is deleted at once (grace 0). Without it a pod bound
//! to a node no kubelet runs would stay Terminating forever after a
//! delete, and so would its namespace.

use std::collections::HashMap;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::component_base::clocks::Clocks;
use crate::informers::Informers;
use crate::registry::{meta, DeleteOptions};

/// Pods bound to missing nodes raise no event when their quarantine
/// (`Clocks::podgc_quarantine`) ends, so the informers' copies are checked
/// every `Clocks::podgc_period` (no storage list).
pub async fn run(informers: Informers, clocks: Clocks, stop: CancellationToken) {
    let (Some(pods), Some(nodes)) = (
        informers.get("", "v1", "pods"),
        informers.get("", "v1", "nodes"),
    ) else {
        return;
    };
    if !pods.wait_synced(&stop).await || !nodes.wait_synced(&stop).await {
        return;
    }
    let mut missing_since: HashMap<String, Instant> = HashMap::new();
    loop {
        let now = Instant::now();
        let mut seen_missing = std::collections::HashSet::new();
        for pod in pods.list() {
            let node = pod["spec"]["nodeName"].as_str().unwrap_or("");
            if node.is_empty() || nodes.get(node).is_some() {
                continue;
            }
            seen_missing.insert(node.to_string());
            let since = *missing_since.entry(node.to_string()).or_insert(now);
            if now.duration_since(since) < clocks.podgc_quarantine {
                continue;
            }
            // Ask storage too: the informer may lag a node just made.
            let Some(node_reg) = informers.registries().get("", "v1", "nodes") else {
                continue;
            };
            if node_reg.get_object("", node, None).await.is_ok() {
                continue;
            }
            let Some(pod_reg) = informers.registries().get("", "v1", "pods") else {
                continue;
            };
            let opts = DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            };
            let (ns, name) = (meta::namespace(&pod), meta::name(&pod));
            match pod_reg.delete(ns, name, &opts).await {
                Ok(_) => {
                    tracing::info!(pod = %format!("{ns}/{name}"), node, "deleted a pod bound to a node that does not exist")
                }
                Err(e) if e.code == 404 => {}
                Err(e) => tracing::debug!(error = %e, "podgc"),
            }
        }
        missing_since.retain(|n, _| seen_missing.contains(n));
        tokio::select! {
            _ = tokio::time::sleep(clocks.podgc_period) => {}
            _ = stop.cancelled() => return,
        }
    }
}
