//! JSON data to CEL values, typed by the schema as upstream's
//! `UnstructuredToVal` does: objects with properties expose their (escaped)
//! fields and drop nulls, maps keep their keys, integers are ints, numbers
//! doubles, strings with a date/duration/byte format become timestamps,
//! durations and bytes, int-or-string stays whichever it is.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use kube_cel::cel::objects::{Key, Map as CelMap};
use kube_cel::cel::Value as Cel;
use serde_json::Value;

use super::types::{
    additional_properties, escape, format_of, is_embedded, is_int_or_string, items, properties,
    ty_of, with_type_and_object_meta,
};

/// Converts `v` as data of schema `s`. Data that does not fit its schema
/// (which schema validation reports on its own) is converted untyped.
pub(crate) fn to_cel(v: &Value, s: &Value, is_resource_root: bool) -> Cel {
    if v.is_null() {
        return Cel::Null;
    }
    if is_int_or_string(s) {
        return match v {
            Value::String(x) => Cel::String(Arc::new(x.clone())),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Cel::Int(i),
                None => dynamic(v),
            },
            other => dynamic(other),
        };
    }
    match (ty_of(s), v) {
        ("object", Value::Object(obj)) => {
            let embedded = is_embedded(s);
            if is_resource_root || embedded || properties(s).is_some() {
                let s = if is_resource_root || embedded {
                    with_type_and_object_meta(s)
                } else {
                    std::borrow::Cow::Borrowed(s)
                };
                let props = properties(&s);
                let mut m: HashMap<Key, Cel> = HashMap::with_capacity(obj.len());
                for (k, fv) in obj {
                    if fv.is_null() {
                        // Null-valued fields are absent fields.
                        continue;
                    }
                    match props.and_then(|p| p.get(k)) {
                        Some(ps) => {
                            let key = escape(k).unwrap_or_else(|| k.clone());
                            m.insert(Key::from(key), to_cel(fv, ps, is_embedded(ps)));
                        }
                        // Preserved unknown fields take part in equality only;
                        // the checker keeps rules from selecting them.
                        None => {
                            m.insert(Key::from(k.clone()), dynamic(fv));
                        }
                    }
                }
                return Cel::Map(CelMap { map: Arc::new(m) });
            }
            if let Some(ap) = additional_properties(s) {
                let m: HashMap<Key, Cel> = obj
                    .iter()
                    .map(|(k, fv)| (Key::from(k.clone()), to_cel(fv, ap, is_embedded(ap))))
                    .collect();
                return Cel::Map(CelMap { map: Arc::new(m) });
            }
            dynamic(v)
        }
        ("array", Value::Array(a)) => match items(s) {
            Some(it) => {
                let emb = is_embedded(it);
                Cel::List(Arc::new(a.iter().map(|e| to_cel(e, it, emb)).collect()))
            }
            None => dynamic(v),
        },
        ("string", Value::String(x)) => match format_of(s) {
            "duration" => parse_duration(x)
                .map(Cel::Duration)
                .unwrap_or_else(|| Cel::String(Arc::new(x.clone()))),
            "date" => chrono::NaiveDate::parse_from_str(x, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| Cel::Timestamp(d.and_utc().fixed_offset()))
                .unwrap_or_else(|| Cel::String(Arc::new(x.clone()))),
            "date-time" => parse_date_time(x)
                .map(Cel::Timestamp)
                .unwrap_or_else(|| Cel::String(Arc::new(x.clone()))),
            "byte" => base64::engine::general_purpose::STANDARD
                .decode(x)
                .map(|b| Cel::Bytes(Arc::new(b)))
                .unwrap_or_else(|_| Cel::String(Arc::new(x.clone()))),
            _ => Cel::String(Arc::new(x.clone())),
        },
        ("number", Value::Number(n)) => Cel::Float(n.as_f64().unwrap_or_default()),
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Cel::Int(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Cel::Int(f as i64),
            _ => dynamic(v),
        },
        ("boolean", Value::Bool(b)) => Cel::Bool(*b),
        _ => dynamic(v),
    }
}

/// Untyped conversion: what data without a usable schema looks like.
pub(crate) fn dynamic(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or_default())
            }
        }
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(a) => Cel::List(Arc::new(a.iter().map(dynamic).collect())),
        Value::Object(o) => {
            let m: HashMap<Key, Cel> = o
                .iter()
                .map(|(k, x)| (Key::from(k.clone()), dynamic(x)))
                .collect();
            Cel::Map(CelMap { map: Arc::new(m) })
        }
    }
}

fn parse_date_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t);
    }
    // strfmt also takes a few RFC 3339 relatives: a space for the `T`, no zone.
    let t = s.replacen(' ', "T", 1);
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&t) {
        return Some(t);
    }
    chrono::NaiveDateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|n| n.and_utc().fixed_offset())
}

/// Go's `time.ParseDuration` with strfmt's extra units (`d`, `w`), e.g.
/// `1h30m`, `-1.5s`, `2d`.
pub(crate) fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let s = s.trim();
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = rest[num_len..].trim_start();
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        let nanos_per: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "d" => 86400e9,
            "w" => 7.0 * 86400e9,
            _ => return None,
        };
        total += n * nanos_per;
        rest = &rest[unit_len..];
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let d = chrono::Duration::nanoseconds(total.round() as i64);
    Some(if neg { -d } else { d })
}
