//! `/metrics` in Prometheus text format: upstream's request counter and
//! latency histogram with upstream's names and labels, and gauges fed by
//! other parts (storage object counts).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use parking_lot::Mutex;

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

#[derive(Debug, Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Inner {
    requests: BTreeMap<(RequestLabels, u16), u64>,
    durations: BTreeMap<RequestLabels, Histogram>,
    storage_objects: BTreeMap<String, i64>,
}

/// Appends more families to `/metrics` (work queues, ...), so parts
/// above the server report without the server knowing them.
pub type Collector = Arc<dyn Fn(&mut String) + Send + Sync>;

#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Mutex<Inner>>,
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
        let mut inner = self.inner.lock();
        // The label sets repeat: look up before cloning keys.
        let key = (labels, code);
        match inner.requests.get_mut(&key) {
            Some(n) => *n += 1,
            None => {
                inner.requests.insert(key.clone(), 1);
            }
        }
        let labels = key.0;
        if !inner.durations.contains_key(&labels) {
            inner.durations.insert(
                labels.clone(),
                Histogram {
                    counts: vec![0; DURATION_BUCKETS.len()],
                    ..Default::default()
                },
            );
        }
        let Some(h) = inner.durations.get_mut(&labels) else {
            return;
        };
        for (i, b) in DURATION_BUCKETS.iter().enumerate() {
            if seconds <= *b {
                h.counts[i] += 1;
            }
        }
        h.sum += seconds;
        h.count += 1;
    }

    pub fn add_collector(&self, c: Collector) {
        self.collectors.lock().push(c);
    }

    /// `apiserver_storage_objects{resource=...}`.
    pub fn set_storage_objects(&self, resource: &str, count: i64) {
        self.inner
            .lock()
            .storage_objects
            .insert(resource.to_string(), count);
    }

    /// The last count of a resource's stored objects (by plural).
    pub fn storage_objects_of(&self, resource: &str) -> Option<i64> {
        self.inner.lock().storage_objects.get(resource).copied()
    }

    pub fn render(&self) -> String {
        let inner = self.inner.lock();
        let mut out = String::with_capacity(4096);
        out.push_str("# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.\n");
        out.push_str("# TYPE apiserver_request_duration_seconds histogram\n");
        for (labels, h) in &inner.durations {
            for (i, b) in DURATION_BUCKETS.iter().enumerate() {
                out.push_str("apiserver_request_duration_seconds_bucket");
                write_labels(&mut out, labels, None);
                let _ = writeln!(out, ",le=\"{b}\"}} {}", h.counts[i]);
            }
            out.push_str("apiserver_request_duration_seconds_bucket");
            write_labels(&mut out, labels, None);
            let _ = writeln!(out, ",le=\"+Inf\"}} {}", h.count);
            out.push_str("apiserver_request_duration_seconds_sum");
            write_labels(&mut out, labels, None);
            let _ = writeln!(out, "}} {}", h.sum);
            out.push_str("apiserver_request_duration_seconds_count");
            write_labels(&mut out, labels, None);
            let _ = writeln!(out, "}} {}", h.count);
        }
        out.push_str("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        for ((labels, code), n) in &inner.requests {
            out.push_str("apiserver_request_total");
            write_labels(&mut out, labels, Some(*code));
            let _ = writeln!(out, "}} {n}");
        }
        out.push_str("# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind.\n");
        out.push_str("# TYPE apiserver_storage_objects gauge\n");
        for (resource, n) in &inner.storage_objects {
            let _ = writeln!(
                out,
                "apiserver_storage_objects{{resource=\"{}\"}} {n}",
                escape(resource)
            );
        }
        drop(inner);
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
