//! Pruning (upstream's pruning.PruneWithOptions plus the metadata part of
//! objectmeta.CoerceWithOptions): fields the schema does not specify are
//! dropped and their paths returned.

use serde_json::Value;

use super::objectmeta;
use super::{additional, flag, items, property, Additional, EMBEDDED, META_FIELDS, PRESERVE};

/// Removes the fields of `obj` that `schema` does not specify and returns
/// their paths, sorted (`spec.foo`, `spec.items[0].bar`, `spec.map.key.x`),
/// which upstream turns into `unknown field "spec.foo"` warnings or strict
/// errors.
///
/// - `x-kubernetes-preserve-unknown-fields: true` keeps unknown fields at
///   that level (specified properties below are still pruned);
/// - at the root, `apiVersion`, `kind` and `metadata` are always kept and
///   `metadata` is left alone (ObjectMeta is the generic code's business);
/// - `x-kubernetes-embedded-resource: true` keeps `apiVersion`, `kind` and
///   `metadata`, and the embedded metadata is cut down to ObjectMeta's
///   fields (and written back normalised, as upstream's round trip does).
pub fn prune(obj: &mut Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    prune_value(obj, Some(schema), true, "", &mut out);
    objectmeta::coerce_tree(obj, schema, "", &mut out);
    out.sort();
    out
}

fn append_key(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// upstream's prune; `root` treats the node as a resource root (its
/// apiVersion, kind and metadata are not pruned).
pub(super) fn prune_value(
    x: &mut Value,
    s: Option<&Value>,
    root: bool,
    path: &str,
    out: &mut Vec<String>,
) {
    if let Some(s) = s {
        if flag(s, PRESERVE) {
            skip_prune(x, s, root, path, out);
            return;
        }
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    out.push(append_key(path, k));
                }
                m.clear();
                return;
            };
            let embedded = root || flag(s, EMBEDDED);
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(p) = property(s, &k) {
                    if let Some(v) = m.get_mut(&k) {
                        prune_value(v, Some(p), false, &append_key(path, &k), out);
                    }
                    continue;
                }
                match additional(s) {
                    Additional::Schema(ap) => {
                        if let Some(v) = m.get_mut(&k) {
                            prune_value(v, Some(ap), false, &append_key(path, &k), out);
                        }
                    }
                    Additional::Bool(_) => {
                        if let Some(v) = m.get_mut(&k) {
                            prune_value(v, None, false, &append_key(path, &k), out);
                        }
                    }
                    Additional::Absent => {
                        if !META_FIELDS.contains(&k.as_str()) || !path.is_empty() {
                            out.push(append_key(path, &k));
                        }
                        m.remove(&k);
                    }
                }
            }
        }
        Value::Array(a) => {
            let it = s.and_then(items);
            for (i, v) in a.iter_mut().enumerate() {
                prune_value(v, it, false, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// upstream's skipPrune: unknown fields stay, specified ones are pruned.
fn skip_prune(x: &mut Value, s: &Value, root: bool, path: &str, out: &mut Vec<String>) {
    match x {
        Value::Object(m) => {
            let embedded = root || flag(s, EMBEDDED);
            for (k, v) in m.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(p) = property(s, k) {
                    prune_value(v, Some(p), false, &append_key(path, k), out);
                } else {
                    match additional(s) {
                        Additional::Schema(ap) => {
                            prune_value(v, Some(ap), false, &append_key(path, k), out)
                        }
                        Additional::Bool(_) => {
                            prune_value(v, None, false, &append_key(path, k), out)
                        }
                        Additional::Absent => {}
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(it) = items(s) {
                for (i, v) in a.iter_mut().enumerate() {
                    skip_prune(v, it, false, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}
