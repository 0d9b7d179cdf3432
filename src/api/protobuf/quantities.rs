//! Where a built-in kind's objects hold `resource.Quantity` values, read
//! off the message tables: the fields whose type is a quantity or leads to
//! one (`PodSpec.containers[].resources.requests{}`), so that a write can
//! visit exactly those values and nothing else.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use super::field_json::FIELD_JSON;
use super::registry::package_for_api_version;
use super::{Card, Kind, MESSAGES, RESOURCES};

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

#[derive(Debug, Clone, Copy)]
enum Target {
    Quantity,
    /// A message (by index in `MESSAGES`) with quantities somewhere below.
    Message(usize),
}

/// One field on the way to a quantity.
#[derive(Debug)]
struct Step {
    json: &'static str,
    card: Card,
    /// A Go embedded struct: its fields sit in the parent's JSON object.
    embedded: bool,
    to: Target,
}

struct Paths {
    /// Per message, the fields that lead to quantities (most: none).
    steps: Vec<Vec<Step>>,
    by_kind: HashMap<(&'static str, &'static str), usize>,
}

fn message_index(name: &str) -> Option<usize> {
    MESSAGES.binary_search_by(|m| m.name.cmp(name)).ok()
}

/// What a field leads to, when its values are what is looked for
/// (`leaf`: a quantity, or bytes).
fn target_of(kind: &Kind, leaf: fn(&Kind) -> bool) -> Option<Target> {
    match kind {
        k if leaf(k) => Some(Target::Quantity),
        Kind::Message(name) => message_index(name).map(Target::Message),
        Kind::Map(_, value) => target_of(value, leaf),
        _ => None,
    }
}

fn is_quantity(k: &Kind) -> bool {
    *k == Kind::Message(QUANTITY)
}

fn is_bytes(k: &Kind) -> bool {
    *k == Kind::Bytes
}

static PATHS: LazyLock<Paths> = LazyLock::new(|| paths_to(is_quantity));
static BYTES: LazyLock<Paths> = LazyLock::new(|| paths_to(is_bytes));

fn paths_to(leaf: fn(&Kind) -> bool) -> Paths {
    // Which messages hold a quantity at any depth: a fixpoint, as message
    // types nest and recurse (JSONSchemaProps).
    let mut holds = vec![false; MESSAGES.len()];
    loop {
        let mut changed = false;
        for (i, m) in MESSAGES.iter().enumerate() {
            if holds[i] {
                continue;
            }
            let found = m.fields.iter().any(|f| match target_of(&f.kind, leaf) {
                Some(Target::Quantity) => true,
                Some(Target::Message(j)) => holds[j],
                None => false,
            });
            if found {
                holds[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let steps = MESSAGES
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if !holds[i] {
                return Vec::new();
            }
            m.fields
                .iter()
                .zip(FIELD_JSON[i].iter())
                .filter_map(|(f, &(json, embedded, _))| {
                    let to = target_of(&f.kind, leaf)?;
                    let leads = match to {
                        Target::Quantity => true,
                        Target::Message(j) => holds[j],
                    };
                    leads.then_some(Step {
                        json,
                        card: f.card,
                        embedded,
                        to,
                    })
                })
                .collect()
        })
        .collect();
    let by_kind = RESOURCES
        .iter()
        .filter_map(|r| Some(((r.api_version, r.kind), message_index(r.message)?)))
        .collect();
    Paths { steps, by_kind }
}

/// Calls `f` on every quantity value of a built-in object of `kind` in
/// `api_version`, with whether it is a map's value (where JSON `null` is
/// the zero quantity rather than an absent field). Values of the wrong
/// JSON shape on the way are left for the typed decode to refuse.
pub fn visit_quantities<E>(
    api_version: &str,
    kind: &str,
    obj: &mut Value,
    f: &mut impl FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    visit_by(&PATHS, api_version, kind, obj, f)
}

/// Calls `f` on every `[]byte` value (base64 in JSON) of a built-in
/// object: Secret data, ConfigMap binaryData, CA bundles, CSRs.
pub fn visit_bytes(api_version: &str, kind: &str, obj: &mut Value, f: &mut impl FnMut(&mut Value)) {
    let _ = visit_by::<()>(&BYTES, api_version, kind, obj, &mut |v, _| {
        f(v);
        Ok(())
    });
}

fn visit_by<E>(
    paths: &Paths,
    api_version: &str,
    kind: &str,
    obj: &mut Value,
    f: &mut impl FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    let index = paths
        .by_kind
        .get(&(api_version, kind))
        .copied()
        .or_else(|| message_index(&format!("{}.{kind}", package_for_api_version(api_version))));
    match index {
        Some(i) if !paths.steps[i].is_empty() => walk(paths, i, obj, f),
        _ => Ok(()),
    }
}

fn walk<E>(
    paths: &Paths,
    message: usize,
    obj: &mut Value,
    f: &mut impl FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    for step in &paths.steps[message] {
        if step.embedded {
            if let Target::Message(j) = step.to {
                walk(paths, j, obj, f)?;
            }
            continue;
        }
        let Some(v) = obj.get_mut(step.json) else {
            continue;
        };
        match (step.card, v) {
            (Card::Optional, v) => visit(paths, step.to, v, false, f)?,
            (Card::Repeated, Value::Array(items)) => {
                for item in items {
                    visit(paths, step.to, item, false, f)?;
                }
            }
            (Card::Map, Value::Object(entries)) => {
                for (_, value) in entries.iter_mut() {
                    visit(paths, step.to, value, true, f)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn visit<E>(
    paths: &Paths,
    to: Target,
    v: &mut Value,
    in_map: bool,
    f: &mut impl FnMut(&mut Value, bool) -> Result<(), E>,
) -> Result<(), E> {
    match to {
        Target::Quantity => f(v, in_map),
        Target::Message(j) => walk(paths, j, v, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(api_version: &str, kind: &str, mut obj: Value) -> Vec<String> {
        let mut seen = Vec::new();
        let _ = visit_quantities::<()>(api_version, kind, &mut obj, &mut |v, _| {
            seen.push(v.to_string());
            Ok(())
        });
        seen
    }

    #[test]
    fn the_quantities_of_a_pod_a_claim_and_a_quota_are_found_and_nothing_else() {
        let pod = json!({"spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "0.5"}, "limits": {"memory": "1Gi"}}}],
            "initContainers": [{"resources": {"requests": {"cpu": "1"}}}],
            "overhead": {"cpu": "2"},
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Mi"}}],
            "nodeSelector": {"cpu": "not a quantity"}
        }});
        let mut seen = found("v1", "Pod", pod);
        seen.sort();
        assert_eq!(seen, ["\"0.5\"", "\"1\"", "\"1Gi\"", "\"1Mi\"", "\"2\""]);
        let pvc = json!({"spec": {"resources": {"requests": {"storage": 5}}}});
        assert_eq!(found("v1", "PersistentVolumeClaim", pvc), ["5"]);
        let quota = json!({"spec": {"hard": {"pods": "10"}}, "status": {"used": {"pods": "1"}}});
        assert_eq!(found("v1", "ResourceQuota", quota).len(), 2);
        let cm = json!({"data": {"cpu": "abc"}});
        assert!(found("v1", "ConfigMap", cm).is_empty());
        let deploy = json!({"spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]}}}});
        assert_eq!(found("apps/v1", "Deployment", deploy), ["\"1\""]);
    }
}
