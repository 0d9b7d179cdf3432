//! The built-in kube-controller-manager: controllers that must run once
//! across kapi instances sharing storage run only on the instance holding
//! the `kube-system/kube-controller-manager` Lease (leader election), and
//! `--controllers` chooses them by name as kube-controller-manager's flag does.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::registry::{Registries, WriteOptions};

/// Names kapi's controllers answer to, as kube-controller-manager names them.
pub const CONTROLLERS: &[&str] = &[
    "namespace",
    "garbagecollector",
    "serviceaccount",
    "root-ca-cert-publisher",
    "resourcequota",
    "pvc-protection",
    "pv-protection",
    "podgc",
];

/// The names newer kube-controller-manager releases use, with the older
/// name each is an alias of (cmd/kube-controller-manager/names): both are
/// accepted by `--controllers`.
const NEW_NAMES: &[(&str, &str)] = &[
    ("namespace-controller", "namespace"),
    ("garbage-collector-controller", "garbagecollector"),
    ("serviceaccount-controller", "serviceaccount"),
    (
        "root-ca-certificate-publisher-controller",
        "root-ca-cert-publisher",
    ),
    ("resourcequota-controller", "resourcequota"),
    (
        "persistentvolumeclaim-protection-controller",
        "pvc-protection",
    ),
    ("persistentvolume-protection-controller", "pv-protection"),
    ("pod-garbage-collector-controller", "podgc"),
];

/// `--controllers`: `*` for all, `name` to add, `-name` to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection(Vec<String>);

impl Selection {
    pub fn parse(items: &[String]) -> Result<Selection, String> {
        let items: Vec<String> = if items.is_empty() {
            vec!["*".into()]
        } else {
            items.to_vec()
        };
        let mut canonical = Vec::with_capacity(items.len());
        for i in &items {
            let (minus, name) = match i.strip_prefix('-') {
                Some(n) => ("-", n),
                None => ("", i.as_str()),
            };
            let name = NEW_NAMES
                .iter()
                .find(|(new, _)| *new == name)
                .map_or(name, |(_, old)| *old);
            if name != "*" && !CONTROLLERS.contains(&name) {
                return Err(format!(
                    "{i:?} is not a known controller (known: {})",
                    CONTROLLERS.join(", ")
                ));
            }
            canonical.push(format!("{minus}{name}"));
        }
        Ok(Selection(canonical))
    }

    pub fn enabled(&self, name: &str) -> bool {
        if self.0.iter().any(|i| i.strip_prefix('-') == Some(name)) {
            return false;
        }
        self.0.iter().any(|i| i == "*" || i == name)
    }
}

impl Default for Selection {
    fn default() -> Self {
        Selection(vec!["*".into()])
    }
}

type Start =
    Box<dyn Fn(CancellationToken) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Controllers to run while this instance leads.
#[derive(Default)]
pub struct Manager {
    controllers: Vec<(&'static str, Start)>,
}

impl Manager {
    pub fn add<F, Fut>(&mut self, name: &'static str, start: F)
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.controllers
            .push((name, Box::new(move |stop| Box::pin(start(stop)))));
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.controllers.iter().map(|(n, _)| *n).collect()
    }

    /// Campaigns for the lease; runs the selected controllers while leading.
    pub async fn run(
        self,
        registries: Registries,
        identity: String,
        selection: Selection,
        retry: Duration,
        stop: CancellationToken,
    ) {
        let mut leading: Option<CancellationToken> = None;
        loop {
            // Right after start the lease's namespace may not exist yet:
            // try again soon, so controllers (and the default
            // ServiceAccounts pods wait for) are not two seconds late.
            let mut wait = retry;
            let leader = match try_lead(&registries, &identity).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::debug!(error = %e, "leader election");
                    if leading.is_none() {
                        wait = Duration::from_millis(50);
                    }
                    false
                }
            };
            match (&leading, leader) {
                (None, true) => {
                    tracing::info!(identity = %identity, "leading kube-controller-manager");
                    let token = stop.child_token();
                    for (name, start) in &self.controllers {
                        if selection.enabled(name) {
                            tokio::spawn(start(token.child_token()));
                        }
                    }
                    leading = Some(token);
                }
                (Some(token), false) => {
                    tracing::info!(identity = %identity, "lost the kube-controller-manager lease");
                    token.cancel();
                    leading = None;
                }
                _ => {}
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.cancelled() => {
                    if let Some(token) = leading {
                        token.cancel();
                        // As upstream's ReleaseOnCancel: the next instance
                        // takes over at once instead of after the lease term.
                        if let Err(e) = release(&registries, &identity).await {
                            tracing::debug!(error = %e, "releasing the controller-manager lease");
                        }
                    }
                    return;
                }
            }
        }
    }
}

const LEASE: &str = "kube-controller-manager";
const LEASE_SECONDS: i64 = 15;

fn micro_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Gives the lease up: no holder, so any instance may take it now.
async fn release(registries: &Registries, identity: &str) -> Result<(), String> {
    let leases = registries
        .get("coordination.k8s.io", "v1", "leases")
        .ok_or("leases are not served")?;
    let bytes = leases
        .get_object("kube-system", LEASE, None)
        .await
        .map_err(|e| e.to_string())?;
    let mut lease: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if lease["spec"]["holderIdentity"].as_str() != Some(identity) {
        return Ok(());
    }
    let spec = &mut lease["spec"];
    spec["holderIdentity"] = json!("");
    spec["leaseDurationSeconds"] = json!(1);
    spec["renewTime"] = json!(micro_now());
    leases
        .update("kube-system", LEASE, lease, None, &WriteOptions::default())
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Acquires or renews the lease; true while this identity holds it.
async fn try_lead(registries: &Registries, identity: &str) -> Result<bool, String> {
    let leases = registries
        .get("coordination.k8s.io", "v1", "leases")
        .ok_or("leases are not served")?;
    let now = micro_now();
    match leases.get_object("kube-system", LEASE, None).await {
        Err(e) if e.code == 404 => {
            let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": LEASE, "namespace": "kube-system"},
                "spec": {"holderIdentity": identity, "leaseDurationSeconds": LEASE_SECONDS, "acquireTime": now, "renewTime": now, "leaseTransitions": 0}});
            match leases
                .create("kube-system", lease, &WriteOptions::default())
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.code == 409 => Ok(false),
                Err(e) => Err(e.to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
        Ok(bytes) => {
            let mut lease: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            let spec = lease["spec"].clone();
            let holder = spec["holderIdentity"].as_str().unwrap_or("").to_string();
            let renewed = spec["renewTime"]
                .as_str()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
            let duration = spec["leaseDurationSeconds"]
                .as_i64()
                .unwrap_or(LEASE_SECONDS);
            let expired = renewed.is_none_or(|r| {
                chrono::Utc::now()
                    > r.with_timezone(&chrono::Utc) + chrono::Duration::seconds(duration)
            });
            if holder != identity && !holder.is_empty() && !expired {
                return Ok(false);
            }
            if holder != identity {
                lease["spec"]["holderIdentity"] = json!(identity);
                lease["spec"]["acquireTime"] = json!(now);
                lease["spec"]["leaseTransitions"] =
                    json!(spec["leaseTransitions"].as_i64().unwrap_or(0) + 1);
            }
            lease["spec"]["renewTime"] = json!(now);
            lease["spec"]["leaseDurationSeconds"] = json!(LEASE_SECONDS);
            // The lease's resourceVersion makes this a compare-and-swap: one winner.
            match leases
                .update("kube-system", LEASE, lease, None, &WriteOptions::default())
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.code == 409 => Ok(false),
                Err(e) => Err(e.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections() {
        let all = Selection::parse(&[]).expect("default");
        assert!(all.enabled("namespace"));
        let some = Selection::parse(&["*".into(), "-garbagecollector".into()]).expect("parse");
        assert!(some.enabled("namespace") && !some.enabled("garbagecollector"));
        let only = Selection::parse(&["namespace".into()]).expect("parse");
        assert!(only.enabled("namespace") && !only.enabled("serviceaccount"));
        assert!(Selection::parse(&["nope".into()]).is_err());
        // Newer releases' names are aliases.
        let new = Selection::parse(&["*".into(), "-namespace-controller".into()]).expect("parse");
        assert!(!new.enabled("namespace") && new.enabled("serviceaccount"));
        let only = Selection::parse(&["garbage-collector-controller".into()]).expect("parse");
        assert!(only.enabled("garbagecollector") && !only.enabled("namespace"));
    }
}
