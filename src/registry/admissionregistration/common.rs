//! Validation the webhook configurations and the policies share (upstream's
//! validateRuleWithOperations, validateMatchResources, validateMatchConditions
//! and friends), the defaults of rules and MatchResources, and how upstream
//! v1.34 prints a non-scalar bad value (as JSON).

use serde_json::{json, Map, Value};

use super::cel_check::{self, Env, Ret};
use crate::registry::helpers::{ensure_obj, invalid_raw, items, s, validate_label_selector};
use crate::registry::strategy::set_default;
use crate::registry::validation::{self, FieldError};

pub const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
pub const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];

/// A bad value as upstream v1.34 renders one that is not a string, number
/// or bool: `json.Marshal`'s output (which escapes `<`, `>` and `&`).
pub fn go_json(v: &Value) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `field.Invalid` with a list (or other structured) value.
pub fn invalid_json(field: impl Into<String>, v: &Value, detail: &str) -> FieldError {
    invalid_raw(field, &go_json(v), detail)
}

/// Strings of an array, keeping non-strings as "" (Go would have refused
/// them at decoding; the typed codec already did).
fn str_list(v: &Value) -> Vec<String> {
    items(v)
        .iter()
        .map(|x| x.as_str().unwrap_or("").to_string())
        .collect()
}

/// `field.NotSupported` unless `v` is one of `allowed`.
pub fn one_of(path: &str, v: &str, allowed: &[&str], errs: &mut Vec<FieldError>) {
    if !allowed.contains(&v) {
        errs.push(FieldError::not_supported(path, json!(v), allowed));
    }
}

// ---- defaults ----

/// SetDefaults_Rule for each rule of a list.
pub fn default_rules(rules: Option<&mut Value>) {
    if let Some(list) = rules.and_then(Value::as_array_mut) {
        for r in list.iter_mut().filter_map(Value::as_object_mut) {
            set_default(r, "scope", json!("*"));
        }
    }
}

/// SetDefaults_MatchResources and the rules inside.
pub fn default_match_resources(mc: &mut Map<String, Value>) {
    set_default(mc, "matchPolicy", json!("Equivalent"));
    set_default(mc, "namespaceSelector", json!({}));
    set_default(mc, "objectSelector", json!({}));
    default_rules(mc.get_mut("resourceRules"));
    default_rules(mc.get_mut("excludeResourceRules"));
}

/// Defaults of an optional MatchResources at `spec[key]`: only when present.
pub fn default_spec_match_resources(obj: &mut Value, key: &str) {
    if let Some(mc) = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut(key))
        .and_then(Value::as_object_mut)
    {
        default_match_resources(mc);
    }
}

/// The spec object, created when missing (its defaults apply regardless).
pub fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.as_object_mut().map(|m| ensure_obj(m, "spec"))
}

/// Upstream's PrepareForCreate of these kinds: generation 1, with or without a spec.
pub fn set_generation_one(obj: &mut Value) {
    crate::registry::meta::meta_mut(obj).insert("generation".into(), json!(1));
}

// ---- names ----

/// upstream's IsFullyQualifiedName.
pub fn fully_qualified_name(path: &str, name: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let msgs = validation::dns1123_subdomain(name);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(path, json!(name), msgs.join(",")));
        return;
    }
    if name.split('.').count() < 3 {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

/// upstream's ValidateQualifiedName.
pub fn qualified_name(path: &str, name: &str, errs: &mut Vec<FieldError>) {
    for m in validation::qualified_name(name) {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
}

// ---- rules ----

fn has_wildcard(v: &[String]) -> bool {
    v.iter().any(|x| x == "*")
}

/// upstream's validateResources (subresources allowed).
fn validate_resources(resources: &[String], raw: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut with_wildcard_sub: Vec<&str> = Vec::new();
    let mut sub_with_wildcard_res: Vec<&str> = Vec::new();
    let mut double_wildcard = false;
    let mut single_wildcard = false;
    let mut without_sub = false;
    for (i, rs) in resources.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if rs.is_empty() {
            errs.push(FieldError::required(at, ""));
            continue;
        }
        if rs == "*/*" {
            double_wildcard = true;
        }
        if rs == "*" {
            single_wildcard = true;
        }
        let Some((res, sub)) = rs.split_once('/') else {
            // Only the last resource without a subresource counts, as upstream's loop has it.
            without_sub = rs != "*";
            continue;
        };
        if with_wildcard_sub.contains(&res) {
            errs.push(FieldError::invalid(
                &at,
                json!(rs),
                format!("if '{res}/*' is present, must not specify {rs}"),
            ));
        }
        if sub_with_wildcard_res.contains(&sub) {
            errs.push(FieldError::invalid(
                &at,
                json!(rs),
                format!("if '*/{sub}' is present, must not specify {rs}"),
            ));
        }
        if sub == "*" {
            with_wildcard_sub.push(res);
        }
        if res == "*" {
            sub_with_wildcard_res.push(sub);
        }
    }
    if resources.len() > 1 && double_wildcard {
        errs.push(invalid_json(
            path,
            raw,
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single_wildcard && without_sub {
        errs.push(invalid_json(
            path,
            raw,
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
}

/// upstream's validateRuleWithOperations (with validateRule, subresources allowed).
pub fn rule_with_operations(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ops = str_list(&rule["operations"]);
    if ops.is_empty() {
        errs.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if ops.len() > 1 && has_wildcard(&ops) {
        errs.push(invalid_json(
            format!("{path}.operations"),
            &rule["operations"],
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        one_of(&format!("{path}.operations[{i}]"), op, OPERATIONS, errs);
    }
    let groups = str_list(&rule["apiGroups"]);
    if groups.is_empty() {
        errs.push(FieldError::required(format!("{path}.apiGroups"), ""));
    }
    if groups.len() > 1 && has_wildcard(&groups) {
        errs.push(invalid_json(
            format!("{path}.apiGroups"),
            &rule["apiGroups"],
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = str_list(&rule["apiVersions"]);
    if versions.is_empty() {
        errs.push(FieldError::required(format!("{path}.apiVersions"), ""));
    }
    if versions.len() > 1 && has_wildcard(&versions) {
        errs.push(invalid_json(
            format!("{path}.apiVersions"),
            &rule["apiVersions"],
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.apiVersions[{i}]"), ""));
        }
    }
    validate_resources(
        &str_list(&rule["resources"]),
        &rule["resources"],
        &format!("{path}.resources"),
        errs,
    );
    if let Some(scope) = rule.get("scope").and_then(Value::as_str) {
        one_of(&format!("{path}.scope"), scope, SCOPES, errs);
    }
}

/// upstream's validateNamedRuleWithOperations.
fn named_rule_with_operations(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<String> = Vec::new();
    for (i, name) in str_list(&rule["resourceNames"]).into_iter().enumerate() {
        let at = format!("{path}.resourceNames[{i}]");
        for m in validation::path_segment_name(&name) {
            errs.push(FieldError::invalid(&at, json!(name), m));
        }
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(&at, json!(name)));
        } else {
            seen.push(name);
        }
    }
    rule_with_operations(rule, path, errs);
}

/// upstream's validateMatchResources (nothing for a missing one).
pub fn match_resources(mc: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if mc.is_null() {
        return;
    }
    match mc.get("matchPolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(format!("{path}.matchPolicy"), "")),
        Some(p) => one_of(&format!("{path}.matchPolicy"), p, MATCH_POLICIES, errs),
    }
    for key in ["namespaceSelector", "objectSelector"] {
        let sel = &mc[key];
        if sel.is_null() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        } else {
            errs.extend(validate_label_selector(sel, &format!("{path}.{key}")));
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, r) in items(&mc[key]).iter().enumerate() {
            named_rule_with_operations(r, &format!("{path}.{key}[{i}]"), errs);
        }
    }
}

/// upstream's validateMatchConditions.
pub fn match_conditions(list: &Value, env: Env, path: &str, errs: &mut Vec<FieldError>) {
    let conds = items(list);
    if conds.len() > 64 {
        errs.push(FieldError::too_many(path, conds.len(), 64));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in conds.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let expr = s(c, "expression");
        if expr.trim().is_empty() {
            errs.push(FieldError::required(format!("{at}.expression"), ""));
        } else if let Some(d) = cel_check::compile(expr.trim(), env, Ret::Bool) {
            errs.push(FieldError::invalid(
                format!("{at}.expression"),
                json!(expr.trim()),
                d,
            ));
        }
        let name = s(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else {
            qualified_name(&format!("{at}.name"), name, errs);
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{at}.name"), json!(name)));
            } else {
                names.push(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    #[test]
    fn rules() {
        let mut errs = Vec::new();
        let r = json!({"operations": ["*", "CREATE", "PATCH"], "apiGroups": [], "apiVersions": ["v1", ""], "resources": ["*", "pods", "*/*"], "scope": "Everywhere"});
        rule_with_operations(&r, "webhooks[0].rules[0]", &mut errs);
        assert_eq!(
            fields(&errs),
            [
                ("webhooks[0].rules[0].operations".into(), "Invalid value: [\"*\",\"CREATE\",\"PATCH\"]: if '*' is present, must not specify other operations".into()),
                ("webhooks[0].rules[0].operations[2]".into(), "Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"".into()),
                ("webhooks[0].rules[0].apiGroups".into(), "Required value".into()),
                ("webhooks[0].rules[0].apiVersions[1]".into(), "Required value".into()),
                ("webhooks[0].rules[0].resources".into(), "Invalid value: [\"*\",\"pods\",\"*/*\"]: if '*/*' is present, must not specify other resources".into()),
                ("webhooks[0].rules[0].resources".into(), "Invalid value: [\"*\",\"pods\",\"*/*\"]: if '*' is present, must not specify other resources without subresources".into()),
                ("webhooks[0].rules[0].scope".into(), "Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"".into()),
            ]
        );
        let mut errs = Vec::new();
        let r = json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/*", "pods/status", "*/scale", "deployments/scale"]});
        rule_with_operations(&r, "r", &mut errs);
        assert_eq!(
            fields(&errs),
            [
                ("r.resources[1]".into(), "Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status".into()),
                ("r.resources[3]".into(), "Invalid value: \"deployments/scale\": if '*/scale' is present, must not specify deployments/scale".into()),
            ]
        );
    }

    #[test]
    fn names() {
        let mut errs = Vec::new();
        fully_qualified_name("n", "", &mut errs);
        fully_qualified_name("n", "hook.example", &mut errs);
        fully_qualified_name("n", "Bad_Name", &mut errs);
        fully_qualified_name("n", "a.b.c", &mut errs);
        assert_eq!(errs.len(), 3);
        assert_eq!(errs[0].message(), "Required value");
        assert_eq!(
            errs[1].message(),
            "Invalid value: \"hook.example\": should be a domain with at least three segments separated by dots"
        );
        assert!(errs[2].message().contains("a lowercase RFC 1123 subdomain"));
    }

    #[test]
    fn match_resources_and_conditions() {
        let mut errs = Vec::new();
        let mc = json!({"matchPolicy": "Loose", "resourceRules": [{"resourceNames": ["a", "a", "b/c"], "operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]});
        match_resources(&mc, "spec.matchConstraints", &mut errs);
        assert_eq!(
            fields(&errs),
            [
                (
                    "spec.matchConstraints.matchPolicy".into(),
                    "Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\""
                        .into()
                ),
                (
                    "spec.matchConstraints.namespaceSelector".into(),
                    "Required value".into()
                ),
                (
                    "spec.matchConstraints.objectSelector".into(),
                    "Required value".into()
                ),
                (
                    "spec.matchConstraints.resourceRules[0].resourceNames[1]".into(),
                    "Duplicate value: \"a\"".into()
                ),
                (
                    "spec.matchConstraints.resourceRules[0].resourceNames[2]".into(),
                    "Invalid value: \"b/c\": may not contain '/'".into()
                ),
            ]
        );
        let mut errs = Vec::new();
        let conds = json!([
            {"name": "ok", "expression": "true"},
            {"name": "ok", "expression": " "},
            {"name": "bad name!", "expression": "object.x"},
        ]);
        match_conditions(
            &conds,
            Env::default(),
            "webhooks[0].matchConditions",
            &mut errs,
        );
        let got = fields(&errs);
        assert_eq!(
            got[0],
            (
                "webhooks[0].matchConditions[1].expression".into(),
                "Required value".into()
            )
        );
        assert_eq!(
            got[1],
            (
                "webhooks[0].matchConditions[1].name".into(),
                "Duplicate value: \"ok\"".into()
            )
        );
        assert_eq!(
            got[2],
            (
                "webhooks[0].matchConditions[2].expression".into(),
                "Invalid value: \"object.x\": must evaluate to bool but got dyn".into()
            )
        );
        assert_eq!(got[3].0, "webhooks[0].matchConditions[2].name");
        assert_eq!(got.len(), 4);
    }

    #[test]
    fn json_rendering_escapes_like_go() {
        assert_eq!(go_json(&json!(["a<b", "&"])), "[\"a\\u003cb\",\"\\u0026\"]");
    }

    #[test]
    fn rule_defaults() {
        let mut mc = json!({"resourceRules": [{"operations": ["*"]}, {"scope": "Cluster"}]});
        if let Some(m) = mc.as_object_mut() {
            default_match_resources(m);
        }
        assert_eq!(
            mc,
            json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [{"operations": ["*"], "scope": "*"}, {"scope": "Cluster"}]})
        );
    }
}
