//! The machinery controllers are written on, as client-go shapes it:
//! shared informers (one local, indexed copy per resource, fed from the
//! watch cache in process) and rate-limited work queues. A controller adds
//! handlers that enqueue keys and runs `reconcile(key)` workers; nothing
//! polls.

pub mod informer;
pub mod workqueue;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

pub use informer::{key_of, Event, Handler, IndexFn, Informer, BY_NAMESPACE};
pub use workqueue::{run_workers, QueueMetrics, WorkQueue};

use crate::registry::Registries;

/// One server's informers (upstream's SharedInformerFactory): asking twice
/// for a resource gives the same informer, started on first use and
/// stopped with the server, or with [`Informers::forget`] when the
/// resource goes away (a CRD deleted).
#[derive(Clone)]
pub struct Informers {
    registries: Registries,
    stop: CancellationToken,
    by_resource: Arc<Mutex<HashMap<(String, String), (Arc<Informer>, CancellationToken)>>>,
    queues: QueueMetrics,
}

impl Informers {
    pub fn new(registries: Registries, stop: CancellationToken) -> Informers {
        Informers {
            registries,
            stop,
            by_resource: Arc::default(),
            queues: QueueMetrics::default(),
        }
    }

    pub fn registries(&self) -> &Registries {
        &self.registries
    }

    /// The work queues' metrics, for `/metrics`.
    pub fn queue_metrics(&self) -> &QueueMetrics {
        &self.queues
    }

    /// A new work queue whose metrics this server reports.
    pub fn queue(&self, name: &str) -> WorkQueue {
        WorkQueue::new(name, &self.queues)
    }

    /// The shared informer of a resource (any served version of it reads
    /// the same stored objects; the one asked for first is used), or
    /// `None` when it is not served.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Informer>> {
        let key = (group.to_string(), plural.to_string());
        let mut all = self.by_resource.lock();
        if let Some((i, _)) = all.get(&key) {
            return Some(i.clone());
        }
        let registry = self.registries.get(group, version, plural)?;
        let informer = Informer::new(registry);
        let stop = self.stop.child_token();
        tokio::spawn(informer.clone().run(stop.clone()));
        all.insert(key, (informer.clone(), stop));
        Some(informer)
    }

    /// Stops and drops the informer of a resource that is no longer served.
    pub fn forget(&self, group: &str, plural: &str) {
        if let Some((_, stop)) = self
            .by_resource
            .lock()
            .remove(&(group.to_string(), plural.to_string()))
        {
            stop.cancel();
        }
    }
}
