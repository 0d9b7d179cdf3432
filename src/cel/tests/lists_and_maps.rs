//! Tests of rules on list items, map values and keys, map-list items,
//! and the paths they report.

use super::*;

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
