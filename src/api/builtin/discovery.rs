//! discovery.k8s.io/v1 in the built-in table: EndpointSlice.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::discovery::v1 as discovery_v1;

use super::{BASE, RW};

pub(super) const DISCOVERY: &[BuiltinDef] = &[BuiltinDef {
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
}];
