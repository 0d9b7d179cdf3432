//! authorization.k8s.io/v1 in the built-in table: the access reviews, create-
//! only and never stored; they answer questions about the authorizer.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::authorization::v1 as authorization_v1;

use super::{BASE, CREATE};

pub(super) const AUTHORIZATION: &[BuiltinDef] = &[
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "LocalSubjectAccessReview",
        plural: "localsubjectaccessreviews",
        singular: "localsubjectaccessreview",
        namespaced: true,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::LocalSubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::LocalSubjectAccessReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SelfSubjectAccessReview",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SelfSubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::SelfSubjectAccessReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SelfSubjectRulesReview",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SelfSubjectRulesReview>),
        schema: Some(schema_of::<authorization_v1::SelfSubjectRulesReview>),
        ..BASE
    },
    BuiltinDef {
        group: "authorization.k8s.io",
        kind: "SubjectAccessReview",
        plural: "subjectaccessreviews",
        singular: "subjectaccessreview",
        namespaced: false,
        verbs: CREATE,
        storage_path: "",
        codec: Some(typed::<authorization_v1::SubjectAccessReview>),
        schema: Some(schema_of::<authorization_v1::SubjectAccessReview>),
        ..BASE
    },
];
