//! The health checks of `/healthz`, `/livez` and `/readyz`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::controlplane::Health;
use crate::server::healthz::HealthCheck;
use crate::server::hooks::PostStartHooks;
use crate::storage::backend::Backend;

pub(super) fn health_checks(
    hooks: &PostStartHooks,
    boot_sequence: Vec<HealthCheck>,
    shutting_down: Arc<AtomicBool>,
    backend: Arc<dyn Backend>,
) -> Health {
    let etcd = HealthCheck::new("etcd", move || {
        let b = backend.clone();
        async move {
            match tokio::time::timeout(Duration::from_secs(2), b.current_revision()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("{} did not answer within 2s", b.name())),
            }
        }
    });
    let mut base = vec![
        HealthCheck::ping(),
        HealthCheck::new("log", || async { Ok(()) }),
        etcd,
    ];
    base.extend(hooks.checks());
    base.extend(boot_sequence);
    let mut readyz = base.clone();
    readyz.push(HealthCheck::new("shutdown", move || {
        let down = shutting_down.load(Ordering::Acquire);
        async move {
            if down {
                Err("process is shutting down".to_string())
            } else {
                Ok(())
            }
        }
    }));
    Health {
        healthz: Arc::new(base.clone()),
        livez: Arc::new(base),
        readyz: Arc::new(readyz),
    }
}
