//! `kapi routes`: every route of every server of the delegation chain, in
//! the order a request meets them (aggregator -> kube-apiserver ->
//! apiextensions-apiserver -> not found), and which one a given request
//! would reach.
//!
//! Non-resource routes are each server's own route table, built by
//! [`crate::app::route_tables`] exactly as `kapi serve` builds them.
//! Resource routes are derived from the catalog with upstream's URL layout
//! (`k8s.io/apiserver/pkg/endpoints/installer.go`): collection, item,
//! all-namespaces and deprecated `/watch/` paths, and subresources.
//! The catalog is the built-in one (offline) or the one a running kapi
//! describes in its aggregated discovery (with its current CRDs).

use http::Method;
use serde::Serialize;
use serde_json::Value;

use crate::api::catalog::{Catalog, Owner, Resource, Subresource};
use crate::api::request_info::RequestInfo;
use crate::api::routes::Refusal;
use crate::server::{HandlerKind, RouteInfo};

pub use crate::api::routes::{server_name, Route, SERVERS};

/// Every route of every server, in delegation order: for each server its
/// non-resource routes (from `non_resource`, as [`crate::app::route_tables`]
/// builds them), then the routes of the catalog's resources it owns.
pub fn all(catalog: &Catalog, non_resource: &[RouteInfo]) -> Vec<Route> {
    let resources = ordered(catalog);
    let mut out = Vec::new();
    for server in SERVERS {
        out.extend(
            non_resource
                .iter()
                .filter(|r| r.server == server)
                .map(|i| Route::non_resource(i.server, &i.method, &i.pattern, i.handler)),
        );
        for r in resources.iter().filter(|r| server_name(r.owner) == server) {
            out.extend(r.routes().iter().cloned());
        }
    }
    out
}

/// Resources in discovery order: groups by priority (the catalog's order),
/// versions preferred first, resources by plural.
fn ordered(catalog: &Catalog) -> Vec<std::sync::Arc<Resource>> {
    let groups = catalog.group_order();
    let mut all = catalog.all();
    all.sort_by(|a, b| {
        let ga = groups.iter().position(|g| *g == a.group);
        let gb = groups.iter().position(|g| *g == b.group);
        ga.cmp(&gb)
            .then_with(|| version_priority(&b.version).cmp(&version_priority(&a.version)))
            .then_with(|| a.plural.cmp(&b.plural))
    });
    all
}

/// upstream's version priority: GA over beta over alpha, higher numbers
/// first; anything else last, alphabetically (reversed, so it sorts later).
fn version_priority(v: &str) -> (u8, u32, u32, std::cmp::Reverse<String>) {
    let other = (0, 0, 0, std::cmp::Reverse(v.to_string()));
    let Some(rest) = v.strip_prefix('v') else {
        return other;
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u32>() else {
        return other;
    };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        return other;
    };
    (level, major, minor, std::cmp::Reverse(String::new()))
}

/// Which routes to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub server: Option<String>,
    /// An API group; `core` or `""` for the legacy group.
    pub group: Option<String>,
    /// A resource as kubectl accepts it: plural, singular, short name or
    /// kind, optionally `.group` and `/subresource`.
    pub resource: Option<String>,
}

impl Filter {
    /// What the filter names that the catalog does not serve, in kubectl's
    /// words (`kubectl get nosuch`): a typo is an error, not an empty table.
    pub fn unknown(&self, catalog: &Catalog) -> Option<String> {
        let all = catalog.all();
        if let Some(g) = self.group.as_deref() {
            let core = g == "core" || g.is_empty();
            if !all
                .iter()
                .any(|r| r.group == g || core && r.group.is_empty())
            {
                return Some(format!(
                    "the server doesn't have an API group {}",
                    crate::api::go_quote(g)
                ));
            }
        }
        if let Some(text) = self.resource.as_deref() {
            let q = ResourceQuery::parse(text, catalog);
            let served = all.iter().any(|r| {
                q.plurals.contains(&r.plural) && q.group.as_deref().is_none_or(|g| r.group == g)
            });
            if !served {
                let name = text.split('/').next().unwrap_or(text);
                return Some(format!(
                    "the server doesn't have a resource type {}",
                    crate::api::go_quote(name)
                ));
            }
        }
        None
    }

    pub fn apply(&self, catalog: &Catalog, routes: Vec<Route>) -> Vec<Route> {
        let resource = self
            .resource
            .as_deref()
            .map(|r| ResourceQuery::parse(r, catalog));
        routes
            .into_iter()
            .filter(|r| self.server.as_deref().is_none_or(|s| r.server == s))
            .filter(|r| {
                self.group.as_deref().is_none_or(|g| {
                    !r.resource.is_empty() && (r.group == g || g == "core" && r.group.is_empty())
                })
            })
            .filter(|r| resource.as_ref().is_none_or(|q| q.matches(r)))
            .collect()
    }
}

struct ResourceQuery {
    /// Plurals the name stands for (a kind or short name resolved through the catalog).
    plurals: Vec<String>,
    group: Option<String>,
    subresource: Option<String>,
}

impl ResourceQuery {
    fn parse(text: &str, catalog: &Catalog) -> ResourceQuery {
        let text = text.to_ascii_lowercase();
        let (name, subresource) = match text.split_once('/') {
            Some((n, s)) => (n.to_string(), Some(s.to_string())),
            None => (text.clone(), None),
        };
        let (name, group) = match name.split_once('.') {
            Some((n, g)) => (n.to_string(), Some(g.to_string())),
            None => (name, None),
        };
        let mut plurals = vec![name.clone()];
        for r in catalog.all() {
            if r.singular == name
                || r.kind.to_ascii_lowercase() == name
                || r.short_names.contains(&name)
            {
                plurals.push(r.plural.clone());
            }
        }
        ResourceQuery {
            plurals,
            group,
            subresource,
        }
    }

    fn matches(&self, r: &Route) -> bool {
        !r.resource.is_empty()
            && self.plurals.contains(&r.resource)
            && self.group.as_deref().is_none_or(|g| r.group == g)
            && self
                .subresource
                .as_deref()
                .is_none_or(|s| r.subresource == s)
    }
}

/// How a request would be answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A route serves it.
    Served,
    /// A server owns the path but not with this method: a 405 Status.
    MethodNotAllowed,
    /// A server's resource handler answers a NotFound Status.
    ResourceNotFound,
    /// The chain's not-found handler answers a NotFound Status: an unknown
    /// resource inside a served group version.
    NotFoundStatus,
    /// The chain's not-found handler answers the plain `404 page not found`.
    PageNotFound,
}

/// What [`RequestInfo::parse`] makes of the request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    pub is_resource_request: bool,
    pub verb: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

/// The answer to `kapi routes --match METHOD PATH`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    pub method: String,
    pub path: String,
    pub request_info: RequestView,
    /// Servers the request passed through before one answered.
    pub passed: Vec<String>,
    /// The server that answers; `not-found` for the chain's last handler.
    pub server: String,
    pub outcome: Outcome,
    /// HTTP status of the answer (0 when a route serves it: the handler decides).
    #[serde(skip_serializing_if = "is_zero")]
    pub status: u16,
    /// The route that serves it, or the one whose method does not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    /// Why, in words.
    pub reason: String,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

/// Whether a path matches an axum pattern; the score ranks matches as
/// axum does (more literal segments first, a rest-of-path wildcard last).
fn pattern_match(pattern: &str, path: &str) -> Option<(usize, bool)> {
    let pat: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut literal = 0;
    for (i, p) in pat.iter().enumerate() {
        if p.starts_with("{*") {
            let rest = &segs[i.min(segs.len())..];
            return (!rest.is_empty() && !rest.iter().all(|s| s.is_empty()))
                .then_some((literal, false));
        }
        let s = segs.get(i)?;
        if p.starts_with('{') {
            if s.is_empty() {
                return None;
            }
        } else if p != s {
            return None;
        } else {
            literal += 1;
        }
    }
    (pat.len() == segs.len()).then_some((literal, true))
}

fn best<'a>(candidates: impl Iterator<Item = &'a Route>, path: &str) -> Vec<&'a Route> {
    let scored: Vec<((usize, bool), &Route)> = candidates
        .filter_map(|r| pattern_match(r.pattern(), path).map(|s| ((s.0, s.1), r)))
        .collect();
    let Some(top) = scored
        .iter()
        .map(|(s, _)| *s)
        .max_by_key(|(l, exact)| (*exact, *l))
    else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|(s, _)| *s == top)
        .map(|(_, r)| r)
        .collect()
}

/// Which server and route would answer `method target` (a path with an
/// optional query), walking the chain as the router does: each server's
/// own routes first, then the resources it owns, then its delegate.
pub fn match_request(catalog: &Catalog, routes: &[Route], method: &Method, target: &str) -> Match {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let info = RequestInfo::parse(method, path, query);
    let view = RequestView {
        is_resource_request: info.is_resource_request,
        verb: info.verb.clone(),
        api_group: info.api_group.clone(),
        api_version: info.api_version.clone(),
        namespace: info.namespace.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        name: info.name.clone(),
    };
    let answer = |passed: &[String],
                  server: &str,
                  outcome,
                  status,
                  route: Option<&Route>,
                  reason: String| Match {
        method: method.to_string(),
        path: target.to_string(),
        request_info: view.clone(),
        passed: passed.to_vec(),
        server: server.to_string(),
        outcome,
        status,
        route: route.cloned(),
        reason,
    };
    // axum answers HEAD with the GET handler.
    let fits = |m: &str| m == method.as_str() || (*method == Method::HEAD && m == "GET");
    let mut passed = Vec::new();
    for server in SERVERS {
        let own = best(
            routes
                .iter()
                .filter(|r| r.server == server && r.handler == HandlerKind::NonResource),
            path,
        );
        if !own.is_empty() {
            if let Some(r) = own.iter().find(|r| fits(&r.method)) {
                return answer(
                    &passed,
                    server,
                    Outcome::Served,
                    0,
                    Some(r),
                    format!("{server} serves {} itself", r.path),
                );
            }
            let allowed: Vec<&str> = own.iter().map(|r| r.method.as_str()).collect();
            return answer(
                &passed,
                server,
                Outcome::MethodNotAllowed,
                405,
                own.first().copied(),
                format!(
                    "{server} routes {} for {} only",
                    own[0].path,
                    allowed.join(", ")
                ),
            );
        }
        let owned = info
            .is_resource_request
            .then(|| catalog.get(&info.api_group, &info.api_version, &info.resource))
            .flatten()
            .filter(|r| server_name(r.owner) == server);
        if let Some(r) = owned {
            // The same function the resource handler dispatches with.
            return match crate::api::routes::resolve(&r, method, &info) {
                Ok(x) => answer(
                    &passed,
                    server,
                    Outcome::Served,
                    0,
                    Some(x),
                    format!("{server} serves {}", x.resource_name()),
                ),
                Err(refusal) => {
                    let outcome = match refusal {
                        Refusal::NotFound(_) => Outcome::ResourceNotFound,
                        Refusal::MethodNotAllowed(_) => Outcome::MethodNotAllowed,
                    };
                    let status = match refusal {
                        Refusal::NotFound(_) => "a NotFound Status",
                        Refusal::MethodNotAllowed(_) => "a MethodNotAllowed Status",
                    };
                    // The route whose path fits, to show what it takes instead.
                    let near = best(r.routes().iter(), path);
                    answer(
                        &passed,
                        server,
                        outcome,
                        refusal.status(),
                        near.first().copied(),
                        format!("{server} owns {}: {}: {status}", r.plural, refusal.reason()),
                    )
                }
            };
        }
        passed.push(server.to_string());
    }
    if info.is_resource_request && catalog.serves_group_version(&info.api_group, &info.api_version)
    {
        let gv = if info.api_group.is_empty() {
            info.api_version.clone()
        } else {
            format!("{}/{}", info.api_group, info.api_version)
        };
        return answer(
            &passed,
            "not-found",
            Outcome::NotFoundStatus,
            404,
            None,
            format!(
                "{gv} is served but has no resource {:?}: a NotFound Status",
                info.resource
            ),
        );
    }
    answer(
        &passed,
        "not-found",
        Outcome::PageNotFound,
        404,
        None,
        "no server has a route for it: 404 page not found".to_string(),
    )
}

use crate::clientcmd::{Remote, RemoteError};

/// The Accept header of aggregated discovery v2.
pub const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The catalog a running kapi (or any Kubernetes API server) describes in
/// its aggregated discovery (`/api` and `/apis`), with the server and
/// credentials `selection` picks.
pub async fn fetch_catalog(
    selection: &crate::clientcmd::Selection,
) -> Result<Catalog, RemoteError> {
    let remote = Remote::connect(selection).await?;
    let mut docs = Vec::new();
    for path in ["/api", "/apis"] {
        let doc = remote.get_json(path, AGGREGATED_DISCOVERY).await?;
        if doc.get("kind").and_then(Value::as_str) != Some("APIGroupDiscoveryList") {
            return Err(RemoteError(format!(
                "GET {}{path}: the server does not serve aggregated discovery (apidiscovery.k8s.io/v2)",
                remote.server
            )));
        }
        docs.push(doc);
    }
    // Group versions an aggregated API server serves (APIServices with a
    // service): the aggregator proxies them. Without the right to list
    // APIServices, they are taken for CRDs.
    let mut aggregated = Vec::new();
    if let Ok(list) = remote
        .get_json(
            "/apis/apiregistration.k8s.io/v1/apiservices",
            "application/json",
        )
        .await
    {
        for item in list["items"].as_array().into_iter().flatten() {
            if item["spec"]["service"].is_object() {
                aggregated.push(AggregatedApi {
                    group: item["spec"]["group"].as_str().unwrap_or("").to_string(),
                    version: item["spec"]["version"].as_str().unwrap_or("").to_string(),
                    api_service: item["metadata"]["name"].as_str().unwrap_or("").to_string(),
                });
            }
        }
    }
    Ok(catalog_from_discovery(&docs, &aggregated))
}

/// A group version served by an aggregated API server behind an APIService.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregatedApi {
    pub group: String,
    pub version: String,
    /// The APIService's name (`v1alpha1.wardle.example.com`).
    pub api_service: String,
}

/// A catalog from aggregated discovery documents (`APIGroupDiscoveryList`).
/// Built-in resources keep their owner and storage layout; resources of
/// `aggregated` group versions are the aggregator's, proxied; resources of
/// other groups kapi does not build in are served by apiextensions-apiserver.
pub fn catalog_from_discovery(docs: &[Value], aggregated: &[AggregatedApi]) -> Catalog {
    let builtin = crate::app::builtin_catalog();
    let catalog = Catalog::default();
    let empty = Vec::new();
    let arr = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let strings = |v: &Value, k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .unwrap_or(&empty)
            .iter()
            .filter_map(|s| s.as_str().map(String::from))
            .collect()
    };
    for doc in docs {
        for group in arr(doc, "items") {
            let g = group
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            for version in arr(&group, "versions") {
                let v = text(&version, "version");
                for res in arr(&version, "resources") {
                    let plural = text(&res, "resource");
                    let kind = res
                        .pointer("/responseKind/kind")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let subresources = arr(&res, "subresources")
                        .iter()
                        .map(|s| {
                            let sg = s
                                .pointer("/responseKind/group")
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            let sv = s
                                .pointer("/responseKind/version")
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            let same = sg.is_empty() && sv.is_empty();
                            Subresource {
                                name: text(s, "subresource"),
                                group: if same { g.clone() } else { sg.to_string() },
                                version: if same { v.clone() } else { sv.to_string() },
                                kind: s
                                    .pointer("/responseKind/kind")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_string(),
                                verbs: strings(s, "verbs"),
                            }
                        })
                        .collect();
                    let known = builtin.get(&g, &v, &plural);
                    let mut r = match &known {
                        Some(b) => (**b).clone(),
                        None => Resource {
                            group: g.clone(),
                            version: v.clone(),
                            kind: kind.clone(),
                            list_kind: format!("{kind}List"),
                            plural: plural.clone(),
                            singular: String::new(),
                            namespaced: false,
                            verbs: Vec::new(),
                            short_names: Vec::new(),
                            categories: Vec::new(),
                            subresources: Vec::new(),
                            storage_path: format!("{g}/{plural}"),
                            storage_group: g.clone(),
                            storage_version: v.clone(),
                            selectable_fields: Vec::new(),
                            codec: None,
                            schema: None,
                            // A group kapi builds in keeps its server; any
                            // other is a CRD's.
                            owner: builtin
                                .all()
                                .iter()
                                .find(|b| b.group == g)
                                .map_or(Owner::Apiextensions, |b| b.owner),
                            custom: None,
                            proxy: None,
                            routes: Default::default(),
                        },
                    };
                    r.kind = kind;
                    r.singular = text(&res, "singularResource");
                    r.namespaced = text(&res, "scope") == "Namespaced";
                    r.verbs = strings(&res, "verbs");
                    r.short_names = strings(&res, "shortNames");
                    r.categories = strings(&res, "categories");
                    r.subresources = subresources;
                    if let Some(a) = aggregated.iter().find(|a| a.group == g && a.version == v) {
                        r.owner = Owner::Aggregator;
                        r.proxy = Some(std::sync::Arc::new(crate::api::catalog::ProxyInfo {
                            api_service: a.api_service.clone(),
                        }));
                    }
                    catalog.add(r);
                }
            }
        }
    }
    catalog
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> (Catalog, Vec<Route>) {
        let c = crate::app::builtin_catalog();
        let routes = all(&c, &crate::app::route_tables(&c));
        (c, routes)
    }

    fn has(routes: &[Route], server: &str, method: &str, path: &str, verb: &str) -> bool {
        routes
            .iter()
            .any(|r| r.server == server && r.method == method && r.path == path && r.verb == verb)
    }

    #[test]
    fn pods_routes() {
        let (_, routes) = table();
        let k = "kube-apiserver";
        assert!(has(
            &routes,
            k,
            "GET",
            "/api/v1/namespaces/{namespace}/pods",
            "list"
        ));
        assert!(has(
            &routes,
            k,
            "GET",
            "/api/v1/namespaces/{namespace}/pods?watch=true",
            "watch"
        ));
        assert!(has(
            &routes,
            k,
            "GET",
            "/api/v1/watch/namespaces/{namespace}/pods",
            "watch"
        ));
        assert!(has(&routes, k, "GET", "/api/v1/pods", "list"));
        assert!(has(
            &routes,
            k,
            "POST",
            "/api/v1/namespaces/{namespace}/pods",
            "create"
        ));
        assert!(has(
            &routes,
            k,
            "DELETE",
            "/api/v1/namespaces/{namespace}/pods",
            "deletecollection"
        ));
        assert!(has(
            &routes,
            k,
            "PATCH",
            "/api/v1/namespaces/{namespace}/pods/{name}",
            "patch"
        ));
        assert!(has(
            &routes,
            k,
            "PUT",
            "/api/v1/namespaces/{namespace}/pods/{name}/status",
            "update"
        ));
        assert!(has(
            &routes,
            k,
            "GET",
            "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}",
            "get"
        ));
        assert!(has(&routes, k, "GET", "/api/v1/nodes/{name}", "get"));
        assert!(!has(
            &routes,
            k,
            "GET",
            "/api/v1/namespaces/{namespace}/nodes",
            "list"
        ));
        assert!(has(
            &routes,
            "apiextensions-apiserver",
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "list"
        ));
        assert!(has(&routes, "aggregator", "GET", "/apis", "get"));
        assert!(has(&routes, k, "GET", "/readyz/{check}", "get"));
        let first = routes.iter().position(|r| r.server == k).unwrap_or(0);
        assert!(routes[..first].iter().all(|r| r.server == "aggregator"));
    }

    #[test]
    fn matching() {
        let (c, routes) = table();
        let m = match_request(&c, &routes, &Method::GET, "/api/v1/namespaces/default/pods");
        assert_eq!(
            (m.server.as_str(), &m.outcome),
            ("kube-apiserver", &Outcome::Served)
        );
        assert_eq!(
            m.route.as_ref().map(|r| r.path.as_str()),
            Some("/api/v1/namespaces/{namespace}/pods")
        );
        assert_eq!(m.passed, vec!["aggregator"]);
        let m = match_request(
            &c,
            &routes,
            &Method::GET,
            "/api/v1/namespaces/default/pods?watch=1",
        );
        assert_eq!(m.route.map(|r| r.verb), Some("watch".into()));
        let m = match_request(&c, &routes, &Method::GET, "/nope");
        assert_eq!(m.outcome, Outcome::PageNotFound);
        let m = match_request(&c, &routes, &Method::GET, "/apis/apps/v1/nothings");
        assert_eq!(m.outcome, Outcome::NotFoundStatus);
        let m = match_request(&c, &routes, &Method::GET, "/readyz/etcd");
        assert_eq!(
            (m.server.as_str(), m.outcome),
            ("kube-apiserver", Outcome::Served)
        );
        let m = match_request(&c, &routes, &Method::POST, "/healthz");
        assert_eq!(m.outcome, Outcome::MethodNotAllowed);
        let m = match_request(&c, &routes, &Method::GET, "/apis/apps/v1");
        assert_eq!(
            (m.server.as_str(), m.outcome),
            ("aggregator", Outcome::Served)
        );
        let m = match_request(
            &c,
            &routes,
            &Method::POST,
            "/api/v1/namespaces/x/pods/p/log",
        );
        assert_eq!(m.outcome, Outcome::MethodNotAllowed);
        let m = match_request(&c, &routes, &Method::GET, "/api/v1/namespaces/x/nodes");
        assert_eq!(m.outcome, Outcome::ResourceNotFound);
        let m = match_request(
            &c,
            &routes,
            &Method::DELETE,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x",
        );
        assert_eq!(m.server, "apiextensions-apiserver");
        let m = match_request(
            &c,
            &routes,
            &Method::GET,
            "/api/v1/namespaces/x/pods/p/proxy/a/b",
        );
        assert_eq!(m.route.map(|r| r.handler), Some(HandlerKind::Proxy));
    }

    #[test]
    fn versions_sort_preferred_first() {
        let mut v = vec!["v1beta1", "v1", "v2", "v1alpha1", "v2beta2", "foo"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, ["v2", "v1", "v2beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    #[test]
    fn discovery_round_trip() {
        let c = crate::app::builtin_catalog();
        let docs = [
            crate::endpoints::discovery::aggregated(&c, true, "v2"),
            crate::endpoints::discovery::aggregated(&c, false, "v2"),
        ];
        let back = catalog_from_discovery(&docs, &[]);
        let a = all(&c, &[]);
        let b = all(&back, &[]);
        assert_eq!(a.len(), b.len());
        assert_eq!(a, b);
    }

    #[test]
    fn aggregated_and_custom_groups_from_discovery() {
        let doc = serde_json::json!({
            "kind": "APIGroupDiscoveryList",
            "items": [
                {"metadata": {"name": "wardle.example.com"}, "versions": [{"version": "v1alpha1", "resources": [
                    {"resource": "flunders", "responseKind": {"kind": "Flunder"}, "scope": "Namespaced", "verbs": ["get", "list", "create"]}
                ]}]},
                {"metadata": {"name": "example.com"}, "versions": [{"version": "v1", "resources": [
                    {"resource": "widgets", "responseKind": {"kind": "Widget"}, "scope": "Cluster", "verbs": ["get"]}
                ]}]}
            ]
        });
        let aggregated = [AggregatedApi {
            group: "wardle.example.com".into(),
            version: "v1alpha1".into(),
            api_service: "v1alpha1.wardle.example.com".into(),
        }];
        let c = catalog_from_discovery(&[doc], &aggregated);
        let routes = all(&c, &[]);
        let fl: Vec<&Route> = routes.iter().filter(|r| r.resource == "flunders").collect();
        assert!(!fl.is_empty());
        assert!(fl
            .iter()
            .all(|r| r.server == "aggregator" && r.handler == HandlerKind::Proxy));
        let m = match_request(
            &c,
            &routes,
            &Method::GET,
            "/apis/wardle.example.com/v1alpha1/namespaces/x/flunders",
        );
        assert_eq!(
            (m.server.as_str(), m.outcome),
            ("aggregator", Outcome::Served)
        );
        assert!(routes.iter().any(|r| r.server == "apiextensions-apiserver"
            && r.path == "/apis/example.com/v1/widgets/{name}"));
    }
}
