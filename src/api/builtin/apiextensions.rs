//! apiextensions.k8s.io/v1 in the built-in table: CustomResourceDefinition,
//! through which every custom resource comes to be served.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const APIEXTENSIONS: &[BuiltinDef] = &[BuiltinDef {
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
}];
