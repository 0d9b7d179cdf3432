//! `/healthz`, `/livez` and `/readyz` with named checks, as upstream's
//! healthz package serves them: `?verbose`, `?exclude=NAME`, and one
//! check at `/readyz/NAME`.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};

pub type CheckFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// A named check; `Ok` means healthy.
#[derive(Clone)]
pub struct HealthCheck {
    pub name: String,
    check: Arc<dyn Fn() -> CheckFuture + Send + Sync>,
}

impl std::fmt::Debug for HealthCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthCheck")
            .field("name", &self.name)
            .finish()
    }
}

impl HealthCheck {
    pub fn new<F, Fut>(name: impl Into<String>, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        HealthCheck {
            name: name.into(),
            check: Arc::new(move || Box::pin(f())),
        }
    }

    pub fn ping() -> Self {
        Self::new("ping", || async { Ok(()) })
    }

    pub async fn run(&self) -> Result<(), String> {
        (self.check)().await
    }
}

fn text(code: StatusCode, body: String) -> Response {
    let mut r = (code, body).into_response();
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

/// Answers `/<endpoint>` (all checks) for the given query string.
pub async fn serve_all(endpoint: &str, checks: &[HealthCheck], query: Option<&str>) -> Response {
    let mut verbose = false;
    let mut excluded: HashSet<String> = HashSet::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "verbose" => verbose = v != "false" && v != "0",
            "exclude" => {
                excluded.insert(crate::api::request_info::percent_decode(v));
            }
            _ => {}
        }
    }
    let mut body = String::new();
    let mut failed = false;
    for c in checks {
        if excluded.remove(&c.name) {
            body.push_str(&format!("[+]{} excluded: ok\n", c.name));
            continue;
        }
        match c.run().await {
            Ok(()) => body.push_str(&format!("[+]{} ok\n", c.name)),
            Err(e) => {
                failed = true;
                tracing::info!(check = %c.name, endpoint, error = %e, "health check failed");
                body.push_str(&format!("[-]{} failed: reason withheld\n", c.name));
            }
        }
    }
    if !excluded.is_empty() {
        let mut names: Vec<_> = excluded.into_iter().collect();
        names.sort();
        let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        body.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            quoted.join(",")
        ));
    }
    if failed {
        body.push_str(&format!("{endpoint} check failed\n"));
        return text(StatusCode::INTERNAL_SERVER_ERROR, body);
    }
    if verbose {
        body.push_str(&format!("{endpoint} check passed\n"));
        return text(StatusCode::OK, body);
    }
    text(StatusCode::OK, "ok".into())
}

/// Answers `/<endpoint>/<name>`.
pub async fn serve_one(checks: &[HealthCheck], name: &str) -> Response {
    match checks.iter().find(|c| c.name == name) {
        None => text(StatusCode::NOT_FOUND, "404 page not found\n".into()),
        Some(c) => match c.run().await {
            Ok(()) => text(StatusCode::OK, "ok".into()),
            Err(e) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {e}\n"),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(r: Response) -> (u16, String) {
        let code = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .unwrap_or_default();
        (code, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn verbose_exclude_and_failure() {
        let checks = vec![
            HealthCheck::ping(),
            HealthCheck::new("etcd", || async { Err("down".to_string()) }),
        ];
        let (code, text) = body(serve_all("readyz", &checks, None).await).await;
        assert_eq!(code, 500);
        assert_eq!(
            text,
            "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"
        );
        let (code, text) =
            body(serve_all("readyz", &checks, Some("verbose&exclude=etcd")).await).await;
        assert_eq!(code, 200);
        assert_eq!(
            text,
            "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n"
        );
        let (code, text) = body(serve_all("readyz", &checks[..1], None).await).await;
        assert_eq!((code, text.as_str()), (200, "ok"));
        let (code, _) = body(serve_one(&checks, "etcd").await).await;
        assert_eq!(code, 500);
        let (code, _) = body(serve_one(&checks, "nope").await).await;
        assert_eq!(code, 404);
    }
}
