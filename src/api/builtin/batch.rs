//! batch/v1 in the built-in table: Job and CronJob.

use crate::api::catalog::{schema_of, typed, BuiltinDef};
use k8s_openapi::api::batch::v1 as batch_v1;

use super::{BASE, ONLY_STATUS, RW};

pub(super) const BATCH: &[BuiltinDef] = &[
    BuiltinDef {
        group: "batch",
        kind: "CronJob",
        plural: "cronjobs",
        singular: "cronjob",
        namespaced: true,
        verbs: RW,
        short_names: &["cj"],
        categories: &["all"],
        subresources: ONLY_STATUS,
        storage_path: "cronjobs",
        codec: Some(typed::<batch_v1::CronJob>),
        schema: Some(schema_of::<batch_v1::CronJob>),
        ..BASE
    },
    BuiltinDef {
        group: "batch",
        kind: "Job",
        plural: "jobs",
        singular: "job",
        namespaced: true,
        verbs: RW,
        categories: &["all"],
        subresources: ONLY_STATUS,
        storage_path: "jobs",
        selectable_fields: &["status.successful"],
        codec: Some(typed::<batch_v1::Job>),
        schema: Some(schema_of::<batch_v1::Job>),
        ..BASE
    },
];
