//! admissionregistration.k8s.io/v1 in the built-in table: webhook
//! configurations and validating admission policies with their bindings,
//! which configure admission.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::admissionregistration::v1 as admissionregistration_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const ADMISSIONREGISTRATION: &[BuiltinDef] = &[
    BuiltinDef {
        group: "admissionregistration.k8s.io",
        kind: "MutatingWebhookConfiguration",
        plural: "mutatingwebhookconfigurations",
        singular: "mutatingwebhookconfiguration",
        namespaced: false,
        verbs: RW,
        categories: &["api-extensions"],
        storage_path: "mutatingwebhookconfigurations",
        codec: Some(typed::<admissionregistration_v1::MutatingWebhookConfiguration>),
        schema: Some(schema_of::<admissionregistration_v1::MutatingWebhookConfiguration>),
        ..BASE
    },
    BuiltinDef {
        group: "admissionregistration.k8s.io",
        kind: "ValidatingAdmissionPolicy",
        plural: "validatingadmissionpolicies",
        singular: "validatingadmissionpolicy",
        namespaced: false,
        verbs: RW,
        categories: &["api-extensions"],
        subresources: ONLY_STATUS,
        storage_path: "validatingadmissionpolicies",
        codec: Some(typed::<admissionregistration_v1::ValidatingAdmissionPolicy>),
        schema: Some(schema_of::<admissionregistration_v1::ValidatingAdmissionPolicy>),
        ..BASE
    },
    BuiltinDef {
        group: "admissionregistration.k8s.io",
        kind: "ValidatingAdmissionPolicyBinding",
        plural: "validatingadmissionpolicybindings",
        singular: "validatingadmissionpolicybinding",
        namespaced: false,
        verbs: RW,
        categories: &["api-extensions"],
        storage_path: "validatingadmissionpolicybindings",
        codec: Some(typed::<admissionregistration_v1::ValidatingAdmissionPolicyBinding>),
        schema: Some(schema_of::<admissionregistration_v1::ValidatingAdmissionPolicyBinding>),
        ..BASE
    },
    BuiltinDef {
        group: "admissionregistration.k8s.io",
        kind: "ValidatingWebhookConfiguration",
        plural: "validatingwebhookconfigurations",
        singular: "validatingwebhookconfiguration",
        namespaced: false,
        verbs: RW,
        categories: &["api-extensions"],
        storage_path: "validatingwebhookconfigurations",
        codec: Some(typed::<admissionregistration_v1::ValidatingWebhookConfiguration>),
        schema: Some(schema_of::<admissionregistration_v1::ValidatingWebhookConfiguration>),
        ..BASE
    },
];
