//! Merging maps: upstream's `mergeMap`, one field at a time, the
//! `$patch` directive of a map, and `$retainKeys`. Values the patch brings
//! in anew are cleaned of directives (`new_value`, `new_list`).

use serde_json::{Map, Value};

use super::list::merge_slice;
use super::order::merge_set_element_order;
use super::schema::{strategy_of, Node};
use super::{
    PatchError, DELETE_DIRECTIVE, DELETE_FROM_PRIMITIVE_LIST_PREFIX, DIRECTIVE_MARKER,
    MERGE_DIRECTIVE, REPLACE_DIRECTIVE, RETAIN_KEYS_DIRECTIVE, SET_ELEMENT_ORDER_PREFIX,
};

/// Upstream's `mergeMap`.
pub(super) fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    node: Node,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return match directive.as_str() {
            // The map is replaced by the patch; the patch's own directives
            // apply to nothing.
            Some(REPLACE_DIRECTIVE) => {
                patch.remove(DIRECTIVE_MARKER);
                merge_map(Map::new(), patch, node)
            }
            Some(DELETE_DIRECTIVE) => Ok(Map::new()),
            _ => Err(PatchError::bad_patch_type(directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, node)?;

    // Upstream walks the patch in Go map order; here ordinary keys go
    // first and deletions from primitive lists last, so that a value both
    // added and deleted ends up deleted.
    let mut deletions = Vec::new();
    for (k, v) in patch {
        if k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            deletions.push((k, v));
        } else {
            merge_field(&mut original, k, v, node, false)?;
        }
    }
    for (k, v) in deletions {
        let key = extract_key(&k, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
        merge_field(&mut original, key, v, node, true)?;
    }
    Ok(original)
}

/// Merges one key of the patch into `original` (the body of `mergeMap`'s loop).
pub(super) fn merge_field(
    original: &mut Map<String, Value>,
    key: String,
    patch_v: Value,
    node: Node,
    delete_list: bool,
) -> Result<(), PatchError> {
    if patch_v.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let (child, field_meta) = node.field(&key);
    let Some(orig_v) = original.remove(&key) else {
        if !delete_list {
            if let Some(v) = new_value(patch_v, child)? {
                original.insert(key, v);
            }
        }
        return Ok(());
    };
    if !same_shape(&orig_v, &patch_v) {
        if delete_list {
            original.insert(key, orig_v);
        } else if let Some(v) = new_value(patch_v, child)? {
            original.insert(key, v);
        }
        return Ok(());
    }
    let (strategy, merge_key) = strategy_of(field_meta)?;
    let merged = match (orig_v, patch_v) {
        (Value::Object(o), Value::Object(p)) => {
            if strategy == REPLACE_DIRECTIVE {
                Value::Object(merge_map(Map::new(), p, child)?)
            } else {
                let deleting =
                    p.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE);
                let m = merge_map(o, p, child)?;
                // Upstream leaves an empty map, which its typed encoding
                // then omits for map-typed fields (`omitempty`).
                if deleting && child.is_map() {
                    return Ok(());
                }
                Value::Object(m)
            }
        }
        (Value::Array(o), Value::Array(p)) => {
            if strategy == MERGE_DIRECTIVE || delete_list {
                Value::Array(merge_slice(o, p, child.items(), merge_key, delete_list)?)
            } else {
                Value::Array(new_list(p, child.items())?)
            }
        }
        (_, p) => p,
    };
    original.insert(key, merged);
    Ok(())
}

/// Both objects, both arrays, or both neither.
pub(super) fn same_shape(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
    ) || (!a.is_object() && !a.is_array() && !b.is_object() && !b.is_array() && !a.is_null())
}

/// A patch value taking the place of nothing (upstream's `removeDirectives`
/// after `discardNullValuesFromPatch`): nulls in maps are dropped and
/// directives are applied to nothing. `None`: the key is not kept (a map
/// marked `$patch: delete`).
pub(super) fn new_value(patch: Value, node: Node) -> Result<Option<Value>, PatchError> {
    match patch {
        Value::Object(m) => {
            if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
                return Ok(None);
            }
            Ok(Some(Value::Object(merge_map(Map::new(), m, node)?)))
        }
        Value::Array(items) => Ok(Some(Value::Array(new_list(items, node.items())?))),
        other => Ok(Some(other)),
    }
}

/// A list taking the place of another (or of nothing): items carrying
/// `$patch` are markers and are dropped; the others are cleaned.
pub(super) fn new_list(items: Vec<Value>, item_node: Node) -> Result<Vec<Value>, PatchError> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Object(m) => {
                if let Some(d) = m.get(DIRECTIVE_MARKER) {
                    match d.as_str() {
                        Some(DELETE_DIRECTIVE | REPLACE_DIRECTIVE) => continue,
                        Some(MERGE_DIRECTIVE) => return Err(PatchError::merging_lists()),
                        _ => return Err(PatchError::bad_patch_type(d, &m)),
                    }
                }
                out.push(Value::Object(merge_map(Map::new(), m, item_node)?));
            }
            Value::Array(a) => out.push(Value::Array(new_list(a, Node::default())?)),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// Upstream's `extractKey`: `<prefix>/<key>` → `key`.
pub(super) fn extract_key(s: &str, prefix: &str) -> Result<String, PatchError> {
    match s.split_once('/') {
        Some((p, key)) if p == prefix => Ok(key.to_string()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(PatchError::bad_format_primitive_list())
        }
        _ => Err(PatchError::bad_format_set_element_order()),
    }
}

/// Upstream's `applyRetainKeysDirective`: keys of `original` not listed
/// are cleared; every key the patch sets must be listed.
pub(super) fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(list) = retain else {
        return Err(PatchError::bad_format_retain_keys());
    };
    let listed = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !listed(k) {
            return Err(PatchError::bad_format_retain_keys());
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}
