//! Bootstrap tokens (`--enable-bootstrap-token-auth`), as upstream's
//! authenticator reads them: a bearer token `<id>.<secret>` is the Secret
//! `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`
//! marked for authentication and not expired; its user is
//! `system:bootstrap:<id>` in `system:bootstrappers` and the token's
//! `auth-extra-groups`. What kubeadm's `kubeadm join` authenticates with.

use base64::Engine;
use serde_json::Value;

use super::UserInfo;
use crate::registry::Registries;

const NAMESPACE: &str = "kube-system";
const SECRET_PREFIX: &str = "bootstrap-token-";
const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
const USER_PREFIX: &str = "system:bootstrap:";
const GROUP: &str = "system:bootstrappers";

/// `<6 of [a-z0-9]>.<16 of [a-z0-9]>`, as bootstraptokenutil.ParseToken.
fn parse(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

/// A key of the Secret's `data`, decoded.
fn data(secret: &Value, key: &str) -> String {
    secret["data"][key]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default()
}

/// Equal without a timing difference on where they first differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `system:bootstrappers` and the valid `auth-extra-groups`; `None` when
/// one of those is malformed (the token then authenticates nobody).
fn groups(secret: &Value) -> Option<Vec<String>> {
    let mut groups = vec![GROUP.to_string()];
    let extra = data(secret, "auth-extra-groups");
    for g in extra.split(',').map(str::trim).filter(|g| !g.is_empty()) {
        // ^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$
        let rest = g.strip_prefix("system:bootstrappers:")?;
        let valid = !rest.is_empty()
            && rest.len() <= 256
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
            && rest
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !valid {
            return None;
        }
        if !groups.iter().any(|have| have == g) {
            groups.push(g.to_string());
        }
    }
    Some(groups)
}

/// An unparseable expiration counts as expired, as upstream treats it.
fn expired(secret: &Value) -> bool {
    let expiration = data(secret, "expiration");
    if expiration.is_empty() {
        return false;
    }
    match chrono::DateTime::parse_from_rfc3339(&expiration) {
        Ok(t) => t <= chrono::Utc::now(),
        Err(_) => true,
    }
}

/// The user `token` stands for, if it is a valid bootstrap token.
pub async fn authenticate(registries: &Registries, token: &str) -> Option<UserInfo> {
    let (id, token_secret) = parse(token)?;
    let secrets = registries.get("", "v1", "secrets")?;
    let bytes = secrets
        .get_object(NAMESPACE, &format!("{SECRET_PREFIX}{id}"), None)
        .await
        .ok()?;
    let secret: Value = serde_json::from_slice(&bytes).ok()?;
    let refuse = |why: &str| {
        tracing::debug!(token_id = id, "bootstrap token {why}");
        None
    };
    if secret["metadata"].get("deletionTimestamp").is_some() {
        return refuse("is deleted and awaiting removal");
    }
    if secret["type"] != SECRET_TYPE || !secret["data"].is_object() {
        return refuse("has an invalid type");
    }
    if !constant_time_eq(
        data(&secret, "token-secret").as_bytes(),
        token_secret.as_bytes(),
    ) {
        return refuse("has an invalid token-secret");
    }
    if data(&secret, "token-id") != id {
        return refuse("has an invalid token-id");
    }
    if expired(&secret) {
        return refuse("has expired");
    }
    if data(&secret, "usage-bootstrap-authentication") != "true" {
        return refuse("is not marked usage-bootstrap-authentication=true");
    }
    let Some(groups) = groups(&secret) else {
        return refuse("has invalid auth-extra-groups");
    };
    Some(UserInfo {
        name: format!("{USER_PREFIX}{id}"),
        groups,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn tokens_parse_as_upstream_parses_them() {
        assert_eq!(
            parse("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        assert_eq!(parse("ABCDEF.0123456789abcdef"), None);
        assert_eq!(parse("abcde.0123456789abcdef"), None);
        assert_eq!(parse("abcdef0123456789abcdef"), None);
    }

    #[test]
    fn groups_and_expiry() {
        let s = json!({"data": {"auth-extra-groups": b64("system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:kubeadm:default-node-token")}});
        assert_eq!(
            groups(&s),
            Some(vec![
                "system:bootstrappers".to_string(),
                "system:bootstrappers:kubeadm:default-node-token".to_string()
            ])
        );
        let bad = json!({"data": {"auth-extra-groups": b64("system:masters")}});
        assert_eq!(groups(&bad), None);
        assert!(expired(
            &json!({"data": {"expiration": b64("2000-01-01T00:00:00Z")}})
        ));
        assert!(expired(&json!({"data": {"expiration": b64("soon")}})));
        assert!(!expired(
            &json!({"data": {"expiration": b64("2999-01-01T00:00:00Z")}})
        ));
        assert!(!expired(&json!({"data": {}})));
    }
}
