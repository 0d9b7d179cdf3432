//! A watch on the embedded store: what is already committed, replayed in
//! chunks, then every commit as the writer announces it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use super::{internal, replay, Committed, Shared};
use crate::storage::backend::{BackendError, WatchItem};

/// How often a watch tells its reader, unasked, how far it has seen when
/// the writes it sees are all under other prefixes. Every commit reaches
/// every watch (one per cached resource, some seventy); telling each
/// reader of each commit woke seventy caches per write for nothing. A
/// reader that needs to be current asks (`WatchReceiver::progress`) and is
/// answered as soon as this watch has seen every commit made before it asked.
const QUIET_PROGRESS_EVERY: Duration = Duration::from_millis(10);

/// Feeds `tx` with the events under `prefix` from revision `from` on, and
/// with progress: unasked at most every `QUIET_PROGRESS_EVERY`, and in
/// answer to `progress_requests` once every commit made before the request
/// has been passed on. Ends when the reader goes, or with the error that
/// stopped it.
pub(super) async fn follow(
    shared: Arc<Shared>,
    prefix: String,
    from: i64,
    mut live_events: broadcast::Receiver<Arc<Committed>>,
    tx: mpsc::Sender<Result<WatchItem, BackendError>>,
    mut progress_requests: mpsc::Receiver<()>,
) {
    let mut next = from;
    // Replay what is already committed, in chunks.
    loop {
        let s = shared.clone();
        let p = prefix.clone();
        let start = next;
        let chunk = tokio::task::spawn_blocking(move || replay(&s, &p, start)).await;
        let (events, upto) = match chunk {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
            Err(e) => {
                let _ = tx.send(Err(internal(e))).await;
                return;
            }
        };
        for ev in events {
            if tx.send(Ok(WatchItem::Event(ev))).await.is_err() {
                return;
            }
        }
        if tx.send(Ok(WatchItem::Progress(upto))).await.is_err() {
            return;
        }
        next = upto + 1;
        if upto >= shared.current.load(Ordering::Acquire) {
            break;
        }
    }
    // Every commit up to `seen` has been passed on (its events sent).
    let mut seen = next - 1;
    // The last revision the reader was told of, and when.
    let mut told = seen;
    let mut told_at = tokio::time::Instant::now();
    // A reader's request not yet answered: the revision it needs.
    let mut asked: Option<i64> = None;
    loop {
        // A watcher that went away ends its task now, not at the next write.
        let received = tokio::select! {
            r = live_events.recv() => r,
            Some(()) = progress_requests.recv() => {
                // Commits made before the request may still be on
                // their way here: answer once they are seen.
                let target = shared.current.load(Ordering::Acquire);
                asked = Some(asked.map_or(target, |a| a.max(target)));
                if seen < target {
                    continue;
                }
                // Already seen: an empty commit, answered below.
                Ok(Arc::new(Committed { events: Vec::new(), revision: seen }))
            }
            _ = tx.closed() => return,
        };
        match received {
            Ok(batch) => {
                for ev in batch.events.iter() {
                    if ev.kv.mod_revision < next || !ev.kv.key.starts_with(&prefix) {
                        continue;
                    }
                    told = ev.kv.mod_revision;
                    told_at = tokio::time::Instant::now();
                    if tx.send(Ok(WatchItem::Event(ev.clone()))).await.is_err() {
                        return;
                    }
                }
                seen = seen.max(batch.revision);
                let owed =
                    asked.is_some_and(|a| seen >= a) || told_at.elapsed() >= QUIET_PROGRESS_EVERY;
                if seen >= next && told < seen && owed {
                    if tx.send(Ok(WatchItem::Progress(seen))).await.is_err() {
                        return;
                    }
                    told = seen;
                    told_at = tokio::time::Instant::now();
                }
                if asked.is_some_and(|a| seen >= a) {
                    asked = None;
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let _ = tx
                    .send(Err(BackendError::Unavailable(
                        "watch fell too far behind".into(),
                    )))
                    .await;
                return;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
