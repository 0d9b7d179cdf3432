//! Admission webhooks for tests, as envtest's `WebhookInstallOptions` give
//! them: serving certificates from a CA of their own, a webhook server on
//! 127.0.0.1, and webhook configurations written for a cluster (a
//! `clientConfig.service`) pointed at that server instead.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;
use k8s_openapi::ByteString;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kube::core::DynamicObject;
use tokio_util::sync::CancellationToken;

use super::Error;

/// A CA and a serving certificate it signs for `127.0.0.1`, `::1` and
/// `localhost`, also written to a temporary directory as `ca.crt`,
/// `tls.crt` and `tls.key` (the names controller-runtime's and kube-rs's
/// webhook servers read), for a test that runs its own webhook server.
pub struct WebhookCertificates {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
    dir: tempfile::TempDir,
}

impl WebhookCertificates {
    pub fn generate() -> Result<WebhookCertificates, Error> {
        let dir = tempfile::Builder::new().prefix("kapi-webhook-").tempdir()?;
        let names = crate::pki::ServingNames {
            dns: vec!["localhost".into()],
            ips: vec![
                std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::Ipv6Addr::LOCALHOST.into(),
            ],
        };
        let (ca, serving) =
            crate::pki::ensure_ca_and_serving(dir.path(), "ca", "webhook-ca", "tls", &names)
                .map_err(|e| Error::Credentials(e.to_string()))?;
        Ok(WebhookCertificates {
            ca_pem: ca.cert_pem,
            cert_pem: serving.cert_pem,
            key_pem: serving.key_pem,
            dir,
        })
    }

    /// Where `ca.crt`, `tls.crt` and `tls.key` are; removed on drop.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// A webhook server as kapi reaches it: its address and the CA its
/// certificate is signed by. Either served here ([`Webhook::serve`]) or
/// the test's own ([`Webhook::running_at`]).
pub struct Webhook {
    addr: SocketAddr,
    certificates: Arc<WebhookCertificates>,
    stop: Option<CancellationToken>,
}

impl Webhook {
    /// Serves `review` over HTTPS on 127.0.0.1, on a port of its own: every
    /// POST, whatever its path, is an `AdmissionReview` whose request is
    /// handed over with that path; the response is sent back in the
    /// review's own apiVersion. A body that is not a review gets a 400.
    /// Dropping the `Webhook` stops the server.
    pub async fn serve<F, Fut>(review: F) -> Result<Webhook, Error>
    where
        F: Fn(String, AdmissionRequest<DynamicObject>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = AdmissionResponse> + Send + 'static,
    {
        let certificates = Arc::new(WebhookCertificates::generate()?);
        // Client certificates are not asked for; rustls needs a root anyway.
        let authority = crate::auth::x509::ClientCertAuthority::new(&[&certificates.ca_pem])
            .map_err(Error::Credentials)?;
        let tls = crate::server::serve::TlsServing::new(
            &certificates.cert_pem,
            &certificates.key_pem,
            authority,
        )
        .map_err(Error::Credentials)?;
        let app = axum::Router::new().fallback(move |uri: http::Uri, body: bytes::Bytes| {
            let review = review.clone();
            async move { answer(review, uri.path().to_string(), &body).await }
        });
        let (listener, addr) =
            crate::server::serve::bind(SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0)))
                .await?;
        let stop = CancellationToken::new();
        tokio::spawn(crate::server::serve::serve(
            listener,
            tls,
            app,
            stop.clone(),
            std::time::Duration::from_secs(1),
        ));
        Ok(Webhook {
            addr,
            certificates,
            stop: Some(stop),
        })
    }

    /// A webhook server the test runs itself at `addr`, serving with
    /// `certificates`' `tls.crt` and `tls.key`.
    pub fn running_at(addr: SocketAddr, certificates: WebhookCertificates) -> Webhook {
        Webhook {
            addr,
            certificates: Arc::new(certificates),
            stop: None,
        }
    }

    /// `https://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The CA's PEM, as a webhook configuration's `caBundle` holds it.
    pub fn ca_bundle(&self) -> ByteString {
        ByteString(self.certificates.ca_pem.clone().into_bytes())
    }

    /// A `clientConfig` for the webhook at `path` on this server.
    pub fn client_config(&self, path: &str) -> WebhookClientConfig {
        WebhookClientConfig {
            url: Some(self.url(path)),
            ca_bundle: Some(self.ca_bundle()),
            service: None,
        }
    }

    /// Points `config` here, as envtest does: a `service` reference becomes
    /// a URL with the service's path, a URL keeps its path and query, and
    /// the `caBundle` becomes this server's CA.
    pub fn point_at_me(&self, config: &mut WebhookClientConfig) {
        let path = match (&config.service, &config.url) {
            (Some(service), _) => service.path.clone().unwrap_or_default(),
            (None, Some(url)) => path_and_query(url).to_string(),
            (None, None) => String::new(),
        };
        *config = self.client_config(&path);
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        if let Some(stop) = &self.stop {
            stop.cancel();
        }
    }
}

/// What follows `scheme://host[:port]` in a URL.
fn path_and_query(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find(['/', '?']).map_or("", |i| &rest[i..])
}

async fn answer<F, Fut>(review: F, path: String, body: &[u8]) -> axum::response::Response
where
    F: Fn(String, AdmissionRequest<DynamicObject>) -> Fut,
    Fut: Future<Output = AdmissionResponse>,
{
    use axum::response::IntoResponse;
    let parsed: Result<AdmissionReview<DynamicObject>, String> =
        serde_json::from_slice(body).map_err(|e| e.to_string());
    let request: Result<AdmissionRequest<DynamicObject>, String> = parsed.and_then(|r| {
        r.try_into()
            .map_err(|_| "the AdmissionReview has no request".to_string())
    });
    match request {
        Ok(request) => {
            let types = request.types.clone();
            let mut out = review(path, request).await.into_review();
            // The answer is in the version it was asked in.
            out.types = types;
            axum::Json(out).into_response()
        }
        Err(e) => (http::StatusCode::BAD_REQUEST, e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::path_and_query;

    #[test]
    fn a_url_keeps_its_path_and_query() {
        assert_eq!(
            path_and_query("https://svc.ns:8443/mutate?x=1"),
            "/mutate?x=1"
        );
        assert_eq!(path_and_query("https://svc.ns:8443"), "");
        assert_eq!(path_and_query("https://svc.ns?x"), "?x");
    }
}
