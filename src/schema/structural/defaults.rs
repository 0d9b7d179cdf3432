//! Defaults (upstream's ValidateDefaults): they must validate against
//! their schema and be pruned.

use serde_json::{Map, Value};

use crate::api::validation::FieldError;
use crate::schema::gofmt;
use crate::schema::{
    child, flag, get, items, key, objectmeta, properties, pruning, validate, EMBEDDED, META_FIELDS,
};

pub(super) fn validate_defaults(root: &Value, p: &str, errs: &mut Vec<FieldError>) {
    walk_defaults(root, p, true, false, &[], errs);
}

/// A step from an embedded resource down to a schema node.
#[derive(Clone)]
enum Step {
    Field(String),
    Item,
}

fn walk_defaults(
    s: &Value,
    p: &str,
    is_root: bool,
    inside_meta: bool,
    steps: &[Step],
    errs: &mut Vec<FieldError>,
) {
    let embedded = is_root || flag(s, EMBEDDED);
    let (inside_meta, steps): (bool, Vec<Step>) = if embedded {
        (false, Vec::new())
    } else {
        (inside_meta, steps.to_vec())
    };
    if let Some(d) = get(s, "default") {
        let dp = child(p, "default");
        if inside_meta {
            // The default sits in the TypeMeta/ObjectMeta of an embedded
            // resource: it must make that resource's metadata valid.
            let obj = surround(d, &steps);
            let mut meta_errs = Vec::new();
            if let Some(e) = objectmeta::coerce_error(&obj, &Value::Null, "", true) {
                meta_errs.push(e);
            } else {
                objectmeta::validate("", &obj, &Value::Null, true, &mut meta_errs);
            }
            if !meta_errs.is_empty() {
                errs.push(gofmt::invalid(
                    &dp,
                    d,
                    format!("must result in valid metadata: {}", aggregate(&meta_errs)),
                ));
            } else {
                errs.extend(validate::openapi_errors(d, s, &dp));
            }
        } else {
            let mut pruned = d.clone();
            let mut unknown = Vec::new();
            pruning::prune_value(&mut pruned, Some(s), embedded, "", &mut unknown);
            if pruned != *d {
                errs.push(gofmt::invalid(&dp, d, "must not have unknown fields"));
            }
            if let Some(e) = objectmeta::coerce_error(d, s, &dp, embedded) {
                errs.push(e);
            } else {
                let mut meta_errs = Vec::new();
                objectmeta::validate(&dp, d, s, embedded, &mut meta_errs);
                if !meta_errs.is_empty() {
                    errs.extend(meta_errs);
                } else {
                    errs.extend(validate::openapi_errors(d, s, &dp));
                }
            }
        }
    }
    // additionalProperties are not followed: defaults there are not checked.
    if let Some(it) = items(s) {
        let mut st = steps.clone();
        st.push(Step::Item);
        walk_defaults(it, &child(p, "items"), false, inside_meta, &st, errs);
    }
    if let Some(props) = properties(s) {
        for (k, sub) in props {
            let sub_inside = inside_meta || (embedded && META_FIELDS.contains(&k.as_str()));
            let mut st = steps.clone();
            st.push(Step::Field(k.clone()));
            walk_defaults(
                sub,
                &key(&child(p, "properties"), k),
                false,
                sub_inside,
                &st,
                errs,
            );
        }
    }
}

/// The embedded resource a metadata default would produce (upstream's
/// SurroundingObjectFunc with TypeMeta validation/v1 Validation).
fn surround(d: &Value, steps: &[Step]) -> Value {
    let mut v = d.clone();
    for step in steps.iter().rev() {
        v = match step {
            Step::Item => Value::Array(vec![v]),
            Step::Field(k) => {
                let mut m = Map::new();
                m.insert(k.clone(), v);
                Value::Object(m)
            }
        };
    }
    let mut obj = match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    obj.entry("apiVersion")
        .or_insert_with(|| Value::String("validation/v1".into()));
    obj.entry("kind")
        .or_insert_with(|| Value::String("Validation".into()));
    Value::Object(obj)
}

/// utilerrors.NewAggregate(...).Error().
fn aggregate(errs: &[FieldError]) -> String {
    let mut msgs: Vec<String> = Vec::new();
    for e in errs {
        let field = if e.field.is_empty() {
            "<nil>"
        } else {
            e.field.as_str()
        };
        let m = format!("{field}: {}", e.message());
        if !msgs.contains(&m) {
            msgs.push(m);
        }
    }
    if msgs.len() == 1 {
        msgs.remove(0)
    } else {
        format!("[{}]", msgs.join(", "))
    }
}
