//! The route table as data. A resource's routes are derived once from its
//! catalog entry, with upstream's URL layout
//! (`k8s.io/apiserver/pkg/endpoints/installer.go`): collection, item,
//! all-namespaces and deprecated `/watch/` paths, and subresources.
//!
//! [`resolve`] finds the route a request takes, or says why none does. The
//! resource handler dispatches through it, `kapi routes` prints the same
//! table and answers `--match` with the same function, and the trace
//! records the route it found: one derivation, so the three cannot disagree.

use std::sync::{Arc, OnceLock};

use http::Method;
use serde::Serialize;

use crate::api::catalog::{Owner, Resource, Subresource};
use crate::api::request_info::RequestInfo;

/// The servers of the delegation chain, in the order a request meets them.
pub const SERVERS: [&str; 3] = ["aggregator", "kube-apiserver", "apiextensions-apiserver"];

/// The name of the server that serves resources of `owner`.
pub fn server_name(owner: Owner) -> &'static str {
    match owner {
        Owner::Aggregator => SERVERS[0],
        Owner::KubeApiserver => SERVERS[1],
        Owner::Apiextensions => SERVERS[2],
    }
}

/// What kind of handler serves a route, as `kapi routes` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandlerKind {
    NonResource,
    Resource,
    Proxy,
}

/// Where in a resource's URL layout a route sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The collection; in one namespace for a namespaced resource.
    Collection,
    /// A namespaced resource's collection across all namespaces.
    AllNamespaces,
    /// One object, or one of its subresources.
    Item,
}

/// One route: a method and path template, the server that answers it and
/// what it is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Route {
    pub server: String,
    pub method: String,
    /// The path template (`/api/v1/namespaces/{namespace}/pods`), with the
    /// query that selects the verb where there is one (`?watch=true`).
    pub path: String,
    /// The verb as authorization sees it: `list`, `watch`, `create`, ...;
    /// for non-resource routes the lower-case method, as upstream.
    pub verb: String,
    pub handler: HandlerKind,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub kind: String,
    /// Whether the resource is namespaced (absent for non-resource routes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaced: Option<bool>,
    /// The path in axum's syntax (`{*path}` for a rest-of-path wildcard),
    /// without the query.
    #[serde(skip)]
    pattern: String,
    #[serde(skip)]
    target: Target,
    /// One of the deprecated `/watch/` paths.
    #[serde(skip)]
    watch_path: bool,
    /// Ends in a rest-of-path wildcard (`.../proxy/{*path}`).
    #[serde(skip)]
    rest: bool,
}

impl Route {
    /// A server's own route (`/healthz`, `/openapi/v2`), as its route table
    /// registers it; `pattern` is in axum's syntax.
    pub fn non_resource(server: &str, method: &str, pattern: &str, handler: HandlerKind) -> Route {
        Route {
            server: server.to_string(),
            method: method.to_string(),
            path: pattern.replace("{*", "{"),
            verb: method.to_ascii_lowercase(),
            handler,
            group: String::new(),
            version: String::new(),
            resource: String::new(),
            subresource: String::new(),
            kind: String::new(),
            namespaced: None,
            pattern: pattern.to_string(),
            target: Target::Collection,
            watch_path: false,
            rest: pattern.contains("{*"),
        }
    }

    /// The path in axum's syntax, without the query.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// `pods`, `deployments.apps`, `deployments.apps/scale`, as kubectl
    /// names resources; empty for non-resource routes.
    pub fn resource_name(&self) -> String {
        if self.resource.is_empty() {
            return String::new();
        }
        let mut s = self.resource.clone();
        if !self.group.is_empty() {
            s = format!("{s}.{}", self.group);
        }
        if !self.subresource.is_empty() {
            s = format!("{s}/{}", self.subresource);
        }
        s
    }

    /// `v1`, `apps/v1`; empty for non-resource routes.
    pub fn api_version(&self) -> String {
        match (self.group.as_str(), self.version.as_str()) {
            (_, "") => String::new(),
            ("", v) => v.to_string(),
            (g, v) => format!("{g}/{v}"),
        }
    }

    /// Whether the route takes `method` (axum answers HEAD with GET's handler).
    pub fn takes(&self, method: &Method) -> bool {
        self.method == method.as_str() || (*method == Method::HEAD && self.method == "GET")
    }
}

/// A resource's routes, built on first use. A clone starts empty, so a
/// resource copied and then changed never carries its original's routes.
#[derive(Default)]
pub struct RouteCache(OnceLock<Arc<[Route]>>);

impl Clone for RouteCache {
    fn clone(&self) -> Self {
        RouteCache::default()
    }
}

impl std::fmt::Debug for RouteCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RouteCache")
    }
}

impl RouteCache {
    pub(crate) fn get_or_build(&self, r: &Resource) -> &[Route] {
        self.0.get_or_init(|| build(r).into())
    }
}

fn method_of(verb: &str) -> Option<Method> {
    Some(match verb {
        "get" | "list" | "watch" => Method::GET,
        "create" => Method::POST,
        "update" => Method::PUT,
        "patch" => Method::PATCH,
        "delete" | "deletecollection" => Method::DELETE,
        _ => return None,
    })
}

/// The routes of one resource, as upstream's installer lays them out, in
/// the order `kapi routes` prints them.
fn build(r: &Resource) -> Vec<Route> {
    let base = if r.group.is_empty() {
        format!("/api/{}", r.version)
    } else {
        format!("/apis/{}/{}", r.group, r.version)
    };
    let plural = &r.plural;
    let (collection, watch_collection) = if r.namespaced {
        (
            format!("{base}/namespaces/{{namespace}}/{plural}"),
            format!("{base}/watch/namespaces/{{namespace}}/{plural}"),
        )
    } else {
        (format!("{base}/{plural}"), format!("{base}/watch/{plural}"))
    };
    let item = format!("{collection}/{{name}}");
    let mk = |method: Method,
              pattern: &str,
              query: &str,
              verb: &str,
              target: Target,
              sub: Option<&Subresource>| {
        // The aggregator proxies every request for an aggregated API server's
        // resources, and a `proxy` subresource proxies to its object.
        let handler = match sub {
            _ if r.proxy.is_some() => HandlerKind::Proxy,
            Some(s) if s.name == "proxy" => HandlerKind::Proxy,
            _ => HandlerKind::Resource,
        };
        Route {
            server: server_name(r.owner).to_string(),
            method: method.to_string(),
            path: format!("{}{query}", pattern.replace("{*", "{")),
            verb: verb.to_string(),
            handler,
            group: r.group.clone(),
            version: r.version.clone(),
            resource: r.plural.clone(),
            subresource: sub.map(|s| s.name.clone()).unwrap_or_default(),
            kind: sub.map_or_else(|| r.kind.clone(), |s| s.kind.clone()),
            namespaced: Some(r.namespaced),
            pattern: pattern.to_string(),
            target,
            watch_path: pattern.contains("/watch/"),
            rest: pattern.contains("{*"),
        }
    };
    use Target::*;
    let mut out = Vec::new();
    if r.has_verb("list") {
        out.push(mk(Method::GET, &collection, "", "list", Collection, None));
    }
    if r.has_verb("watch") {
        out.push(mk(
            Method::GET,
            &collection,
            "?watch=true",
            "watch",
            Collection,
            None,
        ));
    }
    if r.has_verb("create") {
        out.push(mk(
            Method::POST,
            &collection,
            "",
            "create",
            Collection,
            None,
        ));
    }
    if r.has_verb("deletecollection") {
        out.push(mk(
            Method::DELETE,
            &collection,
            "",
            "deletecollection",
            Collection,
            None,
        ));
    }
    if r.namespaced {
        let across = format!("{base}/{plural}");
        if r.has_verb("list") {
            out.push(mk(Method::GET, &across, "", "list", AllNamespaces, None));
        }
        if r.has_verb("watch") {
            out.push(mk(
                Method::GET,
                &across,
                "?watch=true",
                "watch",
                AllNamespaces,
                None,
            ));
            out.push(mk(
                Method::GET,
                &format!("{base}/watch/{plural}"),
                "",
                "watch",
                AllNamespaces,
                None,
            ));
        }
    }
    if r.has_verb("watch") {
        out.push(mk(
            Method::GET,
            &watch_collection,
            "",
            "watch",
            Collection,
            None,
        ));
    }
    for verb in ["get", "update", "patch", "delete"] {
        if let (true, Some(m)) = (r.has_verb(verb), method_of(verb)) {
            out.push(mk(m, &item, "", verb, Item, None));
        }
    }
    if r.has_verb("watch") {
        out.push(mk(
            Method::GET,
            &format!("{watch_collection}/{{name}}"),
            "",
            "watch",
            Item,
            None,
        ));
    }
    for s in &r.subresources {
        let path = format!("{item}/{}", s.name);
        let mut paths = vec![path.clone()];
        if s.name == "proxy" {
            paths.push(format!("{path}/{{*path}}"));
        }
        for p in &paths {
            for verb in ["get", "create", "update", "patch", "delete"] {
                if let (true, Some(m)) = (s.verbs.iter().any(|v| v == verb), method_of(verb)) {
                    out.push(mk(m, p, "", verb, Item, Some(s)));
                }
            }
        }
    }
    out
}

/// Why no route of a resource takes a request: the resource handler's
/// answer, with the reason in words for `kapi routes --match`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A NotFound Status.
    NotFound(String),
    /// A MethodNotAllowed Status.
    MethodNotAllowed(String),
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::NotFound(_) => 404,
            Refusal::MethodNotAllowed(_) => 405,
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Refusal::NotFound(why) | Refusal::MethodNotAllowed(why) => why,
        }
    }

    pub fn into_error(self) -> crate::api::ApiError {
        match self {
            Refusal::NotFound(_) => crate::api::ApiError::resource_not_found(),
            Refusal::MethodNotAllowed(_) => crate::api::ApiError::method_not_allowed(),
        }
    }
}

/// The route of `r` that takes a request for it (`info` parsed from the
/// request's method and path), or why none does. The checks run in the
/// order upstream's handlers meet them: scope, then subresource, then the
/// verb, so a request gets the same 404 or 405 as from kube-apiserver.
pub fn resolve<'a>(
    r: &'a Resource,
    method: &Method,
    info: &RequestInfo,
) -> Result<&'a Route, Refusal> {
    use Refusal::*;
    let verb = info.verb.as_str();
    let in_namespace = !info.namespace.is_empty();
    if r.namespaced && !in_namespace && !matches!(verb, "list" | "watch") {
        return Err(NotFound(
            "it is namespaced and the path names no namespace".into(),
        ));
    }
    if !r.namespaced && in_namespace && r.plural != "namespaces" {
        return Err(NotFound(
            "it is cluster-scoped and the path names a namespace".into(),
        ));
    }
    let routes = r.routes();
    let depth = info.depth;
    if !info.subresource.is_empty() {
        let sub = info.subresource.as_str();
        if r.subresource(sub).is_none() {
            return Err(NotFound(format!(
                "it has no subresource {}",
                crate::api::go_quote(sub)
            )));
        }
        if depth > 3 && sub != "proxy" {
            return Err(NotFound("the path goes past the subresource".into()));
        }
        return routes
            .iter()
            .find(|x| {
                x.subresource == sub && x.rest == (depth > 3) && x.verb == verb && x.takes(method)
            })
            .ok_or_else(|| {
                MethodNotAllowed(format!(
                    "{sub} does not allow verb {}",
                    crate::api::go_quote(verb)
                ))
            });
    }
    if depth > 2 {
        return Err(NotFound("the path goes past the object's name".into()));
    }
    if !r.has_verb(verb) {
        return Err(MethodNotAllowed(format!(
            "it does not allow verb {}",
            crate::api::go_quote(verb)
        )));
    }
    let target = if depth == 2 {
        Target::Item
    } else if r.namespaced && !in_namespace {
        Target::AllNamespaces
    } else {
        Target::Collection
    };
    routes
        .iter()
        .find(|x| {
            x.subresource.is_empty()
                && x.target == target
                && x.watch_path == info.watch_path
                && x.verb == verb
                && x.takes(method)
        })
        .ok_or_else(|| {
            let place = if target == Target::Item {
                "an object"
            } else {
                "a collection"
            };
            MethodNotAllowed(format!("no {method} route takes {place}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::catalog::Catalog;

    fn catalog() -> Catalog {
        crate::app::builtin_catalog()
    }

    fn resolve_path(c: &Catalog, method: Method, target: &str) -> Result<String, Refusal> {
        let (path, query) = target
            .split_once('?')
            .map_or((target, None), |(p, q)| (p, Some(q)));
        let info = RequestInfo::parse(&method, path, query);
        let r = c
            .get(&info.api_group, &info.api_version, &info.resource)
            .expect("a served resource");
        resolve(&r, &method, &info).map(|x| format!("{} {} {}", x.method, x.path, x.verb))
    }

    #[test]
    fn each_request_shape_finds_its_own_route() {
        let c = catalog();
        let ok =
            |m: Method, p: &str| resolve_path(&c, m, p).unwrap_or_else(|e| panic!("{p}: {e:?}"));
        assert_eq!(
            ok(Method::GET, "/api/v1/namespaces/a/pods"),
            "GET /api/v1/namespaces/{namespace}/pods list"
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/namespaces/a/pods?watch=true"),
            "GET /api/v1/namespaces/{namespace}/pods?watch=true watch"
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/watch/pods"),
            "GET /api/v1/watch/pods watch"
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/pods?watch=1"),
            "GET /api/v1/pods?watch=true watch"
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/watch/namespaces/a/pods/p"),
            "GET /api/v1/watch/namespaces/{namespace}/pods/{name} watch"
        );
        assert_eq!(
            ok(Method::HEAD, "/api/v1/namespaces/a/pods/p"),
            "GET /api/v1/namespaces/{namespace}/pods/{name} get"
        );
        assert_eq!(
            ok(Method::POST, "/api/v1/namespaces/a/pods/p/eviction"),
            "POST /api/v1/namespaces/{namespace}/pods/{name}/eviction create"
        );
        assert_eq!(
            ok(Method::PUT, "/api/v1/namespaces/n/finalize"),
            "PUT /api/v1/namespaces/{name}/finalize update"
        );
        assert_eq!(
            ok(Method::GET, "/api/v1/namespaces/a/services/s/proxy/x/y"),
            "GET /api/v1/namespaces/{namespace}/services/{name}/proxy/{path} get"
        );
        assert_eq!(
            ok(Method::DELETE, "/apis/apps/v1/namespaces/a/deployments"),
            "DELETE /apis/apps/v1/namespaces/{namespace}/deployments deletecollection"
        );
    }

    #[test]
    fn a_request_no_route_takes_gets_the_handlers_refusal() {
        let c = catalog();
        let status = |m: Method, p: &str| resolve_path(&c, m, p).map_err(|e| e.status()).err();
        // No create on an item, no update on a collection.
        assert_eq!(
            status(Method::POST, "/api/v1/namespaces/a/pods/p"),
            Some(405)
        );
        assert_eq!(status(Method::PUT, "/api/v1/namespaces/a/pods"), Some(405));
        // A namespaced item without a namespace, a cluster-scoped one inside one.
        assert_eq!(status(Method::GET, "/api/v1/pods/p"), Some(404));
        assert_eq!(
            status(Method::GET, "/api/v1/namespaces/a/nodes/n"),
            Some(404)
        );
        // Unknown subresource, a verb the subresource lacks, a path past it.
        assert_eq!(
            status(Method::GET, "/api/v1/namespaces/a/pods/p/nope"),
            Some(404)
        );
        assert_eq!(
            status(Method::DELETE, "/api/v1/namespaces/a/pods/p/status"),
            Some(405)
        );
        assert_eq!(
            status(Method::GET, "/api/v1/namespaces/a/pods/p/status/x"),
            Some(404)
        );
        // Read-only kinds take no write.
        assert_eq!(status(Method::POST, "/api/v1/componentstatuses"), Some(405));
        assert_eq!(
            status(Method::OPTIONS, "/api/v1/namespaces/a/pods"),
            Some(405)
        );
    }
}
