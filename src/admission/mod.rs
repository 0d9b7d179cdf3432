//! The admission chain: mutating plugins run after decoding and defaulting,
//! validating plugins after the resource's own validation, as upstream's
//! admission.Interface does. Plugins are chosen by name
//! (`--enable-admission-plugins`, `--disable-admission-plugins`) and always
//! run in upstream's fixed order.

pub mod always;
pub mod always_pull_images;
pub mod antiaffinity;
pub mod certificates;
pub mod common;
pub mod config;
pub mod default_ingress_class;
pub mod default_storage_class;
pub mod default_toleration_seconds;
pub mod deny_external_ips;
pub mod event_rate_limit;
pub mod extended_resource_toleration;
pub mod image_policy;
pub mod inactive;
pub mod limit_ranger;
pub mod matching;
pub mod namespace_exists;
pub mod namespace_lifecycle;
pub mod node_restriction;
pub mod node_taint;
pub mod owner_references;
pub mod pod_node_selector;
pub mod pod_security;
pub mod pod_toleration_restriction;
pub mod policy;
pub mod priority;
pub mod pvc_resize;
pub mod quantity;
pub mod rbac_escalation;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod storage_protection;
pub mod tolerations;
pub mod webhook;

use std::sync::Arc;

use serde_json::Value;

use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::auth::UserInfo;
use crate::registry::Registries;

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

/// The plugins kube-apiserver v1.34 runs when no flag names any
/// (everything but its DefaultOffAdmissionPlugins).
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// Plugins upstream has that kapi does not run: naming one is refused at
/// start rather than skipped, with the reason.
pub const NOT_IMPLEMENTED: &[(&str, &str)] = &[];

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
            let before = began.and(attrs.object.clone());
            let r = p.admit(attrs, ctx).await;
            let name = format!("admission/mutating/{}", p.name());
            crate::trace::result(began, &name, &r, || {
                let after = attrs.object.clone().unwrap_or_default();
                serde_json::json!({"patch": crate::trace::diff(&before.unwrap_or_default(), &after)})
            });
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
            let name = format!("admission/validating/{}", p.name());
            crate::trace::result(began, &name, &r, || serde_json::json!({}));
            warnings.extend(r?);
        }
        Ok(warnings)
    }
}
