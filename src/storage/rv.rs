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

/// ObjectMeta's fields after resourceVersion, in Go's order: in an object
/// written in Go's order (built-ins, which start with `kind`) the
/// resourceVersion goes before the first of them.
const AFTER_RV_GO: &[&[u8]] = &[
    b"generation",
    b"creationTimestamp",
    b"deletionTimestamp",
    b"deletionGracePeriodSeconds",
    b"labels",
    b"annotations",
    b"ownerReferences",
    b"finalizers",
    b"managedFields",
];

/// Where to insert `resourceVersion` into the top-level `metadata` object,
/// and whether a comma goes before (true) or after (false) it; `None` when
/// there is no metadata object. The place keeps the object's key order:
/// Go's field order for built-ins (whose first key is `kind`), sorted keys
/// for custom resources (maps upstream).
fn metadata_insert_point(b: &[u8]) -> Option<(usize, Option<bool>)> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut first = true;
    let mut go_order = false;
    loop {
        i = skip_ws(b, i);
        if b.get(i) == Some(&b'}') {
            return None;
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        let key = &b[key_start + 1..key_end - 1];
        if first {
            go_order = key == b"kind";
            first = false;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if key == b"metadata" && b.get(i) == Some(&b'{') {
            return member_point(b, i, go_order);
        }
        i = skip_ws(b, skip_value(b, i)?);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

/// Within the metadata object opening at `open`: before the first member
/// that follows resourceVersion in the object's order, else at the end.
fn member_point(b: &[u8], open: usize, go_order: bool) -> Option<(usize, Option<bool>)> {
    let after = |key: &[u8]| {
        if go_order {
            AFTER_RV_GO.contains(&key)
        } else {
            key > b"resourceVersion".as_slice()
        }
    };
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return Some((open + 1, None));
    }
    loop {
        let key_start = i;
        let key_end = skip_string(b, i)?;
        if after(&b[key_start + 1..key_end - 1]) {
            return Some((key_start, Some(false)));
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, skip_value(b, skip_ws(b, i + 1))?);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some((i, Some(true))),
            _ => return None,
        }
    }
}

/// The object with `metadata.resourceVersion` set to `rv`. The input must
/// not carry a resourceVersion already (storage strips it on write).
pub fn with_resource_version(json: &[u8], rv: i64) -> Bytes {
    if let Some((at, comma_before)) = metadata_insert_point(json) {
        let field = match comma_before {
            None => format!("\"resourceVersion\":\"{rv}\""),
            Some(true) => format!(",\"resourceVersion\":\"{rv}\""),
            Some(false) => format!("\"resourceVersion\":\"{rv}\","),
        };
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
    fn the_splice_keeps_the_key_order() {
        let go = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","uid":"u","creationTimestamp":"t","labels":{"generation":"x"}}}"#;
        assert_eq!(
            &with_resource_version(go, 5)[..],
            br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"5","creationTimestamp":"t","labels":{"generation":"x"}}}"#
        );
        let go_last = br#"{"kind":"ConfigMap","metadata":{"name":"a"}}"#;
        assert_eq!(
            &with_resource_version(go_last, 5)[..],
            br#"{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}"#
        );
        let sorted = br#"{"apiVersion":"x/v1","kind":"W","metadata":{"creationTimestamp":"t","name":"a","uid":"u"}}"#;
        assert_eq!(
            &with_resource_version(sorted, 5)[..],
            br#"{"apiVersion":"x/v1","kind":"W","metadata":{"creationTimestamp":"t","name":"a","resourceVersion":"5","uid":"u"}}"#
        );
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
