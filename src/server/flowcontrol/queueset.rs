//! One priority level's seats and queues (upstream's queueset): a request
//! takes its seats at once when they are free and nobody waits; otherwise
//! it queues in one of the queues its flow is dealt (shuffle sharding, so
//! one heavy flow fills a few queues, not all), and freed seats go to the
//! queue that has been served least (fair queuing by seats served, so each
//! active flow gets an equal share whatever its request rate).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;

/// How a level limits: upstream's `Exempt` and `Limited` with a
/// `LimitResponse` of `Reject` or `Queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Exempt,
    Reject {
        seats: u32,
    },
    Queue {
        seats: u32,
        queues: u32,
        hand_size: u32,
        queue_length_limit: u32,
    },
}

/// Why a request was not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// `Reject` level without a free seat.
    ConcurrencyLimit,
    /// Every queue of the request's hand is at its length limit.
    QueueFull,
    /// Waited its longest in a queue.
    TimedOut,
}

impl Rejected {
    /// The `reason` label of `apiserver_flowcontrol_rejected_requests_total`.
    pub fn reason(self) -> &'static str {
        match self {
            Rejected::ConcurrencyLimit => "concurrency-limit",
            Rejected::QueueFull => "queue-full",
            Rejected::TimedOut => "time-out",
        }
    }
}

struct Waiter {
    id: u64,
    seats: u32,
    go: oneshot::Sender<()>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    /// Seats served so far (its virtual time): the least served goes next.
    served: f64,
}

struct State {
    in_use: u32,
    executing: u32,
    queues: Vec<Queue>,
    next_id: u64,
}

pub struct QueueSet {
    limit: Limit,
    state: Mutex<State>,
}

/// Seats held while a request runs; freed (and handed on) on drop.
pub struct Permit {
    set: Arc<QueueSet>,
    seats: u32,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.set.release(self.seats);
    }
}

impl QueueSet {
    pub fn new(limit: Limit) -> Arc<QueueSet> {
        let queues = match limit {
            Limit::Queue { queues, .. } => queues.max(1) as usize,
            _ => 0,
        };
        Arc::new(QueueSet {
            limit,
            state: Mutex::new(State {
                in_use: 0,
                executing: 0,
                queues: (0..queues).map(|_| Queue::default()).collect(),
                next_id: 0,
            }),
        })
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// The level's seats (0 for exempt: unlimited).
    pub fn seats(&self) -> u32 {
        match self.limit {
            Limit::Exempt => 0,
            Limit::Reject { seats } | Limit::Queue { seats, .. } => seats,
        }
    }

    /// (requests waiting, requests executing, seats in use).
    pub fn load(&self) -> (usize, u32, u32) {
        let s = self.state.lock();
        let waiting = s.queues.iter().map(|q| q.waiting.len()).sum();
        (waiting, s.executing, s.in_use)
    }

    /// Seats for a request of `seats` width in flow `flow`, waiting at most
    /// `wait_limit` in a queue.
    pub async fn acquire(
        self: &Arc<Self>,
        flow: u64,
        seats: u32,
        wait_limit: Duration,
    ) -> Result<Permit, Rejected> {
        match self.enter(flow, seats) {
            Admission::Now(got) => got,
            Admission::Queued(q) => q.wait(wait_limit).await,
        }
    }

    /// Seats at once, a refusal, or a place in a queue: most requests
    /// find seats free and need no future to wait on.
    pub fn enter(self: &Arc<Self>, flow: u64, seats: u32) -> Admission {
        let limit = self.seats();
        // A request never needs more seats than the level has.
        let seats = seats.clamp(1, limit.max(1));
        let permit = |set: &Arc<QueueSet>| Permit {
            set: set.clone(),
            seats,
        };
        let (id, queue, rx) = {
            let mut s = self.state.lock();
            let nobody_waits = s.queues.iter().all(|q| q.waiting.is_empty());
            match self.limit {
                Limit::Exempt => {
                    s.executing += 1;
                    return Admission::Now(Ok(Permit {
                        set: self.clone(),
                        seats: 0,
                    }));
                }
                _ if nobody_waits && s.in_use + seats <= limit => {
                    s.in_use += seats;
                    s.executing += 1;
                    return Admission::Now(Ok(permit(self)));
                }
                Limit::Reject { .. } => return Admission::Now(Err(Rejected::ConcurrencyLimit)),
                Limit::Queue {
                    hand_size,
                    queue_length_limit,
                    ..
                } => {
                    let n = s.queues.len();
                    let hand = deal(flow, n, hand_size as usize);
                    // The shortest queue of the hand, by seats waiting.
                    let q = hand
                        .into_iter()
                        .min_by_key(|&i| s.queues[i].waiting.iter().map(|w| w.seats).sum::<u32>())
                        .unwrap_or(0);
                    if s.queues[q].waiting.len() >= queue_length_limit as usize {
                        return Admission::Now(Err(Rejected::QueueFull));
                    }
                    // A queue that was idle starts at the least-served
                    // active queue's mark: idling earns no credit.
                    if s.queues[q].waiting.is_empty() {
                        let floor = s
                            .queues
                            .iter()
                            .filter(|q| !q.waiting.is_empty())
                            .map(|q| q.served)
                            .fold(f64::INFINITY, f64::min);
                        if floor.is_finite() && s.queues[q].served < floor {
                            s.queues[q].served = floor;
                        }
                    }
                    let (tx, rx) = oneshot::channel();
                    s.next_id += 1;
                    let id = s.next_id;
                    s.queues[q].waiting.push_back(Waiter { id, seats, go: tx });
                    (id, q, rx)
                }
            }
        };
        Admission::Queued(Queued {
            set: self.clone(),
            id,
            queue,
            seats,
            rx,
        })
    }
}

/// What [`QueueSet::enter`] decided.
pub enum Admission {
    Now(Result<Permit, Rejected>),
    Queued(Queued),
}

/// A request's place in a queue, until it is dispatched or gives up.
pub struct Queued {
    set: Arc<QueueSet>,
    id: u64,
    queue: usize,
    seats: u32,
    rx: oneshot::Receiver<()>,
}

impl Queued {
    /// Waits at most `wait_limit` to be dispatched.
    pub async fn wait(mut self, wait_limit: Duration) -> Result<Permit, Rejected> {
        // Made only once dispatched: dropping a permit gives its seats back.
        let permit = |q: &Queued| Permit {
            set: q.set.clone(),
            seats: q.seats,
        };
        match tokio::time::timeout(wait_limit, &mut self.rx).await {
            Ok(Ok(())) => Ok(permit(&self)),
            _ => {
                let mut s = self.set.state.lock();
                let queue = &mut s.queues[self.queue];
                match queue.waiting.iter().position(|w| w.id == self.id) {
                    Some(i) => {
                        queue.waiting.remove(i);
                        Err(Rejected::TimedOut)
                    }
                    // Dispatched as the wait ended: the seats are ours.
                    None => {
                        drop(s);
                        Ok(permit(&self))
                    }
                }
            }
        }
    }
}

impl QueueSet {
    fn release(&self, seats: u32) {
        let mut s = self.state.lock();
        s.in_use = s.in_use.saturating_sub(seats);
        s.executing = s.executing.saturating_sub(1);
        let limit = self.seats();
        loop {
            let next = s
                .queues
                .iter()
                .enumerate()
                .filter(|(_, q)| !q.waiting.is_empty())
                .min_by(|a, b| a.1.served.total_cmp(&b.1.served))
                .map(|(i, _)| i);
            let Some(i) = next else { break };
            let head = s.queues[i].waiting.front().map_or(0, |w| w.seats);
            // The head waits for enough seats (no overtaking by narrower
            // requests, so a wide one is never starved).
            if s.in_use + head > limit {
                break;
            }
            let Some(w) = s.queues[i].waiting.pop_front() else {
                break;
            };
            s.queues[i].served += f64::from(w.seats);
            // A waiter that gave up is skipped; its seats stay free.
            if w.go.send(()).is_ok() {
                s.in_use += w.seats;
                s.executing += 1;
            }
        }
    }
}

/// Shuffle sharding: `hand` distinct queues of `n`, picked by the flow's
/// hash, as upstream's dealer deals them.
pub fn deal(hash: u64, n: usize, hand: usize) -> Vec<usize> {
    let hand = hand.clamp(1, n.max(1));
    let mut remaining: Vec<usize> = (0..n).collect();
    let mut h = hash;
    let mut out = Vec::with_capacity(hand);
    for i in 0..hand {
        if remaining.is_empty() {
            break;
        }
        let m = (n - i) as u64;
        let pick = (h % m) as usize;
        h /= m;
        out.push(remaining.remove(pick));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(seats: u32) -> Arc<QueueSet> {
        QueueSet::new(Limit::Queue {
            seats,
            queues: 8,
            hand_size: 2,
            queue_length_limit: 4,
        })
    }

    #[test]
    fn a_hand_is_distinct_queues() {
        for h in [0, 1, 7, u64::MAX, 123_456_789] {
            let hand = deal(h, 64, 6);
            let mut sorted = hand.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|&q| q < 64));
        }
    }

    #[tokio::test]
    async fn reject_levels_refuse_past_their_seats() {
        let set = QueueSet::new(Limit::Reject { seats: 2 });
        let a = set.acquire(1, 1, Duration::ZERO).await.expect("a");
        let _b = set.acquire(2, 1, Duration::ZERO).await.expect("b");
        assert_eq!(
            set.acquire(3, 1, Duration::ZERO).await.err(),
            Some(Rejected::ConcurrencyLimit)
        );
        drop(a);
        set.acquire(3, 1, Duration::ZERO).await.expect("freed");
    }

    #[tokio::test]
    async fn queued_requests_run_when_seats_free_and_time_out_otherwise() {
        let set = queued(1);
        let held = set.acquire(1, 1, Duration::ZERO).await.expect("first");
        let waiting = {
            let set = set.clone();
            tokio::spawn(async move { set.acquire(2, 1, Duration::from_secs(5)).await.is_ok() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(set.load().0, 1, "one waits");
        drop(held);
        assert!(waiting.await.expect("task"));
        let _held = set.acquire(1, 1, Duration::ZERO).await.expect("again");
        assert_eq!(
            set.acquire(2, 1, Duration::from_millis(20)).await.err(),
            Some(Rejected::TimedOut)
        );
        assert_eq!(set.load().0, 0, "a timed-out waiter leaves its queue");
    }

    #[tokio::test]
    async fn a_full_hand_is_refused() {
        let set = queued(1);
        let _held = set.acquire(1, 1, Duration::ZERO).await.expect("held");
        let mut waiters = Vec::new();
        // One flow: its hand of 2 queues, 4 each.
        for _ in 0..8 {
            let set = set.clone();
            waiters.push(tokio::spawn(async move {
                set.acquire(42, 1, Duration::from_secs(5)).await.map(|_| ())
            }));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(set.load().0, 8);
        assert_eq!(
            set.acquire(42, 1, Duration::from_secs(5)).await.err(),
            Some(Rejected::QueueFull)
        );
    }

    #[tokio::test]
    async fn a_quiet_flow_is_served_before_a_heavy_one_drains() {
        let set = queued(1);
        let held = set.acquire(1, 1, Duration::ZERO).await.expect("held");
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (flow, n) in [(100u64, 4), (200u64, 1)] {
            for i in 0..n {
                let (set, order) = (set.clone(), order.clone());
                tasks.push(tokio::spawn(async move {
                    let _p = set
                        .acquire(flow, 1, Duration::from_secs(5))
                        .await
                        .expect("served");
                    order.lock().push((flow, i));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        drop(held);
        for t in tasks {
            t.await.expect("task");
        }
        let order = order.lock().clone();
        let quiet = order
            .iter()
            .position(|(f, _)| *f == 200)
            .expect("quiet flow served");
        assert!(
            quiet <= 2,
            "the quiet flow waited behind the heavy one: {order:?}"
        );
    }
}
