//! Tests of validating objects against a schema: types, bounds, formats,
//! list types, embedded resources and junctor messages.

use super::*;

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
