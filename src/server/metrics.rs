//! `/metrics` in Prometheus text format: upstream's request counter and
//! latency histogram with upstream's names and labels, and gauges fed by
//! other parts (storage object counts).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

/// upstream's `apiserver_request_duration_seconds` buckets.
const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The labels upstream attaches to request metrics (code only on the counter).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RequestLabels {
    pub component: &'static str,
    pub dry_run: String,
    pub group: String,
    pub resource: String,
    pub scope: &'static str,
    pub subresource: String,
    pub verb: String,
    pub version: String,
}

/// One label set's latency histogram, counted with atomics: a request
/// that finds its series under the read lock updates it without waiting.
#[derive(Debug)]
struct Histogram {
    /// Requests per bucket (not cumulative; `render` sums them); the last
    /// slot is for those slower than every bound.
    counts: Vec<AtomicU64>,
    sum_nanos: AtomicU64,
    count: AtomicU64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: (0..=DURATION_BUCKETS.len())
                .map(|_| AtomicU64::new(0))
                .collect(),
            sum_nanos: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    fn observe(&self, seconds: f64) {
        let i = DURATION_BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(DURATION_BUCKETS.len());
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos
            .fetch_add((seconds * 1e9) as u64, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }
}

/// Series are added under the write lock once per label set; every later
/// request takes the read lock and counts with atomics.
#[derive(Debug, Default)]
struct Inner {
    requests: RwLock<BTreeMap<(RequestLabels, u16), Arc<AtomicU64>>>,
    durations: RwLock<BTreeMap<RequestLabels, Arc<Histogram>>>,
    storage_objects: Mutex<BTreeMap<String, i64>>,
}

/// Appends more families to `/metrics` (work queues, ...), so parts
/// above the server report without the server knowing them.
pub type Collector = Arc<dyn Fn(&mut String) + Send + Sync>;

#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Inner>,
    collectors: Arc<Mutex<Vec<Collector>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn write_labels(out: &mut String, l: &RequestLabels, code: Option<u16>) {
    out.push('{');
    if let Some(code) = code {
        let _ = write!(out, "code=\"{code}\",");
    }
    let _ = write!(
        out,
        "component=\"{}\",dry_run=\"{}\",group=\"{}\",resource=\"{}\",scope=\"{}\",subresource=\"{}\",verb=\"{}\",version=\"{}\"",
        l.component,
        escape(&l.dry_run),
        escape(&l.group),
        escape(&l.resource),
        l.scope,
        escape(&l.subresource),
        escape(&l.verb),
        escape(&l.version)
    );
}

impl Metrics {
    pub fn observe_request(&self, labels: RequestLabels, code: u16, seconds: f64) {
        let key = (labels, code);
        let counter = self.inner.requests.read().get(&key).cloned();
        let counter = counter.unwrap_or_else(|| {
            self.inner
                .requests
                .write()
                .entry(key.clone())
                .or_default()
                .clone()
        });
        counter.fetch_add(1, Ordering::Relaxed);
        let labels = key.0;
        let h = self.inner.durations.read().get(&labels).cloned();
        let h = h.unwrap_or_else(|| {
            self.inner
                .durations
                .write()
                .entry(labels)
                .or_insert_with(|| Arc::new(Histogram::new()))
                .clone()
        });
        h.observe(seconds);
    }

    pub fn add_collector(&self, c: Collector) {
        self.collectors.lock().push(c);
    }

    /// `apiserver_storage_objects{resource=...}`.
    pub fn set_storage_objects(&self, resource: &str, count: i64) {
        self.inner
            .storage_objects
            .lock()
            .insert(resource.to_string(), count);
    }

    /// The last count of a resource's stored objects (by plural).
    pub fn storage_objects_of(&self, resource: &str) -> Option<i64> {
        self.inner.storage_objects.lock().get(resource).copied()
    }

    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str("# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.\n");
        out.push_str("# TYPE apiserver_request_duration_seconds histogram\n");
        for (labels, h) in self.inner.durations.read().iter() {
            let mut cumulative = 0;
            for (i, b) in DURATION_BUCKETS.iter().enumerate() {
                cumulative += h.counts[i].load(Ordering::Relaxed);
                out.push_str("apiserver_request_duration_seconds_bucket");
                write_labels(&mut out, labels, None);
                let _ = writeln!(out, ",le=\"{b}\"}} {cumulative}");
            }
            let count = h.count.load(Ordering::Relaxed);
            out.push_str("apiserver_request_duration_seconds_bucket");
            write_labels(&mut out, labels, None);
            let _ = writeln!(out, ",le=\"+Inf\"}} {count}");
            out.push_str("apiserver_request_duration_seconds_sum");
            write_labels(&mut out, labels, None);
            let sum = h.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
            let _ = writeln!(out, "}} {sum}");
            out.push_str("apiserver_request_duration_seconds_count");
            write_labels(&mut out, labels, None);
            let _ = writeln!(out, "}} {count}");
        }
        out.push_str("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        for ((labels, code), n) in self.inner.requests.read().iter() {
            out.push_str("apiserver_request_total");
            write_labels(&mut out, labels, Some(*code));
            let _ = writeln!(out, "}} {}", n.load(Ordering::Relaxed));
        }
        out.push_str("# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind.\n");
        out.push_str("# TYPE apiserver_storage_objects gauge\n");
        for (resource, n) in self.inner.storage_objects.lock().iter() {
            let _ = writeln!(
                out,
                "apiserver_storage_objects{{resource=\"{}\"}} {n}",
                escape(resource)
            );
        }
        for c in self.collectors.lock().iter() {
            c(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_buckets() {
        let m = Metrics::default();
        let l = RequestLabels {
            verb: "GET".into(),
            subresource: "/readyz".into(),
            ..Default::default()
        };
        m.observe_request(l.clone(), 200, 0.001);
        m.observe_request(l, 200, 0.3);
        let text = m.render();
        assert!(text.contains("apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 2"), "{text}");
        assert!(text.contains("le=\"0.005\"} 1"));
        assert!(text.contains("le=\"0.4\"} 2"));
    }
}
