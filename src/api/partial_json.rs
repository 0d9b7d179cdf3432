//! Decoding only the parts of a stored object a reader looks at.
//!
//! The watch cache reads labels and selectable fields of every object
//! written, and the garbage collector's informers read metadata. Decoding
//! the whole object into a `serde_json::Value` for that allocated every
//! string of a ConfigMap's data and of its managedFields, and dropped them
//! at once. Here the parts nobody reads are skipped by the parser
//! (`IgnoredAny`), so they cost a scan and no allocation.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The top-level fields of `json` that `keep` names, and `metadata`
/// without `managedFields`. None when `json` is not a JSON object.
pub fn decode<K: AsRef<str>>(json: &[u8], keep: &[K]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let map = Fields { keep }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(Value::Object(map))
}

/// The top-level fields a metadata informer keeps beside `metadata`
/// (upstream's PartialObjectMetadata).
pub const TYPE_FIELDS: [&str; 2] = ["apiVersion", "kind"];

/// What a metadata informer keeps of an object: [`TYPE_FIELDS`] and
/// `metadata` without `managedFields`.
pub fn object_metadata(json: &[u8]) -> Option<Value> {
    decode(json, &TYPE_FIELDS)
}

/// An object key, borrowed from the input when it has no escapes: the seed
/// for `MapAccess::next_key_seed` (also strict decoding's).
pub(crate) struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

/// The top level: `metadata` (through [`Metadata`]) and the kept fields.
struct Fields<'a, K> {
    keep: &'a [K],
}

impl<'de, K: AsRef<str>> DeserializeSeed<'de> for Fields<'_, K> {
    type Value = Map<String, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, K: AsRef<str>> Visitor<'de> for Fields<'_, K> {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "metadata" {
                let meta = map.next_value_seed(Metadata)?;
                out.insert(key.into_owned(), meta);
            } else if self.keep.iter().any(|x| x.as_ref() == key) {
                let v = map.next_value::<Value>()?;
                out.insert(key.into_owned(), v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// ObjectMeta without `managedFields`, the largest part of it and one no
/// selector or owner reference reads. Anything but an object is kept as is.
struct Metadata;

impl<'de> DeserializeSeed<'de> for Metadata {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Metadata {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("object metadata")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "managedFields" {
                map.next_value::<IgnoredAny>()?;
            } else {
                let v = map.next_value::<Value>()?;
                out.insert(key.into_owned(), v);
            }
        }
        Ok(Value::Object(out))
    }
    // Not an object: kept as the value it is, as a full decode keeps it.
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_metadata_and_the_named_fields_and_drops_the_rest() {
        let full = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"},
                         "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
            "status": {"phase": "Running"},
            "data": {"big": "x".repeat(1000)},
        });
        let raw = serde_json::to_vec(&full).unwrap();
        let got = decode(&raw, &["spec", "status"]).unwrap();
        assert_eq!(
            got,
            json!({
                "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"}},
                "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
                "status": {"phase": "Running"},
            })
        );
        let bare = decode::<&str>(&raw, &[]).unwrap();
        assert_eq!(bare, json!({"metadata": got["metadata"].clone()}));
    }

    #[test]
    fn escaped_keys_and_odd_metadata_decode_as_a_full_decode_does() {
        let raw = br#"{"metadata":{"na\u006de":"a","labels":{"k\"q":"v"}},"sp\u0065c":{"a":1}}"#;
        assert_eq!(
            decode(raw, &["spec"]).unwrap(),
            json!({"metadata": {"name": "a", "labels": {"k\"q": "v"}}, "spec": {"a": 1}})
        );
        assert_eq!(
            decode::<&str>(br#"{"metadata":null}"#, &[]).unwrap(),
            json!({"metadata": null})
        );
        assert_eq!(
            decode::<&str>(br#"{"metadata":[1,"x"]}"#, &[]).unwrap(),
            json!({"metadata": [1, "x"]})
        );
    }

    #[test]
    fn what_is_not_one_json_object_decodes_to_nothing() {
        for bad in [
            &b"[1]"[..],
            b"\"s\"",
            b"{\"a\":",
            b"{} {}",
            b"{\"data\": [}",
            b"",
        ] {
            assert_eq!(
                decode::<&str>(bad, &[]),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
