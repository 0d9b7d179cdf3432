//! `kapi etcd dump`: the keys under a prefix with their revisions and
//! decoded values, from the embedded store or etcd, read page by page at
//! one revision and written out as they come (constant memory).
//!
//! Keys follow upstream's layout below the prefix (`/registry`):
//! `<path>/<namespace>/<name>` or `<path>/<name>`, where `<path>` is the
//! catalog's storage path of a resource (`pods`, `services/specs`,
//! `apiextensions.k8s.io/customresourcedefinitions`) or `<group>/<plural>`
//! for custom resources. Values are kapi's JSON, upstream's protobuf
//! envelope (`k8s\0`), or shown as undecodable.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::backend::{prefix_end, Backend, BackendError, KeyValue, RangeRequest};
use super::embedded::{Embedded, ReadOnlyError};
use super::encryption::EncryptionConfig;
use super::etcd::{Etcd, EtcdConfig};
use crate::api::catalog::Catalog;
use crate::api::protobuf;

/// Keys read per request.
pub const PAGE_SIZE: i64 = 500;

/// Why a dump failed.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The flags do not make sense together (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The store could not be opened or read (exit code 1).
    #[error("{0}")]
    Storage(String),
    /// Writing the output failed (a closed pipe among others).
    #[error("writing output: {0}")]
    Output(#[from] io::Error),
}

/// A store opened for dumping.
pub struct Source {
    pub backend: Arc<dyn Backend>,
    /// How the store was read, when that is worth telling (a copy).
    pub note: Option<String>,
    // Dropped after the backend: the copy is removed once it is closed.
    _scratch: Option<Scratch>,
}

/// A private directory for a copy of the store, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Scratch, DumpError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("kapi-etcd-dump-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| {
            DumpError::Storage(format!(
                "cannot create {} for a copy of the store: {e}",
                dir.display()
            ))
        })?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens the embedded store of a data dir (`DIR/store/kapi.redb`) for
/// reading, also while a kapi is serving from it.
///
/// Without a kapi running, the file is opened read-only in place (shared
/// with other readers, unchanged). While a kapi serves from it, redb's
/// exclusive lock keeps every other process out, so a consistent copy is
/// read instead ([`Embedded::open_snapshot`] explains why that is sound);
/// the same holds for a store a kapi did not close cleanly, whose in-place
/// reading would need recovery, a write. The copy lives in the system's
/// temporary directory until the dump ends.
pub fn open_data_dir(data_dir: &Path) -> Result<Source, DumpError> {
    let flag = |m: String| DumpError::Storage(format!("--data-dir {}: {m}", data_dir.display()));
    if !data_dir.is_dir() {
        return Err(flag("no such directory".into()));
    }
    let store = data_dir.join("store");
    if !store.join("kapi.redb").is_file() {
        return Err(flag("no kapi store in it (store/kapi.redb)".into()));
    }
    let (why, recovered) = match Embedded::open_read_only(&store) {
        Ok(e) => {
            return Ok(Source {
                backend: Arc::new(e),
                note: None,
                _scratch: None,
            })
        }
        Err(ReadOnlyError::InUse(_)) => ("is in use by a running kapi", false),
        Err(ReadOnlyError::NeedsRecovery(_)) => ("was not closed cleanly", true),
        Err(ReadOnlyError::Store(e)) => return Err(flag(e.to_string())),
    };
    let scratch = Scratch::create()?;
    let e = Embedded::open_snapshot(&store, &scratch.0).map_err(|e| flag(e.to_string()))?;
    let what = if recovered {
        "a recovered copy of it (the store itself is left as it is)"
    } else {
        "a consistent copy of it"
    };
    Ok(Source {
        backend: Arc::new(e),
        note: Some(format!(
            "{} {why}: reading {what}",
            store.join("kapi.redb").display()
        )),
        _scratch: Some(scratch),
    })
}

/// Connects to etcd for dumping.
pub async fn open_etcd(cfg: &EtcdConfig, prefix: &str) -> Result<Source, DumpError> {
    let e = Etcd::connect(cfg, prefix).await.map_err(|e| {
        let text = e.to_string().replace("storage unavailable: ", "");
        DumpError::Storage(format!("--etcd-servers: {text}"))
    })?;
    Ok(Source {
        backend: Arc::new(e),
        note: None,
        _scratch: None,
    })
}

/// A resource's key path below the prefix and what it stores.
#[derive(Debug, Clone)]
struct StoragePath {
    path: String,
    group: String,
    plural: String,
    /// Every name the resource answers to on the command line.
    names: Vec<String>,
    namespaced: bool,
}

/// Maps keys to resources and filters to key ranges, from the catalog's
/// storage paths.
#[derive(Debug, Clone)]
pub struct KeyLayout {
    prefix: String,
    /// Longest path first, so `services/specs` wins over a `services`.
    paths: Vec<StoragePath>,
}

/// What a key names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyInfo {
    pub group: String,
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

impl KeyInfo {
    /// `configmaps`, `deployments.apps`, as kubectl names resources.
    pub fn resource_name(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

impl KeyLayout {
    /// `prefix` is the storage prefix (`/registry`), without a trailing slash.
    pub fn new(catalog: &Catalog, prefix: &str) -> KeyLayout {
        let mut paths: Vec<StoragePath> = Vec::new();
        for r in catalog.all_stored().iter().filter(|r| r.is_stored()) {
            let mut names = vec![
                r.plural.clone(),
                r.singular.clone(),
                r.kind.to_ascii_lowercase(),
            ];
            names.extend(r.short_names.iter().cloned());
            // Several group versions share one path (events and
            // events.k8s.io events, autoscaling v1 and v2): the group of
            // the storage version names the key.
            let entry = StoragePath {
                path: r.storage_path.clone(),
                group: r.group.clone(),
                plural: r.plural.clone(),
                names,
                namespaced: r.namespaced,
            };
            match paths.iter_mut().find(|p| {
                p.path == entry.path && p.group == entry.group && p.plural == entry.plural
            }) {
                Some(p) => p.names.extend(entry.names),
                None => paths.push(entry),
            }
        }
        // The storage group's entry first among those sharing a path.
        let storage_groups: Vec<(String, String)> = catalog
            .all()
            .iter()
            .map(|r| (r.storage_path.clone(), r.storage_group.clone()))
            .collect();
        let is_storage_group = |p: &StoragePath| {
            storage_groups
                .iter()
                .any(|(sp, sg)| *sp == p.path && *sg == p.group)
        };
        paths.sort_by(|a, b| {
            b.path
                .len()
                .cmp(&a.path.len())
                .then_with(|| a.path.cmp(&b.path))
                .then_with(|| is_storage_group(b).cmp(&is_storage_group(a)))
        });
        KeyLayout {
            prefix: prefix.trim_end_matches('/').to_string(),
            paths,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What a key names. Keys outside the prefix, or of no known
    /// resource, get their first segments as resource and name.
    pub fn parse(&self, key: &str) -> KeyInfo {
        let Some(rest) = key
            .strip_prefix(self.prefix.as_str())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return KeyInfo {
                name: key.to_string(),
                ..Default::default()
            };
        };
        for p in &self.paths {
            if let Some(tail) = rest
                .strip_prefix(p.path.as_str())
                .and_then(|t| t.strip_prefix('/'))
            {
                return with_tail(p.group.clone(), p.plural.clone(), tail);
            }
        }
        // Custom resources: `<group>/<plural>/...`; groups have a dot.
        let mut parts = rest.splitn(2, '/');
        let first = parts.next().unwrap_or_default();
        let after = parts.next().unwrap_or_default();
        if first.contains('.') {
            if let Some((plural, tail)) = after.split_once('/') {
                return with_tail(first.to_string(), plural.to_string(), tail);
            }
        }
        with_tail(String::new(), first.to_string(), after)
    }

    /// The storage paths a `--resource`/`--group` pair selects: each as
    /// (path, namespaced); `None` for namespaced when it is not known.
    fn select(&self, resource: Option<&str>, group: Option<&str>) -> Vec<(String, Option<bool>)> {
        let group = group.map(|g| if g == "core" { "" } else { g });
        let (resource, group) = match resource.map(|r| r.to_ascii_lowercase()) {
            // `deployments.apps`, as kubectl writes it.
            Some(r) if group.is_none() && r.contains('.') => {
                let (n, g) = r.split_once('.').unwrap_or((&r, ""));
                (Some(n.to_string()), Some(g.to_string()))
            }
            r => (r, group.map(String::from)),
        };
        let mut out: Vec<(String, Option<bool>)> = Vec::new();
        for p in &self.paths {
            let group_fits = group.as_deref().is_none_or(|g| p.group == g);
            let name_fits = resource
                .as_deref()
                .is_none_or(|r| p.names.iter().any(|n| n == r));
            if group_fits && name_fits && !out.iter().any(|(path, _)| *path == p.path) {
                out.push((p.path.clone(), Some(p.namespaced)));
            }
        }
        if out.is_empty() {
            // Custom resources and groups kapi does not build in.
            match (&resource, &group) {
                (Some(r), Some(g)) if !g.is_empty() => out.push((format!("{g}/{r}"), None)),
                (None, Some(g)) if !g.is_empty() => out.push((g.clone(), None)),
                _ => {}
            }
        }
        out.sort();
        out
    }
}

fn with_tail(group: String, resource: String, tail: &str) -> KeyInfo {
    let (namespace, name) = match tail.split_once('/') {
        Some((ns, name)) if !name.contains('/') => (ns.to_string(), name.to_string()),
        _ => (String::new(), tail.to_string()),
    };
    KeyInfo {
        group,
        resource,
        namespace,
        name,
    }
}

/// What to dump.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub resource: Option<String>,
    pub group: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// A raw key prefix (absolute: `/registry/configmaps/default/`).
    pub prefix: Option<String>,
}

/// Key ranges to read, in key order, and the checks each key must pass.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ranges: Vec<(String, String)>,
    filter: Filter,
    layout: KeyLayout,
    /// Decrypts values encrypted at rest.
    encryption: Option<EncryptionConfig>,
}

impl Plan {
    /// Values encrypted at rest are decrypted with `config`'s keys.
    pub fn with_encryption(mut self, config: EncryptionConfig) -> Plan {
        self.encryption = Some(config);
        self
    }

    pub fn new(layout: KeyLayout, filter: Filter) -> Result<Plan, DumpError> {
        let root = layout.prefix().to_string();
        if let Some(p) = &filter.prefix {
            if !p.starts_with('/') {
                return Err(DumpError::Usage(format!(
                    "invalid value for --prefix: {p:?} must be a key prefix starting with /"
                )));
            }
        }
        let mut ranges: Vec<(String, String)> = Vec::new();
        if filter.resource.is_some() || filter.group.is_some() {
            let selected = layout.select(filter.resource.as_deref(), filter.group.as_deref());
            if selected.is_empty() {
                let what = match (&filter.resource, &filter.group) {
                    (Some(r), _) => {
                        format!("unknown resource {r:?}; a custom resource needs --group")
                    }
                    (None, Some(g)) => format!("unknown group {g:?}"),
                    _ => String::new(),
                };
                return Err(DumpError::Usage(what));
            }
            for (path, namespaced) in selected {
                let base = format!("{root}/{path}/");
                let key = match (&filter.namespace, &filter.name, namespaced) {
                    // One object: exactly its key.
                    (Some(ns), Some(n), Some(true) | None) => Some(format!("{base}{ns}/{n}")),
                    (_, Some(n), Some(false)) => Some(format!("{base}{n}")),
                    _ => None,
                };
                match key {
                    Some(k) => ranges.push((k.clone(), format!("{k}\0"))),
                    None => {
                        let start = match (&filter.namespace, namespaced) {
                            (Some(ns), Some(true) | None) => format!("{base}{ns}/"),
                            _ => base,
                        };
                        let end = prefix_end(&start);
                        ranges.push((start, end));
                    }
                }
            }
        } else {
            let start = filter.prefix.clone().unwrap_or_else(|| format!("{root}/"));
            let end = prefix_end(&start);
            ranges.push((start, end));
        }
        // Both a resource and a raw prefix: read only where they overlap.
        if let Some(p) = &filter.prefix {
            let (ps, pe) = (p.clone(), prefix_end(p));
            ranges = ranges
                .into_iter()
                .map(|(s, e)| (s.max(ps.clone()), e.min(pe.clone())))
                .filter(|(s, e)| s < e)
                .collect();
        }
        ranges.sort();
        ranges.dedup();
        Ok(Plan {
            ranges,
            filter,
            layout,
            encryption: None,
        })
    }

    fn accepts(&self, info: &KeyInfo) -> bool {
        let f = &self.filter;
        f.namespace.as_deref().is_none_or(|ns| info.namespace == ns)
            && f.name.as_deref().is_none_or(|n| info.name == n)
    }
}

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
        let marker = super::encryption::marker(&kv.value);
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

/// Where entries go, as they are read.
pub trait Sink {
    /// Called once, before any entry, with the revision read at.
    fn begin(&mut self, revision: i64) -> io::Result<()>;
    fn entry(&mut self, e: &Entry) -> io::Result<()>;
    /// Keys read so far, and how many the ranges started so far hold (0
    /// when no total was asked for).
    fn progress(&mut self, _read: u64, _total: u64) {}
    fn end(&mut self) -> io::Result<()>;
}

/// What a dump did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub revision: i64,
    /// Keys written out (after the namespace and name checks).
    pub written: u64,
    /// Keys read.
    pub read: u64,
}

fn storage_error(e: BackendError, revision: i64) -> DumpError {
    DumpError::Storage(match e {
        BackendError::Compacted { compacted, .. } if compacted > 0 => {
            format!("--revision {revision}: compacted (the oldest revision kept is {compacted})")
        }
        BackendError::Compacted { .. } => format!("--revision {revision}: compacted"),
        BackendError::FutureRevision { current, .. } if current > 0 => {
            format!("--revision {revision}: the store is only at revision {current}")
        }
        BackendError::FutureRevision { .. } => {
            format!("--revision {revision}: a future revision")
        }
        other => other.to_string(),
    })
}

/// Reads the plan's ranges page by page (at most [`PAGE_SIZE`] keys held
/// at once), all at one revision (`revision`, or the latest when 0), and
/// hands each key that passes the filter to `sink`. With `want_total`,
/// [`Sink::progress`] learns how many keys each range holds (one extra
/// pass over the range on the embedded store); without, its total is 0.
pub async fn dump(
    backend: &dyn Backend,
    plan: &Plan,
    revision: i64,
    keys_only: bool,
    want_total: bool,
    sink: &mut dyn Sink,
) -> Result<Summary, DumpError> {
    let mut at = revision;
    let mut summary = Summary::default();
    let mut total = 0u64;
    let mut begun = false;
    for (start, end) in &plan.ranges {
        let mut from = start.clone();
        let mut first_page = true;
        loop {
            let resp = backend
                .range(RangeRequest {
                    start: from.clone(),
                    end: end.clone(),
                    revision: at,
                    limit: PAGE_SIZE,
                    // Counting the rest of the range on every page is
                    // quadratic on the embedded store: only the first page
                    // counts, and only when a total is wanted.
                    skip_count: !(first_page && want_total),
                })
                .await
                .map_err(|e| storage_error(e, revision))?;
            if !begun {
                // Later pages read at the same revision: one consistent view.
                at = resp.revision;
                summary.revision = at;
                sink.begin(at)?;
                begun = true;
            }
            if first_page {
                if want_total {
                    total += resp.count.max(0) as u64;
                }
                first_page = false;
            }
            for kv in &resp.kvs {
                summary.read += 1;
                let info = plan.layout.parse(&kv.key);
                if plan.accepts(&info) {
                    sink.entry(&Entry::new(kv, info, keys_only, plan.encryption.as_ref()))?;
                    summary.written += 1;
                }
            }
            sink.progress(summary.read, total);
            match resp.kvs.last() {
                Some(last) if resp.more => from = format!("{}\0", last.key),
                _ => break,
            }
        }
    }
    if !begun {
        let rev = if revision > 0 {
            revision
        } else {
            backend
                .current_revision()
                .await
                .map_err(|e| storage_error(e, revision))?
        };
        summary.revision = rev;
        sink.begin(rev)?;
    }
    sink.end()?;
    Ok(summary)
}

/// Indents every line but the first by `pad`.
fn indent_rest(text: &str, pad: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 || l.is_empty() {
                l.to_string()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One YAML document, `revision` and `items`, written item by item.
pub struct YamlSink<W: Write> {
    out: W,
    items: u64,
}

impl<W: Write> YamlSink<W> {
    pub fn new(out: W) -> Self {
        YamlSink { out, items: 0 }
    }
}

impl<W: Write> Sink for YamlSink<W> {
    fn begin(&mut self, revision: i64) -> io::Result<()> {
        writeln!(self.out, "revision: {revision}")
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "items:")?;
        }
        self.items += 1;
        let text = serde_saphyr::to_string(e).map_err(io::Error::other)?;
        let text = text.trim_start_matches("---\n").trim_end();
        writeln!(self.out, "- {}", indent_rest(text, "  "))
    }

    fn end(&mut self) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "items: []")?;
        }
        self.out.flush()
    }
}

/// One JSON document, `{"revision": N, "items": [...]}`, written item by item.
pub struct JsonSink<W: Write> {
    out: W,
    items: u64,
}

impl<W: Write> JsonSink<W> {
    pub fn new(out: W) -> Self {
        JsonSink { out, items: 0 }
    }
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin(&mut self, revision: i64) -> io::Result<()> {
        write!(self.out, "{{\n  \"revision\": {revision},\n  \"items\": [")
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        let sep = if self.items == 0 { "" } else { "," };
        self.items += 1;
        let text = serde_json::to_string_pretty(e).map_err(io::Error::other)?;
        write!(self.out, "{sep}\n    {}", indent_rest(&text, "    "))
    }

    fn end(&mut self) -> io::Result<()> {
        if self.items == 0 {
            writeln!(self.out, "]\n}}")?;
        } else {
            writeln!(self.out, "\n  ]\n}}")?;
        }
        self.out.flush()
    }
}

/// One key per line.
pub struct KeysSink<W: Write> {
    out: W,
}

impl<W: Write> KeysSink<W> {
    pub fn new(out: W) -> Self {
        KeysSink { out }
    }
}

impl<W: Write> Sink for KeysSink<W> {
    fn begin(&mut self, _revision: i64) -> io::Result<()> {
        Ok(())
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        writeln!(self.out, "{}", e.key)
    }

    fn end(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

const TABLE_HEADER: [&str; 8] = [
    "KEY",
    "RESOURCE",
    "NAMESPACE",
    "NAME",
    "CREATE-REVISION",
    "MOD-REVISION",
    "VERSION",
    "SIZE",
];

/// Aligned columns as kubectl prints them, a page at a time (columns
/// only ever widen, so later pages stay aligned with earlier ones).
pub struct TableSink<W: Write> {
    out: W,
    rows: Vec<[String; 8]>,
    widths: [usize; 8],
    header_done: bool,
}

impl<W: Write> TableSink<W> {
    pub fn new(out: W) -> Self {
        TableSink {
            out,
            rows: Vec::new(),
            widths: TABLE_HEADER.map(str::len),
            header_done: false,
        }
    }

    fn flush_rows(&mut self) -> io::Result<()> {
        for row in &self.rows {
            for (w, cell) in self.widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut rows = std::mem::take(&mut self.rows);
        if !self.header_done {
            rows.insert(0, TABLE_HEADER.map(String::from));
            self.header_done = true;
        }
        for row in rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<w$}   ", w = self.widths[i]));
                }
            }
            writeln!(self.out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for TableSink<W> {
    fn begin(&mut self, _revision: i64) -> io::Result<()> {
        Ok(())
    }

    fn entry(&mut self, e: &Entry) -> io::Result<()> {
        self.rows.push([
            e.key.clone(),
            e.resource_name(),
            e.namespace.clone(),
            e.name.clone(),
            e.create_revision.to_string(),
            e.mod_revision.to_string(),
            e.version.to_string(),
            e.size.to_string(),
        ]);
        if self.rows.len() >= PAGE_SIZE as usize {
            self.flush_rows()?;
        }
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if !self.rows.is_empty() || !self.header_done {
            if self.rows.is_empty() {
                // kubectl's word for an empty list, on stderr.
                eprintln!("No keys found.");
                return self.out.flush();
            }
            self.flush_rows()?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> KeyLayout {
        KeyLayout::new(&crate::app::builtin_catalog(), "/registry")
    }

    fn info(g: &str, r: &str, ns: &str, n: &str) -> KeyInfo {
        KeyInfo {
            group: g.into(),
            resource: r.into(),
            namespace: ns.into(),
            name: n.into(),
        }
    }

    #[test]
    fn keys_map_back_to_resources() {
        let l = layout();
        assert_eq!(
            l.parse("/registry/configmaps/default/x"),
            info("", "configmaps", "default", "x")
        );
        assert_eq!(
            l.parse("/registry/services/specs/default/kubernetes"),
            info("", "services", "default", "kubernetes")
        );
        assert_eq!(
            l.parse("/registry/services/endpoints/default/kubernetes"),
            info("", "endpoints", "default", "kubernetes")
        );
        assert_eq!(l.parse("/registry/minions/n1"), info("", "nodes", "", "n1"));
        assert_eq!(
            l.parse("/registry/namespaces/default"),
            info("", "namespaces", "", "default")
        );
        assert_eq!(
            l.parse("/registry/deployments/default/web"),
            info("apps", "deployments", "default", "web")
        );
        assert_eq!(
            l.parse("/registry/events/default/e"),
            info("", "events", "default", "e")
        );
        assert_eq!(
            l.parse("/registry/horizontalpodautoscalers/default/h"),
            info("autoscaling", "horizontalpodautoscalers", "default", "h")
        );
        assert_eq!(
            l.parse("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com"),
            info(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "",
                "widgets.example.com"
            )
        );
        assert_eq!(
            l.parse("/registry/example.com/widgets/default/w"),
            info("example.com", "widgets", "default", "w")
        );
        assert_eq!(
            l.parse("/registry/example.com/gadgets/g"),
            info("example.com", "gadgets", "", "g")
        );
        assert_eq!(
            l.parse("/registry/compact_rev_key"),
            info("", "compact_rev_key", "", "")
        );
        assert_eq!(l.parse("/other/x"), info("", "", "", "/other/x"));
    }

    #[test]
    fn filters_become_ranges() {
        let f =
            |resource: Option<&str>, group: Option<&str>, ns: Option<&str>, name: Option<&str>| {
                Plan::new(
                    layout(),
                    Filter {
                        resource: resource.map(String::from),
                        group: group.map(String::from),
                        namespace: ns.map(String::from),
                        name: name.map(String::from),
                        prefix: None,
                    },
                )
                .map(|p| p.ranges)
            };
        let r = f(Some("cm"), None, Some("default"), None).unwrap();
        assert_eq!(
            r,
            vec![(
                "/registry/configmaps/default/".into(),
                "/registry/configmaps/default0".into()
            )]
        );
        let r = f(Some("configmaps"), None, Some("default"), Some("x")).unwrap();
        assert_eq!(
            r,
            vec![(
                "/registry/configmaps/default/x".into(),
                "/registry/configmaps/default/x\0".into()
            )]
        );
        let r = f(Some("nodes"), None, None, Some("n1")).unwrap();
        assert_eq!(r[0].0, "/registry/minions/n1");
        let r = f(Some("deployments.apps"), None, None, None).unwrap();
        assert_eq!(r[0].0, "/registry/deployments/");
        let r = f(Some("widgets"), Some("example.com"), None, None).unwrap();
        assert_eq!(r[0].0, "/registry/example.com/widgets/");
        let r = f(Some("events"), None, None, None).unwrap();
        assert_eq!(r.len(), 1);
        assert!(matches!(
            f(Some("widgets"), None, None, None),
            Err(DumpError::Usage(_))
        ));
        let p = Plan::new(
            layout(),
            Filter {
                resource: Some("configmaps".into()),
                prefix: Some("/registry/configmaps/kube-system/".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            p.ranges,
            vec![(
                "/registry/configmaps/kube-system/".into(),
                "/registry/configmaps/kube-system0".into()
            )]
        );
    }

    #[test]
    fn values_decode_or_say_why_not() {
        assert_eq!(
            decode_value(br#"{"a":1}"#),
            Decoded::Json(serde_json::json!({"a": 1}))
        );
        assert_eq!(decode_value(b"42"), Decoded::Text("42".into()));
        match decode_value(&[0, 1, 2, 0xff]) {
            Decoded::Undecodable { shown, .. } => {
                assert_eq!(shown, "<undecodable: 4 bytes: 000102ff>")
            }
            other => panic!("{other:?}"),
        }
        match decode_value(b"k8s\0\x0a\x03garbage") {
            Decoded::Undecodable { shown, reason } => {
                assert!(
                    shown.starts_with("<undecodable: 13 bytes: 6b387300"),
                    "{shown}"
                );
                assert!(reason.unwrap_or_default().starts_with("protobuf"));
            }
            other => panic!("{other:?}"),
        }
        match decode_value(b"k8s:enc:aescbc:v1:key1:\x01\x02") {
            Decoded::Undecodable { reason, .. } => {
                assert_eq!(
                    reason.as_deref(),
                    Some("encrypted at rest (aescbc:v1:key1)")
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
