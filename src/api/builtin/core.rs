//! The core (legacy, `v1`) group's entries of the built-in table: pods,
//! services, namespaces, nodes and the rest upstream serves under `/api/v1`,
//! with the subresources (binding, exec, log, proxy, eviction, ...) only core
//! kinds have. Its own file as the largest group and the one every cluster
//! needs.

use crate::api::catalog::{schema_of, typed, BuiltinDef, SubDef};
use k8s_openapi::api::core::v1 as core_v1;

use super::{
    BASE, CREATE, CREATE_GET, GET_PATCH_UPDATE, ONLY_STATUS, PROXY, RW, RW_NO_COLLECTION,
    SCALE_AND_STATUS, STATUS,
};

/// Field selector keys of core v1 events (beyond metadata.name and
/// metadata.namespace).
const CORE_EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

pub(super) const CORE: &[BuiltinDef] = &[
    BuiltinDef {
        kind: "Binding",
        plural: "bindings",
        singular: "binding",
        namespaced: true,
        verbs: CREATE,
        storage_path: "", // sets pods' spec.nodeName; never stored itself
        codec: Some(typed::<core_v1::Binding>),
        schema: Some(schema_of::<core_v1::Binding>),
        ..BASE
    },
    BuiltinDef {
        kind: "ComponentStatus",
        plural: "componentstatuses",
        singular: "componentstatus",
        namespaced: false,
        verbs: &["get", "list"],
        short_names: &["cs"],
        storage_path: "", // computed on request by probing components
        codec: Some(typed::<core_v1::ComponentStatus>),
        schema: Some(schema_of::<core_v1::ComponentStatus>),
        ..BASE
    },
    BuiltinDef {
        kind: "ConfigMap",
        plural: "configmaps",
        singular: "configmap",
        namespaced: true,
        verbs: RW,
        short_names: &["cm"],
        storage_path: "configmaps",
        codec: Some(typed::<core_v1::ConfigMap>),
        schema: Some(schema_of::<core_v1::ConfigMap>),
        ..BASE
    },
    BuiltinDef {
        kind: "Endpoints",
        plural: "endpoints",
        singular: "endpoints",
        namespaced: true,
        verbs: RW,
        short_names: &["ep"],
        storage_path: "services/endpoints",
        codec: Some(typed::<core_v1::Endpoints>),
        schema: Some(schema_of::<core_v1::Endpoints>),
        ..BASE
    },
    BuiltinDef {
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        verbs: RW,
        short_names: &["ev"],
        storage_path: "events",
        // Shared with events.k8s.io/v1 events, stored as core v1.
        storage_version: "v1",
        selectable_fields: CORE_EVENT_FIELDS,
        codec: Some(typed::<core_v1::Event>),
        schema: Some(schema_of::<core_v1::Event>),
        ..BASE
    },
    BuiltinDef {
        kind: "LimitRange",
        plural: "limitranges",
        singular: "limitrange",
        namespaced: true,
        verbs: RW,
        short_names: &["limits"],
        storage_path: "limitranges",
        codec: Some(typed::<core_v1::LimitRange>),
        schema: Some(schema_of::<core_v1::LimitRange>),
        ..BASE
    },
    BuiltinDef {
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        namespaced: false,
        verbs: RW_NO_COLLECTION,
        short_names: &["ns"],
        subresources: &[
            SubDef {
                name: "finalize",
                group: "",
                version: "",
                kind: "",
                verbs: &["update"],
            },
            STATUS,
        ],
        storage_path: "namespaces",
        // "name" is a legacy alias upstream still accepts for metadata.name.
        selectable_fields: &["status.phase", "name"],
        codec: Some(typed::<core_v1::Namespace>),
        schema: Some(schema_of::<core_v1::Namespace>),
        ..BASE
    },
    BuiltinDef {
        kind: "Node",
        plural: "nodes",
        singular: "node",
        namespaced: false,
        verbs: RW,
        short_names: &["no"],
        subresources: &[
            SubDef {
                name: "proxy",
                group: "",
                version: "v1",
                kind: "NodeProxyOptions",
                verbs: PROXY,
            },
            STATUS,
        ],
        storage_path: "minions",
        selectable_fields: &["spec.unschedulable"],
        codec: Some(typed::<core_v1::Node>),
        schema: Some(schema_of::<core_v1::Node>),
        ..BASE
    },
    BuiltinDef {
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        namespaced: true,
        verbs: RW,
        short_names: &["pvc"],
        subresources: ONLY_STATUS,
        storage_path: "persistentvolumeclaims",
        // "name" is a legacy alias upstream still accepts for metadata.name.
        selectable_fields: &["name"],
        codec: Some(typed::<core_v1::PersistentVolumeClaim>),
        schema: Some(schema_of::<core_v1::PersistentVolumeClaim>),
        ..BASE
    },
    BuiltinDef {
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        singular: "persistentvolume",
        namespaced: false,
        verbs: RW,
        short_names: &["pv"],
        subresources: ONLY_STATUS,
        storage_path: "persistentvolumes",
        // "name" is a legacy alias upstream still accepts for metadata.name.
        selectable_fields: &["name"],
        codec: Some(typed::<core_v1::PersistentVolume>),
        schema: Some(schema_of::<core_v1::PersistentVolume>),
        ..BASE
    },
    BuiltinDef {
        kind: "Pod",
        plural: "pods",
        singular: "pod",
        namespaced: true,
        verbs: RW,
        short_names: &["po"],
        categories: &["all"],
        subresources: &[
            SubDef {
                name: "attach",
                group: "",
                version: "v1",
                kind: "PodAttachOptions",
                verbs: CREATE_GET,
            },
            SubDef {
                name: "binding",
                group: "",
                version: "v1",
                kind: "Binding",
                verbs: CREATE,
            },
            SubDef {
                name: "ephemeralcontainers",
                group: "",
                version: "",
                kind: "",
                verbs: GET_PATCH_UPDATE,
            },
            SubDef {
                name: "eviction",
                group: "policy",
                version: "v1",
                kind: "Eviction",
                verbs: CREATE,
            },
            SubDef {
                name: "exec",
                group: "",
                version: "v1",
                kind: "PodExecOptions",
                verbs: CREATE_GET,
            },
            SubDef {
                name: "log",
                group: "",
                version: "v1",
                kind: "Pod",
                verbs: &["get"],
            },
            SubDef {
                name: "portforward",
                group: "",
                version: "v1",
                kind: "PodPortForwardOptions",
                verbs: CREATE_GET,
            },
            SubDef {
                name: "proxy",
                group: "",
                version: "v1",
                kind: "PodProxyOptions",
                verbs: PROXY,
            },
            // InPlacePodVerticalScaling: beta and on by default since 1.33.
            SubDef {
                name: "resize",
                group: "",
                version: "",
                kind: "",
                verbs: GET_PATCH_UPDATE,
            },
            STATUS,
        ],
        storage_path: "pods",
        selectable_fields: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        codec: Some(typed::<core_v1::Pod>),
        schema: Some(schema_of::<core_v1::Pod>),
        ..BASE
    },
    BuiltinDef {
        kind: "PodTemplate",
        plural: "podtemplates",
        singular: "podtemplate",
        namespaced: true,
        verbs: RW,
        storage_path: "podtemplates",
        codec: Some(typed::<core_v1::PodTemplate>),
        schema: Some(schema_of::<core_v1::PodTemplate>),
        ..BASE
    },
    BuiltinDef {
        kind: "ReplicationController",
        plural: "replicationcontrollers",
        singular: "replicationcontroller",
        namespaced: true,
        verbs: RW,
        short_names: &["rc"],
        categories: &["all"],
        subresources: SCALE_AND_STATUS,
        storage_path: "controllers",
        selectable_fields: &["status.replicas"],
        codec: Some(typed::<core_v1::ReplicationController>),
        schema: Some(schema_of::<core_v1::ReplicationController>),
        ..BASE
    },
    BuiltinDef {
        kind: "ResourceQuota",
        plural: "resourcequotas",
        singular: "resourcequota",
        namespaced: true,
        verbs: RW,
        short_names: &["quota"],
        subresources: ONLY_STATUS,
        storage_path: "resourcequotas",
        codec: Some(typed::<core_v1::ResourceQuota>),
        schema: Some(schema_of::<core_v1::ResourceQuota>),
        ..BASE
    },
    BuiltinDef {
        kind: "Secret",
        plural: "secrets",
        singular: "secret",
        namespaced: true,
        verbs: RW,
        storage_path: "secrets",
        selectable_fields: &["type"],
        codec: Some(typed::<core_v1::Secret>),
        schema: Some(schema_of::<core_v1::Secret>),
        ..BASE
    },
    BuiltinDef {
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        singular: "serviceaccount",
        namespaced: true,
        verbs: RW,
        short_names: &["sa"],
        subresources: &[SubDef {
            name: "token",
            group: "authentication.k8s.io",
            version: "v1",
            kind: "TokenRequest",
            verbs: CREATE,
        }],
        storage_path: "serviceaccounts",
        codec: Some(typed::<core_v1::ServiceAccount>),
        schema: Some(schema_of::<core_v1::ServiceAccount>),
        ..BASE
    },
    BuiltinDef {
        kind: "Service",
        plural: "services",
        singular: "service",
        namespaced: true,
        verbs: RW,
        short_names: &["svc"],
        categories: &["all"],
        subresources: &[
            SubDef {
                name: "proxy",
                group: "",
                version: "v1",
                kind: "ServiceProxyOptions",
                verbs: PROXY,
            },
            STATUS,
        ],
        storage_path: "services/specs",
        selectable_fields: &["spec.clusterIP", "spec.type"],
        codec: Some(typed::<core_v1::Service>),
        schema: Some(schema_of::<core_v1::Service>),
        ..BASE
    },
];
