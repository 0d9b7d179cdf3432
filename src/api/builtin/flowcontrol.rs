//! flowcontrol.apiserver.k8s.io/v1 in the built-in table: FlowSchema and
//! PriorityLevelConfiguration, which configure API Priority and Fairness.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::flowcontrol::v1 as flowcontrol_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const FLOWCONTROL: &[BuiltinDef] = &[
    BuiltinDef {
        group: "flowcontrol.apiserver.k8s.io",
        kind: "FlowSchema",
        plural: "flowschemas",
        singular: "flowschema",
        namespaced: false,
        verbs: RW,
        subresources: ONLY_STATUS,
        storage_path: "flowschemas",
        codec: Some(typed::<flowcontrol_v1::FlowSchema>),
        schema: Some(schema_of::<flowcontrol_v1::FlowSchema>),
        ..BASE
    },
    BuiltinDef {
        group: "flowcontrol.apiserver.k8s.io",
        kind: "PriorityLevelConfiguration",
        plural: "prioritylevelconfigurations",
        singular: "prioritylevelconfiguration",
        namespaced: false,
        verbs: RW,
        subresources: ONLY_STATUS,
        storage_path: "prioritylevelconfigurations",
        codec: Some(typed::<flowcontrol_v1::PriorityLevelConfiguration>),
        schema: Some(schema_of::<flowcontrol_v1::PriorityLevelConfiguration>),
        ..BASE
    },
];
