//! How many watch messages sit in watchers' channels, not yet taken by
//! their watches, across the process; and a wait for that to reach zero.
//!
//! A change fanned out to a thousand watchers wakes a thousand stream
//! tasks, and the runtime runs them in turns, with the connections they
//! write to in between. A connection that gathers its streams' frames
//! before writing them (`server::coalesce`) cannot see which of its
//! streams are still queued; this count says whether any watch anywhere
//! still has something to take, and [`wake_when_none`] wakes it once none
//! has. A watch whose client reads slowly keeps the count up, so whoever
//! waits here must also give up after a while.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::Waker;

/// Wakers kept at most while the count stays above zero.
const MAX_WAITING: usize = 1024;

/// The count for every watch in the process: the watch cache's channels
/// put and take here.
pub static WATCHES: Undelivered = Undelivered::new();

#[derive(Debug)]
pub struct Undelivered {
    count: AtomicUsize,
    /// Counts the times `count` reached zero, so a waiter registers once
    /// per wait rather than once per look.
    emptied: AtomicU64,
    waiting: parking_lot::Mutex<Vec<Waker>>,
    /// Every message ever taken: whether watches make progress.
    taken: AtomicU64,
}

impl Undelivered {
    pub const fn new() -> Self {
        Undelivered {
            count: AtomicUsize::new(0),
            emptied: AtomicU64::new(0),
            waiting: parking_lot::Mutex::new(Vec::new()),
            taken: AtomicU64::new(0),
        }
    }

    /// Whether some watch has a message it has not taken yet.
    pub fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Messages taken so far, ever.
    pub fn taken_total(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// Which wait this is: changes each time the count reaches zero.
    pub fn epoch(&self) -> u64 {
        self.emptied.load(Ordering::Acquire)
    }

    /// Wakes `waker` once no watch has anything left to take: at once, when
    /// none has.
    pub fn wake_when_none(&self, waker: &Waker) {
        let mut waiting = self.waiting.lock();
        // Looked at under the lock the last taker wakes under: nothing
        // slips between the look and the registration.
        if !self.any() {
            drop(waiting);
            waker.wake_by_ref();
            return;
        }
        // A watch that never takes its events keeps the count from zero;
        // its waiters give up on their own timers, but their wakers would
        // pile up here. Woken early instead, they look again.
        let stale = if waiting.len() >= MAX_WAITING {
            std::mem::take(&mut *waiting)
        } else {
            Vec::new()
        };
        waiting.push(waker.clone());
        drop(waiting);
        stale.into_iter().for_each(Waker::wake);
    }

    /// `n` messages put into watchers' channels.
    pub fn put(&self, n: usize) {
        self.count.fetch_add(n, Ordering::AcqRel);
    }

    /// `n` messages taken out of them (or dropped with their channel).
    pub fn taken(&self, n: usize) {
        if n == 0 {
            return;
        }
        self.taken.fetch_add(n as u64, Ordering::AcqRel);
        if self.count.fetch_sub(n, Ordering::AcqRel) == n {
            self.emptied.fetch_add(1, Ordering::AcqRel);
            let woken = std::mem::take(&mut *self.waiting.lock());
            for w in woken {
                w.wake();
            }
        }
    }
}

impl Default for Undelivered {
    fn default() -> Self {
        Undelivered::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::task::Wake;

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_waiter_is_woken_when_the_last_message_is_taken() {
        let u = Undelivered::new();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        u.put(2);
        assert!(u.any());
        let before = u.epoch();
        u.wake_when_none(&waker);
        u.taken(1);
        assert!(
            !flag.0.load(Ordering::SeqCst),
            "woken with a message still untaken"
        );
        u.taken(1);
        assert!(
            flag.0.load(Ordering::SeqCst),
            "not woken when the last was taken"
        );
        assert!(u.epoch() > before);
        assert!(!u.any());
    }

    #[test]
    fn waiters_do_not_pile_up_while_a_watch_never_takes() {
        let u = Undelivered::new();
        u.put(1);
        let first = Arc::new(Flag(AtomicBool::new(false)));
        u.wake_when_none(&Waker::from(first.clone()));
        for _ in 1..MAX_WAITING {
            u.wake_when_none(&Waker::from(Arc::new(Flag(AtomicBool::new(false)))));
        }
        assert!(!first.0.load(Ordering::SeqCst));
        u.wake_when_none(&Waker::from(Arc::new(Flag(AtomicBool::new(false)))));
        assert!(first.0.load(Ordering::SeqCst), "the oldest were not woken");
        assert_eq!(u.waiting.lock().len(), 1);
    }

    #[test]
    fn a_waiter_with_nothing_undelivered_is_woken_at_once() {
        let u = Undelivered::new();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        u.wake_when_none(&Waker::from(flag.clone()));
        assert!(flag.0.load(Ordering::SeqCst));
    }
}
