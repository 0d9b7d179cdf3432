//! The handler chain (upstream's `DefaultBuildHandlerChain`): the filters
//! every request passes, outermost first, before the router of the server
//! chain sees it.
//!
//! The chain is a static list of functions and a [`Next`] that walks it,
//! rather than a stack of tower layers: a layer made with axum's `from_fn`
//! clones the service it wraps, re-boxes it and moves its future on every
//! request, which for fourteen filters was most of what a GET cost beyond
//! the HTTP/2 and TLS work (bench/run's callgrind figure). Here a filter
//! decides what it can at once and hands on; what it does with the answer
//! is a small mapping future, and only a filter that must wait (a token
//! lookup, a queue, an audit event with the body) keeps a state machine.

use std::sync::Arc;

use super::chain::Delegate;
use crate::api::request_info::RequestInfo;
use axum::extract::Request;
use axum::response::Response;
use axum::Router;

use super::filters::{self, Answer, ChainState};
use super::impersonation;

/// One filter: the shared state, the request, and the rest of the chain.
type Filter = fn(Arc<ChainState>, Request, Next) -> Answer;

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
    |_, req, next| filters::panic_recovery(req, next),
    |_, req, next| filters::request_info(req, next),
    |_, req, next| match filters::traced(&req) {
        true => Box::pin(filters::trace(req, next)),
        false => next.run(req),
    },
    filters::metrics,
    filters::authentication,
    filters::audit,
    |s, req, next| match impersonation::impersonates(&req) {
        true => Box::pin(impersonation::impersonation(s, req, next)),
        false => next.run(req),
    },
    // After authentication and impersonation, as upstream: the user a
    // request acts as decides its priority.
    filters::flow_control,
    filters::authorization,
    filters::timeout,
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
    pub fn run(self, req: Request) -> Answer {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorization::AlwaysAllow;
    use std::time::Duration;
    use tokio::sync::Semaphore;

    fn state() -> Arc<ChainState> {
        Arc::new(ChainState {
            authenticator: crate::auth::Authenticator::new(None, true),
            authorizer: Arc::new(AlwaysAllow),
            metrics: Default::default(),
            readonly_inflight: Semaphore::new(1),
            mutating_inflight: Semaphore::new(1),
            request_timeout: Duration::from_secs(60),
            audit: None,
            apf: None,
        })
    }

    async fn answer_of(rest: &'static [Filter], router: Router) -> (u16, serde_json::Value) {
        let next = Next {
            state: state(),
            rest,
            servers: Delegate::from_router(router),
        };
        let req = Request::builder()
            .uri("/healthz")
            .body(axum::body::Body::empty())
            .expect("request");
        let resp = filters::panic_recovery(req, next).await;
        let code = resp.status().as_u16();
        let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .expect("body");
        (code, serde_json::from_slice(&body).unwrap_or_default())
    }

    /// Filters do their first steps as the chain is walked, outside any
    /// future: a panic there must be caught as one in a handler's future.
    #[tokio::test]
    async fn a_panic_in_a_filter_or_a_handler_is_a_500_status() {
        const PANICS_AT_ONCE: &[Filter] = &[|_, _, _| panic!("in a filter")];
        let (code, status) = answer_of(PANICS_AT_ONCE, Router::new()).await;
        assert_eq!(code, 500, "{status}");
        assert_eq!(status["reason"], "InternalError", "{status}");
        assert!(
            status["message"]
                .as_str()
                .is_some_and(|m| m.contains("panicked while handling \"GET /healthz\"")),
            "{status}"
        );

        async fn panics_when_polled() -> &'static str {
            tokio::task::yield_now().await;
            panic!("in a handler")
        }
        let panics_later = Router::new().fallback(panics_when_polled);
        let (code, status) = answer_of(&[], panics_later).await;
        assert_eq!(code, 500, "{status}");
        assert_eq!(status["reason"], "InternalError", "{status}");

        let (code, _) = answer_of(&[], Router::new().fallback(|| async { "fine" })).await;
        assert_eq!(code, 200);
    }
}
