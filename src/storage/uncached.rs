//! Reads with the watch cache off (`--watch-cache=false`, or a resource's
//! `--watch-cache-sizes` of 0), as upstream's etcd3 store serves them:
//! gets and lists read storage (a resourceVersion is a lower bound the
//! store must have reached), and each watch is its own storage watch that
//! starts with the current state as ADDED events unless it resumes from a
//! resourceVersion, which storage must still hold.

use std::sync::Arc;

use super::backend::{prefix_end, BackendError, Event, EventKind, RangeRequest, WatchItem};
use super::cache_watch::{channel, route, CacheWatch, WatchOptions, WatchStart};
use super::cacher::{CacheEvent, CachedObject, EventType, WatchMessage};
use super::predicate::{decode_attrs, AttrsFn};
use super::rv::with_resource_version;
use super::store::{ListOptions, StorageError, Store};

/// What an expired watch answers, as upstream's etcd3 watcher words it.
const EXPIRED_WATCH: &str = "The resourceVersion for the provided watch is too old.";
/// Events buffered for a watcher that reads slowly.
const BUFFER: usize = 256;

/// Refuses a read at `requested` when storage has not reached it.
pub(super) fn not_older_than(requested: i64, current: i64) -> Result<(), StorageError> {
    if requested > current {
        return Err(StorageError::TooLargeResourceVersion { requested, current });
    }
    Ok(())
}

fn object(key: String, rv: i64, value: &[u8], attrs: &AttrsFn) -> Arc<CachedObject> {
    Arc::new(CachedObject {
        key,
        resource_version: rv,
        json: with_resource_version(value, rv),
        attrs: decode_attrs(attrs, value),
        protobuf: Default::default(),
    })
}

/// One storage event as a cache event: a delete carries the last state
/// with the deletion's revision; `None` when storage gave nothing to show.
fn cache_event(ev: Event, attrs: &AttrsFn) -> Option<CacheEvent> {
    let rv = ev.kv.mod_revision;
    let prev = ev
        .prev
        .as_ref()
        .map(|p| object(p.key.clone(), p.mod_revision, &p.value, attrs));
    let (kind, object) = match ev.kind {
        EventKind::Put => {
            let kind = if ev.kv.create_revision == rv {
                EventType::Added
            } else {
                EventType::Modified
            };
            (kind, object(ev.kv.key.clone(), rv, &ev.kv.value, attrs))
        }
        EventKind::Delete => {
            let last = ev.prev.as_ref()?;
            (
                EventType::Deleted,
                object(ev.kv.key.clone(), rv, &last.value, attrs),
            )
        }
    };
    Some(CacheEvent {
        kind,
        object,
        prev,
        resource_version: rv,
    })
}

/// A watch of `prefix` straight from storage.
pub(super) async fn watch(
    store: &Store,
    prefix: &str,
    attrs: AttrsFn,
    opts: WatchOptions,
) -> Result<CacheWatch, StorageError> {
    let backend = store.backend().clone();
    let mut initial = Vec::new();
    // A revision to start after, unless the current state is sent first
    // (a watch from now, or initial events not older than a revision).
    let from = match opts.start {
        WatchStart::After(rv) if !opts.send_initial_events => {
            // Storage must still hold rv; a compacted one is a 410.
            let probe = RangeRequest {
                start: prefix.to_string(),
                end: prefix_end(prefix),
                revision: rv,
                limit: 1,
                skip_count: true,
            };
            match backend.range(probe).await {
                Err(BackendError::Compacted { .. }) => {
                    return Err(StorageError::Gone(EXPIRED_WATCH.into()))
                }
                // A revision storage has not reached yet is waited for.
                Err(BackendError::FutureRevision { .. }) | Ok(_) => {}
                Err(e) => return Err(e.into()),
            }
            rv
        }
        _ => {
            let list = store.list(prefix, &ListOptions::default()).await?;
            for o in list.items {
                let o = object(o.key, o.resource_version, &o.value, &attrs);
                if opts.filter.matches(&o) {
                    initial.push(WatchMessage::Event {
                        kind: EventType::Added,
                        object: o,
                        lines: None,
                    });
                }
            }
            if opts.send_initial_events {
                initial.push(WatchMessage::InitialEventsEnd(list.resource_version));
            }
            list.resource_version
        }
    };
    let mut w = match backend.watch(prefix, from + 1).await {
        Err(BackendError::Compacted { .. }) => {
            return Err(StorageError::Gone(EXPIRED_WATCH.into()))
        }
        other => other?,
    };
    let (tx, rx) = channel(initial.len() + BUFFER, Default::default());
    for m in initial {
        // Sized for the initial events: this cannot fail.
        let _ = tx.try_send(m);
    }
    let filter = opts.filter;
    tokio::spawn(async move {
        loop {
            let item = tokio::select! {
                _ = tx.closed() => return,
                item = w.recv() => item,
            };
            let msg = match item {
                Some(Ok(WatchItem::Event(ev))) => {
                    match cache_event(ev, &attrs).and_then(|ev| route(&ev, &filter, None)) {
                        Some(m) => m,
                        None => continue,
                    }
                }
                Some(Ok(WatchItem::Progress(_))) => continue,
                // Compaction or a lost connection ends the watch; the
                // client re-lists or resumes, as from an etcd3 watcher.
                Some(Err(_)) | None => return,
            };
            if tx.send(msg).await.is_err() {
                return;
            }
        }
    });
    Ok(rx)
}
