//! autoscaling in the built-in table: HorizontalPodAutoscaler, served as v2
//! (preferred) and v1 and stored once as v2, so both entries share `HPA`.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::autoscaling::v1 as autoscaling_v1;
use k8s_openapi::api::autoscaling::v2 as autoscaling_v2;

use super::{BASE, ONLY_STATUS, RW};

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

pub(super) const AUTOSCALING: &[BuiltinDef] = &[
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
];
