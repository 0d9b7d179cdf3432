//! Tests of the CEL language and libraries in rules: has and optionals,
//! strings, lists and macros, int-or-string, formats and quantities,
//! numbers, two-variable comprehensions.

use super::*;

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
