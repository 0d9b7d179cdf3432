//! ValidatingAdmissionPolicy (upstream's
//! pkg/registry/admissionregistration/validatingadmissionpolicy,
//! SetDefaults_ValidatingAdmissionPolicySpec and
//! validateValidatingAdmissionPolicy).

use serde_json::{json, Value};

use super::cel_check::{self, Env, Ret};
use super::common::{
    default_spec_match_resources, invalid_json, match_conditions, match_resources, one_of,
    qualified_name, set_generation_one, spec_mut, FAILURE_POLICIES,
};
use crate::registry::helpers::{items, s};
use crate::registry::meta;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct ValidatingAdmissionPolicyStrategy;

const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const MAX_AUDIT_ANNOTATIONS: usize = 20;
const MAX_AUDIT_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;

static POLICY_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Validations",
            kind: "integer",
            format: "",
            description:
                "Validations indicates the number of validation rules defined in this configuration",
            priority: 0,
            cell: |o| json!(items(&o["spec"]["validations"]).len()),
        },
        Column {
            name: "ParamKind",
            kind: "string",
            format: "",
            description:
                "ParamKind specifies the kind of resources used to parameterize this policy",
            priority: 0,
            cell: param_kind_cell,
        },
        age_column(),
    ]
});

fn param_kind_cell(o: &Value) -> Value {
    let pk = &o["spec"]["paramKind"];
    if pk.is_object() {
        json!(format!("{}/{}", s(pk, "apiVersion"), s(pk, "kind")))
    } else {
        json!("<unset>")
    }
}

/// Options of a policy's validation (upstream's validationOptions).
struct PolicyOptions {
    ignore_match_conditions: bool,
}

/// upstream's validateParamKind.
fn param_kind(pk: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let api_version = s(pk, "apiVersion");
    let at = format!("{path}.apiVersion");
    if api_version.is_empty() {
        errs.push(FieldError::required(&at, ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(
            &at,
            json!(api_version),
            format!("unexpected GroupVersion string: {api_version}"),
        ));
    } else {
        let (group, version) = match api_version {
            "/" => ("", ""),
            v => v.split_once('/').unwrap_or(("", v)),
        };
        if !group.is_empty() {
            let m = validation::dns1123_subdomain(group);
            if !m.is_empty() {
                errs.push(FieldError::invalid(&at, json!(group), m.join(",")));
            }
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &at,
                json!(api_version),
                "version must be specified",
            ));
        } else {
            let m = validation::dns1035_label(version);
            if !m.is_empty() {
                errs.push(FieldError::invalid(&at, json!(version), m.join(",")));
            }
        }
    }
    let kind = s(pk, "kind");
    if kind.is_empty() {
        errs.push(FieldError::required(format!("{path}.kind"), ""));
    } else {
        let m = validation::dns1035_label(&kind.to_lowercase());
        if !m.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.kind"),
                json!(kind),
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    m.join(",")
                ),
            ));
        }
    }
}

/// upstream's isCELIdentifier.
fn is_cel_identifier(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    let b = name.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && !RESERVED.contains(&name)
}

fn compile_error(
    path: String,
    expr: &str,
    shown: &str,
    env: Env,
    ret: Ret,
    errs: &mut Vec<FieldError>,
) {
    if let Some(d) = cel_check::compile(expr, env, ret) {
        errs.push(FieldError::invalid(path, json!(shown), d));
    }
}

/// upstream's validateValidation.
fn validation_rule(v: &Value, path: &str, env: Env, errs: &mut Vec<FieldError>) {
    let expr = s(v, "expression");
    if expr.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    } else {
        compile_error(
            format!("{path}.expression"),
            expr,
            expr,
            env,
            Ret::Bool,
            errs,
        );
    }
    let message_expr = s(v, "messageExpression");
    if !message_expr.is_empty() && message_expr.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.messageExpression"),
            json!(message_expr),
            "must be non-empty if specified",
        ));
    } else if !message_expr.trim().is_empty() {
        let message_env = Env {
            authorizer: false,
            ..env
        };
        compile_error(
            format!("{path}.messageExpression"),
            message_expr,
            message_expr,
            message_env,
            Ret::String,
            errs,
        );
    }
    let message = s(v, "message");
    if !message.is_empty() && message.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            json!(message),
            "message must be non-empty if specified",
        ));
    } else if message.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            json!(message),
            "message must not contain line breaks",
        ));
    }
    if let Some(r) = v.get("reason").and_then(Value::as_str) {
        one_of(&format!("{path}.reason"), r, REASONS, errs);
    }
}

/// upstream's validateVariable.
fn variable(v: &Value, path: &str, env: Env, errs: &mut Vec<FieldError>) {
    let name = s(v, "name");
    if name.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "name is not specified",
        ));
    } else if !is_cel_identifier(name) {
        errs.push(FieldError::invalid(
            format!("{path}.name"),
            json!(name),
            "name is not a valid CEL identifier",
        ));
    }
    let expr = s(v, "expression");
    if expr.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    } else {
        compile_error(
            format!("{path}.expression"),
            expr,
            expr,
            env,
            Ret::Any,
            errs,
        );
    }
}

/// upstream's validateAuditAnnotation.
fn audit_annotation(a: &Value, policy: &str, path: &str, env: Env, errs: &mut Vec<FieldError>) {
    let key = s(a, "key");
    if policy.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.key"),
            json!(key),
            "requires metadata.name be non-empty",
        ));
    } else {
        qualified_name(&format!("{path}.key"), &format!("{policy}/{key}"), errs);
    }
    let value_expr = s(a, "valueExpression");
    let trimmed = value_expr.trim();
    let at = format!("{path}.valueExpression");
    if trimmed.is_empty() {
        errs.push(FieldError::required(at, "valueExpression is not specified"));
    } else if trimmed.len() > MAX_AUDIT_VALUE_EXPRESSION_BYTES {
        errs.push(FieldError::required(
            at,
            format!("must not exceed {MAX_AUDIT_VALUE_EXPRESSION_BYTES} bytes in length"),
        ));
    } else {
        compile_error(at, trimmed, value_expr, env, Ret::StringOrNull, errs);
    }
}

fn validate_policy(obj: &Value, opts: &PolicyOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    match spec.get("failurePolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required("spec.failurePolicy", "")),
        Some(p) => one_of("spec.failurePolicy", p, FAILURE_POLICIES, &mut errs),
    }
    let has_params = spec["paramKind"].is_object();
    if has_params {
        param_kind(&spec["paramKind"], "spec.paramKind", &mut errs);
    }
    let mc = &spec["matchConstraints"];
    if mc.is_null() {
        errs.push(FieldError::required("spec.matchConstraints", ""));
    } else {
        match_resources(mc, "spec.matchConstraints", &mut errs);
        // The resource rules give the policy's expressions their types.
        if items(&mc["resourceRules"]).is_empty() {
            errs.push(FieldError::required(
                "spec.matchConstraints.resourceRules",
                "",
            ));
        }
    }
    if !opts.ignore_match_conditions {
        let env = Env {
            params: has_params,
            authorizer: true,
            variables: false,
        };
        match_conditions(
            &spec["matchConditions"],
            env,
            "spec.matchConditions",
            &mut errs,
        );
    }
    let env = Env {
        params: has_params,
        authorizer: true,
        variables: !items(&spec["variables"]).is_empty(),
    };
    for (i, v) in items(&spec["variables"]).iter().enumerate() {
        variable(v, &format!("spec.variables[{i}]"), env, &mut errs);
    }
    let validations = items(&spec["validations"]);
    let annotations = items(&spec["auditAnnotations"]);
    if validations.is_empty() && annotations.is_empty() {
        let why = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required("spec.validations", why));
        errs.push(FieldError::required("spec.auditAnnotations", why));
        return errs;
    }
    for (i, v) in validations.iter().enumerate() {
        validation_rule(v, &format!("spec.validations[{i}]"), env, &mut errs);
    }
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(invalid_json(
            "spec.auditAnnotations",
            &spec["auditAnnotations"],
            &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let name = meta::name(obj);
    let mut keys: Vec<&str> = Vec::new();
    for (i, a) in annotations.iter().enumerate() {
        let path = format!("spec.auditAnnotations[{i}]");
        audit_annotation(a, name, &path, env, &mut errs);
        let key = s(a, "key");
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(format!("{path}.key"), json!(key)));
        }
        keys.push(key);
    }
    errs
}

/// upstream's validateValidatingAdmissionPolicyStatus (typeChecking; what a
/// status update may write).
fn validate_policy_status(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let warnings = &obj["status"]["typeChecking"]["expressionWarnings"];
    for (i, w) in items(warnings).iter().enumerate() {
        let path = format!("status.typeChecking.expressionWarnings[{i}]");
        if s(w, "warning").is_empty() {
            errs.push(FieldError::required(format!("{path}.warning"), ""));
        }
        if s(w, "fieldRef").trim().is_empty() {
            errs.push(FieldError::required(format!("{path}.fieldRef"), ""));
        }
    }
    errs
}

impl Strategy for ValidatingAdmissionPolicyStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = spec_mut(obj) {
            set_default(spec, "failurePolicy", json!("Fail"));
        }
        default_spec_match_resources(obj, "matchConstraints");
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation_one(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_policy(
            obj,
            &PolicyOptions {
                ignore_match_conditions: false,
            },
        )
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let (n, o) = (&new["spec"], &old["spec"]);
        let opts = PolicyOptions {
            ignore_match_conditions: n["paramKind"] == o["paramKind"]
                && n["matchConditions"] == o["matchConditions"],
        };
        let mut errs = validate_policy(new, &opts);
        errs.extend(validate_policy_status(new));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&POLICY_COLUMNS)
    }
}

#[cfg(test)]
#[path = "validating_admission_policy_tests.rs"]
mod tests;
