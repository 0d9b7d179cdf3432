//! RBAC authorization from the stored Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings (rbac.authorization.k8s.io/v1), as upstream's
//! `plugin/pkg/auth/authorizer/rbac` and `pkg/apis/rbac/v1` helpers decide
//! it: RBAC only ever allows; no matching rule is no opinion.
//!
//! `authorize` is synchronous and on every request, so it reads an
//! in-memory [`Index`] that a background task ([`run`]) rebuilds from the
//! watch caches whenever the four lists change. The same task keeps
//! aggregated ClusterRoles (`aggregationRule.clusterRoleSelectors`) the union
//! of the rules of the ClusterRoles they select, as upstream's
//! clusterrole-aggregation controller does.
//!
//! Here: the shared constants and helpers. The rest, by concept:
//! [`PolicyRule`] and its matching (`policy_rule`), subjects and bindings
//! (`bindings`), the rule index (`index`), the authorizer (`authorizer`),
//! the refresher (`refresher`), the clusterrole-aggregation controller
//! (`aggregation`), and the escalation checks (`escalation`).

use serde_json::Value;

use super::{UserInfo, MASTERS_GROUP};

mod aggregation;
mod authorizer;
mod bindings;
mod escalation;
mod index;
mod policy_rule;
mod refresher;
#[cfg(test)]
mod tests;

pub use aggregation::aggregated_rules;
pub use authorizer::{rules_json, RbacAuthorizer};
pub use bindings::{Binding, Subject};
pub use escalation::{breakdown, compact, confirm_no_escalation, covers};
pub use index::{Index, SharedIndex};
pub use policy_rule::PolicyRule;
pub use refresher::{run, sync_now};

pub const GROUP: &str = "rbac.authorization.k8s.io";
/// `rbac.authorization.kubernetes.io/autoupdate`.
pub const AUTO_UPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// The identity the server's own RBAC writers use (upstream's loopback
/// client is `system:apiserver` in `system:masters`).
pub fn loopback_user() -> UserInfo {
    UserInfo {
        name: "system:apiserver".into(),
        groups: vec![MASTERS_GROUP.into()],
        ..Default::default()
    }
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

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub fn go_quote_list(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", quoted.join(" "))
}
