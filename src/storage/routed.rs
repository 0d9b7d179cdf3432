//! `--etcd-servers-overrides`: some resources in etcd clusters of their own
//! (events, typically), as upstream's storage factory places them. Each
//! key goes to the backend whose key prefix it starts with, else to the
//! main one. Revisions are per cluster, as upstream's are per resource:
//! a cache asks the revision of the cluster its prefix lives in.

use std::sync::Arc;

use bytes::Bytes;

use super::backend::{
    Backend, BackendError, KeyValue, RangeRequest, RangeResponse, TxnOutcome, WatchReceiver,
};

pub struct Routed {
    main: Arc<dyn Backend>,
    /// (key prefix ending with `/`, its backend).
    overrides: Vec<(String, Arc<dyn Backend>)>,
    /// Each override's revision at the previous compaction: compacted to
    /// at the next, so one interval of history stays, as on the main one.
    compact_next: parking_lot::Mutex<Vec<Option<i64>>>,
}

impl Routed {
    pub fn new(main: Arc<dyn Backend>, overrides: Vec<(String, Arc<dyn Backend>)>) -> Routed {
        let compact_next = parking_lot::Mutex::new(vec![None; overrides.len()]);
        Routed {
            main,
            overrides,
            compact_next,
        }
    }

    fn pick(&self, key: &str) -> &Arc<dyn Backend> {
        self.overrides
            .iter()
            .find(|(prefix, _)| key.starts_with(prefix.as_str()))
            .map(|(_, b)| b)
            .unwrap_or(&self.main)
    }
}

#[async_trait::async_trait]
impl Backend for Routed {
    fn name(&self) -> &'static str {
        self.main.name()
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        self.pick(key).get(key).await
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError> {
        // A range never spans resources: it lies under one prefix.
        self.pick(&req.start).range(req).await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError> {
        self.pick(key).create(key, value).await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.pick(key)
            .update(key, value, expected_mod_revision)
            .await
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.pick(key).delete(key, expected_mod_revision).await
    }

    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError> {
        self.pick(prefix).watch(prefix, from_revision).await
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        self.main.current_revision().await
    }

    async fn current_revision_of(&self, prefix: &str) -> Result<i64, BackendError> {
        self.pick(prefix).current_revision_of(prefix).await
    }

    fn current_revision_now(&self, prefix: &str) -> Option<i64> {
        self.pick(prefix).current_revision_now(prefix)
    }

    fn progress_is_reliable(&self) -> bool {
        self.main.progress_is_reliable()
            && self.overrides.iter().all(|(_, b)| b.progress_is_reliable())
    }

    /// `revision` is the main cluster's; each override is compacted to
    /// its own revision of the previous call.
    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        for (i, (_, b)) in self.overrides.iter().enumerate() {
            let due = self.compact_next.lock().get(i).copied().flatten();
            if let Some(rev) = due {
                match b.compact(rev).await {
                    Ok(()) | Err(BackendError::Compacted { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            let now = b.current_revision().await.ok();
            if let Some(slot) = self.compact_next.lock().get_mut(i) {
                *slot = now;
            }
        }
        self.main.compact(revision).await
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        self.main.compacted_revision().await
    }

    async fn close(&self) {
        self.main.close().await;
        for (_, b) in &self.overrides {
            b.close().await;
        }
    }
}
