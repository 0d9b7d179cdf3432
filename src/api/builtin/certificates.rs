//! certificates.k8s.io/v1 in the built-in table: CertificateSigningRequest,
//! with its status and approval subresources.

use crate::api::catalog::{schema_of, typed, BuiltinDef, SubDef};
use k8s_openapi::api::certificates::v1 as certificates_v1;

use super::{BASE, GET_PATCH_UPDATE, RW, STATUS};

pub(super) const CERTIFICATES: &[BuiltinDef] = &[BuiltinDef {
    group: "certificates.k8s.io",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    singular: "certificatesigningrequest",
    namespaced: false,
    verbs: RW,
    short_names: &["csr"],
    subresources: &[
        SubDef {
            name: "approval",
            group: "",
            version: "",
            kind: "",
            verbs: GET_PATCH_UPDATE,
        },
        STATUS,
    ],
    storage_path: "certificatesigningrequests",
    selectable_fields: &["spec.signerName"],
    codec: Some(typed::<certificates_v1::CertificateSigningRequest>),
    schema: Some(schema_of::<certificates_v1::CertificateSigningRequest>),
    ..BASE
}];
