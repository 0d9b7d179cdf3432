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
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::filters::ConnInfo;
use crate::auth::x509::ClientCertAuthority;

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// upstream's `ReadHeaderTimeout`: a client that has not sent a whole
/// request head within this time is disconnected (slowloris).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// Go's `DefaultMaxHeaderBytes`, upstream's limit on a request's headers.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Headers in one HTTP/1 request: Go has no count limit below the byte
/// limit; this bounds the parser's allocation without refusing real clients.
const MAX_HEADER_COUNT: usize = 8192;
/// What Go's TLS server answers a client speaking plain HTTP.
const PLAIN_HTTP_ANSWER: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// Runtime worker threads for serving: one core fewer than the machine
/// has (at least one), or `TOKIO_WORKER_THREADS` when set. kapi's clients
/// (kubectl, the controllers and tests under development, envtest) run on
/// the same machine; a worker per core makes the server's threads and
/// theirs take turns on every core, and each small request then pays for
/// waking, stealing and moving between workers. On 2 cores with 32 clients
/// beside it, one worker serves about a fifth more gets per second than
/// two, with p99 1-2 ms instead of 4.5. Work that is long on its own (big
/// list bodies) still gets a core: it leaves the worker (`block_in_place`),
/// and the worker goes on with the rest.
pub fn worker_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    workers_for(std::env::var("TOKIO_WORKER_THREADS").ok().as_deref(), cores)
}

fn workers_for(set: Option<&str>, cores: usize) -> usize {
    set.and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| cores.saturating_sub(1).max(1))
}

/// What TLS serving needs: the server's certificate and who may present client certificates.
#[derive(Debug, Clone)]
pub struct TlsServing {
    pub config: Arc<ServerConfig>,
    pub client_ca: ClientCertAuthority,
}

/// `--tls-min-version` and `--tls-cipher-suites`, checked as upstream
/// checks them (Go's names). TLS 1.3's suites are not configurable, as in
/// Go; TLS 1.0 and 1.1 and the suites Go calls insecure are not offered
/// by rustls, and are refused rather than silently dropped.
#[derive(Debug, Clone, Default)]
pub struct TlsPolicy {
    pub tls13_only: bool,
    /// The TLS 1.2 suites allowed; empty means rustls's defaults.
    pub tls12_suites: Vec<rustls::CipherSuite>,
}

impl TlsPolicy {
    pub fn parse(min_version: &str, suites: &[String]) -> Result<TlsPolicy, String> {
        let tls13_only = match min_version {
            "" | "VersionTLS12" => false,
            "VersionTLS13" => true,
            "VersionTLS10" | "VersionTLS11" => {
                return Err(format!(
                    "{min_version} is not offered: kapi's TLS (rustls) speaks TLS 1.2 and 1.3 only"
                ))
            }
            other => {
                return Err(format!(
                    "unknown tls version {}",
                    crate::api::go_quote(other)
                ))
            }
        };
        if tls13_only && !suites.is_empty() {
            return Err(
                "cipher suites may not be specified when --tls-min-version is 'VersionTLS13'"
                    .into(),
            );
        }
        let offered: Vec<rustls::CipherSuite> = crate::crypto_provider()
            .cipher_suites
            .iter()
            .map(|s| s.suite())
            .collect();
        let mut tls12_suites = Vec::new();
        for name in suites.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            // Go's aliases for the ChaCha suites.
            let canonical = match name {
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" => {
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
                }
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" => {
                    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
                }
                n => n,
            };
            if GO_TLS13_SUITES.contains(&canonical) {
                continue;
            }
            match offered.iter().find(|s| s.as_str() == Some(canonical)) {
                Some(s) => tls12_suites.push(*s),
                None if GO_OTHER_SUITES.contains(&canonical) => {
                    return Err(format!(
                    "Cipher suite {name} is not offered: kapi's TLS (rustls) has only AEAD suites"
                ))
                }
                None => {
                    return Err(format!(
                        "Cipher suite {name} not supported or doesn't exist"
                    ))
                }
            }
        }
        Ok(TlsPolicy {
            tls13_only,
            tls12_suites,
        })
    }
}

/// TLS 1.3 suites Go knows by name (accepted, not configurable).
const GO_TLS13_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// TLS 1.2 suites Go knows that rustls does not offer (CBC, RC4, 3DES,
/// static RSA).
const GO_OTHER_SUITES: &[&str] = &[
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
];

/// Orders suites as kube-apiserver's TLS (Go's crypto/tls, on a machine
/// with AES hardware) prefers them: AES-128-GCM, then AES-256-GCM, then
/// ChaCha20-Poly1305, in each TLS version. rustls's defaults put
/// AES-256 first and follow the client's order, so a rustls client (which
/// also lists AES-256 first) got AES-256 from kapi and AES-128 from
/// kube-apiserver. AES-128 is also the cheaper to run: ten rounds against
/// fourteen, on every byte served. Go picks ChaCha20 first for a client
/// that lists it first (a machine without AES hardware); rustls has no hook
/// for that choice, so such a client gets AES-128 here.
pub fn prefer_as_go_does(suites: &mut [rustls::SupportedCipherSuite]) {
    fn rank(s: &rustls::SupportedCipherSuite) -> u8 {
        let name = s.suite().as_str().unwrap_or("");
        if name.contains("AES_128_GCM") {
            0
        } else if name.contains("AES_256_GCM") {
            1
        } else {
            2
        }
    }
    // Stable: TLS 1.3 before 1.2, and ECDSA before RSA within a rank, as
    // rustls lists them and as Go orders them.
    suites.sort_by_key(|s| (s.version() != &rustls::version::TLS13, rank(s)));
}

impl TlsServing {
    pub fn new(
        cert_pem: &str,
        key_pem: &str,
        client_ca: ClientCertAuthority,
    ) -> Result<Self, String> {
        TlsServing::with_policy(cert_pem, key_pem, client_ca, &TlsPolicy::default(), &[])
    }

    /// Serving `cert_pem`, or one of `sni` for the names they cover.
    pub fn with_policy(
        cert_pem: &str,
        key_pem: &str,
        client_ca: ClientCertAuthority,
        policy: &TlsPolicy,
        sni: &[super::sni::LoadedCert],
    ) -> Result<Self, String> {
        let resolver = super::sni::SniResolver::new(cert_pem, key_pem, sni)?;
        let mut provider = (*crate::crypto_provider()).clone();
        prefer_as_go_does(&mut provider.cipher_suites);
        if !policy.tls12_suites.is_empty() {
            provider.cipher_suites.retain(|s| {
                s.version() == &rustls::version::TLS13 || policy.tls12_suites.contains(&s.suite())
            });
        }
        let versions: &[&'static rustls::SupportedProtocolVersion] = if policy.tls13_only {
            &[&rustls::version::TLS13]
        } else {
            &[&rustls::version::TLS13, &rustls::version::TLS12]
        };
        let mut config = ServerConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(versions)
            .map_err(|e| format!("TLS: {e}"))?
            .with_client_cert_verifier(client_ca.tls_verifier())
            .with_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        // The server's order decides, as in Go's crypto/tls.
        config.ignore_client_order = true;
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
    serve_with_streams(listener, tls, app, stop, drain, 1000).await
}

/// [`serve`], allowing `max_streams` concurrent streams per HTTP/2
/// connection (`--http2-max-streams-per-connection`).
pub async fn serve_with_streams(
    listener: TcpListener,
    tls: TlsServing,
    app: Router,
    stop: CancellationToken,
    drain: Duration,
    max_streams: u32,
) {
    let acceptor = TlsAcceptor::from(tls.config.clone());
    let graceful = GracefulShutdown::new();
    // The protocol comes from ALPN, so hyper never waits for bytes to guess
    // it: a client that connects and says nothing meets the header timeout.
    let h1 = Arc::new(connection_builder(Protocol::Http1, max_streams));
    let h2 = Arc::new(connection_builder(Protocol::Http2, max_streams));
    loop {
        let (tcp, remote) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    crate::warn_limited!("accept-failed", error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let client_ca = tls.client_ca.clone();
        let app = app.clone();
        let (h1, h2) = (h1.clone(), h2.clone());
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            if speaks_plain_http(&tcp).await {
                use tokio::io::AsyncWriteExt;
                let mut tcp = tcp;
                let _ = tcp.write_all(PLAIN_HTTP_ANSWER).await;
                let _ = tcp.shutdown().await;
                return;
            }
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
                    async move {
                        if let Some(refused) = missing_host(&req) {
                            return Ok(refused);
                        }
                        app.call(req.map(axum::body::Body::new)).await
                    }
                });
            let ended = if tls_stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                // Only HTTP/2 here: anything but its preface ends the
                // connection, and a client silent past the preface timeout too.
                let polls = super::coalesce::Polls::default();
                let io = TokioIo::new(FirstReadDeadline::new(
                    super::coalesce::Coalesce::new(tls_stream, polls.clone()),
                    HANDSHAKE_TIMEOUT,
                ));
                polls
                    .count(watcher.watch(h2.serve_connection(io, svc).into_owned()))
                    .await
            } else {
                // Upgrades (exec, port-forward through the aggregator) need
                // HTTP/1; a client that never sends a byte meets the same
                // deadline as one that sends its head too slowly.
                let io = TokioIo::new(FirstReadDeadline::new(tls_stream, HEADER_READ_TIMEOUT));
                watcher
                    .watch(h1.serve_connection_with_upgrades(io, svc).into_owned())
                    .await
            };
            if let Err(e) = ended {
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

/// Go's server refuses an HTTP/1.1 request without a Host header.
fn missing_host<B>(req: &http::Request<B>) -> Option<axum::response::Response> {
    use axum::response::IntoResponse;
    (req.version() == http::Version::HTTP_11 && !req.headers().contains_key(http::header::HOST))
        .then(|| {
            (
                http::StatusCode::BAD_REQUEST,
                [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "400 Bad Request: missing required Host header",
            )
                .into_response()
        })
}

/// A connection whose first byte must arrive within a deadline; after it,
/// the protocol's own timeouts apply. Without it, hyper waits forever for a
/// client that completes TLS and then says nothing.
struct FirstReadDeadline<T> {
    inner: T,
    deadline: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl<T> FirstReadDeadline<T> {
    fn new(inner: T, within: Duration) -> Self {
        FirstReadDeadline {
            inner,
            deadline: Some(Box::pin(tokio::time::sleep(within))),
        }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for FirstReadDeadline<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::future::Future;
        use std::task::Poll;
        let before = buf.filled().len();
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    this.deadline = None;
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                let expired = this
                    .deadline
                    .as_mut()
                    .is_some_and(|d| d.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "client sent nothing",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for FirstReadDeadline<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[derive(Clone, Copy)]
enum Protocol {
    Http1,
    Http2,
}

fn connection_builder(p: Protocol, max_streams: u32) -> Builder<TokioExecutor> {
    let b = Builder::new(TokioExecutor::new());
    match p {
        Protocol::Http1 => {
            let mut b = b.http1_only();
            b.http1()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES)
                // Go counts header bytes only, not headers.
                .max_headers(MAX_HEADER_COUNT);
            b
        }
        Protocol::Http2 => {
            let mut b = b.http2_only();
            b.http2()
                .timer(hyper_util::rt::TokioTimer::new())
                .max_concurrent_streams(max_streams)
                .max_header_list_size(MAX_HEADER_BYTES as u32)
                // Rapid-reset floods: hyper's default cap on pending
                // locally-reset streams, stated so it stays on.
                .max_pending_accept_reset_streams(20)
                .keep_alive_interval(Duration::from_secs(30))
                .keep_alive_timeout(Duration::from_secs(20));
            b
        }
    }
}

/// Whether the client's first byte is a letter rather than a TLS record:
/// someone sent `GET / HTTP/1.1` to the TLS port. Waits as long as the
/// TLS handshake would.
async fn speaks_plain_http(tcp: &tokio::net::TcpStream) -> bool {
    let mut first = [0u8; 1];
    matches!(
        tokio::time::timeout(HANDSHAKE_TIMEOUT, tcp.peek(&mut first)).await,
        Ok(Ok(1)) if first[0].is_ascii_uppercase()
    )
}

/// Binds the listening socket; port 0 picks a free one.
pub async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

#[cfg(test)]
mod tests {
    use super::workers_for;

    #[test]
    fn one_core_is_left_to_the_clients_unless_told() {
        assert_eq!(workers_for(None, 8), 7);
        assert_eq!(workers_for(None, 2), 1);
        // A single core still gets its worker.
        assert_eq!(workers_for(None, 1), 1);
        assert_eq!(workers_for(Some("3"), 2), 3);
        assert_eq!(workers_for(Some(" 4 "), 8), 4);
        // What tokio would refuse falls back to the rule.
        assert_eq!(workers_for(Some("0"), 4), 3);
        assert_eq!(workers_for(Some("many"), 4), 3);
    }
}
