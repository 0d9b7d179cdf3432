//! The garbage collector (upstream's `garbagecollector` controller, run by
//! kube-controller-manager): objects whose owners are all gone are deleted
//! (background cascading deletion), an owner deleted in the foreground
//! (deletionTimestamp and the `foregroundDeletion` finalizer) keeps its
//! finalizer until its blocking dependents are gone, and an owner deleted
//! with the `orphan` finalizer first has its owner references removed from
//! its dependents.
//!
//! As upstream's: metadata informers on every deletable resource feed a
//! dependency graph kept incrementally ([`graph`], the GraphBuilder), which
//! queues uids on two work queues, attemptToDelete and attemptToOrphan.
//! Workers confirm every decision by consistent reads of the object and
//! its owners before anything is written, as upstream confirms with live
//! GETs, and deletions carry uid and resourceVersion preconditions. What
//! changed is all the collector looks at: its cost follows the changes,
//! not the size of the store, and an idle server costs nothing.

mod graph;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::api::catalog::Resource;
use crate::informers::{run_workers, Event, Informer, Informers, Registration, WorkQueue};
use crate::registry::{DeleteOptions, PatchType, Registries, Registry, WriteOptions};
use crate::storage::store::Preconditions;
use graph::{Change, Graph, Meta, Tables, Work, FOREGROUND, ORPHAN};

/// upstream's `--concurrent-gc-syncs` is 20; eight keep a 2-core machine
/// responsive while a cascade of deletes goes through storage.
const DELETE_WORKERS: usize = 8;
const ORPHAN_WORKERS: usize = 2;
/// Writes are recorded as kube-controller-manager's (the field manager comes from it).
const USER_AGENT: &str =
    "kube-controller-manager/v1.34.0 (linux/amd64) kubernetes/generic-garbage-collector";

/// What the graph builder's task is told.
enum Msg {
    Change(Change),
    /// Answered once every message sent before it is processed.
    Barrier(oneshot::Sender<()>),
}

/// What the builder and the workers share.
struct Shared {
    registries: Registries,
    graph: Mutex<Graph>,
    tables: RwLock<Arc<Tables>>,
    attempt_to_delete: WorkQueue,
    attempt_to_orphan: WorkQueue,
    changes: mpsc::UnboundedSender<Msg>,
}

impl Shared {
    fn enqueue(&self, work: Vec<Work>) {
        for w in work {
            match w {
                Work::Attempt(uid) => self.attempt_to_delete.add(uid),
                Work::Orphan(uid) => self.attempt_to_orphan.add(uid),
            }
        }
    }

    fn tables(&self) -> Arc<Tables> {
        self.tables.read().clone()
    }

    fn registry(&self, r: &Resource) -> Result<Arc<Registry>, String> {
        self.registries
            .get(&r.group, &r.version, &r.plural)
            .ok_or_else(|| format!("{} is no longer served", r.plural))
    }
}

/// The informers the graph is fed from, by storage path (upstream's monitors).
type Monitors = HashMap<String, (Arc<Resource>, Arc<Informer>, Registration)>;

/// Starts following the watched resources not followed yet and stops
/// following those no longer served (upstream's resyncMonitors).
fn sync_monitors(
    informers: &Informers,
    tables: &Tables,
    monitors: &mut Monitors,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Vec<Arc<Informer>> {
    monitors.retain(|path, (r, _, _)| {
        let keep = tables
            .watched
            .get(path)
            .is_some_and(|w| w.version == r.version);
        if !keep && !tables.watched.contains_key(path) {
            informers.forget(&r.group, &r.plural);
        }
        keep
    });
    let mut started = Vec::new();
    for (path, r) in &tables.watched {
        if monitors.contains_key(path) {
            continue;
        }
        let Some(inf) = informers.get_metadata(&r.group, &r.version, &r.plural) else {
            continue;
        };
        let (tx, res) = (tx.clone(), r.clone());
        let reg = inf.add_handler(Arc::new(move |e: &Event| {
            let change = match e {
                Event::Added(o) | Event::Updated { new: o, .. } => Change::Observed {
                    resource: res.clone(),
                    meta: Arc::new(Meta::of(o)),
                },
                Event::Deleted(o) => Change::Deleted(Arc::new(Meta::of(o))),
            };
            let _ = tx.send(Msg::Change(change));
        }));
        started.push(inf.clone());
        monitors.insert(path.clone(), (r.clone(), inf, reg));
    }
    started
}

/// The graph builder's task: applies changes in order, queues the work
/// they call for, and follows resources as they come and go.
async fn build_graph(
    shared: Arc<Shared>,
    informers: Informers,
    mut monitors: Monitors,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    mut catalog: tokio::sync::watch::Receiver<u64>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            msg = rx.recv() => {
                let Some(first) = msg else { return };
                // Take what is waiting in one go: one lock for a burst.
                let mut batch = vec![first];
                while batch.len() < 1024 {
                    match rx.try_recv() {
                        Ok(m) => batch.push(m),
                        Err(_) => break,
                    }
                }
                let tables = shared.tables();
                let mut work = Vec::new();
                let mut barriers = Vec::new();
                {
                    let mut g = shared.graph.lock();
                    for m in batch {
                        match m {
                            Msg::Change(c) => work.extend(g.process(&tables, c)),
                            Msg::Barrier(done) => barriers.push(done),
                        }
                    }
                }
                shared.enqueue(work);
                for b in barriers {
                    let _ = b.send(());
                }
            }
            changed = catalog.changed() => {
                if changed.is_err() {
                    return;
                }
                let tables = Arc::new(Tables::build(&informers.registries().catalog.all_stored()));
                *shared.tables.write() = tables.clone();
                sync_monitors(&informers, &tables, &mut monitors, &shared.changes);
            }
            _ = stop.cancelled() => return,
        }
    }
}

pub async fn run(informers: Informers, stop: CancellationToken) {
    let (tx, rx) = mpsc::unbounded_channel();
    // Subscribed before the first tables are built: a resource that comes
    // meanwhile is a change the builder sees.
    let mut catalog = informers.registries().catalog.subscribe();
    catalog.mark_unchanged();
    let tables = Arc::new(Tables::build(&informers.registries().catalog.all_stored()));
    let shared = Arc::new(Shared {
        registries: informers.registries().clone(),
        graph: Mutex::new(Graph::default()),
        tables: RwLock::new(tables.clone()),
        attempt_to_delete: informers.queue("garbage_collector_attempt_to_delete"),
        attempt_to_orphan: informers.queue("garbage_collector_attempt_to_orphan"),
        changes: tx.clone(),
    });
    let mut monitors = Monitors::new();
    let first = sync_monitors(&informers, &tables, &mut monitors, &tx);
    let builder = tokio::spawn(build_graph(
        shared.clone(),
        informers.clone(),
        monitors,
        rx,
        catalog,
        stop.clone(),
    ));
    // upstream waits for its monitors to sync before its workers start:
    // a foreground owner must not look free while its dependents are
    // still being listed.
    for i in &first {
        if !i.wait_synced(&stop).await {
            builder.abort();
            return;
        }
    }
    let (done, reached) = oneshot::channel();
    if tx.send(Msg::Barrier(done)).is_err() || reached.await.is_err() {
        return;
    }
    let s = shared.clone();
    let deleters = tokio::spawn(run_workers(
        shared.attempt_to_delete.clone(),
        DELETE_WORKERS,
        move |uid: String| {
            let s = s.clone();
            async move { attempt_to_delete(&s, &uid).await }
        },
    ));
    let s = shared.clone();
    let orphaners = tokio::spawn(run_workers(
        shared.attempt_to_orphan.clone(),
        ORPHAN_WORKERS,
        move |uid: String| {
            let s = s.clone();
            async move { attempt_to_orphan(&s, &uid).await }
        },
    ));
    stop.cancelled().await;
    shared.attempt_to_delete.shut_down();
    shared.attempt_to_orphan.shut_down();
    let _ = deleters.await;
    let _ = orphaners.await;
    let _ = builder.await;
}

/// The live object behind an observed node, if it is still the same object.
async fn live(reg: &Registry, m: &Meta) -> Result<Option<(Value, Meta)>, String> {
    let Some(v) = get_live(reg, &m.namespace, &m.name).await? else {
        return Ok(None);
    };
    let now = Meta::of(&v);
    Ok((now.uid == m.uid).then_some((v, now)))
}

/// upstream's attemptToDeleteItem for one uid of the graph.
async fn attempt_to_delete(s: &Shared, uid: &str) -> Result<(), String> {
    let Some(node) = s.graph.lock().node(uid).cloned() else {
        return Ok(());
    };
    let tables = s.tables();
    let Some((res, observed)) = node.observed.clone() else {
        // A virtual node: does storage hold the owner dependents name?
        let Some((r, ns)) = node.named_as.as_deref().cloned() else {
            return Ok(());
        };
        let Some((owner_res, owner_ns)) = tables.resolve(&r, &ns) else {
            if tables.serves_kind(&r) {
                // Named by a cluster-scoped object but namespaced: invalid,
                // and its dependents are left alone.
                return Ok(());
            }
            return Err(format!(
                "owner kind {} of apiVersion {} is not served",
                crate::api::go_quote(&r.kind),
                crate::api::go_quote(&r.api_version)
            ));
        };
        let reg = s.registry(&owner_res)?;
        let present = get_live(&reg, &owner_ns, &r.name)
            .await?
            .is_some_and(|o| Meta::of(&o).uid == r.uid);
        if !present {
            let _ = s.changes.send(Msg::Change(Change::Absent(uid.to_string())));
        }
        return Ok(());
    };
    let reg = s.registry(&res)?;
    // Gone: its informer's delete event updates the graph.
    let Some((v, m)) = live(&reg, &observed).await? else {
        return Ok(());
    };
    if m.deleting_dependents() {
        let blocking = s.graph.lock().blocking_dependents(uid);
        if blocking.is_empty() {
            return remove_finalizer(&reg, &m, FOREGROUND).await;
        }
        for (d, dm) in blocking {
            if !dm.deleting {
                s.attempt_to_delete.add(d);
            }
        }
        return Ok(());
    }
    // Being deleted is a one-way trip; orphaning has its own queue.
    if m.deleting || m.refs.is_empty() {
        return Ok(());
    }
    let mut classes = Vec::with_capacity(m.refs.len());
    for r in &m.refs {
        let Some((owner_res, ns)) = tables.resolve(r, &m.namespace) else {
            if tables.serves_kind(r) {
                // A cluster-scoped object naming a namespaced owner:
                // invalid, left alone as upstream leaves it.
                return Ok(());
            }
            return Err(format!(
                "owner kind {} of apiVersion {} is not served",
                crate::api::go_quote(&r.kind),
                crate::api::go_quote(&r.api_version)
            ));
        };
        let owner_reg = s.registry(&owner_res)?;
        let class = match get_live(&owner_reg, &ns, &r.name).await? {
            None => Class::Dangling,
            Some(o) => {
                let om = Meta::of(&o);
                if om.uid != r.uid {
                    Class::Dangling
                } else if om.deleting_dependents() {
                    Class::Waiting
                } else {
                    Class::Solid
                }
            }
        };
        classes.push(class);
    }
    let (has_dependents, dependent_waits) = {
        let g = s.graph.lock();
        let deps = g
            .node(uid)
            .map(|n| n.dependents.clone())
            .unwrap_or_default();
        let waits = deps.iter().any(|d| {
            g.node(d)
                .and_then(|n| n.meta())
                .is_some_and(|dm| dm.deleting_dependents())
        });
        (!deps.is_empty(), waits)
    };
    match decide(&m, &classes, has_dependents) {
        Decision::Keep => Ok(()),
        Decision::RemoveRefs(uids) => {
            let mut fields = serde_json::Map::new();
            fields.insert("ownerReferences".into(), refs_without(&v, &uids));
            patch_meta(&reg, &m, fields).await.map(|_| ())
        }
        Decision::DeleteForeground => {
            let mut m = m;
            if dependent_waits {
                // A possible cycle: its own references stop blocking first.
                let mut fields = serde_json::Map::new();
                fields.insert("ownerReferences".into(), refs_unblocked(&v));
                match patch_meta(&reg, &m, fields).await? {
                    Some(patched) => m = Meta::of(&patched),
                    None => return Ok(()),
                }
            }
            delete(&reg, &m, "Foreground").await
        }
        Decision::Delete(policy) => delete(&reg, &m, policy).await,
    }
}

/// upstream's attemptToOrphanWorker: every dependent loses its references
/// to the owner, then the owner its `orphan` finalizer.
async fn attempt_to_orphan(s: &Shared, uid: &str) -> Result<(), String> {
    let (owner, dependents) = {
        let g = s.graph.lock();
        let Some(node) = g.node(uid) else {
            return Ok(());
        };
        let deps: Vec<(Arc<Resource>, Arc<Meta>)> = node
            .dependents
            .iter()
            .filter_map(|d| g.node(d)?.observed.clone())
            .collect();
        (node.observed.clone(), deps)
    };
    let Some((owner_res, owner_meta)) = owner else {
        return Ok(());
    };
    for (res, dm) in dependents {
        let reg = s.registry(&res)?;
        let Some((v, m)) = live(&reg, &dm).await? else {
            continue;
        };
        if !m.refs.iter().any(|r| r.uid == uid) {
            continue;
        }
        let mut fields = serde_json::Map::new();
        fields.insert(
            "ownerReferences".into(),
            refs_without(&v, &[uid.to_string()]),
        );
        patch_meta(&reg, &m, fields).await?;
    }
    let reg = s.registry(&owner_res)?;
    let Some((_, m)) = live(&reg, &owner_meta).await? else {
        return Ok(());
    };
    remove_finalizer(&reg, &m, ORPHAN).await
}

/// Removes a finalizer from a deleting owner (upstream's removeFinalizer);
/// without it the object may go away.
async fn remove_finalizer(reg: &Registry, m: &Meta, finalizer: &str) -> Result<(), String> {
    if !m.deleting || !m.has(finalizer) {
        return Ok(());
    }
    let kept: Vec<&String> = m.finalizers.iter().filter(|f| *f != finalizer).collect();
    let mut fields = serde_json::Map::new();
    fields.insert(
        "finalizers".into(),
        if kept.is_empty() {
            Value::Null
        } else {
            json!(kept)
        },
    );
    tracing::debug!(namespace = %m.namespace, name = %m.name, finalizer, "garbage collector removes finalizer");
    patch_meta(reg, m, fields).await.map(|_| ())
}

/// A live owner reference's state (upstream's classifyReferences).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The owner exists and is not deleting its dependents.
    Solid,
    /// No owner with that uid.
    Dangling,
    /// The owner is deleted in the foreground.
    Waiting,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    Keep,
    /// Remove the references with these uids (some owner stays).
    RemoveRefs(Vec<String>),
    /// An owner waits for it and it has dependents itself.
    DeleteForeground,
    /// No owner is left: delete with this propagation policy.
    Delete(&'static str),
}

/// Upstream's attemptToDeleteItem, given the classes of the item's references.
fn decide(item: &Meta, classes: &[Class], has_dependents: bool) -> Decision {
    let uids = |c: Class| {
        item.refs
            .iter()
            .zip(classes)
            .filter(|(_, k)| **k == c)
            .map(|(r, _)| r.uid.clone())
            .collect::<Vec<_>>()
    };
    if classes.contains(&Class::Solid) {
        let mut gone = uids(Class::Dangling);
        gone.extend(uids(Class::Waiting));
        return if gone.is_empty() {
            Decision::Keep
        } else {
            Decision::RemoveRefs(gone)
        };
    }
    if classes.contains(&Class::Waiting) && has_dependents {
        return Decision::DeleteForeground;
    }
    // Finalizers already on the object are honoured.
    if item.has(ORPHAN) {
        Decision::Delete("Orphan")
    } else if item.has(FOREGROUND) {
        Decision::Delete("Foreground")
    } else {
        Decision::Delete("Background")
    }
}

/// The object's owner references without those of these uids (`null` when none is left).
fn refs_without(obj: &Value, uids: &[String]) -> Value {
    let kept: Vec<Value> = obj["metadata"]["ownerReferences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|r| !uids.iter().any(|u| r["uid"].as_str() == Some(u.as_str())))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if kept.is_empty() {
        Value::Null
    } else {
        Value::Array(kept)
    }
}

/// The object's owner references with `blockOwnerDeletion` false everywhere.
fn refs_unblocked(obj: &Value) -> Value {
    let refs: Vec<Value> = obj["metadata"]["ownerReferences"]
        .as_array()
        .map(|a| {
            a.iter()
                .cloned()
                .map(|mut r| {
                    if r["blockOwnerDeletion"] == json!(true) {
                        r["blockOwnerDeletion"] = json!(false);
                    }
                    r
                })
                .collect()
        })
        .unwrap_or_default();
    Value::Array(refs)
}

/// A consistent read; `None` when the object does not exist.
async fn get_live(reg: &Registry, namespace: &str, name: &str) -> Result<Option<Value>, String> {
    match reg.get_object(namespace, name, None).await {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.code == 404 => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn write_options() -> WriteOptions {
    WriteOptions {
        user_agent: Some(USER_AGENT.to_string()),
        ..Default::default()
    }
}

/// A JSON merge patch of metadata, guarded by the resourceVersion it was computed at.
async fn patch_meta(
    reg: &Registry,
    m: &Meta,
    fields: serde_json::Map<String, Value>,
) -> Result<Option<Value>, String> {
    let mut metadata = fields;
    metadata.insert("resourceVersion".into(), json!(m.resource_version));
    let body = json!({ "metadata": metadata });
    let bytes = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    match reg
        .patch(
            &m.namespace,
            &m.name,
            PatchType::Merge,
            &bytes,
            None,
            &write_options(),
        )
        .await
    {
        Ok(w) => serde_json::from_slice(&w.object)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.code == 404 => Ok(None),
        Err(e) => Err(format!("patching {}/{}: {e}", m.namespace, m.name)),
    }
}

/// Deletes an object as it was classified: uid and resourceVersion
/// preconditions; on a conflict whose owner references did not change,
/// again with the uid alone (upstream's deleteObject).
async fn delete(reg: &Registry, m: &Meta, policy: &str) -> Result<(), String> {
    tracing::debug!(namespace = %m.namespace, name = %m.name, policy, "garbage collector deletes");
    let mut opts = DeleteOptions {
        preconditions: Preconditions {
            uid: Some(m.uid.clone()),
            resource_version: Some(m.resource_version.clone()),
        },
        propagation_policy: Some(policy.to_string()),
        dry_run: false,
        grace_period_seconds: None,
        user: Default::default(),
    };
    match reg.delete(&m.namespace, &m.name, &opts).await {
        Ok(_) => return Ok(()),
        Err(e) if e.code == 404 => return Ok(()),
        Err(e) if e.code == 409 => {}
        Err(e) => return Err(format!("deleting {}/{}: {e}", m.namespace, m.name)),
    }
    let Some(v) = get_live(reg, &m.namespace, &m.name).await? else {
        return Ok(());
    };
    let now = Meta::of(&v);
    if now.uid != m.uid {
        return Ok(());
    }
    if now.refs != m.refs {
        // Changed meanwhile: decided again, after a backoff.
        return Err(format!(
            "{}/{} changed its owner references meanwhile",
            m.namespace, m.name
        ));
    }
    opts.preconditions.resource_version = None;
    match reg.delete(&m.namespace, &m.name, &opts).await {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(format!("deleting {}/{}: {e}", m.namespace, m.name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::tests::oref;

    #[test]
    fn decisions_follow_upstream() {
        let item = Meta {
            refs: vec![
                oref("v1", "ConfigMap", "a", "a", true),
                oref("v1", "ConfigMap", "b", "b", true),
                oref("v1", "ConfigMap", "c", "c", true),
            ],
            ..Default::default()
        };
        use Class::*;
        assert_eq!(decide(&item, &[Solid, Solid, Solid], false), Decision::Keep);
        assert_eq!(
            decide(&item, &[Solid, Dangling, Waiting], true),
            Decision::RemoveRefs(vec!["b".into(), "c".into()])
        );
        assert_eq!(
            decide(&item, &[Dangling, Waiting, Dangling], true),
            Decision::DeleteForeground
        );
        assert_eq!(
            decide(&item, &[Dangling, Waiting, Dangling], false),
            Decision::Delete("Background")
        );
        let mut orphaning = item.clone();
        orphaning.finalizers = vec![ORPHAN.into()];
        assert_eq!(
            decide(&orphaning, &[Dangling, Dangling, Dangling], false),
            Decision::Delete("Orphan")
        );
        let mut fg = item;
        fg.finalizers = vec![FOREGROUND.into()];
        assert_eq!(
            decide(&fg, &[Dangling, Dangling, Dangling], false),
            Decision::Delete("Foreground")
        );
    }

    #[test]
    fn reference_patches() {
        let obj = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "a", "blockOwnerDeletion": true},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "b"},
        ]}});
        assert_eq!(
            refs_without(&obj, &["a".into()]),
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "b"}])
        );
        assert_eq!(refs_without(&obj, &["a".into(), "b".into()]), Value::Null);
        assert_eq!(refs_unblocked(&obj)[0]["blockOwnerDeletion"], json!(false));
        assert!(refs_unblocked(&obj)[1].get("blockOwnerDeletion").is_none());
    }
}
