//! The admission chain: mutating plugins run after decoding and defaulting,
//! validating plugins after the resource's own validation, as upstream's
//! admission.Interface does. Plugins are chosen by name
//! (`--enable-admission-plugins`, `--disable-admission-plugins`) and always
//! run in upstream's fixed order.

pub mod common;
pub mod default_storage_class;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod matching;
pub mod namespace_lifecycle;
pub mod pod_security;
pub mod policy;
pub mod priority;
pub mod quantity;
pub mod resource_quota;
pub mod service_account;
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

/// upstream's plugin order (kube-apiserver's AllOrderedPlugins), for the ones kapi has.
pub const ORDER: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// Plugins on by default, as upstream's defaults for these names.
pub const DEFAULT_ON: &[&str] = ORDER;

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
