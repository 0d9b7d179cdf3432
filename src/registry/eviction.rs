//! `pods/eviction` (upstream's pkg/registry/core/pod/storage/eviction.go):
//! a delete that first asks the pod's PodDisruptionBudget. The budget's
//! `disruptionsAllowed` is spent (recorded in `disruptedPods`) in the same
//! compare-and-swap that checks it, so two evictions cannot both take the
//! last allowed disruption.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};
use serde_json::{json, Value};

use super::{helpers, meta, DeleteOptions, Registries, WriteOptions};
use crate::api::status::Reason;
use crate::api::ApiError;

const REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// How often a budget changed by another eviction is read again
/// (upstream's EvictionsRetry steps).
const ATTEMPTS: usize = 20;

/// upstream's 429 for a budget that says no, with its reason as a cause.
fn refused(cause: String, retry_after_seconds: i32) -> ApiError {
    ApiError::new(429, Reason::TooManyRequests, REFUSED).with_details(Some(StatusDetails {
        causes: Some(vec![StatusCause {
            reason: Some("DisruptionBudget".into()),
            message: Some(cause),
            field: None,
        }]),
        retry_after_seconds: (retry_after_seconds > 0).then_some(retry_after_seconds),
        ..Default::default()
    }))
}

/// Pods a budget does not protect: already going, finished, or never
/// started (upstream's canIgnorePDB).
fn can_ignore_budget(pod: &Value) -> bool {
    meta::is_deleting(pod)
        || matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed" | "Pending") | None
        )
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The budgets whose (non-empty) selector matches the pod.
async fn budgets_of(registries: &Registries, pod: &Value) -> Result<Vec<Value>, ApiError> {
    let Some(pdbs) = registries.get("policy", "v1", "poddisruptionbudgets") else {
        return Ok(Vec::new());
    };
    let list = pdbs.list(meta::namespace(pod), &Default::default()).await?;
    Ok(list
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
        .filter(|pdb| {
            let sel = &pdb["spec"]["selector"];
            // A nil or empty selector protects nothing here, as upstream.
            let empty = sel["matchLabels"].as_object().is_none_or(|m| m.is_empty())
                && sel["matchExpressions"]
                    .as_array()
                    .is_none_or(|m| m.is_empty());
            !empty && helpers::selector_matches(sel, &pod["metadata"]["labels"]) == Some(true)
        })
        .collect())
}

/// Evicts `name`: checks (and spends) its budget, then deletes it with
/// the eviction's options.
pub async fn evict(
    registries: &Registries,
    namespace: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    let pods = registries
        .get("", "v1", "pods")
        .ok_or_else(ApiError::resource_not_found)?;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let pod: Value = serde_json::from_slice(&pods.get_object(namespace, name, None).await?)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        if can_ignore_budget(&pod) {
            break;
        }
        let budgets = budgets_of(registries, &pod).await?;
        let pdb = match budgets.as_slice() {
            [] => break,
            [one] => one.clone(),
            _ => {
                return Err(ApiError::new(
                    500,
                    Reason::InternalError,
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                ))
            }
        };
        let pdb_name = meta::name(&pdb).to_string();
        let status = &pdb["status"];
        let (desired, current) = (
            status["desiredHealthy"].as_i64().unwrap_or(0),
            status["currentHealthy"].as_i64().unwrap_or(0),
        );
        // An unhealthy pod costs no disruption when the policy says so, or
        // when the budget is met without it; else it is decided as any.
        if !ready(&pod) {
            let always = pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
            if always || (desired > 0 && current >= desired) {
                break;
            }
        }
        let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
        if pdb["status"]["observedGeneration"].as_i64().unwrap_or(0) < generation {
            return Err(refused(
                format!("The disruption budget {pdb_name} is still being processed by the server."),
                10,
            ));
        }
        let needs = || {
            refused(
                format!(
                    "The disruption budget {pdb_name} needs {desired} healthy pods and has {current} currently"
                ),
                0,
            )
        };
        let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
        if allowed < 0 {
            return Err(ApiError::forbidden("pdb disruptions allowed is negative"));
        }
        if allowed == 0 {
            return Err(needs());
        }
        if opts.dry_run {
            break;
        }
        let mut spent = pdb.clone();
        spent["status"]["disruptionsAllowed"] = json!(allowed - 1);
        let disrupted = spent["status"]
            .as_object_mut()
            .map(|s| s.entry("disruptedPods").or_insert_with(|| json!({})));
        if let Some(d) = disrupted.and_then(Value::as_object_mut) {
            d.insert(name.to_string(), json!(meta::now_rfc3339()));
        }
        let Some(pdbs) = registries.get("policy", "v1", "poddisruptionbudgets") else {
            break;
        };
        // Written by the server on the user's behalf, as upstream's is.
        let w = WriteOptions {
            user: opts.user.clone(),
            user_agent: Some("kube-apiserver".into()),
            ..Default::default()
        };
        match pdbs
            .update(namespace, &pdb_name, spent, Some("status"), &w)
            .await
        {
            Ok(_) => break,
            // The budget changed meanwhile: decide again on the new one.
            Err(e) if e.code == 409 && attempts < ATTEMPTS => continue,
            Err(e) => return Err(e),
        }
    }
    pods.delete(namespace, name, opts).await.map(|_| ())
}
