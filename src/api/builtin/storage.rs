//! storage.k8s.io/v1 in the built-in table: storage classes, CSI drivers
//! and nodes, capacities, volume attachments and attribute classes.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::storage::v1 as storage_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const STORAGE: &[BuiltinDef] = &[
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "CSIDriver",
        plural: "csidrivers",
        singular: "csidriver",
        namespaced: false,
        verbs: RW,
        storage_path: "csidrivers",
        codec: Some(typed::<storage_v1::CSIDriver>),
        schema: Some(schema_of::<storage_v1::CSIDriver>),
        ..BASE
    },
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "CSINode",
        plural: "csinodes",
        singular: "csinode",
        namespaced: false,
        verbs: RW,
        storage_path: "csinodes",
        codec: Some(typed::<storage_v1::CSINode>),
        schema: Some(schema_of::<storage_v1::CSINode>),
        ..BASE
    },
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "CSIStorageCapacity",
        plural: "csistoragecapacities",
        singular: "csistoragecapacity",
        namespaced: true,
        verbs: RW,
        storage_path: "csistoragecapacities",
        codec: Some(typed::<storage_v1::CSIStorageCapacity>),
        schema: Some(schema_of::<storage_v1::CSIStorageCapacity>),
        ..BASE
    },
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "StorageClass",
        plural: "storageclasses",
        singular: "storageclass",
        namespaced: false,
        verbs: RW,
        short_names: &["sc"],
        storage_path: "storageclasses",
        codec: Some(typed::<storage_v1::StorageClass>),
        schema: Some(schema_of::<storage_v1::StorageClass>),
        ..BASE
    },
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "VolumeAttachment",
        plural: "volumeattachments",
        singular: "volumeattachment",
        namespaced: false,
        verbs: RW,
        subresources: ONLY_STATUS,
        storage_path: "volumeattachments",
        codec: Some(typed::<storage_v1::VolumeAttachment>),
        schema: Some(schema_of::<storage_v1::VolumeAttachment>),
        ..BASE
    },
    // GA in 1.34. Only v1 is served by default; upstream 1.34 still encodes
    // it in etcd as storage.k8s.io/v1beta1 (same schema) so that 1.33 can
    // read it after a downgrade.
    BuiltinDef {
        group: "storage.k8s.io",
        kind: "VolumeAttributesClass",
        plural: "volumeattributesclasses",
        singular: "volumeattributesclass",
        namespaced: false,
        verbs: RW,
        short_names: &["vac"],
        storage_path: "volumeattributesclasses",
        codec: Some(typed::<storage_v1::VolumeAttributesClass>),
        schema: Some(schema_of::<storage_v1::VolumeAttributesClass>),
        ..BASE
    },
];
