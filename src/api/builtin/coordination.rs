//! coordination.k8s.io/v1 in the built-in table: Lease, which node heartbeats
//! and leader election use.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::coordination::v1 as coordination_v1;

use super::{BASE, RW};

pub(super) const COORDINATION: &[BuiltinDef] = &[BuiltinDef {
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
}];
