//! Authorization: the `Authorizer` trait and the policy kapi enforces until
//! RBAC objects are served. Out of the box kapi behaves as a kubeadm
//! cluster with only its bootstrap policy: `system:masters` may do
//! anything, anyone may read health and version, authenticated users may
//! read discovery, and nothing else is allowed.

use super::{UserInfo, AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP};

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
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision;

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
}

/// `--authorization-mode=AlwaysDeny`.
#[derive(Debug)]
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::Deny(String::new())
    }
}

/// One RBAC `PolicyRule`, kept as plain strings so the static bootstrap
/// policy and stored roles match through the same code.
#[derive(Debug, Clone)]
pub struct Rule {
    pub verbs: &'static [&'static str],
    pub api_groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub non_resource_urls: &'static [&'static str],
}

fn has(list: &[&str], want: &str) -> bool {
    list.iter().any(|x| *x == "*" || *x == want)
}

impl Rule {
    pub fn matches(&self, a: &Attributes<'_>) -> bool {
        if !has(self.verbs, a.verb) {
            return false;
        }
        if a.resource_request {
            let combined = if a.subresource.is_empty() {
                a.resource.to_string()
            } else {
                format!("{}/{}", a.resource, a.subresource)
            };
            has(self.api_groups, a.api_group)
                && self.resources.iter().any(|r| *r == "*" || *r == combined)
        } else {
            self.non_resource_urls
                .iter()
                .any(|u| match u.strip_suffix('*') {
                    Some(prefix) => a.path.starts_with(prefix),
                    None => *u == a.path,
                })
        }
    }
}

/// upstream's `system:public-info-viewer`.
const PUBLIC_INFO_VIEWER: &[Rule] = &[Rule {
    verbs: &["get"],
    api_groups: &[],
    resources: &[],
    non_resource_urls: &["/healthz", "/livez", "/readyz", "/version", "/version/"],
}];

/// upstream's `system:discovery` and `system:basic-user`.
const AUTHENTICATED: &[Rule] = &[
    Rule {
        verbs: &["get"],
        api_groups: &[],
        resources: &[],
        non_resource_urls: &[
            "/api",
            "/api/*",
            "/apis",
            "/apis/*",
            "/healthz",
            "/livez",
            "/openapi",
            "/openapi/*",
            "/readyz",
            "/version",
            "/version/",
        ],
    },
    Rule {
        verbs: &["create"],
        api_groups: &["authorization.k8s.io"],
        resources: &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        non_resource_urls: &[],
    },
    Rule {
        verbs: &["create"],
        api_groups: &["authentication.k8s.io"],
        resources: &["selfsubjectreviews"],
        non_resource_urls: &[],
    },
];

/// The privileged-group shortcut plus the bootstrap cluster roles bound to
/// the built-in groups, as upstream's RBAC authorizer decides them.
#[derive(Debug, Default)]
pub struct BootstrapPolicy;

impl Authorizer for BootstrapPolicy {
    fn authorize(&self, a: &Attributes<'_>) -> Decision {
        let Some(user) = a.user else {
            return Decision::NoOpinion;
        };
        if user.in_group(MASTERS_GROUP) {
            return Decision::Allow(format!("user is in group {MASTERS_GROUP:?}"));
        }
        if (user.in_group(AUTHENTICATED_GROUP) || user.in_group(UNAUTHENTICATED_GROUP))
            && PUBLIC_INFO_VIEWER.iter().any(|r| r.matches(a))
        {
            return Decision::Allow(
                "allowed by ClusterRoleBinding \"system:public-info-viewer\"".into(),
            );
        }
        if user.in_group(AUTHENTICATED_GROUP) && AUTHENTICATED.iter().any(|r| r.matches(a)) {
            return Decision::Allow("allowed by ClusterRoleBinding \"system:discovery\"".into());
        }
        Decision::NoOpinion
    }

    fn rules_for(
        &self,
        user: &UserInfo,
        _namespace: &str,
    ) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, bool) {
        if user.in_group(MASTERS_GROUP) {
            return (
                vec![serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
                vec![serde_json::json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
                false,
            );
        }
        let mut rules: Vec<&Rule> = Vec::new();
        if user.in_group(AUTHENTICATED_GROUP) || user.in_group(UNAUTHENTICATED_GROUP) {
            rules.extend(PUBLIC_INFO_VIEWER.iter());
        }
        if user.in_group(AUTHENTICATED_GROUP) {
            rules.extend(AUTHENTICATED.iter());
        }
        let (mut r, mut n) = (Vec::new(), Vec::new());
        for rule in rules {
            let (a, b) = rule_json(rule);
            r.extend(a);
            n.extend(b);
        }
        (r, n, false)
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

fn rule_json(rule: &Rule) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    if rule.non_resource_urls.is_empty() {
        (
            Some(
                serde_json::json!({"verbs": rule.verbs, "apiGroups": rule.api_groups, "resources": rule.resources}),
            ),
            None,
        )
    } else {
        (
            None,
            Some(
                serde_json::json!({"verbs": rule.verbs, "nonResourceURLs": rule.non_resource_urls}),
            ),
        )
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
    fn anonymous_sees_only_public_info() {
        let anon = UserInfo::anonymous();
        let path = |p: &'static str| Attributes {
            user: Some(&anon),
            verb: "get",
            path: p,
            ..Default::default()
        };
        assert!(matches!(
            BootstrapPolicy.authorize(&path("/readyz")),
            Decision::Allow(_)
        ));
        assert!(matches!(
            BootstrapPolicy.authorize(&path("/version")),
            Decision::Allow(_)
        ));
        assert_eq!(
            BootstrapPolicy.authorize(&path("/api")),
            Decision::NoOpinion
        );
        assert_eq!(
            BootstrapPolicy.authorize(&path("/metrics")),
            Decision::NoOpinion
        );
    }

    #[test]
    fn masters_may_do_anything_others_only_discovery() {
        let admin = user("admin", &[MASTERS_GROUP, AUTHENTICATED_GROUP]);
        let bob = user("bob", &[AUTHENTICATED_GROUP]);
        let list_pods = |u| Attributes {
            user: Some(u),
            verb: "list",
            resource_request: true,
            resource: "pods",
            namespace: "n",
            ..Default::default()
        };
        assert!(matches!(
            BootstrapPolicy.authorize(&list_pods(&admin)),
            Decision::Allow(_)
        ));
        assert_eq!(
            BootstrapPolicy.authorize(&list_pods(&bob)),
            Decision::NoOpinion
        );
        let disc = Attributes {
            user: Some(&bob),
            verb: "get",
            path: "/apis/apps/v1",
            ..Default::default()
        };
        assert!(matches!(
            BootstrapPolicy.authorize(&disc),
            Decision::Allow(_)
        ));
        assert_eq!(
            forbidden_message(&list_pods(&bob)),
            "User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"n\""
        );
    }
}
