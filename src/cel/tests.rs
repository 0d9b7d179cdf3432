use serde_json::{json, Value};

use super::{compile_schema_rules, validate};
use crate::api::validation::{ErrorType, FieldError};

/// A CR schema with `spec` as given.
fn crd(spec: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
        }
    })
}

fn cr(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}, "spec": spec})
}

fn lines(errs: &[FieldError]) -> Vec<String> {
    errs.iter()
        .map(|e| format!("{}: {}", e.field, e.message()))
        .collect()
}

fn replicas_schema(rule: Value) -> Value {
    crd(json!({
        "type": "object",
        "x-kubernetes-validations": [rule],
        "properties": {
            "minReplicas": {"type": "integer"},
            "replicas": {"type": "integer"},
        }
    }))
}

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
fn rules_on_list_items_report_the_index() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "items": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.startsWith('a')", "message": "must start with a"}]
                }
            }
        }
    }));
    let errs = validate(&s, &cr(json!({"list": ["ab", "b", "ac", "c"]})), None);
    assert_eq!(
        lines(&errs),
        vec![
            r#"spec.list[1]: Invalid value: "string": must start with a"#,
            r#"spec.list[3]: Invalid value: "string": must start with a"#,
        ]
    );
}

#[test]
fn rules_on_map_values_report_the_key() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "map": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"priority": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.priority < 10"}]
                }
            }
        }
    }));
    let errs = validate(
        &s,
        &cr(json!({"map": {"good": {"priority": 1}, "bad": {"priority": 11}}})),
        None,
    );
    assert_eq!(
        lines(&errs),
        vec![r#"spec.map[bad]: Invalid value: "object": failed rule: self.priority < 10"#]
    );
}

#[test]
fn map_rule_sees_keys_and_values() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-kubernetes-validations": [
                    {"rule": "'app' in self && self['app'] != ''"},
                    {"rule": "self.all(k, k.size() < 10)"}
                ]
            }
        }
    }));
    assert!(compile_schema_rules(&s, "x").is_empty());
    assert!(validate(&s, &cr(json!({"labels": {"app": "web"}})), None).is_empty());
    let errs = validate(
        &s,
        &cr(json!({"labels": {"averyveryverylongkey": "v"}})),
        None,
    );
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].field, "spec.labels");
}

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
fn map_list_items_correlate_by_key() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "port is immutable"}]
                }
            }
        }
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let old = cr(json!({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}));
    let new = cr(
        json!({"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 3}, {"name": "c", "port": 9}]}),
    );
    assert_eq!(
        lines(&validate(&s, &new, Some(&old))),
        vec![r#"spec.ports[1]: Invalid value: "object": port is immutable"#]
    );
}

#[test]
fn has_and_optional_fields() {
    let s = crd(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "has(self.a) == has(self.b)", "message": "a and b go together"},
            {"rule": "!has(self.a) || self.a != ''"},
            {"rule": "self.?b.orValue('x') != ''"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let errs = validate(&s, &cr(json!({})), None);
    assert!(errs.is_empty(), "{:#?}", lines(&errs));
    assert!(validate(&s, &cr(json!({"a": "1", "b": "2"})), None).is_empty());
    // Null-valued fields are absent.
    assert!(validate(&s, &cr(json!({"a": null, "b": null})), None).is_empty());
    let errs = validate(&s, &cr(json!({"a": "1"})), None);
    assert_eq!(
        lines(&errs),
        vec![r#"spec: Invalid value: "object": a and b go together"#]
    );
}

#[test]
fn string_functions() {
    let s = crd(json!({
        "type": "object",
        "properties": {"s": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.s.startsWith('ab') && self.s.endsWith('yz') && self.s.contains('mm')"},
            {"rule": "self.s.matches('^[a-z]+$')"},
            {"rule": "self.s.lowerAscii() == self.s && self.s.upperAscii() == 'ABMMYZ'"},
            {"rule": "self.s.split('m').size() == 3 && ['a', 'b'].join('-') == 'a-b'"},
            {"rule": "self.s.indexOf('mm') == 2 && self.s.substring(0, 2) == 'ab'"},
            {"rule": "self.s.replace('mm', '') == 'abyz' && size(self.s) == 6"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    assert!(validate(&s, &cr(json!({"s": "abmmyz"})), None).is_empty());
    let errs = validate(&s, &cr(json!({"s": "ABMMYZ"})), None);
    assert_eq!(errs.len(), 6, "{:#?}", lines(&errs));
    let errs = validate(&s, &cr(json!({"s": "abmmyzq"})), None);
    assert_eq!(errs.len(), 3, "{:#?}", lines(&errs));
}

#[test]
fn list_functions_and_macros() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "integer"}},
            "items": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}
            }},
        },
        "x-kubernetes-validations": [
            {"rule": "self.xs.all(x, x >= 0)", "message": "all"},
            {"rule": "self.xs.exists(x, x == 3)", "message": "exists"},
            {"rule": "self.xs.exists_one(x, x == 1)", "message": "exists_one"},
            {"rule": "self.xs.isSorted() && self.xs.sum() == 6 && self.xs.min() == 1 && self.xs.max() == 3", "message": "lists"},
            {"rule": "self.xs.map(x, x * 2) == [2, 4, 6] && self.xs.filter(x, x > 1).size() == 2", "message": "map/filter"},
            {"rule": "self.xs.indexOf(2) == 1", "message": "indexOf"},
            {"rule": "size(self.items.filter(i, i.name == 'primary')) == 1", "message": "one primary"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let ok =
        cr(json!({"xs": [1, 2, 3], "items": [{"name": "primary", "v": 1}, {"name": "other"}]}));
    assert!(
        validate(&s, &ok, None).is_empty(),
        "{:#?}",
        lines(&validate(&s, &ok, None))
    );
    let bad = cr(json!({"xs": [3, -1, 1, 1], "items": []}));
    let details: Vec<String> = validate(&s, &bad, None)
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(
        details,
        vec![
            "all",
            "exists_one",
            "lists",
            "map/filter",
            "indexOf",
            "one primary"
        ]
    );
}

#[test]
fn int_or_string() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "port": {
                "x-kubernetes-int-or-string": true,
                "x-kubernetes-validations": [
                    {"rule": "type(self) == string ? self.endsWith('%') : self < 1000", "message": "bad port"}
                ]
            }
        }
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    assert!(validate(&s, &cr(json!({"port": 80})), None).is_empty());
    assert!(validate(&s, &cr(json!({"port": "50%"})), None).is_empty());
    assert_eq!(
        lines(&validate(&s, &cr(json!({"port": 5000})), None)),
        vec![r#"spec.port: Invalid value: "": bad port"#]
    );
    assert_eq!(validate(&s, &cr(json!({"port": "http"})), None).len(), 1);
}

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
fn formats_and_quantities() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "created": {"type": "string", "format": "date-time"},
            "expires": {"type": "string", "format": "date-time"},
            "ttl": {"type": "string", "format": "duration"},
            "mem": {"type": "string"},
        },
        "x-kubernetes-validations": [
            {"rule": "self.created + self.ttl < self.expires", "message": "expired"},
            {"rule": "quantity(self.mem).isLessThan(quantity('1Gi'))", "message": "too much memory"},
            {"rule": "self.ttl < duration('2h')", "message": "ttl"},
        ]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    let ok = cr(json!({
        "created": "2024-01-01T00:00:00Z", "expires": "2024-01-01T02:00:00Z",
        "ttl": "1h", "mem": "512Mi"
    }));
    assert!(
        validate(&s, &ok, None).is_empty(),
        "{:#?}",
        lines(&validate(&s, &ok, None))
    );
    let bad = cr(json!({
        "created": "2024-01-01T00:00:00Z", "expires": "2024-01-01T00:30:00Z",
        "ttl": "1h30m", "mem": "2Gi"
    }));
    let details: Vec<String> = validate(&s, &bad, None)
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(details, vec!["expired", "too much memory"]);
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
fn field_path_normalization() {
    let schema = json!({
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
        }
    });
    assert_eq!(
        super::valid_field_path(".m['k'].x", &schema).as_deref(),
        Ok("m[k].x")
    );
    assert_eq!(
        super::valid_field_path(".a['b.c']", &schema).as_deref(),
        Ok("a.b.c")
    );
    assert!(super::valid_field_path(".nope", &schema).is_err());
    assert!(super::valid_field_path("m", &schema).is_err());
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
fn errors_type_is_invalid_by_default() {
    let s = replicas_schema(json!({"rule": "self.replicas > 0"}));
    let errs = validate(&s, &cr(json!({"replicas": 0})), None);
    assert_eq!(errs[0].kind, ErrorType::Invalid);
    assert_eq!(errs[0].value, Some(json!("object")));
}

#[test]
fn numbers_compare_across_int_and_double() {
    let s = crd(json!({
        "type": "object",
        "properties": {"ratio": {"type": "number"}},
        "x-kubernetes-validations": [{"rule": "self.ratio > 0 && self.ratio < 1", "message": "ratio"}]
    }));
    assert!(compile_schema_rules(&s, "s").is_empty());
    assert!(validate(&s, &cr(json!({"ratio": 0.5})), None).is_empty());
    // Whole numbers arrive as JSON integers and are still doubles.
    assert_eq!(validate(&s, &cr(json!({"ratio": 2})), None).len(), 1);
    // Equality does not cross types at compile time.
    let s = crd(json!({
        "type": "object",
        "properties": {"ratio": {"type": "number"}},
        "x-kubernetes-validations": [{"rule": "self.ratio == 1"}]
    }));
    let errs = compile_schema_rules(&s, "s");
    assert!(
        errs[0]
            .detail
            .contains("found no matching overload for '_==_' applied to '(double, int)'"),
        "{}",
        errs[0].detail
    );
}

#[test]
fn nested_paths_through_lists_and_maps() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "groups": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "limits": {
                            "type": "object",
                            "additionalProperties": {
                                "type": "integer",
                                "x-kubernetes-validations": [{"rule": "self >= 0", "message": "negative"}]
                            }
                        }
                    }
                }
            }
        }
    }));
    let errs = validate(
        &s,
        &cr(json!({"groups": [{"limits": {"cpu": 1}}, {"limits": {"cpu": 2, "mem": -1}}]})),
        None,
    );
    assert_eq!(
        lines(&errs),
        vec![r#"spec.groups[1].limits[mem]: Invalid value: "integer": negative"#]
    );
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

#[test]
fn two_variable_comprehensions_and_sort_by() {
    let s = crd(json!({
        "type": "object",
        "properties": {
            "l": {"type": "array", "items": {"type": "string"}},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "x-kubernetes-validations": [
            {"rule": "self.l.all(i, v, i < 3 && v != '')", "message": "all"},
            {"rule": "self.m.exists(k, v, k == 'a' && v == 1)", "message": "exists"},
            {"rule": "self.l.transformList(i, v, i) == [0, 1]", "message": "transformList"},
            {"rule": "self.l.sortBy(v, v) == ['a', 'b']", "message": "sortBy"},
            {"rule": "oldSelf.optMap(o, o.l.size()).orValue(0) <= 2", "optionalOldSelf": true, "message": "optMap"},
        ]
    }));
    assert!(
        compile_schema_rules(&s, "s").is_empty(),
        "{:#?}",
        lines(&compile_schema_rules(&s, "s"))
    );
    let ok = cr(json!({"l": ["b", "a"], "m": {"a": 1, "b": 2}}));
    assert!(
        validate(&s, &ok, None).is_empty(),
        "{:#?}",
        lines(&validate(&s, &ok, None))
    );
    let bad = cr(json!({"l": ["b", "", "c"], "m": {"a": 2}}));
    let details: Vec<String> = validate(&s, &bad, Some(&bad))
        .into_iter()
        .map(|e| e.detail)
        .collect();
    // On an unchanged object only the transition rule (optMap) reports.
    assert_eq!(details, vec!["optMap"]);
    let details: Vec<String> = validate(&s, &bad, None)
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(details, vec!["all", "exists", "transformList", "sortBy"]);
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
