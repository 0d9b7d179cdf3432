//! Authorization: the `Authorizer` trait, the modes of
//! `--authorization-mode` that need no stored policy (AlwaysAllow,
//! AlwaysDeny), the privileged-group shortcut upstream puts in front of
//! them, and the chain. RBAC itself is in `crate::auth::rbac`: the bootstrap
//! policy is stored objects (`system:public-info-viewer` lets anyone read
//! health and version, `system:discovery` and `system:basic-user` are
//! bound to `system:authenticated`).

use crate::authentication::{UserInfo, MASTERS_GROUP};

/// upstream `authorizer.Attributes`.
#[derive(Debug, Clone, Default)]
pub struct Attributes<'a> {
    pub user: Option<&'a UserInfo>,
    pub verb: &'a str,
    pub resource_request: bool,
    pub path: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    pub namespace: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow(String),
    Deny(String),
    /// This authorizer has no opinion; the next one decides.
    NoOpinion,
}

pub trait Authorizer: Send + Sync + std::fmt::Debug {
    /// The decision from what this server holds. A remote authorizer (the
    /// webhook) has no opinion here; see [`Authorizer::authorize_async`].
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision;

    /// The decision, asking remote authorizers too: what requests use.
    fn authorize_async<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
    ) -> futures::future::BoxFuture<'a, Decision> {
        Box::pin(std::future::ready(self.authorize(attrs)))
    }

    /// The decision when it can be made without waiting on anyone:
    /// what [`Authorizer::authorize_async`] would answer, or `None` when
    /// that needs a remote service or data not at hand. Lets a request be
    /// allowed without a future of its own for the decision.
    fn authorize_now(&self, attrs: &Attributes<'_>) -> Option<Decision> {
        Some(self.authorize(attrs))
    }

    /// Waits until decisions reflect every policy write the server
    /// acknowledged before the call, so a client that grants a permission
    /// can use it in its next request. Called before deciding again a
    /// request [`Authorizer::authorize`] did not allow.
    fn settle(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// What `user` may do in `namespace`, for SelfSubjectRulesReview:
    /// (resourceRules, nonResourceRules, incomplete) as JSON values.
    fn rules_for(
        &self,
        _user: &UserInfo,
        _namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        (Vec::new(), Vec::new(), true)
    }
}

/// `--authorization-mode=AlwaysAllow`.
#[derive(Debug)]
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::Allow(String::new())
    }

    fn rules_for(
        &self,
        _user: &UserInfo,
        _namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        let (r, n) = everything();
        (r, n, false)
    }
}

/// `--authorization-mode=AlwaysDeny`: no opinion on anything, as
/// upstream's (so a later mode may still allow).
#[derive(Debug)]
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::NoOpinion
    }

    fn rules_for(
        &self,
        _user: &UserInfo,
        _namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        (Vec::new(), Vec::new(), false)
    }
}

/// upstream's privileged-group authorizer, in front of every other mode:
/// members of `system:masters` may do anything.
#[derive(Debug, Clone)]
pub struct PrivilegedGroups(pub Vec<String>);

impl Default for PrivilegedGroups {
    fn default() -> Self {
        PrivilegedGroups(vec![MASTERS_GROUP.to_string()])
    }
}

impl PrivilegedGroups {
    fn holds(&self, user: &UserInfo) -> bool {
        self.0.iter().any(|g| user.in_group(g))
    }
}

/// Every verb on everything, as SelfSubjectRulesReview shows it.
fn everything() -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    (
        vec![serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
        vec![serde_json::json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
    )
}

impl Authorizer for PrivilegedGroups {
    fn authorize(&self, a: &Attributes<'_>) -> Decision {
        match a.user {
            Some(user) if self.holds(user) => Decision::Allow(String::new()),
            _ => Decision::NoOpinion,
        }
    }

    fn rules_for(
        &self,
        user: &UserInfo,
        _namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        if self.holds(user) {
            let (r, n) = everything();
            return (r, n, false);
        }
        (Vec::new(), Vec::new(), false)
    }
}

/// An ordered list of authorizers; the first decision wins, no opinion at the end is a deny.
#[derive(Debug)]
pub struct Chain(pub Vec<Box<dyn Authorizer>>);

impl Authorizer for Chain {
    fn authorize(&self, a: &Attributes<'_>) -> Decision {
        for z in &self.0 {
            match z.authorize(a) {
                Decision::NoOpinion => continue,
                d => return d,
            }
        }
        Decision::NoOpinion
    }

    fn authorize_now(&self, a: &Attributes<'_>) -> Option<Decision> {
        for z in &self.0 {
            match z.authorize_now(a)? {
                Decision::NoOpinion => continue,
                d => return Some(d),
            }
        }
        Some(Decision::NoOpinion)
    }

    fn authorize_async<'a>(
        &'a self,
        a: &'a Attributes<'a>,
    ) -> futures::future::BoxFuture<'a, Decision> {
        Box::pin(async move {
            for z in &self.0 {
                match z.authorize_async(a).await {
                    Decision::NoOpinion => continue,
                    d => return d,
                }
            }
            Decision::NoOpinion
        })
    }

    fn settle(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            for z in &self.0 {
                z.settle().await;
            }
        })
    }

    fn rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        let (mut r, mut n, mut incomplete) = (Vec::new(), Vec::new(), false);
        for z in &self.0 {
            let (zr, zn, zi) = z.rules_for(user, namespace);
            r.extend(zr);
            n.extend(zn);
            incomplete |= zi;
        }
        (r, n, incomplete)
    }
}

/// upstream's forbidden message, e.g. `User "u" cannot list resource "pods" in API group "" in the namespace "n"`.
pub fn forbidden_message(a: &Attributes<'_>) -> String {
    let user = a.user.map_or("", |u| u.name.as_str());
    if !a.resource_request {
        return format!("User {user:?} cannot {} path {:?}", a.verb, a.path);
    }
    let resource = if a.subresource.is_empty() {
        a.resource.to_string()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let mut msg = format!(
        "User {user:?} cannot {} resource {resource:?} in API group {:?}",
        a.verb, a.api_group
    );
    if a.namespace.is_empty() {
        msg.push_str(" at the cluster scope");
    } else {
        msg.push_str(&format!(" in the namespace {:?}", a.namespace));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn masters_may_do_anything_others_get_no_opinion() {
        let admin = user("admin", &[MASTERS_GROUP, "system:authenticated"]);
        let bob = user("bob", &["system:authenticated"]);
        let list_pods = |u| Attributes {
            user: Some(u),
            verb: "list",
            resource_request: true,
            resource: "pods",
            namespace: "n",
            ..Default::default()
        };
        let z = PrivilegedGroups::default();
        assert!(matches!(
            z.authorize(&list_pods(&admin)),
            Decision::Allow(_)
        ));
        assert_eq!(z.authorize(&list_pods(&bob)), Decision::NoOpinion);
        assert_eq!(z.rules_for(&admin, "n").0.len(), 1);
        assert!(z.rules_for(&bob, "n").0.is_empty());
        let chain = Chain(vec![Box::new(z.clone()), Box::new(AlwaysAllow)]);
        assert!(matches!(
            chain.authorize(&list_pods(&bob)),
            Decision::Allow(_)
        ));
        let deny = Chain(vec![Box::new(z), Box::new(AlwaysDeny)]);
        assert!(matches!(
            deny.authorize(&list_pods(&admin)),
            Decision::Allow(_)
        ));
        assert_eq!(deny.authorize(&list_pods(&bob)), Decision::NoOpinion);
        assert_eq!(
            forbidden_message(&list_pods(&bob)),
            "User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"n\""
        );
        let path = Attributes {
            user: Some(&bob),
            verb: "get",
            path: "/metrics",
            ..Default::default()
        };
        assert_eq!(
            forbidden_message(&path),
            "User \"bob\" cannot get path \"/metrics\""
        );
    }
}
