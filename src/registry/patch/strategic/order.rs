//! The order of a merged list: `$setElementOrder/<field>` (upstream's
//! `mergePatchIntoOriginal` and its validation) and
//! `normalizeElementOrder`, which weaves the patch's items and the live
//! list's others together.

use serde_json::{Map, Value};

use super::error::{go_v, GO_MAP, GO_SLICE};
use super::list::{
    element_kind, extract_to_delete_items, merge_slice, partition_maps, partition_primitives,
    validate_merge_key_in_lists, Kind,
};
use super::map::{extract_key, new_list};
use super::schema::{strategy_of, Node};
use super::{PatchError, DIRECTIVE_MARKER, MERGE_DIRECTIVE, SET_ELEMENT_ORDER_PREFIX};

/// Upstream's `mergePatchIntoOriginal`: each `$setElementOrder/<field>`
/// merges its list now and orders it; the list leaves the patch.
pub(super) fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    node: Node,
) -> Result<(), PatchError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order_v) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(set_order) = order_v else {
            return Err(PatchError::bad_arg_type(GO_SLICE, &order_v));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?;
        let orig_list = match original.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(PatchError::bad_arg_type(GO_SLICE, other)),
        };
        let patch_list = match patch.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(PatchError::bad_arg_type(GO_SLICE, other)),
        };
        let (child, field_meta) = node.field(&field);
        let (strategy, merge_key) = strategy_of(field_meta)?;
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or(&[]),
            &set_order,
            merge_key,
        )?;
        let orig_items = orig_list.clone().unwrap_or_default();
        let patch_items = patch_list.clone().unwrap_or_default();
        let merged = match (orig_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => new_list(p, child.items())?,
            (Some(o), Some(p)) => {
                if strategy == MERGE_DIRECTIVE {
                    merge_slice(o, p, child.items(), merge_key, false)?
                } else {
                    new_list(p, child.items())?
                }
            }
            (None, None) => continue,
        };
        let Some(kind) = element_kind(&[&orig_items, &patch_items])? else {
            // Nothing to order (upstream errors on lists without elements).
            original.insert(field.clone(), Value::Array(merged));
            patch.remove(&field);
            continue;
        };
        let (in_order, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &set_order)
        } else {
            partition_maps(merged, &set_order, merge_key)?
        };
        let both = normalize_element_order(
            in_order,
            server_only,
            &set_order,
            &orig_items,
            merge_key,
            kind,
        )?;
        original.insert(field.clone(), Value::Array(both));
        patch.remove(&field);
    }
    Ok(())
}

/// Upstream's `validatePatchWithSetOrderList`: the patch list's items must
/// appear in the `$setElementOrder` list, in the same relative order.
pub(super) fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut pi, mut si) = (0, 0);
    while pi < non_delete.len() && si < set_order.len() {
        if non_delete[pi]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
        {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[pi], &set_order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= set_order.len() {
        return Err(PatchError::internal(format!(
            "the order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}",
            go_v(&Value::Array(patch_list.to_vec())),
            go_v(&Value::Array(set_order.to_vec()))
        )));
    }
    Ok(())
}

pub(super) fn merge_key_value_equal(
    left: &Value,
    right: &Value,
    merge_key: &str,
) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let l = left
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, left))?;
    let r = right
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, right))?;
    let lv = l
        .get(merge_key)
        .ok_or_else(|| PatchError::no_merge_key(l, merge_key))?;
    let rv = r
        .get(merge_key)
        .ok_or_else(|| PatchError::no_merge_key(r, merge_key))?;
    Ok(lv == rv)
}

/// Upstream's `normalizeElementOrder`: `patch` sorted by `patch_order`,
/// `server_only` by `server_order`, then the two woven together.
pub(super) fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted_slice(
        server_only,
        patch,
        server_order,
        merge_key,
        kind,
    ))
}

/// The position of `v` in `list`: by merge key value for maps, by value
/// otherwise.
pub(super) fn index_of(list: &[Value], v: &Value, merge_key: &str, kind: Kind) -> Option<usize> {
    if kind == Kind::Object {
        let key_of = |x: &Value| x.as_object().and_then(|m| m.get(merge_key)).cloned();
        let want = key_of(v);
        list.iter().position(|x| key_of(x) == want)
    } else {
        list.iter().position(|x| x == v)
    }
}

/// Upstream's `normalizeSliceOrder`: a stable sort by position in `order`
/// (items `order` lacks go last), `$patch: delete` items at the end.
pub(super) fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let (mut to_sort, to_delete) = if kind == Kind::Object {
        validate_merge_key_in_lists(merge_key, &[&to_sort, order])?;
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    to_sort.sort_by_key(|v| index_of(order, v, merge_key, kind).unwrap_or(usize::MAX));
    to_sort.extend(to_delete);
    Ok(to_sort)
}

/// Upstream's `mergeSortedSlice`: weaves `left` (server-only items) into
/// `right` (patch items); a left item goes before a right item only when
/// both are in `server_order` and the left one comes first there.
pub(super) fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                match (
                    index_of(server_order, l, merge_key, kind),
                    index_of(server_order, r, merge_key, kind),
                ) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}
