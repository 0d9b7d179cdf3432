//! Merging lists: upstream's `mergeSlice` (primitives unioned, maps
//! merged on their merge key), the `$patch: delete|replace` items, and the
//! element-kind checks Go makes of decoded lists.

use serde_json::{Map, Value};

use super::error::{go_v, GO_MAP};
use super::map::merge_map;
use super::order::normalize_element_order;
use super::schema::Node;
use super::{PatchError, DELETE_DIRECTIVE, DIRECTIVE_MARKER, MERGE_DIRECTIVE, REPLACE_DIRECTIVE};

/// The JSON kinds Go tells apart in a decoded list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

pub(super) fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::Array,
        Value::Object(_) => Kind::Object,
    }
}

/// Upstream's `sliceElementType`: all items of all lists are of one kind,
/// and not lists. `None`: no items at all.
pub(super) fn element_kind(lists: &[&[Value]]) -> Result<Option<Kind>, PatchError> {
    let mut kind = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        let k = kind_of(v);
        match kind {
            None => {
                if k == Kind::Array {
                    return Err(PatchError::no_list_of_lists());
                }
                kind = Some(k);
            }
            Some(prev) if prev != k => {
                let all: Vec<String> = lists
                    .iter()
                    .map(|l| go_v(&Value::Array(l.to_vec())))
                    .collect();
                return Err(PatchError::internal(format!(
                    "list element types are not identical: [{}]",
                    all.join(" ")
                )));
            }
            Some(_) => {}
        }
    }
    Ok(kind)
}

/// Upstream's `mergeSlice`.
pub(super) fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    item_node: Node,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    let Some(kind) = element_kind(&[&original, &patch])? else {
        return Ok(original);
    };
    if kind != Kind::Object {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for v in original.iter().chain(patch.iter()) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        let (in_patch, server_only) = partition_primitives(merged, &patch);
        return normalize_element_order(in_patch, server_only, &patch, &original, merge_key, kind);
    }
    if merge_key.is_empty() {
        return Err(PatchError::internal(format!(
            "cannot merge lists without merge key for type {}",
            item_node.go_kind()
        )));
    }
    let (original, patch) =
        merge_slice_with_special_elements(original, patch, merge_key, item_node)?;
    let merged =
        merge_slice_without_special_elements(original.clone(), &patch, merge_key, item_node)?;
    let (in_patch, server_only) = partition_maps(merged, &patch, merge_key)?;
    normalize_element_order(in_patch, server_only, &patch, &original, merge_key, kind)
}

/// Upstream's `mergeSliceWithSpecialElements`: items marked
/// `$patch: delete` delete their match from `original`; an item marked
/// `$patch: replace` makes the patch's other items the whole list.
pub(super) fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    item_node: Node,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for v in patch {
        let Value::Object(m) = &v else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        let Some(directive) = m.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let Some(value) = m.get(merge_key) else {
                    return Err(PatchError::no_merge_key(m, merge_key));
                };
                for (i, o) in original.iter().enumerate() {
                    if !o.is_object() {
                        return Err(PatchError::internal(format!(
                            "value for key {i} is not a map."
                        )));
                    }
                }
                original.retain(|o| o.get(merge_key) != Some(value));
            }
            // Upstream keeps looking, to drop every other `$patch` item.
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => return Err(PatchError::merging_lists()),
            _ => return Err(PatchError::bad_patch_type(directive, m)),
        }
    }
    if replace {
        let mut items = Vec::with_capacity(plain.len());
        for v in plain {
            match v {
                Value::Object(m) => items.push(Value::Object(merge_map(Map::new(), m, item_node)?)),
                other => items.push(other),
            }
        }
        return Ok((items, Vec::new()));
    }
    Ok((original, plain))
}

/// The index of the first map in `list` whose `key` equals `value`.
pub(super) fn find_map_in_slice(
    list: &[Value],
    key: &str,
    value: &Value,
) -> Result<Option<usize>, PatchError> {
    for (i, v) in list.iter().enumerate() {
        let Some(m) = v.as_object() else {
            return Err(PatchError::internal(format!(
                "value for key {i} is not a map."
            )));
        };
        if m.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Upstream's `mergeSliceWithoutSpecialElements`: each patch item merges
/// into the original item with its merge key, or is appended.
pub(super) fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    item_node: Node,
) -> Result<Vec<Value>, PatchError> {
    for v in patch {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, v));
        };
        let Some(value) = m.get(merge_key) else {
            return Err(PatchError::no_merge_key(m, merge_key));
        };
        match find_map_in_slice(&original, merge_key, value)? {
            Some(i) => {
                let orig = match std::mem::take(&mut original[i]) {
                    Value::Object(o) => o,
                    // find_map_in_slice only matches maps.
                    _ => Map::new(),
                };
                original[i] = Value::Object(merge_map(orig, m.clone(), item_node)?);
            }
            None => original.push(Value::Object(merge_map(Map::new(), m.clone(), item_node)?)),
        }
    }
    Ok(original)
}

/// Items of `list` present in `by`, and the others.
pub(super) fn partition_primitives(list: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    list.into_iter().partition(|v| by.contains(v))
}

/// Items of `list` whose merge key value appears in `by`, and the others.
pub(super) fn partition_maps(
    list: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut found, mut others) = (Vec::new(), Vec::new());
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        let Some(value) = m.get(merge_key) else {
            return Err(PatchError::no_merge_key(m, merge_key));
        };
        if find_map_in_slice(by, merge_key, value)?.is_some() {
            found.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((found, others))
}

pub(super) fn validate_merge_key_in_lists(
    merge_key: &str,
    lists: &[&[Value]],
) -> Result<(), PatchError> {
    for item in lists.iter().flat_map(|l| l.iter()) {
        let Some(m) = item.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, item));
        };
        if !m.contains_key(merge_key) {
            return Err(PatchError::no_merge_key(m, merge_key));
        }
    }
    Ok(())
}

/// Items marked `$patch: delete`, apart from the others.
pub(super) fn extract_to_delete_items(
    list: Vec<Value>,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}
