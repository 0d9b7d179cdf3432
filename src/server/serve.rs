//! Serving: TLS 1.2+ with HTTP/2 and HTTP/1.1 on one listener, the client
//! certificate checked once per connection, and a graceful stop that lets
//! in-flight requests finish within a bound.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::filters::ConnInfo;
use crate::auth::x509::{parse_pem_certs, ClientCertAuthority};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What TLS serving needs: the server's certificate and who may present client certificates.
#[derive(Debug, Clone)]
pub struct TlsServing {
    pub config: Arc<ServerConfig>,
    pub client_ca: ClientCertAuthority,
}

impl TlsServing {
    pub fn new(
        cert_pem: &str,
        key_pem: &str,
        client_ca: ClientCertAuthority,
    ) -> Result<Self, String> {
        let certs = parse_pem_certs(cert_pem)?;
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| format!("serving key: {e}"))?;
        let provider = crate::crypto_provider();
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| format!("TLS: {e}"))?
            .with_client_cert_verifier(client_ca.tls_verifier())
            .with_single_cert(certs, key)
            .map_err(|e| format!("serving certificate: {e}"))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsServing {
            config: Arc::new(config),
            client_ca,
        })
    }
}

/// Accepts connections until `stop` fires, then waits up to `drain` for
/// open connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    tls: TlsServing,
    app: Router,
    stop: CancellationToken,
    drain: Duration,
) {
    let acceptor = TlsAcceptor::from(tls.config.clone());
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http2().max_concurrent_streams(1000);
    let builder = Arc::new(builder);
    loop {
        let (tcp, remote) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let client_ca = tls.client_ca.clone();
        let app = app.clone();
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let tls_stream =
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        tracing::debug!(%remote, error = %e, "TLS handshake failed");
                        return;
                    }
                    Err(_) => return,
                };
            let client_cert = tls_stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| client_ca.identify(chain));
            let conn = ConnInfo {
                remote,
                client_cert,
            };
            let svc =
                hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(conn.clone());
                    let mut app = app.clone();
                    async move { app.call(req.map(axum::body::Body::new)).await }
                });
            let conn = builder
                .serve_connection_with_upgrades(TokioIo::new(tls_stream), svc)
                .into_owned();
            if let Err(e) = watcher.watch(conn).await {
                tracing::trace!(%remote, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after {drain:?}; closing them");
    }
}

/// Binds the listening socket; port 0 picks a free one.
pub async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}
