//! A watch on the watch cache, from the watcher's side: where it starts,
//! its end of the cache's channel, and what it sees of each event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cacher::{CacheEvent, EventLines, EventType, Filter, WatchMessage};

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// rv unset or "0": the current state as ADDED events, then changes.
    /// `consistent` (rv unset) first waits for the latest revision.
    Now { consistent: bool },
    /// Changes after this resourceVersion.
    After(i64),
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    pub start: WatchStart,
    pub filter: Filter,
    pub send_initial_events: bool,
    pub bookmarks: bool,
    /// When the watch will end (its `timeoutSeconds`), for the bookmark
    /// sent just before it.
    pub deadline: Option<Instant>,
}

/// One watcher's end of the cache: its events, and word when the cache
/// closed it because its client fell too far behind.
pub struct CacheWatch {
    events: mpsc::Receiver<WatchMessage>,
    /// Set when the cache dropped this watcher for not keeping up
    /// (upstream counts these in `apiserver_terminated_watchers_total`):
    /// what it still holds is a stale backlog, and the watch ends rather
    /// than deliver it. The cache drops its sender at the same time, so a
    /// receiver waiting for more is woken.
    terminated: Arc<AtomicBool>,
}

impl CacheWatch {
    /// `terminated` is the cache's to set (see the field); a watch that
    /// nothing cuts off passes a fresh one.
    pub(crate) fn new(events: mpsc::Receiver<WatchMessage>, terminated: Arc<AtomicBool>) -> Self {
        CacheWatch { events, terminated }
    }

    /// The next event; `None` once the watch is closed or cut off.
    pub async fn recv(&mut self) -> Option<WatchMessage> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// [`CacheWatch::recv`] as a poll, for a stream that looks at its
    /// events before anything else (every change to a thousand watchers
    /// is a thousand of these).
    pub fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<WatchMessage>> {
        if self.terminated.load(Ordering::Acquire) {
            return std::task::Poll::Ready(None);
        }
        self.events.poll_recv(cx)
    }
}

/// What one watcher sees of an event, given its filter (upstream's
/// cacheWatcher.convertToWatchEvent).
pub(super) fn route(
    ev: &CacheEvent,
    filter: &Filter,
    lines: Option<&Arc<EventLines>>,
) -> Option<WatchMessage> {
    let cur = filter.matches(&ev.object);
    let old = ev.prev.as_ref().is_some_and(|p| filter.matches(p));
    let kind = match ev.kind {
        EventType::Deleted => (cur || old).then_some(EventType::Deleted)?,
        EventType::Added => cur.then_some(EventType::Added)?,
        EventType::Modified => match (old, cur) {
            (true, true) => EventType::Modified,
            (false, true) => EventType::Added,
            (true, false) => EventType::Deleted,
            (false, false) => return None,
        },
    };
    Some(WatchMessage::Event {
        kind,
        object: ev.object.clone(),
        lines: lines.cloned(),
    })
}

/// The watch line `{"type":...,"object":...}` around an encoded object,
/// as upstream streams it.
pub fn json_watch_line(event_type: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(event_type.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}
