//! apps/v1 in the built-in table: the workload controllers' kinds
//! (Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision), with
//! their scale and status subresources.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::apps::v1 as apps_v1;

use super::{BASE, ONLY_STATUS, RW, SCALE_AND_STATUS};

pub(super) const APPS: &[BuiltinDef] = &[
    BuiltinDef {
        group: "apps",
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        namespaced: true,
        verbs: RW,
        storage_path: "controllerrevisions",
        codec: Some(typed::<apps_v1::ControllerRevision>),
        schema: Some(schema_of::<apps_v1::ControllerRevision>),
        ..BASE
    },
    BuiltinDef {
        group: "apps",
        kind: "DaemonSet",
        plural: "daemonsets",
        singular: "daemonset",
        namespaced: true,
        verbs: RW,
        short_names: &["ds"],
        categories: &["all"],
        subresources: ONLY_STATUS,
        storage_path: "daemonsets",
        codec: Some(typed::<apps_v1::DaemonSet>),
        schema: Some(schema_of::<apps_v1::DaemonSet>),
        ..BASE
    },
    BuiltinDef {
        group: "apps",
        kind: "Deployment",
        plural: "deployments",
        singular: "deployment",
        namespaced: true,
        verbs: RW,
        short_names: &["deploy"],
        categories: &["all"],
        subresources: SCALE_AND_STATUS,
        storage_path: "deployments",
        codec: Some(typed::<apps_v1::Deployment>),
        schema: Some(schema_of::<apps_v1::Deployment>),
        ..BASE
    },
    BuiltinDef {
        group: "apps",
        kind: "ReplicaSet",
        plural: "replicasets",
        singular: "replicaset",
        namespaced: true,
        verbs: RW,
        short_names: &["rs"],
        categories: &["all"],
        subresources: SCALE_AND_STATUS,
        storage_path: "replicasets",
        selectable_fields: &["status.replicas"],
        codec: Some(typed::<apps_v1::ReplicaSet>),
        schema: Some(schema_of::<apps_v1::ReplicaSet>),
        ..BASE
    },
    BuiltinDef {
        group: "apps",
        kind: "StatefulSet",
        plural: "statefulsets",
        singular: "statefulset",
        namespaced: true,
        verbs: RW,
        short_names: &["sts"],
        categories: &["all"],
        subresources: SCALE_AND_STATUS,
        storage_path: "statefulsets",
        codec: Some(typed::<apps_v1::StatefulSet>),
        schema: Some(schema_of::<apps_v1::StatefulSet>),
        ..BASE
    },
];
