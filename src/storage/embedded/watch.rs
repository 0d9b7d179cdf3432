//! Watches on the embedded store: what is already committed, replayed in
//! chunks, then the commits the writer routes to each watch ([`Hub`]).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{internal, replay, Committed, Shared};
use crate::storage::backend::{BackendError, WatchItem};

/// How often a watch hears, unasked, of commits that are all under other
/// prefixes. There is a watch per cached resource (some seventy); handing
/// each of them each commit woke seventy tasks per write for nothing. A
/// reader that needs to be current asks (`WatchReceiver::progress`) and
/// is answered as soon as its watch has been handed every commit made
/// before it asked.
const QUIET_PROGRESS_EVERY: Duration = Duration::from_millis(10);

/// Commits a watch may have waiting before it is cut off as too slow.
const ROUTE_CAPACITY: usize = 4096;

/// Where the writer hands each commit: to the watches with a key under
/// their prefix, to those that asked for progress, and to the rest at
/// most every [`QUIET_PROGRESS_EVERY`].
pub(super) struct Hub {
    routes: parking_lot::Mutex<Routes>,
    /// [`QUIET_PROGRESS_EVERY`], but for tests.
    quiet_every: Duration,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            routes: Default::default(),
            quiet_every: QUIET_PROGRESS_EVERY,
        }
    }
}

#[derive(Default)]
struct Routes {
    open: Vec<Route>,
    next_id: u64,
    /// Every commit up to this revision has been handed to the watches it
    /// concerns.
    published: i64,
}

struct Route {
    id: u64,
    prefix: String,
    tx: mpsc::Sender<Arc<Committed>>,
    /// Set when the watch fell too far behind and its route was dropped.
    lagged: Arc<AtomicBool>,
    last_sent: Instant,
    /// The watch asked for progress: the next commit goes to it.
    asked: bool,
}

/// A watch's end of its route.
pub(super) struct Subscription {
    id: u64,
    rx: mpsc::Receiver<Arc<Committed>>,
    lagged: Arc<AtomicBool>,
}

/// What a progress request finds.
enum Asked {
    /// Every commit made before the request has been handed over: this
    /// far, once the channel is drained.
    Published(i64),
    /// Some were not yet; the route now takes the next commit, whatever
    /// its keys.
    Waiting(i64),
}

impl Hub {
    /// A route for the commits under `prefix`, from the next one on.
    pub(super) fn subscribe(&self, prefix: &str) -> Subscription {
        let (tx, rx) = mpsc::channel(ROUTE_CAPACITY);
        let lagged = Arc::new(AtomicBool::new(false));
        let mut routes = self.routes.lock();
        let id = routes.next_id;
        routes.next_id += 1;
        routes.open.push(Route {
            id,
            prefix: prefix.to_string(),
            tx,
            lagged: lagged.clone(),
            last_sent: Instant::now(),
            asked: false,
        });
        Subscription { id, rx, lagged }
    }

    /// Hands a commit to the watches it concerns. Called by the writer,
    /// in revision order, before the commit's writes are acknowledged.
    pub(super) fn publish(&self, commit: Committed) {
        let commit = Arc::new(commit);
        let now = Instant::now();
        let mut routes = self.routes.lock();
        routes.open.retain_mut(|r| {
            if r.tx.is_closed() {
                return false;
            }
            let wanted = r.asked
                || now.duration_since(r.last_sent) >= self.quiet_every
                || commit
                    .events
                    .iter()
                    .any(|e| e.kv.key.starts_with(r.prefix.as_str()));
            if !wanted {
                return true;
            }
            match r.tx.try_send(commit.clone()) {
                Ok(()) => {
                    r.last_sent = now;
                    r.asked = false;
                    true
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    r.lagged.store(true, Ordering::Release);
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
        routes.published = commit.revision;
    }

    /// A progress request of route `id`: has every commit made so far
    /// (`current`, as the store counts them) been handed over?
    fn ask(&self, id: u64, current: &AtomicI64) -> Asked {
        let mut routes = self.routes.lock();
        // Read under the lock: a commit counted in `current` is either
        // published already or published after this, and then sees `asked`.
        let target = current.load(Ordering::Acquire);
        if routes.published >= target {
            return Asked::Published(routes.published);
        }
        if let Some(r) = routes.open.iter_mut().find(|r| r.id == id) {
            r.asked = true;
        }
        Asked::Waiting(target)
    }
}

/// Feeds `tx` with the events under `prefix` from revision `from` on, and
/// with progress: unasked at most every `QUIET_PROGRESS_EVERY`, and in
/// answer to `progress_requests` once every commit made before the request
/// has been passed on. Ends when the reader goes, or with the error that
/// stopped it.
pub(super) async fn follow(
    shared: Arc<Shared>,
    prefix: String,
    from: i64,
    sub: Subscription,
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
        // A watch from a revision still to come (as etcd allows) waits for
        // it: no progress below it, and nothing before it is passed on.
        if upto + 1 >= start && tx.send(Ok(WatchItem::Progress(upto))).await.is_err() {
            return;
        }
        next = (upto + 1).max(start);
        if upto >= shared.current.load(Ordering::Acquire) {
            break;
        }
    }
    let Subscription { id, mut rx, lagged } = sub;
    let mut w = Follower {
        prefix,
        next,
        seen: next - 1,
        told: next - 1,
        asked: None,
        tx,
    };
    loop {
        // A watcher that went away ends its task now, not at the next write.
        tokio::select! {
            r = rx.recv() => match r {
                Some(commit) => {
                    if w.pass_on(&commit).await.is_err() {
                        return;
                    }
                }
                None => {
                    if lagged.load(Ordering::Acquire) {
                        let _ = w
                            .tx
                            .send(Err(BackendError::Unavailable(
                                "watch fell too far behind".into(),
                            )))
                            .await;
                    }
                    return;
                }
            },
            Some(()) = progress_requests.recv() => {
                match shared.hub.ask(id, &shared.current) {
                    Asked::Published(upto) => {
                        // Everything up to `upto` that concerns this
                        // watch is in the channel: take it, then answer.
                        while let Ok(commit) = rx.try_recv() {
                            if w.pass_on(&commit).await.is_err() {
                                return;
                            }
                        }
                        w.seen = w.seen.max(upto);
                        if w.tell_progress().await.is_err() {
                            return;
                        }
                    }
                    Asked::Waiting(target) => {
                        w.asked = Some(w.asked.map_or(target, |a| a.max(target)));
                    }
                }
            }
            _ = w.tx.closed() => return,
        }
    }
}

/// A watch past its replay: what it has passed on and what it owes.
struct Follower {
    prefix: String,
    /// The first revision not replayed.
    next: i64,
    /// Every commit up to here has been passed on (its events sent).
    seen: i64,
    /// The last revision the reader was told of.
    told: i64,
    /// A reader's request not yet answered: the revision it needs.
    asked: Option<i64>,
    tx: mpsc::Sender<Result<WatchItem, BackendError>>,
}

/// The reader went away.
struct Gone;

impl Follower {
    /// Sends the commit's events under the prefix, and progress when the
    /// commit had none (the hub sends those only every
    /// `QUIET_PROGRESS_EVERY` or when asked) or a request is answered.
    async fn pass_on(&mut self, commit: &Committed) -> Result<(), Gone> {
        let mut sent = false;
        for ev in commit.events.iter() {
            if ev.kv.mod_revision < self.next || !ev.kv.key.starts_with(&self.prefix) {
                continue;
            }
            self.told = ev.kv.mod_revision;
            sent = true;
            self.tx
                .send(Ok(WatchItem::Event(ev.clone())))
                .await
                .map_err(|_| Gone)?;
        }
        self.seen = self.seen.max(commit.revision);
        let answered = self.asked.is_some_and(|a| self.seen >= a);
        if answered {
            self.asked = None;
        }
        if !sent || answered {
            self.tell_progress().await?;
        }
        Ok(())
    }

    async fn tell_progress(&mut self) -> Result<(), Gone> {
        if self.seen >= self.next && self.told < self.seen {
            self.tx
                .send(Ok(WatchItem::Progress(self.seen)))
                .await
                .map_err(|_| Gone)?;
            self.told = self.seen;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::backend::{Event, EventKind, KeyValue};

    /// A hub whose watches are never quiet long enough to hear of
    /// others' commits, so that what they get is only what routing gives.
    fn routing_only() -> Hub {
        Hub {
            quiet_every: Duration::from_secs(3600),
            ..Hub::default()
        }
    }

    fn commit(revision: i64, keys: &[&str]) -> Committed {
        Committed {
            events: keys
                .iter()
                .map(|k| Event {
                    kind: EventKind::Put,
                    kv: KeyValue {
                        key: k.to_string(),
                        value: bytes::Bytes::from_static(b"{}"),
                        create_revision: revision,
                        mod_revision: revision,
                        version: 1,
                        stale: false,
                    },
                    prev: None,
                })
                .collect(),
            revision,
        }
    }

    #[test]
    fn a_commit_goes_only_to_the_watches_under_whose_prefix_it_writes() {
        let hub = routing_only();
        let mut pods = hub.subscribe("/registry/pods/");
        let mut secrets = hub.subscribe("/registry/secrets/");
        hub.publish(commit(2, &["/registry/pods/ns/a"]));
        hub.publish(commit(
            3,
            &["/registry/pods/ns/b", "/registry/secrets/ns/s"],
        ));
        assert_eq!(pods.rx.try_recv().map(|c| c.revision).ok(), Some(2));
        assert_eq!(pods.rx.try_recv().map(|c| c.revision).ok(), Some(3));
        // The secrets watch was not woken for commit 2, only for the one
        // with its key.
        assert_eq!(secrets.rx.try_recv().map(|c| c.revision).ok(), Some(3));
        assert!(secrets.rx.try_recv().is_err());
    }

    #[test]
    fn a_quiet_watch_hears_of_other_commits_now_and_then() {
        let hub = Hub {
            quiet_every: Duration::from_millis(50),
            ..Hub::default()
        };
        let mut quiet = hub.subscribe("/registry/secrets/");
        std::thread::sleep(Duration::from_millis(60));
        let before = Instant::now();
        hub.publish(commit(2, &["/registry/pods/ns/a"]));
        hub.publish(commit(3, &["/registry/pods/ns/b"]));
        let took = before.elapsed();
        // The first after a quiet spell, for its revision; not the next,
        // which came less than a quiet spell after it.
        assert_eq!(quiet.rx.try_recv().map(|c| c.revision).ok(), Some(2));
        if took < Duration::from_millis(50) {
            assert!(quiet.rx.try_recv().is_err());
        }
    }

    #[test]
    fn a_watch_that_asked_gets_the_next_commit_whatever_its_keys() {
        let hub = routing_only();
        let current = AtomicI64::new(1);
        let mut quiet = hub.subscribe("/registry/secrets/");
        hub.publish(commit(1, &[]));
        // Nothing committed since: answered at once.
        assert!(matches!(hub.ask(quiet.id, &current), Asked::Published(1)));
        // A commit counted but not yet handed over: the watch waits for it.
        current.store(2, Ordering::Release);
        assert!(matches!(hub.ask(quiet.id, &current), Asked::Waiting(2)));
        while quiet.rx.try_recv().is_ok() {}
        hub.publish(commit(2, &["/registry/pods/ns/a"]));
        assert_eq!(quiet.rx.try_recv().map(|c| c.revision).ok(), Some(2));
    }

    #[test]
    fn a_watch_too_far_behind_is_cut_off_and_told_why() {
        let hub = routing_only();
        let mut slow = hub.subscribe("/registry/pods/");
        for rev in 0..=ROUTE_CAPACITY as i64 {
            hub.publish(commit(rev + 2, &["/registry/pods/ns/a"]));
        }
        assert!(slow.lagged.load(Ordering::Acquire));
        let mut got = 0;
        while slow.rx.try_recv().is_ok() {
            got += 1;
        }
        assert_eq!(got, ROUTE_CAPACITY);
        // The route is gone: the channel ends after what it held.
        assert!(matches!(
            slow.rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(hub.routes.lock().open.is_empty());
    }

    #[test]
    fn a_route_whose_watch_ended_is_dropped_at_the_next_commit() {
        let hub = routing_only();
        let gone = hub.subscribe("/registry/pods/");
        let _kept = hub.subscribe("/registry/secrets/");
        drop(gone);
        hub.publish(commit(2, &["/registry/secrets/ns/a"]));
        assert_eq!(hub.routes.lock().open.len(), 1);
    }
}
