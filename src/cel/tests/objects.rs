//! Tests of rules on objects: the root's type meta, embedded resources,
//! preserved unknown fields, escaped property names and allOf.

use super::*;

#[test]
fn root_rules_see_type_meta_and_name() {
    let s = json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('x') && self.kind == 'Foo'", "message": "bad name"}
        ],
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    });
    assert!(compile_schema_rules(&s, "s").is_empty());
    assert!(validate(&s, &cr(json!({})), None).is_empty());
    let mut obj = cr(json!({}));
    obj["metadata"]["name"] = json!("y");
    assert_eq!(
        lines(&validate(&s, &obj, None)),
        vec![r#"<nil>: Invalid value: "object": bad name"#]
    );
    // Other metadata fields are not accessible.
    let s2 = json!({
        "type": "object",
        "x-kubernetes-validations": [{"rule": "has(self.metadata.labels)"}],
    });
    let errs = compile_schema_rules(&s2, "s");
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].detail.contains("undefined field 'labels'"),
        "{}",
        errs[0].detail
    );
}

#[test]
fn escaped_property_names_and_bind() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "x-prop": {"type": "integer"},
            "namespace": {"type": "string"},
        },
        "x-kubernetes-validations": [
            {"rule": "self.x__dash__prop > 0 && self.__namespace__ != ''"},
            {"rule": "cel.bind(n, self.x__dash__prop, n * n < 100)", "message": "square"},
        ]
    }));
    assert!(
        compile_schema_rules(&s, "s").is_empty(),
        "{:#?}",
        lines(&compile_schema_rules(&s, "s"))
    );
    assert!(validate(&s, &cr(json!({"x-prop": 3, "namespace": "ns"})), None).is_empty());
    let details: Vec<String> = validate(&s, &cr(json!({"x-prop": 11, "namespace": "ns"})), None)
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(details, vec!["square"]);
}

#[test]
fn rules_under_all_of_run() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "allOf": [{"x-kubernetes-validations": [{"rule": "self.a > 0", "message": "a positive"}]}]
    }));
    let errs = validate(&s, &cr(json!({"a": 0})), None);
    assert_eq!(
        lines(&errs),
        vec![r#"spec: Invalid value: "object": a positive"#]
    );
}

#[test]
fn embedded_resources_expose_type_meta() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [
                    {"rule": "self.kind == 'Pod' && self.metadata.name != ''", "message": "a named Pod"}
                ]
            }
        }
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let ok =
        cr(json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}));
    assert!(validate(&s, &ok, None).is_empty());
    let bad =
        cr(json!({"template": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "p"}}}));
    assert_eq!(
        lines(&validate(&s, &bad, None)),
        vec![r#"spec.template: Invalid value: "object": a named Pod"#]
    );
}

#[test]
fn preserved_unknown_fields_are_not_selectable_but_compare() {
    let s = crd(json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"known": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let old = cr(json!({"known": "a", "extra": {"x": 1}}));
    assert!(validate(
        &s,
        &cr(json!({"known": "a", "extra": {"x": 1}})),
        Some(&old)
    )
    .is_empty());
    assert_eq!(
        validate(
            &s,
            &cr(json!({"known": "a", "extra": {"x": 2}})),
            Some(&old)
        )
        .len(),
        1
    );
    let s = crd(json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"known": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "has(self.extra)"}]
    }));
    let errs = compile_schema_rules(&s, "s");
    assert!(
        errs[0].detail.contains("undefined field 'extra'"),
        "{}",
        errs[0].detail
    );
}
