//! Strategies of admissionregistration.k8s.io/v1 (upstream's
//! pkg/registry/admissionregistration and pkg/apis/admissionregistration):
//! the webhook configurations and the validating admission policies with
//! their bindings.
//!
//! One file per kind, named as upstream's
//! pkg/registry/admissionregistration/<kind>; what several kinds share is in
//! common.rs (rules, match resources and conditions), webhook.rs (the
//! webhooks of both webhook configurations), cel_check.rs and url.rs. The
//! strategies are re-exported here, so
//! `registry::admissionregistration::ValidatingWebhookConfigurationStrategy`
//! and the like stay the paths callers use.

mod cel_check;
mod common;
mod mutating_webhook_configuration;
mod url;
mod validating_admission_policy;
mod validating_admission_policy_binding;
mod validating_webhook_configuration;
mod webhook;

pub use mutating_webhook_configuration::MutatingWebhookConfigurationStrategy;
pub use validating_admission_policy::ValidatingAdmissionPolicyStrategy;
pub use validating_admission_policy_binding::ValidatingAdmissionPolicyBindingStrategy;
pub use validating_webhook_configuration::ValidatingWebhookConfigurationStrategy;
