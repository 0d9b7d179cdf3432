//! HTTP/2 writes gathered per connection before TLS sees them.
//!
//! A watch event reaching many watchers wakes one stream task per watcher.
//! Each stream hands its DATA frame to the connection, and the connection
//! task (woken next, from the runtime's LIFO slot) flushes it at once: one
//! TLS record, one encryption pass and one `write` per watcher. With 1,000
//! watchers on 32 connections that was 1,000 records per change, and most
//! of a fan-out's time.
//!
//! [`Coalesce`] keeps what HTTP/2 writes until it flushes. A flush that
//! carries only a little, and only DATA frames (a body streaming on, not
//! the start of a response), is held over to a later poll of the
//! connection: the flush answers done, the task asks to be polled again
//! (behind the tasks already woken), and meanwhile the other streams of
//! the connection woken by the same event add their frames. A poll that
//! finds more held than the last one holds over again (a few times at
//! most); one that finds nothing new sends everything at its first flush.
//! h2 flushes before it takes each further DATA frame, so holding "until
//! a later poll", not "one flush later", is what lets a connection gather
//! them ([`Polls`] counts the polls).
//!
//! The runtime does not run all the woken streams before the connection's
//! next turn: past a few hundred, they wait in its global queue, which it
//! looks at only when the local one runs dry. So a poll that finds nothing
//! new waits on, without asking to be polled, while some watch in the
//! process still has an event it has not taken
//! ([`crate::storage::undelivered`]): the last watch to take its event
//! wakes it, and so does h2 when one of its streams adds a frame. A watch
//! whose client reads slowly keeps that count up, so the wait ends when no
//! watch has taken an event for [`WAIT_FOR_WATCHES`], and after
//! [`MAX_WAIT_FOR_WATCHES`] in any case. Any other flush (response headers,
//! settings, pings, resets) goes out at once, so a request's answer never
//! waits; big writes (a list's body) pass straight through, uncopied.

use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio::time::{Duration, Instant, Sleep};

use crate::storage::undelivered::{Undelivered, WATCHES};

/// HTTP/2's frame header: 24-bit length, type, flags, stream id.
const FRAME_HEADER: usize = 9;
const DATA: u8 = 0;
/// A write this big goes through as it is, and so does what is held once it
/// reaches this much: a full TLS record's worth needs no company, and a big
/// body (a list) is not copied. (Holding 64 KiB before writing took a
/// fan-out's writes from about 115 to 54 per change but delayed the first
/// deliveries: the client, on the other core, starts later.)
const ENOUGH: usize = 16 * 1024;

/// The frames held and what they are.
#[derive(Debug, Default)]
struct Held {
    bytes: Vec<u8>,
    /// Where the next frame's header starts, from `bytes[0]`.
    next_frame: usize,
    /// Whether every frame started so far is a DATA frame.
    only_data: bool,
}

impl Held {
    fn add(&mut self, data: &[u8]) {
        if self.bytes.is_empty() {
            self.only_data = true;
        }
        self.bytes.extend_from_slice(data);
        while self.only_data && self.next_frame + FRAME_HEADER <= self.bytes.len() {
            let h = &self.bytes[self.next_frame..self.next_frame + FRAME_HEADER];
            let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            self.only_data = h[3] == DATA;
            self.next_frame += FRAME_HEADER + len;
        }
    }

    fn sent(&mut self, n: usize) {
        self.bytes.drain(..n);
        // Once partly sent, the boundaries no longer matter: everything
        // held goes out before anything is held again.
        self.next_frame = self.next_frame.saturating_sub(n);
    }
}

/// A flush of DATA frames held over to a later poll of the connection.
#[derive(Debug, Clone, Copy)]
struct HeldOver {
    /// The poll it was held over in: flushes in the same poll send nothing.
    poll: u64,
    /// How much was held then: held over again only if more came since.
    len: usize,
    times: u32,
}

/// Hold-overs of one flush at most: a bound on how long a frame waits for
/// company while streams keep adding.
const MAX_HOLD_OVERS: u32 = 8;

/// How long held frames wait for watches that still have events to take
/// when none of them takes one: what a slow reader elsewhere can add to a
/// delivery.
pub const WAIT_FOR_WATCHES: Duration = Duration::from_millis(1);
/// How long they wait at most while watches keep taking theirs (a fan-out
/// to a thousand watchers takes a few milliseconds).
pub const MAX_WAIT_FOR_WATCHES: Duration = Duration::from_millis(5);

/// A wait for watches that still have events to take.
#[derive(Debug, Clone, Copy)]
struct Wait {
    /// The epoch of the count it asked to be woken in.
    epoch: u64,
    began: Instant,
    /// Events taken by then, at its last look: whether watches progress.
    taken: u64,
}

/// How many times a connection's task has been polled: shared by the
/// connection's future ([`Polls::count`]) and its [`Coalesce`].
#[derive(Debug, Clone, Default)]
pub struct Polls(Arc<AtomicU64>);

impl Polls {
    fn now(&self) -> u64 {
        // One task polls both the counter's future and the transport.
        self.0.load(Ordering::Relaxed)
    }

    /// `fut`, with each of its polls counted here.
    pub fn count<F: Future>(&self, fut: F) -> Counted<F> {
        Counted {
            inner: Box::pin(fut),
            polls: self.clone(),
        }
    }
}

/// A future whose polls are counted (see [`Polls::count`]).
pub struct Counted<F> {
    inner: Pin<Box<F>>,
    polls: Polls,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.0.fetch_add(1, Ordering::Relaxed);
        self.inner.as_mut().poll(cx)
    }
}

/// An HTTP/2 connection's transport, holding writes until a flush (see the
/// module's documentation).
#[derive(Debug)]
pub struct Coalesce<T> {
    inner: T,
    held: Held,
    polls: Polls,
    held_over: Option<HeldOver>,
    watches: &'static Undelivered,
    /// How long to wait for them without progress ([`WAIT_FOR_WATCHES`]).
    wait: Duration,
    waiting: Option<Wait>,
    /// When to look again whether watches progress; made on the first wait.
    timer: Option<Pin<Box<Sleep>>>,
}

impl<T> Coalesce<T> {
    /// `polls` must count the polls of the task that writes through it.
    pub fn new(inner: T, polls: Polls) -> Self {
        Coalesce::waiting_on(inner, polls, &WATCHES, WAIT_FOR_WATCHES)
    }

    fn waiting_on(inner: T, polls: Polls, watches: &'static Undelivered, wait: Duration) -> Self {
        Coalesce {
            inner,
            held: Held::default(),
            polls,
            held_over: None,
            watches,
            wait,
            waiting: None,
            timer: None,
        }
    }

    /// Whether held frames wait on for watches still to take their events
    /// (see the module's documentation); if so, the task is woken when
    /// none has any left, or to look again when the wait may be over.
    fn wait_for_watches(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.watches.any() {
            return false;
        }
        let wait = match self.waiting {
            Some(w) => w,
            None => {
                let now = Instant::now();
                let w = Wait {
                    epoch: self.watches.epoch(),
                    began: now,
                    taken: self.watches.taken_total(),
                };
                self.arm(now + self.wait);
                self.watches.wake_when_none(cx.waker());
                self.waiting = Some(w);
                w
            }
        };
        let Some(timer) = self.timer.as_mut() else {
            return false;
        };
        if timer.as_mut().poll(cx).is_ready() {
            // Watches that keep taking their events are a fan-out still
            // under way: worth waiting for, up to a bound.
            let (now, taken) = (Instant::now(), self.watches.taken_total());
            if taken == wait.taken || now >= wait.began + MAX_WAIT_FOR_WATCHES {
                return false;
            }
            self.arm((now + self.wait).min(wait.began + MAX_WAIT_FOR_WATCHES));
            if let Some(t) = self.timer.as_mut() {
                // Registers this task with the new deadline.
                let _ = t.as_mut().poll(cx);
            }
            self.waiting = Some(Wait { taken, ..wait });
        }
        let epoch = self.watches.epoch();
        if epoch != wait.epoch {
            // The count reached zero since and rose again: ask anew.
            self.watches.wake_when_none(cx.waker());
            if let Some(w) = &mut self.waiting {
                w.epoch = epoch;
            }
        }
        true
    }

    fn arm(&mut self, deadline: Instant) {
        match &mut self.timer {
            Some(t) => t.as_mut().reset(deadline),
            none => *none = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
    }
}

impl<T: AsyncWrite + Unpin> Coalesce<T> {
    /// Writes out everything held.
    fn poll_send_held(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.held.bytes.is_empty() {
            let n = std::task::ready!(Pin::new(&mut self.inner).poll_write(cx, &self.held.bytes))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.held.sent(n);
        }
        self.held.next_frame = 0;
        self.held_over = None;
        self.waiting = None;
        Poll::Ready(Ok(()))
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Coalesce<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total >= ENOUGH || self.held.bytes.len() >= ENOUGH {
            std::task::ready!(self.poll_send_held(cx))?;
        }
        if total >= ENOUGH {
            return Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        }
        let mut n = 0;
        for b in bufs {
            self.held.add(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let small = !self.held.bytes.is_empty() && self.held.bytes.len() < ENOUGH;
        if self.held.only_data && small {
            let (now, len) = (self.polls.now(), self.held.bytes.len());
            let hold = match self.held_over {
                None => true,
                Some(h) if h.poll == now => return Poll::Ready(Ok(())),
                // Streams still added frames since the last hold-over:
                // more woken with them may be queued behind this task.
                Some(h) => h.len < len && h.times < MAX_HOLD_OVERS,
            };
            if hold {
                let times = self.held_over.map_or(1, |h| h.times + 1);
                self.held_over = Some(HeldOver {
                    poll: now,
                    len,
                    times,
                });
                // Polled again after the tasks already woken; sent then.
                cx.waker().wake_by_ref();
                return Poll::Ready(Ok(()));
            }
            if self.wait_for_watches(cx) {
                return Poll::Ready(Ok(()));
            }
        }
        std::task::ready!(self.poll_send_held(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_send_held(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            kind,
            0,
            0,
            0,
            0,
            1,
        ];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn frames_are_told_apart_across_writes() {
        let mut held = Held::default();
        let data = frame(DATA, b"hello");
        held.add(&data[..4]);
        assert!(held.only_data, "a DATA header cut in two");
        held.add(&data[4..]);
        held.add(&frame(DATA, b""));
        assert!(held.only_data);
        held.add(&frame(1, b"headers"));
        assert!(!held.only_data, "a HEADERS frame goes out at once");
        held.sent(held.bytes.len());
        held.add(&frame(DATA, b"x"));
        assert!(held.only_data, "what is held next is judged anew");
    }

    /// A waker that remembers being woken.
    struct Woken(std::sync::atomic::AtomicBool);

    impl std::task::Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// Flushes `w` once with a waker of its own: whether it was done, and
    /// whether it asked to be polled again.
    fn flush_once(w: &mut Coalesce<tokio::io::DuplexStream>) -> (bool, bool) {
        let woken = Arc::new(Woken(std::sync::atomic::AtomicBool::new(false)));
        let done = flush_with(w, &woken);
        (done, woken.0.load(Ordering::SeqCst))
    }

    /// Flushes `w` once with `woken`'s waker: whether it was done.
    fn flush_with(w: &mut Coalesce<tokio::io::DuplexStream>, woken: &Arc<Woken>) -> bool {
        let waker = std::task::Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        matches!(Pin::new(w).poll_flush(&mut cx), Poll::Ready(Ok(())))
    }

    /// A count of undelivered watch events of the test's own: the
    /// process's is shared with every other test.
    fn watches() -> &'static Undelivered {
        Box::leak(Box::new(Undelivered::new()))
    }

    /// What has reached the other end so far.
    async fn arrived(b: &mut tokio::io::DuplexStream) -> Vec<u8> {
        let mut got = vec![0u8; 1 << 20];
        match tokio::time::timeout(std::time::Duration::from_millis(50), b.read(&mut got)).await {
            Ok(Ok(n)) => got[..n].to_vec(),
            _ => Vec::new(),
        }
    }

    /// Everything written arrives, in order; DATA-only flushes are held
    /// over to the next poll of the connection (however many flushes come
    /// before it), anything else goes out at once.
    #[tokio::test]
    async fn held_writes_go_out_in_order_on_the_next_poll() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let polls = Polls::default();
        let mut w = Coalesce::waiting_on(a, polls.clone(), watches(), WAIT_FOR_WATCHES);
        let headers = frame(1, b"response headers");
        let body = frame(DATA, &[7u8; 4_000]);
        let big = frame(DATA, &[8u8; 40_000]);

        w.write_all(&headers).await.expect("write");
        assert_eq!(flush_once(&mut w), (true, false));
        assert_eq!(arrived(&mut b).await, headers, "headers go out at once");

        // One poll: three DATA frames, each followed by a flush (as h2
        // flushes before it takes the next one).
        polls.0.fetch_add(1, Ordering::Relaxed);
        w.write_all(&body).await.expect("write");
        assert_eq!(flush_once(&mut w), (true, true), "held over, polled again");
        for _ in 0..2 {
            w.write_all(&body).await.expect("write");
            assert_eq!(flush_once(&mut w), (true, false));
        }
        assert!(
            arrived(&mut b).await.is_empty(),
            "nothing sent in that poll"
        );
        // The next poll finds more than was held over: it holds over again.
        polls.0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(flush_once(&mut w), (true, true));
        assert!(arrived(&mut b).await.is_empty());
        // A poll that finds nothing new sends all three at its first flush.
        polls.0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(flush_once(&mut w), (true, false));
        assert_eq!(arrived(&mut b).await, [&body[..], &body, &body].concat());

        // Streams that keep adding hold a flush over a bounded number of times.
        let more = frame(DATA, b"more");
        let mut held_over = 0;
        loop {
            polls.0.fetch_add(1, Ordering::Relaxed);
            w.write_all(&more).await.expect("write");
            match flush_once(&mut w) {
                (true, true) => held_over += 1,
                (true, false) => break,
                (done, woken) => panic!("a flush that was not done (done: {done}, woken: {woken})"),
            }
        }
        assert_eq!(held_over, MAX_HOLD_OVERS);
        assert_eq!(
            arrived(&mut b).await.len(),
            (MAX_HOLD_OVERS as usize + 1) * more.len()
        );

        // A big write sends what is held before it, and itself, at once.
        polls.0.fetch_add(1, Ordering::Relaxed);
        w.write_all(&body).await.expect("write");
        w.write_all(&big).await.expect("write");
        assert_eq!(arrived(&mut b).await, [&body[..], &big].concat());
        // Small DATA after it is held over again; shutting down sends it.
        w.write_all(&body).await.expect("write");
        assert_eq!(flush_once(&mut w), (true, true));
        w.shutdown().await.expect("shutdown");
        let mut rest = Vec::new();
        b.read_to_end(&mut rest).await.expect("read");
        assert_eq!(rest, body);
    }

    /// What has reached the other end, without waiting (time is paused
    /// in the tests that use it: a timed read would move it).
    fn arrived_now(b: &mut tokio::io::DuplexStream) -> Vec<u8> {
        use futures::FutureExt as _;
        let mut got = vec![0u8; 1 << 20];
        match b.read(&mut got).now_or_never() {
            Some(Ok(n)) => got[..n].to_vec(),
            _ => Vec::new(),
        }
    }

    /// Holds `body` over in one poll, then looks again in the next: the
    /// waker of that look, which must not have asked to be polled.
    async fn hold_then_wait(
        w: &mut Coalesce<tokio::io::DuplexStream>,
        polls: &Polls,
        body: &[u8],
    ) -> Arc<Woken> {
        polls.0.fetch_add(1, Ordering::Relaxed);
        w.write_all(body).await.expect("write");
        assert_eq!(flush_once(w), (true, true), "held over first");
        polls.0.fetch_add(1, Ordering::Relaxed);
        let waiter = Arc::new(Woken(std::sync::atomic::AtomicBool::new(false)));
        assert!(flush_with(w, &waiter));
        assert!(
            !waiter.0.load(Ordering::SeqCst),
            "asked to be polled while watches still had events"
        );
        waiter
    }

    /// The next poll sends `body`, held until then, at its first flush.
    fn next_poll_sends(
        w: &mut Coalesce<tokio::io::DuplexStream>,
        polls: &Polls,
        b: &mut tokio::io::DuplexStream,
        body: &[u8],
        when: &str,
    ) {
        polls.0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(flush_once(w), (true, false), "held on {when}");
        assert_eq!(arrived_now(b), body, "not sent {when}");
    }

    /// While some watch has an event to take, a poll that finds nothing new
    /// keeps its frames without asking to be polled: the last watch to take
    /// its event wakes it; when none takes one for a while, the wait ends;
    /// while they keep taking theirs, it goes on, up to a bound.
    #[tokio::test(start_paused = true)]
    async fn held_frames_wait_for_watches_still_to_take_their_events() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let polls = Polls::default();
        let undelivered = watches();
        let mut w = Coalesce::waiting_on(a, polls.clone(), undelivered, WAIT_FOR_WATCHES);
        let body = frame(DATA, &[7u8; 400]);
        let step = WAIT_FOR_WATCHES / 4;

        // The last taker ends the wait.
        undelivered.put(1);
        let waiter = hold_then_wait(&mut w, &polls, &body).await;
        assert!(arrived_now(&mut b).is_empty(), "sent while waiting");
        undelivered.taken(1);
        assert!(
            waiter.0.load(Ordering::SeqCst),
            "not woken when the last event was taken"
        );
        next_poll_sends(&mut w, &polls, &mut b, &body, "once none was left");

        // A watch that takes nothing: the wait ends after WAIT_FOR_WATCHES.
        undelivered.put(1);
        let waiter = hold_then_wait(&mut w, &polls, &body).await;
        tokio::time::advance(WAIT_FOR_WATCHES - step).await;
        assert!(!waiter.0.load(Ordering::SeqCst), "woken before its time");
        tokio::time::advance(2 * step).await;
        assert!(
            waiter.0.load(Ordering::SeqCst),
            "the end of the wait did not wake the connection"
        );
        next_poll_sends(&mut w, &polls, &mut b, &body, "when the wait ended");
        undelivered.taken(1);

        // Watches that keep taking theirs: waited for, but not past the bound.
        undelivered.put(1_000);
        let began = tokio::time::Instant::now();
        let _ = hold_then_wait(&mut w, &polls, &body).await;
        let sent_after = loop {
            tokio::time::advance(step).await;
            undelivered.taken(1);
            polls.0.fetch_add(1, Ordering::Relaxed);
            assert!(flush_once(&mut w).0);
            if !arrived_now(&mut b).is_empty() {
                break began.elapsed();
            }
            assert!(began.elapsed() < 2 * MAX_WAIT_FOR_WATCHES, "never sent");
        };
        assert!(
            sent_after > 2 * WAIT_FOR_WATCHES,
            "progress did not extend the wait (sent after {:.2} ms)",
            sent_after.as_secs_f64() * 1000.0
        );
        // tokio's timers fire on whole milliseconds.
        assert!(
            sent_after <= MAX_WAIT_FOR_WATCHES + Duration::from_millis(1) + step,
            "waited past the bound (sent after {:.2} ms)",
            sent_after.as_secs_f64() * 1000.0
        );
    }

    /// A connection's task counts its polls through [`Polls::count`].
    #[tokio::test]
    async fn every_poll_of_the_counted_future_is_counted() {
        let polls = Polls::default();
        let mut left = 3;
        polls
            .count(std::future::poll_fn(|cx| {
                if left == 0 {
                    return Poll::Ready(());
                }
                left -= 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            }))
            .await;
        assert_eq!(polls.now(), 4);
    }
}
