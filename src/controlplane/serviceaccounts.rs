//! The ServiceAccount and root-CA-publisher controllers: every namespace
//! has a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap holding
//! the cluster CA, kept as upstream's kube-controller-manager keeps them.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::registry::{meta, ListParams, Registries, WriteOptions};

const RESYNC: Duration = Duration::from_millis(250);
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

pub async fn run(registries: Registries, ca_pem: String, stop: CancellationToken) {
    // Namespaces already handled, by uid: each gets its objects once, and
    // again only if they go missing (checked on a slower cadence).
    let mut done: HashMap<String, u32> = HashMap::new();
    loop {
        if let Err(e) = sync(&registries, &ca_pem, &mut done).await {
            tracing::debug!(error = %e, "service account controller pass failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(RESYNC) => {}
            _ = stop.cancelled() => return,
        }
    }
}

async fn sync(
    registries: &Registries,
    ca_pem: &str,
    done: &mut HashMap<String, u32>,
) -> Result<(), String> {
    let ns = registries
        .get("", "v1", "namespaces")
        .ok_or("namespaces are not served")?;
    let list = ns
        .list(
            "",
            &ListParams {
                resource_version: Some("0".into()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    let sas = registries
        .get("", "v1", "serviceaccounts")
        .ok_or("serviceaccounts are not served")?;
    let cms = registries
        .get("", "v1", "configmaps")
        .ok_or("configmaps are not served")?;
    for item in list.items {
        let v: Value = serde_json::from_slice(&item).map_err(|e| e.to_string())?;
        if meta::is_deleting(&v) {
            continue;
        }
        let name = meta::name(&v).to_string();
        let uid = meta::str_field(&v, "uid").to_string();
        // Re-check a handled namespace every ~10 s (someone may delete the objects).
        let passes = done.entry(uid).or_insert(0);
        *passes += 1;
        if *passes > 1 && *passes % 40 != 0 {
            continue;
        }
        if sas.get_object(&name, "default", Some("0")).await.is_err() {
            let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}});
            match sas.create(&name, sa, &WriteOptions::default()).await {
                Ok(_) => {}
                Err(e) if e.code == 409 => {}
                Err(e) if e.code == 403 || e.code == 404 => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
        let wanted = json!({"ca.crt": ca_pem});
        match cms.get_object(&name, ROOT_CA_CONFIGMAP, Some("0")).await {
            Ok(b) => {
                let cur: Value = serde_json::from_slice(&b).unwrap_or(json!({}));
                if cur["data"] != wanted {
                    let mut fixed = cur.clone();
                    fixed["data"] = wanted;
                    let _ = cms
                        .update(
                            &name,
                            ROOT_CA_CONFIGMAP,
                            fixed,
                            None,
                            &WriteOptions::default(),
                        )
                        .await;
                }
            }
            Err(_) => {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": name, "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
                    "data": wanted});
                match cms.create(&name, cm, &WriteOptions::default()).await {
                    Ok(_) => {}
                    Err(e) if e.code == 409 || e.code == 403 || e.code == 404 => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
        }
    }
    Ok(())
}
