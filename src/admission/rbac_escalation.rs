//! RBAC escalation prevention, as upstream's policy-based RBAC storage
//! (`pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased`)
//! does it: writing a Role or ClusterRole needs every permission it grants
//! already held (or `escalate` on it), writing a binding needs the
//! referenced role's permissions (or `bind` on it). `system:masters` is
//! never checked. kapi runs it as an always-on validating admission plugin
//! for the four RBAC resources, so every write path (create, update,
//! patch, apply) goes through it.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use serde_json::Value;

use crate::admission::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::auth::authorizer::{Attributes as AuthzAttributes, Authorizer, Decision};
use crate::auth::rbac::{confirm_no_escalation, PolicyRule, SharedIndex, GROUP};
use crate::auth::{UserInfo, MASTERS_GROUP};

pub const PLUGIN_NAME: &str = "RBACEscalationPrevention";

pub struct RbacEscalation {
    /// The whole authorizer chain, for the `escalate` and `bind` checks.
    pub authorizer: Arc<dyn Authorizer>,
    /// What the requester holds, from the RBAC index.
    pub index: SharedIndex,
}

fn forbidden(plural: &str, name: &str, message: &str) -> ApiError {
    let qualified = crate::api::status::qualified_resource(GROUP, plural);
    ApiError::forbidden(format!("{qualified} {name:?} is forbidden: {message}")).with_details(Some(
        StatusDetails {
            name: (!name.is_empty()).then(|| name.to_string()),
            group: Some(GROUP.to_string()),
            kind: Some(plural.to_string()),
            ..Default::default()
        },
    ))
}

/// upstream's IsOnlyMutatingGCFields: the write changes nothing but owner
/// references, finalizers and deletion state (and what the server keeps).
fn only_gc_fields(new: &Value, old: &Value) -> bool {
    let mut copied = new.clone();
    if let Some(meta) = copied.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "ownerReferences",
            "finalizers",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "resourceVersion",
            "managedFields",
            "generation",
        ] {
            match old["metadata"].get(key) {
                Some(v) => {
                    meta.insert(key.into(), v.clone());
                }
                None => {
                    meta.remove(key);
                }
            }
        }
    }
    copied == *old
}

/// The full authority an aggregationRule needs (it can gather anything).
fn full_authority() -> Vec<PolicyRule> {
    vec![
        PolicyRule {
            verbs: vec!["*".into()],
            api_groups: vec!["*".into()],
            resources: vec!["*".into()],
            ..Default::default()
        },
        PolicyRule {
            verbs: vec!["*".into()],
            non_resource_urls: vec!["*".into()],
            ..Default::default()
        },
    ]
}

impl RbacEscalation {
    /// Asks the whole authorizer chain, webhook included, as upstream's
    /// RoleEscalationAuthorized and BindingAuthorized do.
    async fn allowed(
        &self,
        user: &UserInfo,
        verb: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> bool {
        let attrs = AuthzAttributes {
            user: Some(user),
            verb,
            resource_request: true,
            api_group: GROUP,
            api_version: "*",
            namespace,
            resource,
            name,
            ..Default::default()
        };
        matches!(
            self.authorizer.authorize_async(&attrs).await,
            Decision::Allow(_)
        )
    }

    async fn check_role(&self, a: &Attributes<'_>, obj: &Value) -> Result<(), ApiError> {
        let plural = a.resource.plural.as_str();
        // upstream's RoleEscalationAuthorized: the request's own name (none on create).
        let request_name = if a.operation == Operation::Create {
            ""
        } else {
            a.name
        };
        if self
            .allowed(a.user, "escalate", plural, a.namespace, request_name)
            .await
        {
            return Ok(());
        }
        if let Some(old) = a.old_object {
            if only_gc_fields(obj, old) {
                return Ok(());
            }
        }
        let index = self.index.load();
        let rules = PolicyRule::list_from(obj);
        confirm_no_escalation(&index, a.user, a.namespace, &rules)
            .map_err(|m| forbidden(plural, a.name, &m))?;
        let agg = &obj["aggregationRule"];
        let agg_changed = match a.old_object {
            Some(old) => old["aggregationRule"] != *agg,
            None => true,
        };
        if plural == "clusterroles" && !agg.is_null() && agg_changed {
            confirm_no_escalation(&index, a.user, a.namespace, &full_authority()).map_err(
                |_| {
                    forbidden(
                        plural,
                        a.name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    )
                },
            )?;
        }
        Ok(())
    }

    async fn check_binding(
        &self,
        a: &Attributes<'_>,
        obj: &Value,
        ctx: &Context,
    ) -> Result<(), ApiError> {
        let plural = a.resource.plural.as_str();
        if let Some(old) = a.old_object {
            if only_gc_fields(obj, old) {
                return Ok(());
            }
        }
        let rr = &obj["roleRef"];
        let kind = rr["kind"].as_str().unwrap_or("");
        let role = rr["name"].as_str().unwrap_or("");
        let role_plural = match kind {
            "ClusterRole" => "clusterroles",
            "Role" => "roles",
            // Validation already refused it.
            _ => return Ok(()),
        };
        // upstream's BindingAuthorized: `bind` on the role, in the binding's namespace.
        if self
            .allowed(a.user, "bind", role_plural, a.namespace, role)
            .await
        {
            return Ok(());
        }
        let role_ns = if kind == "Role" { a.namespace } else { "" };
        let reg = ctx
            .registries
            .get(GROUP, "v1", role_plural)
            .ok_or_else(|| ApiError::internal(format!("{role_plural}.{GROUP} are not served")))?;
        let stored = reg.get_object(role_ns, role, None).await?;
        let role_obj: Value = serde_json::from_slice(&stored)
            .map_err(|e| ApiError::internal(format!("stored {role_plural} {role}: {e}")))?;
        let rules = PolicyRule::list_from(&role_obj);
        confirm_no_escalation(&self.index.load(), a.user, a.namespace, &rules)
            .map_err(|m| forbidden(plural, a.name, &m))
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for RbacEscalation {
    fn name(&self) -> &'static str {
        PLUGIN_NAME
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.resource.group != GROUP
            || !a.subresource.is_empty()
            || !matches!(a.operation, Operation::Create | Operation::Update)
            // upstream's EscalationAllowed.
            || a.user.in_group(MASTERS_GROUP)
        {
            return Ok(Vec::new());
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        match a.resource.plural.as_str() {
            "roles" | "clusterroles" => self.check_role(a, obj).await?,
            "rolebindings" | "clusterrolebindings" => self.check_binding(a, obj, ctx).await?,
            _ => {}
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gc_only_changes() {
        let old = json!({"metadata": {"name": "r", "resourceVersion": "5"}, "rules": [{"verbs": ["get"]}]});
        let mut new = old.clone();
        new["metadata"]["ownerReferences"] = json!([{"uid": "x"}]);
        new["metadata"]["finalizers"] = json!(["f"]);
        new["metadata"]["resourceVersion"] = json!("6");
        assert!(only_gc_fields(&new, &old));
        new["metadata"]["labels"] = json!({"a": "b"});
        assert!(!only_gc_fields(&new, &old));
        let mut rules = old.clone();
        rules["rules"] = json!([{"verbs": ["*"]}]);
        assert!(!only_gc_fields(&rules, &old));
    }
}
