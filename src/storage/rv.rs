//! resourceVersion in stored JSON. Objects are stored without it (as
//! upstream stores them); reads put the revision in. Splicing the bytes
//! avoids decoding and re-encoding every object on every read.

use bytes::Bytes;

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Index just past the string starting at `i` (which must be `"`).
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Index just past the JSON value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Where to insert a member into the top-level `metadata` object, and
/// whether it is empty.
fn metadata_insert_point(b: &[u8]) -> Option<(usize, bool)> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) == Some(&b'}') {
            return None;
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        let key = &b[key_start + 1..key_end - 1];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if key == b"metadata" && b.get(i) == Some(&b'{') {
            let inner = skip_ws(b, i + 1);
            return Some((i + 1, b.get(inner) == Some(&b'}')));
        }
        i = skip_ws(b, skip_value(b, i)?);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

/// The object with `metadata.resourceVersion` set to `rv`. The input must
/// not carry a resourceVersion already (storage strips it on write).
pub fn with_resource_version(json: &[u8], rv: i64) -> Bytes {
    if let Some((at, empty)) = metadata_insert_point(json) {
        let field = format!(
            "\"resourceVersion\":\"{rv}\"{}",
            if empty { "" } else { "," }
        );
        let mut out = Vec::with_capacity(json.len() + field.len());
        out.extend_from_slice(&json[..at]);
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(&json[at..]);
        return Bytes::from(out);
    }
    // No metadata object: fall back to a full decode.
    match serde_json::from_slice::<serde_json::Value>(json) {
        Ok(mut v) => {
            if let Some(obj) = v.as_object_mut() {
                let meta = obj
                    .entry("metadata")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(m) = meta.as_object_mut() {
                    m.insert(
                        "resourceVersion".into(),
                        serde_json::Value::String(rv.to_string()),
                    );
                }
            }
            Bytes::from(serde_json::to_vec(&v).unwrap_or_else(|_| json.to_vec()))
        }
        Err(_) => Bytes::copy_from_slice(json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rv_of(b: &[u8]) -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_slice(b).expect("valid json");
        v["metadata"]["resourceVersion"].clone()
    }

    #[test]
    fn splices_into_metadata() {
        let cases: &[&[u8]] = &[
            br#"{"apiVersion":"v1","data":{"metadata":{"x":"}"}},"kind":"ConfigMap","metadata":{"name":"a"}}"#,
            br#"{"metadata":{}}"#,
            br#" { "a" : [1, {"b": "\"metadata\":{"}], "metadata" : { "name" : "x" } } "#,
            br#"{"kind":"X"}"#,
        ];
        for c in cases {
            let out = with_resource_version(c, 42);
            assert_eq!(
                rv_of(&out),
                serde_json::json!("42"),
                "{}",
                String::from_utf8_lossy(c)
            );
        }
        let out = with_resource_version(cases[0], 7);
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(v["data"]["metadata"], serde_json::json!({"x": "}"}));
        assert_eq!(v["metadata"]["name"], "a");
    }
}
