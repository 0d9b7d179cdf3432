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

pub use informer::{
    key_of, Event, Handler, IndexFn, Informer, Projection, Registration, BY_NAMESPACE,
};
pub use workqueue::{run_workers, QueueMetrics, WorkQueue};

use crate::registry::{ListParams, Registries};

type InformerKey = (String, String, String, Projection);

/// One server's informers (upstream's SharedInformerFactory): asking twice
/// for a resource gives the same informer, started on first use and
/// stopped with the server, or with [`Informers::forget`] when the
/// resource goes away (a CRD deleted).
#[derive(Clone)]
pub struct Informers {
    registries: Registries,
    stop: CancellationToken,
    /// (group, plural, field selector, projection) -> informer and its stop.
    by_resource: Arc<Mutex<HashMap<InformerKey, (Arc<Informer>, CancellationToken)>>>,
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
        self.get_selected(group, version, plural, "")
    }

    /// An informer of only the objects a field selector picks (e.g.
    /// `metadata.name=kube-root-ca.crt`), so a controller that cares about
    /// a few objects of a big resource does not copy them all.
    pub fn get_selected(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        field_selector: &str,
    ) -> Option<Arc<Informer>> {
        self.get_projected(group, version, plural, field_selector, Projection::Full)
    }

    /// The shared metadata-only informer of a resource (upstream's
    /// metadata informer factory), for controllers that read every object
    /// of every resource but only their metadata.
    pub fn get_metadata(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Informer>> {
        self.get_projected(group, version, plural, "", Projection::Metadata)
    }

    fn get_projected(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        field_selector: &str,
        projection: Projection,
    ) -> Option<Arc<Informer>> {
        let key = (
            group.to_string(),
            plural.to_string(),
            field_selector.to_string(),
            projection,
        );
        let mut all = self.by_resource.lock();
        if let Some((i, _)) = all.get(&key) {
            return Some(i.clone());
        }
        let registry = self.registries.get(group, version, plural)?;
        let params = ListParams {
            field_selector: (!field_selector.is_empty()).then(|| field_selector.to_string()),
            ..Default::default()
        };
        let informer = Informer::new(registry, params, projection);
        let stop = self.stop.child_token();
        tokio::spawn(informer.clone().run(stop.clone()));
        all.insert(key, (informer.clone(), stop));
        Some(informer)
    }

    /// Stops and drops the informer of a resource that is no longer served.
    pub fn forget(&self, group: &str, plural: &str) {
        self.by_resource.lock().retain(|(g, p, _, _), (_, stop)| {
            let gone = g == group && p == plural;
            if gone {
                stop.cancel();
            }
            !gone
        });
    }
}

/// Runs one controller until `stop`: waits until `synced` have their first
/// lists (upstream's WaitForCacheSync), then `workers` tasks reconcile the
/// keys of `queue`; on stop the queue is shut down and the workers end.
pub async fn run_controller<F, Fut>(
    queue: WorkQueue,
    synced: &[&Arc<Informer>],
    workers: usize,
    stop: CancellationToken,
    reconcile: F,
) where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    for i in synced {
        if !i.wait_synced(&stop).await {
            queue.shut_down();
            return;
        }
    }
    let running = tokio::spawn(run_workers(queue.clone(), workers, reconcile));
    stop.cancelled().await;
    queue.shut_down();
    let _ = running.await;
}

/// Wakes a level-triggered loop whenever any of some informers changes:
/// for controllers whose whole state is recomputed from a few small
/// resources (APIServices, one ConfigMap), where a queue of keys buys
/// nothing. Changes while the loop works are not lost: they leave a
/// wake-up behind.
pub struct Wakeup {
    notify: Arc<tokio::sync::Notify>,
    _handlers: Vec<Registration>,
}

impl Wakeup {
    pub fn on(informers: &[&Arc<Informer>]) -> Wakeup {
        let notify = Arc::new(tokio::sync::Notify::new());
        let handlers = informers
            .iter()
            .map(|i| {
                let n = notify.clone();
                i.add_handler(Arc::new(move |_| n.notify_one()))
            })
            .collect();
        Wakeup {
            notify,
            _handlers: handlers,
        }
    }

    /// Waits for the next change (at once if one came since the last wait).
    pub async fn changed(&self) {
        self.notify.notified().await
    }
}
