//! The raw key-value contract both backends keep: etcd v3's model of one
//! global revision, per-key create/mod revision and version, transactions
//! that compare a key's mod revision, ranges at a past revision, watches
//! from a revision, and compaction. Kubernetes semantics live above it in
//! [`super::store`].

use bytes::Bytes;
use tokio::sync::mpsc;

/// One key at one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Bytes,
    pub create_revision: i64,
    pub mod_revision: i64,
    pub version: i64,
    /// Read with an encryption key that no longer writes: the next write
    /// must happen even if it changes nothing, to re-encrypt.
    pub stale: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Put,
    Delete,
}

/// A change, in revision order. For deletes `kv.value` is empty and
/// `kv.mod_revision` is the revision of the delete; `prev` is the value
/// before the change when there was one.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventKind,
    pub kv: KeyValue,
    pub prev: Option<KeyValue>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("required revision {requested} has been compacted (compacted to {compacted})")]
    Compacted { requested: i64, compacted: i64 },
    #[error("required revision {requested} is a future revision (current {current})")]
    FutureRevision { requested: i64, current: i64 },
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// etcd's `--max-request-bytes` (1.5 MiB by default) refused the write.
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
    #[error("storage data is corrupt: {0}")]
    Corrupt(String),
    #[error("storage error: {0}")]
    Internal(String),
}

/// A range `[start, end)` read at `revision` (0: the latest).
#[derive(Debug, Clone, Default)]
pub struct RangeRequest {
    pub start: String,
    pub end: String,
    pub revision: i64,
    /// Most keys returned; 0 for all.
    pub limit: i64,
    /// Stop at the limit without counting the keys past it: `count` is
    /// then only a lower bound (`more` stays exact). For readers that page
    /// through a whole range, where counting it on every page is quadratic
    /// on the embedded store. etcd counts cheaply and ignores it.
    pub skip_count: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RangeResponse {
    pub kvs: Vec<KeyValue>,
    /// More keys follow in the range than were returned.
    pub more: bool,
    /// How many keys the whole range holds at that revision.
    pub count: i64,
    /// The revision the read was served at.
    pub revision: i64,
}

/// The outcome of a compare-and-swap transaction.
#[derive(Debug, Clone)]
pub enum TxnOutcome {
    /// Applied at this revision.
    Applied { revision: i64 },
    /// The comparison failed; this is what the key holds now.
    Failed { current: Option<KeyValue> },
}

/// What a watch delivers, in revision order.
#[derive(Debug, Clone)]
pub enum WatchItem {
    Event(Event),
    /// Every change up to this revision has been delivered (etcd's progress
    /// notification); lets a cache know it is current without a change.
    Progress(i64),
}

/// A running watch: its items (ending with the error that stopped it, if
/// any) and a way to ask for a progress notification.
pub struct WatchReceiver {
    items: mpsc::Receiver<Result<WatchItem, BackendError>>,
    /// The layers' work on each event ([`WatchReceiver::map_events`]),
    /// done as it is received: no task and channel per layer.
    map: Option<EventMap>,
    pub progress: mpsc::Sender<()>,
}

type EventMap = Box<dyn FnMut(Event) -> Option<Event> + Send>;

impl WatchReceiver {
    pub fn new(
        items: mpsc::Receiver<Result<WatchItem, BackendError>>,
        progress: mpsc::Sender<()>,
    ) -> WatchReceiver {
        WatchReceiver {
            items,
            map: None,
            progress,
        }
    }

    /// The next item, through every layer's map; `None` once the watch is
    /// over. Cancel-safe: nothing is awaited after an item is taken.
    pub async fn recv(&mut self) -> Option<Result<WatchItem, BackendError>> {
        loop {
            let item = self.items.recv().await?;
            let Some(map) = self.map.as_mut() else {
                return Some(item);
            };
            match item {
                Ok(WatchItem::Event(ev)) => match map(ev) {
                    Some(ev) => return Some(Ok(WatchItem::Event(ev))),
                    None => continue,
                },
                other => return Some(other),
            }
        }
    }

    /// The same watch with each event passed through `f` (a layer that
    /// decodes or decrypts); an event `f` drops (`None`) is left out.
    /// Errors and progress pass as they are. The outer layer's `f` runs
    /// after the inner ones'.
    pub fn map_events<F>(mut self, mut f: F) -> WatchReceiver
    where
        F: FnMut(Event) -> Option<Event> + Send + 'static,
    {
        self.map = Some(match self.map.take() {
            None => Box::new(f),
            Some(mut inner) => Box::new(move |ev| inner(ev).and_then(&mut f)),
        });
        self
    }
}

/// The exclusive end of the range of keys starting with `prefix`.
pub fn prefix_end(prefix: &str) -> String {
    let mut bytes = prefix.as_bytes().to_vec();
    while let Some(last) = bytes.pop() {
        if last < 0xff {
            bytes.push(last + 1);
            return String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        }
    }
    // Every byte was 0xff: the range runs to the end of the keyspace.
    "\u{10FFFF}".to_string()
}

#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// `embedded` or `etcd`, for logs and `/readyz`.
    fn name(&self) -> &'static str;

    /// The key's latest value and the store's current revision.
    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError>;

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError>;

    /// Creates `key` if it does not exist.
    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError>;

    /// Replaces `key` if its mod revision is still `expected_mod_revision`.
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError>;

    /// Deletes `key` if its mod revision is still `expected_mod_revision`.
    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError>;

    /// Changes to keys starting with `prefix`, from `from_revision` (inclusive) on.
    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError>;

    /// The current revision, read cheaply (for consistent reads from cache).
    async fn current_revision(&self) -> Result<i64, BackendError>;

    /// The current revision of the storage keys under `prefix` live in:
    /// with `--etcd-servers-overrides` revisions are per etcd cluster.
    async fn current_revision_of(&self, prefix: &str) -> Result<i64, BackendError> {
        let _ = prefix;
        self.current_revision().await
    }

    /// [`Backend::current_revision_of`] when it is known here and now,
    /// without asking anyone: a read from the cache then needs no future
    /// (the embedded store's revision is a number in memory; etcd's is a
    /// round trip).
    fn current_revision_now(&self, prefix: &str) -> Option<i64> {
        let _ = prefix;
        None
    }

    /// Whether a cache fed by [`Backend::watch`] can serve consistent reads
    /// by waiting for progress. etcd 3.4 can send a progress notification
    /// ahead of events still in flight (etcd issue 15220; upstream needs
    /// 3.5.13 for the same feature), so on etcd consistent reads go to etcd.
    fn progress_is_reliable(&self) -> bool {
        true
    }

    /// Forgets history before `revision`.
    async fn compact(&self, revision: i64) -> Result<(), BackendError>;

    /// The oldest revision still readable.
    async fn compacted_revision(&self) -> Result<i64, BackendError>;

    /// Closes cleanly: pending writes are finished and flushed.
    async fn close(&self) {}
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefix_ends() {
        assert_eq!(super::prefix_end("/registry/pods/"), "/registry/pods0");
        assert_eq!(super::prefix_end("a"), "b");
    }
}
