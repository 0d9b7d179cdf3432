//! Strategies of flowcontrol.apiserver.k8s.io/v1: FlowSchema and
//! PriorityLevelConfiguration (upstream's pkg/registry/flowcontrol,
//! pkg/apis/flowcontrol/v1/defaults.go and pkg/apis/flowcontrol/validation).

pub mod bootstrap;

use serde_json::{json, Map, Value};

use super::helpers::{invalid_raw, items, obj_mut, s, strings};
use super::strategy::{age_column, name_column, set_default, Column, Strategy};
use super::validation::{self, ErrorType, FieldError};

const MAX_MATCHING_PRECEDENCE: i64 = 10_000;
const MAX_QUEUES: i64 = 10_000_000;
/// shufflesharding.MaxHashBits.
const MAX_HASH_BITS: f64 = 60.0;
const PRESERVE_ZERO_SHARES_ANNOTATION: &str =
    "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";
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

pub struct PriorityLevelConfigurationStrategy;

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

/// Whether a field is present (a non-nil pointer in Go).
fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

// ---- mandatory objects (bootstrap.MandatoryFlowSchemas / ...PriorityLevelConfigurations) ----

fn mandatory_flow_schema(name: &str) -> Option<Value> {
    mandatory_spec("FlowSchema", name)
}

fn mandatory_priority_level(name: &str) -> Option<Value> {
    mandatory_spec("PriorityLevelConfiguration", name)
}

fn mandatory_spec(kind: &str, name: &str) -> Option<Value> {
    bootstrap::mandatory()
        .into_iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .map(|o| o["spec"].clone())
}

/// A spec as apiequality.Semantic compares it: nil and empty lists, and
/// missing and zero-valued strings and booleans, are the same.
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let x = semantic(x);
                let zero = match &x {
                    Value::Null => true,
                    Value::Bool(b) => !b,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty(),
                    Value::Number(_) => false,
                };
                if !zero {
                    out.insert(k.clone(), x);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn spec_value(spec: &Value) -> String {
    format!("{spec}")
}

// ---- FlowSchema ----

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

/// ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus.
fn validate_conditions(status: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in items(&status["conditions"]).iter().enumerate() {
        let ty = s(c, "type");
        let p = format!("status.conditions[{i}].type");
        if seen.iter().any(|t| t == ty) {
            errs.push(FieldError::duplicate(p.clone(), json!(ty)));
        }
        seen.push(ty.to_string());
        if ty.is_empty() {
            errs.push(FieldError::required(p, "must not be empty"));
        }
    }
}

fn validate_flow_schema(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = super::meta::name(obj);
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

static FLOW_SCHEMA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
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
});

impl Strategy for FlowSchemaStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(m) = obj.as_object_mut() else { return };
        let spec = super::helpers::ensure_obj(m, "spec");
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

// ---- PriorityLevelConfiguration ----

fn validate_percent(v: &Value, path: String, errs: &mut Vec<FieldError>) {
    if let Some(p) = v.as_i64() {
        if !(0..=100).contains(&p) {
            errs.push(FieldError::invalid(
                path,
                json!(p),
                "must be between 0 and 100, inclusive",
            ));
        }
    }
}

fn validate_queuing(q: &Value, errs: &mut Vec<FieldError>) {
    let p = "spec.limited.limitResponse.queuing";
    let qll = int(&q["queueLengthLimit"]);
    if qll <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queueLengthLimit"),
            json!(qll),
            "must be positive",
        ));
    }
    let queues = int(&q["queues"]);
    if queues <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            json!(queues),
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid(
            format!("{p}.queues"),
            json!(queues),
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand = int(&q["handSize"]);
    let entropy = ((queues as f64).log2() * hand as f64).ceil();
    if hand <= 0 {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            "must be positive",
        ));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            format!("should not be greater than queues ({queues})"),
        ));
    } else if entropy > MAX_HASH_BITS {
        errs.push(FieldError::invalid(
            format!("{p}.handSize"),
            json!(hand),
            format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than 60"),
        ));
    }
}

fn validate_limited(l: &Value, errs: &mut Vec<FieldError>) {
    let p = "spec.limited";
    let ncs = int(&l["nominalConcurrencyShares"]);
    if ncs < 0 {
        errs.push(FieldError::invalid(
            format!("{p}.nominalConcurrencyShares"),
            json!(ncs),
            "must be a non-negative integer",
        ));
    }
    let lr = &l["limitResponse"];
    match s(lr, "type") {
        "Reject" => {
            if present(lr, "queuing") {
                errs.push(FieldError::forbidden(
                    format!("{p}.limitResponse.queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => {
            if present(lr, "queuing") {
                validate_queuing(&lr["queuing"], errs);
            } else {
                errs.push(FieldError::required(
                    format!("{p}.limitResponse.queuing"),
                    "must not be empty if limited.limitResponse.type is Limited",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{p}.limitResponse.type"),
            json!(other),
            &["Queue", "Reject"],
        )),
    }
    validate_percent(&l["lendablePercent"], format!("{p}.lendablePercent"), errs);
    if let Some(b) = l["borrowingLimitPercent"].as_i64() {
        if b < 0 {
            errs.push(FieldError::invalid(
                format!("{p}.borrowingLimitPercent"),
                json!(b),
                "if specified, must be a non-negative integer",
            ));
        }
    }
}

fn validate_priority_level_spec(name: &str, spec: &Value, errs: &mut Vec<FieldError>) {
    let ty = s(spec, "type");
    if (name == "exempt") != (ty == "Exempt") {
        errs.push(FieldError::invalid(
            "spec.type",
            json!(ty),
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    match ty {
        "Exempt" => {
            if present(spec, "limited") {
                errs.push(FieldError::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            let e = &spec["exempt"];
            if let Some(n) = e["nominalConcurrencyShares"].as_i64().filter(|n| *n < 0) {
                errs.push(FieldError::invalid(
                    "spec.exempt.nominalConcurrencyShares",
                    json!(n),
                    "must be a non-negative integer",
                ));
            }
            validate_percent(
                &e["lendablePercent"],
                "spec.exempt.lendablePercent".into(),
                errs,
            );
        }
        "Limited" => {
            if present(spec, "exempt") {
                errs.push(FieldError::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            if present(spec, "limited") {
                validate_limited(&spec["limited"], errs);
            } else {
                errs.push(FieldError::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "spec.type",
            json!(other),
            &["Exempt", "Limited"],
        )),
    }
}

fn validate_priority_level(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = super::meta::name(obj);
    if obj["metadata"]["annotations"]
        .get(PRESERVE_ZERO_SHARES_ANNOTATION)
        .is_some()
    {
        errs.push(FieldError::forbidden(
            "metadata.annotations",
            format!("annotation '{PRESERVE_ZERO_SHARES_ANNOTATION}' is forbidden"),
        ));
    }
    let spec = &obj["spec"];
    validate_priority_level_spec(name, spec, &mut errs);
    if let Some(fixed) = mandatory_priority_level(name) {
        // Of the exempt level only `spec.exempt` may differ from the fixed value.
        let (mut have, mut want) = (semantic(spec), semantic(&fixed));
        let detail = if name == "exempt" {
            for v in [&mut have, &mut want] {
                if let Some(m) = v.as_object_mut() {
                    m.remove("exempt");
                }
            }
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        if have != want {
            errs.push(invalid_raw("spec", &spec_value(spec), &detail));
        }
    }
    validate_conditions(&obj["status"], &mut errs);
    errs
}

/// A cell of the limited level (`<none>` for an exempt one).
fn limited_cell(o: &Value, f: fn(&Value) -> Option<i64>) -> Value {
    let l = &o["spec"]["limited"];
    if l.is_null() {
        return json!("<none>");
    }
    f(l).map_or(json!("<none>"), |n| json!(n))
}

fn queuing_int(l: &Value, key: &str) -> Option<i64> {
    let q = &l["limitResponse"]["queuing"];
    (!q.is_null()).then(|| int(&q[key]))
}

static PRIORITY_LEVEL_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.", priority: 0, cell: |o| json!(s(&o["spec"], "type")) },
        Column { name: "NominalConcurrencyShares", kind: "string", format: "", description: "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)", priority: 0, cell: |o| limited_cell(o, |l| Some(int(&l["nominalConcurrencyShares"]))) },
        Column { name: "Queues", kind: "string", format: "", description: "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "queues")) },
        Column { name: "HandSize", kind: "string", format: "", description: "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "handSize")) },
        Column { name: "QueueLengthLimit", kind: "string", format: "", description: "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.", priority: 0, cell: |o| limited_cell(o, |l| queuing_int(l, "queueLengthLimit")) },
        age_column(),
    ]
});

/// SetDefaults_QueuingConfiguration: zero means unset.
fn default_queuing(q: &mut Map<String, Value>) {
    for (key, value) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
        if int(q.get(key).unwrap_or(&Value::Null)) == 0 {
            q.insert(key.into(), json!(value));
        }
    }
}

impl Strategy for PriorityLevelConfigurationStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        if let Some(l) = spec.get_mut("limited").and_then(Value::as_object_mut) {
            // v1's nominalConcurrencyShares is a pointer: only a missing one defaults.
            set_default(l, "nominalConcurrencyShares", json!(30));
            set_default(l, "lendablePercent", json!(0));
            if let Some(q) = l
                .get_mut("limitResponse")
                .and_then(|r| r.get_mut("queuing"))
                .and_then(Value::as_object_mut)
            {
                default_queuing(q);
            }
        }
        if let Some(e) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
            set_default(e, "nominalConcurrencyShares", json!(0));
            set_default(e, "lendablePercent", json!(0));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_priority_level(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PRIORITY_LEVEL_COLUMNS)
    }
}

#[cfg(test)]
mod tests;
