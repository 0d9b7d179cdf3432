//! The scale subresource (upstream's `ScaleREST`): an `autoscaling/v1`
//! Scale read from and written to the object's replicas (a custom
//! resource's own paths when it declares them). Its own module because
//! Scale is a different kind from the object it scales.

use serde_json::{json, Value};

use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::registry::{PatchType, Registry, WriteOptions};

/// How a request changes a Scale.
pub enum Change {
    /// PUT: the whole Scale.
    Update(Value),
    /// PATCH: a JSON or merge patch of the current Scale.
    Patch(PatchType, Value),
}

/// The Scale of `obj`, a stored object of `resource`.
pub fn to_scale(resource: &Resource, obj: &Value) -> Value {
    let m = &obj["metadata"];
    let labels = |l: &serde_json::Map<String, Value>| {
        l.iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = obj["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(labels)
        .or_else(|| {
            obj["spec"]["selector"]
                .as_object()
                .filter(|_| resource.kind == "ReplicationController")
                .map(labels)
        })
        .unwrap_or_default();
    // Custom resources name their own paths (subresources.scale).
    let custom = resource.custom.as_ref().and_then(|c| c.scale.clone());
    let (spec_replicas, status_replicas, selector) = match &custom {
        Some(sc) => (
            crate::api::jsonpath::get(obj, &sc.spec_replicas_path)
                .and_then(Value::as_i64)
                .unwrap_or(0),
            crate::api::jsonpath::get(obj, &sc.status_replicas_path)
                .and_then(Value::as_i64)
                .unwrap_or(0),
            sc.label_selector_path
                .as_deref()
                .and_then(|p| crate::api::jsonpath::get(obj, p))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        ),
        None => (
            obj["spec"]["replicas"].as_i64().unwrap_or(0),
            obj["status"]["replicas"].as_i64().unwrap_or(0),
            selector,
        ),
    };
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"], "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
        "spec": {"replicas": spec_replicas},
        "status": {"replicas": status_replicas, "selector": selector}
    })
}

/// The current Scale of `namespace/name`.
pub async fn get(registry: &Registry, namespace: &str, name: &str) -> Result<Value, ApiError> {
    let obj = registry.get_object(namespace, name, None).await?;
    let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
    Ok(to_scale(&registry.resource, &v))
}

/// Applies `change` to the Scale of `namespace/name` and writes its
/// replicas to the object, guarded by the Scale's resourceVersion; answers
/// the new Scale.
pub async fn write(
    registry: &Registry,
    namespace: &str,
    name: &str,
    change: Change,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    if let Change::Patch(PatchType::Apply, given) = &change {
        return apply(registry, namespace, name, given, opts).await;
    }
    let current = registry.get_object(namespace, name, None).await?;
    let cur: Value = serde_json::from_slice(&current).unwrap_or(json!({}));
    let mut scale = to_scale(&registry.resource, &cur);
    match change {
        Change::Update(given) => scale = given,
        Change::Patch(PatchType::Json, given) => {
            crate::registry::patch::json::apply_request(&mut scale, &given)?
        }
        Change::Patch(_, given) => json_patch::merge(&mut scale, &given),
    }
    let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
    if replicas < 0 {
        let cause = crate::api::validation::FieldError::invalid(
            "spec.replicas",
            json!(replicas),
            "must be greater than or equal to 0",
        )
        .to_cause();
        return Err(ApiError::invalid("autoscaling", "Scale", name, vec![cause]));
    }
    let rv = scale["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let mut patch = json!({});
    crate::api::jsonpath::set(
        &mut patch,
        &replicas_path(&registry.resource),
        json!(replicas),
    );
    if !rv.is_empty() {
        patch["metadata"] = json!({"resourceVersion": rv});
    }
    write_through(registry, namespace, name, PatchType::Merge, &patch, opts).await
}

/// Server-side apply of a Scale: the applier owns the object's replicas
/// (recorded with subresource `scale`), with the conflicts and `force` of
/// any apply; upstream converts the Scale's managed fields to the
/// object's the same way.
async fn apply(
    registry: &Registry,
    namespace: &str,
    name: &str,
    given: &Value,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    let r = &registry.resource;
    let mut config =
        json!({"apiVersion": r.api_version(), "kind": r.kind, "metadata": {"name": name}});
    if r.namespaced {
        config["metadata"]["namespace"] = json!(namespace);
    }
    if let Some(replicas) = given["spec"].get("replicas") {
        if replicas.as_i64().is_some_and(|n| n < 0) {
            let cause = crate::api::validation::FieldError::invalid(
                "spec.replicas",
                replicas.clone(),
                "must be greater than or equal to 0",
            )
            .to_cause();
            return Err(ApiError::invalid("autoscaling", "Scale", name, vec![cause]));
        }
        crate::api::jsonpath::set(&mut config, &replicas_path(r), replicas.clone());
    }
    write_through(registry, namespace, name, PatchType::Apply, &config, opts).await
}

/// Where the object keeps its replicas (a custom resource names its own path).
fn replicas_path(r: &Resource) -> String {
    r.custom
        .as_ref()
        .and_then(|c| c.scale.as_ref())
        .map_or(".spec.replicas".to_string(), |s| {
            s.spec_replicas_path.clone()
        })
}

/// Patches the object through the scale subresource and answers its Scale.
async fn write_through(
    registry: &Registry,
    namespace: &str,
    name: &str,
    patch_type: PatchType,
    patch: &Value,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    let written = registry
        .patch(
            namespace,
            name,
            patch_type,
            &serde_json::to_vec(patch).unwrap_or_default(),
            Some("scale"),
            opts,
        )
        .await?;
    let v: Value = serde_json::from_slice(&written.object).unwrap_or(json!({}));
    Ok(to_scale(&registry.resource, &v))
}
