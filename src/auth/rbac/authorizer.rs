//! `--authorization-mode=RBAC`: the [`Authorizer`] over the shared index,
//! and the rules as SelfSubjectRulesReview shows them.

use serde_json::{json, Value};

use super::{PolicyRule, SharedIndex};
use crate::auth::authorizer::{Attributes, Authorizer, Decision};
use crate::auth::UserInfo;

/// `--authorization-mode=RBAC`.
#[derive(Debug, Clone)]
pub struct RbacAuthorizer {
    pub index: SharedIndex,
}

/// Rules as SelfSubjectRulesReview shows them.
pub fn rules_json(rules: &[PolicyRule]) -> (Vec<Value>, Vec<Value>) {
    let (mut resource, mut non_resource) = (Vec::new(), Vec::new());
    for r in rules {
        if !r.resources.is_empty() {
            let mut v = json!({"verbs": r.verbs});
            if !r.api_groups.is_empty() {
                v["apiGroups"] = json!(r.api_groups);
            }
            v["resources"] = json!(r.resources);
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            resource.push(v);
        }
        if !r.non_resource_urls.is_empty() {
            non_resource.push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    (resource, non_resource)
}

impl Authorizer for RbacAuthorizer {
    fn authorize(&self, a: &Attributes<'_>) -> Decision {
        self.index.load().authorize(a)
    }

    fn settle(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(self.index.wait_current())
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Value>, Vec<Value>, bool) {
        let (rules, _errors) = self.index.load().rules_for(user, namespace);
        let (r, n) = rules_json(&rules);
        (r, n, false)
    }
}
