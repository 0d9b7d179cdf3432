//! The watch cache (upstream's cacher): one storage watch per resource
//! feeds an in-memory copy of every object and a window of recent events.
//! Lists and watches are served from it, so a thousand watchers cost one
//! storage watch; consistent reads first wait until the cache has seen the
//! store's current revision.
//!
//! Objects are kept as the JSON clients receive (resourceVersion set), next
//! to the labels and fields selectors need, so reads write bytes and never
//! decode.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::backend::{prefix_end, EventKind, WatchItem};
use super::cache_watch::{channel, route, WatchSender};
pub use super::cache_watch::{json_watch_line, CacheWatch, WatchOptions, WatchStart};
use super::predicate::{decode_attrs, written};
pub use super::predicate::{AttrsFn, Filter, ObjectAttrs, ReadAttrs};
use super::rv::with_resource_version;
use super::store::{encode_continue, ListOptions, StorageError, Store};

/// Events always kept for watches that resume from an older resourceVersion.
const WINDOW: usize = 4096;
/// Events younger than this are kept beyond [`WINDOW`], up to
/// [`MAX_WINDOW`]: upstream's watch cache grows its capacity rather than
/// evict fresh events (`eventFreshDuration`), so a client that lists and
/// then watches through a burst of writes is not sent a 410.
const FRESH_EVENTS: Duration = Duration::from_secs(75);
/// upstream's largest watch cache capacity (`defaultUpperBoundCapacity`).
const MAX_WINDOW: usize = 100 * 1024;
/// Room for live events per watcher beyond its replay; a watcher that
/// falls this far behind is closed, as upstream closes slow watchers.
const LIVE_BUFFER: usize = 1024;
/// How long a read waits for the cache to reach a resourceVersion.
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);
/// How often a watcher that asked for bookmarks gets one when nothing
/// nearer is due (upstream's `bookmarkFrequency`).
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// A bookmark goes out this long before a watch's deadline, so a client
/// that re-watches on timeout resumes from a recent resourceVersion.
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);
/// How often due bookmarks are looked for (upstream's cacher timer).
const BOOKMARK_TICK: Duration = Duration::from_secs(1);
/// How long a not-older-than read waits for events before it asks storage
/// for progress, where progress reports are not reliable.
const EVENTS_FIRST: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct CachedObject {
    pub key: String,
    pub resource_version: i64,
    /// The object as clients receive it.
    pub json: Bytes,
    pub attrs: ObjectAttrs,
    /// Its protobuf message (no envelope), made on the first protobuf read
    /// and kept: lists in protobuf then cost what lists in JSON cost.
    pub protobuf: std::sync::OnceLock<Option<Bytes>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change as the cache saw it.
#[derive(Debug)]
pub struct CacheEvent {
    pub kind: EventType,
    /// For deletes, the last state with the deletion's resourceVersion.
    pub object: Arc<CachedObject>,
    pub prev: Option<Arc<CachedObject>>,
    pub resource_version: i64,
}

/// What a cache watcher receives.
#[derive(Debug, Clone)]
pub enum WatchMessage {
    /// `kind` may differ from the event's own when selectors turn a
    /// modification into an arrival or a departure.
    Event {
        kind: EventType,
        object: Arc<CachedObject>,
        /// The event's encoded lines, shared by the watchers it goes to
        /// (`None` for replays and initial state, which are one watcher's).
        lines: Option<Arc<EventLines>>,
    },
    Bookmark(i64),
    /// The bookmark that ends `sendInitialEvents`.
    InitialEventsEnd(i64),
}

/// The JSON watch lines of one event, one per type it can take (a
/// selector can turn a modification into an arrival or a departure), each
/// encoded by the first watcher that needs it and shared with the rest;
/// and, for a write, the object's metadata as the cache decoded it.
/// Only live watchers get these: they are not kept in the event window.
#[derive(Debug, Default)]
pub struct EventLines {
    lines: [std::sync::OnceLock<Bytes>; 3],
    metadata: Option<Arc<Value>>,
}

impl EventLines {
    /// The object's `apiVersion`, `kind` and `metadata` (without
    /// `managedFields`, with its resourceVersion), as a metadata informer
    /// keeps it; `None` for deletes.
    pub fn metadata(&self) -> Option<&Arc<Value>> {
        self.metadata.as_ref()
    }

    pub fn get_or_encode(&self, kind: EventType, encode: impl FnOnce() -> Bytes) -> Bytes {
        let slot = match kind {
            EventType::Added => 0,
            EventType::Modified => 1,
            EventType::Deleted => 2,
        };
        self.lines[slot].get_or_init(encode).clone()
    }
}

struct Watcher {
    tx: WatchSender,
    filter: Filter,
    deadline: Option<Instant>,
    /// When this watcher's next bookmark is due; `None` when it did not
    /// ask for bookmarks, or its last one before the deadline went out.
    next_bookmark: Option<Instant>,
    terminated: Arc<AtomicBool>,
    /// The revision the watch asked to start after: nothing at or before
    /// it is sent, bookmarks included.
    after: i64,
}

/// upstream's `cacheWatcher.nextBookmarkTime`: a minute from now, or just
/// before the deadline if that comes first; nothing once that has passed.
fn next_bookmark_time(now: Instant, deadline: Option<Instant>) -> Option<Instant> {
    let heartbeat = now + BOOKMARK_EVERY;
    let Some(deadline) = deadline else {
        return Some(heartbeat);
    };
    let before_deadline = deadline.checked_sub(BOOKMARK_BEFORE_DEADLINE)?;
    let next = heartbeat.min(before_deadline);
    (next >= now).then_some(next)
}

#[derive(Default)]
struct State {
    objects: BTreeMap<String, Arc<CachedObject>>,
    window: VecDeque<Arc<CacheEvent>>,
    /// When each event in `window` arrived (same order, same length).
    arrived: VecDeque<std::time::Instant>,
    /// Watches may resume from any resourceVersion at or after this one.
    oldest_rv: i64,
    rev: i64,
    /// The revision of the last storage event applied; `rev` may be ahead
    /// of it when storage reports progress.
    last_event_rev: i64,
    watchers: HashMap<u64, Watcher>,
}

pub struct Cacher {
    prefix: String,
    /// (group, resource) for metrics.
    resource: (String, String),
    /// Watchers closed for not keeping up.
    terminated_watchers: AtomicU64,
    store: Store,
    attrs: AttrsFn,
    state: RwLock<State>,
    rev: watch::Sender<i64>,
    ready: watch::Sender<bool>,
    progress: parking_lot::Mutex<Option<mpsc::Sender<()>>>,
    started: AtomicBool,
    next_watcher: AtomicU64,
    stop: CancellationToken,
    /// Off: every read goes to storage (see [`super::uncached`]).
    cached: bool,
}

/// A list served from the cache.
#[derive(Debug, Default)]
pub struct CacheList {
    pub items: Vec<Arc<CachedObject>>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

impl Cacher {
    /// Whether this cache holds the objects (not `--watch-cache=false`).
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// A cache of everything under `prefix` (ending with `/`). It starts
    /// filling on first use.
    pub fn new(
        prefix: String,
        resource: (String, String),
        store: Store,
        attrs: AttrsFn,
        stop: CancellationToken,
    ) -> Arc<Cacher> {
        Arc::new(Cacher::build(prefix, resource, store, attrs, stop, true))
    }

    /// The same reader with the cache off: every read goes to storage.
    pub fn without_cache(
        prefix: String,
        resource: (String, String),
        store: Store,
        attrs: AttrsFn,
        stop: CancellationToken,
    ) -> Arc<Cacher> {
        Arc::new(Cacher::build(prefix, resource, store, attrs, stop, false))
    }

    fn build(
        prefix: String,
        resource: (String, String),
        store: Store,
        attrs: AttrsFn,
        stop: CancellationToken,
        cached: bool,
    ) -> Cacher {
        Cacher {
            cached,
            prefix,
            resource,
            terminated_watchers: AtomicU64::new(0),
            store,
            attrs,
            state: RwLock::new(State::default()),
            rev: watch::channel(0).0,
            ready: watch::channel(false).0,
            progress: parking_lot::Mutex::new(None),
            started: AtomicBool::new(false),
            next_watcher: AtomicU64::new(1),
            stop,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Where reads are served from, as the request trace names it.
    pub fn read_from(&self) -> &'static str {
        if self.cached {
            "watch cache"
        } else {
            "storage (watch cache off)"
        }
    }

    /// Objects currently cached (for `apiserver_storage_objects`).
    pub fn len(&self) -> usize {
        self.state.read().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The revision of the last change to the cached objects, once the
    /// cache has reached `rv` (0: as it is); `None` with the cache off.
    /// What a caller derived from a list holds while this stays the same.
    pub async fn last_change(self: &Arc<Self>, rv: i64) -> Result<Option<i64>, StorageError> {
        if !self.cached {
            return Ok(None);
        }
        self.wait_ready().await?;
        if rv > 0 {
            self.wait_for(rv).await?;
        }
        Ok(Some(self.state.read().last_event_rev))
    }

    /// Whether any cached object's key starts with `prefix`, once the
    /// cache has reached `rv` (0: as it is); `None` with the cache off.
    pub async fn any_under(
        self: &Arc<Self>,
        prefix: &str,
        rv: i64,
    ) -> Result<Option<bool>, StorageError> {
        if !self.cached {
            return Ok(None);
        }
        self.wait_ready().await?;
        if rv > 0 {
            self.wait_for(rv).await?;
        }
        let state = self.state.read();
        let first = state.objects.range::<str, _>((
            std::ops::Bound::Included(prefix),
            std::ops::Bound::Unbounded,
        ));
        Ok(Some(first.take(1).any(|(k, _)| k.starts_with(prefix))))
    }

    fn ensure_started(self: &Arc<Self>) {
        if !self.started.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            tokio::spawn(async move { me.run().await });
        }
    }

    async fn wait_ready(self: &Arc<Self>) -> Result<(), StorageError> {
        if *self.ready.borrow() {
            return Ok(());
        }
        self.ensure_started();
        let mut rx = self.ready.subscribe();
        let waited = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|r| *r)).await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StorageError::Unavailable(format!(
                "the watch cache for {} is not ready",
                self.prefix
            ))),
        }
    }

    /// Waits until the cache has seen revision `rv`.
    async fn wait_for(self: &Arc<Self>, rv: i64) -> Result<(), StorageError> {
        if *self.rev.borrow() >= rv {
            return Ok(());
        }
        let mut rx = self.rev.subscribe();
        if *rx.borrow() >= rv {
            return Ok(());
        }
        if !self.consistent_from_cache() {
            // Where storage's progress reports can run ahead of its events
            // (etcd#15220), each one risks a relist that resets the event
            // window (410 for watches resuming from before it): give the
            // events a moment to arrive before asking.
            let waited = tokio::time::timeout(EVENTS_FIRST, rx.wait_for(|r| *r >= rv)).await;
            if matches!(waited, Ok(Ok(_))) {
                return Ok(());
            }
        }
        if let Some(p) = self.progress.lock().clone() {
            let _ = p.try_send(());
        }
        let reached = tokio::time::timeout(FRESHNESS_WAIT, rx.wait_for(|r| *r >= rv))
            .await
            .map(|r| r.is_ok());
        match reached {
            Ok(true) => Ok(()),
            _ => Err(StorageError::TooLargeResourceVersion {
                requested: rv,
                current: *self.rev.borrow(),
            }),
        }
    }

    /// Waits until the cache is as current as the store.
    async fn wait_consistent(self: &Arc<Self>) -> Result<(), StorageError> {
        let current = self
            .store
            .backend()
            .current_revision_of(&self.prefix)
            .await?;
        self.wait_for(current).await
    }

    /// Whether consistent reads can come from the cache (see
    /// [`super::backend::Backend::progress_is_reliable`]).
    fn consistent_from_cache(&self) -> bool {
        self.store.backend().progress_is_reliable()
    }

    /// An object read from storage for one answer. It is never matched
    /// against a selector again (a list from storage is filtered as it is
    /// read) nor kept in the cache, so its attributes are not decoded.
    fn from_storage(&self, o: super::store::Object) -> Arc<CachedObject> {
        let json = with_resource_version(&o.value, o.resource_version);
        Arc::new(CachedObject {
            key: o.key,
            resource_version: o.resource_version,
            json,
            attrs: ObjectAttrs::default(),
            protobuf: Default::default(),
        })
    }

    /// [`Cacher::get`] when it needs no waiting: the cache is ready and
    /// has already reached what the read asks for (storage's revision, as
    /// the backend knows it without a round trip, for a consistent read).
    /// `None`: take [`Cacher::get`].
    pub fn get_now(
        &self,
        key: &str,
        consistent: bool,
        not_older_than: i64,
    ) -> Option<Option<Arc<CachedObject>>> {
        if !self.cached || !*self.ready.borrow() {
            return None;
        }
        let needed = if consistent {
            if !self.consistent_from_cache() {
                return None;
            }
            self.store.backend().current_revision_now(&self.prefix)?
        } else {
            not_older_than
        };
        let state = self.state.read();
        (state.rev >= needed).then(|| state.objects.get(key).cloned())
    }

    /// One object: `consistent` as current as storage, else from the
    /// cache once it reached `not_older_than` (upstream's get with
    /// resourceVersion=N).
    pub async fn get(
        self: &Arc<Self>,
        key: &str,
        consistent: bool,
        not_older_than: i64,
    ) -> Result<Option<Arc<CachedObject>>, StorageError> {
        if !self.cached && not_older_than > 0 {
            let current = self
                .store
                .backend()
                .current_revision_of(&self.prefix)
                .await?;
            super::uncached::not_older_than(not_older_than, current)?;
        }
        if (consistent && !self.consistent_from_cache()) || !self.cached {
            return match self.store.get(key).await {
                Ok(o) => Ok(Some(self.from_storage(o))),
                Err(StorageError::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            };
        }
        self.wait_ready().await?;
        if consistent {
            self.wait_consistent().await?;
        } else if not_older_than > 0 {
            self.wait_for(not_older_than).await?;
        }
        Ok(self.state.read().objects.get(key).cloned())
    }

    /// A list at the cache's revision. `opts.resource_version` of `None`
    /// is a consistent read; `Some(n)` waits until the cache reached `n`.
    pub async fn list(
        self: &Arc<Self>,
        filter: &Filter,
        opts: &ListOptions,
    ) -> Result<CacheList, StorageError> {
        if !self.cached {
            let listed = self.list_from_storage(filter, opts).await?;
            if let Some(rv) = opts.resource_version {
                super::uncached::not_older_than(rv, listed.resource_version)?;
            }
            return Ok(listed);
        }
        if opts.resource_version.is_none() && !self.consistent_from_cache() {
            return self.list_from_storage(filter, opts).await;
        }
        self.wait_ready().await?;
        match opts.resource_version {
            None => self.wait_consistent().await?,
            Some(rv) if rv > 0 => self.wait_for(rv).await?,
            Some(_) => {}
        }
        let state = self.state.read();
        let start = filter
            .key_prefix
            .clone()
            .unwrap_or_else(|| self.prefix.clone());
        let end = prefix_end(&start);
        let mut out = CacheList {
            resource_version: state.rev,
            ..Default::default()
        };
        let limit = if opts.limit > 0 {
            opts.limit as usize
        } else {
            usize::MAX
        };
        let mut iter = state.objects.range(start.clone()..end);
        for (_, o) in iter.by_ref() {
            if filter.matches(o) {
                out.items.push(o.clone());
                if out.items.len() >= limit {
                    break;
                }
            }
        }
        if out.items.len() >= limit {
            let rest: Vec<&Arc<CachedObject>> = iter.map(|(_, o)| o).collect();
            if !rest.is_empty() {
                let last = out.items.last().map(|o| o.key.clone()).unwrap_or_default();
                // Relative to the listed range, as storage reads it back.
                let rel = format!(
                    "{}\u{0}",
                    last.strip_prefix(start.as_str()).unwrap_or(&last)
                );
                out.continue_token = Some(encode_continue(state.rev, &rel));
                if filter.is_unfiltered() {
                    out.remaining_item_count = Some(rest.len() as i64);
                }
            }
        }
        Ok(out)
    }

    /// A consistent list read from storage itself.
    async fn list_from_storage(
        self: &Arc<Self>,
        filter: &Filter,
        opts: &ListOptions,
    ) -> Result<CacheList, StorageError> {
        let f = filter.clone();
        let attrs = self.attrs.clone();
        let predicate: super::store::Predicate = Arc::new(move |raw: &[u8]| {
            let a = decode_attrs(&attrs, raw);
            f.label.matches(&a.labels) && f.field.matches(&a.fields)
        });
        let prefix = filter
            .key_prefix
            .clone()
            .unwrap_or_else(|| self.prefix.clone());
        let filtered = !filter.is_unfiltered() || filter.exact_key.is_some();
        let opts = ListOptions {
            predicate: filtered.then_some(predicate),
            ..opts.clone()
        };
        let res = self.store.list(&prefix, &opts).await?;
        Ok(CacheList {
            items: res
                .items
                .into_iter()
                .map(|o| self.from_storage(o))
                .collect(),
            resource_version: res.resource_version,
            continue_token: res.continue_token,
            remaining_item_count: res.remaining_item_count,
        })
    }

    pub async fn watch(self: &Arc<Self>, opts: WatchOptions) -> Result<CacheWatch, StorageError> {
        if !self.cached {
            return super::uncached::watch(&self.store, &self.prefix, self.attrs.clone(), opts)
                .await;
        }
        self.wait_ready().await?;
        match opts.start {
            WatchStart::Now { consistent: true } if !self.consistent_from_cache() => {
                // Best effort: the cache follows etcd closely; without
                // reliable progress it cannot prove it is current.
                let current = self
                    .store
                    .backend()
                    .current_revision_of(&self.prefix)
                    .await?;
                let mut rx = self.rev.subscribe();
                let _ = tokio::time::timeout(
                    Duration::from_millis(250),
                    rx.wait_for(|r| *r >= current),
                )
                .await;
            }
            WatchStart::Now { consistent: true } => self.wait_consistent().await?,
            // Initial events "not older than" rv wait for the cache to get
            // there, as upstream's waitUntilWatchCacheFreshAndForceAllEvents;
            // a plain watch from a revision still to come starts at once
            // and sends what comes after it.
            WatchStart::After(rv) if opts.send_initial_events => {
                let cur = *self.rev.borrow();
                if rv > cur {
                    self.wait_for(rv).await?;
                }
            }
            WatchStart::After(_) | WatchStart::Now { consistent: false } => {}
        }
        let mut state = self.state.write();
        let mut backlog: Vec<WatchMessage> = Vec::new();
        // Events at or before a requested revision are not sent (upstream's
        // cacheWatcher sends only what is newer than it asked for).
        let mut after = 0;
        match opts.start {
            WatchStart::After(rv) if !opts.send_initial_events => {
                after = rv;
                if rv < state.oldest_rv {
                    return Err(StorageError::Gone(format!(
                        "too old resource version: {rv} ({})",
                        state.oldest_rv
                    )));
                }
                // The window is in revision order and can hold 100,000
                // events: a list-then-watch skips what it has already
                // seen without reading it, under the lock every change waits for.
                let first = state.window.partition_point(|e| e.resource_version <= rv);
                for ev in state.window.range(first..) {
                    if let Some(msg) = route(ev, &opts.filter, None) {
                        backlog.push(msg);
                    }
                }
            }
            _ => {
                for o in state.objects.values() {
                    if opts.filter.matches(o) {
                        backlog.push(WatchMessage::Event {
                            kind: EventType::Added,
                            object: o.clone(),
                            lines: None,
                        });
                    }
                }
                if opts.send_initial_events {
                    backlog.push(WatchMessage::InitialEventsEnd(state.rev));
                }
            }
        }
        let terminated = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel(backlog.len() + LIVE_BUFFER, terminated.clone());
        for m in backlog {
            // Capacity was sized for the backlog; this cannot fail.
            let _ = tx.try_send(m);
        }
        let id = self.next_watcher.fetch_add(1, Ordering::Relaxed);
        state.watchers.insert(
            id,
            Watcher {
                tx,
                filter: opts.filter,
                deadline: opts.deadline,
                next_bookmark: opts
                    .bookmarks
                    .then(|| next_bookmark_time(Instant::now(), opts.deadline))
                    .flatten(),
                terminated,
                after,
            },
        );
        Ok(rx)
    }

    /// Watchers closed so far for not keeping up.
    pub fn terminated_watchers(&self) -> u64 {
        self.terminated_watchers.load(Ordering::Relaxed)
    }

    /// (group, resource) this cache holds.
    pub fn resource(&self) -> (&str, &str) {
        (&self.resource.0, &self.resource.1)
    }

    /// Number of live watchers (for tests and metrics).
    pub fn watcher_count(&self) -> usize {
        self.state.read().watchers.len()
    }

    async fn run(self: Arc<Self>) {
        let mut backoff = Duration::from_millis(100);
        loop {
            if self.stop.is_cancelled() {
                return;
            }
            match self.list_and_watch().await {
                Ok(()) => return,
                Err(e) => {
                    crate::warn_limited!("watch-cache-relist", prefix = %self.prefix, error = %e, "watch cache lost its storage watch; relisting");
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = self.stop.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    async fn list_and_watch(self: &Arc<Self>) -> Result<(), StorageError> {
        let list = self
            .store
            .list(&self.prefix, &ListOptions::default())
            .await?;
        let mut objects = BTreeMap::new();
        for o in list.items {
            let attrs = decode_attrs(&self.attrs, &o.value);
            let json = with_resource_version(&o.value, o.resource_version);
            objects.insert(
                o.key.clone(),
                Arc::new(CachedObject {
                    key: o.key,
                    resource_version: o.resource_version,
                    json,
                    attrs,
                    protobuf: Default::default(),
                }),
            );
        }
        let rev = list.resource_version;
        {
            let mut state = self.state.write();
            state.objects = objects;
            state.window.clear();
            state.arrived.clear();
            state.oldest_rv = rev;
            state.rev = rev;
            state.last_event_rev = rev;
            // Watchers of the old state may have missed events: close them;
            // clients re-watch from their last resourceVersion.
            state.watchers.clear();
        }
        self.rev.send_replace(rev);
        self.ready.send_replace(true);
        let mut w = self.store.backend().watch(&self.prefix, rev + 1).await?;
        *self.progress.lock() = Some(w.progress.clone());
        let mut bookmarks = tokio::time::interval(BOOKMARK_TICK);
        bookmarks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        bookmarks.tick().await;
        loop {
            let item = tokio::select! {
                _ = self.stop.cancelled() => return Ok(()),
                _ = bookmarks.tick() => {
                    self.send_bookmarks();
                    continue;
                }
                item = w.recv() => item,
            };
            match item {
                Some(Ok(WatchItem::Event(ev))) => {
                    if !self.apply(ev) {
                        // etcd before 3.4.31 can report progress past events
                        // it has not sent yet (etcd#15220). Reads may have
                        // been served as current without them: start over
                        // rather than drop them.
                        return Err(StorageError::Unavailable(
                            "storage sent an event older than the progress it reported".into(),
                        ));
                    }
                }
                Some(Ok(WatchItem::Progress(r))) => {
                    let mut state = self.state.write();
                    if r > state.rev {
                        state.rev = r;
                        drop(state);
                        self.rev.send_replace(r);
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Err(StorageError::Unavailable("storage watch ended".into())),
            }
        }
    }

    /// Bookmarks to the watchers that asked for them; also forgets the
    /// watchers whose clients are gone (an ended watch on a quiet resource
    /// would otherwise stay registered until a matching event arrived).
    fn send_bookmarks(&self) {
        let now = Instant::now();
        let mut state = self.state.write();
        state.watchers.retain(|_, w| !w.tx.is_closed());
        let rev = state.rev;
        for w in state.watchers.values_mut() {
            if w.next_bookmark.is_some_and(|due| due <= now) && rev > w.after {
                // A full buffer is left to the next event to judge.
                let _ = w.tx.try_send(WatchMessage::Bookmark(rev));
                w.next_bookmark = next_bookmark_time(now, w.deadline);
            }
        }
    }

    /// Applies one storage event; false when it arrives behind the progress
    /// storage reported, which leaves the cache inconsistent.
    fn apply(&self, ev: super::backend::Event) -> bool {
        let rv = ev.kv.mod_revision;
        let mut state = self.state.write();
        if rv <= state.last_event_rev {
            return true; // already applied
        }
        if rv <= state.rev {
            return false;
        }
        let prev = state.objects.get(&ev.kv.key).cloned();
        let mut metadata = None;
        let event = match ev.kind {
            EventKind::Put => {
                let (attrs, meta) = written(&self.attrs, &ev.kv.value, rv);
                metadata = meta;
                let json = with_resource_version(&ev.kv.value, rv);
                let object = Arc::new(CachedObject {
                    key: ev.kv.key.clone(),
                    resource_version: rv,
                    json,
                    attrs,
                    protobuf: Default::default(),
                });
                state.objects.insert(ev.kv.key.clone(), object.clone());
                let kind = if prev.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                CacheEvent {
                    kind,
                    object,
                    prev,
                    resource_version: rv,
                }
            }
            EventKind::Delete => {
                state.objects.remove(&ev.kv.key);
                // The deleted object's last state, carrying the deletion's revision.
                let (json, attrs) = match (&ev.prev, &prev) {
                    (Some(p), Some(c)) => (with_resource_version(&p.value, rv), c.attrs.clone()),
                    (Some(p), None) => (
                        with_resource_version(&p.value, rv),
                        decode_attrs(&self.attrs, &p.value),
                    ),
                    (None, Some(c)) => (c.json.clone(), c.attrs.clone()),
                    (None, None) => {
                        state.last_event_rev = rv;
                        state.rev = rv;
                        return true;
                    }
                };
                let object = Arc::new(CachedObject {
                    key: ev.kv.key.clone(),
                    resource_version: rv,
                    json,
                    attrs,
                    protobuf: Default::default(),
                });
                CacheEvent {
                    kind: EventType::Deleted,
                    object,
                    prev,
                    resource_version: rv,
                }
            }
        };
        let event = Arc::new(event);
        state.window.push_back(event.clone());
        let now = std::time::Instant::now();
        state.arrived.push_back(now);
        while state.window.len() > WINDOW {
            let fresh = state
                .arrived
                .front()
                .is_some_and(|t| now.duration_since(*t) < FRESH_EVENTS);
            if fresh && state.window.len() <= MAX_WINDOW {
                break;
            }
            state.arrived.pop_front();
            if let Some(old) = state.window.pop_front() {
                state.oldest_rv = old.resource_version;
            }
        }
        state.rev = rv;
        state.last_event_rev = rv;
        let mut dead = Vec::new();
        let lines = Arc::new(EventLines {
            metadata,
            ..Default::default()
        });
        for (id, w) in state.watchers.iter() {
            if rv <= w.after {
                continue;
            }
            if let Some(msg) = route(&event, &w.filter, Some(&lines)) {
                match w.tx.try_send(msg) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        // Too slow: upstream closes it rather than buffer
                        // without bound; the client re-watches from the
                        // last resourceVersion it saw.
                        w.terminated.store(true, Ordering::Release);
                        self.terminated_watchers.fetch_add(1, Ordering::Relaxed);
                        dead.push(*id);
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => dead.push(*id),
                }
            }
        }
        for id in dead {
            state.watchers.remove(&id);
        }
        drop(state);
        self.rev.send_replace(rv);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata handed to informers with a write is what they would
    /// decode from the object as served.
    #[test]
    fn a_writes_metadata_is_the_served_objects() {
        let stored = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "n", "uid": "u", "labels": {"a": "b"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "w"}],
                         "managedFields": [{"manager": "m"}]},
            "spec": {"nodeName": "x"}, "status": {"phase": "Running"},
        });
        let raw = serde_json::to_vec(&stored).unwrap();
        let attrs: AttrsFn = Arc::new(|_: &[u8]| Some(ObjectAttrs::default()));
        let (_, meta) = written(&attrs, &raw, 42);
        let served = with_resource_version(&raw, 42);
        let decoded = crate::api::partial_json::decode(&served, &["apiVersion", "kind"]);
        assert_eq!(meta.as_deref(), decoded.as_ref());
        assert_eq!(decoded.unwrap()["metadata"]["resourceVersion"], "42");
        assert!(written(&attrs, b"[1]", 1).1.is_none());
    }

    #[test]
    fn bookmarks_come_every_minute_and_just_before_the_deadline() {
        let now = Instant::now();
        let min = Duration::from_secs(60);
        // No deadline: a heartbeat a minute from now.
        assert_eq!(next_bookmark_time(now, None), Some(now + min));
        // A far deadline: still the heartbeat.
        let far = now + Duration::from_secs(1800);
        assert_eq!(next_bookmark_time(now, Some(far)), Some(now + min));
        // A near one: two seconds before it.
        let near = now + Duration::from_secs(10);
        assert_eq!(
            next_bookmark_time(now, Some(near)),
            Some(now + Duration::from_secs(8))
        );
        // Exactly at the pre-timeout moment it is still due.
        let edge = now + Duration::from_secs(2);
        assert_eq!(next_bookmark_time(now, Some(edge)), Some(now));
        // Past it: no more bookmarks for this watcher.
        let gone = now + Duration::from_secs(1);
        assert_eq!(next_bookmark_time(now, Some(gone)), None);
    }
}
