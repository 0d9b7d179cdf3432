//! rbac.authorization.k8s.io/v1 in the built-in table: roles, cluster roles
//! and their bindings, which the RBAC authorizer reads.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::rbac::v1 as rbac_v1;

use super::{BASE, RW};

pub(super) const RBAC: &[BuiltinDef] = &[
    BuiltinDef {
        group: "rbac.authorization.k8s.io",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        namespaced: false,
        verbs: RW,
        storage_path: "clusterrolebindings",
        codec: Some(typed::<rbac_v1::ClusterRoleBinding>),
        schema: Some(schema_of::<rbac_v1::ClusterRoleBinding>),
        ..BASE
    },
    BuiltinDef {
        group: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        plural: "clusterroles",
        singular: "clusterrole",
        namespaced: false,
        verbs: RW,
        storage_path: "clusterroles",
        codec: Some(typed::<rbac_v1::ClusterRole>),
        schema: Some(schema_of::<rbac_v1::ClusterRole>),
        ..BASE
    },
    BuiltinDef {
        group: "rbac.authorization.k8s.io",
        kind: "RoleBinding",
        plural: "rolebindings",
        singular: "rolebinding",
        namespaced: true,
        verbs: RW,
        storage_path: "rolebindings",
        codec: Some(typed::<rbac_v1::RoleBinding>),
        schema: Some(schema_of::<rbac_v1::RoleBinding>),
        ..BASE
    },
    BuiltinDef {
        group: "rbac.authorization.k8s.io",
        kind: "Role",
        plural: "roles",
        singular: "role",
        namespaced: true,
        verbs: RW,
        storage_path: "roles",
        codec: Some(typed::<rbac_v1::Role>),
        schema: Some(schema_of::<rbac_v1::Role>),
        ..BASE
    },
];
