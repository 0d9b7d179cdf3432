//! The storage codec: how objects are encoded at rest (`--storage-media-type`),
//! as upstream's storage codec does it between the registry and etcd.
//!
//! Everything above this layer (the store, the watch cache, the registry)
//! works on JSON. Writes of built-in kinds are encoded in the configured
//! media type; custom resources and anything that is not a built-in object
//! stay JSON, as upstream keeps them. Reads accept both encodings per key,
//! so one store can hold a mix: data written by kube-apiserver (protobuf),
//! by kapi with either setting, or both.

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::backend::{
    Backend, BackendError, Event, KeyValue, RangeRequest, RangeResponse, TxnOutcome, WatchReceiver,
};
use crate::api::protobuf;

/// How built-in objects are written (`--storage-media-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MediaType {
    /// `application/json`: kapi's default, readable with any etcd tool.
    #[default]
    Json,
    /// `application/vnd.kubernetes.protobuf`: kube-apiserver's default.
    Protobuf,
}

impl MediaType {
    pub const JSON: &'static str = "application/json";
    pub const PROTOBUF: &'static str = "application/vnd.kubernetes.protobuf";

    pub fn parse(s: &str) -> Result<MediaType, String> {
        match s {
            MediaType::JSON => Ok(MediaType::Json),
            MediaType::PROTOBUF => Ok(MediaType::Protobuf),
            other => Err(format!(
                "\"{other}\" is not supported; use {} or {}",
                MediaType::JSON,
                MediaType::PROTOBUF
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Json => MediaType::JSON,
            MediaType::Protobuf => MediaType::PROTOBUF,
        }
    }
}

/// A [`Backend`] that encodes values on the way in and decodes them on the
/// way out.
pub struct Codec {
    inner: Arc<dyn Backend>,
    media_type: MediaType,
    /// Keys already reported as undecodable (each is logged once), and kinds
    /// whose protobuf form would lose something (kept in JSON, logged once).
    reported: parking_lot::Mutex<HashSet<String>>,
}

impl Codec {
    pub fn new(inner: Arc<dyn Backend>, media_type: MediaType) -> Codec {
        Codec {
            inner,
            media_type,
            reported: parking_lot::Mutex::new(HashSet::new()),
        }
    }

    fn first_report(&self, what: &str) -> bool {
        self.reported.lock().insert(what.to_string())
    }

    /// The value to store for a JSON object.
    fn encode(&self, value: Bytes) -> Bytes {
        if self.media_type == MediaType::Json || value.first() != Some(&b'{') {
            return value;
        }
        let Ok(obj) = serde_json::from_slice::<Value>(&value) else {
            return value;
        };
        let (Some(api_version), Some(kind)) = (
            obj.get("apiVersion").and_then(Value::as_str),
            obj.get("kind").and_then(Value::as_str),
        ) else {
            return value;
        };
        if !protobuf::has_message(api_version, kind) {
            // Custom resources have no protobuf form upstream either.
            return value;
        }
        // The object must read back as written: a field the protobuf schema
        // does not have would be lost, so such an object stays JSON.
        let encoded = protobuf::encode(&obj).map_err(|e| e.to_string());
        let checked = encoded.and_then(|pb| match protobuf::decode(&pb) {
            Ok(back) => reads_back("", &obj, &back).map(|()| pb),
            Err(e) => Err(e.to_string()),
        });
        match checked {
            Ok(pb) => Bytes::from(pb),
            Err(why) => {
                if self.first_report(&format!("encode {api_version} {kind}")) {
                    tracing::warn!(
                        api_version,
                        kind,
                        reason = %why,
                        "object kept in JSON: its protobuf form would not read back the same"
                    );
                }
                value
            }
        }
    }

    /// The JSON of a stored value; `Err` (with the reason) when it is
    /// protobuf that cannot be decoded.
    fn decode_value(value: &Bytes) -> Result<Bytes, String> {
        if !protobuf::is_protobuf(value) {
            return Ok(value.clone());
        }
        protobuf::decode(value)
            .map(|v| Bytes::from(crate::api::go_json::to_vec(&v)))
            .map_err(|e| e.to_string())
    }

    fn decode_kv(&self, mut kv: KeyValue) -> Result<KeyValue, (KeyValue, String)> {
        match Codec::decode_value(&kv.value) {
            Ok(v) => {
                kv.value = v;
                Ok(kv)
            }
            Err(why) => Err((kv, why)),
        }
    }

    /// Logs an undecodable key once.
    fn report(&self, key: &str, why: &str) {
        if self.first_report(key) {
            tracing::error!(key, reason = why, "stored value cannot be decoded; skipped");
        }
    }

    /// A key read on its own: undecodable is an error naming the key.
    fn decode_one(&self, kv: KeyValue) -> Result<KeyValue, BackendError> {
        self.decode_kv(kv).map_err(|(kv, why)| {
            self.report(&kv.key, &why);
            BackendError::Corrupt(format!(
                "the value stored at {} cannot be decoded: {why}",
                kv.key
            ))
        })
    }

    fn decode_outcome(&self, outcome: TxnOutcome) -> Result<TxnOutcome, BackendError> {
        Ok(match outcome {
            TxnOutcome::Failed { current: Some(kv) } => TxnOutcome::Failed {
                current: Some(self.decode_one(kv)?),
            },
            other => other,
        })
    }
}

/// Whether `got` (the object read back from protobuf) keeps everything in
/// `want` (the JSON written); else the first path where it does not.
///
/// A field that reads back absent is kept when its value was empty (null,
/// `""`, 0, false, `[]`, `{}`): protobuf cannot tell those from absent, and
/// upstream's JSON leaves them out too (`omitempty`).
fn reads_back(path: &str, want: &Value, got: &Value) -> Result<(), String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(w) => reads_back(&p, v, w)?,
                    None if is_empty(v) => {}
                    None => return Err(format!("{p} is lost")),
                }
            }
            match b.keys().find(|k| !a.contains_key(*k)) {
                Some(k) => Err(format!("{path}.{k} is added")),
                None => Ok(()),
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (v, w))| reads_back(&format!("{path}[{i}]"), v, w)),
        _ if want == got => Ok(()),
        _ => Err(format!("{path}: {want} reads back as {got}")),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

#[async_trait::async_trait]
impl Backend for Codec {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        let (kv, rev) = self.inner.get(key).await?;
        Ok((kv.map(|kv| self.decode_one(kv)).transpose()?, rev))
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError> {
        let mut resp = self.inner.range(req).await?;
        if resp.kvs.iter().any(|kv| protobuf::is_protobuf(&kv.value)) {
            resp.kvs = std::mem::take(&mut resp.kvs)
                .into_iter()
                .filter_map(|kv| match self.decode_kv(kv) {
                    Ok(kv) => Some(kv),
                    Err((kv, why)) => {
                        self.report(&kv.key, &why);
                        None
                    }
                })
                .collect();
        }
        Ok(resp)
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError> {
        let outcome = self.inner.create(key, self.encode(value)).await?;
        self.decode_outcome(outcome)
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        let outcome = self
            .inner
            .update(key, self.encode(value), expected_mod_revision)
            .await?;
        self.decode_outcome(outcome)
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        let outcome = self.inner.delete(key, expected_mod_revision).await?;
        self.decode_outcome(outcome)
    }

    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError> {
        let mut codec = WatchDecoder {
            reported: HashSet::new(),
        };
        Ok(self
            .inner
            .watch(prefix, from_revision)
            .await?
            .map_events(move |ev| codec.event(ev)))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        self.inner.current_revision().await
    }

    async fn current_revision_of(&self, prefix: &str) -> Result<i64, BackendError> {
        self.inner.current_revision_of(prefix).await
    }

    fn current_revision_now(&self, prefix: &str) -> Option<i64> {
        self.inner.current_revision_now(prefix)
    }

    fn progress_is_reliable(&self) -> bool {
        self.inner.progress_is_reliable()
    }

    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        self.inner.compact(revision).await
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        self.inner.compacted_revision().await
    }

    async fn close(&self) {
        self.inner.close().await
    }
}

/// Decodes a watch's events; what cannot be decoded is reported once per
/// key and left out.
struct WatchDecoder {
    reported: HashSet<String>,
}

impl WatchDecoder {
    fn event(&mut self, mut ev: Event) -> Option<Event> {
        if let Some(prev) = ev.prev.take() {
            // A delete carries the value it removed: without it the cache
            // still knows the object it kept.
            ev.prev = Codec::decode_value(&prev.value)
                .ok()
                .map(|value| KeyValue { value, ..prev });
        }
        if ev.kv.value.is_empty() {
            return Some(ev);
        }
        match Codec::decode_value(&ev.kv.value) {
            Ok(v) => {
                ev.kv.value = v;
                Some(ev)
            }
            Err(why) => {
                if self.reported.insert(ev.kv.key.clone()) {
                    tracing::error!(
                        key = %ev.kv.key,
                        reason = %why,
                        "stored value cannot be decoded; change skipped"
                    );
                }
                None
            }
        }
    }
}
