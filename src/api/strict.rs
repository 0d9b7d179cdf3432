//! Strict decoding's duplicate-field check. serde_json keeps the last of
//! two equal keys without a word; upstream's decoder reports each one
//! (`fieldValidation=Strict` refuses the body, `Warn` warns), with its path.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::partial_json::Key;

/// A JSON body decoded as `serde_json` decodes it (the last of two equal
/// keys wins), with the dotted paths of keys that appear twice in one
/// object, in the order met. One pass: every write body comes here.
pub fn decode_noting_duplicates(bytes: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Build {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, found))
}

/// One step of the path to a value.
enum Step<'de> {
    Key(Cow<'de, str>),
    Index(usize),
}

fn spell(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Builds the value at `path`, noting repeated keys in `found`. The
/// path borrows its keys; one is spelled out only for a duplicate.
struct Build<'a, 'de> {
    path: &'a mut Vec<Step<'de>>,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Build<'_, 'de> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_, 'de> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let again = object.contains_key(key.as_ref());
            self.path.push(Step::Key(key));
            if again {
                self.found.push(spell(self.path));
            }
            let value = map.next_value_seed(Build {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            if let Some(Step::Key(key)) = self.path.pop() {
                object.insert(key.into_owned(), value);
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            self.path.push(Step::Index(items.len()));
            let item = seq.next_element_seed(Build {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.pop();
            match item {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    // Scalars as serde_json's own `Value` decodes them.
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::decode_noting_duplicates;
    use serde_json::Value;

    fn duplicate_fields(body: &[u8]) -> Vec<String> {
        decode_noting_duplicates(body)
            .map(|(_, d)| d)
            .unwrap_or_default()
    }

    #[test]
    fn finds_nested_duplicates_with_paths() {
        let body = br#"{"data":{"a":"1","a":"2"},"metadata":{"name":"x"},"data":{},"items":[{"k":1,"k":2}]}"#;
        assert_eq!(duplicate_fields(body), vec!["data.a", "data", "items[0].k"]);
    }

    #[test]
    fn escaped_keys_and_big_objects() {
        // "a" written as \u0061 is the same key.
        assert_eq!(
            duplicate_fields(br#"{"x":{"a":1,"\u0061":2}}"#),
            vec!["x.a"]
        );
        let mut big: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
        big.push(r#""k3":0"#.into());
        big.push(r#""k39":[{"z":1,"z":2}]"#.into());
        let body = format!("{{{}}}", big.join(","));
        assert_eq!(
            duplicate_fields(body.as_bytes()),
            vec!["k3", "k39", "k39[0].z"]
        );
    }

    #[test]
    fn none_in_ordinary_json_and_garbage_is_an_error() {
        assert!(duplicate_fields(br#"{"a":{"a":1},"b":[1,2]}"#).is_empty());
        assert!(decode_noting_duplicates(b"{not json").is_err());
        assert!(decode_noting_duplicates(b"{} trailing").is_err());
    }

    /// The value is exactly serde_json's, repeated keys (the last wins),
    /// numbers of every kind and escapes included; and so are the errors.
    #[test]
    fn decodes_what_serde_json_decodes() {
        for body in [
            r#"{"a":1,"a":{"b":[1,-2,3.5,1e300,18446744073709551615,-9223372036854775808,0.1]},"s":"\u00e9\n\"","n":null,"t":true}"#,
            r#"[{"x":"y"},[],{},"",0]"#,
            r#""just a string""#,
            "  42  ",
            r#"{"deep":[[[[{"k":[null]}]]]]}"#,
        ] {
            let (ours, _) = decode_noting_duplicates(body.as_bytes()).expect(body);
            let theirs: Value = serde_json::from_str(body).expect(body);
            assert_eq!(ours, theirs, "{body}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{body}");
        }
        for bad in [
            r#"{"a":}"#,
            "[1,2",
            r#"{"a":1}x"#,
            "",
            "[1e400]",
            &"[".repeat(200),
        ] {
            let ours = decode_noting_duplicates(bad.as_bytes()).expect_err(bad);
            let theirs = serde_json::from_str::<Value>(bad).expect_err(bad);
            assert_eq!(ours.to_string(), theirs.to_string(), "{bad}");
        }
    }
}
