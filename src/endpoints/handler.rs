//! `ResourceHandler`: whether a server owns a request, and the dispatch of
//! one request on one resource by its route (upstream's
//! `registerResourceHandlers`) to the verb, the subresource or
//! componentstatuses.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::negotiation::{self, Output, Serializers, Transform};
use super::query::{request_user, request_write_options, write_options, Query};
use super::transform::{json_response, status_success, with_warnings};
use super::{big_list_encoders, componentstatus, responses, BIG_LIST};
use crate::api::catalog::{Owner, Resource};
use crate::api::request_info::{percent_decode, RequestInfo};
use crate::api::ApiError;
use crate::registry::{Registries, Registry, WriteOptions};

/// Serves the resources of one server in the chain.
#[derive(Clone)]
pub struct ResourceHandler {
    pub registries: Registries,
    pub owner: Owner,
    pub stop: tokio_util::sync::CancellationToken,
    pub auth: crate::auth::reviews::AuthContext,
    /// `--min-request-timeout`: a watch without `timeoutSeconds` lasts
    /// between once and twice this, at random, as upstream spreads watch
    /// restarts.
    pub min_request_timeout: std::time::Duration,
}
/// Which encodings a resource's endpoints produce: custom resources have
/// no protobuf, as upstream.
fn serializers_of(r: &Resource) -> Serializers {
    if r.custom.is_none() && crate::api::protobuf::has_message(&r.api_version(), &r.kind) {
        Serializers::ALL
    } else {
        Serializers::JSON_YAML
    }
}
/// upstream's `path.IsValidPathSegmentName`, checked where a name from the
/// URL becomes a storage key: `.`, `..`, `/` and `%` have no place there.
fn valid_path_segment_name(name: &str) -> Result<(), ApiError> {
    let mut why = Vec::new();
    if name == "." || name == ".." {
        why.push(format!("may not be '{name}'"));
    }
    for c in ['/', '%'] {
        if name.contains(c) {
            why.push(format!("may not contain '{c}'"));
        }
    }
    if why.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Name parameter invalid: {name:?}: {}",
        why.join(";")
    )))
}
impl ResourceHandler {
    /// Whether this server answers the request.
    pub fn owns(&self, info: &RequestInfo) -> Option<Arc<Resource>> {
        if !info.is_resource_request {
            return None;
        }
        let r = self
            .registries
            .catalog
            .get(&info.api_group, &info.api_version, &info.resource)?;
        (r.owner == self.owner).then_some(r)
    }

    /// Owns its handler (an `Arc`), so the chain boxes this future as it
    /// is rather than a wrapper that holds it, moved once more.
    pub async fn serve(self: Arc<Self>, req: Request, info: Arc<RequestInfo>) -> Response {
        // Kept for an error's encoding, negotiated only when there is one.
        let accept = req.headers().get(header::ACCEPT).cloned();
        match self.handle(req, &info).await {
            Ok(resp) => resp,
            Err(e) => responses::error(
                e,
                negotiation::error_encoding(accept.as_ref().and_then(|v| v.to_str().ok())),
            ),
        }
    }

    /// The route of `r` the request takes (the one `kapi routes` lists),
    /// recorded as the trace's routing stage.
    fn route<'a>(
        &self,
        r: &'a Resource,
        method: &Method,
        info: &RequestInfo,
    ) -> Result<&'a crate::api::routes::Route, ApiError> {
        let began = crate::trace::start();
        let resolved = crate::api::routes::resolve(r, method, info);
        match &resolved {
            Ok(route) => crate::trace::stage(began, "routing", "ok", || {
                json!({
                    "server": route.server,
                    "method": route.method,
                    "route": route.path,
                    "verb": route.verb,
                })
            }),
            Err(refusal) => crate::trace::stage(began, "routing", "error", || {
                json!({
                    "server": crate::api::routes::server_name(self.owner),
                    "method": method.as_str(),
                    "status": refusal.status(),
                    "reason": refusal.reason(),
                })
            }),
        }
        resolved.map_err(crate::api::routes::Refusal::into_error)
    }

    async fn handle(&self, req: Request, info: &RequestInfo) -> Result<Response, ApiError> {
        let registry = self
            .registries
            .get(&info.api_group, &info.api_version, &info.resource)
            .ok_or_else(ApiError::resource_not_found)?;
        let r = registry.resource.clone();
        let q = Query::parse(req.uri().query());
        let accept = req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        // Whether the resource has protobuf matters only to a request that
        // names it: a wildcard picks JSON first.
        let serializers = match accept {
            Some(a) if a.contains("protobuf") => serializers_of(&r),
            _ => Serializers::ALL,
        };
        let output = negotiation::output(
            accept,
            q.get("includeObject").is_some_and(|v| v == "Object"),
            serializers,
            info.verb == "watch",
        )?;
        let route = self.route(&r, req.method(), info)?;
        let ns = info.namespace.as_str();
        if !route.subresource.is_empty() {
            return Box::pin(self.subresource(
                &registry,
                req,
                info,
                &route.subresource,
                &q,
                output,
            ))
            .await;
        }
        let name = info.name.as_str();
        if !name.is_empty() {
            let decoded = if name.contains('%') {
                std::borrow::Cow::Owned(percent_decode(name))
            } else {
                std::borrow::Cow::Borrowed(name)
            };
            // An encoded slash makes another path upstream, which no route takes.
            if decoded.contains('/') {
                return Err(ApiError::resource_not_found());
            }
            valid_path_segment_name(&decoded)?;
        }
        if r.kind == "ComponentStatus" && r.group.is_empty() {
            // upstream's deprecation warning for the whole API.
            let warning = ["v1 ComponentStatus is deprecated in v1.19+".to_string()];
            let resp =
                Box::pin(self.component_statuses(&registry, &info.verb, name, output)).await?;
            return Ok(with_warnings(resp, &warning));
        }
        match route.verb.as_str() {
            "get" => {
                let obj = crate::trace::request_read(registry.get_object(
                    ns,
                    name,
                    q.get("resourceVersion"),
                ))
                .await?;
                Ok(self.object_response(&registry, StatusCode::OK, obj, output))
            }
            // Every other verb's future is boxed on its own: kept inline,
            // the largest (a create's, 6 KiB) set the size of every
            // request's future, GETs' included, which was then copied
            // whole into its box on each request.
            _ => Box::pin(self.other_verbs(req, info, &registry, &route.verb, &q, output)).await,
        }
    }

    /// Every verb but get (see [`ResourceHandler::handle`]).
    async fn other_verbs(
        &self,
        req: Request,
        info: &RequestInfo,
        registry: &Arc<Registry>,
        verb: &str,
        q: &Query,
        output: Output,
    ) -> Result<Response, ApiError> {
        let r = &registry.resource;
        let (ns, name) = (info.namespace.as_str(), info.name.as_str());
        match verb {
            "list" => {
                let params = q.list_params(false)?;
                let list = crate::trace::request_read(registry.list(ns, &params)).await?;
                // A big list's body is CPU work of milliseconds: off the
                // runtime thread, so other requests (a system:masters get
                // during a flood of lists) are not queued behind it.
                let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
                    == tokio::runtime::RuntimeFlavor::MultiThread;
                if multi_thread && list.items.len() > BIG_LIST {
                    // One at a time per core: each runs on a thread of its
                    // own, and more at once than cores only adds threads.
                    let _permit = big_list_encoders()
                        .acquire()
                        .await
                        .map_err(|e| ApiError::internal(e.to_string()))?;
                    Ok(tokio::task::block_in_place(|| {
                        self.list_response(&registry, list, output)
                    }))
                } else {
                    Ok(self.list_response(&registry, list, output))
                }
            }
            "watch" => self.watch(&registry, info, &q, output).await,
            "create" if !r.is_stored() => {
                let user = request_user(&req);
                write_options(&q, "CreateOptions")?;
                let body = self.body(req, &r.kind).await?;
                let (_, decode_warnings) =
                    registry.decode(body.clone(), ns, &WriteOptions::default())?;
                let answer = if r.kind == "Binding" {
                    crate::registry::core::binding::bind(&self.registries, ns, body, &user).await?
                } else {
                    crate::auth::reviews::create(&self.auth, &r.kind, ns, body, &user).await?
                };
                let bytes = Bytes::from(crate::api::go_json::to_vec(&answer));
                Ok(with_warnings(
                    self.object_response(&registry, StatusCode::CREATED, bytes, output),
                    &decode_warnings,
                ))
            }
            "create" => {
                let opts = request_write_options(&req, &q, "CreateOptions")?;
                let (body, dups) = self.strict_body(req, &r, &opts).await?;
                let written = registry.create(ns, body, &opts).await?;
                Ok(with_warnings(
                    self.written(&registry, StatusCode::CREATED, written, output),
                    &dups,
                ))
            }
            "update" => {
                let opts = request_write_options(&req, &q, "UpdateOptions")?;
                let (body, dups) = self.strict_body(req, &r, &opts).await?;
                let written = registry.update(ns, name, body, None, &opts).await?;
                Ok(with_warnings(
                    self.written(&registry, StatusCode::OK, written, output),
                    &dups,
                ))
            }
            "patch" => {
                let (pt, body, opts) = self.patch_parts(req, &q).await?;
                let written = registry.patch(ns, name, pt, &body, None, &opts).await?;
                Ok(self.written(&registry, StatusCode::OK, written, output))
            }
            "delete" => {
                let opts = self.delete_options(req, &q).await?;
                let (obj, gone) = registry.delete(ns, name, &opts).await?;
                if gone && !registry.strategy.returns_deleted_object() {
                    Ok(responses::object(
                        StatusCode::OK,
                        status_success(&r, &obj),
                        output.encoding,
                    ))
                } else {
                    Ok(self.object_response(&registry, StatusCode::OK, obj, output))
                }
            }
            "deletecollection" => {
                let opts = self.delete_options(req, &q).await?;
                let list = registry
                    .delete_collection(ns, &q.list_params(false)?, &opts)
                    .await?;
                let output = Output {
                    encoding: output.encoding,
                    transform: Transform::None,
                };
                Ok(self.list_response(&registry, list, output))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }
    /// componentstatuses: probed on each request, never stored.
    async fn component_statuses(
        &self,
        registry: &Registry,
        verb: &str,
        name: &str,
        output: Output,
    ) -> Result<Response, ApiError> {
        let store = self.registries.store();
        let to_bytes = |v: &Value| Bytes::from(crate::api::go_json::to_vec(v));
        match verb {
            "get" => {
                let v = componentstatus::get(store, name)
                    .await
                    .ok_or_else(|| ApiError::not_found("", "componentstatus", name))?;
                Ok(self.object_response(registry, StatusCode::OK, to_bytes(&v), output))
            }
            "list" => {
                let items: Vec<Bytes> = componentstatus::list(store)
                    .await
                    .iter()
                    .map(to_bytes)
                    .collect();
                if output == Output::JSON {
                    let mut body = b"{\"kind\":\"ComponentStatusList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[".to_vec();
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            body.push(b',');
                        }
                        body.extend_from_slice(item);
                    }
                    body.extend_from_slice(b"]}");
                    return Ok(json_response(StatusCode::OK, Bytes::from(body)));
                }
                let list = crate::registry::ListOut {
                    items,
                    ..Default::default()
                };
                Ok(self.list_response(registry, list, output))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }
}
