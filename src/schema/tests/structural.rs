//! Tests of the structural-schema rules a CRD's openAPIV3Schema must
//! follow (invariants, completeness, defaults, per-node checks).

use super::*;

#[test]
fn structural_ok() {
    let s = spec(json!({
        "replicas": {"type": "integer", "minimum": 1, "default": 1},
        "port": {"x-kubernetes-int-or-string": true},
        "free": {"x-kubernetes-preserve-unknown-fields": true},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    }));
    assert_eq!(structural(s), Vec::<String>::new());
}

#[test]
fn type_required_for_fields() {
    assert_eq!(
        structural(root(json!({"spec": {}}))),
        vec![format!("{P}.properties[spec].type: Required value: must not be empty for specified object fields")]
    );
}

#[test]
fn type_required_at_root_and_for_items() {
    assert_eq!(
        structural(json!({})),
        vec![format!(
            "{P}.type: Required value: must not be empty at the root"
        )]
    );
    assert_eq!(
        structural(root(json!({"a": {"type": "array", "items": {}}}))),
        vec![format!("{P}.properties[a].items.type: Required value: must not be empty for specified array items")]
    );
}

#[test]
fn array_needs_items() {
    assert_eq!(
        structural(root(json!({"a": {"type": "array"}}))),
        vec![format!(
            "{P}.properties[a].items: Required value: must be specified"
        )]
    );
}

#[test]
fn root_must_be_object() {
    assert_eq!(
        structural(json!({"type": "string"})),
        vec![format!(
            "{P}.type: Invalid value: \"string\": must be object at the root"
        )]
    );
}

#[test]
fn additional_properties_rules() {
    assert_eq!(
        structural(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        vec![format!(
            "{P}.additionalProperties: Forbidden: must not be used at the root"
        )]
    );
    let s = spec(json!({"m": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "string"},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")]
    );
}

#[test]
fn junctors_may_not_specify_type_or_default() {
    let s = spec(json!({"x": {
        "type": "string",
        "anyOf": [{"type": "string"}, {"pattern": "^a", "default": "a", "description": "d"}],
    }}));
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.properties[spec].properties[x].anyOf[0].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[spec].properties[x].anyOf[1].default: Forbidden: must be undefined to be structural"),
            format!("{P}.properties[spec].properties[x].anyOf[1].description: Forbidden: must be empty to be structural"),
        ]
    );
}

#[test]
fn junctors_nested_extensions_and_metadata() {
    let s = json!({
        "type": "object",
        "properties": {"spec": {"type": "object"}, "metadata": {"type": "object"}},
        "not": {"properties": {"metadata": {}}, "x-kubernetes-validations": [{"rule": "true"}]},
        "oneOf": [{"nullable": true, "x-kubernetes-list-type": "set"}],
    });
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.not.properties[metadata]: Forbidden: must not be specified in a nested context"),
            format!("{P}.not.x-kubernetes-validations: Forbidden: must be empty to be structural"),
            format!("{P}.oneOf[0].nullable: Forbidden: must be false to be structural"),
            format!("{P}.oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural"),
            // the per-node API checks look under junctors too
            format!("{P}.oneOf[0].type: Required value: must be array if x-kubernetes-list-type is specified"),
        ]
    );
}

#[test]
fn junctor_properties_must_be_in_structure() {
    let s = json!({
        "type": "object",
        "properties": {"spec": {"type": "object"}},
        "allOf": [{"properties": {"spec": {"properties": {"foo": {}}}, "bar": {}}}],
    });
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.properties[bar]: Required value: because it is defined in {P}.allOf[0].properties[bar]"),
            format!("{P}.properties[spec].properties[foo]: Required value: because it is defined in {P}.allOf[0].properties[spec].properties[foo]"),
        ]
    );
}

#[test]
fn metadata_may_only_restrict_name() {
    let ok = root(json!({"metadata": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 20},
        "generateName": {"type": "string"},
    }}}));
    assert_eq!(structural(ok), Vec::<String>::new());
    let bad = root(json!({"metadata": {"type": "object", "properties": {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    }}}));
    assert_eq!(
        structural(bad),
        vec![format!("{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified")]
    );
    let untyped = root(json!({"metadata": {"x-kubernetes-preserve-unknown-fields": true}}));
    assert_eq!(
        structural(untyped),
        // sorted as Go sorts the error strings: '.' before ':'
        vec![
            format!("{P}.properties[metadata].type: Invalid value: \"\": must be object"),
            format!("{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
        ]
    );
}

#[test]
fn kind_and_api_version_must_be_strings() {
    let s = root(json!({"kind": {"type": "integer"}, "apiVersion": {"type": "string"}}));
    assert_eq!(
        structural(s),
        vec![format!(
            "{P}.properties[kind].type: Invalid value: \"integer\": must be string"
        )]
    );
}

#[test]
fn embedded_resource_needs_object_and_properties() {
    let s = spec(json!({"t": {"x-kubernetes-embedded-resource": true}}));
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.properties[spec].properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"),
            format!("{P}.properties[spec].properties[t].type: Required value: must be object if x-kubernetes-embedded-resource is true"),
        ]
    );
    let ok = spec(json!({"t": {
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    }}));
    assert_eq!(structural(ok), Vec::<String>::new());
}

#[test]
fn int_or_string_shapes() {
    let ok = spec(json!({
        "a": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "b": {"x-kubernetes-int-or-string": true, "allOf": [
            {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            {"pattern": "^[0-9]+%?$"},
        ]},
    }));
    assert_eq!(structural(ok), Vec::<String>::new());
    let bad = spec(json!({"a": {
        "x-kubernetes-int-or-string": true,
        "x-kubernetes-preserve-unknown-fields": true,
        "anyOf": [{"type": "integer"}, {"type": "boolean"}],
    }}));
    assert_eq!(
        structural(bad),
        vec![
            format!("{P}.properties[spec].properties[a].anyOf[0].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[spec].properties[a].anyOf[1].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[spec].properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"),
        ]
    );
}

#[test]
fn defaults_must_validate() {
    let s = spec(json!({"replicas": {"type": "integer", "minimum": 1, "default": 0}}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[replicas].default: Invalid value: 0:  in body should be greater than or equal to 1")]
    );
    let s = spec(json!({"o": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "default": {"a": 1},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[o].default.a: Invalid value: \"integer\": a in body must be of type string: \"integer\"")]
    );
}

#[test]
fn defaults_must_be_pruned() {
    let s = spec(json!({"o": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "default": {"a": "x", "foo": 1},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[o].default: Invalid value: map[string]interface {{}}{{\"a\":\"x\", \"foo\":1}}: must not have unknown fields")]
    );
}

#[test]
fn defaults_forbidden_in_top_level_metadata() {
    let s = root(json!({"metadata": {"type": "object", "default": {}}}));
    assert_eq!(
        structural(s),
        vec![format!(
            "{P}.properties[metadata].default: Forbidden: must not be set in top-level metadata"
        )]
    );
}

#[test]
fn embedded_resource_default_needs_type_meta() {
    let s = spec(json!({"t": {
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
        "default": {"apiVersion": "v1"},
    }}));
    assert_eq!(
        structural(s),
        vec![format!(
            "{P}.properties[spec].properties[t].default.kind: Required value"
        )]
    );
}

#[test]
fn list_map_keys_need_list_type_map() {
    let s = spec(json!({"ports": {
        "type": "array",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[ports].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty")]
    );
    let s = spec(json!({"ports": {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
    }}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[ports].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map")]
    );
}

#[test]
fn list_map_keys_must_be_required_scalar_properties() {
    let s = spec(json!({"ports": {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name", "sub", "missing"],
        "items": {"type": "object", "properties": {
            "name": {"type": "string"},
            "sub": {"type": "object", "default": {}},
        }},
    }}));
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.properties[spec].properties[ports].items.properties[sub].type: Invalid value: \"object\": must be a scalar type if parent array's x-kubernetes-list-type is map"),
            format!("{P}.properties[spec].properties[ports].x-kubernetes-list-map-keys: Invalid value: [\"name\",\"sub\",\"missing\"]: entries must all be names of item properties"),
            format!("{P}.properties[spec].properties[ports].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
        ]
    );
}

#[test]
fn list_type_values_and_placement() {
    let s = spec(json!({
        "a": {"type": "string", "x-kubernetes-list-type": "set"},
        "b": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"},
        "c": {"type": "array", "x-kubernetes-list-type": "set",
              "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
    }));
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.properties[spec].properties[a].type: Invalid value: \"string\": must be array if x-kubernetes-list-type is specified"),
            format!("{P}.properties[spec].properties[b].x-kubernetes-list-type: Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\""),
            format!("{P}.properties[spec].properties[c].items.x-kubernetes-map-type: Invalid value: \"null\": must be atomic as item of a list with x-kubernetes-list-type=set"),
        ]
    );
}

#[test]
fn pattern_must_compile() {
    let s = spec(json!({"x": {"type": "string", "pattern": "(abc"}}));
    assert_eq!(
        structural(s),
        vec![format!("{P}.properties[spec].properties[x].pattern: Invalid value: \"(abc\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(abc`")]
    );
}

#[test]
fn api_schema_checks() {
    let s = json!({
        "type": "object",
        "nullable": true,
        "properties": {
            "a": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "b": {"type": "null"},
            "c": {"type": "thing"},
            "d": {"type": "string", "x-kubernetes-preserve-unknown-fields": false},
        },
    });
    assert_eq!(
        structural(s),
        vec![
            format!("{P}.nullable: Forbidden: nullable cannot be true at the root"),
            format!("{P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
            format!("{P}.properties[b].type: Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""),
            format!("{P}.properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative"),
            format!("{P}.properties[c].type: Unsupported value: \"thing\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""),
            format!("{P}.properties[d].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"),
        ]
    );
}

#[test]
fn status_root_restrictions() {
    assert_eq!(
        msgs(&validate_status_root(&json!({"type": "array"}), P)),
        vec![format!("{P}.type: Invalid value: \"array\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled")]
    );
    assert!(validate_status_root(&spec(json!({})), P).is_empty());
    let e = msgs(&validate_status_root(
        &json!({"type": "object", "anyOf": [{}]}),
        P,
    ));
    assert_eq!(e.len(), 1);
    assert!(e[0].ends_with(
        "fields are allowed at the root of the schema if the status subresource is enabled"
    ));
}
