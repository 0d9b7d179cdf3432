//! Which server and credentials a client command (`kapi routes`,
//! `trace-request`, `apiservice`) uses, picked as kubectl picks them
//! (client-go's clientcmd), through kube's kubeconfig support:
//! `--kubeconfig` alone when given; else every file of `$KUBECONFIG`
//! merged (first file to set a value wins, missing files skipped); else the
//! kubeconfig `kapi serve` writes in `./.kapi`, then `~/.kube/config`.
//! `--context` picks a context other than the current one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{Config, KubeConfigOptions, Kubeconfig, KubeconfigError};
use secrecy::ExposeSecret;
use serde_json::Value;

/// The kubeconfig `kapi serve` writes with its default `--data-dir`.
pub const KAPI_KUBECONFIG: &str = ".kapi/admin.kubeconfig";

/// Why no client could be made, or a request failed; one sentence.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RemoteError(pub String);

/// What the command line chose.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// A server URL overriding the context's cluster (credentials stay).
    pub server: Option<String>,
}

impl Selection {
    pub fn file(path: &Path) -> Selection {
        Selection {
            kubeconfig: Some(path.to_path_buf()),
            ..Selection::default()
        }
    }

    /// Whether anything names a kubeconfig: `--kubeconfig` or `$KUBECONFIG`.
    pub fn is_explicit(&self) -> bool {
        self.kubeconfig.is_some() || kubeconfig_env().is_some()
    }

    /// The kubeconfig, merged as kubectl merges it, and where it came from.
    pub fn load(&self) -> Result<(Kubeconfig, String), RemoteError> {
        if let Some(path) = &self.kubeconfig {
            let origin = format!("--kubeconfig {}", path.display());
            return read(path)
                .map(|k| (k, origin.clone()))
                .map_err(|e| RemoteError(format!("{origin}: {e}")));
        }
        if let Some(list) = kubeconfig_env() {
            let paths: Vec<PathBuf> = std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .collect();
            let mut merged: Option<Kubeconfig> = None;
            for p in paths.iter().filter(|p| p.exists()) {
                let next = read(p)
                    .map_err(|e| RemoteError(format!("$KUBECONFIG {}: {e}", p.display())))?;
                merged = Some(match merged {
                    None => next,
                    Some(m) => m
                        .merge(next)
                        .map_err(|e| RemoteError(format!("$KUBECONFIG: {e}")))?,
                });
            }
            let origin = format!("$KUBECONFIG {}", list.to_string_lossy());
            return merged.map(|k| (k, origin)).ok_or_else(|| {
                RemoteError(format!(
                    "none of the files in $KUBECONFIG exists ({}); is kapi serving? `kapi serve` prints the line to export",
                    list.to_string_lossy()
                ))
            });
        }
        let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kube/config"));
        for path in std::iter::once(PathBuf::from(KAPI_KUBECONFIG)).chain(home) {
            if path.exists() {
                let origin = path.display().to_string();
                return read(&path)
                    .map(|k| (k, origin.clone()))
                    .map_err(|e| RemoteError(format!("{origin}: {e}")));
            }
        }
        Err(RemoteError(format!(
            "no kubeconfig to find the server by: --kubeconfig is not given, $KUBECONFIG is not set, and neither {KAPI_KUBECONFIG} nor ~/.kube/config exists. Start one with `kapi serve` (it writes {KAPI_KUBECONFIG} here), or pass --kubeconfig"
        )))
    }
}

fn kubeconfig_env() -> Option<OsString> {
    std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty())
}

fn read(path: &Path) -> Result<Kubeconfig, String> {
    Kubeconfig::read_from(path).map_err(|e| match e {
        KubeconfigError::ReadConfig(io, _) => io.to_string(),
        KubeconfigError::Parse(e) => format!("not a kubeconfig: {}", one_line(&e.to_string())),
        other => one_line(&other.to_string()),
    })
}

/// A client for the server a [`Selection`] names.
pub struct Remote {
    pub client: reqwest::Client,
    /// The server URL, without a trailing slash.
    pub server: String,
    pub token: Option<String>,
}

impl Remote {
    pub async fn connect(sel: &Selection) -> Result<Remote, RemoteError> {
        let (kubeconfig, origin) = sel.load()?;
        let fail = |m: String| RemoteError(format!("{origin}: {m}"));
        // client-go names the user in its errors about credentials.
        let user_name = sel
            .context
            .as_ref()
            .or(kubeconfig.current_context.as_ref())
            .and_then(|c| kubeconfig.contexts.iter().find(|n| &n.name == c))
            .and_then(|n| n.context.as_ref())
            .and_then(|c| c.user.clone())
            .unwrap_or_default();
        let options = KubeConfigOptions {
            context: sel.context.clone(),
            ..KubeConfigOptions::default()
        };
        let config = Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| {
                fail(match e {
                    KubeconfigError::CurrentContextNotSet => "current-context is not set".into(),
                    KubeconfigError::LoadContext(name) => {
                        format!("context {} does not exist", crate::api::go_quote(&name))
                    }
                    KubeconfigError::LoadClusterOfContext(name) => {
                        format!("cluster {} does not exist", crate::api::go_quote(&name))
                    }
                    KubeconfigError::MissingClusterUrl => "the cluster has no server".into(),
                    other => one_line(&other.to_string()),
                })
            })?;
        let server = sel
            .server
            .clone()
            .unwrap_or_else(|| config.cluster_url.to_string())
            .trim_end_matches('/')
            .to_string();
        let _ = crate::crypto_provider();
        let mut b = reqwest::Client::builder().timeout(Duration::from_secs(30));
        if let Some(roots) = &config.root_cert {
            let mut certs = Vec::new();
            for der in roots {
                certs.push(
                    reqwest::Certificate::from_der(der)
                        .map_err(|e| fail(format!("certificate-authority: {e}")))?,
                );
            }
            b = b.tls_certs_only(certs);
        }
        if config.accept_invalid_certs {
            b = b.danger_accept_invalid_certs(true);
        }
        let user = &config.auth_info;
        if user.exec.is_some() || user.auth_provider.is_some() {
            return Err(fail(
                "the user authenticates through a credential plugin, which kapi does not run; use a context with a client certificate or a token".into(),
            ));
        }
        let cert = pem_of(
            user.client_certificate_data.as_deref(),
            user.client_certificate.as_deref(),
            "client-certificate",
        )
        .map_err(&fail)?;
        let key = pem_of(
            user.client_key_data.as_ref().map(|s| s.expose_secret()),
            user.client_key.as_deref(),
            "client-key",
        )
        .map_err(&fail)?;
        // Half a client certificate is an error, as client-go makes it,
        // never a silent fall back to anonymous.
        match (cert, key) {
            (Some(mut cert), Some(key)) => {
                cert.push(b'\n');
                cert.extend(key);
                let id = reqwest::Identity::from_pem(&cert)
                    .map_err(|e| fail(format!("client certificate: {e}")))?;
                b = b.identity(id);
            }
            (Some(_), None) => {
                return Err(fail(
                    format!("client-key-data or client-key must be specified for {user_name} to use the clientCert authentication method"),
                ))
            }
            (None, Some(_)) => {
                return Err(fail(
                    format!("client-cert-data or client-cert must be specified for {user_name} to use the clientCert authentication method"),
                ))
            }
            (None, None) => {}
        }
        let token = match (&user.token, &user.token_file) {
            (Some(t), _) => Some(t.expose_secret().to_string()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(f)
                    .map_err(|e| fail(format!("tokenFile {f}: {e}")))?
                    .trim()
                    .to_string(),
            ),
            _ => None,
        };
        let client = b.build().map_err(|e| fail(e.to_string()))?;
        Ok(Remote {
            client,
            server,
            token,
        })
    }

    pub async fn get_json(&self, path: &str, accept: &str) -> Result<Value, RemoteError> {
        let url = format!("{}{path}", self.server);
        let mut req = self.client.get(&url).header(http::header::ACCEPT, accept);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| RemoteError(request_error("GET", &url, &e)))?;
        let status = resp.status();
        let body = resp
            .bytes()
            .await
            .map_err(|e| RemoteError(request_error("GET", &url, &e)))?;
        if !status.is_success() {
            let msg = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
                .unwrap_or_else(|| String::from_utf8_lossy(&body).trim().to_string());
            return Err(RemoteError(format!(
                "GET {url}: {status}: {}",
                one_line(&msg)
            )));
        }
        serde_json::from_slice(&body).map_err(|e| RemoteError(format!("GET {url}: not JSON: {e}")))
    }
}

impl Remote {
    /// Posts a review object (ImageReview, TokenReview, SubjectAccessReview)
    /// to the server URL as it is and returns the answer's `status`,
    /// retried as upstream's webhook client retries: server errors, 429,
    /// timeouts and broken connections, `REVIEW_ATTEMPTS` times, waiting
    /// `backoff` and then half as long again each time.
    pub async fn post_review(&self, review: &Value, backoff: Duration) -> Result<Value, String> {
        let url = &self.server;
        let mut wait = backoff;
        let mut last = String::new();
        for attempt in 0..REVIEW_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(wait).await;
                wait = wait.mul_f64(1.5);
            }
            let mut req = self.client.post(url).json(review);
            if let Some(t) = &self.token {
                req = req.bearer_auth(t);
            }
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    last = format!("Post {}: {}", crate::api::go_quote(url), error_chain(&e));
                    if e.is_connect() || e.is_timeout() || e.is_request() {
                        continue;
                    }
                    return Err(last);
                }
            };
            let code = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            if (200..300).contains(&code) {
                if body["status"].is_object() {
                    return Ok(body["status"].clone());
                }
                return Err(format!(
                    "0-length response with status code: {code} and content type: application/json"
                ));
            }
            last = body["message"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| format!("Error contacting webhook: {code}"));
            if !matches!(code, 429 | 500 | 504) {
                return Err(last);
            }
        }
        Err(last)
    }
}

/// Attempts at a review webhook (upstream's webhook backoff `Steps`).
pub const REVIEW_ATTEMPTS: u32 = 5;

/// PEM from inline base64 data or a file (already absolute: kube resolves
/// paths against the kubeconfig's directory).
fn pem_of(data: Option<&str>, file: Option<&str>, what: &str) -> Result<Option<Vec<u8>>, String> {
    use base64::Engine as _;
    if let Some(data) = data {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|e| format!("{what}-data is not base64: {e}"));
    }
    match file {
        Some(f) => std::fs::read(f)
            .map(Some)
            .map_err(|e| format!("{what} {f}: {e}")),
        None => Ok(None),
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A request that got no answer, in words: a refused connection says the
/// server is not running there, as kubectl says it.
pub fn request_error(method: impl std::fmt::Display, url: &str, e: &reqwest::Error) -> String {
    if e.is_connect() {
        let mut root: &dyn std::error::Error = e;
        while let Some(next) = root.source() {
            root = next;
        }
        format!(
            "{method} {url}: cannot connect ({root}); is the server running? (`kapi serve` starts one)"
        )
    } else if e.is_timeout() {
        format!("{method} {url}: no answer within 30s")
    } else {
        format!("{method} {url}: {}", error_chain(e))
    }
}

/// An error with its causes, once each, on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = s.source();
    }
    one_line(&parts.join(": "))
}
