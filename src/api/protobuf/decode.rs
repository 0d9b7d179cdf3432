//! Decoding: the bytes of a Kubernetes protobuf envelope (or one message)
//! into the JSON upstream prints for the same object, in each Go type's
//! JSON form (Time, Duration, IntOrString, Quantity, RawExtension, ...).

use base64::Engine as _;
use serde_json::{Map, Value};

use super::registry::{registry, Registry, Special};
use super::wire::{is_packable, wire_type_of, Reader, WIRE_LEN};
use super::{zero_values, Card, Kind, MAGIC, MAX_DEPTH, MESSAGES};

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

pub(super) fn malformed(context: &str, reason: impl Into<String>) -> DecodeError {
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

impl Registry {
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
                                && go_omits_zero(msg.name, info.json, msg.fields[i].kind, &v) => {}
                        Some(Value::String(s))
                            if s.is_empty()
                                && st.opts.omit_empty_strings
                                && !info.required
                                && msg.fields[i].card == Card::Optional
                                && !zero_values_known(msg.name) => {}
                        Some(v) => {
                            obj.insert(info.json.to_string(), v);
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
