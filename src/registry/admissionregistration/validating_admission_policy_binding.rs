//! ValidatingAdmissionPolicyBinding (upstream's
//! pkg/registry/admissionregistration/validatingadmissionpolicybinding,
//! SetDefaults_MatchResources and validateValidatingAdmissionPolicyBinding).

use serde_json::{json, Value};

use super::common::{
    default_spec_match_resources, go_json, match_resources, one_of, set_generation_one,
};
use crate::registry::helpers::{invalid_raw, items, s, validate_label_selector};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct ValidatingAdmissionPolicyBindingStrategy;

const VALIDATION_ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];

static BINDING_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "PolicyName",
            kind: "string",
            format: "",
            description:
                "PolicyName indicates the policy definition which the policy binding binded to",
            priority: 0,
            cell: |o| json!(s(&o["spec"], "policyName")),
        },
        Column {
            name: "ParamRef",
            kind: "string",
            format: "",
            description: "ParamRef indicates the param resource which sets the configration param",
            priority: 0,
            cell: param_ref_cell,
        },
        age_column(),
    ]
});

fn param_ref_cell(o: &Value) -> Value {
    let pr = &o["spec"]["paramRef"];
    if !pr.is_object() {
        return json!("<unset>");
    }
    let name = s(pr, "name");
    let ns = s(pr, "namespace");
    if !name.is_empty() {
        // Without a namespace the param may be cluster-scoped or in any namespace.
        let ns = if ns.is_empty() { "*" } else { ns };
        return json!(format!("{ns}/{name}"));
    }
    if pr["selector"].is_object() {
        return json!(selector_go_string(&pr["selector"]));
    }
    json!("<unset>")
}

/// The generated `(*metav1.LabelSelector).String()` the printer shows.
fn selector_go_string(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = sel["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: String = items(&sel["matchExpressions"])
        .iter()
        .map(|e| {
            let values: Vec<String> = items(&e["values"])
                .iter()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                s(e, "key"),
                s(e, "operator"),
                values.join(" ")
            )
        })
        .collect();
    format!("&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")
}

/// upstream's validateParamRef.
fn param_ref(pr: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if pr.is_null() {
        return;
    }
    let name = s(pr, "name");
    let has_selector = !pr["selector"].is_null();
    if !name.is_empty() {
        for m in validation::path_segment_name(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), json!(name), m));
        }
        if has_selector {
            errs.push(FieldError::forbidden(
                format!("{path}.name"),
                "name and selector are mutually exclusive",
            ));
        }
    }
    if has_selector {
        errs.extend(validate_label_selector(
            &pr["selector"],
            &format!("{path}.selector"),
        ));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(
                format!("{path}.selector"),
                "name and selector are mutually exclusive",
            ));
        }
    }
    if name.is_empty() && !has_selector {
        errs.push(FieldError::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    match pr.get("parameterNotFoundAction").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required(
            format!("{path}.parameterNotFoundAction"),
            "",
        )),
        Some(a) => one_of(
            &format!("{path}.parameterNotFoundAction"),
            a,
            &["Deny", "Allow"],
            errs,
        ),
    }
}

/// upstream's validateValidationActions.
fn validation_actions(list: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let actions: Vec<String> = items(list)
        .iter()
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        one_of(&at, a, VALIDATION_ACTIONS, errs);
        if seen.contains(&a.as_str()) {
            errs.push(FieldError::duplicate(at, json!(a)));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(invalid_raw(
            path,
            &go_json(list),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one validation action is required",
        ));
    }
}

fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    let policy = s(spec, "policyName");
    if policy.is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    } else {
        for m in validation::dns1123_subdomain(policy) {
            errs.push(FieldError::invalid("spec.policyName", json!(policy), m));
        }
    }
    param_ref(&spec["paramRef"], "spec.paramRef", &mut errs);
    // "matchResouces" is upstream's spelling of the path.
    match_resources(&spec["matchResources"], "spec.matchResouces", &mut errs);
    validation_actions(
        &spec["validationActions"],
        "spec.validationActions",
        &mut errs,
    );
    errs
}

impl Strategy for ValidatingAdmissionPolicyBindingStrategy {
    fn default(&self, obj: &mut Value) {
        default_spec_match_resources(obj, "matchResources");
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation_one(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_binding(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&BINDING_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
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

    fn binding() -> Value {
        json!({
            "metadata": {"name": "max-replicas-binding"},
            "spec": {"policyName": "max-replicas", "validationActions": ["Deny"]},
        })
    }

    #[test]
    fn binding_defaults_and_validation() {
        let mut b = binding();
        ValidatingAdmissionPolicyBindingStrategy.default(&mut b);
        assert!(b["spec"].get("matchResources").is_none());
        let mut created = json!({"metadata": {"name": "b"}});
        ValidatingAdmissionPolicyBindingStrategy.prepare_for_create(&mut created);
        assert_eq!(created["metadata"]["generation"], 1);
        assert!(ValidatingAdmissionPolicyBindingStrategy
            .validate(&b)
            .is_empty());
        b["spec"]["matchResources"] =
            json!({"namespaceSelector": {"matchLabels": {"env": "test"}}});
        ValidatingAdmissionPolicyBindingStrategy.default(&mut b);
        assert_eq!(
            b["spec"]["matchResources"],
            json!({"namespaceSelector": {"matchLabels": {"env": "test"}}, "objectSelector": {}, "matchPolicy": "Equivalent"})
        );
        assert!(ValidatingAdmissionPolicyBindingStrategy
            .validate(&b)
            .is_empty());

        let bad = json!({"metadata": {"name": "b"}, "spec": {
            "policyName": "",
            "paramRef": {"name": "a/b", "selector": {}, "parameterNotFoundAction": "Ignore"},
            "matchResources": {"matchPolicy": "Exact", "namespaceSelector": {}},
            "validationActions": ["Deny", "Warn", "Deny", "Block"],
        }});
        let got = errors(&ValidatingAdmissionPolicyBindingStrategy.validate(&bad));
        assert_eq!(
            got,
            pairs(&[
                ("spec.policyName", "Required value"),
                ("spec.paramRef.name", "Invalid value: \"a/b\": may not contain '/'"),
                ("spec.paramRef.name", "Forbidden: name and selector are mutually exclusive"),
                ("spec.paramRef.selector", "Forbidden: name and selector are mutually exclusive"),
                ("spec.paramRef.parameterNotFoundAction", "Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\""),
                ("spec.matchResouces.objectSelector", "Required value"),
                ("spec.validationActions[2]", "Duplicate value: \"Deny\""),
                ("spec.validationActions[3]", "Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\""),
                ("spec.validationActions", "Invalid value: [\"Deny\",\"Warn\",\"Deny\",\"Block\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"),
            ])
        );
        let empty = json!({"spec": {"paramRef": {}}});
        let got = errors(&ValidatingAdmissionPolicyBindingStrategy.validate(&empty));
        assert_eq!(
            got,
            pairs(&[
                ("spec.policyName", "Required value"),
                (
                    "spec.paramRef",
                    "Required value: one of name or selector must be specified"
                ),
                ("spec.paramRef.parameterNotFoundAction", "Required value"),
                (
                    "spec.validationActions",
                    "Required value: at least one validation action is required"
                ),
            ])
        );
    }

    #[test]
    fn columns() {
        let mut b = binding();
        assert_eq!((BINDING_COLUMNS[1].cell)(&b), json!("max-replicas"));
        assert_eq!((BINDING_COLUMNS[2].cell)(&b), json!("<unset>"));
        b["spec"]["paramRef"] = json!({"name": "limits"});
        assert_eq!((BINDING_COLUMNS[2].cell)(&b), json!("*/limits"));
        b["spec"]["paramRef"]["namespace"] = json!("default");
        assert_eq!((BINDING_COLUMNS[2].cell)(&b), json!("default/limits"));
        b["spec"]["paramRef"] = json!({"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}});
        assert_eq!(
            (BINDING_COLUMNS[2].cell)(&b),
            json!("&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}")
        );
        let names: Vec<&str> = BINDING_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "PolicyName", "ParamRef", "Age"]);
    }
}
