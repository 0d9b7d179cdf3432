//! Tests of the Go rendering of values and of the OpenAPI form.

use super::*;

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
