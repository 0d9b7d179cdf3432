//! apiregistration.k8s.io/v1 in the built-in table: APIService, which the
//! aggregator reads to decide which group versions are served elsewhere.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const APIREGISTRATION: &[BuiltinDef] = &[BuiltinDef {
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
}];
