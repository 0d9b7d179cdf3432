//! The delegation chain: each generic server answers the routes it owns and
//! hands everything else to its delegate; after the last one comes
//! upstream's not-found handler.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter};
use axum::Router;
use http::{header, HeaderValue, Method, StatusCode};
use serde::Serialize;

use crate::api::request_info::RequestInfo;
pub use crate::api::routes::HandlerKind;
use crate::api::ApiError;
use crate::endpoints::ResourceHandler;
use futures::future::BoxFuture;
use tower::ServiceExt;

/// One row of a server's route table.
#[derive(Debug, Clone, Serialize)]
pub struct RouteInfo {
    pub server: &'static str,
    pub method: String,
    pub path: String,
    /// The path as registered, in axum's syntax (`/readyz/{*check}`), for
    /// matching requests to routes.
    #[serde(skip)]
    pub pattern: String,
    pub handler: HandlerKind,
}

struct Route {
    path: String,
    methods: Vec<Method>,
    handler: MethodRouter,
    /// Left out of the `/` index (upstream's `UnlistedHandle`).
    unlisted: bool,
}

/// Claims a request before the server's own resources are looked at
/// (the aggregator's proxy to aggregated API servers), or gives it back.
pub type Interceptor = Arc<
    dyn Fn(Request) -> Result<futures::future::BoxFuture<'static, Response>, Request> + Send + Sync,
>;

/// A named server with its own route table, and the resources it serves.
pub struct GenericServer {
    pub name: &'static str,
    routes: Vec<Route>,
    resources: Option<ResourceHandler>,
    interceptor: Option<Interceptor>,
}

fn method_filter(m: &Method) -> Option<MethodFilter> {
    Some(match *m {
        Method::GET => MethodFilter::GET,
        Method::POST => MethodFilter::POST,
        Method::PUT => MethodFilter::PUT,
        Method::PATCH => MethodFilter::PATCH,
        Method::DELETE => MethodFilter::DELETE,
        Method::HEAD => MethodFilter::HEAD,
        Method::OPTIONS => MethodFilter::OPTIONS,
        _ => return None,
    })
}

impl GenericServer {
    pub fn new(name: &'static str) -> Self {
        GenericServer {
            name,
            routes: Vec::new(),
            resources: None,
            interceptor: None,
        }
    }

    /// Offer every request that matches no route to `interceptor` first.
    pub fn with_interceptor(mut self, interceptor: Interceptor) -> Self {
        self.interceptor = Some(interceptor);
        self
    }

    /// Serve the catalog's resources owned by this server.
    pub fn with_resources(mut self, handler: ResourceHandler) -> Self {
        self.resources = Some(handler);
        self
    }

    /// Adds a non-resource route. `path` uses axum's syntax (`/readyz/{*check}`).
    pub fn route<H, T>(self, path: &str, methods: &[Method], handler: H) -> Self
    where
        H: axum::handler::Handler<T, ()>,
        T: 'static,
    {
        self.add(path, methods, handler, false)
    }

    /// A route the `/` index does not list (upstream's `UnlistedHandle`).
    pub fn route_unlisted<H, T>(self, path: &str, methods: &[Method], handler: H) -> Self
    where
        H: axum::handler::Handler<T, ()>,
        T: 'static,
    {
        self.add(path, methods, handler, true)
    }

    fn add<H, T>(mut self, path: &str, methods: &[Method], handler: H, unlisted: bool) -> Self
    where
        H: axum::handler::Handler<T, ()>,
        T: 'static,
    {
        let mut mr = MethodRouter::new();
        for m in methods {
            if let Some(f) = method_filter(m) {
                mr = mr.on(f, handler.clone());
            }
        }
        let mr = mr.fallback(|| async { ApiError::method_not_allowed() });
        self.routes.push(Route {
            path: path.to_string(),
            methods: methods.to_vec(),
            handler: mr,
            unlisted,
        });
        self
    }

    pub fn route_table(&self) -> Vec<RouteInfo> {
        self.routes
            .iter()
            .flat_map(|r| {
                r.methods.iter().map(move |m| RouteInfo {
                    server: self.name,
                    method: m.to_string(),
                    path: r.path.replace("{*", "{"),
                    pattern: r.path.clone(),
                    handler: HandlerKind::NonResource,
                })
            })
            .collect()
    }

    /// The paths this server lists at `/`.
    pub fn listed_paths(&self) -> Vec<String> {
        self.routes
            .iter()
            .filter(|r| !r.unlisted)
            .map(|r| r.path.split("/{").next().unwrap_or(&r.path).to_string())
            .collect()
    }

    /// This server, passing what it does not own to `delegate`.
    pub fn into_delegate(self, delegate: Delegate) -> Delegate {
        let routes_may_claim = self.routes.iter().any(|r| may_match_resources(&r.path));
        let mut router = Router::new();
        for r in self.routes {
            router = router.route(&r.path, r.handler);
        }
        let resources = self.resources.map(Arc::new);
        let interceptor = self.interceptor;
        // What the router's fallback does, and what a resource request
        // comes to when no route can match it.
        let unrouted: ServeResource = Arc::new(move |req: Request, info: Arc<RequestInfo>| {
            let req = match interceptor.as_ref() {
                Some(claim) => match claim(req) {
                    Ok(served) => return served,
                    Err(req) => req,
                },
                None => req,
            };
            if let Some(h) = resources.as_ref() {
                if h.owns(&info).is_some() {
                    return Box::pin(h.clone().serve(req, info));
                }
            }
            delegate.serve(req, info)
        });
        let fallback = unrouted.clone();
        let router = router
            .fallback(move |req: Request| {
                let info = req
                    .extensions()
                    .get::<Arc<RequestInfo>>()
                    .cloned()
                    .unwrap_or_default();
                fallback(req, info)
            })
            // A stateless router still holds its handlers unconverted, and
            // converts (boxes and clones) one on every request it serves;
            // `with_state` converts them all once, here.
            .with_state::<()>(());
        if routes_may_claim {
            Delegate::from_router(router)
        } else {
            Delegate {
                router,
                resources: unrouted,
            }
        }
    }
}

/// How a server answers one resource request.
type ServeResource =
    Arc<dyn Fn(Request, Arc<RequestInfo>) -> BoxFuture<'static, Response> + Send + Sync>;

/// A server of the chain as the one before it (or the handler chain) hands
/// requests on to it: its router, and a way to answer resource requests
/// without matching them against routes that cannot match them. A
/// resource GET otherwise passes through every server's router (path
/// matching, fallback, boxed futures) only to reach the one that owns it:
/// about a tenth of what kapi spends on a GET.
#[derive(Clone)]
pub struct Delegate {
    router: Router,
    resources: ServeResource,
}

impl Delegate {
    /// A server that is only a router: every request goes through it.
    pub fn from_router(router: Router) -> Delegate {
        let through = router.clone();
        Delegate {
            router,
            resources: Arc::new(move |req: Request, _| through_router(through.clone(), req)),
        }
    }

    /// Answers a request: a resource request (as `info` parsed it) by the
    /// shortest way the servers answer the same, anything else through
    /// the router.
    pub fn serve(&self, req: Request, info: Arc<RequestInfo>) -> BoxFuture<'static, Response> {
        if info.is_resource_request {
            return (self.resources)(req, info);
        }
        through_router(self.router.clone(), req)
    }
}

/// `req` answered by `router`, which cannot fail (its error is `Infallible`).
fn through_router(router: Router, req: Request) -> BoxFuture<'static, Response> {
    Box::pin(async move {
        match router.oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        }
    })
}

/// Whether a route (axum's syntax) can match the path of a resource
/// request: what [`RequestInfo::parse`] takes for one is `/api/{version}/…`
/// with three or more segments and `/apis/{group}/{version}/…` with four or
/// more. Unsure (a parameter first) counts as can.
fn may_match_resources(pattern: &str) -> bool {
    let segments: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    let catch_all = segments.iter().any(|s| s.starts_with("{*"));
    let needed = match segments.first().copied().unwrap_or("") {
        "api" => 3,
        "apis" => 4,
        first if first.starts_with('{') => return true,
        _ => return false,
    };
    catch_all || segments.len() >= needed
}

/// Which group versions are served: decides between upstream's two 404s.
pub type ServedGroupVersion = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// upstream's final handler: a `Status` for an unknown resource inside a
/// served group version, the plain Go mux 404 for everything else.
pub fn not_found(served: ServedGroupVersion) -> Router {
    Router::new()
        .fallback(move |req: Request| {
            let served = served.clone();
            async move {
                let info = req
                    .extensions()
                    .get::<Arc<RequestInfo>>()
                    .cloned()
                    .unwrap_or_default();
                if info.is_resource_request && served(&info.api_group, &info.api_version) {
                    return ApiError::resource_not_found().into_response();
                }
                page_not_found()
            }
        })
        .with_state::<()>(())
}

pub fn page_not_found() -> Response {
    let mut r = (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_that_can_match_a_resource_path_are_told_apart() {
        // What RequestInfo calls a resource request is /api/{v}/{r}... and
        // /apis/{g}/{v}/{r}...: discovery and other paths are not.
        for cannot in [
            "/",
            "/api",
            "/api/{version}",
            "/apis",
            "/apis/{group}",
            "/apis/{group}/{version}",
            "/openapi/v3/{*path}",
            "/readyz/{*check}",
            "/version",
        ] {
            assert!(!may_match_resources(cannot), "{cannot}");
        }
        for can in [
            "/api/v1/namespaces",
            "/api/{version}/{*rest}",
            "/apis/{group}/{version}/{resource}",
            "/apis/{*rest}",
            "/{prefix}/v1",
        ] {
            assert!(may_match_resources(can), "{can}");
        }
    }
}
