//! Encryption at rest (`--encryption-provider-config`), as upstream's value
//! transformers: an `EncryptionConfiguration` names, per resource, a list
//! of providers. The first one encrypts every write; on a read the value's
//! prefix (`k8s:enc:<provider>:v1:<key name>:`) picks the provider and key
//! that decrypt it, so keys rotate by putting a new key first and keeping
//! the old one behind it. A value read with any but the first is *stale*:
//! the next write of the object re-encrypts it, even one that changes
//! nothing.
//!
//! The wire formats are upstream's, so a store written by kube-apiserver
//! reads here and the other way round:
//! - `aescbc`: 16-byte IV, then AES-CBC with PKCS#7 padding;
//! - `aesgcm`: 12-byte nonce, then AES-GCM (tag appended), the storage key
//!   as additional data;
//! - `secretbox`: 24-byte nonce, then NaCl's secretbox (tag first);
//! - `identity`: the value as it is, with no prefix.
//!
//! The layer sits below the storage codec: it encrypts what the codec
//! wrote (JSON or protobuf) and hands back what the codec reads.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;

use super::backend::{
    Backend, BackendError, Event, KeyValue, RangeRequest, RangeResponse, TxnOutcome, WatchReceiver,
};
use super::dump::KeyLayout;

/// What every encrypted value starts with.
pub const ENCRYPTED_PREFIX: &[u8] = b"k8s:enc:";

const API_VERSION: &str = "apiserver.config.k8s.io/v1";
const KIND: &str = "EncryptionConfiguration";

#[derive(Clone)]
enum Cipher {
    Identity,
    AesCbc(Vec<u8>),
    AesGcm(Vec<u8>),
    Secretbox([u8; 32]),
}

/// One provider with one key, and the prefix its values carry.
#[derive(Clone)]
struct Transformer {
    prefix: Vec<u8>,
    cipher: Cipher,
}

/// One resource's providers in order: the first writes.
#[derive(Clone)]
pub struct Chain {
    transformers: Vec<Transformer>,
}

/// A value read back: its plaintext, and whether it was written with a
/// provider or key that no longer writes.
pub struct Decrypted {
    pub plain: Vec<u8>,
    pub stale: bool,
}

impl Chain {
    /// Encrypts with the first provider; `key` is the storage key, bound
    /// into AES-GCM's tag so a value cannot be moved to another key.
    fn encrypt(&self, key: &str, plain: &[u8]) -> Result<Vec<u8>, String> {
        let Some(t) = self.transformers.first() else {
            return Ok(plain.to_vec());
        };
        let mut out = t.prefix.clone();
        match &t.cipher {
            Cipher::Identity => out.extend_from_slice(plain),
            Cipher::AesCbc(k) => out.extend(aes_cbc_encrypt(k, plain)?),
            Cipher::AesGcm(k) => out.extend(aes_gcm_seal(k, key.as_bytes(), plain)?),
            Cipher::Secretbox(k) => out.extend(secretbox_seal(k, plain)?),
        }
        Ok(out)
    }

    /// upstream's prefix transformers: the first provider whose prefix the
    /// value carries decrypts it.
    pub fn decrypt(&self, key: &str, stored: &[u8]) -> Result<Decrypted, String> {
        for (i, t) in self.transformers.iter().enumerate() {
            let Some(body) = stored.strip_prefix(t.prefix.as_slice()) else {
                continue;
            };
            let plain = match &t.cipher {
                Cipher::Identity => {
                    if body.starts_with(ENCRYPTED_PREFIX) {
                        // Data of a provider this resource no longer lists.
                        continue;
                    }
                    body.to_vec()
                }
                Cipher::AesCbc(k) => aes_cbc_decrypt(k, body)?,
                Cipher::AesGcm(k) => aes_gcm_open(k, key.as_bytes(), body)?,
                Cipher::Secretbox(k) => secretbox_open(k, body)?,
            };
            return Ok(Decrypted {
                plain,
                stale: i != 0,
            });
        }
        if stored.starts_with(ENCRYPTED_PREFIX) {
            Err(format!(
                "no matching prefix found: the value is encrypted with {}, which the encryption configuration does not list for it",
                marker(stored).unwrap_or_default()
            ))
        } else {
            Err("no matching prefix found: the value is not encrypted and the encryption configuration lists no identity provider for it".into())
        }
    }
}

/// `aescbc:v1:key1` for a value encrypted at rest.
pub fn marker(stored: &[u8]) -> Option<String> {
    let rest = stored.strip_prefix(ENCRYPTED_PREFIX)?;
    let text = String::from_utf8_lossy(&rest[..rest.len().min(300)]).into_owned();
    let parts: Vec<&str> = text.splitn(4, ':').collect();
    (parts.len() == 4).then(|| parts[..3].join(":"))
}

fn random<const N: usize>() -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    aws_lc_rs::rand::fill(&mut b).map_err(|_| "no randomness for a nonce".to_string())?;
    Ok(b)
}

fn aes_algorithm(k: &[u8]) -> &'static aws_lc_rs::cipher::Algorithm {
    match k.len() {
        16 => &aws_lc_rs::cipher::AES_128,
        24 => &aws_lc_rs::cipher::AES_192,
        _ => &aws_lc_rs::cipher::AES_256,
    }
}

fn aes_cbc_encrypt(k: &[u8], plain: &[u8]) -> Result<Vec<u8>, String> {
    use aws_lc_rs::cipher::{EncryptionContext, PaddedBlockEncryptingKey, UnboundCipherKey};
    let fail = |_| "aescbc: encryption failed".to_string();
    let key = UnboundCipherKey::new(aes_algorithm(k), k).map_err(fail)?;
    let key = PaddedBlockEncryptingKey::cbc_pkcs7(key).map_err(fail)?;
    let iv = random::<16>()?;
    let mut data = plain.to_vec();
    key.less_safe_encrypt(&mut data, EncryptionContext::Iv128(iv.into()))
        .map_err(fail)?;
    let mut out = iv.to_vec();
    out.extend(data);
    Ok(out)
}

fn aes_cbc_decrypt(k: &[u8], body: &[u8]) -> Result<Vec<u8>, String> {
    use aws_lc_rs::cipher::{DecryptionContext, PaddedBlockDecryptingKey, UnboundCipherKey};
    // upstream's words for a value too short or not whole blocks.
    if body.len() < 16 {
        return Err("the stored data was shorter than the required size".into());
    }
    let (iv, data) = body.split_at(16);
    if data.is_empty() || data.len() % 16 != 0 {
        return Err("the stored data is not a multiple of the block size".into());
    }
    let fail = |_| "invalid PKCS7 data (empty or not padded)".to_string();
    let key = UnboundCipherKey::new(aes_algorithm(k), k).map_err(fail)?;
    let key = PaddedBlockDecryptingKey::cbc_pkcs7(key).map_err(fail)?;
    let iv: [u8; 16] = iv.try_into().map_err(|_| "short IV".to_string())?;
    let mut data = data.to_vec();
    let plain = key
        .decrypt(&mut data, DecryptionContext::Iv128(iv.into()))
        .map_err(fail)?;
    Ok(plain.to_vec())
}

fn gcm_key(k: &[u8]) -> Result<aws_lc_rs::aead::LessSafeKey, String> {
    use aws_lc_rs::aead::{LessSafeKey, UnboundKey, AES_128_GCM, AES_192_GCM, AES_256_GCM};
    let alg = match k.len() {
        16 => &AES_128_GCM,
        24 => &AES_192_GCM,
        _ => &AES_256_GCM,
    };
    UnboundKey::new(alg, k)
        .map(LessSafeKey::new)
        .map_err(|_| "aesgcm: bad key".to_string())
}

fn aes_gcm_seal(k: &[u8], aad: &[u8], plain: &[u8]) -> Result<Vec<u8>, String> {
    use aws_lc_rs::aead::{Aad, Nonce};
    let nonce = random::<12>()?;
    let mut data = plain.to_vec();
    gcm_key(k)?
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad),
            &mut data,
        )
        .map_err(|_| "aesgcm: encryption failed".to_string())?;
    let mut out = nonce.to_vec();
    out.extend(data);
    Ok(out)
}

fn aes_gcm_open(k: &[u8], aad: &[u8], body: &[u8]) -> Result<Vec<u8>, String> {
    use aws_lc_rs::aead::{Aad, Nonce};
    if body.len() < 12 + 16 {
        return Err("the stored data was shorter than the required size".into());
    }
    let (nonce, sealed) = body.split_at(12);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| "short nonce".to_string())?;
    let mut data = sealed.to_vec();
    let plain = gcm_key(k)?
        .open_in_place(nonce, Aad::from(aad), &mut data)
        .map_err(|_| "cipher: message authentication failed".to_string())?;
    Ok(plain.to_vec())
}

fn secretbox_seal(k: &[u8; 32], plain: &[u8]) -> Result<Vec<u8>, String> {
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    let nonce = random::<24>()?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new(k.into());
    let mut data = plain.to_vec();
    let tag = cipher
        .encrypt_in_place_detached(&nonce.into(), b"", &mut data)
        .map_err(|_| "secretbox: encryption failed".to_string())?;
    // NaCl's layout: nonce, tag, ciphertext.
    let mut out = nonce.to_vec();
    out.extend_from_slice(&tag);
    out.extend(data);
    Ok(out)
}

fn secretbox_open(k: &[u8; 32], body: &[u8]) -> Result<Vec<u8>, String> {
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    if body.len() < 24 + 16 {
        return Err("the stored data was shorter than the required size".into());
    }
    let (nonce, sealed) = body.split_at(24);
    let (tag, data) = sealed.split_at(16);
    let cipher = crypto_secretbox::XSalsa20Poly1305::new(k.into());
    let mut data = data.to_vec();
    let nonce: [u8; 24] = nonce.try_into().map_err(|_| "short nonce".to_string())?;
    let tag: [u8; 16] = tag.try_into().map_err(|_| "short tag".to_string())?;
    cipher
        .decrypt_in_place_detached(&nonce.into(), b"", &mut data, &tag.into())
        .map_err(|_| "output array was not large enough for encryption".to_string())?;
    Ok(data)
}

/// Which resources a rule covers, as the configuration names them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// `secrets`, `deployments.apps`.
    One { resource: String, group: String },
    /// `*.apps`; `*.` for the core group.
    Group(String),
    /// `*.*`.
    All,
}

impl Pattern {
    fn parse(s: &str) -> Pattern {
        match s {
            "*.*" => Pattern::All,
            _ => match s.split_once('.') {
                Some(("*", group)) => Pattern::Group(group.to_string()),
                Some((resource, group)) => Pattern::One {
                    resource: resource.to_string(),
                    group: group.to_string(),
                },
                None => Pattern::One {
                    resource: s.to_string(),
                    group: String::new(),
                },
            },
        }
    }

    /// Whether every resource `other` names is already named by `self`.
    fn covers(&self, other: &Pattern) -> bool {
        match (self, other) {
            (Pattern::All, _) => true,
            (Pattern::Group(g), Pattern::One { group, .. }) => g == group,
            (Pattern::Group(g), Pattern::Group(h)) => g == h,
            _ => false,
        }
    }

    fn matches(&self, group: &str, resource: &str) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Group(g) => g == group,
            Pattern::One {
                resource: r,
                group: g,
            } => r == resource && g == group,
        }
    }
}

/// As the configuration writes it (`*.`, `*.apps`, `secrets`).
impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pattern::All => write!(f, "*.*"),
            Pattern::Group(g) => write!(f, "*.{g}"),
            Pattern::One { resource, group } if group.is_empty() => write!(f, "{resource}"),
            Pattern::One { resource, group } => write!(f, "{resource}.{group}"),
        }
    }
}

/// A loaded `--encryption-provider-config`.
#[derive(Clone)]
pub struct EncryptionConfig {
    rules: Vec<(Vec<Pattern>, Arc<Chain>)>,
}

/// Never the keys.
impl std::fmt::Debug for EncryptionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncryptionConfig")
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl EncryptionConfig {
    /// Reads and checks the file; the error names the file and each field
    /// that is wrong, as upstream's validation does.
    pub fn load(path: &Path) -> Result<EncryptionConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "error reading encryption provider configuration file {}: {e}",
                crate::api::go_quote(&path.display().to_string())
            )
        })?;
        let doc: Value = serde_saphyr::from_str(&text).map_err(|e| {
            format!(
                "error decoding encryption provider configuration file {}: {e}",
                crate::api::go_quote(&path.display().to_string())
            )
        })?;
        EncryptionConfig::from_value(&doc)
            .map_err(|e| format!("error while parsing file: {}: {e}", path.display()))
    }

    fn from_value(doc: &Value) -> Result<EncryptionConfig, String> {
        let kind = doc["kind"].as_str().unwrap_or_default();
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        // upstream still registers the legacy v1 `EncryptionConfig`.
        let legacy = kind == "EncryptionConfig" && api_version == "v1";
        if !legacy && (kind != KIND || api_version != API_VERSION) {
            return Err(format!(
                "no kind {} is registered for version {}",
                crate::api::go_quote(kind),
                crate::api::go_quote(api_version)
            ));
        }
        let mut errors: Vec<String> = Vec::new();
        let empty = Vec::new();
        let entries = doc["resources"].as_array().unwrap_or(&empty);
        if entries.is_empty() {
            errors.push("resources: Required value: at least one resources is required".into());
        }
        let mut rules: Vec<(Vec<Pattern>, Arc<Chain>)> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("resources[{i}]");
            let names: Vec<&str> = entry["resources"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if names.is_empty() {
                errors.push(format!(
                    "{at}.resources: Required value: at least one {at}.resources is required"
                ));
            }
            let listed = || serde_json::to_string(&names).unwrap_or_default();
            if names.iter().collect::<HashSet<_>>().len() != names.len() {
                errors.push(format!(
                    "{at}.resources: Invalid value: {}: the same resource cannot be specified multiple times",
                    listed()
                ));
            }
            for (j, name) in names.iter().enumerate() {
                if name.chars().any(|c| c.is_ascii_uppercase()) {
                    errors.push(format!(
                        "{at}.resources[{j}]: Invalid value: {}: resource name should not contain capital letters",
                        crate::api::go_quote(name)
                    ));
                } else if *name == "*" {
                    errors.push(format!(
                        "{at}.resources[{j}]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
                    ));
                }
            }
            let providers = entry["providers"].as_array().unwrap_or(&empty);
            if providers.is_empty() {
                errors.push(format!(
                    "{at}.providers: Required value: at least one {at}.providers is required"
                ));
            }
            let mut transformers = Vec::new();
            for (j, p) in providers.iter().enumerate() {
                let at = format!("{at}.providers[{j}]");
                match provider(&at, p) {
                    Ok(t) => transformers.extend(t),
                    Err(e) => errors.extend(e),
                }
            }
            rules.push((
                names.into_iter().map(Pattern::parse).collect(),
                Arc::new(Chain { transformers }),
            ));
        }
        if !errors.is_empty() {
            errors.dedup();
            return Err(match errors.len() {
                1 => errors.remove(0),
                _ => format!("[{}]", errors.join(", ")),
            });
        }
        EncryptionConfig::build(rules)
    }

    /// upstream's transformer table: a resource named in several entries
    /// gets their providers one after the other; a name an earlier
    /// wildcard already covers is an error.
    fn build(entries: Vec<(Vec<Pattern>, Arc<Chain>)>) -> Result<EncryptionConfig, String> {
        let mut rules: Vec<(Vec<Pattern>, Arc<Chain>)> = Vec::new();
        for (i, (patterns, chain)) in entries.iter().enumerate() {
            for p in patterns {
                let masked_by = entries[..i]
                    .iter()
                    .flat_map(|(ps, _)| ps.iter())
                    .find(|earlier| *earlier != p && earlier.covers(p));
                if let Some(earlier) = masked_by {
                    return Err(format!(
                        "error while building transformers: resource {} is masked by earlier rule {}",
                        crate::api::go_quote(&p.to_string()),
                        crate::api::go_quote(&earlier.to_string())
                    ));
                }
                match rules
                    .iter_mut()
                    .find(|(ps, _)| ps.len() == 1 && ps[0] == *p)
                {
                    Some((_, existing)) => {
                        let mut joined = existing.transformers.clone();
                        joined.extend(chain.transformers.iter().cloned());
                        *existing = Arc::new(Chain {
                            transformers: joined,
                        });
                    }
                    None => rules.push((vec![p.clone()], chain.clone())),
                }
            }
        }
        Ok(EncryptionConfig { rules })
    }

    /// The providers of a resource; `None` when it is stored as it is.
    /// The resource's own entry wins over `*.<group>`, which wins over `*.*`.
    pub fn chain_for(&self, group: &str, resource: &str) -> Option<&Arc<Chain>> {
        let find = |want: &dyn Fn(&Pattern) -> bool| {
            self.rules
                .iter()
                .find(|(ps, _)| ps.iter().any(want))
                .map(|(_, c)| c)
        };
        find(&|p| matches!(p, Pattern::One { .. }) && p.matches(group, resource))
            .or_else(|| find(&|p| matches!(p, Pattern::Group(_)) && p.matches(group, resource)))
            .or_else(|| find(&|p| *p == Pattern::All))
    }
}

/// The transformers of one provider entry (one per key), or its errors.
fn provider(at: &str, p: &Value) -> Result<Vec<Transformer>, Vec<String>> {
    const KINDS: &[&str] = &["aesgcm", "aescbc", "secretbox", "identity", "kms"];
    let present: Vec<&str> = KINDS
        .iter()
        .copied()
        .filter(|k| p.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    match present.as_slice() {
        [] => Err(vec![format!(
            "{at}: Invalid value: \"providers\": provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
        )]),
        [one] => match *one {
            "identity" => Ok(vec![Transformer {
                prefix: Vec::new(),
                cipher: Cipher::Identity,
            }]),
            "kms" => Err(vec![format!(
                "{at}.kms: Forbidden: KMS providers are not supported by kapi (no KMS plugin can be reached from it)"
            )]),
            kind => keyed(&format!("{at}.{kind}"), kind, &p[kind]),
        },
        many => Err(vec![format!(
            "{at}: Invalid value: \"providers\": more than one provider specified in a single element, should split into different list elements: {}",
            many.join(", ")
        )]),
    }
}

fn keyed(at: &str, kind: &str, p: &Value) -> Result<Vec<Transformer>, Vec<String>> {
    let empty = Vec::new();
    let keys = p["keys"].as_array().unwrap_or(&empty);
    if keys.is_empty() {
        return Err(vec![format!(
            "{at}.keys: Required value: keys (list of at least one key) is required"
        )]);
    }
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let at = format!("{at}.keys[{i}]");
        let name = k["name"].as_str().unwrap_or_default();
        let secret = k["secret"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.push(format!(
                "{at}.name: Required value: name is a mandatory field for a key"
            ));
        }
        if secret.is_empty() {
            errors.push(format!(
                "{at}.secret: Required value: secret is a mandatory field for a key"
            ));
            continue;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(secret) else {
            errors.push(format!(
                "{at}.secret: Invalid value: \"REDACTED\": secrets must be base64 encoded"
            ));
            continue;
        };
        let cipher = match (kind, bytes.len()) {
            ("aescbc" | "aesgcm", 16 | 24 | 32) if kind == "aescbc" => Cipher::AesCbc(bytes),
            ("aescbc" | "aesgcm", 16 | 24 | 32) => Cipher::AesGcm(bytes),
            ("secretbox", 32) => match <[u8; 32]>::try_from(bytes.as_slice()) {
                Ok(k) => Cipher::Secretbox(k),
                Err(_) => continue,
            },
            ("secretbox", n) => {
                errors.push(format!(
                    "{at}.secret: Invalid value: \"REDACTED\": secret is not of the expected length, got {n}, expected one of [32]"
                ));
                continue;
            }
            (_, n) => {
                errors.push(format!(
                    "{at}.secret: Invalid value: \"REDACTED\": secret is not of the expected length, got {n}, expected one of [16 24 32]"
                ));
                continue;
            }
        };
        out.push(Transformer {
            prefix: format!("k8s:enc:{kind}:v1:{name}:").into_bytes(),
            cipher,
        });
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A [`Backend`] that encrypts values on the way in and decrypts them on
/// the way out, per the resource each key belongs to.
pub struct Encrypted {
    inner: Arc<dyn Backend>,
    keys: Arc<Keys>,
}

/// The configuration, and where each key belongs; shared with watches.
struct Keys {
    config: EncryptionConfig,
    layout: KeyLayout,
    /// Keys already reported as undecryptable (each is logged once).
    reported: parking_lot::Mutex<HashSet<String>>,
}

impl Encrypted {
    pub fn new(inner: Arc<dyn Backend>, config: EncryptionConfig, layout: KeyLayout) -> Encrypted {
        Encrypted {
            inner,
            keys: Arc::new(Keys {
                config,
                layout,
                reported: parking_lot::Mutex::new(HashSet::new()),
            }),
        }
    }
}

impl Keys {
    fn chain(&self, key: &str) -> Option<&Arc<Chain>> {
        let info = self.layout.parse(key);
        self.config.chain_for(&info.group, &info.resource)
    }

    fn encrypt(&self, key: &str, value: Bytes) -> Result<Bytes, BackendError> {
        match self.chain(key) {
            Some(chain) => chain
                .encrypt(key, &value)
                .map(Bytes::from)
                .map_err(|e| BackendError::Internal(format!("encrypting {key}: {e}"))),
            None => Ok(value),
        }
    }

    fn decrypt_kv(&self, mut kv: KeyValue) -> Result<KeyValue, (KeyValue, String)> {
        let Some(chain) = self.chain(&kv.key) else {
            return Ok(kv);
        };
        match chain.decrypt(&kv.key, &kv.value) {
            Ok(d) => {
                kv.value = Bytes::from(d.plain);
                kv.stale = d.stale;
                Ok(kv)
            }
            Err(why) => Err((kv, why)),
        }
    }

    fn report(&self, key: &str, why: &str) {
        if self.reported.lock().insert(key.to_string()) {
            tracing::error!(
                key,
                reason = why,
                "stored value cannot be decrypted; skipped"
            );
        }
    }

    fn decrypt_one(&self, kv: KeyValue) -> Result<KeyValue, BackendError> {
        self.decrypt_kv(kv).map_err(|(kv, why)| {
            self.report(&kv.key, &why);
            BackendError::Corrupt(format!(
                "the value stored at {} cannot be decrypted: {why}",
                kv.key
            ))
        })
    }

    fn decrypt_outcome(&self, outcome: TxnOutcome) -> Result<TxnOutcome, BackendError> {
        Ok(match outcome {
            TxnOutcome::Failed { current: Some(kv) } => TxnOutcome::Failed {
                current: Some(self.decrypt_one(kv)?),
            },
            other => other,
        })
    }

    /// A watch event decrypted; `None` (reported once) when it cannot be.
    fn event(&self, mut ev: Event) -> Option<Event> {
        if let Some(prev) = ev.prev.take() {
            ev.prev = self.decrypt_kv(prev).ok();
        }
        if ev.kv.value.is_empty() {
            return Some(ev);
        }
        match self.decrypt_kv(ev.kv) {
            Ok(kv) => {
                ev.kv = kv;
                Some(ev)
            }
            Err((kv, why)) => {
                self.report(&kv.key, &why);
                None
            }
        }
    }
}

#[async_trait::async_trait]
impl Backend for Encrypted {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        let (kv, rev) = self.inner.get(key).await?;
        Ok((kv.map(|kv| self.keys.decrypt_one(kv)).transpose()?, rev))
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError> {
        let mut resp = self.inner.range(req).await?;
        resp.kvs = std::mem::take(&mut resp.kvs)
            .into_iter()
            .filter_map(|kv| match self.keys.decrypt_kv(kv) {
                Ok(kv) => Some(kv),
                Err((kv, why)) => {
                    self.keys.report(&kv.key, &why);
                    None
                }
            })
            .collect();
        Ok(resp)
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError> {
        let outcome = self
            .inner
            .create(key, self.keys.encrypt(key, value)?)
            .await?;
        self.keys.decrypt_outcome(outcome)
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        let outcome = self
            .inner
            .update(key, self.keys.encrypt(key, value)?, expected_mod_revision)
            .await?;
        self.keys.decrypt_outcome(outcome)
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        let outcome = self.inner.delete(key, expected_mod_revision).await?;
        self.keys.decrypt_outcome(outcome)
    }

    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError> {
        let keys = self.keys.clone();
        Ok(self
            .inner
            .watch(prefix, from_revision)
            .await?
            .map_events(move |ev| keys.event(ev)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Result<EncryptionConfig, String> {
        let doc: Value = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
        EncryptionConfig::from_value(&doc)
    }

    const B16: &str = "MTIzNDU2Nzg5MDEyMzQ1Ng=="; // 16 bytes
    const B32: &str = "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="; // 32 bytes

    fn one(provider: &str, secret: &str) -> String {
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - {provider}:\n      keys:\n      - name: key1\n        secret: {secret}\n"
        )
    }

    #[test]
    fn every_provider_round_trips_with_upstreams_layout() {
        for (provider, secret, nonce) in [
            ("aescbc", B16, 16),
            ("aescbc", B32, 16),
            ("aesgcm", B16, 12),
            ("aesgcm", B32, 12),
            ("secretbox", B32, 24),
        ] {
            let c = config(&one(provider, secret)).expect("config");
            let chain = c.chain_for("", "secrets").expect("secrets are covered");
            let key = "/registry/secrets/default/s";
            let stored = chain.encrypt(key, b"plain text").expect("encrypt");
            let prefix = format!("k8s:enc:{provider}:v1:key1:");
            assert!(stored.starts_with(prefix.as_bytes()), "{provider}");
            assert!(
                !stored.windows(5).any(|w| w == b"plain"),
                "{provider}: plaintext at rest"
            );
            assert!(stored.len() >= prefix.len() + nonce + 10, "{provider}");
            let back = chain.decrypt(key, &stored).expect("decrypt");
            assert_eq!(back.plain, b"plain text", "{provider}");
            assert!(!back.stale);
            assert_eq!(
                marker(&stored).as_deref(),
                Some(&*format!("{provider}:v1:key1"))
            );
            // Nothing else is covered.
            assert!(c.chain_for("", "configmaps").is_none());
        }
    }

    #[test]
    fn aes_gcm_binds_the_value_to_its_key() {
        let c = config(&one("aesgcm", B32)).expect("config");
        let chain = c.chain_for("", "secrets").expect("chain");
        let stored = chain
            .encrypt("/registry/secrets/a/one", b"x")
            .expect("encrypt");
        assert!(chain.decrypt("/registry/secrets/a/other", &stored).is_err());
    }

    #[test]
    fn rotation_reads_old_keys_as_stale_and_identity_reads_plain_values() {
        let old = config(&one("aescbc", B16)).expect("old");
        let stored = old
            .chain_for("", "secrets")
            .expect("chain")
            .encrypt("/k", b"v")
            .expect("encrypt");
        let rotated = config(&format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ['*.*']\n  providers:\n  - secretbox:\n      keys:\n      - name: key2\n        secret: {B32}\n  - aescbc:\n      keys:\n      - name: key1\n        secret: {B16}\n  - identity: {{}}\n"
        ))
        .expect("rotated");
        let chain = rotated.chain_for("apps", "deployments").expect("all");
        let back = chain.decrypt("/k", &stored).expect("old key still reads");
        assert_eq!((back.plain.as_slice(), back.stale), (&b"v"[..], true));
        let plain = chain.decrypt("/k", b"{}").expect("identity reads");
        assert!(plain.stale);
        let fresh = chain.encrypt("/k", b"v").expect("encrypt");
        assert!(fresh.starts_with(b"k8s:enc:secretbox:v1:key2:"));
        // Without identity, a plain value or an unknown key is an error.
        let strict = config(&one("aescbc", B32)).expect("strict");
        let chain = strict.chain_for("", "secrets").expect("chain");
        assert!(chain.decrypt("/k", b"{}").is_err());
        assert!(chain.decrypt("/k", &fresh).is_err());
    }

    #[test]
    fn wrong_configurations_name_each_field() {
        let e = config(&one("aescbc", "bm90IGEga2V5"))
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("resources[0].providers[0].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 9, expected one of [16 24 32]"),
            "{e}"
        );
        let e = config(&one("secretbox", B16)).err().unwrap_or_default();
        assert!(e.contains("expected one of [32]"), "{e}");
        let e = config(&one("aesgcm", "\"%%%\"")).err().unwrap_or_default();
        assert!(e.contains("secrets must be base64 encoded"), "{e}");
        let e = config("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: a, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}]}\n    identity: {}\n").err().unwrap_or_default();
        assert!(
            e.contains("more than one provider specified in a single element"),
            "{e}"
        );
        let e = config("apiVersion: v9\nkind: EncryptionConfig\n")
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("no kind \"EncryptionConfig\" is registered"),
            "{e}"
        );
        // upstream's legacy kind still reads.
        let legacy = one("aescbc", B16).replace(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration",
            "apiVersion: v1\nkind: EncryptionConfig",
        );
        assert!(config(&legacy).is_ok());
        let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
        let e = config(&format!("{head}resources: []\n"))
            .err()
            .unwrap_or_default();
        assert_eq!(
            e,
            "resources: Required value: at least one resources is required"
        );
        let e = config(&format!(
            "{head}resources:\n- resources: [Secrets, secrets, secrets]\n  providers: [{{identity: {{}}}}]\n"
        ))
        .err()
        .unwrap_or_default();
        assert_eq!(
            e,
            "[resources[0].resources: Invalid value: [\"Secrets\",\"secrets\",\"secrets\"]: the same resource cannot be specified multiple times, resources[0].resources[0]: Invalid value: \"Secrets\": resource name should not contain capital letters]"
        );
    }

    #[test]
    fn entries_for_one_resource_join_and_wildcards_mask_later_names() {
        let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
        let two = format!(
            "{head}resources:\n- resources: [secrets]\n  providers: [{{secretbox: {{keys: [{{name: a, secret: {B32}}}]}}}}]\n- resources: [secrets, '*.*']\n  providers: [{{aescbc: {{keys: [{{name: b, secret: {B16}}}]}}}}]\n"
        );
        let c = config(&two).expect("config");
        let secrets = c.chain_for("", "secrets").expect("secrets");
        let old = c
            .chain_for("apps", "deployments")
            .expect("*.*")
            .encrypt("/k", b"v")
            .expect("encrypt");
        // secretbox writes; the second entry's aescbc key still reads.
        assert!(secrets
            .encrypt("/k", b"v")
            .expect("enc")
            .starts_with(b"k8s:enc:secretbox:v1:a:"));
        assert!(secrets.decrypt("/k", &old).expect("reads").stale);
        let masked = format!(
            "{head}resources:\n- resources: ['*.']\n  providers: [{{identity: {{}}}}]\n- resources: [secrets]\n  providers: [{{identity: {{}}}}]\n"
        );
        assert_eq!(
            config(&masked).err().unwrap_or_default(),
            "error while building transformers: resource \"secrets\" is masked by earlier rule \"*.\""
        );
    }
}
