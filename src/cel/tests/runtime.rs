//! Tests of evaluation failures: runtime errors and runaway rules.

use super::*;

#[test]
fn runtime_errors_are_reported() {
    let s = crd(json!({
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "x-kubernetes-validations": [
            {"rule": "self.m['missing'] > 0"},
            {"rule": "self.m['a'] / 0 == 1", "message": "div"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let errs = validate(&s, &cr(json!({"m": {"a": 1}})), None);
    assert_eq!(
        lines(&errs),
        vec![
            r#"spec: Invalid value: "object": no such key: missing evaluating rule: self.m['missing'] > 0"#,
            r#"spec: Invalid value: "object": division by zero evaluating rule: div"#,
        ]
    );
}

#[test]
fn runaway_rules_are_stopped() {
    let s = crd(json!({
        "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
        "x-kubernetes-validations": [
            {"rule": "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"},
            {"rule": "false", "message": "never reached"},
        ]
    }));
    let l: Vec<i64> = (0..200).collect();
    let errs = validate(&s, &cr(json!({"l": l})), None);
    assert_eq!(
        lines(&errs),
        vec!["spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"]
    );
}
