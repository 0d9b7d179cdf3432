//! The create-only review APIs, answered as upstream answers them and never
//! stored: TokenReview and SelfSubjectReview (authentication.k8s.io),
//! SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview
//! and SelfSubjectRulesReview (authorization.k8s.io).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::validation::FieldError;
use crate::api::ApiError;
use crate::auth::authorizer::{Attributes, Authorizer, Decision};
use crate::auth::{Authenticator, UserInfo};

/// What the review endpoints need from the server.
#[derive(Clone)]
pub struct AuthContext {
    pub authenticator: Authenticator,
    pub authorizer: Arc<dyn Authorizer>,
    /// Issues ServiceAccount tokens (TokenRequest).
    pub tokens: Option<Arc<crate::auth::serviceaccount::TokenIssuer>>,
}

fn user_json(u: &UserInfo) -> Value {
    let mut v = json!({"username": u.name, "groups": u.groups});
    if !u.uid.is_empty() {
        v["uid"] = json!(u.uid);
    }
    if !u.extra.is_empty() {
        v["extra"] = json!(u.extra);
    }
    v
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Echoes the request object with a status, as upstream returns reviews
/// (`metadata: {}`: since v1.34 a zero creationTimestamp is omitted).
fn answer(mut body: Value, status: Value) -> Value {
    if let Some(m) = body.as_object_mut() {
        m.insert("status".into(), status);
        m.entry("metadata").or_insert_with(|| json!({}));
    }
    body
}

fn invalid(group: &str, kind: &str, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid(
        group,
        kind,
        "",
        errs.iter().map(FieldError::to_cause).collect(),
    )
}

async fn decide(
    authz: &dyn Authorizer,
    user: &UserInfo,
    spec: &Value,
    namespace_override: Option<&str>,
) -> Value {
    let ra = &spec["resourceAttributes"];
    let nra = &spec["nonResourceAttributes"];
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    let (verb, path, group, version, ns, resource, sub, name);
    let resource_request = !ra.is_null();
    if resource_request {
        verb = s(&ra["verb"]);
        group = s(&ra["group"]);
        version = s(&ra["version"]);
        ns = namespace_override
            .map(String::from)
            .unwrap_or_else(|| s(&ra["namespace"]));
        resource = s(&ra["resource"]);
        sub = s(&ra["subresource"]);
        name = s(&ra["name"]);
        path = String::new();
    } else {
        verb = s(&nra["verb"]);
        path = s(&nra["path"]);
        group = String::new();
        version = String::new();
        ns = String::new();
        resource = String::new();
        sub = String::new();
        name = String::new();
    }
    let attrs = Attributes {
        user: Some(user),
        verb: &verb,
        resource_request,
        path: &path,
        api_group: &group,
        api_version: &version,
        namespace: &ns,
        resource: &resource,
        subresource: &sub,
        name: &name,
    };
    match authz.authorize_async(&attrs).await {
        Decision::Allow(reason) => json!({"allowed": true, "reason": reason}),
        Decision::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Decision::NoOpinion => json!({"allowed": false}),
    }
}

/// Answers a review `kind` created by `requester` (in `namespace` for the local one).
pub async fn create(
    ctx: &AuthContext,
    kind: &str,
    namespace: &str,
    body: Value,
    requester: &UserInfo,
) -> Result<Value, ApiError> {
    match kind {
        "TokenReview" => {
            let token = body["spec"]["token"].as_str().unwrap_or("").to_string();
            if token.is_empty() {
                return Err(invalid(
                    "authentication.k8s.io",
                    "TokenReview",
                    vec![FieldError::required("spec.token", "")],
                ));
            }
            let targets = strings(&body["spec"]["audiences"]);
            let status = match ctx.authenticator.review_token(&token, &targets).await {
                Ok((user, audiences)) => {
                    json!({"authenticated": true, "user": user_json(&user), "audiences": audiences})
                }
                Err(why) => json!({"authenticated": false, "user": {}, "error": why}),
            };
            Ok(answer(body, status))
        }
        "SelfSubjectReview" => Ok(answer(body, json!({"userInfo": user_json(requester)}))),
        "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            let spec = body["spec"].clone();
            let group = "authorization.k8s.io";
            let mut errs = Vec::new();
            if spec["user"].as_str().unwrap_or("").is_empty() && strings(&spec["groups"]).is_empty()
            {
                errs.push(FieldError::invalid(
                    "spec.user",
                    json!(""),
                    "at least one of user or group must be specified",
                ));
            }
            if spec["resourceAttributes"].is_null() == spec["nonResourceAttributes"].is_null() {
                errs.push(FieldError::invalid(
                    "spec.resourceAttributes",
                    Value::Null,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                ));
            }
            if kind == "LocalSubjectAccessReview" {
                let asked = spec["resourceAttributes"]["namespace"]
                    .as_str()
                    .unwrap_or("");
                if !spec["nonResourceAttributes"].is_null() {
                    errs.push(FieldError::invalid(
                        "spec.nonResourceAttributes",
                        spec["nonResourceAttributes"].clone(),
                        "disallowed on this kind of request",
                    ));
                } else if !asked.is_empty() && asked != namespace {
                    return Err(ApiError::bad_request(format!(
                        "spec.resourceAttributes.namespace must match namespace: {namespace}"
                    )));
                }
            }
            if !errs.is_empty() {
                return Err(invalid(group, kind, errs));
            }
            let user = UserInfo {
                name: spec["user"].as_str().unwrap_or("").to_string(),
                uid: spec["uid"].as_str().unwrap_or("").to_string(),
                groups: strings(&spec["groups"]),
                extra: Default::default(),
            };
            let ns = (kind == "LocalSubjectAccessReview").then_some(namespace);
            Ok(answer(
                body,
                decide(ctx.authorizer.as_ref(), &user, &spec, ns).await,
            ))
        }
        "SelfSubjectAccessReview" => {
            let spec = body["spec"].clone();
            if spec["resourceAttributes"].is_null() == spec["nonResourceAttributes"].is_null() {
                return Err(invalid(
                    "authorization.k8s.io",
                    kind,
                    vec![FieldError::invalid("spec.resourceAttributes", Value::Null, "exactly one of nonResourceAttributes or resourceAttributes must be specified")],
                ));
            }
            Ok(answer(
                body,
                decide(ctx.authorizer.as_ref(), requester, &spec, None).await,
            ))
        }
        "SelfSubjectRulesReview" => {
            let ns = body["spec"]["namespace"].as_str().unwrap_or("").to_string();
            let (resource_rules, non_resource_rules, incomplete) =
                ctx.authorizer.rules_for(requester, &ns);
            Ok(answer(
                body,
                json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": incomplete}),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
