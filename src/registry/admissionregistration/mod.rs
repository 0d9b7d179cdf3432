//! Strategies of admissionregistration.k8s.io (upstream's pkg/registry/admissionregistration and pkg/apis/admissionregistration). TODO(helper): being written.

use crate::registry::strategy::Strategy;

pub struct MutatingWebhookConfigurationStrategy;

impl Strategy for MutatingWebhookConfigurationStrategy {}

pub struct ValidatingWebhookConfigurationStrategy;

impl Strategy for ValidatingWebhookConfigurationStrategy {}

pub struct ValidatingAdmissionPolicyStrategy;

impl Strategy for ValidatingAdmissionPolicyStrategy {}

pub struct ValidatingAdmissionPolicyBindingStrategy;

impl Strategy for ValidatingAdmissionPolicyBindingStrategy {}

