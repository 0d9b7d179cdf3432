//! The handler chain (upstream's `DefaultBuildHandlerChain`): the filters
//! every request passes, outermost first, before the router of the server
//! chain sees it.
//!
//! The chain is a static list of functions and a [`Next`] that walks it,
//! rather than a stack of tower layers: a layer made with axum's `from_fn`
//! clones the service it wraps, re-boxes it and moves its future on every
//! request, which for fourteen filters was most of what a GET cost beyond
//! the HTTP/2 and TLS work (bench/run's callgrind figure). Here a filter
//! costs one boxed future, and handing on clones two `Arc`s.

use std::sync::Arc;

use super::chain::Delegate;
use crate::api::request_info::RequestInfo;
use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use futures::future::BoxFuture;

use super::filters::{self, ChainState};
use super::impersonation;

/// One filter: the shared state, the request, and the rest of the chain.
type Filter = fn(Arc<ChainState>, Request, Next) -> BoxFuture<'static, Response>;

/// The filters, outermost first, in upstream's order. A filter that only
/// some requests need is guarded by its test: every other request is
/// handed straight on, with no future of that filter's made or polled.
const FILTERS: &[Filter] = &[
    |_, req, next| match may_negotiate(&req) {
        true => Box::pin(negotiate_errors(req, next)),
        false => next.run(req),
    },
    |_, req, next| match filters::httplog_on() {
        true => Box::pin(filters::httplog(req, next)),
        false => next.run(req),
    },
    |_, req, next| match filters::has_body(&req) {
        true => Box::pin(filters::hold_request_body(req, next)),
        false => next.run(req),
    },
    |_, req, next| match filters::wants_pretty(&req) {
        true => Box::pin(filters::pretty(req, next)),
        false => next.run(req),
    },
    |_, req, next| Box::pin(filters::panic_recovery(req, next)),
    |_, req, next| Box::pin(filters::request_info(req, next)),
    |_, req, next| match filters::traced(&req) {
        true => Box::pin(filters::trace(req, next)),
        false => next.run(req),
    },
    |s, req, next| Box::pin(filters::metrics(s, req, next)),
    |s, req, next| Box::pin(filters::authentication(s, req, next)),
    |s, req, next| Box::pin(filters::audit(s, req, next)),
    |s, req, next| match impersonation::impersonates(&req) {
        true => Box::pin(impersonation::impersonation(s, req, next)),
        false => next.run(req),
    },
    // After authentication and impersonation, as upstream: the user a
    // request acts as decides its priority.
    |s, req, next| Box::pin(filters::flow_control(s, req, next)),
    |s, req, next| Box::pin(filters::authorization(s, req, next)),
    |s, req, next| Box::pin(filters::timeout(s, req, next)),
];

/// The rest of the chain after the filter holding it: the filters still
/// to run, then the router.
#[derive(Clone)]
pub struct Next {
    state: Arc<ChainState>,
    rest: &'static [Filter],
    servers: Delegate,
}

impl Next {
    /// Hands the request on and answers what the rest of the chain answers.
    ///
    /// Not an `async fn`: the next filter's future is made here and
    /// returned as it is, so a filter awaiting it holds one pointer, not a
    /// second copy of the request in a wrapper's state.
    pub fn run(self, req: Request) -> BoxFuture<'static, Response> {
        match self.rest.split_first() {
            Some((filter, rest)) => {
                let next = Next {
                    state: self.state.clone(),
                    rest,
                    servers: self.servers,
                };
                filter(self.state, req, next)
            }
            None => {
                let info = req
                    .extensions()
                    .get::<Arc<RequestInfo>>()
                    .cloned()
                    .unwrap_or_default();
                self.servers.serve(req, info)
            }
        }
    }
}

/// Whether an error may need another encoding than JSON: not when the
/// request accepts nothing in particular, or JSON.
fn may_negotiate(req: &Request) -> bool {
    req.headers()
        .get(http::header::ACCEPT)
        .is_some_and(|a| !a.is_empty() && a.as_bytes() != b"application/json")
}

/// An error answered before any endpoint negotiated is written in the
/// encoding the request accepts (upstream's `ErrorNegotiated`).
async fn negotiate_errors(req: Request, next: Next) -> Response {
    let accept = req.headers().get(http::header::ACCEPT).cloned();
    let resp = next.run(req).await;
    crate::endpoints::responses::negotiate_error(accept, resp)
}

/// The server chain behind every filter, as one router.
pub fn build(servers: Delegate, state: Arc<ChainState>) -> Router {
    let chain = Next {
        state,
        rest: FILTERS,
        servers,
    };
    Router::new().fallback_service(tower::service_fn(move |req: Request| {
        let next = chain.clone();
        async move { Ok::<_, std::convert::Infallible>(next.run(req).await) }
    }))
}
