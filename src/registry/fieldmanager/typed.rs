//! The walks over typed values that field management is built from
//! (upstream's structured-merge-diff `typed` package): the field set of an
//! object, the comparison of two objects, the merge of an applied
//! configuration into an object, and the removal of fields.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::fieldset::{value_eq, FieldSet, Path, PathElement};
use super::schema::{Atom, ListKind, Ty};

/// The path element of a list item: upstream's `listItemToPathElement`.
pub(crate) fn item_element(
    item: &Value,
    kind: &ListKind,
    item_ty: Ty,
) -> Result<PathElement, String> {
    match kind {
        ListKind::Atomic => Err("invalid indexing of non-associative list".into()),
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            v => Ok(PathElement::Value(v.clone())),
        },
        ListKind::Map(keys) => {
            let m = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into())
                }
                Value::Object(m) => m,
                _ => return Err("associative list with keys may not have non-map elements".into()),
            };
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                if let Some(v) = m.get(k) {
                    fields.push((k.clone(), v.clone()));
                } else if let Some(d) = item_ty.key_default(k) {
                    fields.push((k.clone(), d));
                } else {
                    return Err(format!(
                        "associative list with keys has an element that omits key field {} (and doesn't have default value)",
                        super::fieldset::go_quote(k)
                    ));
                }
            }
            Ok(PathElement::key(fields))
        }
    }
}

/// A list's items by path element, in order; a repeated element keeps its
/// first item. Items without an element (invalid ones) go by index.
struct Indexed<'v> {
    order: Vec<PathElement>,
    items: BTreeMap<PathElement, &'v Value>,
}

fn index_list<'v>(list: Option<&'v Vec<Value>>, kind: &ListKind, item_ty: Ty) -> Indexed<'v> {
    let mut out = Indexed {
        order: Vec::new(),
        items: BTreeMap::new(),
    };
    for (i, item) in list.into_iter().flatten().enumerate() {
        let pe = item_element(item, kind, item_ty).unwrap_or(PathElement::Index(i as i64));
        if out.items.contains_key(&pe) {
            continue;
        }
        out.items.insert(pe.clone(), item);
        out.order.push(pe);
    }
    out
}

fn is_empty_list(v: Option<&Vec<Value>>) -> bool {
    v.is_none_or(|a| a.is_empty())
}

fn is_empty_map(v: Option<&Map<String, Value>>) -> bool {
    v.is_none_or(|m| m.is_empty())
}

// ---------------------------------------------------------------- to set

/// The fields `v` sets: upstream's `TypedValue.ToFieldSet`. Scalars,
/// atomic lists and maps are members; so are list items (with their
/// fields), map keys that are not struct fields, and nothing else. With
/// `strict` (an applied configuration), invalid or repeated list items are
/// errors, each `<path>: <message>`.
pub(crate) fn to_field_set(v: &Value, ty: Ty, strict: bool) -> Result<FieldSet, Vec<String>> {
    let mut set = FieldSet::new();
    let mut errs = Vec::new();
    walk_set(v, ty, &mut Vec::new(), &mut set, strict, &mut errs);
    if errs.is_empty() {
        Ok(set)
    } else {
        Err(errs)
    }
}

/// [`to_field_set`] of a live or merged object, whose faults are ignored.
pub(crate) fn field_set_of(v: &Value, ty: Ty) -> FieldSet {
    to_field_set(v, ty, false).unwrap_or_default()
}

fn walk_set(
    v: &Value,
    ty: Ty,
    path: &mut Vec<PathElement>,
    set: &mut FieldSet,
    strict: bool,
    errs: &mut Vec<String>,
) {
    match ty.atom(Some(v)) {
        Atom::Scalar => set.insert(path),
        Atom::List(kind) => {
            if kind == ListKind::Atomic {
                set.insert(path);
                return;
            }
            let Value::Array(items) = v else {
                return;
            };
            let item_ty = ty.item();
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let pe = match item_element(item, &kind, item_ty) {
                    Ok(pe) => pe,
                    Err(e) => {
                        if strict {
                            errs.push(format!("{}: element {i}: {e}", Path(path.clone())));
                            continue;
                        }
                        PathElement::Index(i as i64)
                    }
                };
                if strict && !seen.insert(pe.clone()) {
                    errs.push(format!(
                        "{}: duplicate entries for key {pe}",
                        Path(path.clone())
                    ));
                    continue;
                }
                path.push(pe);
                walk_set(item, item_ty, path, set, strict, errs);
                set.insert(path);
                path.pop();
            }
        }
        Atom::Map { atomic } => {
            if atomic {
                set.insert(path);
                return;
            }
            let Value::Object(m) = v else {
                return;
            };
            for (k, val) in m {
                path.push(PathElement::Field(k.clone()));
                walk_set(val, ty.field(k), path, set, strict, errs);
                if !ty.has_field(k) {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
}

// ---------------------------------------------------------------- compare

/// What changed from one object to another: upstream's `typed.Comparison`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

/// Upstream's `TypedValue.Compare`: leaves (scalars, atomic lists and
/// maps, empty lists and maps) are added, removed or modified; lists and
/// maps that appear or disappear as a whole are added or removed too.
pub(crate) fn compare(old: &Value, new: &Value, ty: Ty) -> Comparison {
    let mut c = Comparison::default();
    walk_compare(Some(old), Some(new), ty, &mut Vec::new(), &mut c);
    c
}

fn compare_leaf(l: Option<&Value>, r: Option<&Value>, path: &[PathElement], c: &mut Comparison) {
    match (l, r) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) if !value_eq(a, b) => c.modified.insert(path),
        _ => {}
    }
}

fn walk_compare(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    let atom = match (l.map(|v| ty.atom(Some(v))), r.map(|v| ty.atom(Some(v)))) {
        (Some(a), Some(b)) if a != b => {
            // Different shapes (only without a schema): a changed leaf.
            compare_leaf(l, r, path, c);
            return;
        }
        (_, Some(b)) => b,
        (Some(a), None) => a,
        (None, None) => return,
    };
    let mut in_leaf = false;
    match atom {
        Atom::Scalar => {
            compare_leaf(l, r, path, c);
            in_leaf = true;
        }
        Atom::List(kind) => {
            let (ll, rl) = (l.and_then(Value::as_array), r.and_then(Value::as_array));
            if kind == ListKind::Atomic || (is_empty_list(ll) && is_empty_list(rl)) {
                compare_leaf(l, r, path, c);
                in_leaf = true;
            } else {
                let item_ty = ty.item();
                let li = index_list(ll, &kind, item_ty);
                let ri = index_list(rl, &kind, item_ty);
                // Each element once: the old list's, then the new list's others.
                let only_new = ri.order.iter().filter(|pe| !li.items.contains_key(*pe));
                for pe in li.order.iter().chain(only_new) {
                    path.push(pe.clone());
                    walk_compare(
                        li.items.get(pe).copied(),
                        ri.items.get(pe).copied(),
                        item_ty,
                        path,
                        c,
                    );
                    path.pop();
                }
            }
        }
        Atom::Map { atomic } => {
            let (lm, rm) = (l.and_then(Value::as_object), r.and_then(Value::as_object));
            if atomic || (is_empty_map(lm) && is_empty_map(rm)) {
                compare_leaf(l, r, path, c);
                in_leaf = true;
            } else {
                // Each key once: the old map's, then the new map's others
                // (the sets the walk fills keep their own order).
                let old_keys = lm.into_iter().flat_map(|m| m.keys());
                let only_new = rm
                    .into_iter()
                    .flat_map(|m| m.keys())
                    .filter(|k| !lm.is_some_and(|m| m.contains_key(*k)));
                for k in old_keys.chain(only_new) {
                    path.push(PathElement::Field(k.clone()));
                    walk_compare(
                        lm.and_then(|m| m.get(k)),
                        rm.and_then(|m| m.get(k)),
                        ty.field(k),
                        path,
                        c,
                    );
                    path.pop();
                }
            }
        }
    }
    if !in_leaf {
        if l.is_none() {
            c.added.insert(path);
        } else if r.is_none() {
            c.removed.insert(path);
        }
    }
}

// ------------------------------------------------------------------ merge

/// Merges `config` into `live`: upstream's `TypedValue.Merge`. Maps merge
/// key by key, associative lists item by item, and everything else
/// (scalars, atomic lists and maps) takes the configuration's value.
pub(crate) fn merge(live: &Value, config: &Value, ty: Ty) -> Value {
    walk_merge(Some(live), Some(config), ty).unwrap_or_else(|| Value::Object(Map::new()))
}

fn walk_merge(l: Option<&Value>, r: Option<&Value>, ty: Ty) -> Option<Value> {
    let atom = match (l, r) {
        (_, Some(v)) => ty.atom(Some(v)),
        (Some(v), None) => ty.atom(Some(v)),
        (None, None) => return None,
    };
    let keep = || r.or(l).cloned();
    match atom {
        Atom::Scalar => keep(),
        Atom::List(kind) => {
            let (ll, rl) = (l.and_then(Value::as_array), r.and_then(Value::as_array));
            if kind == ListKind::Atomic || (is_empty_list(ll) && is_empty_list(rl)) {
                return keep();
            }
            let out = merge_list(ll, rl, &kind, ty.item());
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Atom::Map { atomic } => {
            let (lm, rm) = (l.and_then(Value::as_object), r.and_then(Value::as_object));
            if atomic || (is_empty_map(lm) && is_empty_map(rm)) {
                return keep();
            }
            let mut out = Map::new();
            for (k, lv) in lm.into_iter().flatten() {
                if let Some(v) = walk_merge(Some(lv), rm.and_then(|m| m.get(k)), ty.field(k)) {
                    out.insert(k.clone(), v);
                }
            }
            for (k, rv) in rm.into_iter().flatten() {
                if lm.is_some_and(|m| m.contains_key(k)) {
                    continue;
                }
                if let Some(v) = walk_merge(None, Some(rv), ty.field(k)) {
                    out.insert(k.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// Upstream's `mergingWalker.visitListItems`: items only in the live list
/// keep their place; shared and new items follow the configuration's order.
fn merge_list(
    ll: Option<&Vec<Value>>,
    rl: Option<&Vec<Value>>,
    kind: &ListKind,
    item_ty: Ty,
) -> Vec<Value> {
    let lhs = index_list(ll, kind, item_ty);
    let rhs = index_list(rl, kind, item_ty);
    let mut out = Vec::new();
    let mut shared: VecDeque<&PathElement> = rhs
        .order
        .iter()
        .filter(|pe| lhs.items.contains_key(pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let (l_len, r_len) = (lhs.order.len(), rhs.order.len());
    let (mut li, mut ri) = (0, 0);
    while li < l_len || ri < r_len {
        if li < l_len && ri < r_len {
            let pe = &lhs.order[li];
            if *pe == rhs.order[ri] {
                merged_rhs.insert(pe);
                out.extend(walk_merge(
                    lhs.items.get(pe).copied(),
                    rhs.items.get(pe).copied(),
                    item_ty,
                ));
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if rhs.items.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                // A shared item, but not the one wanted in this round.
                li += 1;
                continue;
            }
        }
        if li < l_len {
            let pe = &lhs.order[li];
            if !rhs.items.contains_key(pe) {
                out.extend(walk_merge(lhs.items.get(pe).copied(), None, item_ty));
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < r_len {
            let pe = &rhs.order[ri];
            merged_rhs.insert(pe);
            out.extend(walk_merge(
                lhs.items.get(pe).copied(),
                rhs.items.get(pe).copied(),
                item_ty,
            ));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    out
}

// ----------------------------------------------------------------- remove

/// `v` without the members of `set` (each with everything under it):
/// upstream's `TypedValue.RemoveItems`. A map or list left empty by the
/// removal goes too.
pub(crate) fn remove_items(v: &Value, set: &FieldSet, ty: Ty) -> Value {
    if set.is_empty() {
        return v.clone();
    }
    walk_remove(v, set, ty).unwrap_or_else(|| Value::Object(Map::new()))
}

fn walk_remove(v: &Value, set: &FieldSet, ty: Ty) -> Option<Value> {
    match ty.atom(Some(v)) {
        Atom::Scalar => Some(v.clone()),
        Atom::List(kind) => {
            let Value::Array(items) = v else {
                return None;
            };
            if items.is_empty() || kind == ListKind::Atomic {
                return None;
            }
            let item_ty = ty.item();
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let pe = item_element(item, &kind, item_ty).unwrap_or(PathElement::Index(i as i64));
                if set.members().contains(&pe) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => out.extend(walk_remove(item, sub, item_ty)),
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Atom::Map { atomic } => {
            let Value::Object(m) = v else {
                return None;
            };
            if m.is_empty() || atomic {
                return None;
            }
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                if set.members().contains(&pe) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        if let Some(x) = walk_remove(val, sub, ty.field(k)) {
                            out.insert(k.clone(), x);
                        }
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// `set` with every struct field it goes through a member too: upstream's
/// `Set.EnsureNamedFieldsAreMembers`.
pub(crate) fn ensure_named_fields(set: &FieldSet, ty: Ty) -> FieldSet {
    let mut out = FieldSet::new();
    for m in set.members() {
        out.insert_member(m.clone());
    }
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => {
                if ty.has_field(name) {
                    out.insert_member(pe.clone());
                }
                ty.field(name)
            }
            _ => ty.item(),
        };
        out.set_child(pe.clone(), ensure_named_fields(child, child_ty));
    }
    out
}
