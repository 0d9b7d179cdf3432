//! Auto-registration, as upstream's `kube-apiserver-autoregistration`
//! post-start hook runs it: a local APIService for every built-in group
//! version (`kube-aggregator.kubernetes.io/automanaged: onstart`, with the
//! group and version priorities of upstream's `apiVersionPriorities`) and
//! for every served version of every CRD (`automanaged: "true"`, priority
//! 1000/100 as upstream's crdregistration controller gives them, removed
//! when the CRD version goes). APIServices without the label are the
//! user's and are never touched. The `autoregister-completion` readiness
//! check waits until each built-in APIService has been seen Available.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::api::catalog::Catalog;
use crate::informers::{Informers, Wakeup};
use crate::registry::{meta, DeleteOptions, ListParams, Registries, WriteOptions};
use crate::storage::store::Preconditions;

pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";
pub const MANAGE_ON_START: &str = "onstart";
pub const MANAGE_CONTINUOUSLY: &str = "true";

/// A failed pass is run again after this long, even with nothing changed.
const RETRY: Duration = Duration::from_secs(1);

/// upstream's `apiVersionPriorities` (cmd/kube-apiserver/app/aggregator.go
/// merged with pkg/controlplane/apiserver's generic ones): group priority
/// minimum and version priority of each built-in group version.
pub const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("events.k8s.io", "v1beta1", 17750, 5),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authentication.k8s.io", "v1beta1", 17700, 9),
    ("authentication.k8s.io", "v1alpha1", 17700, 1),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v2beta1", 17500, 9),
    ("autoscaling", "v2beta2", 17500, 1),
    ("batch", "v1", 17400, 15),
    ("batch", "v1beta1", 17400, 9),
    ("batch", "v2alpha1", 17400, 9),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("certificates.k8s.io", "v1beta1", 17300, 9),
    ("certificates.k8s.io", "v1alpha1", 17300, 1),
    ("networking.k8s.io", "v1", 17200, 15),
    ("networking.k8s.io", "v1beta1", 17200, 9),
    ("policy", "v1", 17100, 15),
    ("policy", "v1beta1", 17100, 9),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("storage.k8s.io", "v1beta1", 16800, 9),
    ("storage.k8s.io", "v1alpha1", 16800, 1),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1beta1", 16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1", 16700, 9),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("coordination.k8s.io", "v1beta1", 16500, 13),
    ("coordination.k8s.io", "v1alpha2", 16500, 12),
    ("node.k8s.io", "v1", 16300, 15),
    ("node.k8s.io", "v1alpha1", 16300, 1),
    ("node.k8s.io", "v1beta1", 16300, 9),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("discovery.k8s.io", "v1beta1", 16200, 12),
    ("resource.k8s.io", "v1", 16200, 21),
    ("resource.k8s.io", "v1beta2", 16200, 15),
    ("resource.k8s.io", "v1beta1", 16200, 9),
    ("resource.k8s.io", "v1alpha3", 16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", 16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", 16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", 16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1", 16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1", 16000, 9),
    ("storagemigration.k8s.io", "v1alpha1", 15800, 9),
];

/// What upstream's crdregistration controller gives every CRD version.
pub const CRD_GROUP_PRIORITY_MINIMUM: i64 = 1000;
pub const CRD_VERSION_PRIORITY: i64 = 100;

pub fn priority(group: &str, version: &str) -> Option<(i64, i64)> {
    PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|(_, _, gp, vp)| (*gp, *vp))
}

/// An APIService the controller wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desired {
    pub name: String,
    pub group: String,
    pub version: String,
    pub group_priority_minimum: i64,
    pub version_priority: i64,
    /// `onstart` or `true`.
    pub manage: &'static str,
}

impl Desired {
    fn new(group: &str, version: &str, gp: i64, vp: i64, manage: &'static str) -> Self {
        Desired {
            name: format!("{version}.{group}"),
            group: group.into(),
            version: version.into(),
            group_priority_minimum: gp,
            version_priority: vp,
            manage,
        }
    }

    fn object(&self) -> Value {
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": self.name, "labels": {AUTOMANAGED_LABEL: self.manage}},
            "spec": self.spec(),
        })
    }

    fn spec(&self) -> Value {
        json!({
            "group": self.group,
            "version": self.version,
            "groupPriorityMinimum": self.group_priority_minimum,
            "versionPriority": self.version_priority,
        })
    }
}

/// The built-in group versions the delegates serve (the aggregator's own
/// group, apiregistration.k8s.io, has no APIService upstream either), as
/// upstream's `apiServicesToRegister` finds them.
pub fn builtin_api_services(catalog: &Catalog) -> Vec<Desired> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for r in catalog.all() {
        if r.custom.is_some() || r.proxy.is_some() || r.group == "apiregistration.k8s.io" {
            continue;
        }
        if !seen.insert((r.group.clone(), r.version.clone())) {
            continue;
        }
        match priority(&r.group, &r.version) {
            Some((gp, vp)) => out.push(Desired::new(&r.group, &r.version, gp, vp, MANAGE_ON_START)),
            None => {
                tracing::debug!(group = %r.group, version = %r.version, "skipping APIService creation")
            }
        }
    }
    out
}

/// Every served version of every CRD.
async fn crd_api_services(registries: &Registries) -> Result<Vec<Desired>, String> {
    let reg = registries
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .ok_or("CRDs are not served")?;
    let list = reg
        .list(
            "",
            &ListParams {
                resource_version: Some("0".into()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for crd in list
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
    {
        let group = crd["spec"]["group"].as_str().unwrap_or("");
        for v in crd["spec"]["versions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let version = v["name"].as_str().unwrap_or("");
            if v["served"] == true && !group.is_empty() && !version.is_empty() {
                out.push(Desired::new(
                    group,
                    version,
                    CRD_GROUP_PRIORITY_MINIMUM,
                    CRD_VERSION_PRIORITY,
                    MANAGE_CONTINUOUSLY,
                ));
            }
        }
    }
    Ok(out)
}

/// The controller's state: the built-in set fixed at start, which of them
/// were synced once (an `onstart` APIService a user deletes later stays
/// deleted), and which were not yet seen Available.
pub struct AutoRegister {
    onstart: Vec<Desired>,
    synced: Mutex<HashSet<String>>,
    pending: Mutex<BTreeSet<String>>,
}

impl AutoRegister {
    pub fn new(onstart: Vec<Desired>) -> Arc<Self> {
        let pending = onstart.iter().map(|d| d.name.clone()).collect();
        Arc::new(AutoRegister {
            onstart,
            synced: Mutex::default(),
            pending: Mutex::new(pending),
        })
    }

    /// The `autoregister-completion` check.
    pub fn completion(&self) -> Result<(), String> {
        let pending = self.pending.lock();
        if pending.is_empty() {
            Ok(())
        } else {
            let names: Vec<&str> = pending.iter().map(String::as_str).collect();
            Err(format!("missing APIService: [{}]", names.join(" ")))
        }
    }

    /// One pass: create, update and delete APIServices toward the wanted set.
    pub async fn sync(&self, registries: &Registries) -> Result<(), String> {
        let reg = registries
            .get("apiregistration.k8s.io", "v1", "apiservices")
            .ok_or("APIServices are not served")?;
        let list = reg
            .list(
                "",
                &ListParams {
                    resource_version: Some("0".into()),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| e.to_string())?;
        let current: BTreeMap<String, Value> = list
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
            .map(|o| (meta::name(&o).to_string(), o))
            .collect();
        let mut desired: BTreeMap<String, Desired> = BTreeMap::new();
        for d in crd_api_services(registries).await? {
            desired.insert(d.name.clone(), d);
        }
        // A built-in group version wins over a CRD claiming it.
        for d in &self.onstart {
            desired.insert(d.name.clone(), d.clone());
        }
        let mut writes: Vec<futures::future::BoxFuture<'_, Result<(), String>>> = Vec::new();
        for (name, d) in &desired {
            let synced_before = self.synced.lock().contains(name);
            match current.get(name) {
                None if d.manage == MANAGE_ON_START && synced_before => {}
                None => {
                    let reg = reg.clone();
                    let obj = d.object();
                    writes.push(Box::pin(async move {
                        match reg.create("", obj, &WriteOptions::default()).await {
                            Ok(_) => Ok(()),
                            Err(e) if e.code == 409 => Ok(()),
                            Err(e) => Err(format!("creating APIService {}: {e}", d.name)),
                        }
                    }));
                }
                Some(cur) if automanaged(cur).is_none() => {}
                Some(_) if d.manage == MANAGE_ON_START && synced_before => {}
                Some(cur) => {
                    let differs = cur["spec"]["group"] != d.group.as_str()
                        || cur["spec"]["version"] != d.version.as_str()
                        || cur["spec"]["groupPriorityMinimum"] != d.group_priority_minimum
                        || cur["spec"]["versionPriority"] != d.version_priority
                        || !cur["spec"]["service"].is_null()
                        || automanaged(cur) != Some(d.manage);
                    if differs {
                        let mut obj = cur.clone();
                        obj["spec"] = d.spec();
                        obj["metadata"]["labels"][AUTOMANAGED_LABEL] = json!(d.manage);
                        let reg = reg.clone();
                        writes.push(Box::pin(async move {
                            reg.update("", &d.name, obj, None, &WriteOptions::default())
                                .await
                                .map(|_| ())
                                .map_err(|e| format!("updating APIService {}: {e}", d.name))
                        }));
                    }
                }
            }
        }
        for (name, cur) in &current {
            if desired.contains_key(name) || automanaged(cur).is_none() || meta::is_deleting(cur) {
                continue;
            }
            let uid = cur["metadata"]["uid"].as_str().map(String::from);
            let reg = reg.clone();
            writes.push(Box::pin(async move {
                let opts = DeleteOptions {
                    preconditions: Preconditions {
                        uid,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                match reg.delete("", name, &opts).await {
                    Ok(_) => Ok(()),
                    Err(e) if e.code == 404 || e.code == 409 => Ok(()),
                    Err(e) => Err(format!("deleting APIService {name}: {e}")),
                }
            }));
        }
        let mut first_error = None;
        for r in futures::future::join_all(writes).await {
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        }
        if first_error.is_none() {
            self.synced
                .lock()
                .extend(self.onstart.iter().map(|d| d.name.clone()));
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Drops from the pending set every built-in APIService now Available.
    pub async fn observe(&self, registries: &Registries) -> Result<(), String> {
        if self.pending.lock().is_empty() {
            return Ok(());
        }
        let reg = registries
            .get("apiregistration.k8s.io", "v1", "apiservices")
            .ok_or("APIServices are not served")?;
        let list = reg
            .list("", &ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let mut pending = self.pending.lock();
        for o in list
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
        {
            if super::proxy::is_available(&o) {
                pending.remove(meta::name(&o));
            }
        }
        Ok(())
    }

    /// The first pass, done inside the post-start hook so the server is
    /// ready when the hooks are: register, mark local ones Available,
    /// observe. It races the availability controller's status writes and
    /// the watch cache catching up, so a pass that fails or leaves an
    /// APIService pending is run again rather than left to the next tick.
    pub async fn start(&self, registries: &Registries) -> Result<(), String> {
        const TRIES: u32 = 20;
        let mut attempt = 1;
        loop {
            let pass = async {
                self.sync(registries).await?;
                super::available::sync_local(registries).await?;
                self.observe(registries).await?;
                self.completion()
            };
            match pass.await {
                Ok(()) => return Ok(()),
                Err(e) if attempt == TRIES => return Err(e),
                Err(e) => {
                    tracing::debug!(error = %e, attempt, "initial APIService registration");
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    attempt += 1;
                }
            }
        }
    }

    /// Runs a pass whenever an APIService or a CRD changes (upstream's
    /// autoregister and crdregistration controllers follow the same two
    /// informers); a failed pass is tried again after [`RETRY`].
    pub async fn run(self: Arc<Self>, informers: Informers, stop: CancellationToken) {
        let (Some(api_services), Some(crds)) = (
            informers.get("apiregistration.k8s.io", "v1", "apiservices"),
            informers.get("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        ) else {
            return;
        };
        let wake = Wakeup::on(&[&api_services, &crds]);
        let registries = informers.registries().clone();
        loop {
            let mut failed = false;
            if let Err(e) = self.sync(&registries).await {
                tracing::debug!(error = %e, "autoregistration pass failed");
                failed = true;
            }
            if let Err(e) = self.observe(&registries).await {
                tracing::debug!(error = %e, "autoregistration pass failed");
                failed = true;
            }
            tokio::select! {
                _ = wake.changed() => {}
                _ = tokio::time::sleep(RETRY), if failed => {}
                _ = stop.cancelled() => return,
            }
        }
    }
}

/// The value of the automanaged label, if any.
fn automanaged(obj: &Value) -> Option<&'static str> {
    match obj["metadata"]["labels"][AUTOMANAGED_LABEL].as_str() {
        Some(MANAGE_ON_START) => Some(MANAGE_ON_START),
        Some(MANAGE_CONTINUOUSLY) => Some(MANAGE_CONTINUOUSLY),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_set_follows_the_priority_table() {
        let catalog = crate::app::builtin_catalog();
        let all = builtin_api_services(&catalog);
        let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
        assert!(names.contains(&"v1."), "{names:?}");
        assert!(names.contains(&"v1.apps"));
        assert!(names.contains(&"v2.autoscaling"));
        assert!(names.contains(&"v1.apiextensions.k8s.io"));
        assert!(!names.iter().any(|n| n.ends_with("apiregistration.k8s.io")));
        let apps = all.iter().find(|d| d.name == "v1.apps").expect("apps");
        assert_eq!(
            (apps.group_priority_minimum, apps.version_priority),
            (17800, 15)
        );
        // Every built-in group version has a priority.
        let mut gvs: Vec<(String, String)> = catalog
            .all()
            .iter()
            .filter(|r| r.group != "apiregistration.k8s.io")
            .map(|r| (r.group.clone(), r.version.clone()))
            .collect();
        gvs.dedup();
        for (g, v) in gvs {
            assert!(priority(&g, &v).is_some(), "{v}.{g}");
        }
    }

    #[test]
    fn completion_message() {
        let a = AutoRegister::new(vec![
            Desired::new("", "v1", 18000, 1, MANAGE_ON_START),
            Desired::new("apps", "v1", 17800, 15, MANAGE_ON_START),
        ]);
        assert_eq!(
            a.completion(),
            Err("missing APIService: [v1. v1.apps]".into())
        );
        a.pending.lock().clear();
        assert_eq!(a.completion(), Ok(()));
    }
}
