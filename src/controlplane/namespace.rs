//! The namespace controller: empties a terminating namespace of every
//! namespaced object (built-in and custom, finalizers honoured), reports
//! progress in the namespace's conditions as upstream does, then removes
//! the `kubernetes` finalizer so the namespace goes away.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::component_base::clocks::Clocks;
use crate::informers::{run_controller, Event, Informers};
use crate::registry::{meta, DeleteOptions, ListParams, Registries, WriteOptions};

/// upstream's namespace controller runs 10 workers (`--concurrent-namespace-syncs`).
const WORKERS: usize = 10;

/// What a pass over a terminating namespace found.
enum Outcome {
    Gone,
    ContentRemaining,
}

/// When content remains (finalizers, objects being deleted), a namespace
/// is looked at again after `Clocks::namespace_requeue`.
pub async fn run(informers: Informers, clocks: Clocks, stop: CancellationToken) {
    let Some(namespaces) = informers.get("", "v1", "namespaces") else {
        return;
    };
    let queue = informers.queue("namespace");
    let q = queue.clone();
    let _h = namespaces.add_handler(Arc::new(move |e| {
        if let Event::Added(o) | Event::Updated { new: o, .. } = e {
            if meta::is_deleting(o) {
                q.add(meta::name(o).to_string());
            }
        }
    }));
    let (inf, q) = (namespaces.clone(), queue.clone());
    let registries = informers.registries().clone();
    run_controller(queue, &[&namespaces], WORKERS, stop, move |name: String| {
        let (inf, q, registries) = (inf.clone(), q.clone(), registries.clone());
        async move {
            let terminating = inf.get(&name).is_some_and(|ns| meta::is_deleting(&ns));
            if !terminating {
                return Ok(());
            }
            match sync_one(&registries, &name).await? {
                Outcome::Gone => Ok(()),
                Outcome::ContentRemaining => {
                    q.add_after(name, clocks.namespace_requeue);
                    Ok(())
                }
            }
        }
    })
    .await;
}

/// One pass over a terminating namespace.
async fn sync_one(registries: &Registries, namespace: &str) -> Result<Outcome, String> {
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers_left: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen_paths = std::collections::HashSet::new();
    for r in registries.catalog.all_stored() {
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
        return Ok(Outcome::Gone);
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
    Ok(Outcome::ContentRemaining)
}
