//! The refresher: rebuilds the index from the four RBAC lists, at once
//! ([`sync_now`]) and whenever their informers change ([`run`]), and has
//! ClusterRoles aggregated when they change.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::aggregation::aggregate;
use super::index::PLURALS;
use super::{Index, SharedIndex, GROUP};
use crate::informers::Informers;
use crate::registry::{ListParams, Registries};

/// How soon a failed aggregation is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// The four lists, consistent with storage, with their resourceVersions.
async fn list_all(registries: &Registries) -> Result<([i64; 4], [Vec<Value>; 4]), String> {
    let mut versions = [0i64; 4];
    let mut items: [Vec<Value>; 4] = Default::default();
    for (i, plural) in PLURALS.iter().enumerate() {
        let reg = registries
            .get(GROUP, "v1", plural)
            .ok_or_else(|| format!("{plural}.{GROUP} are not served"))?;
        let out = reg
            .list("", &ListParams::default())
            .await
            .map_err(|e| format!("listing {plural}: {e}"))?;
        versions[i] = out.resource_version;
        items[i] = out
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
            .collect();
    }
    Ok((versions, items))
}

/// Rebuilds the index (and aggregates) now from consistent lists: at
/// start-up, before the informers have synced, and after the bootstrap
/// policy is written.
pub async fn sync_now(index: &SharedIndex, registries: &Registries) -> Result<(), String> {
    let (versions, [crs, rs, crbs, rbs]) = list_all(registries).await?;
    let mut idx = Index::build(&crs, &rs, &crbs, &rbs);
    idx.revs = versions;
    index.store(idx);
    aggregate(registries, &crs).await
}

/// The refresher: follows the four RBAC informers and rebuilds the index
/// as soon as one of them changes (a burst of changes makes one rebuild),
/// then aggregates ClusterRoles when ClusterRoles changed (upstream's
/// ClusterRoleAggregationController; its writes come back as changes).
pub async fn run(index: SharedIndex, informers: Informers, stop: CancellationToken) {
    let mut followed = Vec::new();
    for plural in PLURALS {
        match informers.get(GROUP, "v1", plural) {
            Some(i) => followed.push(i),
            None => {
                tracing::warn!("{plural}.{GROUP} are not served; the RBAC index stays as loaded");
                return;
            }
        }
    }
    let changed = crate::informers::Wakeup::on(&followed.iter().collect::<Vec<_>>());
    for i in &followed {
        if !i.wait_synced(&stop).await {
            return;
        }
    }
    let registries = informers.registries().clone();
    let mut aggregated_at: Option<i64> = None;
    let mut failures = 0u32;
    loop {
        let snaps: Vec<(i64, Vec<Arc<Value>>)> = followed.iter().map(|i| i.snapshot()).collect();
        let mut idx = Index::build(&snaps[0].1, &snaps[1].1, &snaps[2].1, &snaps[3].1);
        idx.revs = [snaps[0].0, snaps[1].0, snaps[2].0, snaps[3].0];
        index.store(idx);
        let mut failed = false;
        if aggregated_at != Some(snaps[0].0) {
            let cluster_roles: Vec<Value> = snaps[0].1.iter().map(|v| (**v).clone()).collect();
            match aggregate(&registries, &cluster_roles).await {
                Ok(()) => {
                    aggregated_at = Some(snaps[0].0);
                    failures = 0;
                }
                Err(e) => {
                    // A conflict with the bootstrap hook writing the same
                    // role at start is expected and settles on the retry.
                    failures += 1;
                    if failures >= 3 {
                        tracing::warn!(error = %e, "ClusterRole aggregation keeps failing; retrying");
                    } else {
                        tracing::debug!(error = %e, "ClusterRole aggregation failed; retrying");
                    }
                    failed = true;
                }
            }
        }
        tokio::select! {
            _ = changed.changed() => {}
            _ = tokio::time::sleep(RETRY), if failed => {}
            _ = stop.cancelled() => return,
        }
    }
}
