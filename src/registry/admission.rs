//! The admission interface the registry calls on every write: what a
//! request looks like to admission ([`Attributes`]), the two plugin traits,
//! and the [`Chain`] that runs them in upstream's order. The plugins
//! themselves live above, in `crate::admission`; the registry knows only
//! this interface.

use std::sync::Arc;

use serde_json::Value;

use super::Registries;
use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::authentication::UserInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// As AdmissionReview and webhook rules spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// One request as admission sees it.
pub struct Attributes<'a> {
    pub operation: Operation,
    pub resource: &'a Resource,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The object being written (mutating plugins may change it); `None` on delete.
    pub object: Option<Value>,
    pub old_object: Option<&'a Value>,
    pub user: &'a UserInfo,
    pub dry_run: bool,
    /// CreateOptions, UpdateOptions or DeleteOptions as JSON.
    pub options: Value,
}

/// What plugins may consult.
#[derive(Clone)]
pub struct Context {
    pub registries: Registries,
}

#[async_trait::async_trait]
pub trait MutatingPlugin: Send + Sync {
    fn name(&self) -> &'static str;
    async fn admit(
        &self,
        attrs: &mut Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError>;
}

#[async_trait::async_trait]
pub trait ValidatingPlugin: Send + Sync {
    fn name(&self) -> &'static str;
    /// Returns warnings for the client, or the refusal.
    async fn validate(
        &self,
        attrs: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError>;
}

/// upstream's plugin order (kube-apiserver's AllOrderedPlugins): the
/// chain runs plugins in this order whatever order the flags name them in.
pub const ORDER: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

#[derive(Clone, Default)]
pub struct Chain {
    mutating: Vec<Arc<dyn MutatingPlugin>>,
    validating: Vec<Arc<dyn ValidatingPlugin>>,
}

impl Chain {
    pub fn new(
        mutating: Vec<Arc<dyn MutatingPlugin>>,
        validating: Vec<Arc<dyn ValidatingPlugin>>,
    ) -> Chain {
        let rank = |n: &str| ORDER.iter().position(|o| *o == n).unwrap_or(usize::MAX);
        let mut mutating = mutating;
        let mut validating = validating;
        mutating.sort_by_key(|p| rank(p.name()));
        validating.sort_by_key(|p| rank(p.name()));
        Chain {
            mutating,
            validating,
        }
    }

    /// The chain with one more validating plugin, in its place in the order.
    pub fn with_validating(self, plugin: Arc<dyn ValidatingPlugin>) -> Chain {
        let mut validating = self.validating;
        validating.push(plugin);
        Chain::new(self.mutating, validating)
    }

    pub fn names(&self) -> Vec<&'static str> {
        let mut n: Vec<&'static str> = self
            .mutating
            .iter()
            .map(|p| p.name())
            .chain(self.validating.iter().map(|p| p.name()))
            .collect();
        n.dedup();
        n
    }

    pub async fn admit(
        &self,
        attrs: &mut Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        let mut warnings = Vec::new();
        for p in &self.mutating {
            let began = crate::trace::start();
            // Only a traced request pays for the copy its diff needs.
            let before = began.and_then(|_| attrs.object.clone());
            let r = p.admit(attrs, ctx).await;
            if began.is_some() {
                let name = format!("admission/mutating/{}", p.name());
                crate::trace::result(began, &name, &r, || {
                    let after = attrs.object.clone().unwrap_or_default();
                    serde_json::json!({"patch": crate::trace::diff(&before.unwrap_or_default(), &after)})
                });
            }
            warnings.extend(r?);
        }
        Ok(warnings)
    }

    pub async fn validate(
        &self,
        attrs: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        let mut warnings = Vec::new();
        for p in &self.validating {
            let began = crate::trace::start();
            let r = p.validate(attrs, ctx).await;
            if began.is_some() {
                let name = format!("admission/validating/{}", p.name());
                crate::trace::result(began, &name, &r, || serde_json::json!({}));
            }
            warnings.extend(r?);
        }
        Ok(warnings)
    }
}
