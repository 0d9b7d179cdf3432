//! Defaulting (upstream's structuraldefaulting.PruneNonNullableNullsWithoutDefaults
//! followed by structuraldefaulting.Default, as the custom resource
//! defaulter runs them).

use serde_json::Value;

use super::{additional, flag, get, items, properties, property, Additional};

/// Applies the schema's `default`s to `obj`:
///
/// - a property that is absent gets its default; so does one that is
///   `null` when the schema is not `nullable` (the same for array items and
///   additionalProperties values);
/// - before that, `null`s that are neither nullable nor defaulted are
///   dropped, as upstream does before defaulting;
/// - defaults are applied top-down, so the defaults of the properties of a
///   defaulted object apply to the value the parent default put there.
pub fn apply_defaults(obj: &mut Value, schema: &Value) {
    prune_non_nullable_nulls(obj, Some(schema));
    default(obj, schema);
}

fn nullable(s: &Value) -> bool {
    flag(s, "nullable")
}

/// The schema for a field of an object with schema `s`.
fn field_schema<'a>(s: Option<&'a Value>, k: &str) -> Option<&'a Value> {
    let s = s?;
    if let Some(p) = property(s, k) {
        return Some(p);
    }
    match additional(s) {
        Additional::Schema(ap) => Some(ap),
        _ => None,
    }
}

pub(super) fn prune_non_nullable_nulls(x: &mut Value, s: Option<&Value>) {
    match x {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let fs = field_schema(s, &k);
                let drop = m.get(&k).is_some_and(Value::is_null)
                    && fs.is_some_and(|fs| !nullable(fs) && get(fs, "default").is_none());
                if drop {
                    m.remove(&k);
                } else if let Some(v) = m.get_mut(&k) {
                    prune_non_nullable_nulls(v, fs);
                }
            }
        }
        Value::Array(a) => {
            let it = s.and_then(items);
            for v in a.iter_mut() {
                prune_non_nullable_nulls(v, it);
            }
        }
        _ => {}
    }
}

fn non_nullable_null(x: &Value, s: &Value) -> bool {
    x.is_null() && !nullable(s)
}

fn default(x: &mut Value, s: &Value) {
    match x {
        Value::Object(m) => {
            if let Some(props) = properties(s) {
                for (k, prop) in props {
                    let Some(d) = get(prop, "default") else {
                        continue;
                    };
                    let missing = match m.get(k) {
                        None => true,
                        Some(v) => non_nullable_null(v, prop),
                    };
                    if missing {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let ap = additional(s);
            for (k, v) in m.iter_mut() {
                if let Some(p) = property(s, k) {
                    default(v, p);
                } else if let Additional::Schema(ap) = ap {
                    if non_nullable_null(v, ap) {
                        *v = get(ap, "default").cloned().unwrap_or(Value::Null);
                    }
                    default(v, ap);
                }
            }
        }
        Value::Array(a) => {
            if let Some(it) = items(s) {
                for v in a.iter_mut() {
                    if non_nullable_null(v, it) {
                        *v = get(it, "default").cloned().unwrap_or(Value::Null);
                    }
                    default(v, it);
                }
            }
        }
        _ => {}
    }
}
