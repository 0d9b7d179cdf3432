//! node.k8s.io/v1 in the built-in table: RuntimeClass.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::node::v1 as node_v1;

use super::{BASE, RW};

pub(super) const NODE: &[BuiltinDef] = &[BuiltinDef {
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
}];
