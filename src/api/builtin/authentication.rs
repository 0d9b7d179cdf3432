//! authentication.k8s.io/v1 in the built-in table: the reviews (TokenReview,
//! SelfSubjectReview), create-only and never stored.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::authentication::v1 as authentication_v1;

use super::{BASE, CREATE};

pub(super) const AUTHENTICATION: &[BuiltinDef] = &[
    BuiltinDef {
        group: "authentication.k8s.io",
        kind: "SelfSubjectReview",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authentication_v1::SelfSubjectReview>),
        schema: Some(schema_of::<authentication_v1::SelfSubjectReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authentication.k8s.io",
        kind: "TokenReview",
        plural: "tokenreviews",
        singular: "tokenreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authentication_v1::TokenReview>),
        schema: Some(schema_of::<authentication_v1::TokenReview>),
        ..BASE
    },
];
