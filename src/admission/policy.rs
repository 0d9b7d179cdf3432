//! ValidatingAdmissionPolicy, as upstream's `admission/plugin/policy/validating`:
//! admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies and their
//! ValidatingAdmissionPolicyBindings (read from the watch cache on each
//! request) validate requests with CEL.
//!
//! A policy applies when its matchConstraints match (resourceRules with
//! resourceNames, excludeResourceRules, namespaceSelector, objectSelector,
//! matchPolicy); each binding of it that matches (its own matchResources)
//! evaluates the policy once per param (paramKind + the binding's paramRef:
//! by name or selector, with parameterNotFoundAction), with `object`,
//! `oldObject`, `request`, `params`, `namespaceObject` and `variables.<name>`
//! in CEL. matchConditions false skip; a validation not true is a failure
//! the binding's validationActions turn into a refusal (Deny), a warning
//! (Warn) or nothing (Audit: kapi keeps no audit log). Errors (CEL,
//! configuration) follow the policy's failurePolicy.
//!
//! A refusal reads as upstream's: `<resource> "<name>" is forbidden:
//! ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied
//! request: <message>`, with the validation's reason (Invalid, 422, when it
//! names none). There is no `authorizer` variable and no type checking of
//! expressions against the kinds' schemas; policy status is not written.

use serde_json::Value;

use super::matching::{
    self, exempt, get_namespace, namespace_matches, object_matches, request_json, str_of, Cached,
    Rule,
};
use super::webhook::conditions;
use super::{Attributes, Context, ValidatingPlugin};
use crate::api::selector::LabelSelector;
use crate::api::{ApiError, Reason};
use crate::cel::admission::{Activation, Outcome};
use crate::registry::ListParams;

/// `matchConstraints` of a policy, `matchResources` of a binding.
struct MatchResources {
    namespace_selector: Result<LabelSelector, String>,
    object_selector: Result<LabelSelector, String>,
    rules: Vec<Rule>,
    exclude: Vec<Rule>,
    equivalent: bool,
}

impl MatchResources {
    fn from_json(v: &Value) -> MatchResources {
        MatchResources {
            namespace_selector: matching::selector(&v["namespaceSelector"]),
            object_selector: matching::selector(&v["objectSelector"]),
            rules: Rule::list(&v["resourceRules"]),
            exclude: Rule::list(&v["excludeResourceRules"]),
            equivalent: str_of(v, "matchPolicy") != "Exact",
        }
    }

    /// Upstream's matching.Matcher; an error is a configuration error.
    async fn matches(&self, a: &Attributes<'_>, ctx: &Context) -> Result<bool, ApiError> {
        if self.rules_match(&self.exclude, a, ctx) {
            return Ok(false);
        }
        if !self.rules.is_empty() && !self.rules_match(&self.rules, a, ctx) {
            return Ok(false);
        }
        Ok(namespace_matches(&self.namespace_selector, a, ctx).await?
            && object_matches(&self.object_selector, a)?)
    }

    fn rules_match(&self, rules: &[Rule], a: &Attributes<'_>, ctx: &Context) -> bool {
        let named =
            |r: &Rule| r.resource_names.is_empty() || r.resource_names.iter().any(|n| n == a.name);
        rules.iter().any(|r| r.matches(a, None) && named(r))
            || (self.equivalent
                && rules
                    .iter()
                    .any(|r| r.matches(a, Some(&ctx.registries)) && named(r)))
    }
}

struct Validation {
    expression: String,
    message: String,
    message_expression: String,
    reason: Option<String>,
}

struct Policy {
    name: String,
    fail_open: bool,
    constraints: Option<MatchResources>,
    /// `paramKind` as (apiVersion, kind).
    param_kind: Option<(String, String)>,
    match_conditions: Vec<(String, String)>,
    validations: Vec<Validation>,
    variables: Vec<(String, String)>,
}

fn parse_policy(v: &Value) -> Policy {
    let spec = &v["spec"];
    Policy {
        name: v["metadata"]["name"].as_str().unwrap_or("").to_string(),
        fail_open: str_of(spec, "failurePolicy") == "Ignore",
        constraints: spec
            .get("matchConstraints")
            .filter(|m| m.is_object())
            .map(MatchResources::from_json),
        param_kind: spec.get("paramKind").filter(|p| p.is_object()).map(|p| {
            (
                str_of(p, "apiVersion").to_string(),
                str_of(p, "kind").to_string(),
            )
        }),
        match_conditions: conditions(&spec["matchConditions"]),
        validations: spec["validations"]
            .as_array()
            .map(|vs| {
                vs.iter()
                    .map(|x| Validation {
                        expression: str_of(x, "expression").to_string(),
                        message: str_of(x, "message").to_string(),
                        message_expression: str_of(x, "messageExpression").to_string(),
                        reason: x["reason"]
                            .as_str()
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        variables: spec["variables"]
            .as_array()
            .map(|vs| {
                vs.iter()
                    .map(|x| {
                        (
                            str_of(x, "name").to_string(),
                            str_of(x, "expression").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

struct Binding {
    name: String,
    policy_name: String,
    param_ref: Option<Value>,
    match_resources: Option<MatchResources>,
    actions: Vec<String>,
}

fn parse_binding(v: &Value) -> Binding {
    let spec = &v["spec"];
    Binding {
        name: v["metadata"]["name"].as_str().unwrap_or("").to_string(),
        policy_name: str_of(spec, "policyName").to_string(),
        param_ref: spec.get("paramRef").filter(|p| p.is_object()).cloned(),
        match_resources: spec
            .get("matchResources")
            .filter(|m| m.is_object())
            .map(MatchResources::from_json),
        actions: matching::strings(&spec["validationActions"]),
    }
}

/// One outcome of a validation (or of the match conditions) that is not an admit.
struct Failure {
    /// Whether the validationActions apply (a failure) rather than an
    /// error the failurePolicy let through.
    deny: bool,
    message: String,
    reason: Option<String>,
}

/// A refusal to report: policy, binding, message, reason.
struct Denied {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: Option<String>,
}

/// upstream's CollectParams: the params a binding evaluates its policy with
/// (`None` for a policy without paramKind or a binding without paramRef).
async fn collect_params(
    p: &Policy,
    b: &Binding,
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<Vec<Option<Value>>, String> {
    let (Some((api_version, kind)), Some(pref)) = (&p.param_kind, &b.param_ref) else {
        return Ok(vec![None]);
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let res = ctx
        .registries
        .catalog
        .all()
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.kind == *kind)
        .ok_or_else(|| {
            format!(
                "paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{kind},}}` not known"
            )
        })?;
    let reg = ctx
        .registries
        .get(&res.group, &res.version, &res.plural)
        .ok_or_else(|| {
            format!(
                "paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{kind},}}` not known"
            )
        })?;
    let ref_ns = str_of(pref, "namespace");
    let ns = if res.namespaced {
        if !ref_ns.is_empty() {
            ref_ns
        } else if !a.namespace.is_empty() {
            a.namespace
        } else {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
        }
    } else if !ref_ns.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    } else {
        ""
    };
    let name = str_of(pref, "name");
    let selector = pref.get("selector").filter(|s| !s.is_null());
    let found: Vec<Value> = if !name.is_empty() {
        if selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        // The cache first; a param created just now may only be in storage.
        let got = match reg.get_object(ns, name, Some("0")).await {
            Err(e) if e.code == 404 => reg.get_object(ns, name, None).await,
            other => other,
        };
        match got {
            Ok(bytes) => vec![serde_json::from_slice(&bytes).map_err(|e| e.to_string())?],
            Err(e) if e.code == 404 => Vec::new(),
            Err(e) => return Err(e.message),
        }
    } else if let Some(sel) = selector {
        let sel = matching::selector(sel)?;
        let list = reg
            .list(
                ns,
                &ListParams {
                    resource_version: Some(reg.fresh_rv()),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| e.message)?;
        list.items
            .iter()
            .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
            .filter(|v| sel.matches(&matching::labels(v)))
            .collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if found.is_empty() && str_of(pref, "parameterNotFoundAction") == "Deny" {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found.into_iter().map(Some).collect())
}

/// upstream's CreateNamespaceObject: what `namespaceObject` shows.
fn namespace_object(ns: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let mut meta = serde_json::Map::new();
    for k in [
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ] {
        if let Some(v) = ns["metadata"].get(k).filter(|v| !v.is_null()) {
            meta.insert(k.into(), v.clone());
        }
    }
    out.insert("metadata".into(), Value::Object(meta));
    for k in ["spec", "status"] {
        if let Some(v) = ns.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// upstream's validator.Validate for one param: the failures (and errors
/// the failurePolicy does not let through).
fn evaluate(
    p: &Policy,
    a: &Attributes<'_>,
    request: &Value,
    params: Option<&Value>,
    namespace: Option<&Value>,
) -> Vec<Failure> {
    let mut act = Activation::new(&[
        ("object", a.object.as_ref()),
        ("oldObject", a.old_object),
        ("request", Some(request)),
        ("params", params),
        ("namespaceObject", namespace),
    ]);
    for (name, expression) in &p.variables {
        act.define_variable(name, expression);
    }
    if !p.match_conditions.is_empty() {
        match matching::match_conditions(&p.match_conditions, &mut act, p.fail_open) {
            Ok(true) => {}
            Ok(false) => return Vec::new(),
            Err(message) => {
                return vec![Failure {
                    deny: true,
                    message,
                    reason: None,
                }]
            }
        }
    }
    let mut out = Vec::new();
    for v in &p.validations {
        match act.eval(&v.expression) {
            Ok(Outcome::Bool(true)) => {}
            Err(message) => {
                if !p.fail_open {
                    out.push(Failure {
                        deny: true,
                        message,
                        reason: None,
                    });
                }
            }
            Ok(_) => {
                let mut message = String::new();
                if !v.message_expression.is_empty() {
                    if let Ok(Outcome::String(m)) = act.eval(&v.message_expression) {
                        let m = m.trim();
                        if m.len() <= 5 * 1024 && !m.contains('\n') {
                            message = m.to_string();
                        }
                    }
                }
                if message.is_empty() && !v.message.trim().is_empty() {
                    message = v.message.trim().to_string();
                }
                if message.is_empty() {
                    message = format!("failed expression: {}", v.expression.trim());
                }
                out.push(Failure {
                    deny: true,
                    message,
                    reason: Some(v.reason.clone().unwrap_or_else(|| "Invalid".into())),
                });
            }
        }
    }
    out
}

/// The refusal of the first denial, as upstream's dispatcher builds it.
fn refusal(a: &Attributes<'_>, d: &Denied) -> ApiError {
    let message = match &d.binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
            d.policy, d.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            d.policy, d.message
        ),
    };
    let mut e = matching::forbidden(a, &message);
    let reason = d.reason.as_deref().unwrap_or("Invalid");
    e.reason = Reason::parse(reason);
    e.code = match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    if let Some(details) = e.details.as_mut() {
        details.causes = Some(vec![
            k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                message: Some(message),
                ..Default::default()
            },
        ]);
    }
    e
}

pub struct ValidatingAdmissionPolicy {
    policies: Cached<Policy>,
    bindings: Cached<Binding>,
}

impl Default for ValidatingAdmissionPolicy {
    fn default() -> Self {
        ValidatingAdmissionPolicy {
            policies: Cached::new("validatingadmissionpolicies", parse_policy),
            bindings: Cached::new("validatingadmissionpolicybindings", parse_binding),
        }
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if exempt(a) {
            return Ok(Vec::new());
        }
        let not_ready = |_| matching::forbidden(a, "not yet ready to handle request");
        let policies = self
            .policies
            .get(&ctx.registries)
            .await
            .map_err(not_ready)?;
        if policies.is_empty() {
            return Ok(Vec::new());
        }
        let bindings = self
            .bindings
            .get(&ctx.registries)
            .await
            .map_err(not_ready)?;
        if bindings.is_empty() {
            return Ok(Vec::new());
        }
        let request = request_json(a, None);
        let mut warnings = Vec::new();
        let mut denied: Vec<Denied> = Vec::new();
        let config_error =
            |denied: &mut Vec<Denied>, p: &Policy, b: Option<&Binding>, why: String| {
                if p.fail_open {
                    return;
                }
                let what = if b.is_some() { "binding" } else { "policy" };
                denied.push(Denied {
                    policy: p.name.clone(),
                    binding: b.map(|b| b.name.clone()),
                    message: format!("failed to configure {what}: {why}"),
                    reason: None,
                });
            };
        // The namespace a namespaced request is in (a Namespace is in none).
        let ns_name = if a.resource.group.is_empty() && a.resource.kind == "Namespace" {
            ""
        } else {
            a.namespace
        };
        let mut namespace: Option<Option<Value>> = None;
        for p in policies.iter() {
            let Some(constraints) = &p.constraints else {
                continue;
            };
            match constraints.matches(a, ctx).await {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    config_error(&mut denied, p, None, e.message);
                    continue;
                }
            }
            for b in bindings.iter().filter(|b| b.policy_name == p.name) {
                if let Some(mr) = &b.match_resources {
                    match mr.matches(a, ctx).await {
                        Ok(true) => {}
                        Ok(false) => continue,
                        Err(e) => {
                            config_error(&mut denied, p, Some(b), e.message);
                            continue;
                        }
                    }
                }
                let params = match collect_params(p, b, a, ctx).await {
                    Ok(params) => params,
                    Err(why) => {
                        config_error(&mut denied, p, Some(b), why);
                        continue;
                    }
                };
                if namespace.is_none() {
                    namespace = Some(if ns_name.is_empty() {
                        None
                    } else {
                        Some(namespace_object(&get_namespace(ctx, ns_name).await?))
                    });
                }
                let ns = namespace.as_ref().and_then(Option::as_ref);
                for param in &params {
                    for f in evaluate(p, a, &request, param.as_ref(), ns) {
                        if !f.deny {
                            continue;
                        }
                        for action in &b.actions {
                            match action.as_str() {
                                "Deny" => denied.push(Denied {
                                    policy: p.name.clone(),
                                    binding: Some(b.name.clone()),
                                    message: f.message.clone(),
                                    reason: f.reason.clone(),
                                }),
                                "Warn" => warnings.push(format!(
                                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                                    p.name, b.name, f.message
                                )),
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        match denied.first() {
            Some(d) => Err(refusal(a, d)),
            None => Ok(warnings),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::UserInfo;
    use serde_json::json;

    #[test]
    fn validations_and_refusals_as_upstream() {
        let mut r = crate::api::catalog::Resource::from_builtin(&crate::api::builtin::BUILTINS[0]);
        r.group = "apps".into();
        r.version = "v1".into();
        r.plural = "deployments".into();
        r.kind = "Deployment".into();
        let user = UserInfo::default();
        let a = Attributes {
            operation: super::super::Operation::Create,
            resource: &r,
            subresource: "",
            namespace: "default",
            name: "d",
            object: Some(json!({"metadata": {"name": "d"}, "spec": {"replicas": 6}})),
            old_object: None,
            user: &user,
            dry_run: false,
            options: Value::Null,
        };
        let p = parse_policy(&json!({"metadata": {"name": "max"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
        "variables": [{"name": "limit", "expression": "params == null ? 5 : int(params.data.max)"}],
        "validations": [
            {"expression": "object.spec.replicas <= variables.limit"},
            {"expression": "object.spec.replicas < 3", "messageExpression": "'too many: ' + string(object.spec.replicas)", "reason": "Forbidden"},
            {"expression": "object.spec.nope == 1"},
        ]}}));
        let request = request_json(&a, None);
        let fs = evaluate(&p, &a, &request, None, None);
        assert_eq!(fs.len(), 3);
        assert_eq!(
            fs[0].message,
            "failed expression: object.spec.replicas <= variables.limit"
        );
        assert_eq!(fs[1].message, "too many: 6");
        assert_eq!(fs[1].reason.as_deref(), Some("Forbidden"));
        assert!(
            fs[2]
                .message
                .starts_with("expression 'object.spec.nope == 1' resulted in error: "),
            "{}",
            fs[2].message
        );
        let params = json!({"data": {"max": "10"}});
        let fs = evaluate(&p, &a, &request, Some(&params), None);
        assert_eq!(fs.len(), 2);
        let e = refusal(
            &a,
            &Denied {
                policy: "max".into(),
                binding: Some("b".into()),
                message: "failed expression: x".into(),
                reason: None,
            },
        );
        assert_eq!(e.code, 422);
        assert_eq!(e.reason, Reason::Invalid);
        assert_eq!(e.message, "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'max' with binding 'b' denied request: failed expression: x");
    }
}
