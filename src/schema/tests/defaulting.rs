//! Tests of applying defaults.

use super::*;

#[test]
fn defaults_apply_top_down() {
    let s = spec(json!({
        "replicas": {"type": "integer", "default": 1},
        "strategy": {"type": "object", "default": {}, "properties": {
            "type": {"type": "string", "default": "Rolling"},
            "max": {"type": "integer", "default": 2},
        }},
        "set": {"type": "string", "default": "x"},
    }));
    let mut o = json!({"spec": {"set": "mine"}});
    apply_defaults(&mut o, &s);
    assert_eq!(
        o,
        json!({"spec": {"replicas": 1, "set": "mine", "strategy": {"type": "Rolling", "max": 2}}})
    );
}

#[test]
fn defaults_and_nulls() {
    let s = spec(json!({
        "a": {"type": "string", "default": "d"},
        "b": {"type": "string", "nullable": true, "default": "d"},
        "c": {"type": "string"},
        "d": {"type": "string", "nullable": true},
    }));
    let mut o = json!({"spec": {"a": null, "b": null, "c": null, "d": null}});
    apply_defaults(&mut o, &s);
    assert_eq!(o, json!({"spec": {"a": "d", "b": null, "d": null}}));
}

#[test]
fn defaults_in_items_and_maps() {
    let s = spec(json!({
        "ports": {"type": "array", "items": {"type": "object", "properties": {
            "protocol": {"type": "string", "default": "TCP"}}}},
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "w": {"type": "integer", "default": 1}}}},
        "names": {"type": "array", "items": {"type": "string", "default": "x"}},
    }));
    let mut o =
        json!({"spec": {"ports": [{}, {"protocol": "UDP"}], "m": {"a": {}}, "names": [null, "y"]}});
    apply_defaults(&mut o, &s);
    assert_eq!(
        o,
        json!({"spec": {"ports": [{"protocol": "TCP"}, {"protocol": "UDP"}], "m": {"a": {"w": 1}}, "names": ["x", "y"]}})
    );
}
