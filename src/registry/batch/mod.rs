//! Strategies of the batch group: Job and CronJob (upstream's
//! pkg/registry/batch, pkg/apis/batch/v1/defaults.go and
//! pkg/apis/batch/validation).
//!
//! Each kind has its file; the JobSpec rules live with Job (job.rs) and a
//! CronJob's jobTemplate is checked with them.

mod cron_job;
mod job;

pub use cron_job::{parse_cron, CronJobStrategy};
pub use job::{
    JobStrategy, CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
};
