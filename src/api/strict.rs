//! Strict decoding's duplicate-field check. serde_json keeps the last of
//! two equal keys without a word; upstream's decoder reports each one
//! (`fieldValidation=Strict` refuses the body, `Warn` warns), with its path.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// The dotted paths of keys that appear twice in one JSON object, in the
/// order met. Empty when the bytes are not JSON: decoding reports that.
pub fn duplicate_fields(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let seed = Walk {
        path: String::new(),
        found: &mut found,
    };
    if seed.deserialize(&mut de).is_err() {
        return Vec::new();
    }
    found
}

struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Walk {
                path: format!("{}[{i}]", self.path),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
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
    fn none_in_ordinary_json_or_garbage() {
        assert!(duplicate_fields(br#"{"a":{"a":1},"b":[1,2]}"#).is_empty());
        assert!(duplicate_fields(b"{not json").is_empty());
    }
}
