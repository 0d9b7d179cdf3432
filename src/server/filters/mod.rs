//! The filters of the handler chain (upstream's `DefaultBuildHandlerChain`),
//! outermost first: panic recovery -> request info -> metrics ->
//! authentication -> audit -> flow control -> authorization -> timeout.
//! Each filter is one function; `handler_chain` runs them in that order.

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use http::{header, HeaderValue};
use tokio::sync::Semaphore;

use super::handler_chain::Next;
use super::metrics::{Metrics, RequestLabels};
use crate::api::request_info::{query_value, RequestInfo};
use crate::api::ApiError;
use crate::auth::authenticator::Authenticated;
use crate::auth::authorizer::{forbidden_message, Attributes, Authorizer, Decision};
use crate::auth::x509::ClientCertIdentity;
use crate::auth::{Authenticator, Credentials};

/// Header names parsed once: a `&str` name is validated again on every use.
pub(super) mod names {
    use http::HeaderName;
    pub const AUDIT_ID: HeaderName = HeaderName::from_static("audit-id");
    pub const FLOW_SCHEMA_UID: HeaderName =
        HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
    pub const PRIORITY_LEVEL_UID: HeaderName =
        HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");
    pub const TRACE_REQUEST: HeaderName = HeaderName::from_static(crate::trace::REQUEST_HEADER);
    pub const IMPERSONATE_USER: HeaderName = HeaderName::from_static("impersonate-user");
    pub const IMPERSONATE_GROUP: HeaderName = HeaderName::from_static("impersonate-group");
    pub const IMPERSONATE_UID: HeaderName = HeaderName::from_static("impersonate-uid");
}

mod flow_control;
pub(super) use flow_control::flow_control;

/// A filter's answer: the rest of the chain's future, mapped or wrapped.
/// Filters are plain functions that return it, not `async fn`s, so a
/// filter that decides at once (most, for most requests) adds a small
/// mapping future rather than a state machine holding the request.
pub(super) type Answer = futures::future::BoxFuture<'static, Response>;

/// What the serving loop knows about the connection a request came on.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub remote: SocketAddr,
    pub client_cert: Option<ClientCertIdentity>,
}

/// The authorization decision, passed back out to the audit filter.
#[derive(Debug, Clone)]
pub struct AuthzDecision {
    pub decision: &'static str,
    pub reason: String,
}

/// Shared by every filter.
#[derive(Debug)]
pub struct ChainState {
    pub authenticator: Authenticator,
    pub authorizer: Arc<dyn Authorizer>,
    pub metrics: Metrics,
    pub readonly_inflight: Semaphore,
    pub mutating_inflight: Semaphore,
    pub request_timeout: Duration,
    pub audit: Option<super::audit::Auditor>,
    /// API Priority and Fairness; `None` limits by max-in-flight.
    pub apf: Option<Arc<super::flowcontrol::Apf>>,
}

/// What httplog says about a request, taken before it is handed on.
fn request_line(req: &Request) -> (String, String, String, String, String) {
    let info = RequestInfo::parse(req.method(), req.uri().path(), req.uri().query());
    let header = |name: header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    (
        metric_verb(&info, req).into_owned(),
        req.uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default(),
        header(header::USER_AGENT),
        header(header::CONTENT_TYPE),
        req.extensions()
            .get::<ConnInfo>()
            .map(|c| c.remote.to_string())
            .unwrap_or_default(),
    )
}

/// Whether httplog lines are written (`-v 3` and up).
pub(super) fn httplog_on() -> bool {
    tracing::enabled!(target: crate::logs::HTTPLOG, tracing::Level::INFO)
}

/// Upstream's httplog: one line per request at `-v 3` (verb, URI, latency,
/// user agent, audit ID, source, status), and nothing spent when it is off.
pub(super) async fn httplog(req: Request, next: Next) -> Response {
    use crate::logs::HTTPLOG;
    if !tracing::enabled!(target: HTTPLOG, tracing::Level::INFO) {
        return next.run(req).await;
    }
    let began = Instant::now();
    let (verb, uri, user_agent, content_type, src) = request_line(&req);
    let resp = next.run(req).await;
    let audit_id = resp
        .headers()
        .get("audit-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    tracing::info!(
        target: HTTPLOG,
        verb = ?verb,
        URI = ?uri,
        latency = ?began.elapsed(),
        userAgent = ?user_agent,
        contentType = ?content_type,
        "audit-ID" = ?audit_id,
        srcIP = ?src,
        resp = resp.status().as_u16(),
        "HTTP"
    );
    resp
}

/// How much of a body a handler left unread is read before its answer.
const DRAIN_LIMIT: usize = 8 << 20;
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// A handler that answers without reading the request body (an error, a
/// 404) leaves the client still sending; over HTTP/2 the stream is then
/// reset (RST_STREAM) right after the answer, and a client whose upload
/// is not finished (curl) reports a framing error instead of the answer.
/// So the rest of a body left unread (up to 8 MiB, so a body just over
/// the 3 MiB limit still gets its 413; for at most a second) is read
/// before the answer goes, as Go's server drains HTTP/1 bodies.
/// Whether the request has a body still to come (`hold_request_body`).
pub(super) fn has_body(req: &Request) -> bool {
    !axum::body::HttpBody::is_end_stream(req.body())
}

pub(super) async fn hold_request_body(req: Request, next: Next) -> Response {
    if axum::body::HttpBody::is_end_stream(req.body()) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let held: HeldBody = Arc::default();
    let guarded = axum::body::Body::new(GuardedBody {
        inner: Some(body),
        held: held.clone(),
    });
    let resp = next.run(Request::from_parts(parts, guarded)).await;
    let parked = held.lock().take();
    if let Some(mut body) = parked {
        use http_body_util::BodyExt;
        let _ = tokio::time::timeout(DRAIN_WAIT, async {
            let mut read = 0usize;
            while let Some(Ok(frame)) = body.frame().await {
                read += frame.data_ref().map_or(0, bytes::Bytes::len);
                if read > DRAIN_LIMIT {
                    break;
                }
            }
        })
        .await;
        if !axum::body::HttpBody::is_end_stream(&body) {
            // Too much or too slow: keep it until the answer is sent.
            *held.lock() = Some(body);
        }
    }
    let (parts, body) = resp.into_parts();
    Response::from_parts(
        parts,
        axum::body::Body::new(KeepAlongside {
            inner: body,
            _held: held,
        }),
    )
}

type HeldBody = Arc<parking_lot::Mutex<Option<axum::body::Body>>>;

/// The request body as handlers see it; dropped unread, it parks itself.
struct GuardedBody {
    inner: Option<axum::body::Body>,
    held: HeldBody,
}

impl Drop for GuardedBody {
    fn drop(&mut self) {
        if let Some(b) = self.inner.take() {
            if !axum::body::HttpBody::is_end_stream(&b) {
                *self.held.lock() = Some(b);
            }
        }
    }
}

impl axum::body::HttpBody for GuardedBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        match self.inner.as_mut() {
            Some(b) => std::pin::Pin::new(b).poll_frame(cx),
            None => std::task::Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(axum::body::HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner
            .as_ref()
            .map(axum::body::HttpBody::size_hint)
            .unwrap_or_else(|| http_body::SizeHint::with_exact(0))
    }
}

/// A response body holding something until it is sent (or dropped): a
/// parked request body, or a request's seats.
struct KeepAlongside<T> {
    inner: axum::body::Body,
    _held: T,
}

impl<T: Unpin> axum::body::HttpBody for KeepAlongside<T> {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// upstream's isPrettyPrint: `?pretty=` when it has a value (Go's
/// ParseBool; anything else is false), else curl, Wget and browsers.
pub(super) fn wants_pretty(req: &Request) -> bool {
    if let Some(q) = req.uri().query().filter(|q| q.contains("pretty")) {
        let value = crate::api::request_info::query_value(Some(q), "pretty");
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            return matches!(v.as_str(), "1" | "t" | "T" | "true" | "TRUE" | "True");
        }
    }
    let ua = req
        .headers()
        .get(header::USER_AGENT)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    ua.starts_with(b"curl") || ua.starts_with(b"Wget") || ua.starts_with(b"Mozilla/5.0")
}

/// Responses upstream would encode with `json.MarshalIndent(obj, "", "  ")`
/// (see [`wants_pretty`]): whole JSON bodies are re-indented, keys kept in
/// their order; streams (watches) are left alone.
pub(super) async fn pretty(req: Request, next: Next) -> Response {
    if !wants_pretty(&req) {
        return next.run(req).await;
    }
    let resp = next.run(req).await;
    let json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/json");
    let whole = axum::body::HttpBody::size_hint(resp.body()).exact();
    let Some(len) = whole.filter(|_| json) else {
        return resp;
    };
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, len as usize).await else {
        return ApiError::internal("the response could not be read back to indent it")
            .into_response();
    };
    let indented = crate::api::indent_json(&bytes);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(indented))
}

/// A panic in any handler becomes a logged 500 `Status`, never a dropped
/// connection: in a filter's or handler's first steps, run as the chain
/// is walked, or later while its future is polled.
pub(super) fn panic_recovery(req: Request, next: Next) -> Answer {
    // Kept for the log line of a panic; formatted only then.
    let (method, uri) = (req.method().clone(), req.uri().clone());
    use futures::future::Either;
    let answered = match std::panic::catch_unwind(AssertUnwindSafe(|| next.run(req))) {
        Ok(answer) => Either::Left(AssertUnwindSafe(answer).catch_unwind()),
        Err(panic) => Either::Right(std::future::ready(Err(panic))),
    };
    answered
        .map(move |answered| {
            let mut resp = match answered {
                Ok(resp) => resp,
                Err(panic) => {
                    let msg = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    let what = format!("{method} {}", uri.path());
                    tracing::error!(request = %what, panic = %msg, "handler panicked");
                    ApiError::internal(format!("the server panicked while handling {what:?}"))
                        .into_response()
                }
            };
            // upstream's WithCacheControl: API responses are never cached by intermediaries.
            resp.headers_mut()
                .entry(header::CACHE_CONTROL)
                .or_insert(HeaderValue::from_static("no-cache, private"));
            resp
        })
        .boxed()
}

/// The discovery and version paths with a trailing slash (`/version/`,
/// `/apis/`, `/apis/apps/v1/`), as the paths without it: upstream serves
/// them through go-restful, which trims it. Clients send them (kr8s asks
/// for `/version/` on every connection).
fn without_discovery_slash(path: &str) -> Option<&str> {
    let trimmed = path.trim_end_matches('/');
    if trimmed.len() == path.len() || trimmed.is_empty() {
        return None;
    }
    let parts: Vec<&str> = trimmed[1..].split('/').collect();
    let discovery = match parts.as_slice() {
        ["version"] | ["api"] | ["apis"] => true,
        ["api", v] | ["apis", v] => !v.is_empty(),
        ["apis", g, v] => !g.is_empty() && !v.is_empty(),
        _ => false,
    };
    discovery.then_some(trimmed)
}

pub(super) fn request_info(mut req: Request, next: Next) -> Answer {
    if let Some(trimmed) = without_discovery_slash(req.uri().path()) {
        let rewritten = match req.uri().query() {
            Some(q) => format!("{trimmed}?{q}"),
            None => trimmed.to_string(),
        };
        if let Ok(path_and_query) = rewritten.parse::<http::uri::PathAndQuery>() {
            let mut parts = req.uri().clone().into_parts();
            parts.path_and_query = Some(path_and_query);
            if let Ok(uri) = http::Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    let info = RequestInfo::parse(req.method(), req.uri().path(), req.uri().query());
    req.extensions_mut().insert(Arc::new(info));
    next.run(req)
}

/// A request carrying the trace header runs inside a [`crate::trace::Trace`]
/// and gets its stages back in a response header (`kapi trace-request`).
/// Whether the request asks to be traced (`kapi trace-request`).
pub(super) fn traced(req: &Request) -> bool {
    req.headers().contains_key(names::TRACE_REQUEST)
}

pub(super) async fn trace(req: Request, next: Next) -> Response {
    use crate::trace;
    if !req.headers().contains_key(names::TRACE_REQUEST) {
        return next.run(req).await;
    }
    let t = trace::Trace::new();
    let info = info_of(&req);
    let mut resp = t
        .scope(async {
            let began = trace::start();
            trace::stage(began, "request", "ok", || {
                serde_json::json!({
                    "method": req.method().as_str(),
                    "path": req.uri().path(),
                    "query": req.uri().query().unwrap_or(""),
                    "verb": info.verb,
                    "apiGroup": info.api_group,
                    "apiVersion": info.api_version,
                    "resource": info.resource,
                    "subresource": info.subresource,
                    "namespace": info.namespace,
                    "name": info.name,
                })
            });
            let began = trace::start();
            let resp = next.run(req).await;
            let status = resp.status();
            let size = http_body::Body::size_hint(resp.body()).exact();
            trace::stage(
                began,
                "response",
                if status.is_success() { "ok" } else { "error" },
                || serde_json::json!({"code": status.as_u16(), "bytes": size}),
            );
            resp
        })
        .await;
    if let Ok(v) = HeaderValue::from_str(&t.header_value()) {
        resp.headers_mut().insert(trace::RESPONSE_HEADER, v);
    }
    resp
}

fn info_of(req: &Request) -> Arc<RequestInfo> {
    req.extensions()
        .get::<Arc<RequestInfo>>()
        .cloned()
        .unwrap_or_default()
}

fn metric_verb(info: &RequestInfo, req: &Request) -> std::borrow::Cow<'static, str> {
    if !info.is_resource_request {
        return match *req.method() {
            http::Method::GET => "GET".into(),
            http::Method::HEAD => "HEAD".into(),
            http::Method::POST => "POST".into(),
            http::Method::PUT => "PUT".into(),
            http::Method::PATCH => "PATCH".into(),
            http::Method::DELETE => "DELETE".into(),
            http::Method::OPTIONS => "OPTIONS".into(),
            ref other => other.as_str().to_string().into(),
        };
    }
    let apply = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/apply-patch"));
    match info.verb.as_str() {
        "get" => "GET".into(),
        "list" => "LIST".into(),
        "watch" => "WATCH".into(),
        "create" => "POST".into(),
        "update" => "PUT".into(),
        "patch" if apply => "APPLY".into(),
        "patch" => "PATCH".into(),
        "delete" => "DELETE".into(),
        other => other.to_ascii_uppercase().into(),
    }
}

pub(super) fn metrics(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    let info = info_of(&req);
    let start = Instant::now();
    let verb = metric_verb(&info, &req);
    let dry_run = query_value(req.uri().query(), "dryRun");
    next.run(req)
        .map(move |resp| {
            observe(&s, &info, &verb, dry_run.as_deref(), start, &resp);
            resp
        })
        .boxed()
}

fn observe(
    s: &ChainState,
    info: &RequestInfo,
    verb: &str,
    dry_run: Option<&str>,
    start: Instant,
    resp: &Response,
) {
    let labels = if info.is_resource_request {
        RequestLabels {
            component: "apiserver",
            group: &info.api_group,
            version: &info.api_version,
            resource: &info.resource,
            subresource: &info.subresource,
            scope: info.scope(),
            ..Default::default()
        }
    } else {
        RequestLabels {
            // Bounded cardinality: paths nobody serves are counted together.
            subresource: if resp.status() == http::StatusCode::NOT_FOUND {
                "other"
            } else {
                &info.path
            },
            ..Default::default()
        }
    };
    s.metrics.observe_request(
        RequestLabels {
            verb,
            dry_run: dry_run.unwrap_or_default(),
            ..labels
        },
        resp.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
}

fn bearer_token(req: &Request) -> Option<String> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

pub(super) fn authentication(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    let token = bearer_token(&req);
    let creds = credentials(&req, token.as_deref());
    let began = crate::trace::start();
    let token = match s.authenticator.authenticate_now(&creds) {
        crate::auth::Identified::Now(decided) => {
            return authenticated(&s, began, decided, req, next)
        }
        // Only a token that needs a lookup makes this filter wait.
        crate::auth::Identified::Token(t) => t.to_string(),
    };
    Box::pin(async move {
        let decided = s.authenticator.token_user(&token).await;
        authenticated(&s, began, decided, req, next).await
    })
}

fn credentials<'r>(req: &'r Request, bearer_token: Option<&'r str>) -> Credentials<'r> {
    Credentials {
        client_cert: req
            .extensions()
            .get::<ConnInfo>()
            .and_then(|c| c.client_cert.as_ref()),
        bearer_token,
        headers: Some(req.headers()),
    }
}

/// The request handed on as the user it was found to be, or refused.
fn authenticated(
    s: &ChainState,
    began: Option<std::time::Instant>,
    decided: Result<Authenticated, crate::auth::AuthenticationError>,
    mut req: Request,
    next: Next,
) -> Answer {
    crate::trace::result(began, "authentication", &decided, || {
        decided.as_ref().map_or(serde_json::Value::Null, |u| {
            serde_json::json!({
                "user": u.user.name,
                "groups": u.user.groups,
                "method": u.method,
            })
        })
    });
    match decided {
        Ok(user) => {
            // Credentials stop here; nothing behind the filter needs them.
            req.headers_mut().remove(header::AUTHORIZATION);
            if user.method == "requestheader" {
                let names: Vec<_> = req
                    .headers()
                    .keys()
                    .filter(|h| s.authenticator.request_headers().is_auth_header(h.as_str()))
                    .cloned()
                    .collect();
                for h in names {
                    req.headers_mut().remove(h);
                }
            }
            req.extensions_mut().insert(user);
            next.run(req)
        }
        Err(e) => {
            tracing::debug!(path = %req.uri().path(), error = %e, "unable to authenticate the request");
            Box::pin(std::future::ready(ApiError::unauthorized().into_response()))
        }
    }
}

pub(super) fn audit(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    use super::audit::Level;
    // A v4 UUID from the thread-local generator: no system call per request.
    let audit_id = uuid::Builder::from_random_bytes(rand::random())
        .into_uuid()
        .to_string();
    // Unique to this response: sent never-indexed, so HTTP/2's header
    // compression does not insert it into the connection's table (where it
    // would only push out the values that do repeat) for nothing.
    let header_value = HeaderValue::from_str(&audit_id).ok().map(|mut v| {
        v.set_sensitive(true);
        v
    });
    let with_id = move |mut resp: Response| {
        if let Some(v) = header_value {
            resp.headers_mut().insert(names::AUDIT_ID, v);
        }
        resp
    };
    let logged = s.audit.as_ref().and_then(|auditor| {
        let user = req.extensions().get::<Authenticated>()?;
        let (level, omit) = auditor.policy.evaluate(&info_of(&req), &user.user);
        (level != Level::None).then_some((level, omit))
    });
    match logged {
        None => next.run(req).map(with_id).boxed(),
        Some((level, omit)) => audit_logged(s, audit_id, level, omit, req, next)
            .map(with_id)
            .boxed(),
    }
}

/// A request the audit policy logs: its events written as it is received,
/// as its response starts or completes.
async fn audit_logged(
    s: Arc<ChainState>,
    audit_id: String,
    level: super::audit::Level,
    omit: Vec<String>,
    mut req: Request,
    next: Next,
) -> Response {
    use super::audit::{self as audit_log, Level};
    let (Some(auditor), Some(user)) = (
        s.audit.as_ref(),
        req.extensions().get::<Authenticated>().cloned(),
    ) else {
        return next.run(req).await;
    };
    let info = info_of(&req);
    let received = audit_log::now_micro();
    let uri = req.uri().to_string();
    let ua = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let source_ip = req
        .extensions()
        .get::<ConnInfo>()
        .map(|c| c.remote.ip().to_string())
        .unwrap_or_default();
    let mut r = audit_log::Request {
        audit_id: &audit_id,
        level,
        info: &info,
        uri: &uri,
        user: &user.user,
        source_ip,
        user_agent: &ua,
        received: &received,
        object_meta: None,
    };
    let stage_on = |stage: &str| !omit.iter().any(|o| o == stage);
    if stage_on("RequestReceived") {
        auditor.write(audit_log::event(
            &r,
            "RequestReceived",
            None,
            None,
            None,
            serde_json::json!({}),
        ));
    }
    // Request and RequestResponse levels record the request body; every
    // level names the object a create or update sends in `objectRef`.
    let mut request_object = None;
    let writes_object = matches!(*req.method(), http::Method::POST | http::Method::PUT);
    if writes_object || (level >= Level::Request && *req.method() == http::Method::PATCH) {
        if let Some(e) = crate::endpoints::declared_too_large(req.headers()) {
            return e.into_response();
        }
        let (parts, body) = req.into_parts();
        let bytes = match axum::body::to_bytes(body, crate::endpoints::MAX_BODY_BYTES).await {
            Ok(b) => b,
            Err(_) => return ApiError::too_large(crate::endpoints::MAX_BODY_BYTES).into_response(),
        };
        request_object = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
        if writes_object {
            r.object_meta = request_object.as_ref().map(|o| o["metadata"].clone());
        }
        if level < Level::Request {
            request_object = None;
        }
        req = Request::from_parts(parts, axum::body::Body::from(bytes));
    }
    let resp = next.run(req).await;
    let code = resp.status().as_u16();
    let mut annotations = serde_json::json!({});
    if let Some(d) = resp.extensions().get::<AuthzDecision>() {
        annotations = serde_json::json!({"authorization.k8s.io/decision": d.decision, "authorization.k8s.io/reason": d.reason});
    }
    if info.is_long_running() {
        // Streams are audited when they start; the end is not awaited.
        if stage_on("ResponseStarted") {
            auditor.write(audit_log::event(
                &r,
                "ResponseStarted",
                Some(code),
                request_object,
                None,
                annotations,
            ));
        }
        return resp;
    }
    let mut response_object = None;
    let resp = if level == Level::RequestResponse {
        let (parts, body) = resp.into_parts();
        let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
            .await
            .unwrap_or_default();
        response_object = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
        Response::from_parts(parts, axum::body::Body::from(bytes))
    } else {
        resp
    };
    if stage_on("ResponseComplete") {
        auditor.write(audit_log::event(
            &r,
            "ResponseComplete",
            Some(code),
            request_object,
            response_object,
            annotations,
        ));
    }
    resp
}

pub(super) fn authorization(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    let info = info_of(&req);
    // Most requests are allowed by what the server holds (RBAC, the
    // privileged groups): handed on at once. Anything else (a refusal to
    // look at again, a remote authorizer) goes the whole way below.
    let allowed = req.extensions().get::<Authenticated>().and_then(|user| {
        let attrs = attributes(&info, &user.user);
        let began = crate::trace::start();
        match s.authorizer.authorize_now(&attrs)? {
            Decision::Allow(reason) => {
                crate::trace::stage(
                    began,
                    "authorization",
                    "ok",
                    || serde_json::json!({"decision": "allow", "reason": reason}),
                );
                Some(reason)
            }
            Decision::Deny(_) | Decision::NoOpinion => None,
        }
    });
    match allowed {
        Some(reason) => allow(&s, reason, req, next),
        None => Box::pin(authorize(s, info, req, next)),
    }
}

fn attributes<'a>(info: &'a RequestInfo, user: &'a crate::auth::UserInfo) -> Attributes<'a> {
    Attributes {
        user: Some(user),
        verb: &info.verb,
        resource_request: info.is_resource_request,
        path: &info.path,
        api_group: &info.api_group,
        api_version: &info.api_version,
        namespace: &info.namespace,
        resource: &info.resource,
        subresource: &info.subresource,
        name: &info.name,
    }
}

/// The request handed on, its answer marked with why it was allowed when
/// the audit filter may record it.
fn allow(s: &ChainState, reason: String, req: Request, next: Next) -> Answer {
    if s.audit.is_none() {
        return next.run(req);
    }
    next.run(req)
        .map(move |mut resp| {
            resp.extensions_mut().insert(AuthzDecision {
                decision: "allow",
                reason,
            });
            resp
        })
        .boxed()
}

/// The decision with remote authorizers asked, and a refusal decided
/// again once the policy caches have caught up.
async fn authorize(
    s: Arc<ChainState>,
    info: Arc<RequestInfo>,
    req: Request,
    next: Next,
) -> Response {
    // The user is borrowed from the request while the decision is made;
    // the request moves on only once it is allowed.
    // Ok(the reason it is allowed), or the refusal to answer with.
    let verdict = {
        let Some(user) = req.extensions().get::<Authenticated>() else {
            return ApiError::unauthorized().into_response();
        };
        let attrs = attributes(&info, &user.user);
        let began = crate::trace::start();
        let mut decision = s.authorizer.authorize_async(&attrs).await;
        if !matches!(decision, Decision::Allow(_)) {
            // Refused: perhaps by a policy that is already changed but not yet
            // seen (a RoleBinding created by the previous request). Decide
            // again once every acknowledged policy write is reflected. Allowed
            // requests never wait; a revocation takes effect as the caches
            // follow, as upstream's informers do.
            s.authorizer.settle().await;
            decision = s.authorizer.authorize_async(&attrs).await;
        }
        crate::trace::stage(
            began,
            "authorization",
            if matches!(decision, Decision::Allow(_)) {
                "ok"
            } else {
                "error"
            },
            || match &decision {
                Decision::Allow(reason) => {
                    serde_json::json!({"decision": "allow", "reason": reason})
                }
                Decision::Deny(reason) => serde_json::json!({"decision": "deny", "reason": reason}),
                Decision::NoOpinion => serde_json::json!({"decision": "no opinion"}),
            },
        );
        match decision {
            Decision::Allow(reason) => Ok(reason),
            Decision::Deny(_) | Decision::NoOpinion => Err(forbidden(&info, &attrs)),
        }
    };
    match verdict {
        Err(refusal) => refusal,
        Ok(reason) => allow(&s, reason, req, next).await,
    }
}

/// The 403 of a refused request, naming what was refused and why.
fn forbidden(info: &RequestInfo, attrs: &Attributes<'_>) -> Response {
    let why = forbidden_message(attrs);
    let err = if info.is_resource_request {
        let qualified = crate::api::status::qualified_resource(&info.api_group, &info.resource);
        let head = if info.name.is_empty() {
            format!("{qualified} is forbidden")
        } else {
            format!(
                "{qualified} {} is forbidden",
                crate::api::go_quote(&info.name)
            )
        };
        ApiError::forbidden(format!("{head}: {why}")).with_details(Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                name: (!info.name.is_empty()).then(|| info.name.clone()),
                group: (!info.api_group.is_empty()).then(|| info.api_group.clone()),
                kind: Some(info.resource.clone()),
                ..Default::default()
            },
        ))
    } else {
        ApiError::forbidden(format!("forbidden: {why}"))
    };
    let mut resp = nosniff(err.into_response());
    resp.extensions_mut().insert(AuthzDecision {
        decision: "forbid",
        reason: String::new(),
    });
    resp
}

/// upstream's responsewriters.Forbidden marks its answers `nosniff` (the
/// authorization and impersonation filters answer through it).
pub(super) fn nosniff(mut resp: Response) -> Response {
    resp.headers_mut().insert(
        "x-content-type-options",
        axum::http::HeaderValue::from_static("nosniff"),
    );
    resp
}

/// upstream's WithTimeoutForNonLongRunningRequests; `?timeout=` may shorten it.
pub(super) fn timeout(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    let info = info_of(&req);
    if info.is_long_running() {
        return next.run(req);
    }
    let mut limit = s.request_timeout;
    if let Some(t) = query_value(req.uri().query(), "timeout").filter(|t| !t.is_empty()) {
        // upstream's WithRequestDeadline: a timeout that does not parse is
        // refused before the request runs (a DELETE must not go ahead).
        // Go's ParseDuration takes a sign; a negative timeout is ignored.
        match crate::component_base::duration::parse(t.strip_prefix('-').unwrap_or(&t)) {
            Ok(_) if t.starts_with('-') => {}
            Ok(asked) if !asked.is_zero() && asked < limit => limit = asked,
            Ok(_) => {}
            Err(_) => {
                return Box::pin(std::future::ready(
                    ApiError::bad_request(format!(
                    "invalid timeout specified in the request URL - time: invalid duration {t:?}"
                ))
                    .into_response(),
                ))
            }
        }
    }
    tokio::time::timeout(limit, next.run(req))
        .map(|answered| {
            answered.unwrap_or_else(|_| {
                ApiError::timeout(
                    "request did not complete within requested timeout - context deadline exceeded",
                )
                .into_response()
            })
        })
        .boxed()
}
