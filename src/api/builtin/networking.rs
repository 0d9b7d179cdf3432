//! networking.k8s.io/v1 in the built-in table: Ingress, IngressClass,
//! NetworkPolicy and the IP address allocation kinds (IPAddress,
//! ServiceCIDR).

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::networking::v1 as networking_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const NETWORKING: &[BuiltinDef] = &[
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
];
