//! Targets `continue_token` and `resource_version`: continue tokens
//! decoded and encoded again, and the resourceVersion splice on stored
//! bytes.

use serde_json::{json, Value};

use super::selectors::list_with;
use crate::registry::ListParams;
use crate::storage::store::{decode_continue, encode_continue};

/// A `continue` token: decoded, and when valid (and not "latest"), encoded
/// again to the same position; then used to page a list. Also `resourceVersion` parsing and
/// the stored-bytes resourceVersion splice on the token's bytes as JSON.
pub fn continue_token(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    // rv 0 is the decoder's "the latest revision" (a token of rv -1, as
    // upstream writes after an expired one); storage never encodes it.
    match decode_continue(text) {
        Ok((rv, start)) if rv > 0 => match decode_continue(&encode_continue(rv, &start)) {
            Ok(round) => assert_eq!(round, (rv, start), "continue token round trip"),
            Err(e) => panic!("a re-encoded valid continue token does not decode: {e:?}"),
        },
        _ => {}
    }
    list_with(ListParams {
        continue_token: Some(text.to_string()),
        limit: 3,
        ..Default::default()
    });
    list_with(ListParams {
        resource_version: Some(text.to_string()),
        resource_version_match: Some("Exact".into()),
        ..Default::default()
    });
}

/// `storage::rv::with_resource_version` on the bytes storage holds for an
/// object (serde_json's rendering of a JSON object without a
/// resourceVersion): the result must be that object with
/// `metadata.resourceVersion` set.
pub fn resource_version(input: &[u8]) {
    let Ok(mut v) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    let stored = serde_json::to_vec(&v).expect("serialize");
    let rv = 1 + (input.len() as i64) * 7919;
    let out = crate::storage::rv::with_resource_version(&stored, rv);
    let got: Value = serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "with_resource_version made invalid JSON ({e}): {}",
            String::from_utf8_lossy(&out)
        )
    });
    // Floats must come back bit for bit: kapi builds serde_json with
    // `float_roundtrip` because its default float parsing is off by an ulp
    // at times (fuzz/regressions/resource_version), which Go's is not.
    let mut want: Value = serde_json::from_slice(&stored).expect("stored bytes parse");
    let o = want.as_object_mut().expect("object");
    match o.get_mut("metadata") {
        Some(Value::Object(m)) => {
            m.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        Some(_) => {}
        None => {
            o.insert(
                "metadata".into(),
                json!({"resourceVersion": rv.to_string()}),
            );
        }
    }
    assert_eq!(
        got, want,
        "with_resource_version changed more than the resourceVersion"
    );
}
