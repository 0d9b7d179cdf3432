//! Calling out: webhook client configs (`url`, or `service` with namespace,
//! name, path and port) resolved and posted to over TLS verified with the
//! config's `caBundle`, as upstream's webhook package does. A Service is
//! resolved through its Endpoints (not its ClusterIP, which nothing routes
//! on a developer's machine), so a Service whose endpoints point at
//! 127.0.0.1:PORT reaches a webhook the developer runs locally. The
//! resolving is the registry's ([`ServiceResolver`]); this client sits
//! below it, so admission, conversion and the probes can all call out.

use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use futures::future::BoxFuture;

/// A webhook's `clientConfig`.
#[derive(Debug, Clone, Default)]
pub struct ClientConfig {
    pub url: Option<String>,
    pub service: Option<ServiceRef>,
    /// PEM bundle verifying the webhook's serving certificate.
    pub ca_bundle: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Default)]
pub struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub path: String,
    pub port: u16,
}

impl ClientConfig {
    /// From a `clientConfig` (or APIService `spec.service` + `caBundle`) JSON value.
    pub fn from_json(v: &Value) -> ClientConfig {
        let ca = v["caBundle"]
            .as_str()
            .filter(|s| !s.is_empty())
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
        let service = v["service"].as_object().map(|s| ServiceRef {
            namespace: s
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            name: s
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            path: s
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            port: s
                .get("port")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(443),
        });
        ClientConfig {
            url: v["url"].as_str().map(String::from),
            service,
            ca_bundle: ca,
        }
    }
}

/// Finds where a Service's port is served. The registry implements it
/// (through the Service's Endpoints); the webhook client only asks.
pub trait ServiceResolver: Send + Sync {
    /// The host and port serving `port` of Service `namespace/name`.
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<(String, u16), String>>;
}

fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The URL a client config points at (services through their endpoints).
pub async fn url(services: &dyn ServiceResolver, cfg: &ClientConfig) -> Result<String, String> {
    if let Some(u) = &cfg.url {
        return Ok(u.clone());
    }
    let s = cfg
        .service
        .as_ref()
        .ok_or("clientConfig needs url or service")?;
    let (host, port) = services.resolve(&s.namespace, &s.name, s.port).await?;
    Ok(format!("https://{}{}", host_port(&host, port), s.path))
}

/// An HTTPS client trusting `ca_bundle` (or the system's roots without one).
pub fn client(
    ca_bundle: Option<&[u8]>,
    insecure: bool,
    identity_pem: Option<&[u8]>,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    // rustls needs kapi's one crypto provider installed (see `crate::crypto_provider`).
    let _ = crate::crypto_provider();
    let mut b = reqwest::Client::builder().timeout(timeout);
    if let Some(ca) = ca_bundle {
        let certs =
            reqwest::Certificate::from_pem_bundle(ca).map_err(|e| format!("caBundle: {e}"))?;
        b = b.tls_certs_only(certs);
    }
    if insecure {
        b = b.danger_accept_invalid_certs(true);
    }
    if let Some(id) = identity_pem {
        b = b.identity(
            reqwest::Identity::from_pem(id).map_err(|e| format!("client certificate: {e}"))?,
        );
    }
    b.build().map_err(|e| e.to_string())
}

/// Posts `body` as JSON and returns the JSON answer.
pub async fn post_json(
    services: &dyn ServiceResolver,
    cfg: &ClientConfig,
    body: &Value,
    timeout: Duration,
) -> Result<Value, String> {
    let target = url(services, cfg).await?;
    let c = client(cfg.ca_bundle.as_deref(), false, None, timeout)?;
    let resp = c
        .post(&target)
        .json(body)
        .send()
        .await
        .map_err(|e| format!("failed calling webhook {target:?}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("webhook {target:?} answered {}", resp.status()));
    }
    resp.json()
        .await
        .map_err(|e| format!("webhook {target:?} answered with a bad body: {e}"))
}
