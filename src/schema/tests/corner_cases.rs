//! Corner cases met along the way.

use super::*;

#[test]
fn int_or_string_pattern_ignores_non_structural_keys() {
    let s = spec(json!({"a": {
        "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer", "example": 1}, {"type": "string"}],
    }}));
    assert_eq!(structural(s), Vec::<String>::new());
}

#[test]
fn embedded_metadata_defaults_must_be_valid_metadata() {
    let s = spec(json!({"t": {
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"metadata": {"type": "object", "default": {"name": "a/b"}}},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[t].properties[metadata].default: Invalid value: map[string]interface {{}}{{\"name\":\"a/b\"}}: must result in valid metadata: metadata.name: Invalid value: \"a/b\": may not contain '/'")]
    );
}

#[test]
fn list_map_unspecified_keys_collide() {
    let s = spec(json!({"l": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "properties": {"k": {"type": "string", "default": "x"}}},
    }}));
    assert_eq!(
        check(json!({"spec": {"l": [{}, null, {"k": "a"}]}}), &s),
        vec![
            "spec.l[1]: Invalid value: \"null\": spec.l[1] in body must be of type object: \"null\"",
            "spec.l[1]: Duplicate value: map[string]interface {}{}",
        ]
    );
    assert_eq!(
        check(json!({"spec": {"l": ["x"]}}), &s),
        vec![
            "spec.l[0]: Invalid value: \"string\": spec.l[0] in body must be of type object: \"string\"",
            "spec.l[0]: Invalid value: \"x\": must be an object for an array of list-type map",
        ]
    );
}

#[test]
fn null_without_type_is_fine() {
    let s = spec(
        json!({"free": {"x-kubernetes-preserve-unknown-fields": true},
                        "f": {"type": "string", "format": "uuid", "nullable": true}}),
    );
    assert_eq!(
        check(json!({"spec": {"free": null, "f": null}}), &s),
        Vec::<String>::new()
    );
}

#[test]
fn root_level_errors_use_nil_path() {
    let s = json!({"type": "object", "minProperties": 2});
    assert_eq!(
        check(json!({"a": 1}), &s),
        vec!["<nil>: Invalid value: 1:  in body should have at least 2 properties"]
    );
}
