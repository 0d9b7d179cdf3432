//! JSON patch (RFC 6902) with upstream's limits on the work one patch may do.
//!
//! A `copy` can double a document, so a short patch of repeated copies grows
//! exponentially; upstream bounds the bytes all copies of one patch may add
//! (`JSONPatchMaxCopyBytes`, 3 MiB, the request body limit) and the number of
//! operations (10,000). Both are checked before the work is done, so a
//! hostile patch costs at most a few MiB of memory.

use serde_json::Value;

use crate::api::{ApiError, Reason};

/// upstream's `maxJSONPatchOperations`.
pub const MAX_OPERATIONS: usize = 10_000;
/// upstream's default `JSONPatchMaxCopyBytes` (= the request body limit).
pub const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Decodes a JSON patch document: 400 when it is not one, 413 over the
/// operation limit (upstream's order and messages).
///
/// Like upstream's `jsonpatch.DecodePatch`, only the shape (a list of
/// objects) is checked here; an operation that cannot be applied (an
/// unknown `op`, no `path`) fails when applied, as 422.
pub fn decode(patch: &Value) -> Result<json_patch::Patch, ApiError> {
    let Some(ops) = patch
        .as_array()
        .filter(|ops| ops.iter().all(Value::is_object))
    else {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            crate::api::json_type_name(patch)
        )));
    };
    if ops.len() > MAX_OPERATIONS {
        return Err(too_many(ops.len()));
    }
    serde_json::from_value::<json_patch::Patch>(patch.clone()).map_err(|e| {
        tracing::debug!(reason = %e, "JSON patch operation refused");
        unprocessable()
    })
}

/// upstream's `NewGenericServerResponse(422, ...)`: a generic message and
/// empty details, the reason kept out of the body.
fn unprocessable() -> ApiError {
    ApiError::new(
        422,
        Reason::Invalid,
        "the server rejected our request due to an error in our request",
    )
}

fn too_many(n: usize) -> ApiError {
    ApiError::new(
        413,
        Reason::RequestEntityTooLarge,
        format!("The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {n}"),
    )
}

/// Why a patch could not be applied; the caller decides the answer code
/// (422 for a client's patch, an admission failure for a webhook's).
#[derive(Debug)]
pub struct Failed(pub String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Applies `ops` to `doc` in order. On failure `doc` may be half patched:
/// callers patch a copy and drop it on error.
pub fn apply(doc: &mut Value, ops: &json_patch::Patch) -> Result<(), Failed> {
    if ops.0.len() > MAX_OPERATIONS {
        return Err(Failed(format!(
            "The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
            ops.0.len()
        )));
    }
    let mut copied = 0usize;
    for (i, op) in ops.0.iter().enumerate() {
        if let json_patch::PatchOperation::Copy(c) = op {
            let budget = MAX_COPY_BYTES - copied;
            if let Some(v) = doc.pointer(c.from.as_str()) {
                let size = encoded_size(v, budget + 1);
                if size > budget {
                    return Err(Failed(format!(
                        "Unable to complete the copy, the accumulated size increase of copy is {}, exceeding the limit {MAX_COPY_BYTES}",
                        copied.saturating_add(size)
                    )));
                }
                copied += size;
            }
        }
        json_patch::patch_unsafe(doc, std::slice::from_ref(op))
            .map_err(|e| Failed(format!("operation {i}: {e}")))?;
    }
    Ok(())
}

/// Applies a client's patch. Upstream answers a patch that cannot be
/// applied with `NewGenericServerResponse(422, ...)`, which keeps the
/// reason out of the body: a generic message and empty details.
pub fn apply_request(doc: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let ops = decode(patch)?;
    apply(doc, &ops).map_err(|e| {
        tracing::debug!(reason = %e, "JSON patch refused");
        unprocessable()
    })
}

/// The size of `v` encoded as compact JSON, counted up to `cap` (so sizing a
/// huge value costs no more than the budget it is checked against).
pub fn encoded_size(v: &Value, cap: usize) -> usize {
    fn walk(v: &Value, n: &mut usize, cap: usize) {
        if *n > cap {
            return;
        }
        match v {
            Value::Null => *n += 4,
            Value::Bool(b) => *n += if *b { 4 } else { 5 },
            Value::Number(x) => *n += x.to_string().len(),
            Value::String(s) => *n += s.len() + 2,
            Value::Array(a) => {
                *n += 2 + a.len().saturating_sub(1);
                for x in a {
                    walk(x, n, cap);
                }
            }
            Value::Object(o) => {
                *n += 2 + o.len().saturating_sub(1);
                for (k, x) in o {
                    *n += k.len() + 3;
                    walk(x, n, cap);
                }
            }
        }
    }
    let mut n = 0;
    walk(v, &mut n, cap);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn doubling_copies_are_refused_before_they_grow() {
        let mut ops = vec![json!({"op": "add", "path": "/a", "value": ["x".repeat(1000)]})];
        for _ in 0..30 {
            ops.push(json!({"op": "copy", "from": "/a", "path": "/a/-"}));
        }
        let mut doc = json!({});
        let err = apply_request(&mut doc, &Value::Array(ops)).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(encoded_size(&doc, usize::MAX) < 2 * MAX_COPY_BYTES);
    }

    #[test]
    fn small_copies_apply() {
        let mut doc = json!({"a": {"b": 1}});
        apply_request(
            &mut doc,
            &json!([{"op": "copy", "from": "/a", "path": "/c"}, {"op": "test", "path": "/c/b", "value": 1}]),
        )
        .unwrap();
        assert_eq!(doc, json!({"a": {"b": 1}, "c": {"b": 1}}));
    }

    #[test]
    fn too_many_operations_is_413() {
        let ops: Vec<Value> = (0..10_001)
            .map(|_| json!({"op": "test", "path": "", "value": {}}))
            .collect();
        assert_eq!(decode(&Value::Array(ops)).unwrap_err().code, 413);
    }

    #[test]
    fn size_matches_serde() {
        let v = json!({"a": [1, true, null, "x\u{e9}"], "bb": {"c": -2.5}});
        assert_eq!(
            encoded_size(&v, usize::MAX),
            serde_json::to_vec(&v).unwrap().len()
        );
    }
}
