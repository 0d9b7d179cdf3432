//! `componentstatuses` (deprecated upstream, still served): each
//! component's health, probed when asked, as upstream's componentstatus
//! REST does: the scheduler and controller-manager on their local healthz
//! ports, and the storage.

use std::time::Duration;

use serde_json::{json, Value};

use crate::storage::store::Store;

const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Components in the order upstream lists them, with their healthz URLs
/// (none for the storage, which is asked directly).
const COMPONENTS: &[(&str, Option<&str>)] = &[
    (
        "controller-manager",
        Some("https://127.0.0.1:10257/healthz"),
    ),
    ("scheduler", Some("https://127.0.0.1:10259/healthz")),
    ("etcd-0", None),
];

fn status(name: &str, healthy: bool, message: &str) -> Value {
    let mut condition =
        json!({"type": "Healthy", "status": if healthy { "True" } else { "False" }});
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name}, "conditions": [condition]})
}

/// upstream's HTTP prober: 2xx and 3xx are healthy; the body is the
/// message; a failed request is unhealthy with Go's error text.
async fn probe_http(url: &str) -> (bool, String) {
    let client = match crate::webhook::client(None, true, None, PROBE_TIMEOUT) {
        Ok(c) => c,
        Err(e) => return (false, e),
    };
    match client.get(url).send().await {
        Ok(resp) => {
            let ok = resp.status().is_success() || resp.status().is_redirection();
            (ok, resp.text().await.unwrap_or_default())
        }
        Err(e) if e.is_connect() => {
            let addr = url
                .trim_start_matches("https://")
                .split('/')
                .next()
                .unwrap_or("");
            (
                false,
                format!("Get \"{url}\": dial tcp {addr}: connect: connection refused"),
            )
        }
        Err(e) if e.is_timeout() => (
            false,
            format!("Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
        ),
        Err(e) => (false, format!("Get \"{url}\": {e}")),
    }
}

async fn probe(store: &Store, name: &str, url: Option<&str>) -> Value {
    let (healthy, message) = match url {
        Some(u) => probe_http(u).await,
        None => match store.backend().current_revision().await {
            Ok(_) => (true, r#"{"health":"true","reason":""}"#.to_string()),
            Err(e) => (false, e.to_string()),
        },
    };
    status(name, healthy, &message)
}

/// Every component, probed concurrently.
pub async fn list(store: &Store) -> Vec<Value> {
    futures::future::join_all(
        COMPONENTS
            .iter()
            .map(|(name, url)| probe(store, name, *url)),
    )
    .await
}

/// One component; `None` for a name upstream does not know.
pub async fn get(store: &Store, name: &str) -> Option<Value> {
    let (name, url) = COMPONENTS.iter().find(|(n, _)| *n == name)?;
    Some(probe(store, name, *url).await)
}
