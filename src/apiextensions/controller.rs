//! The CRD controllers in one loop, as apiextensions-apiserver runs them:
//! naming (NamesAccepted, acceptedNames), establishing (Established),
//! API approval for `*.k8s.io` groups, finalization (deleting every custom
//! resource of a deleted CRD, then the cleanup finalizer), and keeping the
//! catalog — and so routes, discovery and OpenAPI — in step.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::api::catalog::{
    Catalog, CustomInfo, Owner, PrinterColumn, Resource, ScaleInfo, Subresource,
};
use crate::component_base::clocks::Clocks;
use crate::informers::Informers;
use crate::registry::apiextensions::{storage_version, CLEANUP_FINALIZER};
use crate::registry::{meta, DeleteOptions, ListParams, Registries, WriteOptions};

/// A pass that failed is tried again after this long.
const RETRY: Duration = Duration::from_secs(1);

/// Runs a pass whenever a CRD changes (an informer event; a burst of them
/// is one pass), and again while CRDs are being deleted or a pass failed.
/// While a CRD is being deleted, its custom resources are looked at again
/// after `Clocks::crd_finalizing_requeue` (upstream's finalizer controller
/// requeues too).
pub async fn run(informers: Informers, clocks: Clocks, stop: CancellationToken) {
    let Some(crds) = informers.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let changed = Arc::new(tokio::sync::Notify::new());
    let c = changed.clone();
    let _handler = crds.add_handler(Arc::new(move |_| c.notify_one()));
    if !crds.wait_synced(&stop).await {
        return;
    }
    let registries = informers.registries().clone();
    loop {
        let again = match sync(&registries).await {
            Ok(()) => crds
                .list()
                .iter()
                .any(|crd| meta::is_deleting(crd))
                .then_some(clocks.crd_finalizing_requeue),
            Err(e) => {
                tracing::debug!(error = %e, "CRD controller pass failed");
                Some(RETRY)
            }
        };
        tokio::select! {
            _ = changed.notified() => {}
            _ = tokio::time::sleep(again.unwrap_or(RETRY)), if again.is_some() => {}
            _ = stop.cancelled() => return,
        }
    }
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn condition(conds: &[Value], ty: &str) -> Option<Value> {
    conds.iter().find(|c| c["type"] == ty).cloned()
}

/// A condition, keeping lastTransitionTime when the status did not change.
fn cond(old: &[Value], ty: &str, status: &str, reason: &str, message: &str) -> Value {
    let since = condition(old, ty)
        .filter(|c| c["status"] == status)
        .map(|c| c["lastTransitionTime"].clone())
        .unwrap_or_else(|| json!(meta::now_rfc3339()));
    json!({"type": ty, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// Names other CRDs of the same group already hold.
#[derive(Default)]
struct Taken {
    plurals: HashSet<String>,
    singulars: HashSet<String>,
    kinds: HashSet<String>,
    list_kinds: HashSet<String>,
    short_names: HashSet<String>,
}

async fn sync(registries: &Registries) -> Result<(), String> {
    let reg = registries
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .ok_or("CRDs are not served")?;
    let list = reg
        .list(
            "",
            &ListParams {
                resource_version: Some(reg.fresh_rv()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut crds: Vec<Value> = list
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect();
    // The older CRD keeps a contested name.
    crds.sort_by(|a, b| {
        (
            s(&a["metadata"]["creationTimestamp"]),
            s(&a["metadata"]["name"]),
        )
            .cmp(&(
                s(&b["metadata"]["creationTimestamp"]),
                s(&b["metadata"]["name"]),
            ))
    });
    let mut taken: BTreeMap<String, Taken> = BTreeMap::new();
    let mut wanted: Vec<Resource> = Vec::new();
    for crd in &crds {
        let name = meta::name(crd).to_string();
        let spec = &crd["spec"];
        let group = s(&spec["group"]);
        let names = &spec["names"];
        let t = taken.entry(group.clone()).or_default();
        let (plural, singular, kind, list_kind) = (
            s(&names["plural"]),
            s(&names["singular"]),
            s(&names["kind"]),
            s(&names["listKind"]),
        );
        let shorts = strings(&names["shortNames"]);
        let mut conflict: Option<(&str, String)> = None;
        if t.plurals.contains(&plural) || t.singulars.contains(&plural) {
            conflict = Some(("PluralConflict", format!("{plural:?} is already in use")));
        } else if t.singulars.contains(&singular) || t.plurals.contains(&singular) {
            conflict = Some((
                "SingularConflict",
                format!("{singular:?} is already in use"),
            ));
        } else if let Some(sn) = shorts
            .iter()
            .find(|x| t.short_names.contains(*x) || t.plurals.contains(*x))
        {
            conflict = Some(("ShortNamesConflict", format!("{sn:?} is already in use")));
        } else if t.kinds.contains(&kind) || t.list_kinds.contains(&kind) {
            conflict = Some(("KindConflict", format!("{kind:?} is already in use")));
        } else if t.list_kinds.contains(&list_kind) || t.kinds.contains(&list_kind) {
            conflict = Some((
                "ListKindConflict",
                format!("{list_kind:?} is already in use"),
            ));
        }
        let old_conds = crd["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let deleting = meta::is_deleting(crd);
        let mut conds = Vec::new();
        let accepted = conflict.is_none();
        if accepted {
            t.plurals.insert(plural.clone());
            t.singulars.insert(singular.clone());
            t.kinds.insert(kind.clone());
            t.list_kinds.insert(list_kind.clone());
            t.short_names.extend(shorts.iter().cloned());
            conds.push(cond(
                &old_conds,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
            ));
            conds.push(cond(
                &old_conds,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            ));
        } else if let Some((reason, message)) = &conflict {
            conds.push(cond(&old_conds, "NamesAccepted", "False", reason, message));
            conds.push(cond(
                &old_conds,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
            ));
        }
        if group.ends_with(".k8s.io")
            || group == "k8s.io"
            || group.ends_with(".kubernetes.io")
            || group == "kubernetes.io"
        {
            let annotation = crd["metadata"]["annotations"]["api-approved.kubernetes.io"]
                .as_str()
                .unwrap_or("");
            let c = if annotation.is_empty() {
                cond(&old_conds, "KubernetesAPIApprovalPolicyConformant", "False", "MissingAnnotation", &format!("protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"))
            } else if annotation.starts_with("unapproved") {
                cond(
                    &old_conds,
                    "KubernetesAPIApprovalPolicyConformant",
                    "False",
                    "ApprovalBypassed",
                    &format!("not approved: {annotation:?}"),
                )
            } else {
                cond(
                    &old_conds,
                    "KubernetesAPIApprovalPolicyConformant",
                    "True",
                    "ApprovedAnnotation",
                    &format!("approved in {annotation}"),
                )
            };
            conds.push(c);
        }
        if deleting {
            conds.push(cond(
                &old_conds,
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            ));
        }
        let mut status = crd["status"].clone();
        status["conditions"] = Value::Array(conds);
        if accepted {
            status["acceptedNames"] = json!({"plural": plural, "singular": singular, "kind": kind, "listKind": list_kind, "shortNames": shorts, "categories": names["categories"]});
            // Both are `omitempty` lists in Go: upstream never shows them empty.
            if let Some(m) = status["acceptedNames"].as_object_mut() {
                m.retain(|k, v| {
                    !(matches!(k.as_str(), "shortNames" | "categories")
                        && (v.is_null() || v.as_array().is_some_and(Vec::is_empty)))
                });
            }
        }
        if status != crd["status"] {
            let mut updated = crd.clone();
            updated["status"] = status.clone();
            if let Err(e) = reg
                .update("", &name, updated, Some("status"), &WriteOptions::default())
                .await
            {
                if e.code != 409 && e.code != 404 {
                    tracing::debug!(crd = %name, error = %e, "updating CRD status");
                }
            }
        }
        // A CRD whose cleanup just finished is gone: stop serving it now.
        let finished = deleting && finalize(registries, crd, &resources_of(crd)).await?;
        if accepted && !finished {
            wanted.extend(resources_of(crd));
        }
    }
    sync_catalog(&registries.catalog, registries, wanted);
    Ok(())
}

/// The `openAPIV3Schema` of each version of a CRD, served or not (objects
/// may be stored in a version no longer served).
pub(crate) fn version_schemas(crd: &Value) -> BTreeMap<String, Value> {
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            let schema = v["schema"]["openAPIV3Schema"].as_object()?;
            Some((s(&v["name"]), Value::Object(schema.clone())))
        })
        .collect()
}

/// The catalog entries of a CRD's served versions.
fn resources_of(crd: &Value) -> Vec<Resource> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = s(&spec["group"]);
    let plural = s(&names["plural"]);
    let storage = storage_version(crd).unwrap_or_default();
    let schemas = Arc::new(version_schemas(crd));
    let mut out = Vec::new();
    for v in spec["versions"].as_array().cloned().unwrap_or_default() {
        if v["served"] != true {
            continue;
        }
        let version = s(&v["name"]);
        let status = v["subresources"]["status"].is_object();
        let scale = v["subresources"]["scale"].as_object().map(|sc| ScaleInfo {
            spec_replicas_path: sc
                .get("specReplicasPath")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            status_replicas_path: sc
                .get("statusReplicasPath")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            label_selector_path: sc
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(String::from),
        });
        let mut subresources = Vec::new();
        if status {
            subresources.push(Subresource {
                name: "status".into(),
                group: group.clone(),
                version: version.clone(),
                kind: s(&names["kind"]),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
            });
        }
        if scale.is_some() {
            subresources.push(Subresource {
                name: "scale".into(),
                group: "autoscaling".into(),
                version: "v1".into(),
                kind: "Scale".into(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
            });
        }
        let printer_columns = v["additionalPrinterColumns"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|c| PrinterColumn {
                name: s(&c["name"]),
                kind: s(&c["type"]),
                format: s(&c["format"]),
                description: s(&c["description"]),
                priority: c["priority"].as_i64().unwrap_or(0) as i32,
                json_path: s(&c["jsonPath"]),
            })
            .collect();
        let selectable: Vec<String> = v["selectableFields"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|f| f["jsonPath"].as_str())
            .map(|p| p.trim_start_matches('.').to_string())
            .collect();
        let info = CustomInfo {
            crd_name: meta::name(crd).to_string(),
            schema: v["schema"]["openAPIV3Schema"]
                .as_object()
                .map(|m| Value::Object(m.clone())),
            status,
            scale,
            printer_columns,
            storage_version: storage.clone(),
            conversion: spec["conversion"].clone(),
            selectable_fields: selectable.clone(),
            schemas: schemas.clone(),
        };
        out.push(Resource {
            group: group.clone(),
            version: version.clone(),
            kind: s(&names["kind"]),
            list_kind: s(&names["listKind"]),
            plural: plural.clone(),
            singular: s(&names["singular"]),
            namespaced: spec["scope"] == "Namespaced",
            verbs: [
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ]
            .iter()
            .map(|x| x.to_string())
            .collect(),
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            subresources,
            storage_path: format!("{group}/{plural}"),
            storage_group: group.clone(),
            storage_version: storage.clone(),
            selectable_fields: selectable,
            codec: None,
            schema: None,
            owner: Owner::Apiextensions,
            custom: Some(Arc::new(info)),
            proxy: None,
            routes: Default::default(),
        });
    }
    out
}

/// Makes the catalog's custom entries exactly `wanted`.
fn sync_catalog(catalog: &Catalog, registries: &Registries, wanted: Vec<Resource>) {
    let current: Vec<Arc<Resource>> = catalog
        .all()
        .into_iter()
        .filter(|r| r.custom.is_some())
        .collect();
    let key = |r: &Resource| (r.group.clone(), r.version.clone(), r.plural.clone());
    let wanted_keys: HashSet<_> = wanted.iter().map(key).collect();
    for r in &current {
        if !wanted_keys.contains(&key(r)) {
            catalog.remove(&r.group, &r.version, &r.plural);
            registries.forget(&r.group, &r.version, &r.plural);
        }
    }
    for w in wanted {
        let same = current.iter().find(|c| key(c) == key(&w)).is_some_and(|c| {
            c.custom == w.custom
                && c.kind == w.kind
                && c.namespaced == w.namespaced
                && c.short_names == w.short_names
                && c.categories == w.categories
                && c.storage_version == w.storage_version
        });
        if !same {
            let (g, v, p) = key(&w);
            catalog.add(w);
            registries.forget(&g, &v, &p);
        }
    }
}

/// Deletes every custom resource of a deleted CRD, then lets it go.
/// Returns whether the CRD is gone.
async fn finalize(
    registries: &Registries,
    crd: &Value,
    resources: &[Resource],
) -> Result<bool, String> {
    if !meta::finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER) {
        return Ok(meta::finalizers(crd).is_empty());
    }
    let mut remaining = 0;
    if let Some(r) = resources
        .iter()
        .find(|r| r.version == r.storage_version)
        .or(resources.first())
    {
        if let Some(reg) = registries.get(&r.group, &r.version, &r.plural) {
            let _ = reg
                .delete_collection("", &ListParams::default(), &DeleteOptions::default())
                .await;
            remaining = reg
                .list("", &ListParams::default())
                .await
                .map(|l| l.items.len())
                .unwrap_or(0);
        }
    }
    if remaining > 0 {
        return Ok(false);
    }
    let reg = registries
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .ok_or("CRDs are not served")?;
    let name = meta::name(crd).to_string();
    let patch = json!({"metadata": {"finalizers": meta::finalizers(crd).into_iter().filter(|f| f != CLEANUP_FINALIZER).collect::<Vec<_>>(), "resourceVersion": crd["metadata"]["resourceVersion"]}});
    reg.patch(
        "",
        &name,
        crate::registry::PatchType::Merge,
        &serde_json::to_vec(&patch).unwrap_or_default(),
        None,
        &WriteOptions::default(),
    )
    .await
    .map(|_| meta::finalizers(crd).len() == 1)
    .map_err(|e| format!("removing the cleanup finalizer of {name}: {e}"))
}
