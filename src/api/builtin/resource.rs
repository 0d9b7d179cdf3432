//! resource.k8s.io/v1 in the built-in table: dynamic resource allocation
//! (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice).

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::resource::v1 as resource_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const RESOURCE: &[BuiltinDef] = &[
    // DRA, GA and on by default in 1.34. Only v1 is served by default;
    // upstream 1.34 still encodes these in etcd as resource.k8s.io/v1beta2
    // (same schema as v1) so that 1.33 can read them after a downgrade;
    // v1 became the storage version in 1.35.
    BuiltinDef {
        group: "resource.k8s.io",
        kind: "DeviceClass",
        plural: "deviceclasses",
        singular: "deviceclass",
        namespaced: false,
        verbs: RW,
        storage_path: "deviceclasses",
        codec: Some(typed::<resource_v1::DeviceClass>),
        schema: Some(schema_of::<resource_v1::DeviceClass>),
        ..BASE
    },
    BuiltinDef {
        group: "resource.k8s.io",
        kind: "ResourceClaim",
        plural: "resourceclaims",
        singular: "resourceclaim",
        namespaced: true,
        verbs: RW,
        subresources: ONLY_STATUS,
        storage_path: "resourceclaims",
        codec: Some(typed::<resource_v1::ResourceClaim>),
        schema: Some(schema_of::<resource_v1::ResourceClaim>),
        ..BASE
    },
    BuiltinDef {
        group: "resource.k8s.io",
        kind: "ResourceClaimTemplate",
        plural: "resourceclaimtemplates",
        singular: "resourceclaimtemplate",
        namespaced: true,
        verbs: RW,
        storage_path: "resourceclaimtemplates",
        codec: Some(typed::<resource_v1::ResourceClaimTemplate>),
        schema: Some(schema_of::<resource_v1::ResourceClaimTemplate>),
        ..BASE
    },
    BuiltinDef {
        group: "resource.k8s.io",
        kind: "ResourceSlice",
        plural: "resourceslices",
        singular: "resourceslice",
        namespaced: false,
        verbs: RW,
        storage_path: "resourceslices",
        selectable_fields: &["spec.nodeName", "spec.driver"],
        codec: Some(typed::<resource_v1::ResourceSlice>),
        schema: Some(schema_of::<resource_v1::ResourceSlice>),
        ..BASE
    },
];
