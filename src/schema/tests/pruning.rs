//! Tests of pruning unknown fields.

use super::*;

#[test]
fn prune_unknown_fields() {
    let s = spec(
        json!({"a": {"type": "string"}, "items": {"type": "array", "items": {
        "type": "object", "properties": {"name": {"type": "string"}}}}}),
    );
    let mut o = json!({
        "apiVersion": "x/v1", "kind": "X",
        "metadata": {"name": "n", "whatever": 1},
        "spec": {"a": "x", "b": 1, "items": [{"name": "a", "bar": {"c": 1}}]},
        "extra": true,
    });
    let pruned = prune(&mut o, &s);
    assert_eq!(pruned, vec!["extra", "spec.b", "spec.items[0].bar"]);
    assert_eq!(
        o,
        json!({
            "apiVersion": "x/v1", "kind": "X",
            "metadata": {"name": "n", "whatever": 1},
            "spec": {"a": "x", "items": [{"name": "a"}]},
        })
    );
}

#[test]
fn prune_preserve_unknown_fields() {
    let s = spec(json!({"free": {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }}));
    let mut o = json!({"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x", "b": 2}}}});
    assert_eq!(prune(&mut o, &s), vec!["spec.free.known.b"]);
    assert_eq!(
        o,
        json!({"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x"}}}})
    );
}

#[test]
fn prune_additional_properties() {
    let s = spec(json!({"m": {"type": "object", "additionalProperties": {
        "type": "object", "properties": {"x": {"type": "string"}}}}}));
    let mut o = json!({"spec": {"m": {"k1": {"x": "a", "y": "b"}, "k2": {}}}});
    assert_eq!(prune(&mut o, &s), vec!["spec.m.k1.y"]);
    assert_eq!(o, json!({"spec": {"m": {"k1": {"x": "a"}, "k2": {}}}}));
}

#[test]
fn prune_embedded_resource() {
    let s = spec(json!({"template": {
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }}));
    let mut o = json!({"spec": {"template": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {}, "foo": "bar",
                     "creationTimestamp": null},
        "spec": {"a": "x", "b": "y"},
        "status": {},
    }}});
    assert_eq!(
        prune(&mut o, &s),
        vec![
            "spec.template.metadata.foo",
            "spec.template.spec.b",
            "spec.template.status"
        ]
    );
    assert_eq!(
        o,
        json!({"spec": {"template": {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"a": "x"},
        }}})
    );
}
