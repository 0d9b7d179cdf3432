//! Kubernetes protobuf encoding: the JSON of a built-in object to the bytes
//! kube-apiserver answers with (`k8s\0` + `runtime.Unknown`), the inverse of
//! the decoder next to it and driven by the same tables.
//!
//! Fields are written in tag order, as Go's generated marshallers write
//! them; map entries sorted by key, as Go sorts them; repeated scalars
//! unpacked (proto2). A field absent from the JSON (or null) is absent from
//! the wire: Go would write a non-pointer field's zero value instead, which
//! every decoder (Go's, prost, kapi's) reads back as the same object.

use base64::Engine as _;
use serde_json::Value;

use super::registry::{registry, Registry, Special};
use super::wire::{WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT};
use super::{Card, Kind, MAGIC, MAX_DEPTH, MESSAGES};

/// Why JSON could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("no protobuf message is known for kind \"{kind}\" of apiVersion \"{api_version}\"")]
    UnknownKind { api_version: String, kind: String },
    #[error("unknown protobuf message {0}")]
    UnknownMessage(String),
    #[error("{context}: {reason}")]
    Invalid { context: String, reason: String },
    #[error("objects nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

fn invalid(context: &str, reason: impl Into<String>) -> EncodeError {
    EncodeError::Invalid {
        context: context.to_string(),
        reason: reason.into(),
    }
}

/// Encodes an object (its JSON carries `apiVersion` and `kind`) in the
/// Kubernetes protobuf envelope.
pub fn encode(obj: &Value) -> Result<Vec<u8>, EncodeError> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let raw = encode_kind_body(api_version, kind, obj)?;
    Ok(envelope(api_version, kind, &raw))
}

/// The message bytes (no envelope) of an object of `kind` in `api_version`:
/// what a list's `items` and an envelope's `raw` hold.
pub fn encode_kind_body(
    api_version: &str,
    kind: &str,
    obj: &Value,
) -> Result<Vec<u8>, EncodeError> {
    let reg = registry();
    let idx = reg
        .kind_index(api_version, kind)
        .ok_or_else(|| EncodeError::UnknownKind {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        })?;
    let mut out = Vec::with_capacity(256);
    reg.encode_into(idx, obj, &mut out, 0)?;
    Ok(out)
}

/// Encodes JSON as the message of that full name
/// (`io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`), without an envelope.
pub fn encode_message(name: &str, value: &Value) -> Result<Vec<u8>, EncodeError> {
    let reg = registry();
    let idx = reg
        .index(name)
        .ok_or_else(|| EncodeError::UnknownMessage(name.to_string()))?;
    let mut out = Vec::new();
    reg.encode_into(idx, value, &mut out, 0)?;
    Ok(out)
}

/// Whether kapi can answer this kind in protobuf.
pub fn has_message(api_version: &str, kind: &str) -> bool {
    registry().kind_index(api_version, kind).is_some()
}

/// `k8s\0` + `runtime.Unknown{typeMeta, raw, contentEncoding, contentType}`,
/// the two strings written empty as Go writes them.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(MAGIC.len() + type_meta.len() + raw.len() + 16);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, raw);
    put_bytes(&mut out, 3, b"");
    put_bytes(&mut out, 4, b"");
    out
}

/// A list of `kind` (`ConfigMapList`) from its `metadata` (ListMeta JSON)
/// and its items' message bytes, in the envelope.
pub fn encode_list(
    api_version: &str,
    list_kind: &str,
    metadata: &Value,
    items: &[impl AsRef<[u8]>],
) -> Result<Vec<u8>, EncodeError> {
    let meta = encode_message("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", metadata)?;
    // The envelope is written around the items in one pass: a list can be
    // megabytes, and it is copied once.
    let field_len = |n: usize| 1 + varint_len(n as u64) + n;
    let raw_len = field_len(meta.len())
        + items
            .iter()
            .map(|i| field_len(i.as_ref().len()))
            .sum::<usize>();
    let mut type_meta = Vec::with_capacity(api_version.len() + list_kind.len() + 4);
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, list_kind.as_bytes());
    let mut out =
        Vec::with_capacity(MAGIC.len() + field_len(type_meta.len()) + field_len(raw_len) + 4);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, 1, &type_meta);
    put_key(&mut out, 2, WIRE_LEN);
    put_varint(&mut out, raw_len as u64);
    put_bytes(&mut out, 1, &meta);
    for item in items {
        put_bytes(&mut out, 2, item.as_ref());
    }
    put_bytes(&mut out, 3, b"");
    put_bytes(&mut out, 4, b"");
    Ok(out)
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// One event of a protobuf watch stream: a `WatchEvent` message (no
/// envelope: upstream's stream serializer is the raw one) holding the
/// object's enveloped bytes, behind a 4-byte big-endian length.
pub fn watch_frame(event_type: &str, object: &[u8]) -> Vec<u8> {
    let mut raw_ext = Vec::with_capacity(object.len() + 6);
    put_bytes(&mut raw_ext, 1, object);
    let mut event = Vec::with_capacity(raw_ext.len() + event_type.len() + 8);
    put_bytes(&mut event, 1, event_type.as_bytes());
    put_bytes(&mut event, 2, &raw_ext);
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend_from_slice(&(event.len() as u32).to_be_bytes());
    out.extend_from_slice(&event);
    out
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, tag: u32, wire: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

fn put_bytes(out: &mut Vec<u8>, tag: u32, b: &[u8]) {
    put_key(out, tag, WIRE_LEN);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Writes a length-delimited field whose body `f` appends to `out`: the
/// body is written in place and the length inserted before it after.
fn put_nested(
    out: &mut Vec<u8>,
    tag: u32,
    f: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_key(out, tag, WIRE_LEN);
    let start = out.len();
    f(out)?;
    let len = out.len() - start;
    let mut prefix = Vec::with_capacity(5);
    put_varint(&mut prefix, len as u64);
    out.splice(start..start, prefix);
    Ok(())
}

fn as_i64(ctx: &str, v: &Value) -> Result<i64, EncodeError> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u as i64))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| invalid(ctx, format!("{n} is not an integer"))),
        Value::String(s) => s
            .parse()
            .map_err(|_| invalid(ctx, format!("\"{s}\" is not an integer"))),
        Value::Bool(b) => Ok(i64::from(*b)),
        other => Err(invalid(ctx, format!("expected an integer, got {other}"))),
    }
}

fn as_f64(ctx: &str, v: &Value) -> Result<f64, EncodeError> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| invalid(ctx, format!("{n} is not a number"))),
        Value::String(s) => s
            .parse()
            .map_err(|_| invalid(ctx, format!("\"{s}\" is not a number"))),
        other => Err(invalid(ctx, format!("expected a number, got {other}"))),
    }
}

/// Go's `time.ParseDuration`: `1h0m0s`, `1.5s`, `100ms`, `-2m`, `0`.
pub fn parse_go_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += n * unit;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let t = total.round() as i64;
    Some(if neg { -t } else { t })
}

/// RFC 3339 to (seconds, nanos) since the Unix epoch.
fn parse_time(ctx: &str, v: &Value) -> Result<Option<(i64, i64)>, EncodeError> {
    let Some(s) = v.as_str() else {
        return Err(invalid(ctx, format!("expected an RFC 3339 time, got {v}")));
    };
    if s.is_empty() {
        return Ok(None);
    }
    let t = chrono::DateTime::parse_from_rfc3339(s)
        .map_err(|e| invalid(ctx, format!("\"{s}\" is not an RFC 3339 time: {e}")))?;
    Ok(Some((t.timestamp(), i64::from(t.timestamp_subsec_nanos()))))
}

impl Registry {
    /// Appends the fields of message `idx` encoded from `v` to `out`.
    pub(super) fn encode_into(
        &self,
        idx: usize,
        v: &Value,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), EncodeError> {
        if depth > MAX_DEPTH {
            return Err(EncodeError::TooDeep);
        }
        let msg = &MESSAGES[idx];
        let ctx = msg.name;
        match self.special[idx] {
            Special::None => {
                let Value::Object(obj) = v else {
                    if v.is_null() {
                        return Ok(());
                    }
                    return Err(invalid(ctx, format!("expected an object, got {v}")));
                };
                for (i, field) in msg.fields.iter().enumerate() {
                    let info = &self.fields[idx][i];
                    if info.inline {
                        // A Go embedded struct: its fields are the parent's.
                        let target = info
                            .target
                            .ok_or_else(|| EncodeError::UnknownMessage(ctx.to_string()))?;
                        put_nested(out, field.tag, |o| {
                            self.encode_into(target, v, o, depth + 1)
                        })?;
                        continue;
                    }
                    let Some(fv) = obj.get(info.json) else {
                        continue;
                    };
                    if fv.is_null() {
                        continue;
                    }
                    self.encode_field(msg.name, field, info.target, fv, out, depth)?;
                }
                Ok(())
            }
            Special::ArrayWrapper => {
                let field = msg
                    .fields
                    .first()
                    .ok_or_else(|| invalid(ctx, "no items field"))?;
                if v.is_null() {
                    return Ok(());
                }
                self.encode_field(msg.name, field, self.fields[idx][0].target, v, out, depth)
            }
            Special::Time | Special::MicroTime => {
                if v.is_null() {
                    return Ok(());
                }
                if let Some((secs, nanos)) = parse_time(ctx, v)? {
                    put_key(out, 1, WIRE_VARINT);
                    put_varint(out, secs as u64);
                    put_key(out, 2, WIRE_VARINT);
                    put_varint(out, nanos as u64);
                }
                Ok(())
            }
            Special::Duration => {
                let nanos = match v {
                    Value::String(s) => parse_go_duration(s)
                        .ok_or_else(|| invalid(ctx, format!("\"{s}\" is not a duration")))?,
                    other => as_i64(ctx, other)?,
                };
                put_key(out, 1, WIRE_VARINT);
                put_varint(out, nanos as u64);
                Ok(())
            }
            Special::IntOrString => {
                // Go writes all three fields.
                let (ty, int, s) = match v {
                    Value::String(s) => (1u64, 0i64, s.as_str()),
                    other => (0, as_i64(ctx, other)?, ""),
                };
                put_key(out, 1, WIRE_VARINT);
                put_varint(out, ty);
                put_key(out, 2, WIRE_VARINT);
                put_varint(out, int as i32 as i64 as u64);
                put_bytes(out, 3, s.as_bytes());
                Ok(())
            }
            Special::Quantity => {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => return Err(invalid(ctx, format!("expected a quantity, got {other}"))),
                };
                put_bytes(out, 1, s.as_bytes());
                Ok(())
            }
            Special::RawJson => {
                let raw = serde_json::to_vec(v).map_err(|e| invalid(ctx, e.to_string()))?;
                put_bytes(out, 1, &raw);
                Ok(())
            }
            Special::SchemaOrArray | Special::SchemaOrStringArray => {
                let (schema_field, array_field) = (msg.fields.first(), msg.fields.get(1));
                match (v, schema_field, array_field) {
                    (Value::Array(_), _, Some(af)) => {
                        self.encode_field(msg.name, af, self.fields[idx][1].target, v, out, depth)
                    }
                    (Value::Object(_), Some(sf), _) => {
                        self.encode_field(msg.name, sf, self.fields[idx][0].target, v, out, depth)
                    }
                    (Value::Null, _, _) => Ok(()),
                    _ => Err(invalid(
                        ctx,
                        format!("expected a schema or an array, got {v}"),
                    )),
                }
            }
            Special::SchemaOrBool => match v {
                Value::Bool(b) => {
                    put_key(out, 1, WIRE_VARINT);
                    put_varint(out, u64::from(*b));
                    Ok(())
                }
                Value::Object(_) => {
                    put_key(out, 1, WIRE_VARINT);
                    put_varint(out, 1);
                    let sf = msg
                        .fields
                        .get(1)
                        .ok_or_else(|| invalid(ctx, "no schema field"))?;
                    self.encode_field(msg.name, sf, self.fields[idx][1].target, v, out, depth)
                }
                Value::Null => Ok(()),
                other => Err(invalid(
                    ctx,
                    format!("expected a schema or a bool, got {other}"),
                )),
            },
        }
    }

    /// One field (all occurrences of a repeated or map field).
    fn encode_field(
        &self,
        message: &str,
        field: &super::Field,
        target: Option<usize>,
        v: &Value,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), EncodeError> {
        let ctx = || format!("{message}.{}", field.name);
        match (field.card, field.kind) {
            (Card::Map, Kind::Map(k, val)) => {
                let Value::Object(m) = v else {
                    return Err(invalid(&ctx(), format!("expected an object, got {v}")));
                };
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                for key in keys {
                    let item = &m[key.as_str()];
                    put_nested(out, field.tag, |o| {
                        // Every Kubernetes map is keyed by strings.
                        let kv = Value::String(key.clone());
                        self.encode_value(&ctx(), 1, *k, None, &kv, o, depth)?;
                        if !item.is_null() {
                            self.encode_value(&ctx(), 2, *val, target, item, o, depth)?;
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            }
            (Card::Repeated, kind) => {
                let Value::Array(items) = v else {
                    return Err(invalid(&ctx(), format!("expected an array, got {v}")));
                };
                for item in items {
                    if item.is_null() && matches!(kind, Kind::Message(_)) {
                        // Go: a nil pointer in a slice is an empty message.
                        put_bytes(out, field.tag, b"");
                        continue;
                    }
                    self.encode_value(&ctx(), field.tag, kind, target, item, out, depth)?;
                }
                Ok(())
            }
            (_, kind) => self.encode_value(&ctx(), field.tag, kind, target, v, out, depth),
        }
    }

    /// One value with its key.
    #[allow(clippy::too_many_arguments)]
    fn encode_value(
        &self,
        ctx: &str,
        tag: u32,
        kind: Kind,
        target: Option<usize>,
        v: &Value,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), EncodeError> {
        match kind {
            Kind::String => match v {
                Value::String(s) => put_bytes(out, tag, s.as_bytes()),
                Value::Number(n) => put_bytes(out, tag, n.to_string().as_bytes()),
                Value::Bool(b) => put_bytes(out, tag, b.to_string().as_bytes()),
                other => return Err(invalid(ctx, format!("expected a string, got {other}"))),
            },
            Kind::Bytes => {
                let s = v
                    .as_str()
                    .ok_or_else(|| invalid(ctx, format!("expected base64 bytes, got {v}")))?;
                let b = base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| invalid(ctx, format!("bytes are not base64: {e}")))?;
                put_bytes(out, tag, &b);
            }
            Kind::Message(name) => {
                let idx = target.ok_or_else(|| EncodeError::UnknownMessage(name.to_string()))?;
                put_nested(out, tag, |o| self.encode_into(idx, v, o, depth + 1))?;
            }
            Kind::Map(..) => return Err(invalid(ctx, "map outside a map field")),
            Kind::Bool => {
                let b = match v {
                    Value::Bool(b) => *b,
                    Value::String(s) if s == "true" || s == "false" => s == "true",
                    other => return Err(invalid(ctx, format!("expected a bool, got {other}"))),
                };
                put_key(out, tag, WIRE_VARINT);
                put_varint(out, u64::from(b));
            }
            Kind::Int32 | Kind::Enumeration => {
                put_key(out, tag, WIRE_VARINT);
                // Negative int32s are sign-extended to ten bytes, as Go does.
                put_varint(out, as_i64(ctx, v)? as i32 as i64 as u64);
            }
            Kind::Int64 | Kind::Uint64 => {
                put_key(out, tag, WIRE_VARINT);
                put_varint(out, as_i64(ctx, v)? as u64);
            }
            Kind::Uint32 => {
                put_key(out, tag, WIRE_VARINT);
                put_varint(out, u64::from(as_i64(ctx, v)? as u32));
            }
            Kind::Sint32 => {
                let n = as_i64(ctx, v)? as i32;
                put_key(out, tag, WIRE_VARINT);
                put_varint(out, u64::from(((n << 1) ^ (n >> 31)) as u32));
            }
            Kind::Sint64 => {
                let n = as_i64(ctx, v)?;
                put_key(out, tag, WIRE_VARINT);
                put_varint(out, ((n << 1) ^ (n >> 63)) as u64);
            }
            Kind::Fixed32 | Kind::Sfixed32 => {
                put_key(out, tag, WIRE_FIXED32);
                out.extend_from_slice(&(as_i64(ctx, v)? as u32).to_le_bytes());
            }
            Kind::Fixed64 | Kind::Sfixed64 => {
                put_key(out, tag, WIRE_FIXED64);
                out.extend_from_slice(&(as_i64(ctx, v)? as u64).to_le_bytes());
            }
            Kind::Double => {
                put_key(out, tag, WIRE_FIXED64);
                out.extend_from_slice(&as_f64(ctx, v)?.to_bits().to_le_bytes());
            }
            Kind::Float => {
                put_key(out, tag, WIRE_FIXED32);
                out.extend_from_slice(&(as_f64(ctx, v)? as f32).to_bits().to_le_bytes());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(obj: Value) {
        let bytes = encode(&obj).expect("encodes");
        let back = super::super::decode(&bytes).expect("decodes");
        assert_eq!(back, obj, "round trip changed the object");
    }

    #[test]
    fn durations_parse_as_go_does() {
        assert_eq!(parse_go_duration("1h0m0s"), Some(3_600_000_000_000));
        assert_eq!(parse_go_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_go_duration("100ms"), Some(100_000_000));
        assert_eq!(parse_go_duration("-2m"), Some(-120_000_000_000));
        assert_eq!(parse_go_duration("0"), Some(0));
        assert_eq!(parse_go_duration("5µs"), Some(5_000));
        assert_eq!(parse_go_duration("1x"), None);
        assert_eq!(parse_go_duration(""), None);
        for n in [
            0i64,
            1,
            999,
            1_500,
            2_000_000,
            61_000_000_000,
            3_723_500_000_000,
        ] {
            assert_eq!(parse_go_duration(&super::super::go_duration(n)), Some(n));
        }
    }

    #[test]
    fn objects_round_trip_through_the_decoder() {
        round_trip(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "uid": "u-1",
                "resourceVersion": "12", "creationTimestamp": "2024-01-02T03:04:05Z",
                "labels": {"b": "2", "a": "1"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply",
                    "apiVersion": "v1", "time": "2024-01-02T03:04:05Z",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]},
            "data": {"a": "x", "empty": ""},
            "binaryData": {"b": "AAEC"},
        }));
        round_trip(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "generation": 3},
            "spec": {"replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx",
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                        "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
                        "volumes": [{"name": "v", "configMap": {"name": "c", "defaultMode": 420}}],
                        "terminationGracePeriodSeconds": 30}}},
            "status": {"replicas": 2, "conditions": [{"type": "Available", "status": "True",
                "lastUpdateTime": "2024-01-02T03:04:05Z"}]},
        }));
        round_trip(json!({
            "apiVersion": "v1", "kind": "Status", "metadata": {},
            "status": "Failure", "message": "configmaps \"x\" not found",
            "reason": "NotFound", "details": {"name": "x", "kind": "configmaps"}, "code": 404,
        }));
        round_trip(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15,
                "renewTime": "2024-01-02T03:04:05.123456Z"},
        }));
    }

    #[test]
    fn lists_are_one_envelope_around_their_items() {
        let item = encode_kind_body(
            "v1",
            "ConfigMap",
            &json!({"metadata": {"name": "c"}, "data": {"a": "b"}}),
        )
        .expect("encodes");
        let big = "x".repeat(300);
        let item2 = encode_kind_body("v1", "ConfigMap", &json!({"metadata": {"name": big}}))
            .expect("encodes");
        let list = encode_list(
            "v1",
            "ConfigMapList",
            &json!({"resourceVersion": "7", "continue": "t"}),
            &[item, item2],
        )
        .expect("encodes");
        let v = super::super::decode(&list).expect("decodes");
        assert_eq!(v["kind"], "ConfigMapList");
        assert_eq!(
            v["metadata"],
            json!({"resourceVersion": "7", "continue": "t"})
        );
        assert_eq!(v["items"][0]["data"]["a"], "b");
        assert_eq!(v["items"][1]["metadata"]["name"], json!(big));
    }

    #[test]
    fn negative_int32_takes_ten_bytes() {
        let mut out = Vec::new();
        registry()
            .encode_value("t", 1, Kind::Int32, None, &json!(-1), &mut out, 0)
            .expect("encodes");
        assert_eq!(out.len(), 11);
    }

    #[test]
    fn unknown_kinds_are_errors() {
        let err = encode(&json!({"apiVersion": "example.com/v1", "kind": "Widget"}));
        assert!(matches!(err, Err(EncodeError::UnknownKind { .. })));
    }

    #[test]
    fn watch_frames_are_length_prefixed() {
        let obj =
            encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
                .expect("encodes");
        let frame = watch_frame("ADDED", &obj);
        let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        let ev = super::super::decode_message(
            "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
            &frame[4..],
        )
        .expect("decodes");
        assert_eq!(ev["type"], "ADDED");
        assert_eq!(ev["object"]["metadata"]["name"], "c");
    }
}
