//! Kubernetes protobuf (`application/vnd.kubernetes.protobuf`) decoding.
//!
//! Upstream clients (kubectl's typed clients among them) send request
//! bodies, and upstream stores etcd values, as the bytes `k8s\0` followed by
//! a protobuf `runtime.Unknown`:
//!
//! ```text
//! message Unknown {
//!   optional TypeMeta typeMeta = 1;   // {apiVersion = 1; kind = 2}
//!   optional bytes raw = 2;           // the object, e.g. a k8s.io.api.core.v1.ConfigMap
//!   optional string contentEncoding = 3;
//!   optional string contentType = 4;
//! }
//! ```
//!
//! [`decode`] turns that into the JSON upstream would print for the same
//! object. The messages' fields (tags, cardinalities, wire kinds) are static
//! data in `schema.rs`, generated from the crate `k8s-pb` by
//! `scripts/gen-protobuf-schema.py`; JSON field names come from the schemas
//! of `k8s-openapi`'s types at run time (prost's snake_case loses acronyms:
//! `pod_ip` is `podIP`).
//!
//! JSON forms follow upstream's Go types: `Time` and `MicroTime` are RFC 3339
//! strings (null for the zero time), `Duration` a Go duration string,
//! `IntOrString` a number or a string, `Quantity` its string, `RawExtension`,
//! `FieldsV1` and apiextensions' `JSON` their raw JSON, bytes base64. Proto2
//! presence is kept: a scalar on the wire appears in the JSON even when it is
//! zero, and a field absent from the wire is omitted. Unknown tags are
//! skipped. Go embedded structs (`json:",inline"`, a message field in
//! protobuf, e.g. `Volume.volumeSource`) are merged into their parent.
//!
//! Go's encoder writes every non-pointer field, zero or not, so bodies from
//! Go clients carry `generateName: ""`, `imagePullPolicy: ""` and the like;
//! [`DecodeOptions::omit_empty_strings`] drops such empty strings.

mod encode;
#[rustfmt::skip]
mod schema;
#[rustfmt::skip]
pub(crate) mod zero_values;

use std::collections::HashMap;
use std::sync::LazyLock;

use base64::Engine as _;
use serde_json::{Map, Value};

pub use crate::api::catalog::SchemaFn;
pub use encode::{
    encode, encode_kind_body, encode_list, encode_message, envelope, has_message,
    parse_go_duration, watch_frame, EncodeError,
};
pub use schema::{MESSAGES, OPENAPI_SCHEMAS, RESOURCES};

/// The magic prefix of every Kubernetes protobuf object.
pub const MAGIC: &[u8] = b"k8s\x00";

/// Nesting limit of embedded messages: deep enough for any real object
/// (CRD schemas included), shallow enough for a small thread stack.
const MAX_DEPTH: usize = 200;

/// How many times a field may occur.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Card {
    /// At most once (proto2 `optional`: presence is tracked).
    Optional,
    /// Any number of times; scalars packed or not.
    Repeated,
    /// A `map<K, V>`: repeated entries `{K key = 1; V value = 2}`.
    Map,
}

/// The protobuf type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Double,
    Float,
    Enumeration,
    /// An embedded message, by full name.
    Message(&'static str),
    /// Key and value kinds of a map.
    Map(&'static Kind, &'static Kind),
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub tag: u32,
    /// prost's snake_case name (`pod_ip`).
    pub name: &'static str,
    pub card: Card,
    pub kind: Kind,
}

/// One protobuf message.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    /// The full name as Kubernetes' OpenAPI spells it
    /// (`io.k8s.api.core.v1.Pod`).
    pub name: &'static str,
    /// A Go slice type (`+protobuf.nullable=true`, e.g. `meta.v1.Verbs`,
    /// `ExtraValue`): `{repeated items = 1}` on the wire, an array in JSON.
    pub array_wrapper: bool,
    /// Sorted by tag.
    pub fields: &'static [Field],
}

/// A top-level kind with an `impl Resource` in k8s-pb.
#[derive(Debug, Clone, Copy)]
pub struct ResourceKind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub message: &'static str,
}

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a Kubernetes protobuf object: the data does not start with \"k8s\\x00\"")]
    MissingPrefix,
    #[error("protobuf envelope has no kind")]
    MissingKind,
    #[error("no protobuf message is known for kind {kind:?} of apiVersion {api_version:?}")]
    UnknownKind { api_version: String, kind: String },
    #[error("unknown protobuf message {0}")]
    UnknownMessage(String),
    #[error("protobuf envelope has content encoding {0:?}; only unencoded objects are supported")]
    ContentEncoding(String),
    #[error("truncated protobuf data in {0}")]
    Truncated(String),
    #[error("malformed protobuf data in {context}: {reason}")]
    Malformed { context: String, reason: String },
    #[error("protobuf messages nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

fn malformed(context: &str, reason: impl Into<String>) -> DecodeError {
    DecodeError::Malformed {
        context: context.to_string(),
        reason: reason.into(),
    }
}

/// Decodes a Kubernetes protobuf envelope (`k8s\0` + runtime.Unknown) into
/// the object's JSON, exactly as the same object serializes to JSON
/// upstream (apiVersion and kind set from the envelope).
///
/// Every field present on the wire is kept, zero or not (proto2 presence).
/// Note that Go's encoder writes every non-pointer field, so objects from
/// Go clients carry `generateName: ""`, `imagePullPolicy: ""`, `stdin:
/// false` and the like; see [`decode_with`] and
/// [`DecodeOptions::omit_empty_strings`].
pub fn decode(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode_with(bytes, DecodeOptions::default())
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Whether the Go struct behind `message` is in the generated table.
fn zero_values_known(message: &str) -> bool {
    zero_values::COVERED.binary_search(&message).is_ok()
}

/// Whether upstream's JSON leaves out this scalar: Go writes every
/// non-pointer field in protobuf, zero or not (`paused: false`), and its
/// JSON encoder drops the zero value of a non-pointer `omitempty` field
/// (a pointer, `replicas: 0`, or a field without `omitempty` keeps it).
fn go_omits_zero(message: &str, json: &str, kind: Kind, v: &Value) -> bool {
    // `omitzero` since v1.34 (kubernetes#130989): a zero creationTimestamp
    // is left out instead of written as null.
    if v.is_null() && json == "creationTimestamp" && message == OBJECT_META {
        return true;
    }
    let zero = match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    let scalar = !matches!(kind, Kind::Message(_) | Kind::Map(..) | Kind::Bytes);
    zero && scalar
        && zero_values_known(message)
        && zero_values::KEEPS_ZERO
            .binary_search(&(message, json))
            .is_err()
}

/// How to decode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Drop `""` of optional (not `required` in the OpenAPI schema) string
    /// fields, as Go does for its non-pointer `omitempty` strings, which its
    /// protobuf encoder always writes. Without it, a Go client's
    /// `imagePullPolicy: ""` stays and hides the field from defaulting. The
    /// cost: an explicit `""` of a `*string` field (e.g. a PVC's
    /// `storageClassName: ""`) is dropped too. Numbers and booleans are kept
    /// either way (`replicas: 0` is meaningful; `stdin: false` is harmless).
    pub omit_empty_strings: bool,
}

/// [`decode`] with options.
pub fn decode_with(bytes: &[u8], opts: DecodeOptions) -> Result<Value, DecodeError> {
    decode_envelope(bytes, State { depth: 0, opts })
}

/// Nesting depth and options, passed down the decoder.
#[derive(Debug, Clone, Copy)]
struct State {
    depth: usize,
    opts: DecodeOptions,
}

impl State {
    fn deeper(self) -> State {
        State {
            depth: self.depth + 1,
            ..self
        }
    }
}

/// Whether bytes start with the Kubernetes protobuf prefix `k8s\0`.
pub fn is_protobuf(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Decodes one message, by full name (`io.k8s.api.core.v1.ConfigMap`), into
/// JSON (no apiVersion or kind: the message does not carry them).
pub fn decode_message(name: &str, bytes: &[u8]) -> Result<Value, DecodeError> {
    let reg = registry();
    let idx = reg
        .index(name)
        .ok_or_else(|| DecodeError::UnknownMessage(name.to_string()))?;
    reg.decode(
        idx,
        bytes,
        State {
            depth: 0,
            opts: DecodeOptions::default(),
        },
    )
}

/// The full message name of a kind of an API version, e.g. `apps/v1`
/// `Deployment` -> `io.k8s.api.apps.v1.Deployment`.
pub fn message_for_kind(api_version: &str, kind: &str) -> Option<&'static str> {
    let reg = registry();
    reg.kind_index(api_version, kind).map(|i| MESSAGES[i].name)
}

/// The `status` a built-in kind has when a create resets it: the JSON Go
/// writes for its Status struct's zero value (`{}`, a Service's
/// `{"loadBalancer":{}}`, a ReplicaSet's `{"replicas":0}`). `None` for
/// kinds without a status struct or not built in.
pub fn zero_status(api_version: &str, kind: &str) -> Option<Value> {
    let message = message_for_kind(api_version, kind)?;
    let i = zero_values::ZERO_STATUS
        .binary_search_by(|(k, _)| (*k).cmp(message))
        .ok()?;
    serde_json::from_str(zero_values::ZERO_STATUS[i].1).ok()
}

/// The proto package (OpenAPI name prefix) of an API version:
/// `apps/v1` -> `io.k8s.api.apps.v1`, `v1` -> `io.k8s.api.core.v1`.
pub fn package_for_api_version(api_version: &str) -> String {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let base = match group {
        "" => "io.k8s.api.core".to_string(),
        "meta.k8s.io" => "io.k8s.apimachinery.pkg.apis.meta".to_string(),
        "apiextensions.k8s.io" => {
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_string()
        }
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis.apiregistration".to_string(),
        "internal.apiserver.k8s.io" => "io.k8s.api.apiserverinternal".to_string(),
        "metrics.k8s.io" => "io.k8s.metrics.pkg.apis.metrics".to_string(),
        "custom.metrics.k8s.io" => "io.k8s.metrics.pkg.apis.custom_metrics".to_string(),
        "external.metrics.k8s.io" => "io.k8s.metrics.pkg.apis.external_metrics".to_string(),
        // rbac.authorization.k8s.io -> rbac, flowcontrol.apiserver.k8s.io
        // -> flowcontrol, storage.k8s.io -> storage, apps -> apps, ...
        g => format!("io.k8s.api.{}", g.split('.').next().unwrap_or(g)),
    };
    format!("{base}.{version}")
}

/// How a message's JSON differs from a plain object of its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    None,
    Time,
    MicroTime,
    Duration,
    IntOrString,
    Quantity,
    /// RawExtension, FieldsV1, apiextensions JSON: `bytes raw = 1` is JSON.
    RawJson,
    SchemaOrArray,
    SchemaOrBool,
    SchemaOrStringArray,
    ArrayWrapper,
}

fn special_of(m: &Message) -> Special {
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
    const APIEXT: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.";
    if m.array_wrapper {
        return Special::ArrayWrapper;
    }
    if let Some(n) = m.name.strip_prefix(META) {
        return match n {
            "Time" => Special::Time,
            "MicroTime" => Special::MicroTime,
            "Duration" => Special::Duration,
            "FieldsV1" => Special::RawJson,
            _ => Special::None,
        };
    }
    if let Some(rest) = m.name.strip_prefix(APIEXT) {
        let n = rest.split_once('.').map(|(_, n)| n).unwrap_or(rest);
        return match n {
            "JSON" => Special::RawJson,
            "JSONSchemaPropsOrArray" => Special::SchemaOrArray,
            "JSONSchemaPropsOrBool" => Special::SchemaOrBool,
            "JSONSchemaPropsOrStringArray" => Special::SchemaOrStringArray,
            _ => Special::None,
        };
    }
    match m.name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Special::IntOrString,
        "io.k8s.apimachinery.pkg.api.resource.Quantity"
        | "io.k8s.apimachinery.pkg.api.resource.QuantityValue" => Special::Quantity,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => Special::RawJson,
        _ => Special::None,
    }
}

/// What the decoder needs of one field beyond the static data.
#[derive(Debug)]
struct FieldInfo {
    json: String,
    /// The embedded message (or map value message).
    target: Option<usize>,
    /// A Go embedded struct (`json:",inline"`): go-to-protobuf makes it a
    /// message field, JSON merges its fields into the parent's.
    inline: bool,
    /// In the schema's `required` list (Go: no `omitempty`).
    required: bool,
}

/// Lookups built once from the static data and k8s-openapi's schemas.
struct Registry {
    by_name: HashMap<&'static str, usize>,
    by_lower: HashMap<String, usize>,
    resources: HashMap<(&'static str, &'static str), usize>,
    fields: Vec<Vec<FieldInfo>>,
    special: Vec<Special>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::build);

fn registry() -> &'static Registry {
    &REGISTRY
}

/// `io.k8s.api.core.v1.Volume` -> `Volume`.
fn short_name(full: &str) -> &str {
    full.rsplit('.').next().unwrap_or(full)
}

/// Lowercase alphanumerics only: `pod_ip`, `podIP` -> `podip`;
/// `x_kubernetes_list_type`, `x-kubernetes-list-type` -> `xkuberneteslisttype`;
/// `ref`, `$ref` -> `ref`.
fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `pod_ip` -> `podIp`: the fallback when no schema names the field.
fn lower_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The property names of a schema, and which of them are required.
struct Props {
    names: Vec<String>,
    required: Vec<String>,
}

/// Property names of every k8s-openapi schema, by definition name.
fn openapi_properties() -> HashMap<String, Props> {
    let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
    let mut out: HashMap<String, Props> = HashMap::new();
    let props_of = |v: &Value| -> Option<Props> {
        let names = v
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())?;
        let required = v
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Some(Props { names, required })
    };
    for (name, schema_fn) in OPENAPI_SCHEMAS {
        let schema = schema_fn(&mut generator);
        // Inlined schemas are returned whole; the others are references.
        if let Some(p) = props_of(schema.as_value()) {
            out.insert((*name).to_string(), p);
        }
    }
    for (name, def) in generator.definitions() {
        if let Some(p) = props_of(def) {
            out.entry(name.clone()).or_insert(p);
        }
    }
    out
}

impl Registry {
    fn build() -> Registry {
        let by_name: HashMap<&'static str, usize> = MESSAGES
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name, i))
            .collect();
        let by_lower = MESSAGES
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.to_ascii_lowercase(), i))
            .collect();
        let resources = RESOURCES
            .iter()
            .filter_map(|r| {
                by_name
                    .get(r.message)
                    .map(|&i| ((r.api_version, r.kind), i))
            })
            .collect();

        let props = openapi_properties();
        // Every property name seen anywhere, by normalized name, for
        // messages k8s-openapi has no type of (older versions, lists): the
        // most common spelling wins.
        let mut counts: HashMap<String, HashMap<&str, usize>> = HashMap::new();
        for p in props.values() {
            for n in &p.names {
                *counts
                    .entry(normalize(n))
                    .or_default()
                    .entry(n)
                    .or_default() += 1;
            }
        }
        let global: HashMap<String, String> = counts
            .into_iter()
            .filter_map(|(k, spellings)| {
                spellings
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
                    .map(|(s, _)| (k, s.to_string()))
            })
            .collect();

        // Embedded and required fields, by short message name and field
        // name, as seen in messages that have a schema: for the same message
        // in versions that have none.
        let mut seen: HashMap<(&str, &str), (bool, bool)> = HashMap::new();
        let mut fields: Vec<Vec<FieldInfo>> = Vec::with_capacity(MESSAGES.len());
        let mut has_schema = Vec::with_capacity(MESSAGES.len());
        for m in MESSAGES {
            let own: HashMap<String, &String> = props
                .get(m.name)
                .map(|p| p.names.iter().map(|n| (normalize(n), n)).collect())
                .unwrap_or_default();
            let required: &[String] = props.get(m.name).map_or(&[], |p| &p.required);
            has_schema.push(!own.is_empty());
            let short = short_name(m.name);
            let infos = m
                .fields
                .iter()
                .map(|f| {
                    let key = normalize(f.name);
                    let target = match f.kind {
                        Kind::Message(t) => by_name.get(t).copied(),
                        Kind::Map(_, Kind::Message(t)) => by_name.get(t).copied(),
                        _ => None,
                    };
                    // A message field the schema does not name, whose
                    // message's fields the schema does name, is embedded.
                    let inline = f.card == Card::Optional
                        && !own.is_empty()
                        && !own.contains_key(&key)
                        && target.is_some_and(|t| {
                            MESSAGES[t]
                                .fields
                                .iter()
                                .any(|tf| own.contains_key(&normalize(tf.name)))
                        });
                    let json = own
                        .get(&key)
                        .map(|s| (*s).clone())
                        .or_else(|| global.get(&key).cloned())
                        .unwrap_or_else(|| lower_camel(f.name));
                    let required = required.contains(&json);
                    if !own.is_empty() {
                        seen.insert((short, f.name), (inline, required));
                    }
                    FieldInfo {
                        json,
                        target,
                        inline,
                        required,
                    }
                })
                .collect();
            fields.push(infos);
        }
        for (i, m) in MESSAGES.iter().enumerate() {
            if has_schema[i] {
                continue;
            }
            let short = short_name(m.name);
            for (f, info) in m.fields.iter().zip(fields[i].iter_mut()) {
                if let Some(&(inline, required)) = seen.get(&(short, f.name)) {
                    info.inline = inline && f.card == Card::Optional;
                    info.required = required;
                }
            }
        }
        let special = MESSAGES.iter().map(special_of).collect();
        Registry {
            by_name,
            by_lower,
            resources,
            fields,
            special,
        }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .copied()
            .or_else(|| self.by_lower.get(&name.to_ascii_lowercase()).copied())
    }

    fn kind_index(&self, api_version: &str, kind: &str) -> Option<usize> {
        if let Some(&i) = self.resources.get(&(api_version, kind)) {
            return Some(i);
        }
        let pkg = package_for_api_version(api_version);
        if let Some(i) = self.index(&format!("{pkg}.{kind}")) {
            return Some(i);
        }
        // Kinds every group version registers from meta.k8s.io/v1 (Status,
        // DeleteOptions, WatchEvent, ...).
        self.index(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"))
    }

    fn decode(&self, idx: usize, data: &[u8], st: State) -> Result<Value, DecodeError> {
        if st.depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let msg = &MESSAGES[idx];
        if self.special[idx] == Special::RawJson {
            // Go marshals a nil Raw as null.
            return match self.raw_bytes(idx, data)? {
                None => Ok(Value::Null),
                Some(raw) => self.raw_json(msg.name, raw, st),
            };
        }
        let values = self.decode_fields(idx, data, st)?;
        let by_tag = |tag: u32| -> Option<&Value> {
            msg.fields
                .iter()
                .position(|f| f.tag == tag)
                .and_then(|i| values[i].as_ref())
        };
        let int = |tag: u32| by_tag(tag).and_then(Value::as_i64).unwrap_or(0);
        Ok(match self.special[idx] {
            Special::None => {
                let mut obj = Map::new();
                let mut embedded = Vec::new();
                for (i, v) in values.into_iter().enumerate() {
                    let info = &self.fields[idx][i];
                    match v {
                        Some(Value::Object(inner)) if info.inline => embedded.push(inner),
                        Some(v)
                            if msg.fields[i].card == Card::Optional
                                && go_omits_zero(msg.name, &info.json, msg.fields[i].kind, &v) => {}
                        Some(Value::String(s))
                            if s.is_empty()
                                && st.opts.omit_empty_strings
                                && !info.required
                                && msg.fields[i].card == Card::Optional
                                && !zero_values_known(msg.name) => {}
                        Some(v) => {
                            obj.insert(info.json.clone(), v);
                        }
                        None => {}
                    }
                }
                // Go: a field of the struct itself hides an embedded one.
                for inner in embedded {
                    for (k, v) in inner {
                        obj.entry(k).or_insert(v);
                    }
                }
                Value::Object(obj)
            }
            Special::ArrayWrapper => by_tag(1).cloned().unwrap_or(Value::Array(Vec::new())),
            // Upstream truncates Time to seconds when it reads protobuf.
            Special::Time if data.is_empty() => Value::Null,
            Special::Time => format_time(msg.name, int(1), 0, chrono::SecondsFormat::Secs)?,
            Special::MicroTime if data.is_empty() => Value::Null,
            Special::MicroTime => {
                format_time(msg.name, int(1), int(2), chrono::SecondsFormat::Micros)?
            }
            Special::Duration => Value::String(go_duration(int(1))),
            Special::IntOrString => match int(1) {
                0 => Value::from(int(2)),
                1 => by_tag(3)
                    .cloned()
                    .unwrap_or_else(|| Value::String(String::new())),
                t => return Err(malformed(msg.name, format!("impossible type {t}"))),
            },
            Special::Quantity => match by_tag(1).and_then(Value::as_str) {
                Some(s) if !s.is_empty() => Value::String(s.to_string()),
                _ => Value::String("0".to_string()),
            },
            Special::RawJson => Value::Null, // handled above
            // Go's JSONSchemaPropsOr* MarshalJSON.
            Special::SchemaOrArray => match by_tag(2) {
                Some(Value::Array(a)) if !a.is_empty() => Value::Array(a.clone()),
                _ => by_tag(1).cloned().unwrap_or(Value::Null),
            },
            Special::SchemaOrBool => match by_tag(2) {
                Some(schema) => schema.clone(),
                None => Value::Bool(by_tag(1).and_then(Value::as_bool).unwrap_or(false)),
            },
            Special::SchemaOrStringArray => match by_tag(2) {
                Some(Value::Array(a)) if !a.is_empty() => Value::Array(a.clone()),
                _ => by_tag(1).cloned().unwrap_or(Value::Null),
            },
        })
    }

    /// The `bytes raw = 1` of a RawExtension-like message.
    fn raw_bytes<'a>(&self, idx: usize, data: &'a [u8]) -> Result<Option<&'a [u8]>, DecodeError> {
        let name = MESSAGES[idx].name;
        let mut raw = None;
        let mut r = Reader::new(data, name);
        while !r.done() {
            let (tag, wire) = r.key()?;
            if tag == 1 && wire == WIRE_LEN {
                raw = Some(r.len_delimited()?);
            } else {
                r.skip(wire)?;
            }
        }
        Ok(raw)
    }

    /// The raw bytes of a RawExtension as JSON: JSON itself, or (in
    /// protobuf watch events) a nested protobuf object.
    fn raw_json(&self, context: &str, raw: &[u8], st: State) -> Result<Value, DecodeError> {
        if raw.is_empty() {
            return Ok(Value::Null);
        }
        if raw.starts_with(MAGIC) {
            return decode_envelope(raw, st.deeper());
        }
        serde_json::from_slice(raw)
            .map_err(|e| malformed(context, format!("raw bytes are not JSON: {e}")))
    }

    /// Decodes the fields of a message: one value per field (None: absent).
    fn decode_fields(
        &self,
        idx: usize,
        data: &[u8],
        st: State,
    ) -> Result<Vec<Option<Value>>, DecodeError> {
        let msg = &MESSAGES[idx];
        let mut values: Vec<Option<Value>> = vec![None; msg.fields.len()];
        let mut r = Reader::new(data, msg.name);
        while !r.done() {
            let (tag, wire) = r.key()?;
            let Ok(fi) = msg.fields.binary_search_by_key(&tag, |f| f.tag) else {
                r.skip(wire)?;
                continue;
            };
            let field = &msg.fields[fi];
            let target = self.fields[idx][fi].target;
            let ctx = || format!("{}.{} (tag {})", msg.name, field.name, field.tag);
            match (field.card, field.kind) {
                (Card::Map, Kind::Map(k, v)) => {
                    if wire != WIRE_LEN {
                        return Err(malformed(
                            &ctx(),
                            format!("wire type {wire} for a map entry"),
                        ));
                    }
                    let entry = r.len_delimited()?;
                    let (key, value) = self.map_entry(&ctx(), entry, *k, *v, target, st)?;
                    let slot = values[fi].get_or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(m) = slot {
                        m.insert(key, value);
                    }
                }
                (Card::Repeated, kind) => {
                    let slot = values[fi].get_or_insert_with(|| Value::Array(Vec::new()));
                    let Value::Array(items) = slot else {
                        continue;
                    };
                    if wire == WIRE_LEN && is_packable(kind) {
                        let packed = r.len_delimited()?;
                        let mut pr = Reader::new(packed, msg.name);
                        while !pr.done() {
                            items.push(self.value(
                                &ctx(),
                                &mut pr,
                                wire_type_of(kind),
                                kind,
                                target,
                                st,
                            )?);
                        }
                    } else {
                        items.push(self.value(&ctx(), &mut r, wire, kind, target, st)?);
                    }
                }
                (_, kind) => {
                    values[fi] = Some(self.value(&ctx(), &mut r, wire, kind, target, st)?);
                }
            }
        }
        Ok(values)
    }

    /// Reads one value of a field of `kind` sent with wire type `wire`.
    fn value(
        &self,
        ctx: &str,
        r: &mut Reader<'_>,
        wire: u8,
        kind: Kind,
        target: Option<usize>,
        st: State,
    ) -> Result<Value, DecodeError> {
        let want = wire_type_of(kind);
        if wire != want {
            return Err(malformed(ctx, format!("wire type {wire}, expected {want}")));
        }
        Ok(match kind {
            Kind::String => Value::String(String::from_utf8_lossy(r.len_delimited()?).into_owned()),
            Kind::Bytes => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(r.len_delimited()?))
            }
            Kind::Message(name) => {
                let data = r.len_delimited()?;
                let idx = target.ok_or_else(|| DecodeError::UnknownMessage(name.to_string()))?;
                self.decode(idx, data, st.deeper())?
            }
            Kind::Map(..) => return Err(malformed(ctx, "map outside a map field")),
            Kind::Bool => Value::Bool(r.varint()? != 0),
            Kind::Int32 | Kind::Enumeration => Value::from(r.varint()? as i32),
            Kind::Int64 => Value::from(r.varint()? as i64),
            Kind::Uint32 => Value::from(r.varint()? as u32),
            Kind::Uint64 => Value::from(r.varint()?),
            Kind::Sint32 => {
                let v = r.varint()? as u32;
                Value::from(((v >> 1) as i32) ^ -((v & 1) as i32))
            }
            Kind::Sint64 => {
                let v = r.varint()?;
                Value::from(((v >> 1) as i64) ^ -((v & 1) as i64))
            }
            Kind::Fixed32 => Value::from(r.fixed32()?),
            Kind::Sfixed32 => Value::from(r.fixed32()? as i32),
            Kind::Fixed64 => Value::from(r.fixed64()?),
            Kind::Sfixed64 => Value::from(r.fixed64()? as i64),
            Kind::Double => float_value(ctx, f64::from_bits(r.fixed64()?))?,
            Kind::Float => float_value(ctx, f64::from(f32::from_bits(r.fixed32()?)))?,
        })
    }

    /// One `{key = 1; value = 2}` map entry; absent parts are their zero
    /// values.
    fn map_entry(
        &self,
        ctx: &str,
        entry: &[u8],
        key_kind: Kind,
        value_kind: Kind,
        target: Option<usize>,
        st: State,
    ) -> Result<(String, Value), DecodeError> {
        let mut key = None;
        let mut value = None;
        let mut r = Reader::new(entry, ctx);
        while !r.done() {
            let (tag, wire) = r.key()?;
            match tag {
                1 => key = Some(self.value(ctx, &mut r, wire, key_kind, None, st)?),
                2 => value = Some(self.value(ctx, &mut r, wire, value_kind, target, st)?),
                _ => r.skip(wire)?,
            }
        }
        let key = match key {
            Some(Value::String(s)) => s,
            Some(v) => v.to_string(),
            None => match key_kind {
                Kind::String => String::new(),
                Kind::Bool => "false".to_string(),
                _ => "0".to_string(),
            },
        };
        let value = match value {
            Some(v) => v,
            None => match value_kind {
                Kind::String | Kind::Bytes => Value::String(String::new()),
                Kind::Bool => Value::Bool(false),
                Kind::Message(name) => {
                    let idx =
                        target.ok_or_else(|| DecodeError::UnknownMessage(name.to_string()))?;
                    self.decode(idx, &[], st.deeper())?
                }
                _ => Value::from(0),
            },
        };
        Ok((key, value))
    }
}

/// Go's float64 JSON: integral values print without a fraction.
fn float_value(ctx: &str, f: f64) -> Result<Value, DecodeError> {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        return Ok(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| malformed(ctx, format!("{f} has no JSON form")))
}

fn decode_envelope(bytes: &[u8], st: State) -> Result<Value, DecodeError> {
    if st.depth > MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    let body = bytes
        .strip_prefix(MAGIC)
        .ok_or(DecodeError::MissingPrefix)?;
    const CTX: &str = "runtime.Unknown";
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    let mut encoding = String::new();
    let mut r = Reader::new(body, CTX);
    while !r.done() {
        let (tag, wire) = r.key()?;
        match (tag, wire) {
            (1, WIRE_LEN) => {
                let mut tm = Reader::new(r.len_delimited()?, "runtime.TypeMeta");
                while !tm.done() {
                    match tm.key()? {
                        (1, WIRE_LEN) => api_version = lossy(tm.len_delimited()?),
                        (2, WIRE_LEN) => kind = lossy(tm.len_delimited()?),
                        (_, w) => tm.skip(w)?,
                    }
                }
            }
            (2, WIRE_LEN) => raw = r.len_delimited()?,
            (3, WIRE_LEN) => encoding = lossy(r.len_delimited()?),
            (_, w) => r.skip(w)?,
        }
    }
    if !encoding.is_empty() {
        return Err(DecodeError::ContentEncoding(encoding));
    }
    if kind.is_empty() {
        return Err(DecodeError::MissingKind);
    }
    let reg = registry();
    let idx = reg
        .kind_index(&api_version, &kind)
        .ok_or_else(|| DecodeError::UnknownKind {
            api_version: api_version.clone(),
            kind: kind.clone(),
        })?;
    let body = reg.decode(idx, raw, st)?;
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), Value::String(api_version));
    obj.insert("kind".into(), Value::String(kind));
    if let Value::Object(fields) = body {
        for (k, v) in fields {
            if k != "apiVersion" && k != "kind" {
                obj.insert(k, v);
            }
        }
    }
    Ok(Value::Object(obj))
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// RFC 3339 in UTC, as Go's `Time.UTC().Format(...)`; the zero time (year
/// 1) is null.
fn format_time(
    ctx: &str,
    seconds: i64,
    nanos: i64,
    format: chrono::SecondsFormat,
) -> Result<Value, DecodeError> {
    const GO_ZERO_UNIX: i64 = -62_135_596_800;
    let secs = seconds.checked_add(nanos.div_euclid(1_000_000_000));
    let nanos = nanos.rem_euclid(1_000_000_000) as u32;
    let Some(secs) = secs else {
        return Err(malformed(ctx, "time out of range"));
    };
    if secs == GO_ZERO_UNIX && nanos == 0 {
        return Ok(Value::Null);
    }
    let t = chrono::DateTime::from_timestamp(secs, nanos)
        .ok_or_else(|| malformed(ctx, format!("time {secs}s out of range")))?;
    use chrono::Datelike as _;
    if !(0..=9999).contains(&t.year()) {
        return Err(malformed(
            ctx,
            format!("year {} outside [0,9999]", t.year()),
        ));
    }
    Ok(Value::String(t.to_rfc3339_opts(format, true)))
}

/// Go's `time.Duration.String()`: `1h0m0s`, `30s`, `1.5s`, `100ms`, `0s`.
pub fn go_duration(nanos: i64) -> String {
    let neg = nanos < 0;
    let mut u = nanos.unsigned_abs();
    let mut out = String::new();
    // Fraction of u / 10^prec without trailing zeros; returns u / 10^prec.
    fn frac(out: &mut String, u: u64, prec: u32) -> u64 {
        let p = 10u64.pow(prec);
        let f = u % p;
        if f != 0 {
            let digits = format!("{:0width$}", f, width = prec as usize);
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
        u / p
    }
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => return "0s".to_string(),
            1..=999 => (0, "ns"),
            1_000..=999_999 => (3, "µs"),
            _ => (6, "ms"),
        };
        let mut f = String::new();
        let whole = frac(&mut f, u, prec);
        out.push_str(&whole.to_string());
        out.push_str(&f);
        out.push_str(unit);
    } else {
        let mut f = String::new();
        u = frac(&mut f, u, 9);
        let s = u % 60;
        u /= 60;
        if u > 0 {
            let m = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&format!("{u}h"));
            }
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&format!("{s}{f}s"));
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

const WIRE_VARINT: u8 = 0;
const WIRE_FIXED64: u8 = 1;
const WIRE_LEN: u8 = 2;
const WIRE_START_GROUP: u8 = 3;
const WIRE_END_GROUP: u8 = 4;
const WIRE_FIXED32: u8 = 5;

fn wire_type_of(kind: Kind) -> u8 {
    match kind {
        Kind::String | Kind::Bytes | Kind::Message(_) | Kind::Map(..) => WIRE_LEN,
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => WIRE_FIXED64,
        Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => WIRE_FIXED32,
        _ => WIRE_VARINT,
    }
}

fn is_packable(kind: Kind) -> bool {
    wire_type_of(kind) != WIRE_LEN
}

/// A cursor over protobuf wire data.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    context: &'a str,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], context: &'a str) -> Self {
        Reader {
            buf,
            pos: 0,
            context,
        }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn truncated(&self) -> DecodeError {
        DecodeError::Truncated(self.context.to_string())
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = *self.buf.get(self.pos).ok_or_else(|| self.truncated())?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(malformed(self.context, "varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated())?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.truncated())?;
        self.pos = end;
        Ok(s)
    }

    fn fixed32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    fn fixed64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn len_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| self.truncated())?;
        self.take(n)
    }

    /// A field key: tag and wire type.
    fn key(&mut self) -> Result<(u32, u8), DecodeError> {
        let k = self.varint()?;
        let tag = u32::try_from(k >> 3)
            .map_err(|_| malformed(self.context, "field number out of range"))?;
        if tag == 0 {
            return Err(malformed(self.context, "field number 0"));
        }
        Ok((tag, (k & 7) as u8))
    }

    /// Skips the value of an unknown field.
    fn skip(&mut self, wire: u8) -> Result<(), DecodeError> {
        self.skip_nested(wire, 0)
    }

    fn skip_nested(&mut self, wire: u8, depth: usize) -> Result<(), DecodeError> {
        match wire {
            WIRE_VARINT => self.varint().map(drop),
            WIRE_FIXED64 => self.take(8).map(drop),
            WIRE_LEN => self.len_delimited().map(drop),
            WIRE_FIXED32 => self.take(4).map(drop),
            WIRE_START_GROUP => {
                if depth > MAX_DEPTH {
                    return Err(DecodeError::TooDeep);
                }
                loop {
                    if self.done() {
                        return Err(self.truncated());
                    }
                    let (_, w) = self.key()?;
                    if w == WIRE_END_GROUP {
                        return Ok(());
                    }
                    self.skip_nested(w, depth + 1)?;
                }
            }
            w => Err(malformed(self.context, format!("wire type {w}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_pb::api::apps::v1 as apps;
    use k8s_pb::api::coordination::v1 as coordination;
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use k8s_pb::apimachinery::pkg::api::resource::Quantity;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use k8s_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
    use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
    use prost::Message as _;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let u = Unknown {
            type_meta: Some(TypeMeta {
                api_version: s(api_version),
                kind: s(kind),
            }),
            raw: Some(raw),
            // Go writes these even when empty.
            content_encoding: s(""),
            content_type: s(""),
        };
        let mut out = MAGIC.to_vec();
        out.extend(u.encode_to_vec());
        out
    }

    fn encode<M: prost::Message>(api_version: &str, kind: &str, m: &M) -> Vec<u8> {
        envelope(api_version, kind, m.encode_to_vec())
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn quantity(v: &str) -> Quantity {
        Quantity { string: s(v) }
    }

    fn time(seconds: i64) -> meta::Time {
        meta::Time {
            seconds: Some(seconds),
            nanos: Some(0),
        }
    }

    // 2026-11-21T06:48:50Z
    const T: i64 = 1_795_243_730;

    fn configmap() -> core::ConfigMap {
        core::ConfigMap {
            metadata: Some(meta::ObjectMeta {
                name: s("x"),
                namespace: s("default"),
                labels: labels(&[("app", "web"), ("tier", "front")]),
                creation_timestamp: Some(time(T)),
                ..Default::default()
            }),
            data: labels(&[("a", "b"), ("empty", "")]),
            binary_data: [("bin".to_string(), vec![0u8, 1, 2, 255])]
                .into_iter()
                .collect(),
            immutable: None,
        }
    }

    #[test]
    fn configmap_data_binary_data_labels_time() {
        let v = decode(&encode("v1", "ConfigMap", &configmap())).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "x",
                    "namespace": "default",
                    "labels": {"app": "web", "tier": "front"},
                    "creationTimestamp": "2026-11-21T06:48:50Z"
                },
                "data": {"a": "b", "empty": ""},
                "binaryData": {"bin": "AAEC/w=="}
            })
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert!(keys.contains(&&"apiVersion".to_string()));
    }

    #[test]
    fn configmap_deserializes_into_k8s_openapi() {
        let v = decode(&encode("v1", "ConfigMap", &configmap())).unwrap();
        let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(v).unwrap();
        assert_eq!(cm.metadata.name.as_deref(), Some("x"));
        assert_eq!(cm.data.unwrap()["a"], "b");
        assert_eq!(cm.binary_data.unwrap()["bin"].0, vec![0u8, 1, 2, 255]);
        assert_eq!(
            cm.metadata.creation_timestamp.unwrap().0.to_string(),
            "2026-11-21T06:48:50Z"
        );
    }

    #[test]
    fn zero_creation_timestamp_is_left_out_as_upstream() {
        // Go's client marshals a zero metav1.Time as an empty message;
        // since v1.34 upstream's JSON omits a zero creationTimestamp
        // (`omitzero`, kubernetes#130989) instead of writing null.
        let mut cm = configmap();
        cm.metadata.as_mut().unwrap().creation_timestamp = Some(meta::Time::default());
        let v = decode(&encode("v1", "ConfigMap", &cm)).unwrap();
        assert!(
            !v["metadata"]
                .as_object()
                .unwrap()
                .contains_key("creationTimestamp"),
            "{v}"
        );
    }

    fn container() -> core::Container {
        core::Container {
            name: s("nginx"),
            image: s("nginx:1.27"),
            ports: vec![core::ContainerPort {
                container_port: Some(80),
                protocol: s("TCP"),
                ..Default::default()
            }],
            resources: Some(core::ResourceRequirements {
                limits: [
                    ("cpu".to_string(), quantity("500m")),
                    ("memory".to_string(), quantity("128Mi")),
                ]
                .into_iter()
                .collect(),
                ..Default::default()
            }),
            security_context: Some(core::SecurityContext::default()),
            ..Default::default()
        }
    }

    #[test]
    fn deployment_with_zero_replicas_and_int_or_string() {
        let d = apps::Deployment {
            metadata: Some(meta::ObjectMeta {
                name: s("web"),
                labels: labels(&[("app", "web")]),
                ..Default::default()
            }),
            spec: Some(apps::DeploymentSpec {
                replicas: Some(0),
                selector: Some(meta::LabelSelector {
                    match_labels: labels(&[("app", "web")]),
                    ..Default::default()
                }),
                template: Some(core::PodTemplateSpec {
                    metadata: Some(meta::ObjectMeta {
                        labels: labels(&[("app", "web")]),
                        ..Default::default()
                    }),
                    spec: Some(core::PodSpec {
                        containers: vec![container()],
                        ..Default::default()
                    }),
                }),
                strategy: Some(apps::DeploymentStrategy {
                    r#type: s("RollingUpdate"),
                    rolling_update: Some(apps::RollingUpdateDeployment {
                        max_unavailable: Some(IntOrString {
                            r#type: Some(0),
                            int_val: Some(1),
                            str_val: None,
                        }),
                        max_surge: Some(IntOrString {
                            r#type: Some(1),
                            int_val: None,
                            str_val: s("25%"),
                        }),
                    }),
                }),
                progress_deadline_seconds: Some(600),
                ..Default::default()
            }),
            status: None,
        };
        let v = decode(&encode("apps/v1", "Deployment", &d)).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "labels": {"app": "web"}},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{
                            "name": "nginx",
                            "image": "nginx:1.27",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                            "securityContext": {}
                        }]}
                    },
                    "strategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}
                    },
                    "progressDeadlineSeconds": 600
                }
            })
        );
        let typed: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(v).unwrap();
        assert_eq!(typed.spec.unwrap().replicas, Some(0));
    }

    #[test]
    fn pod_with_status_ips_and_managed_fields() {
        let fields = br#"{"f:data":{"f:a":{}}}"#.to_vec();
        let p = core::Pod {
            metadata: Some(meta::ObjectMeta {
                name: s("p"),
                namespace: s("default"),
                uid: s("6f1c9a5e-0000-4000-8000-000000000001"),
                generation: Some(0),
                creation_timestamp: Some(time(T)),
                managed_fields: vec![meta::ManagedFieldsEntry {
                    manager: s("kubectl-create"),
                    operation: s("Update"),
                    api_version: s("v1"),
                    time: Some(time(T)),
                    fields_type: s("FieldsV1"),
                    fields_v1: Some(meta::FieldsV1 { raw: Some(fields) }),
                    subresource: None,
                }],
                ..Default::default()
            }),
            spec: Some(core::PodSpec {
                containers: vec![container()],
                restart_policy: s("Always"),
                termination_grace_period_seconds: Some(30),
                host_network: Some(false),
                ..Default::default()
            }),
            status: Some(core::PodStatus {
                phase: s("Running"),
                host_ip: s("10.0.0.1"),
                pod_ip: s("10.244.0.5"),
                pod_ips: vec![core::PodIp {
                    ip: s("10.244.0.5"),
                }],
                start_time: Some(time(T)),
                ..Default::default()
            }),
        };
        let v = decode(&encode("v1", "Pod", &p)).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "p",
                    "namespace": "default",
                    "uid": "6f1c9a5e-0000-4000-8000-000000000001",
                    "creationTimestamp": "2026-11-21T06:48:50Z",
                    "managedFields": [{
                        "manager": "kubectl-create",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": "2026-11-21T06:48:50Z",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {"f:a": {}}}
                    }]
                },
                "spec": {
                    "containers": [{
                        "name": "nginx",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                        "securityContext": {}
                    }],
                    "restartPolicy": "Always",
                    // Go writes `generation: 0` and `hostNetwork: false` in
                    // protobuf; its JSON leaves both out (non-pointer omitempty).
                    "terminationGracePeriodSeconds": 30
                },
                "status": {
                    "phase": "Running",
                    "hostIP": "10.0.0.1",
                    "podIP": "10.244.0.5",
                    "podIPs": [{"ip": "10.244.0.5"}],
                    "startTime": "2026-11-21T06:48:50Z"
                }
            })
        );
        let _: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).unwrap();
    }

    #[test]
    fn embedded_structs_are_inlined() {
        let spec = core::PodSpec {
            containers: vec![core::Container {
                name: s("app"),
                env_from: vec![core::EnvFromSource {
                    config_map_ref: Some(core::ConfigMapEnvSource {
                        local_object_reference: Some(core::LocalObjectReference { name: s("cfg") }),
                        optional: Some(true),
                    }),
                    ..Default::default()
                }],
                liveness_probe: Some(core::Probe {
                    handler: Some(core::ProbeHandler {
                        http_get: Some(core::HttpGetAction {
                            path: s("/healthz"),
                            port: Some(IntOrString {
                                r#type: Some(1),
                                int_val: Some(0),
                                str_val: s("http"),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    period_seconds: Some(10),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            volumes: vec![core::Volume {
                name: s("cfg"),
                volume_source: Some(core::VolumeSource {
                    config_map: Some(core::ConfigMapVolumeSource {
                        local_object_reference: Some(core::LocalObjectReference { name: s("cfg") }),
                        default_mode: Some(0o644),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            }],
            ..Default::default()
        };
        let v = decode_message("io.k8s.api.core.v1.PodSpec", &spec.encode_to_vec()).unwrap();
        assert_eq!(
            v,
            json!({
                "containers": [{
                    "name": "app",
                    "envFrom": [{"configMapRef": {"name": "cfg", "optional": true}}],
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "http"},
                        "periodSeconds": 10
                    }
                }],
                "volumes": [{"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}]
            })
        );
        let _: k8s_openapi::api::core::v1::PodSpec = serde_json::from_value(v).unwrap();
    }

    #[test]
    fn service_cluster_ip_and_target_port() {
        let svc = core::Service {
            metadata: Some(meta::ObjectMeta {
                name: s("web"),
                ..Default::default()
            }),
            spec: Some(core::ServiceSpec {
                ports: vec![core::ServicePort {
                    name: s("http"),
                    protocol: s("TCP"),
                    port: Some(80),
                    target_port: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(8080),
                        str_val: s(""),
                    }),
                    ..Default::default()
                }],
                selector: labels(&[("app", "web")]),
                cluster_ip: s("10.96.0.10"),
                cluster_ips: vec!["10.96.0.10".to_string()],
                r#type: s("ClusterIP"),
                ip_families: vec!["IPv4".to_string()],
                ..Default::default()
            }),
            status: None,
        };
        let v = decode(&encode("v1", "Service", &svc)).unwrap();
        assert_eq!(
            v["spec"],
            json!({
                "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                "selector": {"app": "web"},
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
                "type": "ClusterIP",
                "ipFamilies": ["IPv4"]
            })
        );
    }

    #[test]
    fn namespace_and_lease_micro_time() {
        let ns = core::Namespace {
            metadata: Some(meta::ObjectMeta {
                name: s("team-a"),
                ..Default::default()
            }),
            spec: None,
            status: None,
        };
        assert_eq!(
            decode(&encode("v1", "Namespace", &ns)).unwrap(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
        );
        let lease = coordination::Lease {
            metadata: Some(meta::ObjectMeta {
                name: s("node-1"),
                ..Default::default()
            }),
            spec: Some(coordination::LeaseSpec {
                holder_identity: s("node-1"),
                lease_duration_seconds: Some(40),
                renew_time: Some(meta::MicroTime {
                    seconds: Some(T),
                    nanos: Some(123_456_789),
                }),
                ..Default::default()
            }),
        };
        let v = decode(&encode("coordination.k8s.io/v1", "Lease", &lease)).unwrap();
        assert_eq!(
            v["spec"],
            json!({
                "holderIdentity": "node-1",
                "leaseDurationSeconds": 40,
                "renewTime": "2026-11-21T06:48:50.123456Z"
            })
        );
    }

    #[test]
    fn crd_schema_json_and_or_types() {
        let props = apiext::JsonSchemaProps {
            r#type: s("object"),
            properties: [(
                "spec".to_string(),
                apiext::JsonSchemaProps {
                    r#type: s("object"),
                    x_kubernetes_preserve_unknown_fields: Some(true),
                    default: Some(apiext::Json {
                        raw: Some(br#"{"size":3}"#.to_vec()),
                    }),
                    maximum: Some(10.0),
                    minimum: Some(0.5),
                    additional_properties: Some(Box::new(apiext::JsonSchemaPropsOrBool {
                        allows: Some(true),
                        schema: None,
                    })),
                    items: Some(Box::new(apiext::JsonSchemaPropsOrArray {
                        schema: Some(Box::new(apiext::JsonSchemaProps {
                            r#type: s("string"),
                            ..Default::default()
                        })),
                        j_son_schemas: vec![],
                    })),
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let v = decode_message(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
            &props.encode_to_vec(),
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "type": "object",
                "properties": {"spec": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "default": {"size": 3},
                    "maximum": 10,
                    "minimum": 0.5,
                    "additionalProperties": true,
                    "items": {"type": "string"}
                }}
            })
        );
    }

    #[test]
    fn raw_extension_is_json_or_nested_protobuf() {
        let ev = meta::WatchEvent {
            r#type: s("ADDED"),
            object: Some(RawExtension {
                raw: Some(encode("v1", "ConfigMap", &configmap())),
            }),
        };
        let v = decode(&encode("meta.k8s.io/v1", "WatchEvent", &ev)).unwrap();
        assert_eq!(v["type"], "ADDED");
        assert_eq!(v["object"]["kind"], "ConfigMap");
        assert_eq!(v["object"]["data"]["a"], "b");

        let rev = apps::ControllerRevision {
            metadata: None,
            data: Some(RawExtension {
                raw: Some(br#"{"spec":{"template":{}}}"#.to_vec()),
            }),
            revision: Some(2),
        };
        let v = decode(&encode("apps/v1", "ControllerRevision", &rev)).unwrap();
        assert_eq!(v["data"], json!({"spec": {"template": {}}}));
        assert_eq!(v["revision"], 2);
    }

    #[test]
    fn verbs_and_status_from_meta() {
        let list = meta::APIResourceList {
            group_version: s("v1"),
            resources: vec![meta::APIResource {
                name: s("pods"),
                namespaced: Some(true),
                kind: s("Pod"),
                verbs: Some(meta::Verbs {
                    items: vec!["get".into(), "list".into()],
                }),
                ..Default::default()
            }],
        };
        let v = decode(&encode("v1", "APIResourceList", &list)).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "APIResourceList",
                "groupVersion": "v1",
                "resources": [{"name": "pods", "namespaced": true, "kind": "Pod", "verbs": ["get", "list"]}]
            })
        );
        let st = meta::Status {
            status: s("Failure"),
            code: Some(404),
            reason: s("NotFound"),
            ..Default::default()
        };
        let v = decode(&encode("v1", "Status", &st)).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 404, "reason": "NotFound"})
        );
    }

    #[test]
    fn packed_and_unpacked_repeated_scalars() {
        const NAME: &str = "io.k8s.api.core.v1.PodSecurityContext";
        // prost writes `packed = "false"` fields unpacked.
        let unpacked = core::PodSecurityContext {
            supplemental_groups: vec![1000, 2000, -1],
            ..Default::default()
        }
        .encode_to_vec();
        // The same field (tag 4, int64) packed: key 0x22, length, varints.
        let mut payload = Vec::new();
        for v in [1000i64, 2000, -1] {
            prost::encoding::encode_varint(v as u64, &mut payload);
        }
        let mut packed = vec![0x22];
        prost::encoding::encode_varint(payload.len() as u64, &mut packed);
        packed.extend(payload);
        let want = json!({"supplementalGroups": [1000, 2000, -1]});
        assert_eq!(decode_message(NAME, &unpacked).unwrap(), want);
        assert_eq!(decode_message(NAME, &packed).unwrap(), want);
    }

    #[test]
    fn unknown_tags_are_skipped() {
        let mut raw = configmap().encode_to_vec();
        // tag 99 varint, tag 100 length-delimited, tag 101 fixed32, tag 102 fixed64
        raw.extend([0x98, 0x06, 0x07]);
        raw.extend([0xa2, 0x06, 0x02, b'h', b'i']);
        raw.extend([0xad, 0x06, 1, 2, 3, 4]);
        raw.extend([0xb1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]);
        let v = decode(&envelope("v1", "ConfigMap", raw)).unwrap();
        assert_eq!(v["data"]["a"], "b");
    }

    #[test]
    fn errors() {
        let good = encode("v1", "ConfigMap", &configmap());
        assert_eq!(decode(&good[4..]), Err(DecodeError::MissingPrefix));
        assert_eq!(decode(b"{}"), Err(DecodeError::MissingPrefix));
        assert!(matches!(
            decode(&encode("v1", "Frobnicator", &configmap())),
            Err(DecodeError::UnknownKind { ref kind, .. }) if kind == "Frobnicator"
        ));
        assert!(matches!(
            decode(&encode("example.com/v1", "Widget", &configmap())),
            Err(DecodeError::UnknownKind { .. })
        ));
        for cut in [good.len() - 1, good.len() - 7, 12] {
            let err = decode(&good[..cut]).unwrap_err();
            assert!(
                matches!(err, DecodeError::Truncated(_)),
                "cut at {cut}: {err:?}"
            );
        }
        // A truncated object inside a complete envelope.
        let raw = configmap().encode_to_vec();
        let err = decode(&envelope("v1", "ConfigMap", raw[..raw.len() - 3].to_vec())).unwrap_err();
        assert!(matches!(err, DecodeError::Truncated(_)), "{err:?}");
        assert!(err.to_string().contains("truncated"), "{err}");

        let mut u = Unknown::decode(&good[4..]).unwrap();
        u.content_encoding = s("gzip");
        let mut bytes = MAGIC.to_vec();
        bytes.extend(u.encode_to_vec());
        assert_eq!(
            decode(&bytes),
            Err(DecodeError::ContentEncoding("gzip".into()))
        );
        assert!(decode(MAGIC).is_err());
    }

    // Request bodies kubectl v1.32 sent for `kubectl create configmap x
    // --from-literal=a=b --from-literal=empty=`, `kubectl create deployment
    // web --image=nginx --replicas=0 --port=80` and `kubectl create namespace
    // team-a` (captured from the wire).
    const KUBECTL_CONFIGMAP: &str = concat!(
        "6b3873000a0f0a0276311209436f6e6669674d617012260a110a017812001a00",
        "22002a0032003800420012060a016112016212090a05656d70747912001a0022",
        "00",
    );
    const KUBECTL_DEPLOYMENT: &str = concat!(
        "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412b8010a1f",
        "0a0377656212001a0022002a003200380042005a0a0a03617070120377656212",
        "86010800120c0a0a0a0361707012037765621a6c0a1c0a0012001a0022002a00",
        "3200380042005a0a0a036170701203776562124c122e0a056e67696e7812056e",
        "67696e782a00320a0a001000185022002a0042006a0072008001008801009001",
        "00a201001a00320042004a0052005800600068008201008a01009a0100c20100",
        "22020a00280038001a0c0800100018002000280038001a002200",
    );
    const KUBECTL_NAMESPACE: &str = concat!(
        "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d",
        "6112001a0022002a0032003800420012001a020a001a002200",
    );

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn kubectl_bodies_lose_the_zero_values_go_json_omits() {
        let v = decode(&unhex(KUBECTL_CONFIGMAP)).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x"},
                "data": {"a": "b", "empty": ""}
            })
        );
        let d = decode(&unhex(KUBECTL_DEPLOYMENT)).unwrap();
        // `replicas` is a pointer in Go: its zero is meaningful and kept.
        assert_eq!(d["spec"]["replicas"], 0);
        // Non-pointer omitempty fields: gone, as upstream prints them.
        for absent in ["paused", "minReadySeconds"] {
            assert!(d["spec"].get(absent).is_none(), "{absent}: {d}");
        }
        let pod = &d["spec"]["template"]["spec"];
        for absent in ["hostNetwork", "hostPID", "hostIPC"] {
            assert!(pod.get(absent).is_none(), "{absent}: {pod}");
        }
        let c = &pod["containers"][0];
        for absent in ["imagePullPolicy", "stdin", "stdinOnce", "tty"] {
            assert!(c.get(absent).is_none(), "{absent}: {c}");
        }
        assert!(d["spec"]["template"]["metadata"]
            .get("generation")
            .is_none());
    }

    #[test]
    fn kubectl_bodies_with_empty_strings_omitted() {
        let opts = DecodeOptions {
            omit_empty_strings: true,
        };
        let v = decode_with(&unhex(KUBECTL_CONFIGMAP), opts).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x"},
                // Map values are not fields: kept.
                "data": {"a": "b", "empty": ""}
            })
        );
        let v = decode_with(&unhex(KUBECTL_NAMESPACE), opts).unwrap();
        assert_eq!(
            v,
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "team-a"},
                "spec": {},
                "status": {}
            })
        );
        let v = decode_with(&unhex(KUBECTL_DEPLOYMENT), opts).unwrap();
        // What upstream prints for `kubectl create deployment web
        // --image=nginx --port=80 --replicas=0` before defaulting: only
        // pointers (`replicas`), fields without omitempty (`name`,
        // `containerPort`) and structs (`strategy`, `status`) survive.
        assert_eq!(
            v,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "labels": {"app": "web"}},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [{
                                "name": "nginx",
                                "image": "nginx",
                                "ports": [{"containerPort": 80}],
                                "resources": {}
                            }]
                        }
                    },
                    "strategy": {}
                },
                "status": {}
            })
        );
        let _: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(v).unwrap();
    }

    #[test]
    fn go_duration_strings() {
        const S: i64 = 1_000_000_000;
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(30 * S), "30s");
        assert_eq!(go_duration(3600 * S), "1h0m0s");
        assert_eq!(go_duration(S + S / 2), "1.5s");
        assert_eq!(go_duration(90 * 60 * S), "1h30m0s");
        assert_eq!(go_duration(1_500_000), "1.5ms");
        assert_eq!(go_duration(100_000), "100µs");
        assert_eq!(go_duration(42), "42ns");
        assert_eq!(go_duration(-2 * S), "-2s");
        let d = meta::Duration {
            duration: Some(5 * 60 * S),
        };
        assert_eq!(
            decode_message(
                "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
                &d.encode_to_vec()
            )
            .unwrap(),
            json!("5m0s")
        );
    }

    #[test]
    fn group_versions_map_to_packages() {
        for r in RESOURCES {
            let pkg = package_for_api_version(r.api_version);
            assert_eq!(
                r.message.to_ascii_lowercase(),
                format!("{pkg}.{}", r.kind).to_ascii_lowercase(),
                "{} {}",
                r.api_version,
                r.kind
            );
            assert_eq!(message_for_kind(r.api_version, r.kind), Some(r.message));
        }
        assert_eq!(
            message_for_kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            Some("io.k8s.api.rbac.v1.ClusterRoleBinding")
        );
        assert_eq!(
            message_for_kind("v1", "ConfigMapList"),
            Some("io.k8s.api.core.v1.ConfigMapList")
        );
        assert_eq!(
            message_for_kind("apps/v1", "DeleteOptions"),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
        );
        assert_eq!(
            message_for_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            Some(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
            )
        );
        for (api_version, kind, message) in [
            ("autoscaling/v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
            ("policy/v1", "Eviction", "io.k8s.api.policy.v1.Eviction"),
            (
                "authentication.k8s.io/v1",
                "TokenRequest",
                "io.k8s.api.authentication.v1.TokenRequest",
            ),
            (
                "v1",
                "Status",
                "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            ),
            (
                "meta.k8s.io/v1",
                "WatchEvent",
                "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            ),
            ("v1", "List", "io.k8s.api.core.v1.List"),
            (
                "admission.k8s.io/v1",
                "AdmissionReview",
                "io.k8s.api.admission.v1.AdmissionReview",
            ),
            (
                "apidiscovery.k8s.io/v2",
                "APIGroupDiscoveryList",
                "io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList",
            ),
            (
                "apiregistration.k8s.io/v1",
                "APIServiceList",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList",
            ),
            (
                "metrics.k8s.io/v1beta1",
                "PodMetrics",
                "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics",
            ),
            (
                "storage.k8s.io/v1beta1",
                "CSIDriver",
                "io.k8s.api.storage.v1beta1.CSIDriver",
            ),
            (
                "internal.apiserver.k8s.io/v1alpha1",
                "StorageVersion",
                "io.k8s.api.apiserverinternal.v1alpha1.StorageVersion",
            ),
        ] {
            assert_eq!(
                message_for_kind(api_version, kind),
                Some(message),
                "{api_version} {kind}"
            );
        }
        assert_eq!(message_for_kind("meta.k8s.io/v1", "Table"), None);
        assert_eq!(
            message_for_kind("storage.k8s.io/v1", "CSIDriver"),
            Some("io.k8s.api.storage.v1.CSIDriver")
        );
    }

    #[test]
    fn schema_is_consistent() {
        let reg = registry();
        for (i, m) in MESSAGES.iter().enumerate() {
            assert!(
                m.fields.windows(2).all(|w| w[0].tag < w[1].tag),
                "{}",
                m.name
            );
            for (f, info) in m.fields.iter().zip(&reg.fields[i]) {
                assert!(
                    !matches!(f.kind, Kind::Enumeration),
                    "{}.{}",
                    m.name,
                    f.name
                );
                if let Kind::Message(t) | Kind::Map(_, &Kind::Message(t)) = f.kind {
                    assert!(info.target.is_some(), "{}.{} -> {t}", m.name, f.name);
                }
            }
        }
    }

    #[test]
    fn json_names_come_from_openapi_schemas() {
        let reg = registry();
        let props = openapi_properties();
        let mut missing = Vec::new();
        for (i, m) in MESSAGES.iter().enumerate() {
            if reg.special[i] != Special::None {
                continue;
            }
            let Some(p) = props.get(m.name) else {
                continue;
            };
            for info in &reg.fields[i] {
                if !info.inline && !p.names.contains(&info.json) {
                    missing.push(format!("{}.{}", m.name, info.json));
                }
            }
        }
        // Fields k8s-pb 0.9 has that Kubernetes 1.34's OpenAPI does not:
        // named by the lowerCamelCase fallback.
        let newer = [
            "io.k8s.api.core.v1.NodeStatus.declaredFeatures",
            "io.k8s.api.core.v1.PodCertificateProjection.userAnnotations",
            "io.k8s.api.core.v1.PodSpec.workloadRef",
            "io.k8s.api.core.v1.PodStatus.allocatedResources",
            "io.k8s.api.core.v1.PodStatus.resources",
            "io.k8s.api.resource.v1alpha3.DeviceTaintRule.status",
            "io.k8s.api.storage.v1.CSIDriverSpec.serviceAccountTokenInSecrets",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition.observedGeneration",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus.observedGeneration",
        ];
        missing.retain(|m| !newer.contains(&m.as_str()));
        assert!(
            missing.is_empty(),
            "fields without a schema property: {missing:?}"
        );
        let inline: Vec<String> = MESSAGES
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                m.fields
                    .iter()
                    .zip(&reg.fields[i])
                    .filter(|(_, info)| info.inline)
                    .map(|(f, _)| format!("{}.{}", short_name(m.name), f.name))
                    .collect::<Vec<_>>()
            })
            .collect();
        for want in [
            "Volume.volume_source",
            "Probe.handler",
            "ConfigMapEnvSource.local_object_reference",
            "EphemeralContainer.ephemeral_container_common",
            "PersistentVolumeSpec.persistent_volume_source",
            "IngressRule.ingress_rule_value",
        ] {
            assert!(
                inline.iter().any(|i| i == want),
                "{want} not inline: {inline:?}"
            );
        }
        eprintln!("inline fields: {inline:?}");
        let pod_status = reg.index("io.k8s.api.core.v1.PodStatus").unwrap();
        assert!(reg.fields[pod_status].iter().any(|f| f.json == "podIPs"));
    }
}
