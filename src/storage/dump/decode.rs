//! Decoding a stored value for the dump: kapi's JSON, upstream's
//! protobuf envelope, text, or a described undecodable (encrypted values
//! decrypted first), and the `Entry` each key becomes.

use serde::Serialize;
use serde_json::Value;

use super::super::backend::KeyValue;
use super::super::encryption::EncryptionConfig;
use super::KeyInfo;
use crate::api::protobuf;

/// A value as it was decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// kapi's encoding.
    Json(Value),
    /// upstream's protobuf envelope, as the object's JSON.
    Protobuf(Value),
    /// Printable UTF-8 that is not JSON (upstream's `compact_rev_key`, say).
    Text(String),
    /// Bytes nothing here reads, shown by size and a hex prefix.
    Undecodable {
        shown: String,
        reason: Option<String>,
    },
}

/// How many bytes of an undecodable value are shown in hex.
const HEX_PREFIX: usize = 32;

fn undecodable(bytes: &[u8], reason: Option<String>) -> Decoded {
    let hex: String = bytes
        .iter()
        .take(HEX_PREFIX)
        .map(|b| format!("{b:02x}"))
        .collect();
    let more = if bytes.len() > HEX_PREFIX { "..." } else { "" };
    Decoded::Undecodable {
        shown: format!("<undecodable: {} bytes: {hex}{more}>", bytes.len()),
        reason,
    }
}

/// Decodes a stored value: JSON, the protobuf envelope, or text; anything
/// else is described, never printed raw.
pub fn decode_value(bytes: &[u8]) -> Decoded {
    if protobuf::is_protobuf(bytes) {
        return match protobuf::decode(bytes) {
            Ok(v) => Decoded::Protobuf(v),
            Err(e) => undecodable(bytes, Some(format!("protobuf: {e}"))),
        };
    }
    if let Some(rest) = bytes.strip_prefix(b"k8s:enc:") {
        // upstream's encryption at rest: `k8s:enc:<provider>:v1:<key>:`.
        let provider: String = String::from_utf8_lossy(rest)
            .splitn(4, ':')
            .take(3)
            .collect::<Vec<_>>()
            .join(":");
        return undecodable(bytes, Some(format!("encrypted at rest ({provider})")));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
            return Decoded::Json(v);
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(s)
            if !s
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) =>
        {
            Decoded::Text(s.to_string())
        }
        _ => undecodable(bytes, None),
    }
}

/// One key, as the dump shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub key: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    pub create_revision: i64,
    pub mod_revision: i64,
    pub version: i64,
    /// Bytes of the stored value.
    pub size: usize,
    /// `json`, `protobuf`, `text` or `undecodable`; absent with keys only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<&'static str>,
    /// `aescbc:v1:key1`: the provider and key the value is encrypted
    /// with at rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// Why the value could not be decoded, when that is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl Entry {
    pub fn new(
        kv: &KeyValue,
        info: KeyInfo,
        keys_only: bool,
        encryption: Option<&EncryptionConfig>,
    ) -> Entry {
        let marker = super::super::encryption::marker(&kv.value);
        let chain = encryption.and_then(|c| c.chain_for(&info.group, &info.resource));
        let mut e = Entry {
            key: kv.key.clone(),
            group: info.group,
            resource: info.resource,
            namespace: info.namespace,
            name: info.name,
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
            size: kv.value.len(),
            encoding: None,
            encryption: marker.clone(),
            error: None,
            value: None,
        };
        if !keys_only {
            let decrypted = match (&marker, chain) {
                (Some(_), Some(chain)) => Some(chain.decrypt(&kv.key, &kv.value)),
                _ => None,
            };
            let decoded = match decrypted {
                Some(Ok(d)) => decode_value(&d.plain),
                Some(Err(why)) => undecodable(&kv.value, Some(format!("cannot decrypt: {why}"))),
                None => decode_value(&kv.value),
            };
            let (encoding, value, error) = match decoded {
                Decoded::Json(v) => ("json", v, None),
                Decoded::Protobuf(v) => ("protobuf", v, None),
                Decoded::Text(s) => ("text", Value::String(s), None),
                Decoded::Undecodable { shown, reason } => {
                    ("undecodable", Value::String(shown), reason)
                }
            };
            e.encoding = Some(encoding);
            e.value = Some(value);
            e.error = error;
        }
        e
    }

    /// `configmaps`, `deployments.apps`.
    pub fn resource_name(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}
