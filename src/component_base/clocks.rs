//! The periods and waits of the built-in controllers. `kapi serve` uses
//! kube-controller-manager's defaults; a test (`kapi::testing`) may shorten
//! them, so that what a cluster does in tens of seconds (a Terminating
//! namespace emptied of pods no kubelet will stop, a quota recounted) is
//! done before a test's patience runs out.

use std::time::Duration;

/// Every period a built-in controller waits on. Per server, never global:
/// two test servers in one process may differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// How soon a Terminating namespace whose content is still going is
    /// looked at again (upstream: `estimate/2 + 1` seconds, 1 s without
    /// an estimate).
    pub namespace_requeue: Duration,
    /// How long a pod's node must be missing before podgc deletes the pod
    /// (upstream's `quarantineTime`).
    pub podgc_quarantine: Duration,
    /// How often podgc looks for such pods (upstream's `gcCheckPeriod`).
    pub podgc_period: Duration,
    /// The resource quota controller's full recount
    /// (`--resource-quota-sync-period`).
    pub resource_quota_sync_period: Duration,
    /// How often a CRD whose instances are still being removed is looked
    /// at again.
    pub crd_finalizing_requeue: Duration,
    /// How often a non-leading instance tries for the controller-manager
    /// Lease (`--leader-elect-retry-period`).
    pub leader_elect_retry_period: Duration,
}

impl Clocks {
    /// kube-controller-manager's defaults.
    pub const UPSTREAM: Clocks = Clocks {
        namespace_requeue: Duration::from_secs(1),
        podgc_quarantine: Duration::from_secs(40),
        podgc_period: Duration::from_secs(20),
        resource_quota_sync_period: Duration::from_secs(5 * 60),
        crd_finalizing_requeue: Duration::from_secs(1),
        leader_elect_retry_period: Duration::from_secs(2),
    };

    /// Periods a test can wait out: each well under a second, long enough
    /// that the controllers do not spin on an idle server.
    pub const SHORT: Clocks = Clocks {
        namespace_requeue: Duration::from_millis(20),
        podgc_quarantine: Duration::from_millis(100),
        podgc_period: Duration::from_millis(50),
        resource_quota_sync_period: Duration::from_millis(500),
        crd_finalizing_requeue: Duration::from_millis(20),
        leader_elect_retry_period: Duration::from_millis(100),
    };
}

impl Default for Clocks {
    fn default() -> Self {
        Clocks::UPSTREAM
    }
}
