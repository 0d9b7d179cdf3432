//! Strategies of admissionregistration.k8s.io/v1 (upstream's
//! pkg/registry/admissionregistration and pkg/apis/admissionregistration):
//! the webhook configurations and the validating admission policies with
//! their bindings.

mod cel_check;
mod common;
mod url;
mod validating_admission_policy;
mod webhook_configuration;

pub use validating_admission_policy::{
    ValidatingAdmissionPolicyBindingStrategy, ValidatingAdmissionPolicyStrategy,
};
pub use webhook_configuration::{
    MutatingWebhookConfigurationStrategy, ValidatingWebhookConfigurationStrategy,
};
