//! A watch on the watch cache, from the watcher's side: where it starts,
//! its end of the cache's channel, and what it sees of each event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::cacher::{CacheEvent, EventLines, EventType, Filter, WatchMessage};
use super::undelivered::WATCHES;

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

/// A watch's channel: the cache's end to send on, the watcher's to take
/// from. What is in it counts toward [`WATCHES`] until taken.
/// `terminated` is the cache's to set (see [`CacheWatch`]); a watch that
/// nothing cuts off passes a fresh one.
pub(crate) fn channel(capacity: usize, terminated: Arc<AtomicBool>) -> (WatchSender, CacheWatch) {
    let (tx, rx) = mpsc::channel(capacity);
    (
        WatchSender(tx),
        CacheWatch {
            events: rx,
            terminated,
        },
    )
}

/// The cache's end of a watch's channel.
#[derive(Debug)]
pub(crate) struct WatchSender(mpsc::Sender<WatchMessage>);

impl WatchSender {
    pub(crate) fn try_send(
        &self,
        msg: WatchMessage,
    ) -> Result<(), mpsc::error::TrySendError<WatchMessage>> {
        // Counted first: the watcher may take it before try_send returns.
        WATCHES.put(1);
        self.0.try_send(msg).inspect_err(|_| WATCHES.taken(1))
    }

    /// Waits for room (a watch that reads straight from storage).
    pub(crate) async fn send(
        &self,
        msg: WatchMessage,
    ) -> Result<(), mpsc::error::SendError<WatchMessage>> {
        WATCHES.put(1);
        self.0.send(msg).await.inspect_err(|_| WATCHES.taken(1))
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Done when the watcher has gone.
    pub(crate) async fn closed(&self) {
        self.0.closed().await
    }
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
        let got = self.events.poll_recv(cx);
        if let std::task::Poll::Ready(Some(_)) = &got {
            WATCHES.taken(1);
        }
        got
    }
}

impl Drop for CacheWatch {
    fn drop(&mut self) {
        // Closed first, so nothing arrives after the count of what is left.
        self.events.close();
        let mut left = 0;
        while self.events.try_recv().is_ok() {
            left += 1;
        }
        WATCHES.taken(left);
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
