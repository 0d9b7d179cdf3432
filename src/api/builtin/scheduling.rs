//! scheduling.k8s.io/v1 in the built-in table: PriorityClass.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::scheduling::v1 as scheduling_v1;

use super::{BASE, RW};

pub(super) const SCHEDULING: &[BuiltinDef] = &[BuiltinDef {
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
}];
