//! A fresh store's first content, taken from another store: what every
//! kapi writes alike while it starts (the RBAC policy, the system
//! PriorityClasses, the APF configuration, the system namespaces, the local
//! APIServices). `kapi::testing` takes it from the first server of a
//! process once that server has started, and plants it in every later
//! server's empty store before anything reads it; their post-start hooks
//! then find the objects in place and only check them, instead of writing
//! each of them through the whole create path.

use std::sync::Arc;

use bytes::Bytes;

use super::backend::{prefix_end, Backend, BackendError, RangeRequest, TxnOutcome};

#[derive(Debug, Clone, Default)]
pub struct Seed {
    kvs: Arc<Vec<(String, Bytes)>>,
}

impl Seed {
    /// Every key under each of `prefixes`, as stored.
    pub async fn take(backend: &dyn Backend, prefixes: &[String]) -> Result<Seed, BackendError> {
        let mut kvs = Vec::new();
        for prefix in prefixes {
            let got = backend
                .range(RangeRequest {
                    start: prefix.clone(),
                    end: prefix_end(prefix),
                    revision: 0,
                    limit: 0,
                    skip_count: true,
                })
                .await?;
            tracing::debug!(%prefix, keys = got.kvs.len(), "seed");
            kvs.extend(got.kvs.into_iter().map(|kv| (kv.key, kv.value)));
        }
        Ok(Seed { kvs: Arc::new(kvs) })
    }

    pub fn len(&self) -> usize {
        self.kvs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kvs.is_empty()
    }

    /// Writes the seed into `backend` if nothing is stored under `root`
    /// yet; a store that already holds data keeps it as it is.
    pub async fn plant(&self, backend: &dyn Backend, root: &str) -> Result<bool, BackendError> {
        let existing = backend
            .range(RangeRequest {
                start: root.to_string(),
                end: prefix_end(root),
                revision: 0,
                limit: 1,
                skip_count: true,
            })
            .await?;
        if !existing.kvs.is_empty() {
            return Ok(false);
        }
        // Side by side: the store commits them in a few shared transactions.
        let writes = self
            .kvs
            .iter()
            .map(|(key, value)| backend.create(key, value.clone()));
        for outcome in futures::future::join_all(writes).await {
            match outcome? {
                TxnOutcome::Applied { .. } => {}
                TxnOutcome::Failed { .. } => {
                    return Err(BackendError::Unavailable(
                        "a seeded key was written by someone else first".into(),
                    ))
                }
            }
        }
        Ok(true)
    }
}
