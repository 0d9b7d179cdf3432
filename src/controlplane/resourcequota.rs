//! kube-controller-manager's resource quota controller: every quota's
//! `status.hard` follows its `spec.hard`, and `status.used` is recalculated
//! from what is stored when usage can only have gone *down* behind
//! admission's back (an object deleted, a pod finished, a service or claim
//! changed) or the quota itself changed.
//!
//! Creates are not a reason to recalculate: admission (see
//! [`crate::admission::resource_quota`]) charged them to `status.used`
//! before they were stored. Recalculating on a create would race with the
//! next admission (usage charged, object not stored yet, recalculation
//! writes the lower figure) and let a namespace exceed its quota, which is
//! why upstream's controller does not either.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::admission::common;
use crate::admission::resource_quota::{
    add, list_value, mask, measured, resource_list, scopes_match, usage, ResourceList,
};
use crate::api::ApiError;
use crate::component_base::clocks::Clocks;
use crate::informers::{
    key_of, run_controller, Event, Informer, Informers, Registration, BY_NAMESPACE,
};
use crate::registry::{meta, Registries, WriteOptions};

/// upstream's `--concurrent-resource-quota-syncs` is 5; two workers keep
/// a 2-core machine responsive.
const WORKERS: usize = 2;
const USER_AGENT: &str =
    "kube-controller-manager/v1.34.0 (linux/amd64) kubernetes/resourcequota-controller";

/// The informers watched for replenishment, one handler per resource.
type Monitors = Arc<Mutex<HashMap<(String, String), Registration>>>;

/// upstream's replenishment filter: the changes that can lower usage.
/// Deletes always; updates of pods, services and claims when what they
/// are charged for changed (a pod turned terminal, a service changed
/// type, a claim's storage changed).
fn replenishes(group: &str, plural: &str, e: &Event) -> bool {
    match e {
        Event::Added(_) => false,
        Event::Deleted(_) => true,
        Event::Updated { old, new } => {
            group.is_empty()
                && matches!(plural, "pods" | "services" | "persistentvolumeclaims")
                && usage(group, plural, old) != usage(group, plural, new)
        }
    }
}

/// Starts following a measured resource if it is served and not followed
/// yet: its replenishing changes queue every quota of their namespace.
fn monitor(
    informers: &Informers,
    quotas: &Arc<Informer>,
    monitors: &Monitors,
    group: &str,
    plural: &str,
    queue: &crate::informers::WorkQueue,
) {
    let key = (group.to_string(), plural.to_string());
    if monitors.lock().contains_key(&key) {
        return;
    }
    let Some(version) = version_of(informers.registries(), group, plural) else {
        return;
    };
    let Some(inf) = informers.get(group, &version, plural) else {
        return;
    };
    let (q, quotas_in, g, p) = (queue.clone(), quotas.clone(), key.0.clone(), key.1.clone());
    let reg = inf.add_handler(Arc::new(move |e: &Event| {
        if !replenishes(&g, &p, e) {
            return;
        }
        let ns = meta::namespace(e.object());
        for quota in quotas_in.by_index(BY_NAMESPACE, ns) {
            q.add(key_of(&quota));
        }
    }));
    monitors.lock().entry(key).or_insert(reg);
}

/// Runs the controller until `stop`.
/// Every quota is recalculated each `Clocks::resource_quota_sync_period`
/// whatever happened (a pod past its deletion grace period stops counting
/// without any event).
pub async fn run(informers: Informers, clocks: Clocks, stop: CancellationToken) {
    let Some(quotas) = informers.get("", "v1", "resourcequotas") else {
        return;
    };
    let queue = informers.queue("resourcequota_primary");
    let q = queue.clone();
    // upstream's addQuota/updateQuota: a new quota, or a changed spec.hard.
    let _quota_events = quotas.add_handler(Arc::new(move |e: &Event| match e {
        Event::Added(o) => q.add(key_of(o)),
        Event::Updated { old, new } if old["spec"]["hard"] != new["spec"]["hard"] => {
            q.add(key_of(new))
        }
        _ => {}
    }));
    let monitors: Monitors = Arc::default();
    let resync = {
        let (q, quotas, stop) = (queue.clone(), quotas.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(clocks.resource_quota_sync_period) => {}
                    _ = stop.cancelled() => return,
                }
                for quota in quotas.list() {
                    q.add(key_of(&quota));
                }
            }
        })
    };
    let (inf, quotas_in, mons, q) = (
        informers.clone(),
        quotas.clone(),
        monitors.clone(),
        queue.clone(),
    );
    run_controller(queue, &[&quotas], WORKERS, stop, move |key: String| {
        let (inf, quotas_in, mons, q) = (inf.clone(), quotas_in.clone(), mons.clone(), q.clone());
        async move {
            let Some(quota) = quotas_in.get(&key) else {
                return Ok(());
            };
            for (group, plural) in measured_resources(&quota) {
                monitor(&inf, &quotas_in, &mons, &group, &plural, &q);
            }
            sync_quota(inf.registries(), &quota)
                .await
                .map_err(|e| e.message)
        }
    })
    .await;
    resync.abort();
}

/// The resources a quota's `spec.hard` measures.
fn measured_resources(quota: &Value) -> BTreeSet<(String, String)> {
    resource_list(&quota["spec"]["hard"])
        .keys()
        .filter_map(|k| measured(k))
        .collect()
}

/// The served version of a (group, plural), to read it.
fn version_of(registries: &Registries, group: &str, plural: &str) -> Option<String> {
    registries
        .catalog
        .all()
        .iter()
        .find(|r| r.group == group && r.plural == plural && r.is_stored())
        .map(|r| r.version.clone())
}

/// upstream's `CalculateUsage`: what the namespace uses of each hard resource.
async fn calculate_usage(
    registries: &Registries,
    quota: &Value,
    hard: &ResourceList,
) -> Result<ResourceList, ApiError> {
    let ns = meta::namespace(quota);
    let mut owners: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for k in hard.keys() {
        if let Some(gr) = measured(k) {
            owners.entry(gr).or_default().insert(k.clone());
        }
    }
    let mut used = ResourceList::new();
    for ((group, plural), names) in owners {
        for n in &names {
            used.insert(n.clone(), crate::api::quantity::Quantity::zero());
        }
        let Some(version) = version_of(registries, &group, &plural) else {
            continue;
        };
        for obj in common::list_in(registries, &group, &version, &plural, ns).await? {
            if !scopes_match(quota, &group, &plural, &obj) {
                continue;
            }
            add(&mut used, &mask(&usage(&group, &plural, &obj), &names));
        }
    }
    Ok(used)
}

fn same_usage(a: &ResourceList, b: &ResourceList) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| w.nanos == v.nanos))
}

/// upstream's `syncResourceQuota`: status.hard from spec.hard, status.used
/// recalculated; written only when either differs. A quota changed since
/// it was read is a conflict, and the key is retried with backoff.
pub(crate) async fn sync_quota(registries: &Registries, quota: &Value) -> Result<(), ApiError> {
    if meta::is_deleting(quota) {
        return Ok(());
    }
    let spec_hard = quota["spec"]["hard"].clone();
    let hard = resource_list(&spec_hard);
    let used = calculate_usage(registries, quota, &hard).await?;
    let status_hard = &quota["status"]["hard"];
    let hard_same = status_hard == &spec_hard
        || (status_hard.is_null() && spec_hard.as_object().is_none_or(|m| m.is_empty()));
    if hard_same && same_usage(&used, &resource_list(&quota["status"]["used"])) {
        return Ok(());
    }
    let mut q = quota.clone();
    q["status"] = json!({"hard": spec_hard, "used": list_value(&used)});
    let Some(reg) = registries.get("", "v1", "resourcequotas") else {
        return Ok(());
    };
    let opts = WriteOptions {
        user_agent: Some(USER_AGENT.into()),
        ..Default::default()
    };
    match reg
        .update(
            meta::namespace(quota),
            meta::name(quota),
            q,
            Some("status"),
            &opts,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_changes_that_can_lower_usage_replenish() {
        let pod = Arc::new(json!({"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"cpu": "1"}}}]}}));
        let done = Arc::new(json!({"spec": pod["spec"], "status": {"phase": "Succeeded"}}));
        assert!(!replenishes("", "pods", &Event::Added(pod.clone())));
        assert!(replenishes("", "pods", &Event::Deleted(pod.clone())));
        assert!(replenishes(
            "",
            "pods",
            &Event::Updated {
                old: pod.clone(),
                new: done
            }
        ));
        let labelled = Arc::new(json!({"metadata": {"labels": {"a": "b"}}, "spec": pod["spec"]}));
        assert!(!replenishes(
            "",
            "pods",
            &Event::Updated {
                old: pod.clone(),
                new: labelled
            }
        ));
        let cm = Arc::new(json!({"data": {"a": "b"}}));
        assert!(!replenishes(
            "",
            "configmaps",
            &Event::Updated {
                old: cm.clone(),
                new: cm.clone()
            }
        ));
        assert!(replenishes("", "configmaps", &Event::Deleted(cm)));
    }
}
