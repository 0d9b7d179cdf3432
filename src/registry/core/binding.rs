//! `bindings` and `pods/binding`: assigning a pod to a node, as
//! upstream's `BindingREST` and `assignPod`, as one compare-and-swap.

use serde_json::{json, Value};

use crate::api::ApiError;
use crate::authentication::UserInfo;
use crate::registry::{Registries, WriteOptions};

/// How often a bind reads the pod again after a concurrent write.
const BIND_ATTEMPTS: usize = 20;

/// Assigns the pod `body` names to its target node, once: a pod already
/// assigned, being deleted, or not the one a UID precondition names is a
/// 409. Answers the Status upstream's create of a binding returns.
pub async fn bind(
    registries: &Registries,
    namespace: &str,
    body: Value,
    user: &UserInfo,
) -> Result<Value, ApiError> {
    let opts = WriteOptions {
        user: user.clone(),
        ..Default::default()
    };
    let pod = body["metadata"]["name"].as_str().unwrap_or("").to_string();
    let node = body["target"]["name"].as_str().unwrap_or("").to_string();
    if node.is_empty() {
        let cause = crate::registry::validation::FieldError::required("target.name", "").to_cause();
        return Err(ApiError::invalid("", "Binding", &pod, vec![cause]));
    }
    let pods = registries
        .get("", "v1", "pods")
        .ok_or_else(ApiError::resource_not_found)?;
    // Read, check and write as one compare-and-swap: of two binds of
    // the same pod one wins and the other sees it assigned (upstream's
    // assignPod runs inside GuaranteedUpdate).
    let mut attempts = 0;
    loop {
        attempts += 1;
        let current = pods.get_object(namespace, &pod, None).await?;
        let mut cur: Value = serde_json::from_slice(&current).unwrap_or(json!({}));
        if crate::registry::meta::is_deleting(&cur) {
            return Err(ApiError::conflict(
                "",
                "pods/binding",
                &pod,
                &format!("pod {pod} is being deleted, cannot be assigned to a host"),
            ));
        }
        if let Some(existing) = cur["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            return Err(ApiError::conflict(
                "",
                "pods/binding",
                &pod,
                &format!(
                    "pod {pod} is already assigned to node {}",
                    crate::api::go_quote(existing)
                ),
            ));
        }
        // The binding subresource takes the node and the annotations
        // only; its UID precondition, when given, must name this pod.
        if let Some(uid) = body["metadata"]["uid"].as_str().filter(|u| !u.is_empty()) {
            if cur["metadata"]["uid"].as_str() != Some(uid) {
                return Err(ApiError::conflict(
                    "",
                    "pods",
                    &pod,
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        cur["metadata"]["uid"].as_str().unwrap_or("")
                    ),
                ));
            }
        }
        cur["spec"]["nodeName"] = json!(node);
        if let Some(ann) = body["metadata"]
            .get("annotations")
            .filter(|a| a.is_object())
        {
            cur["metadata"]["annotations"] = ann.clone();
        }
        // The read's resourceVersion rides along: a write in between
        // answers 409, and the pod is read again.
        match pods
            .update(namespace, &pod, cur, Some("binding"), &opts)
            .await
        {
            Ok(_) => break,
            // A write in between (the only 409 worth another read; a
            // webhook's 409 repeats the same way, so tries are bounded).
            Err(e) if e.code == 409 && attempts < BIND_ATTEMPTS => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}
