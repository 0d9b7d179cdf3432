//! Subresources: status and the other parts of an object a strategy
//! updates alone, scale, token, binding, eviction, finalize, proxy, and the
//! kubelet's (log, exec, attach, portforward) which kapi refuses as having
//! no node agent. Their own file: each answers differently from the verbs.

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{json, Value};

use super::negotiation::Output;
use super::proxy::{is_global_unicast, split_scheme_name_port};
use super::query::{dry_run, request_user, request_write_options, Query};
use super::{responses, ResourceHandler};
use crate::api::request_info::RequestInfo;
use crate::api::ApiError;
use crate::registry::{DeleteOptions, Registry};
use crate::storage::store::Preconditions;

impl ResourceHandler {
    pub(super) async fn subresource(
        &self,
        registry: &Registry,
        req: Request,
        info: &RequestInfo,
        sub: &str,
        q: &Query,
        output: Output,
    ) -> Result<Response, ApiError> {
        let r = registry.resource.clone();
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        match sub {
            // Each takes one part of the object (upstream's status,
            // ephemeral-containers and CSR-approval strategies); a GET is the
            // whole object.
            "status" | "ephemeralcontainers" | "approval" | "resize" => match info.verb.as_str() {
                "get" => Ok(self.object_response(
                    registry,
                    StatusCode::OK,
                    crate::trace::request_read(registry.get_object(
                        ns,
                        name,
                        q.get("resourceVersion"),
                    ))
                    .await?,
                    output,
                )),
                "update" => {
                    let opts = request_write_options(&req, q, "UpdateOptions")?;
                    let body = self.body(req, &r.kind).await?;
                    Ok(self.written(
                        registry,
                        StatusCode::OK,
                        registry.update(ns, name, body, Some(sub), &opts).await?,
                        output,
                    ))
                }
                "patch" => {
                    let (pt, body, opts) = self.patch_parts(req, q).await?;
                    Ok(self.written(
                        registry,
                        StatusCode::OK,
                        registry
                            .patch(ns, name, pt, &body, Some(sub), &opts)
                            .await?,
                        output,
                    ))
                }
                _ => Err(ApiError::method_not_allowed()),
            },
            "scale" => self.scale(registry, req, info, q, output.encoding).await,
            "token" if r.kind == "ServiceAccount" => {
                let body = self.body(req, "TokenRequest").await?;
                let answer = crate::auth::token_request::create(
                    &self.auth,
                    &self.registries,
                    ns,
                    name,
                    body,
                )
                .await?;
                Ok(responses::value(
                    StatusCode::CREATED,
                    &answer,
                    output.encoding,
                ))
            }
            "binding" => {
                let user = request_user(&req);
                let mut body = self.body(req, "Binding").await?;
                let Some(obj) = body.as_object_mut() else {
                    return Err(ApiError::bad_request("a Binding must be a JSON object"));
                };
                let meta = obj.entry("metadata").or_insert_with(|| json!({}));
                if !meta.is_object() {
                    *meta = json!({});
                }
                meta["name"] = json!(name);
                let answer =
                    crate::registry::core::binding::bind(&self.registries, ns, body, &user).await?;
                Ok(responses::value(
                    StatusCode::CREATED,
                    &answer,
                    output.encoding,
                ))
            }
            "eviction" => {
                let user = request_user(&req);
                let body = self.body(req, "Eviction").await?;
                let mut opts = DeleteOptions {
                    dry_run: dry_run(q, "CreateOptions")?,
                    user,
                    ..Default::default()
                };
                opts.preconditions = Preconditions {
                    uid: body["deleteOptions"]["preconditions"]["uid"]
                        .as_str()
                        .map(String::from),
                    resource_version: body["deleteOptions"]["preconditions"]["resourceVersion"]
                        .as_str()
                        .map(String::from),
                };
                // The eviction's own DeleteOptions: grace period, propagation,
                // and a dry run asked in the body or the query (they must
                // agree, as upstream's propagateDryRun).
                let d = &body["deleteOptions"];
                if let Some(g) = d["gracePeriodSeconds"].as_i64() {
                    opts.grace_period_seconds = Some(g);
                }
                opts.propagation_policy = d["propagationPolicy"].as_str().map(String::from);
                let body_dry = d["dryRun"].as_array().is_some_and(|a| !a.is_empty());
                if d["dryRun"].is_array() && q.all("dryRun").is_empty() {
                    opts.dry_run = body_dry;
                } else if d["dryRun"].is_array() && body_dry != opts.dry_run {
                    return Err(ApiError::bad_request(
                        "request dryRun and eviction deleteOptions.dryRun must match",
                    ));
                }
                crate::registry::eviction::evict(&self.registries, ns, name, &opts).await?;
                let ok = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
                Ok(responses::value(StatusCode::CREATED, &ok, output.encoding))
            }
            "finalize" => {
                let opts = request_write_options(&req, q, "UpdateOptions")?;
                let body = self.body(req, &r.kind).await?;
                let written = registry
                    .update(ns, name, body, Some("finalize"), &opts)
                    .await?;
                Ok(self.written(registry, StatusCode::OK, written, output))
            }
            "proxy" if r.kind == "Service" && r.group.is_empty() => {
                self.service_proxy_location(ns, name).await
            }
            "proxy" if r.kind == "Pod" && r.group.is_empty() => {
                // upstream's pod ResourceLocation: `name`, `name:port` or
                // `scheme:name:port`; the pod's IP must be one a proxy may
                // dial before anything else is looked at.
                let (pod, _) = split_scheme_name_port(name)?;
                let obj = registry.get_object(ns, pod, None).await?;
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let ip = v["status"]["podIP"].as_str().unwrap_or("");
                if !ip.parse::<std::net::IpAddr>().is_ok_and(is_global_unicast) {
                    return Err(ApiError::bad_request("address not allowed"));
                }
                Err(ApiError::service_unavailable(format!(
                    "kapi runs no pod network: pods/proxy of {pod} needs to reach {ip}, which this server does not do"
                )))
            }
            "log" | "exec" | "attach" | "portforward" | "proxy" => {
                let obj = registry.get_object(ns, name, None).await?;
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let node = v["spec"]["nodeName"].as_str().unwrap_or("");
                if r.kind == "Pod" && node.is_empty() {
                    if sub == "log" {
                        // upstream: an unscheduled pod has no log yet.
                        return Ok(StatusCode::NO_CONTENT.into_response());
                    }
                    return Err(ApiError::bad_request(format!(
                        "pod {name} does not have a host assigned"
                    )));
                }
                // upstream's GetConnectionInfo looks the node up first: a
                // node that is not there is a 404, one without an address
                // a 500, before any kubelet is dialed.
                if r.kind == "Pod" {
                    if let Some(nodes) = self.registries.get("", "v1", "nodes") {
                        let node_obj = nodes.get_object("", node, None).await?;
                        let n: Value = serde_json::from_slice(&node_obj).unwrap_or(json!({}));
                        if n["status"]["addresses"]
                            .as_array()
                            .is_none_or(Vec::is_empty)
                        {
                            return Err(ApiError::internal(
                                "no preferred addresses found; known addresses: []",
                            ));
                        }
                    }
                }
                Err(ApiError::service_unavailable(format!(
                    "kapi runs no kubelets: {}/{sub} of {name} needs a node agent, which this server does not have",
                    r.plural
                )))
            }
            _ => Err(ApiError::new(
                405,
                crate::api::Reason::MethodNotAllowed,
                format!("{}/{sub} is not served by kapi yet", r.plural),
            )),
        }
    }
}
