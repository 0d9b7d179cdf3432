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
pub mod rbac_escalation;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod storage_protection;
pub mod tolerations;
pub mod webhook;

pub use crate::registry::admission::{
    Attributes, Chain, Context, MutatingPlugin, Operation, ValidatingPlugin, ORDER,
};

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
