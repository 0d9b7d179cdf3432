//! upstream's `storage.Interface` over a [`Backend`]: create, get, list
//! with resourceVersion semantics and continue tokens, guaranteed update
//! with preconditions and retries, delete with preconditions.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::backend::{prefix_end, Backend, BackendError, KeyValue, RangeRequest, TxnOutcome};
use super::rv::with_resource_version;
use crate::api::ApiError;

/// A stored object: its key, its JSON as stored (no resourceVersion) and
/// its resourceVersion (the key's mod revision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub key: String,
    pub value: Bytes,
    pub resource_version: i64,
    /// Read with an encryption key that no longer writes: written again
    /// on update even when nothing changed, to re-encrypt it.
    pub stale: bool,
}

impl Object {
    fn from_kv(kv: KeyValue) -> Object {
        Object {
            key: kv.key,
            value: kv.value,
            resource_version: kv.mod_revision,
            stale: kv.stale,
        }
    }

    /// The JSON a client sees: with `metadata.resourceVersion`.
    pub fn to_json(&self) -> Bytes {
        with_resource_version(&self.value, self.resource_version)
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    #[error("key {key} not found")]
    NotFound { key: String },
    #[error("key {key} already exists")]
    KeyExists { key: String },
    /// A precondition or optimistic-concurrency check failed.
    #[error("{message}")]
    Conflict { key: String, message: String },
    /// 410 Expired: the list's resourceVersion or continue token is compacted.
    #[error("{0}")]
    Expired(String),
    /// 410 Expired for a continue token, with a token to go on inconsistently.
    #[error("{message}")]
    ExpiredContinue {
        message: String,
        continue_token: String,
    },
    /// 410 Gone: a watch asked for history that is no longer kept.
    #[error("{0}")]
    Gone(String),
    /// 504: the asked resourceVersion is newer than the store has seen.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion { requested: i64, current: i64 },
    #[error("{0}")]
    BadRequest(String),
    /// 413: the object is over what storage takes in one write.
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
    /// An error from the caller's update function, passed through.
    #[error("{0}")]
    Api(ApiError),
}

impl From<BackendError> for StorageError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::Unavailable(m) => StorageError::Unavailable(m),
            BackendError::RequestTooLarge => StorageError::RequestTooLarge,
            other => StorageError::Internal(other.to_string()),
        }
    }
}

impl From<ApiError> for StorageError {
    fn from(e: ApiError) -> Self {
        StorageError::Api(e)
    }
}

pub const CONFLICT_MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";
const EXPIRED_LIST: &str = "The resourceVersion for the provided list is too old.";
const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// Delete and update preconditions (`metav1.Preconditions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

#[derive(Deserialize, Default)]
struct MetaOnly {
    #[serde(default)]
    metadata: MetaFields,
}

#[derive(Deserialize, Default)]
struct MetaFields {
    #[serde(default)]
    uid: Option<String>,
}

pub fn uid_of(value: &[u8]) -> Option<String> {
    serde_json::from_slice::<MetaOnly>(value)
        .ok()
        .and_then(|m| m.metadata.uid)
}

impl Preconditions {
    pub fn check(&self, obj: &Object) -> Result<(), StorageError> {
        if let Some(want) = &self.uid {
            let have = uid_of(&obj.value).unwrap_or_default();
            if *want != have {
                return Err(precondition_failed(
                    &obj.key,
                    format!("Precondition failed: UID in precondition: {want}, UID in object meta: {have}"),
                ));
            }
        }
        if let Some(want) = &self.resource_version {
            if *want != obj.resource_version.to_string() {
                return Err(precondition_failed(
                    &obj.key,
                    format!(
                        "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {}",
                        obj.resource_version
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// etcd's default `--max-request-bytes`. The embedded store keeps the same
/// limit, so what a developer stores in kapi also fits a real cluster.
pub const MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// A write over etcd's request limit (key, value and a little framing).
fn within_request_limit(key: &str, value: &[u8]) -> Result<(), StorageError> {
    if key.len() + value.len() + 64 > MAX_REQUEST_BYTES {
        return Err(StorageError::RequestTooLarge);
    }
    Ok(())
}

/// upstream's `NewInvalidObjError` as its `StorageError` prints it; the
/// registry wraps it in a 409 Conflict.
pub fn precondition_failed(key: &str, why: String) -> StorageError {
    StorageError::Conflict {
        key: key.to_string(),
        message: format!(
            "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {why}"
        ),
    }
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RvMatch {
    NotOlderThan,
    Exact,
}

/// Filters stored objects (label and field selectors, decoded by the caller).
pub type Predicate = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

#[derive(Clone, Default)]
pub struct ListOptions {
    /// `None`: the latest (a consistent read).
    pub resource_version: Option<i64>,
    pub rv_match: Option<RvMatch>,
    /// 0: everything.
    pub limit: i64,
    pub continue_token: Option<String>,
    pub predicate: Option<Predicate>,
}

#[derive(Debug, Clone, Default)]
pub struct ListResult {
    pub items: Vec<Object>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: i64,
    start: String,
}

/// upstream's continue token: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":KEY}`,
/// with the key relative to the listed prefix.
pub fn encode_continue(rv: i64, start_relative: &str) -> String {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: start_relative.to_string(),
    };
    base64::engine::general_purpose::URL_SAFE.encode(serde_json::to_vec(&token).unwrap_or_default())
}

pub fn decode_continue(token: &str) -> Result<(i64, String), StorageError> {
    let bad = || {
        StorageError::BadRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into())
    };
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(token))
        .map_err(|_| bad())?;
    let t: ContinueToken = serde_json::from_slice(&raw).map_err(|_| bad())?;
    // -1 is upstream's "go on at the latest revision" (after an expired token).
    if t.v != "meta.k8s.io/v1" || t.rv == 0 || t.rv < -1 || t.start.contains("..") {
        return Err(bad());
    }
    Ok((t.rv.max(0), t.start))
}

/// The outcome of [`Store::swap`].
#[derive(Debug, Clone)]
pub enum Swap {
    /// Written; the object as stored.
    Done(Object),
    /// The key changed (or is gone): what it holds now.
    Changed(Option<Object>),
}

/// Most attempts of a guaranteed update before giving up on contention.
const MAX_UPDATE_ATTEMPTS: usize = 1000;

#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
    marks: Arc<WriteMarks>,
    /// The revision of the last write this server acknowledged, for
    /// controllers that wake on writes instead of polling.
    written: Arc<tokio::sync::watch::Sender<i64>>,
}

/// The revision of the last write this server acknowledged under each
/// prefix someone asked about: what an in-process cache (an informer)
/// must have reached before it answers for a client's next request, so a
/// client reads its own writes (a RoleBinding honoured at once).
#[derive(Default)]
pub struct WriteMarks {
    prefixes: parking_lot::RwLock<std::collections::HashMap<String, Arc<AtomicI64>>>,
}

impl WriteMarks {
    /// Looks up each `/`-ended prefix of `key` (a handful per key), so the
    /// cost does not grow with the number of marked prefixes.
    fn record(&self, key: &str, revision: i64) {
        let prefixes = self.prefixes.read();
        if prefixes.is_empty() {
            return;
        }
        for (i, _) in key.match_indices('/') {
            if let Some(mark) = prefixes.get(&key[..=i]) {
                mark.fetch_max(revision, Ordering::AcqRel);
            }
        }
    }

    fn mark(&self, prefix: &str) -> Arc<AtomicI64> {
        if let Some(m) = self.prefixes.read().get(prefix) {
            return m.clone();
        }
        self.prefixes
            .write()
            .entry(prefix.to_string())
            .or_default()
            .clone()
    }
}

impl Store {
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        Store {
            backend,
            marks: Arc::default(),
            written: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// Changes whenever this server acknowledges a write (to the write's
    /// revision). Writes by other servers sharing the storage are not
    /// seen here; who must see those follows the watch cache.
    pub fn subscribe_writes(&self) -> tokio::sync::watch::Receiver<i64> {
        self.written.subscribe()
    }

    /// The revision of the last acknowledged write under `prefix` (which
    /// ends with `/`), kept from now on (writes before the first call are
    /// not counted).
    pub fn write_mark(&self, prefix: &str) -> Arc<AtomicI64> {
        self.marks.mark(prefix)
    }

    fn applied(&self, key: &str, revision: i64) -> i64 {
        self.marks.record(key, revision);
        self.written.send_if_modified(|r| {
            let newer = revision > *r;
            if newer {
                *r = revision;
            }
            newer
        });
        revision
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// Stores a new object; `KeyExists` if the key is taken. Returns its resourceVersion.
    pub async fn create(&self, key: &str, value: Bytes) -> Result<i64, StorageError> {
        within_request_limit(key, &value)?;
        match self.backend.create(key, value).await? {
            TxnOutcome::Applied { revision } => Ok(self.applied(key, revision)),
            TxnOutcome::Failed { .. } => Err(StorageError::KeyExists {
                key: key.to_string(),
            }),
        }
    }

    pub async fn get(&self, key: &str) -> Result<Object, StorageError> {
        let (kv, _) = self.backend.get(key).await?;
        kv.map(Object::from_kv)
            .ok_or_else(|| StorageError::NotFound {
                key: key.to_string(),
            })
    }

    /// Lists keys under `prefix` (which ends with `/`).
    pub async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListResult, StorageError> {
        let end = prefix_end(prefix);
        let (revision, mut start, from_continue) = match &opts.continue_token {
            Some(token) => {
                if opts.resource_version.is_some_and(|rv| rv > 0) {
                    return Err(StorageError::BadRequest(
                        "specifying resource version is not allowed when using continue".into(),
                    ));
                }
                let (rv, rel) = decode_continue(token)?;
                (rv, format!("{prefix}{rel}"), true)
            }
            None => {
                let rev = match (opts.resource_version, opts.rv_match) {
                    (Some(rv), Some(RvMatch::Exact)) if rv > 0 => rv,
                    _ => 0,
                };
                (rev, prefix.to_string(), false)
            }
        };
        let page = if opts.limit > 0 { opts.limit } else { 0 };
        let mut result = ListResult::default();
        let mut read_rev = revision;
        loop {
            let resp = self
                .backend
                .range(RangeRequest {
                    start: start.clone(),
                    end: end.clone(),
                    revision: read_rev,
                    limit: page,
                    ..Default::default()
                })
                .await
                .map_err(|e| match e {
                    // upstream's handleCompactedErrorForPaging: the 410
                    // carries a token that goes on from the same key at the
                    // latest revision (-1), for clients that accept an
                    // inconsistent list.
                    BackendError::Compacted { .. } if from_continue => {
                        StorageError::ExpiredContinue {
                            message: EXPIRED_CONTINUE.into(),
                            continue_token: encode_continue(
                                -1,
                                start.strip_prefix(prefix).unwrap_or(""),
                            ),
                        }
                    }
                    BackendError::Compacted { .. } => StorageError::Expired(EXPIRED_LIST.into()),
                    BackendError::FutureRevision { requested, current } => {
                        StorageError::TooLargeResourceVersion { requested, current }
                    }
                    other => other.into(),
                })?;
            read_rev = resp.revision;
            let mut last_key = None;
            for kv in resp.kvs {
                last_key = Some(kv.key.clone());
                let keep = opts.predicate.as_ref().is_none_or(|p| p(&kv.value));
                if keep {
                    result.items.push(Object::from_kv(kv));
                }
                if page > 0 && result.items.len() as i64 >= page {
                    break;
                }
            }
            if page > 0 && result.items.len() as i64 >= page {
                let last = result
                    .items
                    .last()
                    .map(|o| o.key.clone())
                    .unwrap_or_default();
                // Anything after the last returned key means another page.
                let rest_start = format!("{last}\u{0}");
                let rest = self
                    .backend
                    .range(RangeRequest {
                        start: rest_start.clone(),
                        end: end.clone(),
                        revision: read_rev,
                        limit: 1,
                        ..Default::default()
                    })
                    .await?;
                if rest.count > 0 {
                    let rel = rest_start
                        .strip_prefix(prefix)
                        .unwrap_or(&rest_start)
                        .to_string();
                    result.continue_token = Some(encode_continue(read_rev, &rel));
                    if opts.predicate.is_none() {
                        result.remaining_item_count = Some(rest.count);
                    }
                }
                break;
            }
            match last_key {
                Some(k) if resp.more => start = format!("{k}\u{0}"),
                _ => break,
            }
        }
        result.resource_version = read_rev;
        Ok(result)
    }

    /// Read-modify-write with compare-and-swap on the key's revision,
    /// retried on contention. `update` sees the current object (or `None`
    /// when `ignore_not_found` and it does not exist) and returns the new
    /// value, or `None` to leave it unchanged (no new resourceVersion).
    pub async fn guaranteed_update<F>(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        mut update: F,
    ) -> Result<Object, StorageError>
    where
        F: FnMut(Option<&Object>) -> Result<Option<Bytes>, StorageError> + Send,
    {
        let (mut current, _) = self.backend.get(key).await?;
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let obj = current.clone().map(Object::from_kv);
            let Some(existing) = obj else {
                if !ignore_not_found {
                    return Err(StorageError::NotFound {
                        key: key.to_string(),
                    });
                }
                let Some(value) = update(None)? else {
                    return Err(StorageError::NotFound {
                        key: key.to_string(),
                    });
                };
                within_request_limit(key, &value)?;
                match self.backend.create(key, value.clone()).await? {
                    TxnOutcome::Applied { revision } => {
                        return Ok(Object {
                            key: key.to_string(),
                            value,
                            resource_version: self.applied(key, revision),
                            stale: false,
                        })
                    }
                    TxnOutcome::Failed { current: now } => {
                        current = now;
                        continue;
                    }
                }
            };
            preconditions.check(&existing)?;
            let Some(value) = update(Some(&existing))? else {
                return Ok(existing);
            };
            // A stale object is written again unchanged, to re-encrypt it.
            if value == existing.value && !existing.stale {
                return Ok(existing);
            }
            within_request_limit(key, &value)?;
            match self
                .backend
                .update(key, value.clone(), existing.resource_version)
                .await?
            {
                TxnOutcome::Applied { revision } => {
                    return Ok(Object {
                        key: key.to_string(),
                        value,
                        resource_version: self.applied(key, revision),
                        stale: false,
                    })
                }
                TxnOutcome::Failed { current: now } => current = now,
            }
        }
        Err(StorageError::Conflict {
            key: key.to_string(),
            message: CONFLICT_MODIFIED.into(),
        })
    }

    /// Deletes with preconditions; `validate` may refuse based on the
    /// current object. Returns the object as it was before deletion.
    pub async fn delete<F>(
        &self,
        key: &str,
        preconditions: &Preconditions,
        mut validate: F,
    ) -> Result<Object, StorageError>
    where
        F: FnMut(&Object) -> Result<(), StorageError> + Send,
    {
        let (mut current, _) = self.backend.get(key).await?;
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(kv) = current.clone() else {
                return Err(StorageError::NotFound {
                    key: key.to_string(),
                });
            };
            let existing = Object::from_kv(kv);
            preconditions.check(&existing)?;
            validate(&existing)?;
            match self.backend.delete(key, existing.resource_version).await? {
                TxnOutcome::Applied { revision } => {
                    self.applied(key, revision);
                    return Ok(existing);
                }
                TxnOutcome::Failed { current: now } => current = now,
            }
        }
        Err(StorageError::Conflict {
            key: key.to_string(),
            message: CONFLICT_MODIFIED.into(),
        })
    }

    /// Writes `value` if the key's resourceVersion is still `expected`.
    pub async fn swap(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        within_request_limit(key, &value)?;
        match self.backend.update(key, value.clone(), expected).await? {
            TxnOutcome::Applied { revision } => Ok(Swap::Done(Object {
                key: key.to_string(),
                value,
                resource_version: self.applied(key, revision),
                stale: false,
            })),
            TxnOutcome::Failed { current } => Ok(Swap::Changed(current.map(Object::from_kv))),
        }
    }

    /// How many objects live under `prefix` now.
    pub async fn count(&self, prefix: &str) -> Result<i64, StorageError> {
        let resp = self
            .backend
            .range(RangeRequest {
                start: prefix.to_string(),
                end: prefix_end(prefix),
                revision: 0,
                limit: 1,
                ..Default::default()
            })
            .await?;
        Ok(resp.count)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn continue_tokens_round_trip() {
        let t = super::encode_continue(12, "ns/name\u{0}");
        assert_eq!(
            super::decode_continue(&t).expect("decode"),
            (12, "ns/name\u{0}".to_string())
        );
        assert!(super::decode_continue("garbage!").is_err());
    }
}
