//! The garbage collector (upstream's `garbagecollector` controller, run by
//! kube-controller-manager): objects whose owners are all gone are deleted
//! (background cascading deletion), an owner deleted in the foreground
//! (deletionTimestamp and the `foregroundDeletion` finalizer) keeps its
//! finalizer until its blocking dependents are gone, and an owner deleted
//! with the `orphan` finalizer first has its owner references removed from
//! its dependents.
//!
//! Upstream keeps a dependency graph fed by informers on every deletable
//! resource. Here a polling loop rebuilds the graph from the watch caches,
//! but only when the store's revision or the catalog changed since the last
//! pass (an idle server costs one revision read per tick). Every decision
//! taken on the graph is confirmed by consistent reads of the object and
//! its owners before anything is written, as upstream confirms with live
//! GETs, and deletions carry uid and resourceVersion preconditions.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::api::catalog::Resource;
use crate::registry::{
    conversion, meta, DeleteOptions, ListParams, PatchType, Registries, Registry, WriteOptions,
};
use crate::storage::store::Preconditions;

/// `metav1.FinalizerDeleteDependents`.
const FOREGROUND: &str = "foregroundDeletion";
/// `metav1.FinalizerOrphanDependents`.
const ORPHAN: &str = "orphan";
/// A pass runs when this server acknowledges a write; this resync is
/// for writes by other servers sharing etcd, which only storage sees.
const RESYNC: Duration = Duration::from_secs(5);
/// The least time from one pass's start to the next's.
const MIN_GAP: Duration = Duration::from_millis(300);
/// After a pass that wrote something: the next step of a cascade is near.
const AFTER_ACTION: Duration = Duration::from_millis(50);
/// A pass that failed is retried this long after, even with nothing changed.
const RETRY: Duration = Duration::from_secs(1);
/// Writes are recorded as kube-controller-manager's (the field manager comes from it).
const USER_AGENT: &str =
    "kube-controller-manager/v1.34.0 (linux/amd64) kubernetes/generic-garbage-collector";

pub async fn run(registries: Registries, stop: CancellationToken) {
    let mut writes = registries.store().subscribe_writes();
    let mut gc = Collector::new(registries);
    loop {
        let began = tokio::time::Instant::now();
        let delay = match gc.pass().await {
            Ok(true) => AFTER_ACTION,
            Ok(false) => RESYNC,
            Err(e) => {
                tracing::debug!(error = %e, "garbage collector pass failed");
                RETRY
            }
        };
        tokio::select! {
            _ = writes.changed() => {}
            _ = tokio::time::sleep(delay) => {}
            _ = stop.cancelled() => return,
        }
        // A pass rebuilds the graph: under a stream of writes, at most one
        // per MIN_GAP; a write to an idle server is acted on at once.
        tokio::select! {
            _ = tokio::time::sleep_until(began + MIN_GAP) => {}
            _ = stop.cancelled() => return,
        }
    }
}

/// An owner reference, as much of it as the collector reads.
#[derive(Debug, Clone, PartialEq)]
struct OwnerRef {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    /// `blockOwnerDeletion`.
    block: bool,
}

/// The metadata the collector reads of an object.
#[derive(Debug, Clone, Default)]
struct Meta {
    namespace: String,
    name: String,
    uid: String,
    resource_version: String,
    deleting: bool,
    finalizers: Vec<String>,
    refs: Vec<OwnerRef>,
}

impl Meta {
    fn of(v: &Value) -> Meta {
        let text = |r: &Value, f: &str| r[f].as_str().unwrap_or("").to_string();
        let refs = v["metadata"]["ownerReferences"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| OwnerRef {
                        api_version: text(r, "apiVersion"),
                        kind: text(r, "kind"),
                        name: text(r, "name"),
                        uid: text(r, "uid"),
                        block: r["blockOwnerDeletion"].as_bool().unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Meta {
            namespace: meta::namespace(v).to_string(),
            name: meta::name(v).to_string(),
            uid: meta::str_field(v, "uid").to_string(),
            resource_version: meta::str_field(v, "resourceVersion").to_string(),
            deleting: meta::is_deleting(v),
            finalizers: meta::finalizers(v),
            refs,
        }
    }

    fn has(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Deleted in the foreground, waiting for its dependents. With both
    /// finalizers (upstream's apiserver never leaves both) orphaning goes
    /// first, so its dependents are not deleted meanwhile.
    fn deleting_dependents(&self) -> bool {
        self.deleting && self.has(FOREGROUND) && !self.has(ORPHAN)
    }

    /// Deleted with its dependents to be orphaned.
    fn orphaning(&self) -> bool {
        self.deleting && self.has(ORPHAN)
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// The catalog as the collector reads it.
#[derive(Default)]
struct Tables {
    generation: Option<u64>,
    /// (group, version, kind) of every stored resource, for owner references.
    by_kind: HashMap<(String, String, String), Arc<Resource>>,
    /// One served version per stored resource (the storage version when
    /// served, so listing converts nothing): what is listed and written
    /// through. Upstream watches resources with delete, list and watch.
    watched: Vec<Arc<Resource>>,
}

impl Tables {
    fn build(generation: u64, all: &[Arc<Resource>]) -> Tables {
        let mut by_kind = HashMap::new();
        let mut chosen: BTreeMap<String, Arc<Resource>> = BTreeMap::new();
        for r in all {
            if !r.is_stored() {
                continue;
            }
            by_kind.insert(
                (r.group.clone(), r.version.clone(), r.kind.clone()),
                r.clone(),
            );
            if !["delete", "list", "watch"].iter().all(|v| r.has_verb(v)) {
                continue;
            }
            let better = chosen
                .get(&r.storage_path)
                .is_none_or(|c| conversion::needed(c) && !conversion::needed(r));
            if better {
                chosen.insert(r.storage_path.clone(), r.clone());
            }
        }
        Tables {
            generation: Some(generation),
            by_kind,
            watched: chosen.into_values().collect(),
        }
    }

    /// The resource and namespace of the owner a reference of an object in
    /// `namespace` names. `None`: the kind is not served (upstream retries
    /// such an item and never deletes it) or a cluster-scoped object names a
    /// namespaced owner (invalid; upstream reports it and leaves the item).
    fn resolve(&self, r: &OwnerRef, namespace: &str) -> Option<(Arc<Resource>, String)> {
        let (group, version) = split_api_version(&r.api_version);
        let res = self
            .by_kind
            .get(&(group.to_string(), version.to_string(), r.kind.clone()))?;
        match (res.namespaced, namespace.is_empty()) {
            (true, true) => None,
            (true, false) => Some((res.clone(), namespace.to_string())),
            (false, _) => Some((res.clone(), String::new())),
        }
    }
}

/// One object of the snapshot.
#[derive(Debug, Clone)]
struct Node {
    /// Index into [`Tables::watched`].
    res: usize,
    meta: Arc<Meta>,
}

/// What a reference points at in the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lookup {
    /// Unresolvable or invalid: the item is left alone.
    Invalid,
    /// Not in the snapshot (gone, another uid, or a kind not watched).
    Absent,
    Present(usize),
}

/// The dependency graph of one snapshot.
#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    by_uid: HashMap<String, usize>,
    /// Owner node → (dependent node, blockOwnerDeletion).
    dependents: HashMap<usize, Vec<(usize, bool)>>,
}

impl Graph {
    fn build(tables: &Tables, nodes: Vec<Node>) -> Graph {
        let mut g = Graph {
            by_uid: nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.meta.uid.is_empty())
                .map(|(i, n)| (n.meta.uid.clone(), i))
                .collect(),
            nodes,
            dependents: HashMap::new(),
        };
        let mut dependents: HashMap<usize, Vec<(usize, bool)>> = HashMap::new();
        for (d, node) in g.nodes.iter().enumerate() {
            for r in &node.meta.refs {
                if let Lookup::Present(o) = g.lookup(tables, r, &node.meta.namespace) {
                    dependents.entry(o).or_default().push((d, r.block));
                }
            }
        }
        g.dependents = dependents;
        g
    }

    fn lookup(&self, tables: &Tables, r: &OwnerRef, namespace: &str) -> Lookup {
        let Some((res, ns)) = tables.resolve(r, namespace) else {
            return Lookup::Invalid;
        };
        let Some(&o) = self.by_uid.get(&r.uid) else {
            return Lookup::Absent;
        };
        let owner = &self.nodes[o];
        let same_resource = tables
            .watched
            .get(owner.res)
            .is_some_and(|w| w.storage_path == res.storage_path);
        if same_resource && owner.meta.name == r.name && owner.meta.namespace == ns {
            Lookup::Present(o)
        } else {
            Lookup::Absent
        }
    }

    fn dependents_of(&self, owner: usize) -> &[(usize, bool)] {
        self.dependents
            .get(&owner)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Work a snapshot calls for; each is confirmed against live objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    /// Remove references to this owner from its dependents, then its `orphan` finalizer.
    Orphan(usize),
    /// No blocking dependent is left: remove the owner's `foregroundDeletion` finalizer.
    FinishForeground(usize),
    /// Some owner of this object is gone or deleting its dependents: upstream's attemptToDeleteItem.
    Attempt(usize),
}

/// What a snapshot calls for (upstream's graph builder deciding what to queue).
fn plan(tables: &Tables, graph: &Graph) -> Vec<Action> {
    let mut out = Vec::new();
    let mut attempts = BTreeSet::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let m = &node.meta;
        if m.orphaning() {
            // Orphaning comes first, as upstream's transitions check it first.
            out.push(Action::Orphan(i));
            continue;
        }
        if m.deleting_dependents() {
            let deps = graph.dependents_of(i);
            if !deps.iter().any(|(_, block)| *block) {
                out.push(Action::FinishForeground(i));
            }
            attempts.extend(
                deps.iter()
                    .map(|(d, _)| *d)
                    .filter(|d| !graph.nodes[*d].meta.deleting),
            );
            continue;
        }
        if m.deleting || m.refs.is_empty() {
            continue;
        }
        let mut settled = true;
        for r in &m.refs {
            match graph.lookup(tables, r, &m.namespace) {
                Lookup::Invalid => {
                    settled = true;
                    break;
                }
                Lookup::Absent => settled = false,
                Lookup::Present(o) if graph.nodes[o].meta.deleting_dependents() => settled = false,
                Lookup::Present(_) => {}
            }
        }
        if !settled {
            attempts.insert(i);
        }
    }
    out.extend(attempts.into_iter().map(Action::Attempt));
    out
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

struct Collector {
    registries: Registries,
    tables: Tables,
    /// Parsed metadata by the identity of the cached bytes (held here, so
    /// an address is never reused while its entry lives): an object is
    /// parsed once per change, not once per pass.
    parsed: HashMap<(usize, usize), (Bytes, Arc<Meta>)>,
    /// (catalog generation, store revision) of the last pass.
    synced: Option<(u64, i64)>,
    retry_at: Option<Instant>,
    /// Per watched resource (index into [`Tables::watched`]): the revision
    /// of its last write this server acknowledged, and a fingerprint of
    /// what the collector reads of its objects, as of the last full pass.
    /// A lease renewed every two seconds then costs a re-list of leases,
    /// not a rebuild of the graph of every object.
    seen: HashMap<usize, (i64, u64)>,
}

/// A list from the watch cache that holds every write this server made to
/// the resource: its events reach the cache by themselves, so no progress
/// has to be asked of storage (asked of every resource at the store's
/// revision, that cost a round trip per resource per pass, and on etcd 3.4
/// progress reports that run ahead of events force relists). Writes by
/// other servers show as their events arrive; every action is confirmed
/// by live reads anyway.
fn not_older_than_own_writes(reg: &Registry) -> ListParams {
    let mark = reg.last_write();
    ListParams {
        resource_version: Some(if mark > 0 {
            mark.to_string()
        } else {
            "0".into()
        }),
        resource_version_match: (mark > 0).then(|| "NotOlderThan".into()),
        ..Default::default()
    }
}

/// What the collector reads of one resource's objects, hashed: names,
/// uids, owner references, finalizers and deletion, not resourceVersions.
fn fingerprint(metas: &[Arc<Meta>]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut rows: Vec<&Arc<Meta>> = metas.iter().collect();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in rows {
        (&m.namespace, &m.name, &m.uid, m.deleting, &m.finalizers).hash(&mut h);
        for r in &m.refs {
            (&r.api_version, &r.kind, &r.name, &r.uid, r.block).hash(&mut h);
        }
    }
    h.finish()
}

impl Collector {
    fn new(registries: Registries) -> Self {
        Collector {
            registries,
            tables: Tables::default(),
            parsed: HashMap::new(),
            synced: None,
            retry_at: None,
            seen: HashMap::new(),
        }
    }

    /// The last acknowledged write to each watched resource.
    fn marks(&self) -> Vec<i64> {
        self.tables
            .watched
            .iter()
            .map(|r| {
                self.registries
                    .get(&r.group, &r.version, &r.plural)
                    .map_or(0, |reg| reg.last_write())
            })
            .collect()
    }

    /// Whether the writes since the last full pass are all to resources
    /// whose objects changed nothing the collector reads (a lease renewed).
    /// `false` when unsure: another server wrote, or something relevant.
    async fn nothing_relevant_changed(&mut self) -> Result<bool, String> {
        let marks = self.marks();
        let changed: Vec<usize> = marks
            .iter()
            .enumerate()
            .filter(|(i, m)| self.seen.get(i).is_none_or(|(seen, _)| *m > seen))
            .map(|(i, _)| i)
            .collect();
        if changed.is_empty() || self.seen.len() != marks.len() {
            // The revision moved with no write of ours to a watched
            // resource: another server's, which only a full pass sees.
            return Ok(false);
        }
        let mut updates = Vec::new();
        for i in changed {
            let metas = self.list_metas(i).await?;
            let fp = fingerprint(&metas);
            if self.seen.get(&i).map(|(_, f)| *f) != Some(fp) {
                return Ok(false);
            }
            updates.push((i, marks[i], fp));
        }
        for (i, m, fp) in updates {
            self.seen.insert(i, (m, fp));
        }
        Ok(true)
    }

    /// One watched resource's objects' metadata, from the watch cache.
    async fn list_metas(&mut self, i: usize) -> Result<Vec<Arc<Meta>>, String> {
        let Some(r) = self.tables.watched.get(i).cloned() else {
            return Ok(Vec::new());
        };
        let Some(reg) = self.registries.get(&r.group, &r.version, &r.plural) else {
            return Ok(Vec::new());
        };
        let params = not_older_than_own_writes(&reg);
        let list = reg
            .list("", &params)
            .await
            .map_err(|e| format!("listing {}: {e}", r.plural))?;
        Ok(list
            .items
            .iter()
            .filter_map(|item| serde_json::from_slice::<Value>(item).ok())
            .map(|v| Arc::new(Meta::of(&v)))
            .collect())
    }

    /// One pass; `Ok(true)` when something was written.
    async fn pass(&mut self) -> Result<bool, String> {
        let generation = self.registries.catalog.generation();
        let rev = self
            .registries
            .store()
            .backend()
            .current_revision()
            .await
            .map_err(|e| e.to_string())?;
        let due = self.retry_at.is_some_and(|t| Instant::now() >= t);
        if self.synced == Some((generation, rev)) && !due {
            return Ok(false);
        }
        let settled = self.retry_at.is_none()
            && self.synced.is_some_and(|(g, _)| g == generation)
            && self.tables.generation == Some(generation);
        if settled && self.nothing_relevant_changed().await? {
            self.synced = Some((generation, rev));
            return Ok(false);
        }
        self.synced = Some((generation, rev));
        self.retry_at = Some(Instant::now() + RETRY);
        if self.tables.generation != Some(generation) {
            self.tables = Tables::build(generation, &self.registries.catalog.all());
            self.seen.clear();
        }
        // Marks read before the lists: a write after them shows next time.
        let marks = self.marks();
        let graph = self.snapshot().await?;
        let mut by_res: HashMap<usize, Vec<Arc<Meta>>> = HashMap::new();
        for n in &graph.nodes {
            by_res.entry(n.res).or_default().push(n.meta.clone());
        }
        self.seen = marks
            .iter()
            .enumerate()
            .map(|(i, m)| {
                (
                    i,
                    (
                        *m,
                        fingerprint(by_res.get(&i).map_or(&[][..], Vec::as_slice)),
                    ),
                )
            })
            .collect();
        let mut acted = false;
        let mut failed = None;
        for action in plan(&self.tables, &graph) {
            let done = match action {
                Action::Orphan(i) => self.orphan(&graph, i).await,
                Action::FinishForeground(i) => self.remove_finalizer(&graph, i, FOREGROUND).await,
                Action::Attempt(i) => self.attempt(&graph, i).await,
            };
            match done {
                Ok(wrote) => acted |= wrote,
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) => Err(e),
            None => {
                self.retry_at = None;
                Ok(acted)
            }
        }
    }

    /// Every watched resource from its watch cache, with this server's writes.
    async fn snapshot(&mut self) -> Result<Graph, String> {
        let mut nodes = Vec::new();
        let mut parsed = HashMap::with_capacity(self.parsed.len());
        for (i, r) in self.tables.watched.iter().enumerate() {
            let Some(reg) = self.registries.get(&r.group, &r.version, &r.plural) else {
                continue;
            };
            let params = not_older_than_own_writes(&reg);
            let list = match reg.list("", &params).await {
                Ok(l) => l,
                // Removed meanwhile (a CRD went away): its objects went with it.
                Err(_)
                    if self
                        .registries
                        .catalog
                        .get(&r.group, &r.version, &r.plural)
                        .is_none() =>
                {
                    continue
                }
                Err(e) => return Err(format!("listing {}: {e}", r.plural)),
            };
            for item in list.items {
                if item.is_empty() {
                    continue;
                }
                let key = (item.as_ptr() as usize, item.len());
                let m = match self.parsed.remove(&key) {
                    Some((_, m)) => m,
                    None => match serde_json::from_slice::<Value>(&item) {
                        Ok(v) => Arc::new(Meta::of(&v)),
                        Err(_) => continue,
                    },
                };
                parsed.insert(key, (item, m.clone()));
                nodes.push(Node { res: i, meta: m });
            }
        }
        self.parsed = parsed;
        Ok(Graph::build(&self.tables, nodes))
    }

    fn registry_of(&self, node: &Node) -> Result<Arc<Registry>, String> {
        let r = self
            .tables
            .watched
            .get(node.res)
            .ok_or("resource table changed")?;
        self.registries
            .get(&r.group, &r.version, &r.plural)
            .ok_or_else(|| format!("{} is no longer served", r.plural))
    }

    /// The live object of a node, if it is still the same object.
    async fn live(&self, reg: &Registry, node: &Node) -> Result<Option<(Value, Meta)>, String> {
        let Some(v) = get_live(reg, &node.meta.namespace, &node.meta.name).await? else {
            return Ok(None);
        };
        let m = Meta::of(&v);
        Ok((m.uid == node.meta.uid).then_some((v, m)))
    }

    /// Removes a finalizer from a deleting owner (upstream's removeFinalizer);
    /// without it the object may go away.
    async fn remove_finalizer(
        &self,
        graph: &Graph,
        i: usize,
        finalizer: &str,
    ) -> Result<bool, String> {
        let node = &graph.nodes[i];
        let reg = self.registry_of(node)?;
        let Some((_, m)) = self.live(&reg, node).await? else {
            return Ok(false);
        };
        if !m.deleting || !m.has(finalizer) {
            return Ok(false);
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
        Ok(patch_meta(&reg, &m, fields).await?.is_some())
    }

    /// Upstream's attemptToOrphanWorker: every dependent loses its
    /// references to the owner, then the owner its `orphan` finalizer.
    async fn orphan(&self, graph: &Graph, i: usize) -> Result<bool, String> {
        let owner_uid = graph.nodes[i].meta.uid.clone();
        let mut wrote = false;
        for &(d, _) in graph.dependents_of(i) {
            let node = &graph.nodes[d];
            let reg = self.registry_of(node)?;
            let Some((v, m)) = self.live(&reg, node).await? else {
                continue;
            };
            if !m.refs.iter().any(|r| r.uid == owner_uid) {
                continue;
            }
            let mut fields = serde_json::Map::new();
            fields.insert(
                "ownerReferences".into(),
                refs_without(&v, std::slice::from_ref(&owner_uid)),
            );
            patch_meta(&reg, &m, fields).await?;
            wrote = true;
        }
        Ok(self.remove_finalizer(graph, i, ORPHAN).await? || wrote)
    }

    /// Upstream's attemptToDeleteItem: classifies the live object's owner
    /// references by live reads of the owners and deletes the object, or
    /// drops references, accordingly.
    async fn attempt(&self, graph: &Graph, i: usize) -> Result<bool, String> {
        let node = &graph.nodes[i];
        let reg = self.registry_of(node)?;
        let Some((v, m)) = self.live(&reg, node).await? else {
            return Ok(false);
        };
        // Being deleted is a one-way trip; foreground owners are handled as owners.
        if m.deleting || m.refs.is_empty() {
            return Ok(false);
        }
        let mut classes = Vec::with_capacity(m.refs.len());
        for r in &m.refs {
            let Some((res, ns)) = self.tables.resolve(r, &m.namespace) else {
                return Ok(false);
            };
            let Some(owner_reg) = self.registries.get(&res.group, &res.version, &res.plural) else {
                return Ok(false);
            };
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
        let deps = graph.dependents_of(i);
        match decide(&m, &classes, !deps.is_empty()) {
            Decision::Keep => Ok(false),
            Decision::RemoveRefs(uids) => {
                let mut fields = serde_json::Map::new();
                fields.insert("ownerReferences".into(), refs_without(&v, &uids));
                Ok(patch_meta(&reg, &m, fields).await?.is_some())
            }
            Decision::DeleteForeground => {
                let mut m = m;
                if deps
                    .iter()
                    .any(|(d, _)| graph.nodes[*d].meta.deleting_dependents())
                {
                    // A possible cycle: its own references stop blocking first.
                    let mut fields = serde_json::Map::new();
                    fields.insert("ownerReferences".into(), refs_unblocked(&v));
                    match patch_meta(&reg, &m, fields).await? {
                        Some(patched) => m = Meta::of(&patched),
                        None => return Ok(false),
                    }
                }
                self.delete(&reg, &m, "Foreground").await
            }
            Decision::Delete(policy) => self.delete(&reg, &m, policy).await,
        }
    }

    /// Deletes an object as it was classified: uid and resourceVersion
    /// preconditions; on a conflict whose owner references did not change,
    /// again with the uid alone (upstream's deleteObject).
    async fn delete(&self, reg: &Registry, m: &Meta, policy: &str) -> Result<bool, String> {
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
            Ok(_) => return Ok(true),
            Err(e) if e.code == 404 => return Ok(false),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(format!("deleting {}/{}: {e}", m.namespace, m.name)),
        }
        let Some(v) = get_live(reg, &m.namespace, &m.name).await? else {
            return Ok(false);
        };
        let now = Meta::of(&v);
        if now.uid != m.uid || now.refs != m.refs {
            // Changed meanwhile: the next pass looks again.
            return Ok(false);
        }
        opts.preconditions.resource_version = None;
        match reg.delete(&m.namespace, &m.name, &opts).await {
            Ok(_) => Ok(true),
            Err(e) if e.code == 404 => Ok(false),
            Err(e) => Err(format!("deleting {}/{}: {e}", m.namespace, m.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::catalog::Catalog;

    fn tables() -> Tables {
        let catalog = Catalog::default();
        for def in crate::controlplane::builtin::BUILTINS {
            catalog.add(Resource::from_builtin(def));
        }
        Tables::build(catalog.generation(), &catalog.all())
    }

    fn res(t: &Tables, plural: &str) -> usize {
        t.watched
            .iter()
            .position(|r| r.plural == plural)
            .unwrap_or_else(|| panic!("{plural} not watched"))
    }

    fn oref(api_version: &str, kind: &str, name: &str, uid: &str, block: bool) -> OwnerRef {
        OwnerRef {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            block,
        }
    }

    fn node(
        t: &Tables,
        plural: &str,
        ns: &str,
        name: &str,
        uid: &str,
        refs: Vec<OwnerRef>,
    ) -> Node {
        Node {
            res: res(t, plural),
            meta: Arc::new(Meta {
                namespace: ns.into(),
                name: name.into(),
                uid: uid.into(),
                resource_version: "1".into(),
                refs,
                ..Default::default()
            }),
        }
    }

    fn deleting(mut n: Node, finalizers: &[&str]) -> Node {
        let m = Arc::make_mut(&mut n.meta);
        m.deleting = true;
        m.finalizers = finalizers.iter().map(|s| s.to_string()).collect();
        n
    }

    fn chain(t: &Tables, deployment: Node) -> Graph {
        let rs = node(
            t,
            "replicasets",
            "ns",
            "d-1",
            "rs",
            vec![oref("apps/v1", "Deployment", "d", "dep", true)],
        );
        let pod = node(
            t,
            "pods",
            "ns",
            "d-1-a",
            "pod",
            vec![oref("apps/v1", "ReplicaSet", "d-1", "rs", true)],
        );
        Graph::build(t, vec![deployment, rs, pod])
    }

    #[test]
    fn the_storage_version_is_watched_once_per_resource() {
        let t = tables();
        let hpas: Vec<_> = t
            .watched
            .iter()
            .filter(|r| r.plural == "horizontalpodautoscalers")
            .collect();
        assert_eq!(hpas.len(), 1);
        assert!(!conversion::needed(hpas[0]));
        assert!(t.watched.iter().all(|r| r.has_verb("watch")));
    }

    #[test]
    fn nothing_to_do_while_every_owner_exists() {
        let t = tables();
        let g = chain(&t, node(&t, "deployments", "ns", "d", "dep", vec![]));
        assert_eq!(g.dependents_of(0), &[(1, true)]);
        assert_eq!(g.dependents_of(1), &[(2, true)]);
        assert!(plan(&t, &g).is_empty());
    }

    #[test]
    fn a_dependent_of_a_missing_owner_is_attempted() {
        let t = tables();
        let other = node(&t, "deployments", "ns", "d", "another-uid", vec![]);
        let g = chain(&t, other);
        assert_eq!(plan(&t, &g), vec![Action::Attempt(1)]);
        // An owner of that name in another namespace is not the owner either.
        let elsewhere = node(&t, "deployments", "other", "d", "dep", vec![]);
        assert_eq!(plan(&t, &chain(&t, elsewhere)), vec![Action::Attempt(1)]);
    }

    #[test]
    fn foreground_waits_for_blocking_dependents() {
        let t = tables();
        let owner = deleting(
            node(&t, "deployments", "ns", "d", "dep", vec![]),
            &[FOREGROUND],
        );
        let g = chain(&t, owner);
        assert_eq!(plan(&t, &g), vec![Action::Attempt(1)]);

        // Non-blocking dependents do not hold the owner.
        let owner = deleting(
            node(&t, "configmaps", "ns", "o", "cm", vec![]),
            &[FOREGROUND],
        );
        let dep = node(
            &t,
            "secrets",
            "ns",
            "s",
            "s",
            vec![oref("v1", "ConfigMap", "o", "cm", false)],
        );
        let g = Graph::build(&t, vec![owner, dep]);
        assert_eq!(
            plan(&t, &g),
            vec![Action::FinishForeground(0), Action::Attempt(1)]
        );
    }

    #[test]
    fn a_deleting_dependent_still_blocks_but_is_not_attempted() {
        let t = tables();
        let owner = deleting(
            node(&t, "deployments", "ns", "d", "dep", vec![]),
            &[FOREGROUND],
        );
        let rs = deleting(
            node(
                &t,
                "replicasets",
                "ns",
                "d-1",
                "rs",
                vec![oref("apps/v1", "Deployment", "d", "dep", true)],
            ),
            &["example.com/hold"],
        );
        let g = Graph::build(&t, vec![owner, rs]);
        assert!(plan(&t, &g).is_empty());
    }

    #[test]
    fn orphaning_comes_first() {
        let t = tables();
        let owner = deleting(
            node(&t, "deployments", "ns", "d", "dep", vec![]),
            &[ORPHAN, FOREGROUND],
        );
        let g = chain(&t, owner);
        assert_eq!(plan(&t, &g), vec![Action::Orphan(0)]);
    }

    #[test]
    fn owner_scopes() {
        let t = tables();
        // A cluster-scoped owner of a namespaced object.
        let role = node(&t, "clusterroles", "", "r", "role", vec![]);
        let cm = node(
            &t,
            "configmaps",
            "ns",
            "c",
            "cm",
            vec![oref(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                "r",
                "role",
                false,
            )],
        );
        let g = Graph::build(&t, vec![role, cm.clone()]);
        assert_eq!(g.dependents_of(0), &[(1, false)]);
        assert!(plan(&t, &g).is_empty());
        assert_eq!(
            plan(&t, &Graph::build(&t, vec![cm])),
            vec![Action::Attempt(0)]
        );

        // A namespaced owner of a cluster-scoped object is ignored, as is an unknown kind.
        let pv = node(
            &t,
            "persistentvolumes",
            "",
            "pv",
            "pv",
            vec![oref("v1", "ConfigMap", "c", "cm-gone", true)],
        );
        let odd = node(
            &t,
            "configmaps",
            "ns",
            "odd",
            "odd",
            vec![
                oref("example.com/v1", "Widget", "w", "w", true),
                oref("v1", "ConfigMap", "gone", "gone", true),
            ],
        );
        assert!(plan(&t, &Graph::build(&t, vec![pv, odd])).is_empty());
    }

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
