//! `--audit-webhook-config-file`: audit events POSTed to a webhook as
//! audit.k8s.io/v1 EventLists, in upstream's batch mode (the default): a
//! batch goes when it holds `--audit-webhook-batch-max-size` events or its
//! first event is `--audit-webhook-batch-max-wait` old, off the request
//! path; a failed POST is retried with backoff from
//! `--audit-webhook-initial-backoff`, then the batch is dropped with a
//! warning, as upstream's does.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::clientcmd::{Remote, Selection};

/// The batch mode's settings.
#[derive(Debug, Clone)]
pub struct Batching {
    pub max_size: usize,
    pub max_wait: Duration,
    pub initial_backoff: Duration,
}

impl Default for Batching {
    /// kube-apiserver's defaults.
    fn default() -> Self {
        Batching {
            max_size: 400,
            max_wait: Duration::from_secs(30),
            initial_backoff: Duration::from_secs(10),
        }
    }
}

/// How many times a batch is sent before it is dropped.
const ATTEMPTS: u32 = 3;

/// Starts the sender; events written to the returned channel are batched.
pub async fn start(
    kubeconfig: &Path,
    batching: Batching,
) -> Result<mpsc::UnboundedSender<Value>, String> {
    let remote = Remote::connect(&Selection::file(kubeconfig))
        .await
        .map_err(|e| format!("--audit-webhook-config-file: {}", e.0))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut batch: Vec<Value> = Vec::new();
        loop {
            let next = if batch.is_empty() {
                rx.recv().await
            } else {
                match tokio::time::timeout(batching.max_wait, rx.recv()).await {
                    Ok(ev) => ev,
                    Err(_) => {
                        send(&remote, std::mem::take(&mut batch), &batching).await;
                        continue;
                    }
                }
            };
            let Some(ev) = next else {
                // The server stops: what is left goes now.
                if !batch.is_empty() {
                    send(&remote, batch, &batching).await;
                }
                return;
            };
            batch.push(ev);
            if batch.len() >= batching.max_size {
                send(&remote, std::mem::take(&mut batch), &batching).await;
            }
        }
    });
    Ok(tx)
}

async fn send(remote: &Remote, items: Vec<Value>, batching: &Batching) {
    let n = items.len();
    let list = json!({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": items});
    let mut wait = batching.initial_backoff;
    for attempt in 1..=ATTEMPTS {
        let mut req = remote.client.post(&remote.server).json(&list);
        if let Some(t) = &remote.token {
            req = req.bearer_auth(t);
        }
        match req.send().await {
            Ok(r) if r.status().is_success() => return,
            Ok(r) if attempt == ATTEMPTS || !r.status().is_server_error() => {
                crate::warn_limited!(
                    "audit-webhook",
                    status = r.status().as_u16(),
                    events = n,
                    "the audit webhook refused a batch; it is dropped"
                );
                return;
            }
            Err(e) if attempt == ATTEMPTS => {
                crate::warn_limited!("audit-webhook", error = %e, events = n, "the audit webhook cannot be reached; a batch is dropped");
                return;
            }
            _ => {
                tokio::time::sleep(wait).await;
                wait = wait.mul_f64(1.5);
            }
        }
    }
}
