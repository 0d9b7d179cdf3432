//! Tests of compiling rules: upstream's compile errors for rules,
//! messageExpressions and literals, undeclared references and receivers.

use super::*;

#[test]
fn compile_error_reported_with_upstream_form() {
    let s = crd(json!({
        "type": "object",
        "properties": {"replicas": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.nonExistingField > 0"},
            {"rule": "self.replicas == true"},
            {"rule": "self.replicas >"},
        ]
    }));
    let errs = compile_schema_rules(&s, "spec.validation.openAPIV3Schema");
    let l = lines(&errs);
    assert_eq!(l.len(), 3, "{l:#?}");
    assert_eq!(
        l[0],
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: \
         apiextensions.ValidationRule{Rule:\"self.nonExistingField > 0\", Message:\"\", MessageExpression:\"\", \
         Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: \
         compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'\n | self.nonExistingField > 0\n | ....^"
    );
    assert!(
        l[1].ends_with(
            "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, bool)'\n | self.replicas == true\n | ..............^"
        ),
        "{}",
        l[1]
    );
    assert!(
        l[2].contains("compilation failed: ERROR: <input>:1:"),
        "{}",
        l[2]
    );
    assert_eq!(
        errs[0].to_cause().reason.as_deref(),
        Some("FieldValueInvalid")
    );
}

#[test]
fn compile_checks_rule_shape_and_message_expression() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "  "},
            {"rule": "self.a > 0", "reason": "Bogus"},
            {"rule": "self.a > 0", "fieldPath": ".nope"},
        ]
    }));
    let l = lines(&compile_schema_rules(&s, "s"));
    assert_eq!(
        l,
        vec![
            "s.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified",
            "s.properties[spec].x-kubernetes-validations[1].reason: Unsupported value: \"Bogus\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
            "s.properties[spec].x-kubernetes-validations[2].fieldPath: Invalid value: \".nope\": fieldPath must be a valid path",
        ]
    );
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.a > 0", "messageExpression": "self.a"},
            {"rule": "self.a"},
        ]
    }));
    let l = lines(&compile_schema_rules(&s, "s"));
    assert_eq!(l.len(), 2, "{l:#?}");
    assert!(l[0].starts_with("s.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{"));
    assert!(l[0].ends_with("messageExpression must evaluate to a string"));
    assert!(l[1].ends_with(": cel expression must evaluate to a bool"));
}

#[test]
fn undeclared_references_and_bad_receivers() {
    let s = crd(json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "foo > 1"},
            {"rule": "self.n.startsWith('a')"},
            {"rule": "self.s.frobnicate()"},
            {"rule": "self.s + 1 == 'a'"},
        ]
    }));
    let errs = compile_schema_rules(&s, "s");
    let d: Vec<&str> = errs.iter().map(|e| e.detail.as_str()).collect();
    assert_eq!(d.len(), 4);
    assert!(
        d[0].contains("ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"),
        "{}",
        d[0]
    );
    assert!(
        d[1].contains("found no matching overload for 'startsWith' applied to 'int.(string)'"),
        "{}",
        d[1]
    );
    assert!(
        d[2].contains("undeclared reference to 'frobnicate' (in container '')"),
        "{}",
        d[2]
    );
    assert!(
        d[3].contains("found no matching overload for '_+_' applied to '(string, int)'"),
        "{}",
        d[3]
    );
}

#[test]
fn message_expression_compile_errors() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "self.a > 0", "messageExpression": "'a is ' + self.b"},
        ]
    }));
    let errs = compile_schema_rules(&s, "s");
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].field,
        "s.properties[spec].x-kubernetes-validations[0].messageExpression"
    );
    assert!(
        errs[0]
            .detail
            .ends_with("messageExpression compilation failed: ERROR: <input>:1:15: undefined field 'b'\n | 'a is ' + self.b\n | ..............^"),
        "{}",
        errs[0].detail
    );
}

#[test]
fn invalid_literals_are_compile_errors() {
    let s = crd(json!({
        "type": "object",
        "properties": {"s": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.s.matches('[')"},
            {"rule": "[1, 'a'].size() == 2"},
            {"rule": "has(self)"},
        ]
    }));
    let d: Vec<String> = compile_schema_rules(&s, "s")
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert!(
        d[0].contains("ERROR: <input>:1:16: invalid matches argument"),
        "{}",
        d[0]
    );
    assert!(
        d[1].contains("expected type 'int' but found 'string'"),
        "{}",
        d[1]
    );
    assert!(
        d[2].contains("ERROR: <input>:1:4: invalid argument to has() macro"),
        "{}",
        d[2]
    );
}
