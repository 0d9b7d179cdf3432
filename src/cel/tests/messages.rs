//! Tests of what a failing rule reports: message, messageExpression,
//! reason, fieldPath and the error type.

use super::*;

#[test]
fn scalar_rule_passes_and_fails_with_message() {
    let s = replicas_schema(json!({
        "rule": "self.minReplicas <= self.replicas",
        "message": "replicas should be greater than or equal to minReplicas."
    }));
    assert!(compile_schema_rules(&s, "spec.validation.openAPIV3Schema").is_empty());
    assert!(validate(&s, &cr(json!({"minReplicas": 1, "replicas": 3})), None).is_empty());
    let errs = validate(&s, &cr(json!({"minReplicas": 5, "replicas": 3})), None);
    assert_eq!(
        lines(&errs),
        vec![
            r#"spec: Invalid value: "object": replicas should be greater than or equal to minReplicas."#
        ]
    );
    assert_eq!(
        errs[0].to_cause().reason.as_deref(),
        Some("FieldValueInvalid")
    );
}

#[test]
fn default_message_is_failed_rule() {
    let s = replicas_schema(json!({"rule": "self.minReplicas <= self.replicas"}));
    let errs = validate(&s, &cr(json!({"minReplicas": 5, "replicas": 3})), None);
    assert_eq!(
        lines(&errs),
        vec![r#"spec: Invalid value: "object": failed rule: self.minReplicas <= self.replicas"#]
    );
}

#[test]
fn message_expression_builds_the_message() {
    let s = replicas_schema(json!({
        "rule": "self.minReplicas <= self.replicas",
        "message": "static",
        "messageExpression": "'replicas ' + string(self.replicas) + ' below minimum ' + string(self.minReplicas)"
    }));
    assert!(compile_schema_rules(&s, "spec.validation.openAPIV3Schema").is_empty());
    let errs = validate(&s, &cr(json!({"minReplicas": 5, "replicas": 3})), None);
    assert_eq!(
        lines(&errs),
        vec![r#"spec: Invalid value: "object": replicas 3 below minimum 5"#]
    );
}

#[test]
fn message_expression_falls_back_when_empty_or_failing() {
    // Empty result: the static message.
    let s = replicas_schema(json!({
        "rule": "self.minReplicas <= self.replicas",
        "message": "static message",
        "messageExpression": "'  '"
    }));
    let errs = validate(&s, &cr(json!({"minReplicas": 5, "replicas": 3})), None);
    assert_eq!(errs[0].detail, "static message");
    // Failing evaluation without a message: the default.
    let s = replicas_schema(json!({
        "rule": "self.minReplicas <= self.replicas",
        "messageExpression": "self.missing"
    }));
    let errs = validate(&s, &cr(json!({"minReplicas": 5, "replicas": 3})), None);
    assert_eq!(
        errs[0].detail,
        "failed rule: self.minReplicas <= self.replicas"
    );
}

#[test]
fn reason_and_field_path() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "foo": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "max": {"type": "integer"},
        },
        "x-kubernetes-validations": [
            {"rule": "self.foo.x <= self.max", "fieldPath": ".foo.x", "reason": "FieldValueForbidden", "message": "x too big"},
            {"rule": "self.max < 100", "reason": "FieldValueRequired", "message": "max too big"},
            {"rule": "self.max < 50", "reason": "FieldValueDuplicate"},
        ]
    }));
    assert!(compile_schema_rules(&s, "x").is_empty());
    let errs = validate(&s, &cr(json!({"foo": {"x": 200}, "max": 150})), None);
    assert_eq!(
        lines(&errs),
        vec![
            "spec.foo.x: Forbidden: x too big",
            "spec: Required value: max too big",
            r#"spec: Duplicate value: "object""#,
        ]
    );
    assert_eq!(
        errs[0].to_cause().reason.as_deref(),
        Some("FieldValueForbidden")
    );
    assert_eq!(
        errs[1].to_cause().reason.as_deref(),
        Some("FieldValueRequired")
    );
    assert_eq!(
        errs[2].to_cause().reason.as_deref(),
        Some("FieldValueDuplicate")
    );
}

#[test]
fn field_path_normalization() {
    let schema = json!({
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
        }
    });
    assert_eq!(
        crate::cel::valid_field_path(".m['k'].x", &schema).as_deref(),
        Ok("m[k].x")
    );
    assert_eq!(
        crate::cel::valid_field_path(".a['b.c']", &schema).as_deref(),
        Ok("a.b.c")
    );
    assert!(crate::cel::valid_field_path(".nope", &schema).is_err());
    assert!(crate::cel::valid_field_path("m", &schema).is_err());
}

#[test]
fn errors_type_is_invalid_by_default() {
    let s = replicas_schema(json!({"rule": "self.replicas > 0"}));
    let errs = validate(&s, &cr(json!({"replicas": 0})), None);
    assert_eq!(errs[0].kind, ErrorType::Invalid);
    assert_eq!(errs[0].value, Some(json!("object")));
}
