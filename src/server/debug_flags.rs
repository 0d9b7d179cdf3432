//! `/debug/flags`: flags a running server lets an administrator change, as
//! upstream's `routes.DebugFlags`. Only `v` (log verbosity) is offered, as
//! upstream offers only it; kube-apiserver installs it with profiling
//! (`--profiling`, on by default) and leaves it out of the `/` index.

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, Method, StatusCode};

use super::GenericServer;

/// The flags offered, in the index's order.
const FLAGS: &[&str] = &["v"];

/// Every method reaches the handler: upstream answers 406 to all but PUT.
const ANY: &[Method] = &[
    Method::GET,
    Method::PUT,
    Method::POST,
    Method::PATCH,
    Method::DELETE,
];

pub fn install(server: GenericServer) -> GenericServer {
    server
        .route_unlisted("/debug/flags", &[Method::GET], index)
        .route_unlisted("/debug/flags/", &[Method::GET], index)
        .route_unlisted("/debug/flags/v", ANY, put_verbosity)
}

/// upstream's index template, rendered for [`FLAGS`].
async fn index() -> Response {
    let mut body = String::from(
        "<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\nflags:<br>\n<table>\n",
    );
    for flag in FLAGS {
        body.push_str(&format!("\n<tr>{flag}<br>\n"));
    }
    body.push_str("\n</table>\n<br>\nfull flags configurable<br>\n</body>\n</html>\n");
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

async fn put_verbosity(method: Method, body: Bytes) -> Response {
    if method != Method::PUT {
        return plain_text(StatusCode::NOT_ACCEPTABLE, "unsupported http method");
    }
    match crate::logs::set_verbosity(&String::from_utf8_lossy(&body)) {
        Ok(done) => plain_text(StatusCode::OK, &done),
        Err(e) => plain_text(StatusCode::BAD_REQUEST, &e),
    }
}

/// upstream's `writePlainText`: the text and a newline.
fn plain_text(status: StatusCode, text: &str) -> Response {
    let mut r = (status, format!("{text}\n")).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}
