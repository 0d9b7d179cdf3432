//! The pvc-protection and pv-protection controllers (upstream's
//! kube-controller-manager): a claim or volume that a delete marked keeps
//! its protection finalizer (added by the StorageObjectInUseProtection
//! admission plugin) while something uses it, and loses it, and so goes,
//! once nothing does: a claim when no running pod mounts it, a volume
//! when it is no longer bound.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::admission::storage_protection::{PVC_FINALIZER, PV_FINALIZER};
use crate::informers::{key_of, run_controller, Event, Informers, BY_NAMESPACE};
use crate::registry::{meta, WriteOptions};

const WORKERS: usize = 2;

fn marked_with(obj: &Value, finalizer: &str) -> bool {
    meta::is_deleting(obj) && meta::finalizers(obj).iter().any(|f| f == finalizer)
}

/// The claims a scheduled pod holds (upstream's podUsesPVC): the ones it
/// names, whatever its phase, and its generic ephemeral volumes'
/// (`<pod>-<volume>`) while it has not finished. A pod no scheduler has
/// placed holds none.
fn claims_held(pod: &Value) -> Vec<String> {
    if pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty() {
        return Vec::new();
    }
    claims_of(pod, running(pod))
}

/// The claims a pod's volumes name, ephemeral ones included if asked.
fn claims_of(pod: &Value, with_ephemeral: bool) -> Vec<String> {
    let pod_name = meta::name(pod);
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            if let Some(c) = v["persistentVolumeClaim"]["claimName"].as_str() {
                Some(c.to_string())
            } else if with_ephemeral && v.get("ephemeral").is_some_and(|e| !e.is_null()) {
                Some(format!("{pod_name}-{}", v["name"].as_str().unwrap_or("")))
            } else {
                None
            }
        })
        .collect()
}

/// A pod that has finished no longer holds its ephemeral claims.
fn running(pod: &Value) -> bool {
    !matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// Removes `finalizer` from the stored object, if it still carries it.
async fn release(
    informers: &Informers,
    plural: &str,
    namespace: &str,
    name: &str,
    finalizer: &str,
) -> Result<(), String> {
    let reg = informers
        .registries()
        .get("", "v1", plural)
        .ok_or_else(|| format!("{plural} are not served"))?;
    let mut obj: Value = match reg.get_object(namespace, name, None).await {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| e.to_string())?,
        Err(e) if e.code == 404 => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    let kept: Vec<Value> = meta::finalizers(&obj)
        .into_iter()
        .filter(|f| f != finalizer)
        .map(Value::String)
        .collect();
    if kept.len() == meta::finalizers(&obj).len() {
        return Ok(());
    }
    meta::meta_mut(&mut obj).insert("finalizers".into(), Value::Array(kept));
    match reg
        .update(namespace, name, obj, None, &WriteOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        // A conflict is retried from the queue with the newer object.
        Err(e) => Err(e.to_string()),
    }
}

/// upstream's pvc-protection controller.
pub async fn run_pvc_protection(informers: Informers, stop: CancellationToken) {
    let (Some(claims), Some(pods)) = (
        informers.get("", "v1", "persistentvolumeclaims"),
        informers.get("", "v1", "pods"),
    ) else {
        return;
    };
    let queue = informers.queue("pvcprotection");
    let q = queue.clone();
    let _claims = claims.add_handler(Arc::new(move |e| {
        if !matches!(e, Event::Deleted(_)) && marked_with(e.object(), PVC_FINALIZER) {
            q.add(key_of(e.object()));
        }
    }));
    // A pod that goes away, finishes or is not placed may free the
    // claims it names.
    let q = queue.clone();
    let _pods = pods.add_handler(Arc::new(move |e| {
        let pod = e.object();
        let unscheduled = pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty();
        if matches!(e, Event::Deleted(_)) || !running(pod) || unscheduled {
            let ns = meta::namespace(pod);
            for c in claims_of(pod, true) {
                q.add(format!("{ns}/{c}"));
            }
        }
    }));
    let (inf, cl, po) = (informers.clone(), claims.clone(), pods.clone());
    run_controller(
        queue,
        &[&claims, &pods],
        WORKERS,
        stop,
        move |key: String| {
            let (inf, cl, po) = (inf.clone(), cl.clone(), po.clone());
            async move {
                let Some(claim) = cl.get(&key) else {
                    return Ok(());
                };
                if !marked_with(&claim, PVC_FINALIZER) {
                    return Ok(());
                }
                let (ns, name) = (
                    meta::namespace(&claim).to_string(),
                    meta::name(&claim).to_string(),
                );
                let in_use = po
                    .by_index(BY_NAMESPACE, &ns)
                    .iter()
                    .any(|p| claims_held(p).iter().any(|c| *c == name));
                if in_use {
                    return Ok(());
                }
                release(&inf, "persistentvolumeclaims", &ns, &name, PVC_FINALIZER).await
            }
        },
    )
    .await;
}

/// upstream's pv-protection controller.
pub async fn run_pv_protection(informers: Informers, stop: CancellationToken) {
    let Some(volumes) = informers.get("", "v1", "persistentvolumes") else {
        return;
    };
    let queue = informers.queue("pvprotection");
    let q = queue.clone();
    let _pvs = volumes.add_handler(Arc::new(move |e| {
        if !matches!(e, Event::Deleted(_)) && marked_with(e.object(), PV_FINALIZER) {
            q.add(key_of(e.object()));
        }
    }));
    let (inf, vols) = (informers.clone(), volumes.clone());
    run_controller(queue, &[&volumes], WORKERS, stop, move |key: String| {
        let (inf, vols) = (inf.clone(), vols.clone());
        async move {
            let Some(pv) = vols.get(&key) else {
                return Ok(());
            };
            if !marked_with(&pv, PV_FINALIZER) || pv["status"]["phase"] == "Bound" {
                return Ok(());
            }
            release(&inf, "persistentvolumes", "", meta::name(&pv), PV_FINALIZER).await
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn pods_name_their_claims() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "c1"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
            {"name": "cfg", "configMap": {"name": "x"}}]}});
        assert_eq!(super::claims_of(&pod, true), vec!["c1", "p-scratch"]);
        assert!(
            super::claims_held(&pod).is_empty(),
            "not scheduled: holds nothing"
        );
        let mut placed = pod.clone();
        placed["spec"]["nodeName"] = json!("n1");
        assert_eq!(super::claims_held(&placed), vec!["c1", "p-scratch"]);
        placed["status"]["phase"] = json!("Succeeded");
        assert_eq!(super::claims_held(&placed), vec!["c1"]);
    }
}
