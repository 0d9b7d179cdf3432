//! The storage backend the targets write through: one valid object per
//! resource prefix, writes accepted and forgotten.

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::{json, Value};

use super::REV;
use crate::registry::meta;
use crate::storage::backend::{
    Backend, BackendError, KeyValue, RangeRequest, RangeResponse, TxnOutcome, WatchReceiver,
};

/// One object per resource prefix: `get` of any key under `root` answers
/// `object` with the key's namespace and name. Writes are accepted and
/// forgotten (the registry only writes when not a dry run).
#[derive(Default)]
pub(super) struct FuzzBackend {
    pub(super) objects: OnceLock<Vec<(String, bool, Value)>>,
}

#[async_trait::async_trait]
impl Backend for FuzzBackend {
    fn name(&self) -> &'static str {
        "fuzz"
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        for (root, namespaced, obj) in self.objects.get().into_iter().flatten() {
            let Some(rest) = key.strip_prefix(root.as_str()) else {
                continue;
            };
            let (ns, name) = if *namespaced {
                match rest.split_once('/') {
                    Some(x) => x,
                    None => return Ok((None, REV)),
                }
            } else {
                ("", rest)
            };
            let mut o = obj.clone();
            let m = meta::meta_mut(&mut o);
            m.insert("name".into(), json!(name));
            if *namespaced {
                m.insert("namespace".into(), json!(ns));
            }
            let kv = KeyValue {
                key: key.to_string(),
                value: Bytes::from(serde_json::to_vec(&o).unwrap_or_default()),
                create_revision: 2,
                mod_revision: REV,
                version: 1,
                stale: false,
            };
            return Ok((Some(kv), REV));
        }
        Ok((None, REV))
    }

    async fn range(&self, _req: RangeRequest) -> Result<RangeResponse, BackendError> {
        Ok(RangeResponse {
            revision: REV,
            ..Default::default()
        })
    }

    async fn create(&self, _key: &str, _value: Bytes) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn update(&self, _: &str, _: Bytes, _: i64) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn delete(&self, _key: &str, _: i64) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn watch(&self, _prefix: &str, _from: i64) -> Result<WatchReceiver, BackendError> {
        Err(BackendError::Unavailable(
            "the fuzz backend does not watch".into(),
        ))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        Ok(REV)
    }

    async fn compact(&self, _revision: i64) -> Result<(), BackendError> {
        Ok(())
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        Ok(1)
    }
}
