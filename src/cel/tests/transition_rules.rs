//! Tests of transition rules (`oldSelf`): immutability, optionalOldSelf,
//! where they may appear, and ratcheting.

use super::*;

#[test]
fn transition_rule_immutability() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]
            }
        }
    }));
    assert!(compile_schema_rules(&s, "x").is_empty());
    // Create: no old object, the rule does not run.
    assert!(validate(&s, &cr(json!({"name": "a"})), None).is_empty());
    let old = cr(json!({"name": "a"}));
    assert!(validate(&s, &cr(json!({"name": "a"})), Some(&old)).is_empty());
    let errs = validate(&s, &cr(json!({"name": "b"})), Some(&old));
    assert_eq!(
        lines(&errs),
        vec![r#"spec.name: Invalid value: "string": Value is immutable"#]
    );
    // The field is new in this update: no old value at that path.
    let old = cr(json!({}));
    assert!(validate(&s, &cr(json!({"name": "b"})), Some(&old)).is_empty());
}

#[test]
fn optional_old_self_runs_on_create() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "mode": {
                "type": "string",
                "x-kubernetes-validations": [{
                    "rule": "self == 'new' || (oldSelf.hasValue() && oldSelf.value() == self)",
                    "optionalOldSelf": true,
                    "message": "mode must be new"
                }]
            }
        }
    }));
    assert!(compile_schema_rules(&s, "x").is_empty());
    assert!(validate(&s, &cr(json!({"mode": "new"})), None).is_empty());
    let errs = validate(&s, &cr(json!({"mode": "old"})), None);
    assert_eq!(
        lines(&errs),
        vec![r#"spec.mode: Invalid value: "string": mode must be new"#]
    );
    // Grandfathered: the old value already was "old".
    let old = cr(json!({"mode": "old"}));
    assert!(validate(&s, &cr(json!({"mode": "old"})), Some(&old)).is_empty());
}

#[test]
fn optional_old_self_without_old_self_is_rejected() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.a > 0", "optionalOldSelf": true}]
    }));
    assert_eq!(
        lines(&compile_schema_rules(&s, "s")),
        vec!["s.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"]
    );
}

#[test]
fn old_self_under_atomic_list_is_rejected() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
            }
        }
    }));
    assert_eq!(
        lines(&compile_schema_rules(&s, "s")),
        vec!["s.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within s.properties[spec].properties[list]"]
    );
}

#[test]
fn ratcheting_unchanged_values() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 10"}]},
            "b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 10"}]},
        }
    }));
    let old = cr(json!({"a": 1, "b": 1}));
    // a unchanged (invalid before too): ratcheted; b changed: reported.
    let errs = validate(&s, &cr(json!({"a": 1, "b": 2})), Some(&old));
    assert_eq!(
        lines(&errs),
        vec![r#"spec.b: Invalid value: "integer": failed rule: self > 10"#]
    );
    // On create everything is reported.
    assert_eq!(validate(&s, &cr(json!({"a": 1, "b": 2})), None).len(), 2);
}

#[test]
fn transition_rules_on_objects_and_sets_of_fields() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.a == oldSelf.a", "message": "a is immutable", "fieldPath": ".a"},
            {"rule": "!has(oldSelf.b) || has(self.b)", "message": "b cannot be removed"},
            {"rule": "self.?b.orValue(0) >= oldSelf.?b.orValue(0)", "message": "b only grows"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let old = cr(json!({"a": "x", "b": 5}));
    assert!(validate(&s, &cr(json!({"a": "x", "b": 6})), Some(&old)).is_empty());
    assert_eq!(
        lines(&validate(&s, &cr(json!({"a": "y"})), Some(&old))),
        vec![
            r#"spec.a: Invalid value: "object": a is immutable"#,
            r#"spec: Invalid value: "object": b cannot be removed"#,
            r#"spec: Invalid value: "object": b only grows"#,
        ]
    );
}
