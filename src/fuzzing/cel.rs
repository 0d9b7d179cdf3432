//! Target `cel_expression`: a CEL rule compiled into a CRD schema and
//! evaluated, and as a ValidatingAdmissionPolicy expression.

use serde_json::json;

use super::env::env;
use super::widget::widget_schema;

/// A CEL expression (`rule`, then optionally NUL and a `messageExpression`)
/// compiled as an `x-kubernetes-validations` rule of a CRD schema and,
/// when it compiles, evaluated against a custom resource (create and
/// update); and evaluated as a ValidatingAdmissionPolicy expression.
pub fn cel_expression(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (rule, message_expression) = text.split_once('\0').unwrap_or((text, ""));
    let mut r = json!({"rule": rule});
    if !message_expression.is_empty() {
        r["messageExpression"] = json!(message_expression);
    }
    let mut schema = widget_schema();
    schema["properties"]["spec"]["x-kubernetes-validations"] = json!([r]);
    let e = env();
    let widget = &e.bases[4].object;
    let errs = crate::cel::compile_schema_rules(&schema, "spec.versions[0].schema.openAPIV3Schema");
    if errs.is_empty() {
        let mut changed = widget.clone();
        changed["spec"]["replicas"] = json!(7);
        changed["spec"]["tags"] = json!(["a", "c"]);
        changed["spec"]["ports"] =
            json!([{"name": "http", "port": 8080}, {"name": "https", "port": 443}]);
        let _ = crate::cel::validate(&schema, widget, None);
        let _ = crate::cel::validate(&schema, &changed, Some(widget));
    }
    let request = json!({
        "uid": "u", "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "operation": "UPDATE", "name": "w1", "namespace": "default",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "dryRun": false
    });
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"env": "prod"}}});
    let mut act = crate::cel::admission::Activation::new(&[
        ("object", Some(widget)),
        ("oldObject", Some(widget)),
        ("request", Some(&request)),
        ("params", None),
        ("namespaceObject", Some(&namespace)),
    ]);
    act.define_variable("v", rule);
    let _ = act.eval(rule);
    if !message_expression.is_empty() {
        let _ = act.eval(message_expression);
    }
}
