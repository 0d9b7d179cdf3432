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

    /// This server's router, passing what it does not own to `delegate`.
    pub fn into_router(self, delegate: Router) -> Router {
        let mut router = Router::new();
        for r in self.routes {
            router = router.route(&r.path, r.handler);
        }
        let resources = self.resources.map(Arc::new);
        let interceptor = self.interceptor;
        router
            .fallback(move |req: Request| {
                let resources = resources.clone();
                let delegate = delegate.clone();
                let intercepted = match interceptor.as_ref() {
                    Some(claim) => claim(req),
                    None => Err(req),
                };
                async move {
                    let req = match intercepted {
                        Ok(served) => return served.await,
                        Err(req) => req,
                    };
                    let info = req
                        .extensions()
                        .get::<Arc<RequestInfo>>()
                        .cloned()
                        .unwrap_or_default();
                    if let Some(h) = resources.as_ref() {
                        if h.owns(&info).is_some() {
                            return h.serve(req, info).await;
                        }
                    }
                    match delegate.oneshot(req).await {
                        Ok(r) => r,
                        Err(never) => match never {},
                    }
                }
            })
            // A stateless router still holds its handlers unconverted, and
            // converts (boxes and clones) one on every request it serves;
            // `with_state` converts them all once, here.
            .with_state::<()>(())
    }
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
