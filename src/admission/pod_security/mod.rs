//! PodSecurity (k8s.io/pod-security-admission): the Pod Security Standards
//! levels `privileged`, `baseline` and `restricted`, chosen per namespace
//! by the labels `pod-security.kubernetes.io/{enforce,audit,warn}` (and
//! `-version`, `latest` by default). `enforce` refuses pods; `warn`
//! (which defaults to a stricter `enforce`) answers warnings for pods and
//! for the pod templates of workload resources; `audit` would annotate audit events (kapi has no audit log,
//! so it is parsed and otherwise ignored). The checks, their IDs, order,
//! versions and messages are upstream's `policy/check_*.go`; the default
//! policy is `privileged:latest` for every mode and nothing is exempt, as
//! kube-apiserver's default configuration.
//!
//! Laid out as upstream splits it: the policy a namespace chooses
//! (`policy`), the checks of each level (`checks`), and the admission
//! plugin that applies them to requests (`plugin`).

mod checks;
mod plugin;
mod policy;

pub use checks::{evaluate, forbidden_detail, Violation};
pub use plugin::PodSecurity;
pub use policy::{
    policy_to_evaluate, Level, LevelVersion, Policy, Version, AUDIT_LEVEL_LABEL,
    AUDIT_VERSION_LABEL, ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL, WARN_LEVEL_LABEL,
    WARN_VERSION_LABEL,
};
