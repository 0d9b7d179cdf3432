//! The watch caches of every resource, made on first use, and which
//! resources have one (`--watch-cache`, `--watch-cache-sizes`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

use super::cacher::{AttrsFn, Cacher};
use super::store::Store;

/// Keeps cachers, one per resource prefix, created on first use.
#[derive(Clone)]
pub struct CacherSet {
    store: Store,
    stop: CancellationToken,
    cachers: Arc<RwLock<HashMap<String, Arc<Cacher>>>>,
    policy: Arc<WatchCachePolicy>,
}

/// Which resources have a watch cache, as upstream's `--watch-cache`,
/// `--default-watch-cache-size` and `--watch-cache-sizes` decide it: any
/// size above zero is "cached" (the cache sizes itself), zero is "read
/// from storage".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchCachePolicy {
    pub enabled: bool,
    /// For resources `sizes` does not name.
    pub default_size: i64,
    /// (group, resource) to size.
    pub sizes: BTreeMap<(String, String), i64>,
}

impl Default for WatchCachePolicy {
    fn default() -> Self {
        WatchCachePolicy {
            enabled: true,
            default_size: 100,
            sizes: BTreeMap::new(),
        }
    }
}

impl WatchCachePolicy {
    pub fn caches(&self, group: &str, resource: &str) -> bool {
        let size = self
            .sizes
            .get(&(group.to_string(), resource.to_string()))
            .copied()
            .unwrap_or(self.default_size);
        self.enabled && size > 0
    }

    /// upstream's `ParseWatchCacheSizes`: `resource[.group]#size` each.
    pub fn parse_sizes(values: &[String]) -> Result<BTreeMap<(String, String), i64>, String> {
        let mut sizes = BTreeMap::new();
        for v in values {
            let tokens: Vec<&str> = v.split('#').collect();
            let [gr, size] = tokens[..] else {
                return Err(format!("invalid value of watch cache size: {v}"));
            };
            let size: i64 = size
                .parse()
                .map_err(|_| format!("invalid size of watch cache size: {v}"))?;
            if size < 0 {
                return Err(format!("watch cache size cannot be negative: {v}"));
            }
            let (resource, group) = gr.split_once('.').unwrap_or((gr, ""));
            sizes.insert((group.to_string(), resource.to_string()), size);
        }
        Ok(sizes)
    }
}

impl CacherSet {
    pub fn new(store: Store, stop: CancellationToken) -> Self {
        CacherSet {
            store,
            stop,
            cachers: Arc::default(),
            policy: Arc::default(),
        }
    }

    /// Which resources get a cache (set before any cacher is made).
    pub fn with_policy(mut self, policy: WatchCachePolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The cache of `prefix`, holding `resource` (group, plural).
    pub fn get(
        &self,
        prefix: &str,
        resource: (&str, &str),
        attrs: impl FnOnce() -> AttrsFn,
    ) -> Arc<Cacher> {
        if let Some(c) = self.cachers.read().get(prefix) {
            return c.clone();
        }
        let mut all = self.cachers.write();
        all.entry(prefix.to_string())
            .or_insert_with(|| {
                let make = if self.policy.caches(resource.0, resource.1) {
                    Cacher::new
                } else {
                    Cacher::without_cache
                };
                make(
                    prefix.to_string(),
                    (resource.0.to_string(), resource.1.to_string()),
                    self.store.clone(),
                    attrs(),
                    self.stop.child_token(),
                )
            })
            .clone()
    }

    /// `apiserver_terminated_watchers_total`, as upstream's cacher metrics
    /// write it: a series for each resource that has closed a watcher.
    pub fn render_metrics(&self, out: &mut String) {
        use std::fmt::Write as _;
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for c in self.cachers.read().values() {
            let n = c.terminated_watchers();
            if n > 0 {
                let (g, r) = c.resource();
                *counts.entry((g.to_string(), r.to_string())).or_default() += n;
            }
        }
        if counts.is_empty() {
            return;
        }
        out.push_str("# HELP apiserver_terminated_watchers_total [ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.\n# TYPE apiserver_terminated_watchers_total counter\n");
        for ((group, resource), n) in counts {
            let _ = writeln!(
                out,
                "apiserver_terminated_watchers_total{{group=\"{group}\",resource=\"{resource}\"}} {n}"
            );
        }
    }

    /// (prefix, object count) of every started cache.
    pub fn counts(&self) -> Vec<(String, usize)> {
        self.cachers
            .read()
            .iter()
            .map(|(p, c)| (p.clone(), c.len()))
            .collect()
    }
}
