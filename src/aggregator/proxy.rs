//! The proxy to aggregated API servers (upstream's kube-aggregator
//! `proxyHandler`): every request under `/apis/<group>/<version>` of an
//! APIService with `spec.service` goes to the Service behind it, resolved
//! through its Endpoints (an ExternalName Service through its name), over
//! TLS verified with `spec.caBundle` against the name
//! `<service>.<namespace>.svc`, presenting kapi's front-proxy client
//! certificate and naming the authenticated user in `X-Remote-*` headers.
//! Bodies stream both ways (watches), and upgrades (exec, port-forward)
//! are spliced through.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::future::BoxFuture;
use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::auth::authenticator::Authenticated;
use crate::auth::request_header::{
    HeaderNames, REMOTE_EXTRA_PREFIX, REMOTE_GROUP_HEADER, REMOTE_UID_HEADER, REMOTE_USER_HEADER,
};
use crate::auth::UserInfo;
use crate::registry::Registries;
use crate::server::filters::ConnInfo;

/// `spec.service` of an APIService.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub port: u16,
}

impl ServiceRef {
    /// The name the backend's serving certificate is verified against, as upstream.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.name, self.namespace)
    }
}

/// A remote APIService as the proxy routes to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub api_service: String,
    pub group: String,
    pub version: String,
    pub service: ServiceRef,
    pub ca_bundle: Option<Vec<u8>>,
    pub insecure: bool,
    /// The APIService's Available condition is True.
    pub available: bool,
}

impl Target {
    /// From an APIService object; `None` for a local one.
    pub fn from_api_service(obj: &Value) -> Option<Target> {
        use base64::Engine;
        let spec = &obj["spec"];
        let svc = spec["service"].as_object()?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        let ca_bundle = spec["caBundle"]
            .as_str()
            .filter(|s| !s.is_empty())
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
        Some(Target {
            api_service: obj["metadata"]["name"].as_str().unwrap_or("").to_string(),
            group: text(spec.get("group")),
            version: text(spec.get("version")),
            service: ServiceRef {
                namespace: text(svc.get("namespace")),
                name: text(svc.get("name")),
                port: svc
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
            },
            ca_bundle,
            insecure: spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false),
            available: is_available(obj),
        })
    }
}

/// Whether an APIService's Available condition is True.
pub fn is_available(obj: &Value) -> bool {
    obj["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Available" && c["status"] == "True")
    })
}

/// Why a Service cannot be reached, with upstream's availability reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    pub reason: &'static str,
    pub message: String,
}

/// Where a Service's port is served: upstream's `ResolveEndpoint` with the
/// checks of its availability controller (ServiceNotFound, ServicePortError,
/// EndpointsNotFound, MissingEndpoints) and their messages.
pub async fn resolve(
    registries: &Registries,
    s: &ServiceRef,
) -> Result<(String, u16), Unreachable> {
    let (ns, name) = (&s.namespace, &s.name);
    let access = |what: &str, e: String| Unreachable {
        reason: if what == "service" {
            "ServiceAccessError"
        } else {
            "EndpointsAccessError"
        },
        message: format!("service/{name} in {ns:?} cannot be checked due to: {e}"),
    };
    let services = registries
        .get("", "v1", "services")
        .ok_or_else(|| access("service", "services are not served".into()))?;
    let svc = match services.get_object(ns, name, None).await {
        Ok(b) => {
            serde_json::from_slice::<Value>(&b).map_err(|e| access("service", e.to_string()))?
        }
        Err(e) if e.code == 404 => {
            return Err(Unreachable {
                reason: "ServiceNotFound",
                message: format!("service/{name} in {ns:?} is not present"),
            })
        }
        Err(e) => return Err(access("service", e.to_string())),
    };
    if svc["spec"]["type"] == "ExternalName" {
        let host = svc["spec"]["externalName"].as_str().unwrap_or("");
        return Ok((host.trim_end_matches('.').to_string(), s.port));
    }
    let port_name = svc["spec"]["ports"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["port"].as_u64() == Some(u64::from(s.port)))
        })
        .map(|p| p["name"].as_str().unwrap_or("").to_string())
        .ok_or_else(|| Unreachable {
            reason: "ServicePortError",
            message: format!(
                "service/{name} in {ns:?} is not listening on port {}",
                s.port
            ),
        })?;
    let endpoints = registries
        .get("", "v1", "endpoints")
        .ok_or_else(|| access("endpoints", "endpoints are not served".into()))?;
    let ep = match endpoints.get_object(ns, name, None).await {
        Ok(b) => {
            serde_json::from_slice::<Value>(&b).map_err(|e| access("endpoints", e.to_string()))?
        }
        Err(e) if e.code == 404 => {
            return Err(Unreachable {
                reason: "EndpointsNotFound",
                message: format!("cannot find endpoints for service/{name} in {ns:?}"),
            })
        }
        Err(e) => return Err(access("endpoints", e.to_string())),
    };
    for subset in ep["subsets"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let Some(ip) = subset["addresses"]
            .as_array()
            .and_then(|a| a.first())
            .and_then(|a| a["ip"].as_str())
        else {
            continue;
        };
        let port = subset["ports"]
            .as_array()
            .and_then(|ps| {
                ps.iter()
                    .find(|p| p["name"].as_str().unwrap_or("") == port_name)
            })
            .and_then(|p| p["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok());
        if let Some(port) = port {
            return Ok((ip.to_string(), port));
        }
    }
    Err(Unreachable {
        reason: "MissingEndpoints",
        message: format!(
            "endpoints for service/{name} in {ns:?} have no addresses with port name {port_name:?}"
        ),
    })
}

/// `host:port`, bracketing IPv6 addresses.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The socket addresses of a resolved host.
pub async fn addresses(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("dial tcp: lookup {host}: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("dial tcp: lookup {host}: no such host"));
    }
    Ok(addrs)
}

/// An error of a call to a backend, worded like Go's (`dial tcp
/// 127.0.0.1:8443: connect: connection refused`) where it can be.
pub fn describe_error(e: &reqwest::Error, addrs: &[SocketAddr]) -> String {
    let addr = addrs.first().map(|a| a.to_string()).unwrap_or_default();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut deepest = e.to_string();
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!("dial tcp {addr}: connect: connection refused")
                }
                std::io::ErrorKind::TimedOut => return format!("dial tcp {addr}: i/o timeout"),
                std::io::ErrorKind::ConnectionReset => {
                    return format!("read tcp {addr}: read: connection reset by peer")
                }
                _ => {}
            }
        }
        deepest = err.to_string();
        cur = err.source();
    }
    if e.is_timeout() {
        return format!("dial tcp {addr}: i/o timeout");
    }
    deepest
}

/// Connection headers that end at each hop (RFC 9110 7.6.1).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
        })
        && headers.contains_key(header::UPGRADE)
}

/// A request body reqwest can send (it wants `Sync`, axum's body is not).
struct SyncBody(Mutex<axum::body::Body>);

impl http_body::Body for SyncBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let body = self.get_mut().0.get_mut();
        Pin::new(body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.lock().is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.lock().size_hint()
    }
}

/// upstream answers a request for an unavailable APIService in plain text.
fn unavailable(message: &str) -> Response {
    let mut r = (StatusCode::SERVICE_UNAVAILABLE, format!("{message}\n")).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The user a request goes on as, in the headers of upstream's
/// `transport.SetAuthProxyHeaders`.
pub fn set_user_headers(headers: &mut HeaderMap, user: &UserInfo) {
    let mut put = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(n, v);
        }
    };
    put(REMOTE_USER_HEADER, &user.name);
    if !user.uid.is_empty()
        && crate::component_base::feature_gates::enabled("RemoteRequestHeaderUID")
    {
        put(REMOTE_UID_HEADER, &user.uid);
    }
    for g in &user.groups {
        put(REMOTE_GROUP_HEADER, g);
    }
    for (key, values) in &user.extra {
        let escaped: String = key
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        for v in values {
            put(&format!("{REMOTE_EXTRA_PREFIX}{escaped}"), v);
        }
    }
}

/// The proxy: which group versions go where, and the clients that go there.
pub struct Proxy {
    registries: Registries,
    /// kapi's front-proxy client certificate and key (PEM).
    identity: Option<Vec<u8>>,
    targets: RwLock<HashMap<(String, String), Arc<Target>>>,
    clients: Mutex<HashMap<String, reqwest::Client>>,
}

impl Proxy {
    pub fn new(registries: Registries, identity_pem: Option<Vec<u8>>) -> Self {
        Proxy {
            registries,
            identity: identity_pem,
            targets: RwLock::default(),
            clients: Mutex::default(),
        }
    }

    pub fn registries(&self) -> &Registries {
        &self.registries
    }

    /// Replaces the routing table (the availability controller keeps it current).
    pub fn set_targets(&self, targets: Vec<Target>) {
        let map = targets
            .into_iter()
            .map(|t| ((t.group.clone(), t.version.clone()), Arc::new(t)))
            .collect();
        *self.targets.write() = map;
    }

    /// The remote APIService serving `path`, if any.
    pub fn target_for_path(&self, path: &str) -> Option<Arc<Target>> {
        let rest = path.strip_prefix("/apis/")?;
        let mut parts = rest.splitn(3, '/');
        let (group, version) = (parts.next()?, parts.next()?);
        if group.is_empty() || version.is_empty() {
            return None;
        }
        self.targets
            .read()
            .get(&(group.to_string(), version.to_string()))
            .cloned()
    }

    /// A client for a target at `addrs` (cached: connections are reused).
    pub fn client(
        &self,
        t: &Target,
        addrs: &[SocketAddr],
        http1_only: bool,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Client, String> {
        use sha2::Digest;
        let server_name = t.service.server_name();
        let ca_hash = t
            .ca_bundle
            .as_deref()
            .map(|c| format!("{:x}", sha2::Sha256::digest(c)))
            .unwrap_or_default();
        let key = format!(
            "{server_name}|{addrs:?}|{ca_hash}|{}|{http1_only}|{timeout:?}",
            t.insecure
        );
        if let Some(c) = self.clients.lock().get(&key) {
            return Ok(c.clone());
        }
        let _ = crate::crypto_provider();
        let mut b = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .resolve_to_addrs(&server_name, addrs)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Some(t) = timeout {
            b = b.timeout(t);
        }
        if let Some(ca) = &t.ca_bundle {
            let certs =
                reqwest::Certificate::from_pem_bundle(ca).map_err(|e| format!("caBundle: {e}"))?;
            b = b.tls_certs_only(certs);
        }
        if t.insecure {
            b = b.danger_accept_invalid_certs(true);
        }
        if let Some(id) = &self.identity {
            b = b.identity(
                reqwest::Identity::from_pem(id)
                    .map_err(|e| format!("front-proxy client certificate: {e}"))?,
            );
        }
        if http1_only {
            b = b.http1_only();
        }
        let client = b.build().map_err(|e| e.to_string())?;
        let mut clients = self.clients.lock();
        if clients.len() > 64 {
            clients.clear();
        }
        clients.insert(key, client.clone());
        Ok(client)
    }

    /// Claims a request for a remote APIService, or gives it back.
    pub fn intercept(
        self: &Arc<Self>,
        req: Request,
    ) -> Result<BoxFuture<'static, Response>, Request> {
        let Some(target) = self.target_for_path(req.uri().path()) else {
            return Err(req);
        };
        let this = self.clone();
        Ok(Box::pin(async move { this.forward(target, req).await }))
    }

    async fn forward(&self, t: Arc<Target>, mut req: Request) -> Response {
        if !t.available {
            return unavailable("service unavailable");
        }
        let Some(user) = req
            .extensions()
            .get::<Authenticated>()
            .map(|a| a.user.clone())
        else {
            return (StatusCode::INTERNAL_SERVER_ERROR, "missing user\n").into_response();
        };
        let (host, port) = match resolve(&self.registries, &t.service).await {
            Ok(hp) => hp,
            Err(e) => {
                tracing::debug!(apiservice = %t.api_service, error = %e.message, "cannot resolve the service");
                return unavailable("service unavailable");
            }
        };
        let addrs = match addresses(&host, port).await {
            Ok(a) => a,
            Err(e) => return unavailable(&e),
        };
        let upgrade = is_upgrade(req.headers());
        let client = match self.client(&t, &addrs, upgrade, None) {
            Ok(c) => c,
            Err(e) => return unavailable(&e),
        };
        let remote_ip = req.extensions().get::<ConnInfo>().map(|c| c.remote.ip());
        let on_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
        let path_and_query = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| req.uri().path().to_string());
        let url = format!(
            "https://{}{path_and_query}",
            host_port(&t.service.server_name(), port)
        );
        let mut headers = HeaderMap::new();
        for (name, value) in req.headers() {
            let n = name.as_str();
            let hop =
                HOP_BY_HOP.contains(&n) && !(upgrade && (n == "connection" || n == "upgrade"));
            if hop
                || n == "host"
                || n == "content-length"
                || n == "authorization"
                || n.starts_with("impersonate-")
                || HeaderNames::standard().is_auth_header(n)
            {
                continue;
            }
            headers.append(name.clone(), value.clone());
        }
        set_user_headers(&mut headers, &user);
        if let Some(ip) = remote_ip {
            let prior = req
                .headers()
                .get("x-forwarded-for")
                .and_then(|v| v.to_str().ok())
                .map(|v| format!("{v}, {ip}"))
                .unwrap_or_else(|| ip.to_string());
            if let Ok(v) = HeaderValue::from_str(&prior) {
                headers.insert("x-forwarded-for", v);
            }
        }
        let method = req.method().clone();
        let body = std::mem::take(req.body_mut());
        let sent = client
            .request(method, &url)
            .headers(headers)
            .body(reqwest::Body::wrap(SyncBody(Mutex::new(body))))
            .send()
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                let why = describe_error(&e, &addrs);
                tracing::debug!(apiservice = %t.api_service, error = %why, "error while proxying request");
                return unavailable(&why);
            }
        };
        let status = resp.status();
        let mut out_headers = HeaderMap::new();
        for (name, value) in resp.headers() {
            let n = name.as_str();
            let keep_for_upgrade =
                status == StatusCode::SWITCHING_PROTOCOLS && (n == "connection" || n == "upgrade");
            if HOP_BY_HOP.contains(&n) && !keep_for_upgrade {
                continue;
            }
            out_headers.append(name.clone(), value.clone());
        }
        if status == StatusCode::SWITCHING_PROTOCOLS {
            let Some(on_upgrade) = on_upgrade else {
                return unavailable("the backend switched protocols unasked");
            };
            tokio::spawn(async move {
                let (client_side, backend) = match (on_upgrade.await, resp.upgrade().await) {
                    (Ok(c), Ok(b)) => (c, b),
                    (c, b) => {
                        tracing::debug!(client = ?c.err(), backend = ?b.err(), "upgrade failed");
                        return;
                    }
                };
                let mut client_side = hyper_util::rt::TokioIo::new(client_side);
                let mut backend = backend;
                let _ = tokio::io::copy_bidirectional(&mut client_side, &mut backend).await;
            });
            let mut r = Response::new(axum::body::Body::empty());
            *r.status_mut() = status;
            *r.headers_mut() = out_headers;
            return r;
        }
        let body = http::Response::<reqwest::Body>::from(resp).into_body();
        let mut r = Response::new(axum::body::Body::new(body));
        *r.status_mut() = status;
        *r.headers_mut() = out_headers;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_headers_as_upstream_sets_them() {
        let mut h = HeaderMap::new();
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("scopes.example.com/a b".to_string(), vec!["x".to_string()]);
        set_user_headers(
            &mut h,
            &UserInfo {
                name: "admin".into(),
                uid: String::new(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                extra,
            },
        );
        assert_eq!(h["x-remote-user"], "admin");
        assert!(h.get("x-remote-uid").is_none());
        let groups: Vec<_> = h.get_all("x-remote-group").iter().collect();
        assert_eq!(groups, ["system:masters", "system:authenticated"]);
        assert_eq!(h["x-remote-extra-scopes.example.com%2Fa%20b"], "x");
        // And back, as the request-header authenticator reads them.
        let user = HeaderNames::standard().user(&h).expect("user");
        assert_eq!(user.name, "admin");
        assert_eq!(user.extra["scopes.example.com/a b"], ["x"]);
    }

    #[test]
    fn targets_from_api_services() {
        let obj = serde_json::json!({"metadata": {"name": "v1alpha1.wardle.example.com"}, "spec": {"group": "wardle.example.com", "version": "v1alpha1", "service": {"namespace": "kube-system", "name": "w"}}});
        let t = Target::from_api_service(&obj).expect("remote");
        assert_eq!(t.service.port, 443);
        assert!(!t.available);
        assert_eq!(t.service.server_name(), "w.kube-system.svc");
        let local = serde_json::json!({"metadata": {"name": "v1.apps"}, "spec": {"group": "apps", "version": "v1"}});
        assert!(Target::from_api_service(&local).is_none());
        assert_eq!(host_port("::1", 443), "[::1]:443");
    }
}
