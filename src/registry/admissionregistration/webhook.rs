//! What MutatingWebhookConfiguration and ValidatingWebhookConfiguration
//! share: their webhooks' defaults and rules (upstream's
//! SetDefaults_{Mutating,Validating}Webhook and
//! validate{Mutating,Validating}WebhookConfiguration), the update options
//! taken from the old object and the printer columns. The strategies are
//! in mutating_webhook_configuration.rs and
//! validating_webhook_configuration.rs; the tests here go through both.

use serde_json::{json, Value};

use super::cel_check::Env;
use super::common::{
    fully_qualified_name, invalid_json, match_conditions, one_of, rule_with_operations,
    FAILURE_POLICIES, MATCH_POLICIES,
};
use super::url;
use crate::registry::helpers::{items, port_num, s, strings, validate_label_selector};
use crate::registry::strategy::{age_column, name_column, set_default, Column};
use crate::registry::validation::{self, FieldError};

const ACCEPTED_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const ALL_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];

pub(super) static COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Webhooks",
            kind: "integer",
            format: "",
            description:
                "Webhooks indicates the number of webhooks registered in this configuration",
            priority: 0,
            cell: |o| json!(items(&o["webhooks"]).len()),
        },
        age_column(),
    ]
});

/// What an update may still accept because the old object already had it
/// (upstream's validationOptions derived from the old configuration).
pub(super) struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
}

pub(super) const CREATE: Options = Options {
    ignore_match_conditions: false,
    require_no_side_effects: true,
    require_recognized_review_version: true,
    require_unique_names: true,
};

pub(super) fn update_options(new: &Value, old: &Value) -> Options {
    let (new_hooks, old_hooks) = (items(&new["webhooks"]), items(&old["webhooks"]));
    let ignore_match_conditions = new_hooks.len() == old_hooks.len()
        && new_hooks
            .iter()
            .zip(&old_hooks)
            .all(|(n, o)| n["matchConditions"] == o["matchConditions"]);
    let require_no_side_effects = old_hooks.iter().all(|h| {
        h.get("sideEffects")
            .and_then(Value::as_str)
            .is_some_and(|s| NO_SIDE_EFFECTS.contains(&s))
    });
    let require_recognized_review_version = old_hooks.iter().all(|h| {
        let versions = strings(&h["admissionReviewVersions"]);
        versions.is_empty()
            || versions
                .iter()
                .any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str()))
    });
    let mut names: Vec<&str> = Vec::new();
    let mut require_unique_names = true;
    for h in &old_hooks {
        let n = s(h, "name");
        if names.contains(&n) {
            require_unique_names = false;
        }
        names.push(n);
    }
    Options {
        ignore_match_conditions,
        require_no_side_effects,
        require_recognized_review_version,
        require_unique_names,
    }
}

pub(super) fn default_webhooks(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut() {
        let Some(h) = hook.as_object_mut() else {
            continue;
        };
        set_default(h, "failurePolicy", json!("Fail"));
        set_default(h, "matchPolicy", json!("Equivalent"));
        set_default(h, "namespaceSelector", json!({}));
        set_default(h, "objectSelector", json!({}));
        set_default(h, "timeoutSeconds", json!(10));
        if mutating {
            set_default(h, "reinvocationPolicy", json!("Never"));
        }
        if let Some(svc) = h
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            set_default(svc, "port", json!(443));
        }
        super::common::default_rules(h.get_mut("rules"));
    }
}

/// upstream's validateAdmissionReviewVersions.
fn review_versions(hook: &Value, path: &str, require_recognized: bool, errs: &mut Vec<FieldError>) {
    let versions = strings(&hook["admissionReviewVersions"]);
    if versions.is_empty() {
        errs.push(FieldError::required(
            path,
            format!(
                "must specify one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
        return;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if seen.contains(&v.as_str()) {
            errs.push(FieldError::invalid(at, json!(v), "duplicate version"));
            continue;
        }
        seen.push(v);
        for m in validation::dns1035_label(v) {
            errs.push(FieldError::invalid(&at, json!(v), m));
        }
        if ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str()) {
            accepted = true;
        }
    }
    if require_recognized && !accepted {
        errs.push(invalid_json(
            path,
            &hook["admissionReviewVersions"],
            &format!(
                "must include at least one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
}

/// upstream's ValidateWebhookService. Upstream passes the service's name
/// and namespace in each other's place, so a missing namespace is reported
/// at `.name` and a missing name at `.namespace`; kept as upstream answers.
fn webhook_service(svc: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if s(svc, "namespace").is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    if s(svc, "name").is_empty() {
        errs.push(FieldError::required(format!("{path}.namespace"), ""));
    }
    let port = svc["port"].as_i64().unwrap_or(443);
    let msgs = port_num(port);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.port"),
            json!(port),
            format!("port is not valid: {}", msgs.join(", ")),
        ));
    }
    let Some(p) = svc.get("path").and_then(Value::as_str) else {
        return;
    };
    let at = format!("{path}.path");
    if p == "/" || p.is_empty() {
        return;
    }
    if p == "//" {
        errs.push(FieldError::invalid(
            at,
            json!(p),
            "segment[0] may not be empty",
        ));
        return;
    }
    if !p.starts_with('/') {
        errs.push(FieldError::invalid(&at, json!(p), "must start with a '/'"));
    }
    // Upstream drops the first byte whatever it is, then one trailing '/'.
    let rest = p.get(1..).unwrap_or("");
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    for (i, step) in rest.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &at,
                json!(p),
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for m in validation::dns1123_subdomain(step) {
            errs.push(FieldError::invalid(
                &at,
                json!(p),
                format!("segment[{i}]: {m}"),
            ));
        }
    }
}

/// upstream's validate{Mutating,Validating}Webhook.
fn webhook(hook: &Value, path: &str, mutating: bool, opts: &Options, errs: &mut Vec<FieldError>) {
    fully_qualified_name(&format!("{path}.name"), s(hook, "name"), errs);
    for (i, r) in items(&hook["rules"]).iter().enumerate() {
        rule_with_operations(r, &format!("{path}.rules[{i}]"), errs);
    }
    if let Some(p) = hook.get("failurePolicy").and_then(Value::as_str) {
        one_of(&format!("{path}.failurePolicy"), p, FAILURE_POLICIES, errs);
    }
    if let Some(p) = hook.get("matchPolicy").and_then(Value::as_str) {
        one_of(&format!("{path}.matchPolicy"), p, MATCH_POLICIES, errs);
    }
    let allowed = if opts.require_no_side_effects {
        NO_SIDE_EFFECTS
    } else {
        ALL_SIDE_EFFECTS
    };
    // The typed decoding turns a missing sideEffects into "": both are nil here.
    match hook.get("sideEffects").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required(
            format!("{path}.sideEffects"),
            format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(v) => one_of(&format!("{path}.sideEffects"), v, allowed, errs),
    }
    if let Some(t) = hook["timeoutSeconds"].as_i64() {
        if !(1..=30).contains(&t) {
            errs.push(FieldError::invalid(
                format!("{path}.timeoutSeconds"),
                json!(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    for key in ["namespaceSelector", "objectSelector"] {
        errs.extend(validate_label_selector(
            &hook[key],
            &format!("{path}.{key}"),
        ));
    }
    if mutating {
        if let Some(p) = hook.get("reinvocationPolicy").and_then(Value::as_str) {
            one_of(
                &format!("{path}.reinvocationPolicy"),
                p,
                REINVOCATION_POLICIES,
                errs,
            );
        }
    }
    let cc = &hook["clientConfig"];
    let url = cc.get("url").and_then(Value::as_str);
    let service = cc.get("service").filter(|v| !v.is_null());
    match (url, service) {
        (Some(u), None) => url::validate_webhook_url(&format!("{path}.clientConfig.url"), u, errs),
        (None, Some(svc)) => webhook_service(svc, &format!("{path}.clientConfig.service"), errs),
        _ => errs.push(FieldError::required(
            format!("{path}.clientConfig"),
            "exactly one of url or service is required",
        )),
    }
    if !opts.ignore_match_conditions {
        let env = Env {
            params: false,
            authorizer: true,
            variables: false,
        };
        match_conditions(
            &hook["matchConditions"],
            env,
            &format!("{path}.matchConditions"),
            errs,
        );
    }
}

pub(super) fn validate_configuration(
    obj: &Value,
    mutating: bool,
    opts: &Options,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, hook) in items(&obj["webhooks"]).iter().enumerate() {
        let path = format!("webhooks[{i}]");
        webhook(hook, &path, mutating, opts, &mut errs);
        review_versions(
            hook,
            &format!("{path}.admissionReviewVersions"),
            opts.require_recognized_review_version,
            &mut errs,
        );
        let name = s(hook, "name");
        if opts.require_unique_names && !name.is_empty() {
            if names.iter().any(|n| n == name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
            } else {
                names.push(name.to_string());
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::admissionregistration::{
        MutatingWebhookConfigurationStrategy, ValidatingWebhookConfigurationStrategy,
    };
    use crate::registry::strategy::Strategy;

    fn errors(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    fn hook() -> Value {
        json!({
            "name": "pods.policy.example.com",
            "clientConfig": {"service": {"namespace": "default", "name": "hook", "path": "/validate"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    }

    #[test]
    fn defaults() {
        let mut o = json!({"webhooks": [hook()]});
        MutatingWebhookConfigurationStrategy.default(&mut o);
        MutatingWebhookConfigurationStrategy.prepare_for_create(&mut o);
        assert_eq!(o["metadata"]["generation"], 1);
        let h = &o["webhooks"][0];
        assert_eq!(h["failurePolicy"], "Fail");
        assert_eq!(h["matchPolicy"], "Equivalent");
        assert_eq!(h["namespaceSelector"], json!({}));
        assert_eq!(h["objectSelector"], json!({}));
        assert_eq!(h["timeoutSeconds"], 10);
        assert_eq!(h["reinvocationPolicy"], "Never");
        assert_eq!(h["clientConfig"]["service"]["port"], 443);
        assert_eq!(h["rules"][0]["scope"], "*");
        assert!(h.get("sideEffects").is_some());
        let mut v = json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"url": "https://x"}, "timeoutSeconds": 3}]});
        ValidatingWebhookConfigurationStrategy.default(&mut v);
        let h = &v["webhooks"][0];
        assert_eq!(h["timeoutSeconds"], 3);
        assert!(h.get("reinvocationPolicy").is_none());
        assert!(h.get("sideEffects").is_none());
        assert!(h.get("admissionReviewVersions").is_none());
        assert!(ValidatingWebhookConfigurationStrategy.validate(&json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"url": "https://x"}, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]})).is_empty());
    }

    #[test]
    fn valid_configuration_passes() {
        let mut o = json!({"webhooks": [hook()]});
        MutatingWebhookConfigurationStrategy.default(&mut o);
        assert_eq!(
            errors(&MutatingWebhookConfigurationStrategy.validate(&o)),
            []
        );
    }

    #[test]
    fn webhook_fields() {
        let mut o = json!({"webhooks": [{
            "name": "hook",
            "clientConfig": {},
            "sideEffects": "Some",
            "admissionReviewVersions": ["v2", "v2"],
            "failurePolicy": "Maybe",
            "matchPolicy": "Loose",
            "timeoutSeconds": 31,
            "reinvocationPolicy": "Always",
            "namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
        }]});
        MutatingWebhookConfigurationStrategy.default(&mut o);
        let got = errors(&MutatingWebhookConfigurationStrategy.validate(&o));
        let want: Vec<(String, String)> = [
            ("webhooks[0].name", "Invalid value: \"hook\": should be a domain with at least three segments separated by dots"),
            ("webhooks[0].failurePolicy", "Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\""),
            ("webhooks[0].matchPolicy", "Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\""),
            ("webhooks[0].sideEffects", "Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""),
            ("webhooks[0].timeoutSeconds", "Invalid value: 31: the timeout value must be between 1 and 30 seconds"),
            ("webhooks[0].namespaceSelector.matchExpressions[0].values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
            ("webhooks[0].reinvocationPolicy", "Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\""),
            ("webhooks[0].clientConfig", "Required value: exactly one of url or service is required"),
            ("webhooks[0].admissionReviewVersions[1]", "Invalid value: \"v2\": duplicate version"),
            ("webhooks[0].admissionReviewVersions", "Invalid value: [\"v2\",\"v2\"]: must include at least one of v1, v1beta1"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn required_side_effects_and_review_versions() {
        // What the typed decoding makes of a webhook that omits both.
        let o = json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"url": "https://x.example.com"}, "sideEffects": "", "admissionReviewVersions": []}]});
        let got = errors(&ValidatingWebhookConfigurationStrategy.validate(&o));
        assert_eq!(
            got,
            [
                (
                    "webhooks[0].sideEffects".to_string(),
                    "Required value: must specify one of None, NoneOnDryRun".to_string()
                ),
                (
                    "webhooks[0].admissionReviewVersions".to_string(),
                    "Required value: must specify one of v1, v1beta1".to_string()
                ),
            ]
        );
    }

    #[test]
    fn duplicate_names_and_services() {
        let mut a = hook();
        a["clientConfig"] =
            json!({"service": {"name": "", "namespace": "", "port": 0, "path": "x//Y/"}});
        let o = json!({"webhooks": [hook(), a]});
        let got = errors(&ValidatingWebhookConfigurationStrategy.validate(&o));
        assert_eq!(got[0].0, "webhooks[1].clientConfig.service.name");
        assert_eq!(got[1].0, "webhooks[1].clientConfig.service.namespace");
        assert_eq!(
            got[2],
            (
                "webhooks[1].clientConfig.service.port".into(),
                "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"
                    .into()
            )
        );
        assert_eq!(
            got[3],
            (
                "webhooks[1].clientConfig.service.path".into(),
                "Invalid value: \"x//Y/\": must start with a '/'".into()
            )
        );
        assert_eq!(
            got[4],
            (
                "webhooks[1].clientConfig.service.path".into(),
                "Invalid value: \"x//Y/\": segment[0] may not be empty".into()
            )
        );
        assert_eq!(
            got[5],
            (
                "webhooks[1].clientConfig.service.path".into(),
                "Invalid value: \"x//Y/\": segment[1] may not be empty".into()
            )
        );
        assert!(got[6]
            .1
            .starts_with("Invalid value: \"x//Y/\": segment[2]: a lowercase RFC 1123 subdomain"));
        assert_eq!(
            got[7],
            (
                "webhooks[1].name".into(),
                "Duplicate value: \"pods.policy.example.com\"".into()
            )
        );
        assert_eq!(got.len(), 8);
    }

    #[test]
    fn updates_keep_what_the_old_object_had() {
        let mut old = hook();
        old["sideEffects"] = json!("Some");
        let old = json!({"webhooks": [old.clone(), old]});
        let new = old.clone();
        assert!(ValidatingWebhookConfigurationStrategy
            .validate_update(&new, &old)
            .is_empty());
        assert_eq!(
            ValidatingWebhookConfigurationStrategy.validate(&new).len(),
            3
        );
        let mut bad = new.clone();
        bad["webhooks"][0]["sideEffects"] = json!("Maybe");
        let got = errors(&ValidatingWebhookConfigurationStrategy.validate_update(&bad, &old));
        assert_eq!(got, [("webhooks[0].sideEffects".to_string(), "Unsupported value: \"Maybe\": supported values: \"None\", \"NoneOnDryRun\", \"Some\", \"Unknown\"".to_string())]);
        assert!(ValidatingWebhookConfigurationStrategy.generation_changed(&bad, &old));
        assert!(!ValidatingWebhookConfigurationStrategy.generation_changed(&new, &old));
    }

    #[test]
    fn match_conditions_are_compiled_without_params() {
        let mut h = hook();
        h["matchConditions"] = json!([{"name": "p", "expression": "params.x == 1"}]);
        let got = errors(
            &ValidatingWebhookConfigurationStrategy.validate(&json!({"webhooks": [h.clone()]})),
        );
        assert_eq!(got[0].0, "webhooks[0].matchConditions[0].expression");
        assert!(
            got[0].1.contains("undeclared reference to 'params'"),
            "{}",
            got[0].1
        );
        // Unchanged match conditions are not compiled again on update.
        let o = json!({"webhooks": [h]});
        assert!(ValidatingWebhookConfigurationStrategy
            .validate_update(&o, &o)
            .is_empty());
    }

    #[test]
    fn webhooks_column() {
        let o = json!({"webhooks": [hook(), hook()]});
        assert_eq!((COLUMNS[1].cell)(&o), json!(2));
        assert_eq!((COLUMNS[1].cell)(&json!({})), json!(0));
        assert_eq!(COLUMNS[1].name, "Webhooks");
    }
}
