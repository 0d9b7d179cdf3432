//! `kapi sample-apiserver`: upstream's sample-apiserver in small, an
//! aggregated API server to register behind kapi. It serves
//! `wardle.example.com/v1alpha1` Flunders (namespaced) and Fischers
//! (cluster-scoped) from memory over HTTPS, with discovery, list, get,
//! create, update, patch, delete, deletecollection and watch, Table output
//! for kubectl, and upstream's BanFlunder admission (a Flunder may not take
//! a name a Fischer's `disallowedFlunders` lists).
//!
//! Who is asking comes from a front proxy only: a client certificate
//! signed by `--requestheader-client-ca-file` (kapi's front-proxy CA) with
//! an allowed common name, and the user in `X-Remote-User`,
//! `X-Remote-Group` and `X-Remote-Extra-*`. Every other request gets a 401.
//! Each request is logged with the user it came as, and a created object
//! records its creator in the `wardle.example.com/created-by` annotation.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use http::{header, HeaderValue, StatusCode};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::request_info::{query_value, RequestInfo};
use crate::api::selector::{FieldSelector, LabelSelector};
use crate::api::ApiError;
use crate::auth::request_header::HeaderNames;
use crate::auth::x509::{ClientCertAuthority, ClientCertIdentity};
use crate::auth::UserInfo;
use crate::pki::ServingNames;
use crate::registry::strategy::{AGE_DESCRIPTION, NAME_DESCRIPTION};
use crate::registry::validation::{dns1123_subdomain, FieldError};
use crate::server::filters::ConnInfo;
use crate::server::serve::{self, TlsServing};

pub const GROUP: &str = "wardle.example.com";
pub const VERSION: &str = "v1alpha1";
/// The annotation a created object records its creator in.
pub const CREATED_BY: &str = "wardle.example.com/created-by";

const MAX_BODY: usize = 3 * 1024 * 1024;
/// Watch events kept for watches that resume from a resourceVersion.
const HISTORY: usize = 1000;

struct Kind {
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
}

const KINDS: &[Kind] = &[
    Kind {
        plural: "fischers",
        singular: "fischer",
        kind: "Fischer",
        namespaced: false,
    },
    Kind {
        plural: "flunders",
        singular: "flunder",
        kind: "Flunder",
        namespaced: true,
    },
];

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn api_version() -> String {
    format!("{GROUP}/{VERSION}")
}

/// The names the self-generated serving certificate carries: loopback,
/// and the Service names kapi verifies it by (`<service>.<namespace>.svc`).
pub fn default_service_names() -> Vec<String> {
    vec![
        format!("{}.kube-system.svc", GROUP.replace('.', "-")),
        "api.wardle.svc".to_string(),
    ]
}

/// What `kapi sample-apiserver` is started with.
#[derive(Debug, Clone)]
pub struct Options {
    pub bind_address: IpAddr,
    /// 0 picks a free port.
    pub secure_port: u16,
    pub tls_cert_file: Option<PathBuf>,
    pub tls_private_key_file: Option<PathBuf>,
    /// Where a self-generated CA and serving certificate are kept (and reused).
    pub cert_dir: PathBuf,
    /// DNS names for the self-generated serving certificate besides localhost.
    pub service_names: Vec<String>,
    pub requestheader_client_ca_file: PathBuf,
    /// Common names a front proxy may present; empty accepts any.
    pub requestheader_allowed_names: Vec<String>,
}

/// Where each request's line goes (the CLI prints it).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// A sample server that is listening.
pub struct Started {
    pub addr: SocketAddr,
    /// The CA of a self-generated serving certificate (for `caBundle`).
    pub ca_file: Option<PathBuf>,
    stop: CancellationToken,
    serving: JoinHandle<()>,
}

impl Started {
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.serving.await;
    }
}

pub async fn start(opts: Options, log: Log) -> anyhow::Result<Started> {
    let requestheader_ca = std::fs::read_to_string(&opts.requestheader_client_ca_file)
        .with_context(|| {
            format!(
                "--requestheader-client-ca-file {}",
                opts.requestheader_client_ca_file.display()
            )
        })?;
    let (cert, key, ca_file) = match (&opts.tls_cert_file, &opts.tls_private_key_file) {
        (Some(c), Some(k)) => (
            std::fs::read_to_string(c)
                .with_context(|| format!("--tls-cert-file {}", c.display()))?,
            std::fs::read_to_string(k)
                .with_context(|| format!("--tls-private-key-file {}", k.display()))?,
            None,
        ),
        _ => {
            let mut ips = vec![
                IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
                IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ];
            if !opts.bind_address.is_unspecified() && !ips.contains(&opts.bind_address) {
                ips.push(opts.bind_address);
            }
            let mut dns = vec!["localhost".to_string()];
            dns.extend(opts.service_names.iter().cloned());
            let names = ServingNames { dns, ips };
            let dir = opts.cert_dir.clone();
            let (ca, serving) = tokio::task::spawn_blocking(move || {
                crate::pki::ensure_ca_and_serving(
                    &dir,
                    "wardle-ca",
                    "wardle-ca",
                    "apiserver",
                    &names,
                )
            })
            .await
            .context("certificate task")?
            .with_context(|| format!("--cert-dir {}", opts.cert_dir.display()))?;
            (serving.cert_pem, serving.key_pem, Some(ca.cert_path))
        }
    };
    let authority = ClientCertAuthority::new(&[&requestheader_ca])
        .map_err(|e| anyhow::anyhow!("--requestheader-client-ca-file: {e}"))?;
    let tls = TlsServing::new(&cert, &key, authority).map_err(|e| anyhow::anyhow!(e))?;
    let (listener, addr) = serve::bind(SocketAddr::new(opts.bind_address, opts.secure_port))
        .await
        .with_context(|| format!("--secure-port {}", opts.secure_port))?;
    let (tx, _) = broadcast::channel(1024);
    let state = Arc::new(Server {
        store: Mutex::new(Store::default()),
        events: tx,
        allowed_names: opts.requestheader_allowed_names.clone(),
        log,
    });
    let app = Router::new().fallback(move |req: Request| {
        let s = state.clone();
        async move { s.handle(req).await }
    });
    let stop = CancellationToken::new();
    let serving = tokio::spawn(serve::serve(
        listener,
        tls,
        app,
        stop.clone(),
        Duration::from_secs(5),
    ));
    Ok(Started {
        addr,
        ca_file,
        stop,
        serving,
    })
}

#[derive(Debug, Clone)]
struct Event {
    rv: u64,
    kind: &'static str,
    ty: &'static str,
    object: Value,
}

#[derive(Default)]
struct Store {
    /// (plural, namespace, name) -> object
    objects: BTreeMap<(String, String, String), Value>,
    rv: u64,
    history: VecDeque<Arc<Event>>,
}

struct Server {
    store: Mutex<Store>,
    events: broadcast::Sender<Arc<Event>>,
    allowed_names: Vec<String>,
    log: Log,
}

/// How a list or watch selects objects.
struct Selection {
    namespace: String,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Selection {
    fn matches(&self, obj: &Value) -> bool {
        let meta = &obj["metadata"];
        let ns = meta["namespace"].as_str().unwrap_or("");
        if !self.namespace.is_empty() && ns != self.namespace {
            return false;
        }
        let labels: BTreeMap<String, String> = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let fields = BTreeMap::from([
            (
                "metadata.name".to_string(),
                meta["name"].as_str().unwrap_or("").to_string(),
            ),
            ("metadata.namespace".to_string(), ns.to_string()),
        ]);
        self.labels.matches(&labels) && self.fields.matches(&fields)
    }
}

/// Table output as upstream's default table convertor gives it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    Json,
    /// `includeObject`: None, Metadata (the default) or Object.
    Table(Include),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Include {
    None,
    Metadata,
    Object,
}

fn output(req: &Request) -> Output {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let table = accept.split(',').any(|r| {
        let r = r.replace(' ', "");
        r.contains("as=Table") && r.contains("g=meta.k8s.io")
    });
    if !table {
        return Output::Json;
    }
    Output::Table(
        match query_value(req.uri().query(), "includeObject").as_deref() {
            Some("None") => Include::None,
            Some("Object") => Include::Object,
            _ => Include::Metadata,
        },
    )
}

fn table(objects: &[&Value], rv: Option<String>, include: Include) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = json!({"cells": [o["metadata"]["name"], o["metadata"]["creationTimestamp"]]});
            match include {
                Include::None => {}
                Include::Object => row["object"] = (*o).clone(),
                Include::Metadata => {
                    row["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]})
                }
            }
            row
        })
        .collect();
    let mut meta = json!({});
    if let Some(rv) = rv {
        meta["resourceVersion"] = json!(rv);
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": AGE_DESCRIPTION, "priority": 0},
        ],
        "rows": rows,
    })
}

fn json_response(code: StatusCode, v: &Value) -> Response {
    let mut r = (code, serde_json::to_vec(v).unwrap_or_default()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn text(code: StatusCode, body: &'static str) -> Response {
    let mut r = (code, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn resource_list() -> Value {
    let resources: Vec<Value> = KINDS
        .iter()
        .map(|k| json!({"name": k.plural, "singularName": k.singular, "namespaced": k.namespaced, "kind": k.kind, "verbs": VERBS}))
        .collect();
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version(), "resources": resources})
}

fn api_group() -> Value {
    let gv = json!({"groupVersion": api_version(), "version": VERSION});
    json!({"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": [gv], "preferredVersion": gv})
}

impl Server {
    /// The user a front proxy vouches for, or why there is none.
    fn authenticate(&self, req: &Request) -> Result<UserInfo, String> {
        match req
            .extensions()
            .get::<ConnInfo>()
            .and_then(|c| c.client_cert.as_ref())
        {
            Some(ClientCertIdentity::Verified(proxy)) => {
                if !self.allowed_names.is_empty() && !self.allowed_names.contains(&proxy.name) {
                    return Err(format!(
                        "x509: subject with cn={} is not in the allowed list",
                        proxy.name
                    ));
                }
                HeaderNames::standard()
                    .user(req.headers())
                    .ok_or_else(|| "the front proxy named no user".to_string())
            }
            Some(ClientCertIdentity::Rejected(why)) => Err(why.clone()),
            Some(ClientCertIdentity::FrontProxy { .. }) | None => {
                Err("no client certificate of a front proxy".into())
            }
        }
    }

    async fn handle(self: Arc<Self>, req: Request) -> Response {
        let path = req.uri().path().to_string();
        if matches!(path.as_str(), "/healthz" | "/livez" | "/readyz") {
            return text(StatusCode::OK, "ok");
        }
        let user = match self.authenticate(&req) {
            Ok(u) => u,
            Err(why) => {
                (self.log)(&format!("{} {path}: unauthorized: {why}", req.method()));
                return ApiError::unauthorized().into_response();
            }
        };
        match path.trim_end_matches('/') {
            "/apis" => {
                let doc =
                    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]});
                return json_response(StatusCode::OK, &doc);
            }
            "/apis/wardle.example.com" => return json_response(StatusCode::OK, &api_group()),
            "/apis/wardle.example.com/v1alpha1" => {
                return json_response(StatusCode::OK, &resource_list())
            }
            "/version" => {
                let v = json!({"major": "1", "minor": "0", "gitVersion": "v1.0.0-wardle", "platform": "linux/amd64"});
                return json_response(StatusCode::OK, &v);
            }
            _ => {}
        }
        (self.log)(&format!(
            "{} {} user={:?} groups={:?}",
            req.method(),
            req.uri()
                .path_and_query()
                .map_or(path.as_str(), |p| p.as_str()),
            user.name,
            user.groups
        ));
        match self.serve_resource(req, &user).await {
            Ok(r) => r,
            Err(e) => e.into_response(),
        }
    }

    async fn serve_resource(&self, req: Request, user: &UserInfo) -> Result<Response, ApiError> {
        let info = RequestInfo::parse(req.method(), req.uri().path(), req.uri().query());
        if !info.is_resource_request || info.api_group != GROUP || info.api_version != VERSION {
            return Ok(text(StatusCode::NOT_FOUND, "404 page not found\n"));
        }
        let kind = KINDS
            .iter()
            .find(|k| k.plural == info.resource)
            .ok_or_else(ApiError::resource_not_found)?;
        if !info.subresource.is_empty() {
            return Err(ApiError::resource_not_found());
        }
        let ns = info.namespace.clone();
        if !kind.namespaced && !ns.is_empty() {
            return Err(ApiError::resource_not_found());
        }
        let collection_verb = matches!(info.verb.as_str(), "list" | "watch" | "deletecollection");
        if kind.namespaced && ns.is_empty() && !collection_verb && info.verb != "create" {
            return Err(ApiError::resource_not_found());
        }
        let out = output(&req);
        let query = req.uri().query().map(String::from);
        let q = |k: &str| query_value(query.as_deref(), k);
        let selection = || -> Result<Selection, ApiError> {
            Ok(Selection {
                namespace: ns.clone(),
                labels: LabelSelector::parse(&q("labelSelector").unwrap_or_default())
                    .map_err(ApiError::bad_request)?,
                fields: FieldSelector::parse(&q("fieldSelector").unwrap_or_default())
                    .map_err(ApiError::bad_request)?,
            })
        };
        match info.verb.as_str() {
            "list" => Ok(self.list(kind, &selection()?, out)),
            "watch" => {
                let timeout = q("timeoutSeconds")
                    .and_then(|t| t.parse::<u64>().ok())
                    .map(Duration::from_secs);
                let initial = q("sendInitialEvents").is_some_and(|v| v == "true");
                self.watch(
                    kind,
                    selection()?,
                    q("resourceVersion"),
                    initial,
                    out,
                    timeout,
                )
            }
            "get" => {
                let obj = self.get(kind, &ns, &info.name)?;
                Ok(self.respond(StatusCode::OK, &obj, out))
            }
            "create" => {
                if kind.namespaced && ns.is_empty() {
                    return Err(ApiError::resource_not_found());
                }
                let body = read_json(req).await?;
                let obj = self.create(kind, &ns, body, user)?;
                Ok(self.respond(StatusCode::CREATED, &obj, out))
            }
            "update" => {
                let body = read_json(req).await?;
                let obj = self.update(kind, &ns, &info.name, |_| Ok(body))?;
                Ok(self.respond(StatusCode::OK, &obj, out))
            }
            "patch" => {
                let ct = req
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY)
                    .await
                    .map_err(|_| ApiError::too_large(MAX_BODY))?;
                let patch: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                let obj =
                    self.update(kind, &ns, &info.name, |old| apply_patch(old, &ct, &patch))?;
                Ok(self.respond(StatusCode::OK, &obj, out))
            }
            "delete" => {
                let obj = self.delete(kind, &ns, &info.name)?;
                Ok(self.respond(StatusCode::OK, &obj, Output::Json))
            }
            "deletecollection" => {
                let sel = selection()?;
                let names: Vec<(String, String)> = {
                    let st = self.store.lock();
                    st.objects
                        .iter()
                        .filter(|((p, _, _), o)| p == kind.plural && sel.matches(o))
                        .map(|((_, n, name), _)| (n.clone(), name.clone()))
                        .collect()
                };
                let mut items = Vec::new();
                for (n, name) in names {
                    if let Ok(o) = self.delete(kind, &n, &name) {
                        items.push(o);
                    }
                }
                let rv = self.store.lock().rv.to_string();
                let list = json!({"kind": format!("{}List", kind.kind), "apiVersion": api_version(), "metadata": {"resourceVersion": rv}, "items": items});
                Ok(json_response(StatusCode::OK, &list))
            }
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    fn respond(&self, code: StatusCode, obj: &Value, out: Output) -> Response {
        match out {
            Output::Json => json_response(code, obj),
            Output::Table(include) => json_response(code, &table(&[obj], None, include)),
        }
    }

    fn list(&self, kind: &Kind, sel: &Selection, out: Output) -> Response {
        let st = self.store.lock();
        let items: Vec<&Value> = st
            .objects
            .iter()
            .filter(|((p, _, _), o)| p == kind.plural && sel.matches(o))
            .map(|(_, o)| o)
            .collect();
        let rv = st.rv.to_string();
        match out {
            Output::Table(include) => {
                json_response(StatusCode::OK, &table(&items, Some(rv), include))
            }
            Output::Json => {
                let list = json!({"kind": format!("{}List", kind.kind), "apiVersion": api_version(), "metadata": {"resourceVersion": rv}, "items": items});
                json_response(StatusCode::OK, &list)
            }
        }
    }

    fn get(&self, kind: &Kind, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.store
            .lock()
            .objects
            .get(&(kind.plural.to_string(), ns.to_string(), name.to_string()))
            .cloned()
            .ok_or_else(|| ApiError::not_found(GROUP, kind.plural, name))
    }

    /// Records a change (under the store's lock) and tells the watchers.
    fn record(&self, st: &mut Store, kind: &Kind, ty: &'static str, object: Value) {
        let ev = Arc::new(Event {
            rv: st.rv,
            kind: kind.plural,
            ty,
            object,
        });
        st.history.push_back(ev.clone());
        while st.history.len() > HISTORY {
            st.history.pop_front();
        }
        let _ = self.events.send(ev);
    }

    fn check_body(&self, kind: &Kind, body: &Value) -> Result<(), ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request was not an object",
            ));
        }
        if let Some(k) = body["kind"].as_str().filter(|k| !k.is_empty()) {
            if k != kind.kind {
                return Err(ApiError::bad_request(format!(
                    "the kind {k:?} does not match the resource {:?}",
                    kind.plural
                )));
            }
        }
        if let Some(av) = body["apiVersion"].as_str().filter(|v| !v.is_empty()) {
            if av != api_version() {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({av}) does not match the expected API version ({})",
                    api_version()
                )));
            }
        }
        Ok(())
    }

    fn create(
        &self,
        kind: &Kind,
        ns: &str,
        mut obj: Value,
        user: &UserInfo,
    ) -> Result<Value, ApiError> {
        self.check_body(kind, &obj)?;
        let body_ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if kind.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request"));
        }
        let mut name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
        if name.is_empty() {
            if let Some(prefix) = obj["metadata"]["generateName"]
                .as_str()
                .filter(|p| !p.is_empty())
            {
                name = crate::registry::meta::generate_name(prefix);
            }
        }
        let mut errs: Vec<FieldError> = Vec::new();
        if name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        } else {
            for m in dns1123_subdomain(&name) {
                errs.push(FieldError::invalid("metadata.name", json!(name), m));
            }
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                GROUP,
                kind.kind,
                &name,
                errs.iter().map(FieldError::to_cause).collect(),
            ));
        }
        obj["apiVersion"] = json!(api_version());
        obj["kind"] = json!(kind.kind);
        let meta = &mut obj["metadata"];
        if !meta.is_object() {
            *meta = json!({});
        }
        meta["name"] = json!(name);
        if kind.namespaced {
            meta["namespace"] = json!(ns);
        } else if let Some(m) = meta.as_object_mut() {
            m.remove("namespace");
        }
        meta["uid"] = json!(uuid::Uuid::new_v4().to_string());
        meta["creationTimestamp"] = json!(crate::registry::meta::now_rfc3339());
        meta["generation"] = json!(1);
        if !meta["annotations"].is_object() {
            meta["annotations"] = json!({});
        }
        meta["annotations"][CREATED_BY] = json!(user.name);
        let mut st = self.store.lock();
        if kind.kind == "Flunder" {
            let banned = st.objects.iter().any(|((p, _, _), f)| {
                p == "fischers"
                    && f["disallowedFlunders"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|n| n.as_str() == Some(name.as_str())))
            });
            if banned {
                return Err(ApiError::forbidden(format!(
                    "flunders.{GROUP} {name:?} is forbidden: this name may not be used, please change the resource name"
                )));
            }
        }
        let key = (kind.plural.to_string(), ns.to_string(), name.clone());
        if st.objects.contains_key(&key) {
            return Err(ApiError::already_exists(GROUP, kind.plural, &name));
        }
        st.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
        st.objects.insert(key, obj.clone());
        self.record(&mut st, kind, "ADDED", obj.clone());
        Ok(obj)
    }

    fn update(
        &self,
        kind: &Kind,
        ns: &str,
        name: &str,
        make_new: impl FnOnce(&Value) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let mut st = self.store.lock();
        let key = (kind.plural.to_string(), ns.to_string(), name.to_string());
        let old = st
            .objects
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(GROUP, kind.plural, name))?;
        let mut new = make_new(&old)?;
        self.check_body(kind, &new)?;
        let given = new["metadata"]["name"].as_str().unwrap_or(name);
        if given != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({given}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(rv) = new["metadata"]["resourceVersion"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            if Some(rv) != old["metadata"]["resourceVersion"].as_str() {
                return Err(ApiError::conflict(
                    GROUP,
                    kind.plural,
                    name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
        }
        new["apiVersion"] = json!(api_version());
        new["kind"] = json!(kind.kind);
        if !new["metadata"].is_object() {
            new["metadata"] = json!({});
        }
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
        ] {
            match old["metadata"].get(field) {
                Some(v) => new["metadata"][field] = v.clone(),
                None => {
                    if let Some(m) = new["metadata"].as_object_mut() {
                        m.remove(field);
                    }
                }
            }
        }
        let changed = |a: &Value, b: &Value| {
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("metadata");
                }
                v
            };
            strip(a) != strip(b)
        };
        if changed(&new, &old) {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            new["metadata"]["generation"] = json!(generation);
        }
        let mut unchanged = new.clone();
        unchanged["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
        if unchanged == old {
            return Ok(old);
        }
        st.rv += 1;
        new["metadata"]["resourceVersion"] = json!(st.rv.to_string());
        st.objects.insert(key, new.clone());
        self.record(&mut st, kind, "MODIFIED", new.clone());
        Ok(new)
    }

    fn delete(&self, kind: &Kind, ns: &str, name: &str) -> Result<Value, ApiError> {
        let mut st = self.store.lock();
        let key = (kind.plural.to_string(), ns.to_string(), name.to_string());
        let mut obj = st
            .objects
            .remove(&key)
            .ok_or_else(|| ApiError::not_found(GROUP, kind.plural, name))?;
        st.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
        self.record(&mut st, kind, "DELETED", obj.clone());
        Ok(obj)
    }

    fn watch(
        &self,
        kind: &Kind,
        sel: Selection,
        rv: Option<String>,
        send_initial: bool,
        out: Output,
        timeout: Option<Duration>,
    ) -> Result<Response, ApiError> {
        let plural = kind.plural;
        let (first, mut live, current) = {
            let st = self.store.lock();
            let live = self.events.subscribe();
            let since = match rv.as_deref().filter(|r| !r.is_empty() && *r != "0") {
                Some(r) if !send_initial => Some(r.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resource version: {r:?}"))
                })?),
                _ => None,
            };
            let first: Vec<Arc<Event>> = match since {
                None => st
                    .objects
                    .iter()
                    .filter(|((p, _, _), o)| p == plural && sel.matches(o))
                    .map(|(_, o)| {
                        Arc::new(Event {
                            rv: 0,
                            kind: plural,
                            ty: "ADDED",
                            object: o.clone(),
                        })
                    })
                    .collect(),
                Some(n) => {
                    let oldest = st.history.front().map_or(st.rv + 1, |e| e.rv);
                    if n + 1 < oldest && n < st.rv {
                        return Err(ApiError::expired(format!(
                            "too old resource version: {n} ({})",
                            oldest.saturating_sub(1)
                        )));
                    }
                    st.history
                        .iter()
                        .filter(|e| e.rv > n && e.kind == plural)
                        .cloned()
                        .collect()
                }
            };
            (first, live, st.rv)
        };
        let encode = move |ev: &Event| -> Bytes {
            let object = match out {
                Output::Json => ev.object.clone(),
                Output::Table(include) => {
                    let mut t = table(&[&ev.object], None, include);
                    t["metadata"]["resourceVersion"] =
                        ev.object["metadata"]["resourceVersion"].clone();
                    t
                }
            };
            let mut line =
                serde_json::to_vec(&json!({"type": ev.ty, "object": object})).unwrap_or_default();
            line.push(b'\n');
            Bytes::from(line)
        };
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
        tokio::spawn(async move {
            let mut last = current;
            for ev in &first {
                if ev.rv > 0 {
                    last = last.max(ev.rv);
                }
                if tx.send(encode(ev)).await.is_err() {
                    return;
                }
            }
            if send_initial {
                let bookmark = json!({"type": "BOOKMARK", "object": {"kind": kind_name(plural), "apiVersion": api_version(), "metadata": {"resourceVersion": current.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}});
                let mut line = serde_json::to_vec(&bookmark).unwrap_or_default();
                line.push(b'\n');
                if tx.send(Bytes::from(line)).await.is_err() {
                    return;
                }
            }
            // A timeout past what the clock holds is no timeout.
            let deadline = timeout.and_then(|t| tokio::time::Instant::now().checked_add(t));
            loop {
                let ended = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    ev = live.recv() => match ev {
                        Ok(ev) => {
                            if ev.rv <= last || ev.kind != plural || !sel.matches(&ev.object) {
                                continue;
                            }
                            last = ev.rv;
                            if tx.send(encode(&ev)).await.is_err() {
                                return;
                            }
                        }
                        // A watcher too slow for the broadcast is cut off, as upstream does.
                        Err(_) => return,
                    },
                    _ = tx.closed() => return,
                    _ = ended => return,
                }
            }
        });
        let stream = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|b| (Ok::<Bytes, Infallible>(b), rx))
        });
        let mut r = Response::new(Body::from_stream(stream));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Ok(r)
    }
}

fn kind_name(plural: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| k.plural == plural)
        .map_or("", |k| k.kind)
}

async fn read_json(req: Request) -> Result<Value, ApiError> {
    let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY)
        .await
        .map_err(|_| ApiError::too_large(MAX_BODY))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the body of the request is not JSON: {e}")))
}

/// JSON patch, or a merge patch (a strategic merge patch of these
/// schema-less kinds merges the same way).
fn apply_patch(old: &Value, content_type: &str, patch: &Value) -> Result<Value, ApiError> {
    let mut new = old.clone();
    let ct = content_type.split(';').next().unwrap_or("").trim();
    match ct {
        "application/json-patch+json" => {
            crate::registry::patch::json::apply_request(&mut new, patch)?;
        }
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            json_patch::merge(&mut new, patch);
        }
        _ => return Err(ApiError::unsupported_media_type()),
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_documents() {
        let rl = resource_list();
        assert_eq!(rl["groupVersion"], "wardle.example.com/v1alpha1");
        assert_eq!(rl["resources"][1]["name"], "flunders");
        assert_eq!(rl["resources"][1]["namespaced"], true);
        assert_eq!(rl["resources"][0]["namespaced"], false);
        assert_eq!(api_group()["preferredVersion"]["version"], "v1alpha1");
    }

    #[test]
    fn tables_and_patches() {
        let o = json!({"metadata": {"name": "a", "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {"x": 1}});
        let t = table(&[&o], Some("5".into()), Include::Metadata);
        assert_eq!(t["rows"][0]["cells"][0], "a");
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        let merged = apply_patch(
            &o,
            "application/merge-patch+json",
            &json!({"spec": {"y": 2}}),
        )
        .expect("merge");
        assert_eq!(merged["spec"], json!({"x": 1, "y": 2}));
        let patched = apply_patch(
            &o,
            "application/json-patch+json",
            &json!([{"op": "replace", "path": "/spec/x", "value": 3}]),
        )
        .expect("patch");
        assert_eq!(patched["spec"]["x"], 3);
        assert!(apply_patch(&o, "application/apply-patch+yaml", &json!({})).is_err());
    }
}
