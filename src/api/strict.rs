//! Strict decoding's duplicate-field check. serde_json keeps the last of
//! two equal keys without a word; upstream's decoder reports each one
//! (`fieldValidation=Strict` refuses the body, `Warn` warns), with its path.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::partial_json::Key;

/// The dotted paths of keys that appear twice in one JSON object, in the
/// order met. Empty when the bytes are not JSON: decoding reports that.
///
/// Every write body goes through here, so the walk borrows its keys and
/// spells out a path only for a duplicate it finds.
pub fn duplicate_fields(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let seed = Walk {
        path: &mut path,
        found: &mut found,
    };
    if seed.deserialize(&mut de).is_err() {
        return Vec::new();
    }
    found
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

struct Walk<'a, 'de> {
    path: &'a mut Vec<Step<'de>>,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, 'de> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// Objects with more keys than this look theirs up in a hash set.
const FEW_KEYS: usize = 16;

impl<'de> Visitor<'de> for Walk<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let again = if many.is_empty() && few.len() < FEW_KEYS {
                let again = few.contains(&key);
                if !again {
                    few.push(key.clone());
                }
                again
            } else {
                many.extend(few.drain(..));
                !many.insert(key.clone())
            };
            self.path.push(Step::Key(key));
            if again {
                self.found.push(spell(self.path));
            }
            map.next_value_seed(Walk {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.pop();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.path.push(Step::Index(i));
            let more = seq
                .next_element_seed(Walk {
                    path: &mut *self.path,
                    found: &mut *self.found,
                })?
                .is_some();
            self.path.pop();
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::duplicate_fields;

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
    fn none_in_ordinary_json_or_garbage() {
        assert!(duplicate_fields(br#"{"a":{"a":1},"b":[1,2]}"#).is_empty());
        assert!(duplicate_fields(b"{not json").is_empty());
    }
}
