use super::*;

fn errors(errs: &[FieldError]) -> Vec<(String, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn policy() -> Value {
    json!({
        "metadata": {"name": "max-replicas"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}],
        },
    })
}

#[test]
fn policy_defaults() {
    let mut p = policy();
    ValidatingAdmissionPolicyStrategy.default(&mut p);
    assert_eq!(p["spec"]["failurePolicy"], "Fail");
    let mc = &p["spec"]["matchConstraints"];
    assert_eq!(mc["matchPolicy"], "Equivalent");
    assert_eq!(mc["namespaceSelector"], json!({}));
    assert_eq!(mc["objectSelector"], json!({}));
    assert_eq!(mc["resourceRules"][0]["scope"], "*");
    assert!(ValidatingAdmissionPolicyStrategy.validate(&p).is_empty());
    // A spec-less policy still gets its failurePolicy; no matchConstraints appear.
    let mut bare = json!({"metadata": {"name": "p"}});
    ValidatingAdmissionPolicyStrategy.default(&mut bare);
    assert_eq!(bare["spec"], json!({"failurePolicy": "Fail"}));
}

#[test]
fn empty_policy() {
    let mut p = json!({"metadata": {"name": "p"}, "spec": {}});
    ValidatingAdmissionPolicyStrategy.default(&mut p);
    let got = errors(&ValidatingAdmissionPolicyStrategy.validate(&p));
    let why = "Required value: validations or auditAnnotations must contain at least one item";
    assert_eq!(
        got,
        pairs(&[
            ("spec.matchConstraints", "Required value"),
            ("spec.validations", why),
            ("spec.auditAnnotations", why),
        ])
    );
}

#[test]
fn policy_fields() {
    let mut p = policy();
    p["spec"]["failurePolicy"] = json!("Sometimes");
    p["spec"]["paramKind"] = json!({"apiVersion": "a/b/c", "kind": "Config_Map"});
    p["spec"]["matchConstraints"]["resourceRules"] = json!([]);
    p["spec"]["variables"] = json!([{"name": "1x", "expression": ""}]);
    p["spec"]["validations"] = json!([
        {"expression": " ", "message": "two\nlines", "reason": "Conflict", "messageExpression": "  "},
        {"expression": "'yes'", "messageExpression": "object.x", "message": "  "},
    ]);
    ValidatingAdmissionPolicyStrategy.default(&mut p);
    let got = errors(&ValidatingAdmissionPolicyStrategy.validate(&p));
    let dns1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    let kind = format!(
        "Invalid value: \"Config_Map\": may have mixed case, but should otherwise match: {dns1035}"
    );
    assert_eq!(
        got,
        pairs(&[
            ("spec.failurePolicy", "Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\""),
            ("spec.paramKind.apiVersion", "Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c"),
            ("spec.paramKind.kind", &kind),
            ("spec.matchConstraints.resourceRules", "Required value"),
            ("spec.variables[0].name", "Invalid value: \"1x\": name is not a valid CEL identifier"),
            ("spec.variables[0].expression", "Required value: expression is not specified"),
            ("spec.validations[0].expression", "Required value: expression is not specified"),
            ("spec.validations[0].messageExpression", "Invalid value: \"  \": must be non-empty if specified"),
            ("spec.validations[0].message", "Invalid value: \"two\\nlines\": message must not contain line breaks"),
            ("spec.validations[0].reason", "Unsupported value: \"Conflict\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\""),
            ("spec.validations[1].expression", "Invalid value: \"'yes'\": must evaluate to bool but got string"),
            ("spec.validations[1].messageExpression", "Invalid value: \"object.x\": must evaluate to string but got dyn"),
            ("spec.validations[1].message", "Invalid value: \"  \": message must be non-empty if specified"),
        ])
    );
}

#[test]
fn param_kinds() {
    let check = |pk: Value| {
        let mut errs = Vec::new();
        param_kind(&pk, "spec.paramKind", &mut errs);
        errors(&errs)
    };
    assert!(check(json!({"apiVersion": "v1", "kind": "ConfigMap"})).is_empty());
    assert!(check(json!({"apiVersion": "example.com/v1alpha1", "kind": "Rules"})).is_empty());
    assert_eq!(
        check(json!({})),
        pairs(&[
            ("spec.paramKind.apiVersion", "Required value"),
            ("spec.paramKind.kind", "Required value"),
        ])
    );
    assert_eq!(
        check(json!({"apiVersion": "example.com/", "kind": "X"})),
        pairs(&[(
            "spec.paramKind.apiVersion",
            "Invalid value: \"example.com/\": version must be specified"
        )])
    );
}

#[test]
fn params_are_declared_only_with_a_param_kind() {
    let mut p = policy();
    p["spec"]["validations"] = json!([{"expression": "object.spec.replicas <= params.max"}]);
    ValidatingAdmissionPolicyStrategy.default(&mut p);
    let got = errors(&ValidatingAdmissionPolicyStrategy.validate(&p));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "spec.validations[0].expression");
    assert_eq!(
        got[0].1,
        "Invalid value: \"object.spec.replicas <= params.max\": compilation failed: ERROR: <input>:1:25: undeclared reference to 'params' (in container '')\n | object.spec.replicas <= params.max\n | ........................^"
    );
    p["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert!(ValidatingAdmissionPolicyStrategy.validate(&p).is_empty());
}

#[test]
fn audit_annotations() {
    let mut p = policy();
    p["spec"]["validations"] = json!([]);
    p["spec"]["auditAnnotations"] = json!([
        {"key": "replicas", "valueExpression": "string(object.spec.replicas)"},
        {"key": "replicas", "valueExpression": "1"},
        {"key": "bad key", "valueExpression": ""},
    ]);
    ValidatingAdmissionPolicyStrategy.default(&mut p);
    let got = errors(&ValidatingAdmissionPolicyStrategy.validate(&p));
    assert_eq!(
        got[0],
        (
            "spec.auditAnnotations[1].valueExpression".to_string(),
            "Invalid value: \"1\": must evaluate to one of [string null_type] but got int"
                .to_string()
        )
    );
    assert_eq!(
        got[1],
        (
            "spec.auditAnnotations[1].key".to_string(),
            "Duplicate value: \"replicas\"".to_string()
        )
    );
    assert_eq!(got[2].0, "spec.auditAnnotations[2].key");
    assert!(got[2]
        .1
        .starts_with("Invalid value: \"max-replicas/bad key\": name part must consist"));
    assert_eq!(
        got[3],
        (
            "spec.auditAnnotations[2].valueExpression".to_string(),
            "Required value: valueExpression is not specified".to_string()
        )
    );
    assert_eq!(got.len(), 4);
}

#[test]
fn policy_updates() {
    let mut old = policy();
    old["spec"]["matchConditions"] = json!([{"name": "n", "expression": "params.x"}]);
    ValidatingAdmissionPolicyStrategy.default(&mut old);
    // Stored match conditions that no longer compile do not block other changes.
    let mut new = old.clone();
    new["spec"]["validations"][0]["expression"] = json!("object.spec.replicas <= 3");
    assert!(ValidatingAdmissionPolicyStrategy
        .validate_update(&new, &old)
        .is_empty());
    assert!(ValidatingAdmissionPolicyStrategy.generation_changed(&new, &old));
    new["status"] =
        json!({"typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]}});
    let got = errors(&ValidatingAdmissionPolicyStrategy.validate_update(&new, &old));
    assert_eq!(
        got,
        pairs(&[
            (
                "status.typeChecking.expressionWarnings[0].warning",
                "Required value"
            ),
            (
                "status.typeChecking.expressionWarnings[0].fieldRef",
                "Required value"
            ),
        ])
    );
}

#[test]
fn columns() {
    let mut p = policy();
    assert_eq!((POLICY_COLUMNS[1].cell)(&p), json!(1));
    assert_eq!((POLICY_COLUMNS[2].cell)(&p), json!("<unset>"));
    p["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert_eq!((POLICY_COLUMNS[2].cell)(&p), json!("v1/ConfigMap"));
    let names: Vec<&str> = POLICY_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["Name", "Validations", "ParamKind", "Age"]);
}
