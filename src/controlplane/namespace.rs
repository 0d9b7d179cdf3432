//! The namespace controller: empties a terminating namespace of every
//! namespaced object (built-in and custom, finalizers honoured), reports
//! progress in the namespace's conditions as upstream does, then removes
//! the `kubernetes` finalizer so the namespace goes away.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::registry::{meta, DeleteOptions, ListParams, Registries, WriteOptions};

const RESYNC: Duration = Duration::from_millis(500);

pub async fn run(registries: Registries, stop: CancellationToken) {
    loop {
        if let Err(e) = sync_all(&registries).await {
            tracing::debug!(error = %e, "namespace controller pass failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(RESYNC) => {}
            _ = stop.cancelled() => return,
        }
    }
}

async fn sync_all(registries: &Registries) -> Result<(), String> {
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
    for item in list.items {
        let v: Value = serde_json::from_slice(&item).map_err(|e| e.to_string())?;
        if meta::is_deleting(&v) {
            sync_one(registries, meta::name(&v)).await?;
        }
    }
    Ok(())
}

/// One pass over a terminating namespace.
async fn sync_one(registries: &Registries, namespace: &str) -> Result<(), String> {
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers_left: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen_paths = std::collections::HashSet::new();
    for r in registries.catalog.all() {
        // One pass per stored resource, not per served version of it.
        if !r.namespaced
            || !r.is_stored()
            || !r.has_verb("deletecollection")
            || !seen_paths.insert(r.storage_path.clone())
        {
            continue;
        }
        let Some(reg) = registries.get(&r.group, &r.version, &r.plural) else {
            continue;
        };
        let params = ListParams::default();
        let deleted = reg
            .delete_collection(namespace, &params, &DeleteOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let left = reg
            .list(namespace, &params)
            .await
            .map_err(|e| e.to_string())?;
        if !left.items.is_empty() {
            let label = if r.group.is_empty() {
                format!("{}.", r.plural)
            } else {
                format!("{}.{}", r.plural, r.group)
            };
            remaining.insert(label.clone(), left.items.len());
            for item in &left.items {
                let v: Value = serde_json::from_slice(item).unwrap_or(json!({}));
                for f in meta::finalizers(&v) {
                    *finalizers_left.entry(f).or_default() += 1;
                }
            }
        }
        let _ = deleted;
    }
    let ns = registries
        .get("", "v1", "namespaces")
        .ok_or("namespaces are not served")?;
    let current = ns
        .get_object("", namespace, None)
        .await
        .map_err(|e| e.to_string())?;
    let mut obj: Value = serde_json::from_slice(&current).map_err(|e| e.to_string())?;
    if remaining.is_empty() {
        // Everything is gone: drop our finalizer; the namespace is deleted with it.
        let fins: Vec<Value> = obj["spec"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f != "kubernetes")
            .collect();
        obj["spec"]["finalizers"] = Value::Array(fins);
        ns.update(
            "",
            namespace,
            obj,
            Some("finalize"),
            &WriteOptions::default(),
        )
        .await
        .map_err(|e| e.to_string())?;
        return Ok(());
    }
    let now = meta::now_rfc3339();
    let content: Vec<String> = remaining
        .iter()
        .map(|(r, n)| format!("{r} has {n} resource instances"))
        .collect();
    let fins: Vec<String> = finalizers_left
        .iter()
        .map(|(f, n)| format!("{f} in {n} resource instances"))
        .collect();
    let cond = |ty: &str, bad: bool, reason_ok: &str, reason_bad: &str, msg: String| json!({"type": ty, "status": if bad { "True" } else { "False" }, "lastTransitionTime": now, "reason": if bad { reason_bad } else { reason_ok }, "message": if bad { msg } else { String::new() }});
    let conditions = json!([
        cond(
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "DiscoveryFailed",
            String::new()
        ),
        cond(
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "GroupVersionParsingFailed",
            String::new()
        ),
        cond(
            "NamespaceDeletionContentFailure",
            false,
            "ContentDeleted",
            "ContentDeletionFailed",
            String::new()
        ),
        cond(
            "NamespaceContentRemaining",
            true,
            "ContentRemoved",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", content.join(", "))
        ),
        cond(
            "NamespaceFinalizersRemaining",
            !fins.is_empty(),
            "ContentHasNoFinalizers",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                fins.join(", ")
            )
        ),
    ]);
    let old_conditions = obj["status"]["conditions"].clone();
    let same = |a: &Value, b: &Value| {
        let strip = |v: &Value| {
            v.as_array().map(|l| {
                l.iter()
                    .map(|c| (c["type"].clone(), c["status"].clone(), c["message"].clone()))
                    .collect::<Vec<_>>()
            })
        };
        strip(a) == strip(b)
    };
    if !same(&old_conditions, &conditions) {
        obj["status"]["conditions"] = conditions;
        ns.update("", namespace, obj, Some("status"), &WriteOptions::default())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
