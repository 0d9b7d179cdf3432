//! policy/v1 in the built-in table: PodDisruptionBudget.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::policy::v1 as policy_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const POLICY: &[BuiltinDef] = &[BuiltinDef {
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
}];
