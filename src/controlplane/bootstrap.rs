//! The bootstrap controller's first duty: the system namespaces exist.

use serde_json::json;

use crate::registry::{Registries, WriteOptions};

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates each system namespace that is missing (an existing one is fine).
pub async fn ensure_system_namespaces(registries: &Registries) -> Result<(), String> {
    let ns = registries
        .get("", "v1", "namespaces")
        .ok_or("namespaces are not served")?;
    for name in SYSTEM_NAMESPACES {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match ns.create("", body, &WriteOptions::default()).await {
            Ok(_) => tracing::debug!(namespace = name, "created system namespace"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(format!("creating namespace {name}: {e}")),
        }
    }
    Ok(())
}
