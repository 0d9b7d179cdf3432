//! API Priority and Fairness as a filter (upstream's `WithPriorityAndFairness`),
//! or without it the max-in-flight limits (`WithMaxInFlightLimit`).

use std::sync::Arc;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use http::{header, HeaderValue};

use super::{info_of, names, Answer, ChainState, KeepAlongside, Next};
use crate::api::request_info::{query_value, RequestInfo};
use crate::auth::authenticator::Authenticated;
use crate::server::flowcontrol::{Admission, Classification, Permit, Rejected};

/// API Priority and Fairness, or without it max-in-flight limits (with
/// system:masters exempt, as upstream's fallback).
pub(in crate::server) fn flow_control(s: Arc<ChainState>, req: Request, next: Next) -> Answer {
    let info = info_of(&req);
    let Some(user) = req.extensions().get::<Authenticated>().map(|a| &a.user) else {
        return next.run(req);
    };
    let Some(apf) = s.apf.clone() else {
        if info.is_long_running() || user.groups.iter().any(|g| g == "system:masters") {
            return next.run(req);
        }
        return Box::pin(max_in_flight(s, info, req, next));
    };
    // Long-running requests other than watches are not limited (upstream).
    if info.is_long_running() && info.verb != "watch" {
        return next.run(req);
    }
    let Some(c) = apf.classify(user, &info) else {
        return next.run(req);
    };
    let limit = query_value(req.uri().query(), "limit").and_then(|l| l.parse().ok());
    let seats = apf.width(&info, limit);
    let watch = info.verb == "watch";
    match apf.enter(&c, seats) {
        Admission::Now(got) => dispatch(got, &c, watch, req, next),
        Admission::Queued(queued) => Box::pin(async move {
            let got = apf.wait(&c, queued).await;
            dispatch(got, &c, watch, req, next).await
        }),
    }
}

/// The request under the seats it was given, or shed; either way the
/// answer names its flow schema and priority level.
fn dispatch(
    got: Result<Permit, Rejected>,
    c: &Classification,
    watch: bool,
    req: Request,
    next: Next,
) -> Answer {
    let headers = [
        (names::FLOW_SCHEMA_UID, c.flow_schema_uid.clone()),
        (names::PRIORITY_LEVEL_UID, c.priority_level_uid.clone()),
    ];
    let with_headers = move |mut resp: Response| {
        for (name, value) in headers {
            if let Some(v) = value {
                resp.headers_mut().insert(name, v);
            }
        }
        resp
    };
    match got {
        // A watch holds its seats while it starts, not while it streams.
        Ok(permit) if watch => next
            .run(req)
            .map(move |resp| {
                drop(permit);
                with_headers(resp)
            })
            .boxed(),
        // Anything else until its body is sent, as a Go handler holds them
        // while it writes: a big list costs its seats until it is out.
        Ok(permit) => next
            .run(req)
            .map(move |resp| {
                with_headers(resp.map(|inner| {
                    axum::body::Body::new(KeepAlongside {
                        inner,
                        _held: permit,
                    })
                }))
            })
            .boxed(),
        Err(_) => Box::pin(std::future::ready(with_headers(too_many_requests()))),
    }
}

/// Without APF: one pool of requests for reads, one for writes.
async fn max_in_flight(
    s: Arc<ChainState>,
    info: Arc<RequestInfo>,
    req: Request,
    next: Next,
) -> Response {
    let pool = if info.is_mutating() {
        &s.mutating_inflight
    } else {
        &s.readonly_inflight
    };
    let Ok(_permit) = pool.try_acquire() else {
        return too_many_requests();
    };
    next.run(req).await
}

/// Upstream's answer to a shed request: plain text and `Retry-After`.
fn too_many_requests() -> Response {
    let mut resp = (
        http::StatusCode::TOO_MANY_REQUESTS,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::RETRY_AFTER, "1"),
        ],
        "Too many requests, please try again later.\n",
    )
        .into_response();
    resp.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    resp
}
