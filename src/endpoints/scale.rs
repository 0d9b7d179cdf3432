//! The scale subresource: an `autoscaling/v1` Scale read from and written
//! to the object's replicas (a custom resource's own paths when it
//! declares them). Its own file because Scale is a different kind from the
//! object it scales.

use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{json, Value};

use super::negotiation::Encoding;
use super::query::{write_options, Query};
use super::{responses, ResourceHandler};
use crate::api::request_info::RequestInfo;
use crate::api::ApiError;
use crate::registry::{PatchType, Registry};

impl ResourceHandler {
    pub(super) async fn scale(
        &self,
        registry: &Registry,
        req: Request,
        info: &RequestInfo,
        q: &Query,
        encoding: Encoding,
    ) -> Result<Response, ApiError> {
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        let to_scale = |obj: &Value| -> Value {
            let m = &obj["metadata"];
            let selector = obj["spec"]["selector"]["matchLabels"]
                .as_object()
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .or_else(|| {
                    obj["spec"]["selector"]
                        .as_object()
                        .filter(|_| registry.resource.kind == "ReplicationController")
                        .map(|l| {
                            l.iter()
                                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                })
                .unwrap_or_default();
            // Custom resources name their own paths (subresources.scale).
            let custom = registry
                .resource
                .custom
                .as_ref()
                .and_then(|c| c.scale.clone());
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
        };
        let respond = |obj: &Bytes| {
            let v: Value = serde_json::from_slice(obj).unwrap_or(json!({}));
            responses::value(StatusCode::OK, &to_scale(&v), encoding)
        };
        match info.verb.as_str() {
            "get" => Ok(respond(&registry.get_object(ns, name, None).await?)),
            "update" | "patch" => {
                let is_patch = info.verb == "patch";
                // A patch body is JSON or YAML; an update's is any body
                // format, protobuf included.
                let (pt, given, opts) = if is_patch {
                    let (pt, body, opts) = self.patch_parts(req, q).await?;
                    let given: Value = serde_json::from_slice(&body)
                        .or_else(|_| serde_saphyr::from_slice::<Value>(&body))
                        .map_err(|e| {
                            ApiError::bad_request(format!("unable to decode Scale: {e}"))
                        })?;
                    (pt, given, opts)
                } else {
                    let opts = write_options(q, "UpdateOptions")?;
                    (PatchType::Merge, self.body(req, "Scale").await?, opts)
                };
                let current = registry.get_object(ns, name, None).await?;
                let cur: Value = serde_json::from_slice(&current).unwrap_or(json!({}));
                let mut scale = to_scale(&cur);
                if is_patch {
                    match pt {
                        PatchType::Json => {
                            crate::registry::patch::json::apply_request(&mut scale, &given)?
                        }
                        _ => json_patch::merge(&mut scale, &given),
                    }
                } else {
                    scale = given;
                }
                let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
                if replicas < 0 {
                    let cause = crate::registry::validation::FieldError::invalid(
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
                let replicas_path = registry
                    .resource
                    .custom
                    .as_ref()
                    .and_then(|c| c.scale.as_ref())
                    .map_or(".spec.replicas".to_string(), |s| {
                        s.spec_replicas_path.clone()
                    });
                crate::api::jsonpath::set(&mut patch, &replicas_path, json!(replicas));
                if !rv.is_empty() {
                    patch["metadata"] = json!({"resourceVersion": rv});
                }
                let written = registry
                    .patch(
                        ns,
                        name,
                        PatchType::Merge,
                        &serde_json::to_vec(&patch).unwrap_or_default(),
                        Some("scale"),
                        &opts,
                    )
                    .await?;
                Ok(respond(&written.object))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }
}
