//! Custom resources: without a schema, with a structural schema, and
//! their status by scope.

use super::*;

#[test]
fn custom_resources_without_schema() {
    let cr = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w", "labels": {"x": "y"}}, "spec": spec})
    };
    let first = apply(
        None,
        &cr(json!({"size": 1, "tags": ["a", "b"], "nested": {"k": "v"}})),
        "m",
        false,
        "",
    )
    .unwrap();
    assert_eq!(
        fields(&first, "m", Operation::Apply),
        Some(json!({
            "f:metadata": {"f:labels": {"f:x": {}}},
            "f:spec": {".": {}, "f:nested": {".": {}, "f:k": {}}, "f:size": {}, "f:tags": {}}
        }))
    );
    // Lists are atomic: replaced.
    let out = apply(
        Some(&first),
        &cr(json!({"tags": ["c"]})),
        "m",
        false,
        "example.com/Widget",
    )
    .unwrap();
    assert_eq!(out["spec"], json!({"tags": ["c"]}));
    // Updates record granular maps too: a create of a custom resource
    // adds `spec` as a whole.
    let created = update(
        None,
        &cr(json!({"size": 1})),
        "creator",
        "example.com/v1",
        "",
        "",
    );
    assert_eq!(
        fields(&created, "creator", Operation::Update),
        Some(json!({
            "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            "f:spec": {".": {}, "f:size": {}}
        }))
    );
}

#[test]
fn custom_resources_with_a_structural_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["id"],
                        "items": {"type": "object", "properties": {
                            "id": {"type": "string"}, "value": {"type": "integer"}
                        }}
                    },
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                 "additionalProperties": {"type": "string"}}
                }
            }
        }
    });
    let scope = Scope::new(Schema::structural(&schema), "");
    let cr = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w"}, "spec": spec})
    };
    let first = apply_in(
        &scope,
        None,
        &cr(json!({"items": [{"id": "a", "value": 1}], "selector": {"k": "v"}})),
        "m",
        false,
    )
    .unwrap();
    assert_eq!(
        fields(&first, "m", Operation::Apply),
        Some(json!({"f:spec": {
            "f:items": {"k:{\"id\":\"a\"}": {".": {}, "f:id": {}, "f:value": {}}},
            "f:selector": {}
        }}))
    );
    let out = apply_in(
        &scope,
        Some(&first),
        &cr(json!({"items": [{"id": "b", "value": 2}]})),
        "n",
        false,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["items"],
        json!([{"id": "a", "value": 1}, {"id": "b", "value": 2}])
    );
}

#[test]
fn custom_resource_status_follows_the_scope() {
    let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": "w"}, "spec": {"a": 1}, "status": {"ok": true}});
    // Untyped: no status subresource unless the caller says so.
    let out = apply(None, &cr, "m", false, "").unwrap();
    assert!(fields(&out, "m", Operation::Apply)
        .unwrap()
        .get("f:status")
        .is_some());
    let scope = Scope {
        status_subresource: true,
        ..Scope::new(Schema::untyped(), "")
    };
    let out = apply_in(&scope, None, &cr, "m", false).unwrap();
    assert!(fields(&out, "m", Operation::Apply)
        .unwrap()
        .get("f:status")
        .is_none());
    assert!(Schema::for_type(DEPLOY).has_status());
    assert!(!Schema::for_type(CM).has_status());
}
