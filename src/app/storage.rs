//! Storage as the flags configure it: the embedded store or etcd (with
//! per-resource overrides), encryption at rest, the codec, and the
//! compactor.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::config::{CompletedConfig, StorageBackend};
use crate::storage::backend::{Backend, BackendError};
use crate::storage::codec::{Codec, MediaType};
use crate::storage::dump::KeyLayout;
use crate::storage::embedded::Embedded;
use crate::storage::encryption::{Encrypted, EncryptionConfig};
use crate::storage::etcd::{Etcd, EtcdConfig};
use crate::storage::routed::Routed;

use super::builtin_catalog;

pub(super) async fn open_storage(cfg: &CompletedConfig) -> anyhow::Result<Arc<dyn Backend>> {
    let raw: Arc<dyn Backend> = match &cfg.storage {
        StorageBackend::Embedded { dir, durable } => {
            let (dir, durable) = (dir.clone(), *durable);
            let b = tokio::task::spawn_blocking(move || Embedded::open_with(&dir, durable))
                .await
                .context("storage task")?
                .map_err(|e| anyhow::anyhow!("--data-dir {}: {e}", cfg.data_dir.display()))?;
            Arc::new(b)
        }
        StorageBackend::Etcd {
            endpoints,
            ca_file,
            cert_file,
            key_file,
        } => {
            let ecfg = EtcdConfig {
                endpoints: endpoints.clone(),
                ca_file: ca_file.clone(),
                cert_file: cert_file.clone(),
                key_file: key_file.clone(),
            };
            let b = Etcd::connect(&ecfg, &cfg.storage_prefix)
                .await
                .map_err(|e| anyhow::anyhow!("--etcd-servers: {e}"))?;
            let main: Arc<dyn Backend> = Arc::new(b);
            if cfg.etcd_servers_overrides.is_empty() {
                main
            } else {
                let mut overrides = Vec::new();
                for (prefix, endpoints) in override_prefixes(cfg) {
                    let ecfg = EtcdConfig {
                        endpoints: endpoints.clone(),
                        ..ecfg.clone()
                    };
                    let b = Etcd::connect(&ecfg, &cfg.storage_prefix)
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!("--etcd-servers-overrides {}: {e}", endpoints.join(";"))
                        })?;
                    overrides.push((prefix, Arc::new(b) as Arc<dyn Backend>));
                }
                Arc::new(Routed::new(main, overrides))
            }
        }
    };
    let raw = match &cfg.encryption_provider_config {
        Some(path) => {
            let config = EncryptionConfig::load(path).map_err(|e| anyhow::anyhow!(e))?;
            let layout = KeyLayout::new(&builtin_catalog(), &cfg.storage_prefix);
            Arc::new(Encrypted::new(raw, config, layout)) as Arc<dyn Backend>
        }
        None => raw,
    };
    Ok(Arc::new(Codec::new(raw, cfg.storage_media_type)))
}

/// Each override's key prefix (`/registry/events/`) and endpoints. Only
/// built-in resources can be placed, as upstream's flag says; another
/// is ignored, as upstream ignores it, with a warning.
fn override_prefixes(cfg: &CompletedConfig) -> Vec<(String, Vec<String>)> {
    let catalog = builtin_catalog();
    let mut out = Vec::new();
    for (group, resource, endpoints) in &cfg.etcd_servers_overrides {
        let paths: std::collections::BTreeSet<String> = catalog
            .all_stored()
            .iter()
            .filter(|r| r.group == *group && r.plural == *resource && r.is_stored())
            .map(|r| format!("{}/{}/", cfg.storage_prefix, r.storage_path))
            .collect();
        if paths.is_empty() {
            tracing::warn!(
                group = %group,
                resource = %resource,
                "--etcd-servers-overrides names no built-in resource; ignored, as upstream ignores it"
            );
        }
        for p in paths {
            out.push((p, endpoints.clone()));
        }
    }
    out
}

pub(super) fn storage_detail(cfg: &CompletedConfig) -> String {
    let at = match &cfg.storage {
        StorageBackend::Embedded { dir, .. } => format!("embedded store in {}", dir.display()),
        StorageBackend::Etcd { endpoints, .. } => format!(
            "etcd at {} (prefix {})",
            endpoints.join(","),
            cfg.storage_prefix
        ),
    };
    let at = match cfg.storage_media_type {
        MediaType::Json => at,
        MediaType::Protobuf => format!("{at}, objects written in protobuf"),
    };
    match &cfg.encryption_provider_config {
        Some(f) => format!("{at}, encrypted at rest as {} says", f.display()),
        None => at,
    }
}

/// upstream's compactor: every interval, compact to the revision seen at
/// the previous tick, so one interval of history always stays.
pub(super) async fn compactor(backend: Arc<dyn Backend>, every: Duration, stop: CancellationToken) {
    let mut last: Option<i64> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.cancelled() => return,
        }
        if let Some(rev) = last {
            match backend.compact(rev).await {
                Ok(()) => tracing::debug!(revision = rev, "compacted storage"),
                Err(BackendError::Compacted { .. }) => {}
                Err(e) => {
                    crate::warn_limited!("compaction-failed", error = %e, "compaction failed")
                }
            }
        }
        last = backend.current_revision().await.ok();
    }
}
