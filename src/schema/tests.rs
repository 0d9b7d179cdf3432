use serde_json::{json, Value};

use super::gofmt;
use super::*;
use crate::api::validation::FieldError;

const P: &str = "spec.versions[0].schema.openAPIV3Schema";

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter()
        .map(|e| format!("{}: {}", e.field, e.message()))
        .collect()
}

fn structural(s: Value) -> Vec<String> {
    msgs(&validate_structural(&s, P))
}

fn check(obj: Value, s: &Value) -> Vec<String> {
    msgs(&validate(&obj, s, ""))
}

fn root(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn spec(props: Value) -> Value {
    root(json!({"spec": {"type": "object", "properties": props}}))
}

// ---------------------------------------------------------------------------
// structural schema rules

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

// ---------------------------------------------------------------------------
// pruning

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

// ---------------------------------------------------------------------------
// defaulting

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

// ---------------------------------------------------------------------------
// validation

#[test]
fn type_errors() {
    let s = spec(json!({"replicas": {"type": "integer"}, "n": {"type": "number"}}));
    let errs = validate(&json!({"spec": {"replicas": "3", "n": 3}}), &s, "");
    assert_eq!(
        msgs(&errs),
        vec!["spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""]
    );
    assert_eq!(
        errs[0].to_cause().reason.as_deref(),
        Some("FieldValueTypeInvalid")
    );
    assert_eq!(
        check(json!({"spec": {"replicas": 3.0}}), &s),
        Vec::<String>::new()
    );
    assert_eq!(
        check(json!({"spec": {"replicas": 3.5}}), &s),
        vec!["spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\""]
    );
}

#[test]
fn nullable() {
    let s = spec(json!({"a": {"type": "string"}, "b": {"type": "string", "nullable": true}}));
    assert_eq!(
        check(json!({"spec": {"a": null, "b": null}}), &s),
        vec!["spec.a: Invalid value: \"null\": spec.a in body must be of type string: \"null\""]
    );
}

#[test]
fn enums() {
    let s = spec(json!({"color": {"type": "string", "enum": ["red", "blue"]},
                        "n": {"type": "integer", "enum": [1, 2]}}));
    assert_eq!(
        check(json!({"spec": {"color": "pink", "n": 3}}), &s),
        vec![
            "spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\"",
            "spec.n: Unsupported value: 3: supported values: \"1\", \"2\"",
        ]
    );
    assert_eq!(
        check(json!({"spec": {"color": "red", "n": 2}}), &s),
        Vec::<String>::new()
    );
}

#[test]
fn pattern_and_lengths() {
    let s = spec(
        json!({"cron": {"type": "string", "pattern": "^a+$", "maxLength": 5, "minLength": 2}}),
    );
    assert_eq!(
        check(json!({"spec": {"cron": "abc"}}), &s),
        vec!["spec.cron: Invalid value: \"abc\": spec.cron in body should match '^a+$'"]
    );
    assert_eq!(
        check(json!({"spec": {"cron": "aaaaaa"}}), &s),
        vec!["spec.cron: Too long: may not be more than 5 bytes"]
    );
    assert_eq!(
        check(json!({"spec": {"cron": "a"}}), &s),
        vec!["spec.cron: Invalid value: \"a\": spec.cron in body should be at least 2 chars long"]
    );
}

#[test]
fn numeric_bounds() {
    let s = spec(json!({
        "a": {"type": "integer", "minimum": 1, "maximum": 10},
        "b": {"type": "integer", "maximum": 10, "exclusiveMaximum": true},
        "c": {"type": "number", "minimum": 0.5, "exclusiveMinimum": true},
        "d": {"type": "integer", "multipleOf": 5},
    }));
    assert_eq!(
        check(json!({"spec": {"a": 0, "b": 10, "c": 0.5, "d": 7}}), &s),
        vec![
            "spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1",
            "spec.b: Invalid value: 10: spec.b in body should be less than 10",
            "spec.c: Invalid value: 0.5: spec.c in body should be greater than 0.5",
            "spec.d: Invalid value: 7: spec.d in body should be a multiple of 5",
        ]
    );
    assert_eq!(
        check(json!({"spec": {"a": 11}}), &s),
        vec!["spec.a: Invalid value: 11: spec.a in body should be less than or equal to 10"]
    );
}

#[test]
fn items_and_properties_counts() {
    let s = spec(json!({
        "l": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        "m": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
        "n": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
    }));
    assert_eq!(
        check(
            json!({"spec": {"l": ["a", "b", "c", "d"], "m": {"a": "", "b": ""}, "n": {}}}),
            &s
        ),
        vec![
            "spec.l: Too many: 4: must have at most 3 items",
            "spec.m: Too many: 2: must have at most 1 item",
            "spec.n: Invalid value: 0: spec.n in body should have at least 1 properties",
        ]
    );
    let errs = validate(&json!({"spec": {"l": []}}), &s, "");
    assert_eq!(
        msgs(&errs),
        vec!["spec.l: Invalid value: 0: spec.l in body should have at least 1 items"]
    );
}

#[test]
fn required_fields() {
    let s = root(
        json!({"spec": {"type": "object", "required": ["image", "cronSpec"],
        "properties": {"image": {"type": "string"}, "cronSpec": {"type": "string"}}}}),
    );
    assert_eq!(
        check(json!({"spec": {"image": "x"}}), &s),
        vec!["spec.cronSpec: Required value"]
    );
    let top =
        json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}});
    assert_eq!(check(json!({}), &top), vec!["spec: Required value"]);
}

#[test]
fn additional_properties_values() {
    let s = spec(
        json!({"m": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "closed": {"type": "object", "additionalProperties": false}}),
    );
    assert_eq!(
        check(json!({"spec": {"m": {"a": "x", "b": 1}, "closed": {"z": 1}}}), &s),
        vec![
            "spec.closed: Invalid value: \"z\": spec.closed.z in body is a forbidden property",
            "spec.m.a: Invalid value: \"string\": spec.m.a in body must be of type integer: \"string\"",
        ]
    );
}

#[test]
fn int_or_string_values() {
    let s = spec(json!({"port": {"x-kubernetes-int-or-string": true}}));
    assert_eq!(
        check(json!({"spec": {"port": 80}}), &s),
        Vec::<String>::new()
    );
    assert_eq!(
        check(json!({"spec": {"port": "http"}}), &s),
        Vec::<String>::new()
    );
    assert_eq!(
        check(json!({"spec": {"port": true}}), &s),
        vec!["spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""]
    );
}

#[test]
fn formats() {
    let s = spec(json!({
        "t": {"type": "string", "format": "date-time"},
        "u": {"type": "string", "format": "uuid"},
        "b": {"type": "string", "format": "byte"},
        "i": {"type": "string", "format": "int32"},
        "d": {"type": "string", "format": "date"},
        "n": {"type": "string", "format": "k8s-short-name"},
    }));
    let good = json!({"spec": {"t": "2024-01-02T03:04:05Z", "u": "0a1b2c3d-0a1b-0a1b-0a1b-0a1b2c3d4e5f",
        "b": "aGVsbG8=", "i": "anything", "d": "2024-02-29", "n": "abc-1"}});
    assert_eq!(check(good, &s), Vec::<String>::new());
    let bad =
        json!({"spec": {"t": "yesterday", "u": "nope", "b": "!!", "d": "2023-02-29", "n": "Abc"}});
    assert_eq!(
        check(bad, &s),
        vec![
            "spec.b: Invalid value: \"!!\": spec.b in body must be of type byte: \"!!\"",
            "spec.d: Invalid value: \"2023-02-29\": spec.d in body must be of type date: \"2023-02-29\"",
            "spec.n: Invalid value: \"Abc\": spec.n in body must be of type k8s-short-name: \"Abc\"",
            "spec.t: Invalid value: \"yesterday\": spec.t in body must be of type date-time: \"yesterday\"",
            "spec.u: Invalid value: \"nope\": spec.u in body must be of type uuid: \"nope\"",
        ]
    );
}

#[test]
fn list_type_set_duplicates() {
    let s = spec(
        json!({"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}),
    );
    assert_eq!(
        check(json!({"spec": {"tags": ["a", "b", "a", "a", "b"]}}), &s),
        vec![
            "spec.tags[2]: Duplicate value: \"a\"",
            "spec.tags[4]: Duplicate value: \"b\""
        ]
    );
}

#[test]
fn list_type_map_duplicates() {
    let s = spec(json!({"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
    }, "multi": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
        "items": {"type": "object", "required": ["port", "protocol"], "properties": {
            "port": {"type": "integer"}, "protocol": {"type": "string"}}},
    }}));
    let errs = validate(
        &json!({"spec": {
            "ports": [{"name": "a"}, {"name": "a"}],
            "multi": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}],
        }}),
        &s,
        "",
    );
    assert_eq!(
        msgs(&errs),
        vec![
            "spec.multi[2]: Duplicate value: map[string]interface {}{\"port\":80, \"protocol\":\"TCP\"}",
            "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}",
        ]
    );
    assert_eq!(
        errs[1].to_cause().reason.as_deref(),
        Some("FieldValueDuplicate")
    );
}

#[test]
fn embedded_resources_are_validated() {
    let s = spec(json!({"template": {
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    }}));
    assert_eq!(
        check(
            json!({"spec": {"template": {"metadata": {"name": "ok"}}}}),
            &s
        ),
        vec![
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value"
        ]
    );
    assert_eq!(
        check(
            json!({"spec": {"template": {"apiVersion": "a/b/c", "kind": "Pod_x", "metadata": {"name": "a/b"}}}}),
            &s
        ),
        vec![
            "spec.template.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
            "spec.template.kind: Invalid value: \"Pod_x\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        ]
    );
    assert_eq!(
        check(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 1}}}}), &s),
        vec!["spec.template.metadata: Invalid value: map[string]interface {}{\"name\":1}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"]
    );
}

#[test]
fn junctor_messages() {
    let s = spec(json!({
        "x": {"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]},
        "y": {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": 10}]},
        "z": {"type": "string", "not": {"enum": ["bad"]}},
    }));
    assert_eq!(
        check(json!({"spec": {"x": "c", "y": 5, "z": "bad"}}), &s),
        vec![
            "<nil>: Invalid value: \"\": \"spec.x\" must validate at least one schema (anyOf)",
            "spec.x: Invalid value: \"c\": spec.x in body should match '^a'",
            "<nil>: Invalid value: \"\": \"spec.y\" must validate one and only one schema (oneOf). Found 2 valid alternatives",
            "<nil>: Invalid value: \"\": \"spec.z\" must not validate the schema (not)",
        ]
    );
    let all = spec(json!({"w": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]}}));
    assert_eq!(
        check(json!({"spec": {"w": "a"}}), &all),
        vec![
            "spec.w: Invalid value: \"a\": spec.w in body should be at least 2 chars long",
            "<nil>: Invalid value: \"\": \"spec.w\" must validate all the schemas (allOf)",
        ]
    );
}

#[test]
fn path_prefix() {
    let s = spec(json!({"a": {"type": "integer"}}));
    assert_eq!(
        msgs(&validate(&json!({"spec": {"a": "x"}}), &s, "status.old")),
        vec!["status.old.spec.a: Invalid value: \"string\": spec.a in body must be of type integer: \"string\""]
    );
}

// ---------------------------------------------------------------------------
// Go rendering and OpenAPI

#[test]
fn go_rendering() {
    assert_eq!(gofmt::float(0.5), "0.5");
    assert_eq!(gofmt::float(100.0), "100");
    assert_eq!(gofmt::float(1e6), "1e+06");
    assert_eq!(gofmt::float(123456789.0), "1.23456789e+08");
    assert_eq!(gofmt::float(0.00001), "1e-05");
    assert_eq!(gofmt::json_float(1e21), "1e+21");
    assert_eq!(gofmt::json_float(1e-7), "1e-7");
    assert_eq!(gofmt::repr(&Value::Null), "\"null\"");
    assert_eq!(
        gofmt::repr(&json!({"b": [1, "x", null], "a": {"c": 1.5}})),
        "map[string]interface {}{\"a\":map[string]interface {}{\"c\":1.5}, \"b\":[]interface {}{1, \"x\", interface {}(nil)}}"
    );
}

#[test]
fn openapi_unfolds_int_or_string() {
    let s = spec(json!({
        "a": {"x-kubernetes-int-or-string": true},
        "b": {"x-kubernetes-int-or-string": true, "anyOf": [{"pattern": "x"}]},
        "c": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]},
    }));
    let out = to_openapi(&s);
    let props = &out["properties"]["spec"]["properties"];
    assert_eq!(
        props["a"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    assert_eq!(
        props["b"]["allOf"],
        json!([{"anyOf": [{"type": "integer"}, {"type": "string"}]}])
    );
    assert_eq!(props["c"], s["properties"]["spec"]["properties"]["c"]);
}

// ---------------------------------------------------------------------------
// a realistic CRD: default, prune, validate

fn crontab_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["cronSpec", "image"],
                "properties": {
                    "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
                    "image": {"type": "string", "minLength": 1},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "suspend": {"type": "boolean", "default": false},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "maxItems": 3,
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "port": {"x-kubernetes-int-or-string": true},
                                "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
                            },
                        },
                    },
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        },
    })
}

#[test]
fn crontab_schema_is_structural() {
    assert_eq!(structural(crontab_schema()), Vec::<String>::new());
}

#[test]
fn crontab_good_object() {
    let s = crontab_schema();
    let mut o = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": "dns", "protocol": "UDP"}],
            "color": "blue",
        },
        "status": {"lastScheduleTime": "now"},
    });
    apply_defaults(&mut o, &s);
    assert_eq!(prune(&mut o, &s), vec!["spec.color"]);
    assert_eq!(validate(&o, &s, ""), Vec::<FieldError>::new());
    assert_eq!(
        o["spec"],
        json!({
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "replicas": 1,
            "suspend": false,
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP"},
                {"name": "dns", "port": "dns", "protocol": "UDP"},
            ],
        })
    );
    assert_eq!(o["status"], json!({"lastScheduleTime": "now"}));
}

#[test]
fn crontab_bad_object() {
    let s = crontab_schema();
    let mut o = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "bad"},
        "spec": {
            "cronSpec": "every minute",
            "replicas": 20,
            "ports": [{"name": "a", "protocol": "SCTP"}, {"name": "a", "port": true}],
        },
    });
    apply_defaults(&mut o, &s);
    assert!(prune(&mut o, &s).is_empty());
    assert_eq!(
        msgs(&validate(&o, &s, "")),
        vec![
            "spec.cronSpec: Invalid value: \"every minute\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
            "spec.ports[0].protocol: Unsupported value: \"SCTP\": supported values: \"TCP\", \"UDP\"",
            "spec.ports[1].port: Invalid value: \"boolean\": spec.ports[1].port in body must be of type integer,string: \"boolean\"",
            "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
            "spec.image: Required value",
            "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}",
        ]
    );
}

// ---------------------------------------------------------------------------
// corner cases

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
