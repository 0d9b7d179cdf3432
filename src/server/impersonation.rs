//! The impersonation filter (upstream's `filters/impersonation.go`): a
//! request acting as another user, allowed one `impersonate` check at a time.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};

use super::filters::{names, nosniff, ChainState};
use super::handler_chain::Next;
use crate::api::ApiError;
use crate::auth::authenticator::Authenticated;
use crate::auth::authorizer::{forbidden_message, Attributes, Decision};

/// Whether the request names anyone to act as (an `Impersonate-*` header).
pub(in crate::server) fn impersonates(req: &Request) -> bool {
    req.headers()
        .keys()
        .any(|name| name.as_str().starts_with("impersonate-"))
}

/// upstream's WithImpersonation: `Impersonate-User`, `-Group`, `-Uid` and
/// `-Extra-<key>` act as another user when the requester may `impersonate`
/// each of them.
pub(in crate::server) async fn impersonation(
    s: Arc<ChainState>,
    mut req: Request,
    next: Next,
) -> Response {
    let headers = req.headers();
    let get_all = |name: http::HeaderName| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            // Header bytes that are not text are still a request to act as
            // someone (Go keeps them as they are): never drop one silently
            // and run as the caller.
            .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
            .filter(|v| !v.is_empty())
            .collect()
    };
    let users = get_all(names::IMPERSONATE_USER);
    let groups = get_all(names::IMPERSONATE_GROUP);
    let uids = get_all(names::IMPERSONATE_UID);
    let mut extra: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for (name, value) in headers.iter() {
        if let Some(key) = name.as_str().strip_prefix("impersonate-extra-") {
            extra
                .entry(crate::api::request_info::percent_decode(key))
                .or_default()
                .push(String::from_utf8_lossy(value.as_bytes()).to_string());
        }
    }
    if users.is_empty() && groups.is_empty() && uids.is_empty() && extra.is_empty() {
        return next.run(req).await;
    }
    let Some(requester) = req.extensions().get::<Authenticated>().cloned() else {
        return ApiError::unauthorized().into_response();
    };
    let Some(user) = users.first().cloned() else {
        let what = if !groups.is_empty() {
            "groups"
        } else if !uids.is_empty() {
            "uid"
        } else {
            "user extras"
        };
        return ApiError::bad_request(format!(
            "requested impersonation of {what} without impersonating a user"
        ))
        .into_response();
    };
    // Each impersonated attribute needs its own `impersonate` permission.
    // (group, resource, subresource, namespace, name); each extra key is its
    // own `userextras/<key>` subresource, as upstream authorizes it.
    let mut checks: Vec<(&str, &str, String, String, String)> = Vec::new();
    match user
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, name)) => checks.push((
            "",
            "serviceaccounts",
            String::new(),
            ns.to_string(),
            name.to_string(),
        )),
        None => checks.push(("", "users", String::new(), String::new(), user.clone())),
    }
    for g in &groups {
        checks.push(("", "groups", String::new(), String::new(), g.clone()));
    }
    for u in &uids {
        checks.push((
            "authentication.k8s.io",
            "uids",
            String::new(),
            String::new(),
            u.clone(),
        ));
    }
    for (key, values) in &extra {
        for v in values {
            checks.push((
                "authentication.k8s.io",
                "userextras",
                key.clone(),
                String::new(),
                v.clone(),
            ));
        }
    }
    for (group, resource, sub, ns, name) in &checks {
        let attrs = Attributes {
            user: Some(&requester.user),
            verb: "impersonate",
            resource_request: true,
            path: "",
            api_group: group,
            api_version: "",
            namespace: ns,
            resource,
            subresource: sub,
            name,
        };
        if !matches!(
            s.authorizer.authorize_async(&attrs).await,
            Decision::Allow(_)
        ) {
            let why = forbidden_message(&attrs);
            let qualified = crate::api::status::qualified_resource(group, resource);
            return nosniff(
                ApiError::forbidden(format!(
                    "{qualified} {} is forbidden: {why}",
                    crate::api::go_quote(&name)
                ))
                .with_details(Some(
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                        name: Some(name.clone()),
                        group: (!group.is_empty()).then(|| group.to_string()),
                        kind: Some(resource.to_string()),
                        ..Default::default()
                    },
                ))
                .into_response(),
            );
        }
    }
    let mut impersonated = crate::auth::UserInfo {
        name: user.clone(),
        uid: uids.first().cloned().unwrap_or_default(),
        groups,
        extra,
    };
    if user == crate::auth::ANONYMOUS_USER {
        impersonated
            .groups
            .push(crate::auth::UNAUTHENTICATED_GROUP.into());
    } else {
        if let Some((ns, _)) = user
            .strip_prefix("system:serviceaccount:")
            .and_then(|r| r.split_once(':'))
        {
            impersonated.groups.push("system:serviceaccounts".into());
            impersonated
                .groups
                .push(format!("system:serviceaccounts:{ns}"));
        }
        impersonated = impersonated.with_authenticated_group();
    }
    for h in ["impersonate-user", "impersonate-group", "impersonate-uid"] {
        req.headers_mut().remove(h);
    }
    req.extensions_mut().insert(Authenticated {
        user: impersonated.into(),
        method: requester.method,
    });
    next.run(req).await
}
