//! The schema of a CRD version as published in OpenAPI v3.

use serde_json::{json, Value};

use super::{flag, list, INT_OR_STRING};

/// The schema as kapi publishes it in OpenAPI v3 (`/openapi/v3/apis/...`):
/// the CRD's schema with every `x-kubernetes-*` extension kept, and
/// `x-kubernetes-int-or-string` unfolded as upstream's `Unfold` does (an
/// `anyOf: [{type: integer}, {type: string}]`, or that anyOf as the first
/// `allOf` entry when the node already has an anyOf).
///
/// What upstream's builder (controller/openapi/builder) does on top, which
/// the caller has to add around this schema if it wants it:
/// - it goes through the structural schema, so non-structural leftovers
///   (`example`, `externalDocs`, descriptions inside junctors) are dropped;
/// - `metadata` becomes `allOf: [{$ref: ObjectMeta}]` with upstream's
///   description, `apiVersion` and `kind` get their standard descriptions;
/// - `x-kubernetes-group-version-kind` is added at the root, and a List
///   schema (`<Kind>List`) is generated next to it;
/// - for OpenAPI v2 (not this function) nullable, junctors and
///   `x-kubernetes-int-or-string` types are additionally rewritten.
pub fn to_openapi(schema: &Value) -> Value {
    let mut out = schema.clone();
    unfold(&mut out);
    out
}

fn int_or_string_any_of() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

fn is_pattern(any_of: &[Value]) -> bool {
    any_of.len() == 2
        && any_of[0] == json!({"type": "integer"})
        && any_of[1] == json!({"type": "string"})
}

fn unfold(s: &mut Value) {
    let Value::Object(m) = s else {
        return;
    };
    if flag(&Value::Object(m.clone()), INT_OR_STRING) {
        let node = Value::Object(m.clone());
        let any_of = list(&node, "anyOf");
        let all_of_first_is_pattern = list(&node, "allOf")
            .first()
            .is_some_and(|f| is_pattern(list(f, "anyOf")));
        if !is_pattern(any_of) && !all_of_first_is_pattern {
            if any_of.is_empty() {
                m.insert("anyOf".into(), int_or_string_any_of());
            } else {
                let mut all_of = vec![json!({ "anyOf": int_or_string_any_of() })];
                all_of.extend(list(&node, "allOf").iter().cloned());
                m.insert("allOf".into(), Value::Array(all_of));
            }
        }
    }
    // Only the structural part: int-or-string may not appear under junctors.
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for v in props.values_mut() {
            unfold(v);
        }
    }
    if let Some(it @ Value::Object(_)) = m.get_mut("items") {
        unfold(it);
    }
    if let Some(ap @ Value::Object(_)) = m.get_mut("additionalProperties") {
        unfold(ap);
    }
}
