//! Strategies of the autoscaling group: HorizontalPodAutoscaler, served as
//! autoscaling/v2 and v1 (upstream's pkg/registry/autoscaling).
//!
//! The kind has its file, named as upstream's
//! pkg/registry/autoscaling/horizontalpodautoscaler; one strategy serves
//! both versions (an object's apiVersion tells its shape), so the file is
//! not split by version. Re-exported here, so
//! `registry::autoscaling::HorizontalPodAutoscalerStrategy` stays the path
//! callers use.

mod horizontal_pod_autoscaler;

pub use horizontal_pod_autoscaler::{HorizontalPodAutoscalerStrategy, DEFAULT_CPU_UTILIZATION};
