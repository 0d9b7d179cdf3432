//! `/metrics` in Prometheus text format: upstream's request counter and
//! latency histogram with upstream's names and labels, and gauges fed by
//! other parts (storage object counts).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Arc;

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

/// upstream's `apiserver_request_duration_seconds` buckets.
const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The labels upstream attaches to request metrics (code only on the
/// counter), borrowed from the request they describe.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestLabels<'a> {
    pub component: &'a str,
    pub dry_run: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub scope: &'a str,
    pub subresource: &'a str,
    pub verb: &'a str,
    pub version: &'a str,
}

/// A series' labels as stored: owned, in [`RequestLabels`]' field order
/// (which is the order they are rendered in).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct StoredLabels([Box<str>; 8]);

/// Hashed as the borrowed labels are, as `Borrow` requires.
impl std::hash::Hash for StoredLabels {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state)
    }
}

/// Labels stored or borrowed, so the series map is searched with a
/// request's borrowed labels and nothing is copied once a series exists.
trait LabelKey {
    fn parts(&self) -> [&str; 8];
}

impl LabelKey for StoredLabels {
    fn parts(&self) -> [&str; 8] {
        self.0.each_ref().map(|s| &**s)
    }
}

impl LabelKey for RequestLabels<'_> {
    fn parts(&self) -> [&str; 8] {
        [
            self.component,
            self.dry_run,
            self.group,
            self.resource,
            self.scope,
            self.subresource,
            self.verb,
            self.version,
        ]
    }
}

impl<'a> std::borrow::Borrow<dyn LabelKey + 'a> for StoredLabels {
    fn borrow(&self) -> &(dyn LabelKey + 'a) {
        self
    }
}

impl PartialEq for dyn LabelKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn LabelKey + '_ {}

impl std::hash::Hash for dyn LabelKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state)
    }
}

impl PartialOrd for dyn LabelKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The same order as [`StoredLabels`]' derived one, as `Borrow` requires.
impl Ord for dyn LabelKey + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// One label set's series: the latency histogram and the request counter
/// per response code.
#[derive(Debug)]
struct Series {
    latency: Histogram,
    /// By code, sorted; a new code is added under the write lock once.
    codes: RwLock<Vec<(u16, AtomicU64)>>,
}

impl Series {
    fn count(&self, code: u16) {
        if let Some((_, n)) = self.codes.read().iter().find(|(c, _)| *c == code) {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut codes = self.codes.write();
        match codes.binary_search_by_key(&code, |(c, _)| *c) {
            Ok(i) => codes[i].1.fetch_add(1, Ordering::Relaxed),
            Err(i) => {
                codes.insert(i, (code, AtomicU64::new(1)));
                0
            }
        };
    }
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
/// request takes the read lock and counts with atomics. Hashed, not
/// ordered: every request finds its series, and a search of an ordered map
/// compares a dozen label sets of eight strings each; `/metrics` sorts.
#[derive(Debug, Default)]
struct Inner {
    series: RwLock<HashMap<StoredLabels, Series, foldhash::fast::FixedState>>,
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

fn write_labels(out: &mut String, l: &StoredLabels, code: Option<u16>) {
    out.push('{');
    if let Some(code) = code {
        let _ = write!(out, "code=\"{code}\",");
    }
    let names = [
        "component",
        "dry_run",
        "group",
        "resource",
        "scope",
        "subresource",
        "verb",
        "version",
    ];
    for (i, (name, value)) in names.iter().zip(l.parts()).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{name}=\"{}\"", escape(value));
    }
}

impl Metrics {
    pub fn observe_request(&self, labels: RequestLabels<'_>, code: u16, seconds: f64) {
        let key: &dyn LabelKey = &labels;
        if let Some(series) = self.inner.series.read().get(key) {
            series.count(code);
            series.latency.observe(seconds);
            return;
        }
        let mut all = self.inner.series.write();
        let series = all
            .entry(StoredLabels(labels.parts().map(Box::from)))
            .or_insert_with(|| Series {
                latency: Histogram::new(),
                codes: RwLock::new(Vec::new()),
            });
        series.count(code);
        series.latency.observe(seconds);
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
        let map = self.inner.series.read();
        let mut all: Vec<_> = map.iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (labels, series) in all.iter() {
            let h = &series.latency;
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
        for (labels, series) in all.iter() {
            for (code, n) in series.codes.read().iter() {
                out.push_str("apiserver_request_total");
                write_labels(&mut out, labels, Some(*code));
                let _ = writeln!(out, "}} {}", n.load(Ordering::Relaxed));
            }
        }
        drop(all);
        drop(map);
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
            verb: "GET",
            subresource: "/readyz",
            ..Default::default()
        };
        m.observe_request(l, 200, 0.001);
        m.observe_request(l, 200, 0.3);
        m.observe_request(l, 404, 0.3);
        m.observe_request(RequestLabels { verb: "LIST", ..l }, 200, 0.3);
        let text = m.render();
        assert!(text.contains("apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 2"), "{text}");
        assert!(text.contains("apiserver_request_total{code=\"404\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 1"), "{text}");
        assert!(text.contains("apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"LIST\",version=\"\"} 1"), "{text}");
        assert!(text.contains("apiserver_request_duration_seconds_count{component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 3"), "{text}");
        let get = "apiserver_request_duration_seconds_bucket{component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"";
        assert!(text.contains(&format!("{get},le=\"0.005\"}} 1")), "{text}");
        assert!(text.contains(&format!("{get},le=\"0.2\"}} 1")), "{text}");
        assert!(text.contains(&format!("{get},le=\"0.4\"}} 3")), "{text}");
    }
}
