//! One shared informer: a local, indexed copy of one resource kept from
//! the watch cache (list once, then follow events), with handlers that see
//! each change and a revision that says how current the copy is, as
//! client-go's SharedIndexInformer does for a controller.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::registry::{meta, ListParams, Registry};
use crate::storage::cacher::{EventType, WatchMessage};

/// A change as handlers see it.
#[derive(Debug, Clone)]
pub enum Event {
    Added(Arc<Value>),
    Updated { old: Arc<Value>, new: Arc<Value> },
    Deleted(Arc<Value>),
}

impl Event {
    /// The object after the change (the last state for a delete).
    pub fn object(&self) -> &Arc<Value> {
        match self {
            Event::Added(o) | Event::Deleted(o) => o,
            Event::Updated { new, .. } => new,
        }
    }
}

/// Called in the informer's task for every change, in order, while the
/// informer's copy is locked (so a handler added late misses nothing and
/// sees nothing twice): it must only note the change (enqueue a key, wake
/// a task) and must not read this informer.
pub type Handler = Arc<dyn Fn(&Event) + Send + Sync>;

/// Maps an object to the index values it is filed under.
pub type IndexFn = Arc<dyn Fn(&Value) -> Vec<String> + Send + Sync>;

/// The name of the index by namespace, always present.
pub const BY_NAMESPACE: &str = "namespace";

/// upstream's MetaNamespaceKeyFunc: `namespace/name`, or `name` for
/// cluster-scoped objects.
pub fn key_of(obj: &Value) -> String {
    let (ns, name) = (meta::namespace(obj), meta::name(obj));
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}

/// How the copy keeps one object. A metadata informer follows every
/// object of every resource, and a decoded `Value` costs several times its
/// JSON (a map node per object level), so it keeps JSON and decodes on
/// read.
enum Kept {
    Whole(Arc<Value>),
    /// The object's JSON as the watch cache holds it: the same bytes, so
    /// the copy costs no memory of its own.
    Shared(Bytes),
    /// Its metadata re-encoded, where no watch cache holds the object.
    Packed(Box<[u8]>),
}

impl Kept {
    fn value(&self) -> Arc<Value> {
        match self {
            Kept::Whole(v) => v.clone(),
            Kept::Shared(b) => Arc::new(Projection::Metadata.decode(b).unwrap_or(Value::Null)),
            // Bytes this copy wrote from a `Value`: they decode.
            Kept::Packed(b) => Arc::new(serde_json::from_slice(b).unwrap_or(Value::Null)),
        }
    }
}

/// Which [`Kept`] a copy makes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Keep {
    #[default]
    Whole,
    Shared,
    Packed,
}

#[derive(Default)]
struct Cache {
    objects: BTreeMap<String, Kept>,
    keep: Keep,
    /// index name -> value -> keys.
    indices: HashMap<String, HashMap<String, BTreeSet<String>>>,
    /// The revision the copy reflects.
    rev: i64,
}

impl Cache {
    fn unindex(&mut self, indexers: &[(String, IndexFn)], key: &str, obj: &Value) {
        for (name, f) in indexers {
            if let Some(idx) = self.indices.get_mut(name) {
                for v in f(obj) {
                    if let Some(keys) = idx.get_mut(&v) {
                        keys.remove(key);
                        if keys.is_empty() {
                            idx.remove(&v);
                        }
                    }
                }
            }
        }
    }

    fn index(&mut self, indexers: &[(String, IndexFn)], key: &str, obj: &Value) {
        for (name, f) in indexers {
            let idx = self.indices.entry(name.clone()).or_default();
            for v in f(obj) {
                idx.entry(v).or_default().insert(key.to_string());
            }
        }
    }

    /// `json` is the object as the watch cache serves it.
    fn keep(&self, obj: &Arc<Value>, json: &Bytes) -> Kept {
        match self.keep {
            Keep::Whole => Kept::Whole(obj.clone()),
            Keep::Shared => Kept::Shared(json.clone()),
            Keep::Packed => Kept::Packed(serde_json::to_vec(&**obj).unwrap_or_default().into()),
        }
    }

    fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.objects.get(key).map(Kept::value)
    }

    fn values(&self) -> Vec<Arc<Value>> {
        self.objects.values().map(Kept::value).collect()
    }

    fn put(
        &mut self,
        indexers: &[(String, IndexFn)],
        obj: Arc<Value>,
        json: &Bytes,
    ) -> Option<Arc<Value>> {
        let key = key_of(&obj);
        let kept = self.keep(&obj, json);
        let old = self.objects.insert(key.clone(), kept).map(|k| k.value());
        if let Some(o) = &old {
            self.unindex(indexers, &key, o);
        }
        self.index(indexers, &key, &obj);
        old
    }

    fn remove(&mut self, indexers: &[(String, IndexFn)], key: &str) -> Option<Arc<Value>> {
        let old = self.objects.remove(key)?.value();
        self.unindex(indexers, key, &old);
        Some(old)
    }
}

/// What an informer keeps of each object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Projection {
    /// The whole object.
    Full,
    /// `apiVersion`, `kind` and `metadata` without `managedFields`
    /// (upstream's metadata informers, PartialObjectMetadata): what the
    /// garbage collector reads of every object in the store, at a
    /// fraction of the memory.
    Metadata,
}

impl Projection {
    fn decode(self, json: &[u8]) -> Option<Value> {
        match self {
            Projection::Full => serde_json::from_slice(json).ok(),
            // Decoded without the parts a metadata informer drops (the
            // body, managedFields), as PartialObjectMetadata holds it.
            Projection::Metadata => crate::api::partial_json::object_metadata(json),
        }
    }
}

pub struct Informer {
    registry: Arc<Registry>,
    projection: Projection,
    cache: RwLock<Cache>,
    /// Both copied on write: every event takes a snapshot of each.
    indexers: RwLock<Arc<Vec<(String, IndexFn)>>>,
    handlers: RwLock<Arc<Vec<(u64, Handler)>>>,
    next_handler: std::sync::atomic::AtomicU64,
    /// The selection this informer follows (a field selector for
    /// informers of a few objects, as upstream's tweakListOptions).
    params: ListParams,
    /// The cache's revision, for waiters.
    rev: watch::Sender<i64>,
    synced: watch::Sender<bool>,
    /// The last acknowledged write to this resource (see
    /// [`crate::storage::store::Store::write_mark`]).
    written: Arc<AtomicI64>,
}

/// How long a reader waits for the informer to reach the last write
/// before it answers from what it has (storage may be slow, not wrong).
pub const FRESHNESS_WAIT: Duration = Duration::from_secs(5);

impl Informer {
    pub(super) fn new(
        registry: Arc<Registry>,
        params: ListParams,
        projection: Projection,
    ) -> Arc<Informer> {
        let written = registry
            .registries()
            .store()
            .write_mark(registry.key_root());
        let by_ns: IndexFn = Arc::new(|o| vec![meta::namespace(o).to_string()]);
        let keep = match projection {
            Projection::Full => Keep::Whole,
            Projection::Metadata if registry.watch_cached() => Keep::Shared,
            Projection::Metadata => Keep::Packed,
        };
        Arc::new(Informer {
            registry,
            projection,
            cache: RwLock::new(Cache {
                keep,
                ..Cache::default()
            }),
            indexers: RwLock::new(Arc::new(vec![(BY_NAMESPACE.to_string(), by_ns)])),
            handlers: RwLock::default(),
            next_handler: std::sync::atomic::AtomicU64::new(1),
            params,
            rev: watch::channel(0).0,
            synced: watch::channel(false).0,
            written,
        })
    }

    /// The resource this informer follows.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Adds an index; objects already cached are filed at once.
    pub fn add_indexer(&self, name: &str, f: IndexFn) {
        let mut indexers = self.indexers.write();
        if indexers.iter().any(|(n, _)| n == name) {
            return;
        }
        Arc::make_mut(&mut indexers).push((name.to_string(), f));
        let mut cache = self.cache.write();
        for o in cache.values() {
            cache.index(&indexers, &key_of(&o), &o);
        }
    }

    /// Adds a handler, removed when the returned registration is dropped.
    /// Like upstream's AddEventHandler, a handler added late first sees
    /// every cached object as added.
    #[must_use = "the handler is removed when the registration is dropped"]
    pub fn add_handler(self: &Arc<Self>, h: Handler) -> Registration {
        // Under the cache lock, so no event slips between the replay and
        // the registration.
        let cache = self.cache.read();
        for o in cache.values() {
            h(&Event::Added(o));
        }
        let id = self.next_handler.fetch_add(1, Ordering::Relaxed);
        Arc::make_mut(&mut self.handlers.write()).push((id, h));
        Registration {
            informer: Arc::downgrade(self),
            id,
        }
    }

    pub fn has_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until the first list is in (upstream's WaitForCacheSync).
    pub async fn wait_synced(&self, stop: &CancellationToken) -> bool {
        let mut rx = self.synced.subscribe();
        tokio::select! {
            r = rx.wait_for(|s| *s) => r.is_ok(),
            _ = stop.cancelled() => false,
        }
    }

    /// The revision the cached copy reflects.
    pub fn revision(&self) -> i64 {
        self.cache.read().rev
    }

    /// Whether the copy reflects every write this server acknowledged.
    pub fn is_current(&self) -> bool {
        self.revision() >= self.written.load(Ordering::Acquire)
    }

    /// Waits (at most [`FRESHNESS_WAIT`]) until the copy reflects every
    /// write acknowledged so far; returns whether it does.
    pub async fn wait_current(&self) -> bool {
        let want = self.written.load(Ordering::Acquire);
        let mut rx = self.rev.subscribe();
        if *rx.borrow() >= want {
            return true;
        }
        let reached = tokio::time::timeout(FRESHNESS_WAIT, rx.wait_for(|r| *r >= want))
            .await
            .is_ok_and(|r| r.is_ok());
        reached
    }

    pub fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.cache.read().get(key)
    }

    pub fn list(&self) -> Vec<Arc<Value>> {
        self.cache.read().values()
    }

    /// Every object with its revision, read at one instant.
    pub fn snapshot(&self) -> (i64, Vec<Arc<Value>>) {
        let cache = self.cache.read();
        (cache.rev, cache.values())
    }

    /// The objects filed under `value` in index `name`.
    pub fn by_index(&self, name: &str, value: &str) -> Vec<Arc<Value>> {
        let cache = self.cache.read();
        let Some(keys) = cache.indices.get(name).and_then(|i| i.get(value)) else {
            return Vec::new();
        };
        keys.iter().filter_map(|k| cache.get(k)).collect()
    }

    fn set_rev(&self, cache: &mut Cache, rev: i64) {
        if rev > cache.rev {
            cache.rev = rev;
        }
    }

    fn publish_rev(&self) {
        let rev = self.cache.read().rev;
        self.rev.send_if_modified(|r| {
            let moved = *r < rev;
            if moved {
                *r = rev;
            }
            moved
        });
    }

    /// Replaces the whole copy with a fresh list (the first one, or after
    /// the watch broke), telling handlers what changed in between.
    /// `fresh`: each object with its JSON as the watch cache serves it.
    fn replace(&self, fresh: Vec<(Arc<Value>, Bytes)>, rev: i64) {
        let indexers = self.indexers.read().clone();
        let mut events = Vec::new();
        {
            let mut cache = self.cache.write();
            let mut gone: BTreeSet<String> = cache.objects.keys().cloned().collect();
            for (obj, json) in fresh {
                gone.remove(&key_of(&obj));
                let same = |old: &Arc<Value>| {
                    meta::str_field(old, "resourceVersion")
                        == meta::str_field(&obj, "resourceVersion")
                };
                match cache.get(&key_of(&obj)) {
                    Some(old) if same(&old) => {}
                    Some(old) => {
                        cache.put(&indexers, obj.clone(), &json);
                        events.push(Event::Updated { old, new: obj });
                    }
                    None => {
                        cache.put(&indexers, obj.clone(), &json);
                        events.push(Event::Added(obj));
                    }
                }
            }
            for key in gone {
                if let Some(old) = cache.remove(&indexers, &key) {
                    events.push(Event::Deleted(old));
                }
            }
            cache.rev = rev;
            // Handlers run under the lock's shadow: a handler added now
            // replays the new state and must not see these events twice.
            let handlers = self.handlers.read().clone();
            for e in &events {
                for (_, h) in handlers.iter() {
                    h(e);
                }
            }
        }
        self.rev.send_replace(rev);
        self.synced.send_replace(true);
    }

    fn apply(&self, kind: EventType, obj: Arc<Value>, json: &Bytes, rev: i64) {
        let indexers = self.indexers.read().clone();
        {
            let mut cache = self.cache.write();
            let ev = match kind {
                EventType::Added | EventType::Modified => {
                    match cache.put(&indexers, obj.clone(), json) {
                        Some(old) => Some(Event::Updated { old, new: obj }),
                        None => Some(Event::Added(obj)),
                    }
                }
                EventType::Deleted => {
                    let key = key_of(&obj);
                    cache.remove(&indexers, &key).map(|_| Event::Deleted(obj))
                }
            };
            self.set_rev(&mut cache, rev);
            if let Some(e) = &ev {
                let handlers = self.handlers.read().clone();
                for (_, h) in handlers.iter() {
                    h(e);
                }
            }
        }
        self.publish_rev();
    }

    /// Lists and watches until `stop`: a consistent list (as initial
    /// events) replaces the copy, then events keep it current; when the
    /// watch ends (a slow consumer is cut, storage restarts) it starts over.
    pub(super) async fn run(self: Arc<Self>, stop: CancellationToken) {
        let mut backoff = Duration::from_millis(50);
        while !stop.is_cancelled() {
            let watch = self
                .registry
                .watch("", None, &self.params, true, true, None)
                .await;
            let mut rx = match watch {
                Ok(rx) => rx,
                Err(e) => {
                    tracing::debug!(resource = %self.registry.resource.plural, error = %e.message, "informer watch failed; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = stop.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            let mut initial: Option<Vec<(Arc<Value>, Bytes)>> = Some(Vec::new());
            loop {
                let msg = tokio::select! {
                    m = rx.recv() => m,
                    _ = stop.cancelled() => return,
                };
                let Some(msg) = msg else { break };
                match msg {
                    WatchMessage::Event {
                        kind,
                        object,
                        lines,
                    } => {
                        // A write's metadata, as the cache decoded it.
                        let decoded = match self.projection {
                            Projection::Metadata => lines.as_ref().and_then(|l| l.metadata()),
                            Projection::Full => None,
                        };
                        let v = match decoded {
                            Some(v) => v.clone(),
                            None => match self.projection.decode(&object.json) {
                                Some(v) => Arc::new(v),
                                None => continue,
                            },
                        };
                        match initial.as_mut() {
                            Some(list) => list.push((v, object.json.clone())),
                            None => self.apply(kind, v, &object.json, object.resource_version),
                        }
                    }
                    WatchMessage::InitialEventsEnd(rev) => {
                        if let Some(list) = initial.take() {
                            self.replace(list, rev);
                            backoff = Duration::from_millis(50);
                        }
                    }
                    WatchMessage::Bookmark(rev) => {
                        if initial.is_none() {
                            self.set_rev(&mut self.cache.write(), rev);
                            self.publish_rev();
                        }
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.cancelled() => return,
            }
        }
    }
}

/// A handler's place on an informer; dropping it removes the handler
/// (a controller that stops, on losing its lease, stops hearing events).
pub struct Registration {
    informer: std::sync::Weak<Informer>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.informer.upgrade() {
            Arc::make_mut(&mut i.handlers.write()).retain(|(id, _)| *id != self.id);
        }
    }
}

impl std::fmt::Debug for Informer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("resource", &self.registry.resource.plural)
            .field("revision", &self.revision())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(ns: &str, name: &str, rv: &str) -> Arc<Value> {
        Arc::new(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": ns, "name": name, "resourceVersion": rv, "uid": format!("u-{name}")}
        }))
    }

    /// A packed or shared copy answers what a whole one does: the same
    /// objects, the replaced state on put, the index by namespace.
    #[test]
    fn a_packed_copy_reads_back_what_a_whole_one_keeps() {
        let by_ns: IndexFn = Arc::new(|o| vec![meta::namespace(o).to_string()]);
        let indexers = vec![(BY_NAMESPACE.to_string(), by_ns)];
        let mut copies = [Keep::Whole, Keep::Packed, Keep::Shared].map(|keep| Cache {
            keep,
            ..Cache::default()
        });
        // The object as the watch cache serves it: its managedFields are
        // not part of what a shared copy reads back.
        let put = |c: &mut Cache, o: Arc<Value>| {
            let mut served = (*o).clone();
            served["metadata"]["managedFields"] = json!([{"manager": "m"}]);
            let json = Bytes::from(serde_json::to_vec(&served).unwrap());
            c.put(&indexers, o, &json)
        };
        for c in &mut copies {
            assert!(put(c, obj("a", "x", "1")).is_none());
            assert!(put(c, obj("b", "y", "2")).is_none());
            let old = put(c, obj("a", "x", "3"));
            assert_eq!(old.as_deref(), Some(&*obj("a", "x", "1")));
            assert_eq!(c.get("a/x").as_deref(), Some(&*obj("a", "x", "3")));
            assert_eq!(c.values().len(), 2);
            assert_eq!(c.indices[BY_NAMESPACE]["b"].len(), 1);
            assert_eq!(
                c.remove(&indexers, "b/y").as_deref(),
                Some(&*obj("b", "y", "2"))
            );
            assert!(!c.indices[BY_NAMESPACE].contains_key("b"));
        }
        assert!(matches!(copies[0].objects["a/x"], Kept::Whole(_)));
        assert!(matches!(copies[1].objects["a/x"], Kept::Packed(_)));
        assert!(matches!(copies[2].objects["a/x"], Kept::Shared(_)));
    }
}
