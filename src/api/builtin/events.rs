//! events.k8s.io/v1 in the built-in table: the newer Event API, stored with
//! core v1 events, which is why its selectable fields map onto theirs.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::events::v1 as events_v1;

use super::{BASE, RW};

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

pub(super) const EVENTS: &[BuiltinDef] = &[BuiltinDef {
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
}];
