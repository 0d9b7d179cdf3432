//! A rate-limited work queue of keys, as client-go's workqueue: a key is
//! queued once however often it is added before a worker takes it, is
//! never handed to two workers at once (added while being worked on, it
//! comes back after `done`), may be added after a delay, and on failure
//! comes back after an exponential per-key backoff bounded by an overall
//! token bucket (upstream's DefaultControllerRateLimiter).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// upstream's ItemExponentialFailureRateLimiter(5ms, 1000s) ...
const BASE_DELAY: Duration = Duration::from_millis(5);
const MAX_DELAY: Duration = Duration::from_secs(1000);
/// ... and BucketRateLimiter(10 qps, burst 100).
const BUCKET_QPS: f64 = 10.0;
const BUCKET_BURST: f64 = 100.0;

/// upstream's workqueue histograms: ExponentialBuckets(10e-9, 10, 10),
/// with their `le` labels as Go prints them.
const BUCKETS: [f64; 10] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0];
const BUCKET_LABELS: [&str; 10] = [
    "1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10",
];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }
}

#[derive(Default)]
struct Stats {
    adds: u64,
    retries: u64,
    queue_duration: Histogram,
    work_duration: Histogram,
}

struct Limiter {
    failures: HashMap<String, u32>,
    tokens: f64,
    last: Instant,
}

impl Limiter {
    /// When a failed key may come back: the later of its own backoff and
    /// the bucket's next token.
    fn when(&mut self, key: &str) -> Duration {
        let n = self.failures.entry(key.to_string()).or_insert(0);
        let exp = BASE_DELAY
            .checked_mul(1u32.checked_shl(*n).unwrap_or(u32::MAX))
            .unwrap_or(MAX_DELAY)
            .min(MAX_DELAY);
        *n = n.saturating_add(1);
        let now = Instant::now();
        let elapsed = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * BUCKET_QPS).min(BUCKET_BURST) - 1.0;
        let bucket = if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / BUCKET_QPS)
        };
        exp.max(bucket)
    }
}

struct State {
    queue: VecDeque<String>,
    /// Keys waiting to be worked on, with when they were added.
    dirty: HashMap<String, Instant>,
    /// Keys a worker holds, with when it took them.
    processing: HashMap<String, Instant>,
    shutting_down: bool,
    limiter: Limiter,
    stats: Stats,
}

struct Shared {
    name: String,
    state: Mutex<State>,
    ready: Notify,
    drained: Notify,
    /// Cancelled at shut-down: delayed adds still sleeping end with it.
    stopped: tokio_util::sync::CancellationToken,
}

/// A cloneable handle to one queue.
#[derive(Clone)]
pub struct WorkQueue {
    shared: Arc<Shared>,
}

impl WorkQueue {
    /// A queue named as upstream's controller names its own (the `name`
    /// label of the `workqueue_*` metrics), listed in `metrics`.
    pub fn new(name: &str, metrics: &QueueMetrics) -> WorkQueue {
        let shared = Arc::new(Shared {
            name: name.to_string(),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashMap::new(),
                processing: HashMap::new(),
                shutting_down: false,
                limiter: Limiter {
                    failures: HashMap::new(),
                    tokens: BUCKET_BURST,
                    last: Instant::now(),
                },
                stats: Stats::default(),
            }),
            ready: Notify::new(),
            drained: Notify::new(),
            stopped: tokio_util::sync::CancellationToken::new(),
        });
        metrics.queues.lock().push(Arc::downgrade(&shared));
        WorkQueue { shared }
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Queues `key` unless it is already waiting.
    pub fn add(&self, key: impl Into<String>) {
        let key = key.into();
        let mut st = self.shared.state.lock();
        if st.shutting_down || st.dirty.contains_key(&key) {
            return;
        }
        st.stats.adds += 1;
        st.dirty.insert(key.clone(), Instant::now());
        if st.processing.contains_key(&key) {
            // Comes back when the worker holding it is done.
            return;
        }
        st.queue.push_back(key);
        drop(st);
        self.shared.ready.notify_one();
    }

    /// Queues `key` after `delay`.
    pub fn add_after(&self, key: impl Into<String>, delay: Duration) {
        let key = key.into();
        if delay.is_zero() {
            return self.add(key);
        }
        if self.shared.state.lock().shutting_down {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let stopped = self.shared.stopped.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stopped.cancelled() => return,
            }
            if let Some(shared) = weak.upgrade() {
                WorkQueue { shared }.add(key);
            }
        });
    }

    /// Queues `key` again after its backoff: a reconcile failed.
    pub fn add_rate_limited(&self, key: impl Into<String>) {
        let key = key.into();
        let delay = {
            let mut st = self.shared.state.lock();
            st.stats.retries += 1;
            st.limiter.when(&key)
        };
        self.add_after(key, delay);
    }

    /// Clears `key`'s backoff: it was reconciled.
    pub fn forget(&self, key: &str) {
        self.shared.state.lock().limiter.failures.remove(key);
    }

    /// How many times `key` failed since it was last forgotten.
    pub fn requeues(&self, key: &str) -> u32 {
        self.shared
            .state
            .lock()
            .limiter
            .failures
            .get(key)
            .copied()
            .unwrap_or(0)
    }

    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next key to work on, or `None` once the queue is shut down and
    /// (for a draining shutdown) empty. Call [`WorkQueue::done`] after.
    pub async fn get(&self) -> Option<String> {
        loop {
            let notified = self.shared.ready.notified();
            {
                let mut st = self.shared.state.lock();
                if let Some(key) = st.queue.pop_front() {
                    let now = Instant::now();
                    if let Some(added) = st.dirty.remove(&key) {
                        st.stats
                            .queue_duration
                            .observe(now.duration_since(added).as_secs_f64());
                    }
                    st.processing.insert(key.clone(), now);
                    return Some(key);
                }
                if st.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// A worker finished `key`; if it was added meanwhile it is queued again.
    pub fn done(&self, key: &str) {
        let mut st = self.shared.state.lock();
        if let Some(took) = st.processing.remove(key) {
            st.stats.work_duration.observe(took.elapsed().as_secs_f64());
        }
        if st.dirty.contains_key(key) {
            st.queue.push_back(key.to_string());
            drop(st);
            self.shared.ready.notify_one();
        } else if st.processing.is_empty() {
            drop(st);
            self.shared.drained.notify_waiters();
        }
    }

    /// Stops handing out keys: workers' `get` returns `None` once the keys
    /// already queued are taken; this waits until those in progress are done.
    pub async fn shut_down_with_drain(&self) {
        self.shared.state.lock().shutting_down = true;
        self.shared.stopped.cancel();
        self.shared.ready.notify_waiters();
        loop {
            let drained = self.shared.drained.notified();
            {
                let st = self.shared.state.lock();
                if st.processing.is_empty() && st.queue.is_empty() {
                    return;
                }
            }
            self.shared.ready.notify_waiters();
            drained.await;
        }
    }

    /// Stops at once: keys still queued are dropped.
    pub fn shut_down(&self) {
        let mut st = self.shared.state.lock();
        st.shutting_down = true;
        st.queue.clear();
        st.dirty.clear();
        drop(st);
        self.shared.stopped.cancel();
        self.shared.ready.notify_waiters();
    }
}

/// One queue's figures: name, depth, adds, retries, queue and work
/// durations, unfinished work seconds, longest running processor seconds.
type Row = (String, usize, u64, u64, Histogram, Histogram, f64, f64);

/// The queues of one server, for `/metrics`.
#[derive(Default, Clone)]
pub struct QueueMetrics {
    queues: Arc<Mutex<Vec<Weak<Shared>>>>,
}

impl QueueMetrics {
    /// upstream's `workqueue_*` families, one series per queue name.
    pub fn render(&self, out: &mut String) {
        let mut queues = self.queues.lock();
        queues.retain(|q| q.strong_count() > 0);
        let live: Vec<Arc<Shared>> = queues.iter().filter_map(Weak::upgrade).collect();
        drop(queues);
        let mut rows: Vec<Row> = Vec::new();
        for q in &live {
            let st = q.state.lock();
            let now = Instant::now();
            let unfinished: f64 = st
                .processing
                .values()
                .map(|t| now.duration_since(*t).as_secs_f64())
                .sum();
            let longest = st
                .processing
                .values()
                .map(|t| now.duration_since(*t).as_secs_f64())
                .fold(0.0, f64::max);
            rows.push((
                q.name.clone(),
                st.queue.len(),
                st.stats.adds,
                st.stats.retries,
                st.stats.queue_duration.clone(),
                st.stats.work_duration.clone(),
                unfinished,
                longest,
            ));
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let family = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} [ALPHA] {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
        };
        let scalars: [(&str, &str, &str, fn(&Row) -> String); 5] = [
            ("workqueue_adds_total", "counter", "Total number of adds handled by workqueue", |r| r.2.to_string()),
            ("workqueue_depth", "gauge", "Current depth of workqueue", |r| r.1.to_string()),
            ("workqueue_retries_total", "counter", "Total number of retries handled by workqueue", |r| r.3.to_string()),
            (
                "workqueue_unfinished_work_seconds",
                "gauge",
                "How many seconds of work has done that is in progress and hasn't been observed by work_duration.",
                |r| r.6.to_string(),
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "gauge",
                "How many seconds has the longest running processor for workqueue been running.",
                |r| r.7.to_string(),
            ),
        ];
        for (metric, kind, help, value) in scalars {
            family(out, metric, kind, help);
            for r in &rows {
                let _ = writeln!(out, "{metric}{{name=\"{}\"}} {}", r.0, value(r));
            }
        }
        for (metric, help, pick) in [
            (
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested.",
                4usize,
            ),
            (
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                5,
            ),
        ] {
            family(out, metric, "histogram", help);
            for r in &rows {
                let h = if pick == 4 { &r.4 } else { &r.5 };
                for (i, le) in BUCKET_LABELS.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "{metric}_bucket{{name=\"{}\",le=\"{le}\"}} {}",
                        r.0, h.counts[i]
                    );
                }
                let _ = writeln!(
                    out,
                    "{metric}_bucket{{name=\"{}\",le=\"+Inf\"}} {}",
                    r.0, h.count
                );
                let _ = writeln!(out, "{metric}_sum{{name=\"{}\"}} {}", r.0, h.sum);
                let _ = writeln!(out, "{metric}_count{{name=\"{}\"}} {}", r.0, h.count);
            }
        }
    }
}

/// Runs `workers` tasks that take keys from `queue` and reconcile them:
/// `Ok` forgets the key's backoff, `Err` queues it again rate-limited.
/// Returns when the queue is shut down and drained.
pub async fn run_workers<F, Fut>(queue: WorkQueue, workers: usize, reconcile: F)
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let reconcile = Arc::new(reconcile);
    let mut tasks = Vec::new();
    for _ in 0..workers.max(1) {
        let (q, r) = (queue.clone(), reconcile.clone());
        tasks.push(tokio::spawn(async move {
            while let Some(key) = q.get().await {
                match r(key.clone()).await {
                    Ok(()) => q.forget(&key),
                    Err(e) => {
                        tracing::debug!(queue = q.name(), key = %key, error = %e, "reconcile failed; retrying with backoff");
                        q.add_rate_limited(key.clone());
                    }
                }
                q.done(&key);
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> WorkQueue {
        WorkQueue::new("test", &QueueMetrics::default())
    }

    #[tokio::test]
    async fn a_key_added_many_times_is_queued_once() {
        let q = queue();
        for _ in 0..5 {
            q.add("a");
        }
        q.add("b");
        assert_eq!(q.len(), 2);
        assert_eq!(q.get().await.as_deref(), Some("a"));
        assert_eq!(q.get().await.as_deref(), Some("b"));
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_key_added_while_worked_on_comes_back_after_done() {
        let q = queue();
        q.add("a");
        let k = q.get().await.expect("key");
        q.add("a");
        // Not handed to a second worker while the first holds it.
        assert!(q.is_empty());
        q.done(&k);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().await.as_deref(), Some("a"));
    }

    #[tokio::test]
    async fn backoff_doubles_per_failure_and_forget_resets_it() {
        let q = queue();
        let delays: Vec<Duration> = (0..4)
            .map(|_| q.shared.state.lock().limiter.when("k"))
            .collect();
        assert_eq!(delays, [5, 10, 20, 40].map(Duration::from_millis).to_vec());
        assert_eq!(q.requeues("k"), 4);
        q.forget("k");
        assert_eq!(q.requeues("k"), 0);
        assert_eq!(q.shared.state.lock().limiter.when("k"), BASE_DELAY);
    }

    #[tokio::test]
    async fn the_bucket_limits_all_keys_together_after_its_burst() {
        let q = queue();
        let mut last = Duration::ZERO;
        for i in 0..(BUCKET_BURST as usize + 5) {
            last = q.shared.state.lock().limiter.when(&format!("k{i}"));
        }
        // Five past the burst at 10 per second: about half a second.
        assert!(last >= Duration::from_millis(400), "{last:?}");
    }

    #[tokio::test]
    async fn delayed_adds_arrive_after_the_delay() {
        let q = queue();
        let start = Instant::now();
        q.add_after("a", Duration::from_millis(30));
        assert!(q.is_empty());
        assert_eq!(q.get().await.as_deref(), Some("a"));
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[tokio::test]
    async fn a_draining_shutdown_hands_out_what_is_queued_then_stops() {
        let q = queue();
        q.add("a");
        q.add("b");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let workers = tokio::spawn(run_workers(q.clone(), 2, move |k| {
            let s = s.clone();
            async move {
                s.lock().push(k);
                Ok(())
            }
        }));
        q.shut_down_with_drain().await;
        tokio::time::timeout(Duration::from_secs(5), workers)
            .await
            .expect("workers stop")
            .expect("join");
        let mut got = seen.lock().clone();
        got.sort();
        assert_eq!(got, ["a", "b"]);
        q.add("c");
        assert!(q.is_empty(), "nothing is queued after shutdown");
    }

    #[tokio::test]
    async fn metrics_name_each_queue() {
        let m = QueueMetrics::default();
        let q = WorkQueue::new("namespace", &m);
        q.add("x");
        let mut out = String::new();
        m.render(&mut out);
        assert!(
            out.contains("workqueue_adds_total{name=\"namespace\"} 1"),
            "{out}"
        );
        assert!(
            out.contains("workqueue_depth{name=\"namespace\"} 1"),
            "{out}"
        );
        assert!(
            out.contains("# TYPE workqueue_queue_duration_seconds histogram"),
            "{out}"
        );
    }
}
