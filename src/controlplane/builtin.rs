//! The static table of every built-in resource an upstream kube-apiserver
//! v1.34 serves by default (no feature gates, no `--runtime-config`): only
//! GA group versions, since beta APIs have been off by default since 1.24.
//! It mirrors upstream v1.34 discovery: groups in discovery priority order,
//! versions in preferred order, resources by plural; verbs, short names,
//! categories and subresources as discovery lists them; storage key paths
//! as upstream lays them out below `/registry`.

use crate::api::catalog::{schema_of, typed, BuiltinDef, SubDef};
use k8s_openapi::api::admissionregistration::v1 as admissionregistration_v1;
use k8s_openapi::api::apps::v1 as apps_v1;
use k8s_openapi::api::authentication::v1 as authentication_v1;
use k8s_openapi::api::authorization::v1 as authorization_v1;
use k8s_openapi::api::autoscaling::v1 as autoscaling_v1;
use k8s_openapi::api::autoscaling::v2 as autoscaling_v2;
use k8s_openapi::api::batch::v1 as batch_v1;
use k8s_openapi::api::certificates::v1 as certificates_v1;
use k8s_openapi::api::coordination::v1 as coordination_v1;
use k8s_openapi::api::core::v1 as core_v1;
use k8s_openapi::api::discovery::v1 as discovery_v1;
use k8s_openapi::api::events::v1 as events_v1;
use k8s_openapi::api::flowcontrol::v1 as flowcontrol_v1;
use k8s_openapi::api::networking::v1 as networking_v1;
use k8s_openapi::api::node::v1 as node_v1;
use k8s_openapi::api::policy::v1 as policy_v1;
use k8s_openapi::api::rbac::v1 as rbac_v1;
use k8s_openapi::api::resource::v1 as resource_v1;
use k8s_openapi::api::scheduling::v1 as scheduling_v1;
use k8s_openapi::api::storage::v1 as storage_v1;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions_v1;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration_v1;

/// The verbs of an ordinary stored resource.
const RW: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces: no `deletecollection`.
const RW_NO_COLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
/// Reviews and other create-only resources.
const CREATE: &[&str] = &["create"];
/// Status-like subresources.
const GET_PATCH_UPDATE: &[&str] = &["get", "patch", "update"];
/// Connect subresources (exec, attach, portforward).
const CREATE_GET: &[&str] = &["create", "get"];
/// Proxy subresources.
const PROXY: &[&str] = &["create", "delete", "get", "patch", "update"];

/// `<resource>/status`, served as the parent's kind.
const STATUS: SubDef = SubDef {
    name: "status",
    group: "",
    version: "",
    kind: "",
    verbs: GET_PATCH_UPDATE,
};
/// `<resource>/scale`, served as autoscaling/v1 `Scale`.
const SCALE: SubDef = SubDef {
    name: "scale",
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    verbs: GET_PATCH_UPDATE,
};
const ONLY_STATUS: &[SubDef] = &[STATUS];
const SCALE_AND_STATUS: &[SubDef] = &[SCALE, STATUS];

/// Defaults for the optional fields; every entry names its identity,
/// scope, verbs, storage path and codec itself.
const BASE: BuiltinDef = BuiltinDef {
    group: "",
    version: "v1",
    kind: "",
    plural: "",
    singular: "",
    namespaced: true,
    verbs: RW,
    short_names: &[],
    categories: &[],
    subresources: &[],
    storage_path: "",
    storage_version: "",
    selectable_fields: &[],
    codec: None,
    schema: None,
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

/// Field selector keys of events.k8s.io/v1 events: upstream maps
/// `regarding.*` to `involvedObject.*` and `reportingController` to
/// `reportingComponent` of the shared (core) storage.
const EVENTS_V1_FIELDS: &[&str] = &[
    "reason",
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reportingController",
    "source",
    "type",
];

/// HorizontalPodAutoscaler, served as autoscaling/v2 and v1, both stored as v2.
const HPA: BuiltinDef = BuiltinDef {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    singular: "horizontalpodautoscaler",
    namespaced: true,
    verbs: RW,
    short_names: &["hpa"],
    categories: &["all"],
    subresources: ONLY_STATUS,
    storage_path: "horizontalpodautoscalers",
    storage_version: "autoscaling/v2",
    ..BASE
};

pub static BUILTINS: &[BuiltinDef] = &[
    // ---------------------------------------------------------------- core v1
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
    // ------------------------------------------------- apiregistration.k8s.io/v1
    BuiltinDef {
        group: "apiregistration.k8s.io",
        kind: "APIService",
        plural: "apiservices",
        singular: "apiservice",
        namespaced: false,
        verbs: RW,
        categories: &["api-extensions"],
        subresources: ONLY_STATUS,
        storage_path: "apiregistration.k8s.io/apiservices",
        codec: Some(typed::<apiregistration_v1::APIService>),
        schema: Some(schema_of::<apiregistration_v1::APIService>),
        ..BASE
    },
    // ----------------------------------------------------------------- apps/v1
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
    // -------------------------------------------------------- events.k8s.io/v1
    BuiltinDef {
        group: "events.k8s.io",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        verbs: RW,
        short_names: &["ev"],
        storage_path: "events",
        // Shares storage with core v1 events and is stored as core v1.
        storage_version: "v1",
        selectable_fields: EVENTS_V1_FIELDS,
        codec: Some(typed::<events_v1::Event>),
        schema: Some(schema_of::<events_v1::Event>),
        ..BASE
    },
    // ------------------------------------------------ authentication.k8s.io/v1
    BuiltinDef {
        group: "authentication.k8s.io",
        kind: "SelfSubjectReview",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authentication_v1::SelfSubjectReview>),
        schema: Some(schema_of::<authentication_v1::SelfSubjectReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authentication.k8s.io",
        kind: "TokenReview",
        plural: "tokenreviews",
        singular: "tokenreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authentication_v1::TokenReview>),
        schema: Some(schema_of::<authentication_v1::TokenReview>),
        ..BASE
    },
    // ------------------------------------------------- authorization.k8s.io/v1
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "LocalSubjectAccessReview",
        plural: "localsubjectaccessreviews",
        singular: "localsubjectaccessreview",
        namespaced: true,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::LocalSubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::LocalSubjectAccessReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SelfSubjectAccessReview",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SelfSubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::SelfSubjectAccessReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SelfSubjectRulesReview",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SelfSubjectRulesReview>),
        schema: Some(schema_of::<authorization_v1::SelfSubjectRulesReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SubjectAccessReview",
        plural: "subjectaccessreviews",
        singular: "subjectaccessreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::SubjectAccessReview>),
        ..BASE
    },
    // ----------------------------------------------- autoscaling/v2, then v1
    BuiltinDef {
        version: "v2",
        codec: Some(typed::<autoscaling_v2::HorizontalPodAutoscaler>),
        schema: Some(schema_of::<autoscaling_v2::HorizontalPodAutoscaler>),
        ..HPA
    },
    BuiltinDef {
        version: "v1",
        codec: Some(typed::<autoscaling_v1::HorizontalPodAutoscaler>),
        schema: Some(schema_of::<autoscaling_v1::HorizontalPodAutoscaler>),
        ..HPA
    },
    // ---------------------------------------------------------------- batch/v1
    BuiltinDef {
        group: "batch",
        kind: "CronJob",
        plural: "cronjobs",
        singular: "cronjob",
        namespaced: true,
        verbs: RW,
        short_names: &["cj"],
        categories: &["all"],
        subresources: ONLY_STATUS,
        storage_path: "cronjobs",
        codec: Some(typed::<batch_v1::CronJob>),
        schema: Some(schema_of::<batch_v1::CronJob>),
        ..BASE
    },
    BuiltinDef {
        group: "batch",
        kind: "Job",
        plural: "jobs",
        singular: "job",
        namespaced: true,
        verbs: RW,
        categories: &["all"],
        subresources: ONLY_STATUS,
        storage_path: "jobs",
        selectable_fields: &["status.successful"],
        codec: Some(typed::<batch_v1::Job>),
        schema: Some(schema_of::<batch_v1::Job>),
        ..BASE
    },
    // -------------------------------------------------- certificates.k8s.io/v1
    BuiltinDef {
        group: "certificates.k8s.io",
        kind: "CertificateSigningRequest",
        plural: "certificatesigningrequests",
        singular: "certificatesigningrequest",
        namespaced: false,
        verbs: RW,
        short_names: &["csr"],
        subresources: &[
            SubDef {
                name: "approval",
                group: "",
                version: "",
                kind: "",
                verbs: GET_PATCH_UPDATE,
            },
            STATUS,
        ],
        storage_path: "certificatesigningrequests",
        selectable_fields: &["spec.signerName"],
        codec: Some(typed::<certificates_v1::CertificateSigningRequest>),
        schema: Some(schema_of::<certificates_v1::CertificateSigningRequest>),
        ..BASE
    },
    // ---------------------------------------------------- networking.k8s.io/v1
    BuiltinDef {
        group: "networking.k8s.io",
        kind: "IngressClass",
        plural: "ingressclasses",
        singular: "ingressclass",
        namespaced: false,
        verbs: RW,
        storage_path: "ingressclasses",
        codec: Some(typed::<networking_v1::IngressClass>),
        schema: Some(schema_of::<networking_v1::IngressClass>),
        ..BASE
    },
    BuiltinDef {
        group: "networking.k8s.io",
        kind: "Ingress",
        plural: "ingresses",
        singular: "ingress",
        namespaced: true,
        verbs: RW,
        short_names: &["ing"],
        subresources: ONLY_STATUS,
        storage_path: "ingress",
        codec: Some(typed::<networking_v1::Ingress>),
        schema: Some(schema_of::<networking_v1::Ingress>),
        ..BASE
    },
    // GA in 1.33 (MultiCIDRServiceAllocator); stored as v1 from 1.34 on.
    BuiltinDef {
        group: "networking.k8s.io",
        kind: "IPAddress",
        plural: "ipaddresses",
        singular: "ipaddress",
        namespaced: false,
        verbs: RW,
        short_names: &["ip"],
        storage_path: "ipaddresses",
        codec: Some(typed::<networking_v1::IPAddress>),
        schema: Some(schema_of::<networking_v1::IPAddress>),
        ..BASE
    },
    BuiltinDef {
        group: "networking.k8s.io",
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        singular: "networkpolicy",
        namespaced: true,
        verbs: RW,
        short_names: &["netpol"],
        storage_path: "networkpolicies",
        codec: Some(typed::<networking_v1::NetworkPolicy>),
        schema: Some(schema_of::<networking_v1::NetworkPolicy>),
        ..BASE
    },
    // GA in 1.33 (MultiCIDRServiceAllocator); stored as v1 from 1.34 on.
    BuiltinDef {
        group: "networking.k8s.io",
        kind: "ServiceCIDR",
        plural: "servicecidrs",
        singular: "servicecidr",
        namespaced: false,
        verbs: RW,
        subresources: ONLY_STATUS,
        storage_path: "servicecidrs",
        codec: Some(typed::<networking_v1::ServiceCIDR>),
        schema: Some(schema_of::<networking_v1::ServiceCIDR>),
        ..BASE
    },
    // --------------------------------------------------------------- policy/v1
    BuiltinDef {
        group: "policy",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        namespaced: true,
        verbs: RW,
        short_names: &["pdb"],
        subresources: ONLY_STATUS,
        storage_path: "poddisruptionbudgets",
        codec: Some(typed::<policy_v1::PodDisruptionBudget>),
        schema: Some(schema_of::<policy_v1::PodDisruptionBudget>),
        ..BASE
    },
    // --------------------------------------------- rbac.authorization.k8s.io/v1
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
    // ------------------------------------------------------- storage.k8s.io/v1
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
    // ------------------------------------------ admissionregistration.k8s.io/v1
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
    // -------------------------------------------------- apiextensions.k8s.io/v1
    BuiltinDef {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        namespaced: false,
        verbs: RW,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        subresources: ONLY_STATUS,
        storage_path: "apiextensions.k8s.io/customresourcedefinitions",
        codec: Some(typed::<apiextensions_v1::CustomResourceDefinition>),
        schema: Some(schema_of::<apiextensions_v1::CustomResourceDefinition>),
        ..BASE
    },
    // ----------------------------------------------------- scheduling.k8s.io/v1
    BuiltinDef {
        group: "scheduling.k8s.io",
        kind: "PriorityClass",
        plural: "priorityclasses",
        singular: "priorityclass",
        namespaced: false,
        verbs: RW,
        short_names: &["pc"],
        storage_path: "priorityclasses",
        codec: Some(typed::<scheduling_v1::PriorityClass>),
        schema: Some(schema_of::<scheduling_v1::PriorityClass>),
        ..BASE
    },
    // --------------------------------------------------- coordination.k8s.io/v1
    BuiltinDef {
        group: "coordination.k8s.io",
        kind: "Lease",
        plural: "leases",
        singular: "lease",
        namespaced: true,
        verbs: RW,
        storage_path: "leases",
        codec: Some(typed::<coordination_v1::Lease>),
        schema: Some(schema_of::<coordination_v1::Lease>),
        ..BASE
    },
    // ----------------------------------------------------------- node.k8s.io/v1
    BuiltinDef {
        group: "node.k8s.io",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        singular: "runtimeclass",
        namespaced: false,
        verbs: RW,
        storage_path: "runtimeclasses",
        codec: Some(typed::<node_v1::RuntimeClass>),
        schema: Some(schema_of::<node_v1::RuntimeClass>),
        ..BASE
    },
    // ------------------------------------------------------ discovery.k8s.io/v1
    BuiltinDef {
        group: "discovery.k8s.io",
        kind: "EndpointSlice",
        plural: "endpointslices",
        singular: "endpointslice",
        namespaced: true,
        verbs: RW,
        storage_path: "endpointslices",
        codec: Some(typed::<discovery_v1::EndpointSlice>),
        schema: Some(schema_of::<discovery_v1::EndpointSlice>),
        ..BASE
    },
    // ------------------------------------------ flowcontrol.apiserver.k8s.io/v1
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
    // ------------------------------------------------------- resource.k8s.io/v1
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn api_version(d: &BuiltinDef) -> String {
        if d.group.is_empty() {
            d.version.to_string()
        } else {
            format!("{}/{}", d.group, d.version)
        }
    }

    fn minimal(d: &BuiltinDef) -> serde_json::Value {
        serde_json::json!({"apiVersion": api_version(d), "kind": d.kind, "metadata": {"name": "x"}})
    }

    #[test]
    fn no_duplicate_group_version_plural() {
        let mut seen = HashSet::new();
        for d in BUILTINS {
            assert!(
                seen.insert((d.group, d.version, d.plural)),
                "duplicate {}/{}",
                api_version(d),
                d.plural
            );
        }
    }

    #[test]
    fn served_group_versions_and_counts() {
        let mut gvs: Vec<(String, usize)> = Vec::new();
        for d in BUILTINS {
            let gv = api_version(d);
            match gvs.last_mut() {
                Some((last, n)) if *last == gv => *n += 1,
                _ => {
                    assert!(!gvs.iter().any(|(g, _)| *g == gv), "{gv} is not contiguous");
                    gvs.push((gv, 1));
                }
            }
        }
        let want: &[(&str, usize)] = &[
            ("v1", 17),
            ("apiregistration.k8s.io/v1", 1),
            ("apps/v1", 5),
            ("events.k8s.io/v1", 1),
            ("authentication.k8s.io/v1", 2),
            ("authorization.k8s.io/v1", 4),
            ("autoscaling/v2", 1),
            ("autoscaling/v1", 1),
            ("batch/v1", 2),
            ("certificates.k8s.io/v1", 1),
            ("networking.k8s.io/v1", 5),
            ("policy/v1", 1),
            ("rbac.authorization.k8s.io/v1", 4),
            ("storage.k8s.io/v1", 6),
            ("admissionregistration.k8s.io/v1", 4),
            ("apiextensions.k8s.io/v1", 1),
            ("scheduling.k8s.io/v1", 1),
            ("coordination.k8s.io/v1", 1),
            ("node.k8s.io/v1", 1),
            ("discovery.k8s.io/v1", 1),
            ("flowcontrol.apiserver.k8s.io/v1", 2),
            ("resource.k8s.io/v1", 4),
        ];
        let got: Vec<(&str, usize)> = gvs.iter().map(|(g, n)| (g.as_str(), *n)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn resources_sorted_by_plural_within_group_version() {
        for w in BUILTINS.windows(2) {
            if (w[0].group, w[0].version) == (w[1].group, w[1].version) {
                assert!(
                    w[0].plural < w[1].plural,
                    "{} before {}",
                    w[0].plural,
                    w[1].plural
                );
            }
        }
    }

    #[test]
    fn only_ga_versions_served() {
        for d in BUILTINS {
            assert!(
                !d.version.contains("alpha") && !d.version.contains("beta"),
                "{}",
                api_version(d)
            );
        }
    }

    #[test]
    fn stored_resources_have_a_storage_path() {
        let never_stored: HashSet<&str> = [
            "bindings",
            "componentstatuses",
            "tokenreviews",
            "selfsubjectreviews",
            "localsubjectaccessreviews",
            "selfsubjectaccessreviews",
            "selfsubjectrulesreviews",
            "subjectaccessreviews",
        ]
        .into_iter()
        .collect();
        for d in BUILTINS {
            if never_stored.contains(d.plural) {
                assert!(d.storage_path.is_empty(), "{} must not be stored", d.plural);
            } else {
                assert!(
                    !d.storage_path.is_empty(),
                    "{} has no storage path",
                    d.plural
                );
                assert!(
                    d.verbs.contains(&"watch"),
                    "{} is stored but not watchable",
                    d.plural
                );
            }
        }
    }

    #[test]
    fn shared_storage_agrees() {
        // Resources with the same storage path must be stored as one version.
        for a in BUILTINS {
            for b in BUILTINS {
                if !a.storage_path.is_empty() && a.storage_path == b.storage_path {
                    assert_eq!(a.storage_version, b.storage_version, "{}", a.storage_path);
                    assert_eq!(a.kind, b.kind, "{}", a.storage_path);
                }
            }
        }
    }

    #[test]
    fn singular_is_lower_case_kind() {
        for d in BUILTINS {
            assert_eq!(d.singular, d.kind.to_lowercase(), "{}", d.plural);
        }
    }

    #[test]
    fn every_codec_matches_its_group_version_kind() {
        for d in BUILTINS {
            let codec = d
                .codec
                .unwrap_or_else(|| panic!("{} has no codec", d.plural));
            let out = codec(&minimal(d)).unwrap_or_else(|e| panic!("{}: {e}", d.plural));
            assert_eq!(out["apiVersion"], api_version(d).as_str(), "{}", d.plural);
            assert_eq!(out["kind"], d.kind, "{}", d.plural);
            assert_eq!(out["metadata"]["name"], "x", "{}", d.plural);
            // The wrong kind is refused.
            let mut wrong = minimal(d);
            wrong["kind"] = "NoSuchKind".into();
            assert!(codec(&wrong).is_err(), "{} accepted a wrong kind", d.plural);
        }
    }

    #[test]
    fn codec_round_trips_and_drops_unknown_fields() {
        let pod = BUILTINS.iter().find(|d| d.plural == "pods").unwrap();
        let v = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "bogus": 1},
        });
        let out = (pod.codec.unwrap())(&v).unwrap();
        assert_eq!(out["spec"]["containers"][0]["image"], "busybox");
        assert_eq!(out["metadata"]["labels"]["a"], "b");
        assert!(out["spec"].get("bogus").is_none());

        let deploy = BUILTINS.iter().find(|d| d.plural == "deployments").unwrap();
        let bad = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "three"}});
        assert!((deploy.codec.unwrap())(&bad).is_err());
    }
}
