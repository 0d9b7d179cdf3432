//! FlowSchema (upstream's pkg/registry/flowcontrol/flowschema).

use serde_json::{json, Value};

use super::{int, mandatory_flow_schema, present, semantic, spec_value, validate_conditions};
use crate::registry::helpers::{invalid_raw, items, s, strings};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, ErrorType, FieldError};

const MAX_MATCHING_PRECEDENCE: i64 = 10_000;
const SUPPORTED_VERBS: [&str; 9] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

pub struct FlowSchemaStrategy;

/// An `Unsupported value` whose value is a Go struct (printed with `%#v`).
fn not_supported_raw(field: String, rendered: &str, supported: &[&str]) -> FieldError {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    FieldError {
        kind: ErrorType::NotSupported,
        field,
        value: None,
        detail: format!("{rendered}: supported values: {}", list.join(", ")),
    }
}

fn has_wildcard(list: &[String]) -> bool {
    list.iter().any(|x| x == "*")
}

fn validate_verbs(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let verbs = strings(&rule["verbs"]);
    let field = format!("{path}.verbs");
    if verbs.is_empty() {
        errs.push(FieldError::required(
            field,
            "verbs must contain at least one value",
        ));
    } else if has_wildcard(&verbs) {
        if verbs.len() > 1 {
            errs.push(FieldError::invalid(
                field,
                rule["verbs"].clone(),
                "if '*' is present, must not specify other verbs",
            ));
        }
    } else if !verbs.iter().all(|v| SUPPORTED_VERBS.contains(&v.as_str())) {
        errs.push(FieldError::not_supported(
            field,
            rule["verbs"].clone(),
            &SUPPORTED_VERBS,
        ));
    }
}

/// upstream's ValidateNonResourceURLPath.
fn non_resource_url_error(p: &str) -> Option<&'static str> {
    if p.is_empty() {
        return Some("must not be empty");
    }
    if p == "/" {
        return None;
    }
    if !p.starts_with('/') {
        return Some("must start with slash");
    }
    if p.contains(' ') {
        return Some("must not contain white-space");
    }
    if p.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = p.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !p.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

fn validate_resource_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    validate_verbs(rule, path, errs);
    let groups = strings(&rule["apiGroups"]);
    if groups.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    } else if groups.len() > 1 && has_wildcard(&groups) {
        errs.push(FieldError::invalid(
            format!("{path}.apiGroups"),
            rule["apiGroups"].clone(),
            "if '*' is present, must not specify other api groups",
        ));
    }
    let resources = strings(&rule["resources"]);
    if resources.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    } else if resources.len() > 1 && has_wildcard(&resources) {
        errs.push(FieldError::invalid(
            format!("{path}.resources"),
            rule["resources"].clone(),
            "if '*' is present, must not specify other resources",
        ));
    }
    let namespaces = strings(&rule["namespaces"]);
    let cluster_scope = rule["clusterScope"].as_bool().unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errs.push(FieldError::required(
            format!("{path}.namespaces"),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if has_wildcard(&namespaces) {
        if namespaces.len() > 1 {
            errs.push(FieldError::invalid(
                format!("{path}.namespaces"),
                rule["namespaces"].clone(),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for m in validation::dns1123_label(ns) {
                errs.push(FieldError::invalid(
                    format!("{path}.namespaces[{i}]"),
                    json!(ns),
                    format!("{NS_ERR_INTRO}{m}"),
                ));
            }
        }
    }
}

fn validate_non_resource_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    validate_verbs(rule, path, errs);
    let urls = strings(&rule["nonResourceURLs"]);
    if urls.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.nonResourceURLs"),
            "nonResourceURLs must contain at least one value",
        ));
    } else if has_wildcard(&urls) {
        if urls.len() > 1 {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                rule["nonResourceURLs"].clone(),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (i, u) in urls.iter().enumerate() {
            if let Some(m) = non_resource_url_error(u) {
                errs.push(FieldError::invalid(
                    format!("{path}.nonResourceURLs[{i}]"),
                    json!(u),
                    m,
                ));
            }
        }
    }
}

/// The `name` of a User or Group subject.
fn validate_named_subject(subject: &Value, key: &str, path: &str, errs: &mut Vec<FieldError>) {
    if !present(subject, key) {
        errs.push(FieldError::required(
            format!("{path}.{key}"),
            format!("{key} is required when subject kind is '{}'", title(key)),
        ));
        return;
    }
    if s(&subject[key], "name").is_empty() {
        errs.push(FieldError::required(format!("{path}.{key}.name"), ""));
    }
}

fn title(key: &str) -> &'static str {
    match key {
        "user" => "User",
        "group" => "Group",
        _ => "ServiceAccount",
    }
}

fn validate_service_account_subject(subject: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let p = format!("{path}.serviceAccount");
    if !present(subject, "serviceAccount") {
        errs.push(FieldError::required(
            p,
            "serviceAccount is required when subject kind is 'ServiceAccount'",
        ));
        return;
    }
    let sa = &subject["serviceAccount"];
    let name = s(sa, "name");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{p}.name"), ""));
    } else if name != "*" {
        for m in validation::dns1123_subdomain(name) {
            errs.push(FieldError::invalid(format!("{p}.name"), json!(name), m));
        }
    }
    let ns = s(sa, "namespace");
    if ns.is_empty() {
        errs.push(FieldError::required(
            format!("{p}.namespace"),
            "must specify namespace for service account",
        ));
    } else {
        for m in validation::dns1123_label(ns) {
            errs.push(FieldError::invalid(format!("{p}.namespace"), json!(ns), m));
        }
    }
}

fn validate_subject(subject: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let forbid = |errs: &mut Vec<FieldError>, key: &str| {
        if present(subject, key) {
            errs.push(FieldError::forbidden(
                format!("{path}.{key}"),
                format!(
                    "{key} is forbidden when subject kind is not '{}'",
                    title(key)
                ),
            ));
        }
    };
    match s(subject, "kind") {
        "ServiceAccount" => {
            validate_service_account_subject(subject, path, errs);
            forbid(errs, "user");
            forbid(errs, "group");
        }
        "User" => {
            validate_named_subject(subject, "user", path, errs);
            forbid(errs, "serviceAccount");
            forbid(errs, "group");
        }
        "Group" => {
            validate_named_subject(subject, "group", path, errs);
            forbid(errs, "serviceAccount");
            forbid(errs, "user");
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.kind"),
            json!(other),
            &["Group", "ServiceAccount", "User"],
        )),
    }
}

fn validate_rule(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let subjects = items(&rule["subjects"]);
    if subjects.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (i, subject) in subjects.iter().enumerate() {
        validate_subject(subject, &format!("{path}.subjects[{i}]"), errs);
    }
    let resource_rules = items(&rule["resourceRules"]);
    let non_resource_rules = items(&rule["nonResourceRules"]);
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        validate_resource_rule(r, &format!("{path}.resourceRules[{i}]"), errs);
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        validate_non_resource_rule(r, &format!("{path}.nonResourceRules[{i}]"), errs);
    }
}

fn validate_flow_schema_spec(name: &str, spec: &Value, errs: &mut Vec<FieldError>) {
    let mp = int(&spec["matchingPrecedence"]);
    let mp_path = "spec.matchingPrecedence";
    if mp <= 0 {
        errs.push(FieldError::invalid(
            mp_path,
            json!(mp),
            "must be a positive value",
        ));
    }
    if mp > MAX_MATCHING_PRECEDENCE {
        errs.push(FieldError::invalid(
            mp_path,
            json!(mp),
            format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if mp == 1 && name != "exempt" {
        errs.push(FieldError::invalid(
            mp_path,
            json!(mp),
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if present(spec, "distinguisherMethod") {
        let ty = s(&spec["distinguisherMethod"], "type");
        if ty != "ByNamespace" && ty != "ByUser" {
            errs.push(not_supported_raw(
                "spec.distinguisherMethod.type".into(),
                &format!("flowcontrol.FlowDistinguisherMethod{{Type:{ty:?}}}"),
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let pl = s(&spec["priorityLevelConfiguration"], "name");
    if pl.is_empty() {
        errs.push(FieldError::required(
            "spec.priorityLevelConfiguration.name",
            "must reference a priority level",
        ));
    } else {
        for m in validation::dns1123_subdomain(pl) {
            errs.push(FieldError::invalid(
                "spec.priorityLevelConfiguration.name",
                json!(pl),
                m,
            ));
        }
    }
    for (i, rule) in items(&spec["rules"]).iter().enumerate() {
        validate_rule(rule, &format!("spec.rules[{i}]"), errs);
    }
}

fn validate_flow_schema(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = crate::registry::meta::name(obj);
    let spec = &obj["spec"];
    validate_flow_schema_spec(name, spec, &mut errs);
    if let Some(fixed) = mandatory_flow_schema(name) {
        if semantic(spec) != semantic(&fixed) {
            errs.push(invalid_raw(
                "spec",
                &spec_value(spec),
                &format!("spec of '{name}' must equal the fixed value"),
            ));
        }
    }
    validate_conditions(&obj["status"], &mut errs);
    errs
}

fn dangling(o: &Value) -> Value {
    let found = items(&o["status"]["conditions"])
        .into_iter()
        .find(|c| s(c, "type") == "Dangling");
    json!(found.map_or("?".to_string(), |c| s(&c, "status").to_string()))
}

pub(super) static FLOW_SCHEMA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(
    || {
        vec![
        name_column(),
        Column { name: "PriorityLevel", kind: "string", format: "", description: "`name` is the name of the priority level configuration being referenced Required.", priority: 0, cell: |o| json!(s(&o["spec"]["priorityLevelConfiguration"], "name")) },
        Column { name: "MatchingPrecedence", kind: "string", format: "", description: "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.", priority: 0, cell: |o| json!(int(&o["spec"]["matchingPrecedence"])) },
        Column { name: "DistinguisherMethod", kind: "string", format: "", description: "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.", priority: 0, cell: |o| {
            let dm = &o["spec"]["distinguisherMethod"];
            json!(if dm.is_null() { "<none>" } else { s(dm, "type") })
        } },
        age_column(),
        Column { name: "MissingPL", kind: "string", format: "", description: "references a broken or non-existent PriorityLevelConfiguration", priority: 0, cell: dangling },
    ]
    },
);

impl Strategy for FlowSchemaStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(m) = obj.as_object_mut() else { return };
        let spec = crate::registry::helpers::ensure_obj(m, "spec");
        if int(spec.get("matchingPrecedence").unwrap_or(&Value::Null)) == 0 {
            spec.insert("matchingPrecedence".into(), json!(1000));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_flow_schema(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&FLOW_SCHEMA_COLUMNS)
    }
}
