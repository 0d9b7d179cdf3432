//! Shared pieces of the benchmark runner (`bench/run.rs`): a lean HTTPS load
//! generator (one HTTP/2 connection per client straight on hyper, bodies
//! serialized before the clock starts, bodies drained without parsing),
//! kubeconfig reading, kapi child processes, RSS and percentiles.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde::Deserialize;

/// Longest a single request may take before it counts as an error.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------- kubeconfig

#[derive(Deserialize, Default)]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(rename = "current-context", default)]
    current_context: String,
}

#[derive(Deserialize)]
struct NamedCluster {
    name: String,
    cluster: Cluster,
}

#[derive(Deserialize)]
struct NamedUser {
    name: String,
    #[serde(default)]
    user: User,
}

#[derive(Deserialize)]
struct NamedContext {
    name: String,
    context: KContext,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority_data: Option<String>,
    certificate_authority: Option<PathBuf>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
    tls_server_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct User {
    client_certificate_data: Option<String>,
    client_certificate: Option<PathBuf>,
    client_key_data: Option<String>,
    client_key: Option<PathBuf>,
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<PathBuf>,
    exec: Option<serde::de::IgnoredAny>,
    #[serde(rename = "auth-provider")]
    auth_provider: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct KContext {
    cluster: String,
    #[serde(default)]
    user: String,
}

fn read_data(
    inline: &Option<String>,
    file: &Option<PathBuf>,
    base: &Path,
) -> Result<Option<Vec<u8>>> {
    use base64::Engine as _;
    if let Some(d) = inline {
        let v = base64::engine::general_purpose::STANDARD
            .decode(d.trim())
            .context("not base64")?;
        return Ok(Some(v));
    }
    match file {
        Some(f) => {
            let p = base.join(f);
            Ok(Some(
                std::fs::read(&p).with_context(|| p.display().to_string())?,
            ))
        }
        None => Ok(None),
    }
}

/// One API server to load: where it is and how to talk to it.
pub struct Target {
    /// The server URL without a trailing `/` (may carry a path prefix).
    pub server: String,
    pub kubeconfig: PathBuf,
    host: String,
    port: u16,
    server_name: ServerName<'static>,
    tls: Arc<rustls::ClientConfig>,
    auth: Option<HeaderValue>,
}

impl Target {
    /// Reads the current context of a kubeconfig: server URL, CA (data or
    /// file), client certificate and key (data or files) or bearer token.
    pub fn from_kubeconfig(path: &Path) -> Result<Target> {
        let ctx = || format!("kubeconfig {}", path.display());
        let text = std::fs::read_to_string(path).with_context(ctx)?;
        let cfg: Kubeconfig = serde_saphyr::from_str(&text)
            .map_err(|e| anyhow!("{}: not a kubeconfig: {e}", ctx()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let context = cfg
            .contexts
            .iter()
            .find(|c| c.name == cfg.current_context)
            .or(cfg.contexts.first())
            .ok_or_else(|| anyhow!("{}: no context", ctx()))?;
        let cluster = &cfg
            .clusters
            .iter()
            .find(|c| c.name == context.context.cluster)
            .ok_or_else(|| anyhow!("{}: cluster {:?} missing", ctx(), context.context.cluster))?
            .cluster;
        let user = cfg
            .users
            .iter()
            .find(|u| u.name == context.context.user)
            .map(|u| &u.user);
        let server = cluster.server.trim_end_matches('/').to_string();
        let uri: Uri = server
            .parse()
            .with_context(|| format!("server {server:?}"))?;
        if uri.scheme_str() != Some("https") {
            bail!("{}: server {server} is not https", ctx());
        }
        let host = uri
            .host()
            .ok_or_else(|| anyhow!("server {server} has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        let sni = cluster
            .tls_server_name
            .clone()
            .unwrap_or_else(|| host.clone());
        let server_name =
            ServerName::try_from(sni.clone()).map_err(|e| anyhow!("server name {sni:?}: {e}"))?;

        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?;
        let ca = read_data(
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
            base,
        )
        .with_context(|| format!("{}: certificate-authority", ctx()))?;
        let builder = if cluster.insecure_skip_tls_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        } else {
            let ca =
                ca.ok_or_else(|| anyhow!("{}: no certificate-authority and not insecure", ctx()))?;
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(&ca) {
                roots.add(c?)?;
            }
            builder.with_root_certificates(roots)
        };
        let mut auth = None;
        let mut client_cert = None;
        if let Some(u) = user {
            if u.exec.is_some() || u.auth_provider.is_some() {
                bail!(
                    "{}: exec and auth-provider credentials are not supported; use a token or client certificate",
                    ctx()
                );
            }
            let cert = read_data(&u.client_certificate_data, &u.client_certificate, base)
                .with_context(|| format!("{}: client-certificate", ctx()))?;
            let key = read_data(&u.client_key_data, &u.client_key, base)
                .with_context(|| format!("{}: client-key", ctx()))?;
            if let (Some(cert), Some(key)) = (cert, key) {
                let chain = CertificateDer::pem_slice_iter(&cert).collect::<Result<Vec<_>, _>>()?;
                let key = PrivateKeyDer::from_pem_slice(&key)?;
                client_cert = Some((chain, key));
            }
            let token = match (&u.token, &u.token_file) {
                (Some(t), _) => Some(t.clone()),
                (None, Some(f)) => Some(std::fs::read_to_string(base.join(f))?.trim().to_string()),
                _ => None,
            };
            if let Some(t) = token {
                auth = Some(HeaderValue::from_str(&format!("Bearer {t}"))?);
            }
        }
        let mut tls = match client_cert {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key)?,
            None => builder.with_no_client_auth(),
        };
        tls.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Target {
            server,
            kubeconfig: path.to_path_buf(),
            host,
            port,
            server_name,
            tls: Arc::new(tls),
            auth,
        })
    }

    /// `server` + `path` as a URI (absolute form, which HTTP/2 needs).
    pub fn uri(&self, path: &str) -> Uri {
        format!("{}{path}", self.server).parse().expect("uri")
    }

    /// One new HTTP/2 connection.
    pub async fn connect(&self) -> Result<Conn> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .with_context(|| format!("connect {}", self.server))?;
        tcp.set_nodelay(true)?;
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(self.server_name.clone(), tcp)
            .await
            .with_context(|| format!("TLS to {}", self.server))?;
        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            bail!("{} did not agree to HTTP/2 (ALPN h2)", self.server);
        }
        let (tx, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .initial_stream_window_size(4 << 20)
            .initial_connection_window_size(16 << 20)
            .max_frame_size(64 << 10)
            .handshake(TokioIo::new(tls))
            .await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn {
            tx,
            auth: self.auth.clone(),
            impersonate: None,
            accept: None,
        })
    }

    /// `n` connections, each warmed with one request.
    pub async fn connect_many(&self, n: usize) -> Result<Vec<Conn>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut c = self.connect().await?;
            let (status, _) = c
                .call(Method::GET, self.uri("/version"), Bytes::new())
                .await?;
            if !status.is_success() {
                bail!("GET /version: {status}");
            }
            out.push(c);
        }
        Ok(out)
    }
}

/// Accepts any server certificate (`insecure-skip-tls-verify: true`).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

// ---------------------------------------------------------------- requests

/// One HTTP/2 connection (clones share it).
#[derive(Clone)]
pub struct Conn {
    tx: SendRequest<Full<Bytes>>,
    auth: Option<HeaderValue>,
    /// `Impersonate-User` sent with every request.
    impersonate: Option<HeaderValue>,
    /// The Accept header (JSON when unset).
    accept: Option<HeaderValue>,
}

impl Conn {
    /// The same connection, acting as `user` (impersonation).
    pub fn impersonating(&self, user: &str) -> Conn {
        Conn {
            impersonate: HeaderValue::from_str(user).ok(),
            ..self.clone()
        }
    }

    /// The same connection, asking for `accept` (e.g. protobuf).
    pub fn accepting(&self, accept: &'static str) -> Conn {
        Conn {
            accept: Some(HeaderValue::from_static(accept)),
            ..self.clone()
        }
    }

    fn request(&self, method: Method, uri: Uri, body: Bytes) -> Request<Full<Bytes>> {
        let has_body = !body.is_empty();
        let mut r = Request::new(Full::new(body));
        *r.method_mut() = method;
        *r.uri_mut() = uri;
        let h = r.headers_mut();
        h.insert(
            header::ACCEPT,
            self.accept
                .clone()
                .unwrap_or(HeaderValue::from_static("application/json")),
        );
        if has_body {
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        if let Some(a) = &self.auth {
            h.insert(header::AUTHORIZATION, a.clone());
        }
        if let Some(u) = &self.impersonate {
            h.insert("impersonate-user", u.clone());
        }
        r
    }

    /// Sends a request and returns the response with its body unread.
    pub async fn send(
        &mut self,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Result<Response<Incoming>> {
        let req = self.request(method, uri, body);
        self.tx.ready().await?;
        Ok(self.tx.send_request(req).await?)
    }

    /// Sends a request and reads the whole body.
    pub async fn call(
        &mut self,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes)> {
        let resp = self.send(method, uri, body).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    /// Sends a request and drains the body, counting its bytes only.
    pub async fn call_len(
        &mut self,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Result<(StatusCode, usize)> {
        let resp = self.send(method, uri, body).await?;
        let status = resp.status();
        let mut body = resp.into_body();
        let mut n = 0;
        while let Some(f) = body.frame().await {
            if let Some(d) = f?.data_ref() {
                n += d.len();
            }
        }
        Ok((status, n))
    }
}

/// One kind of request, repeated: request `i` uses `uris[i % len]` and
/// `bodies[i % len]` (no body when `bodies` is empty).
pub struct Op {
    pub method: Method,
    pub uris: Vec<Uri>,
    pub bodies: Vec<Bytes>,
    pub expect: StatusCode,
    /// The response body must be at least this long.
    pub min_len: usize,
}

/// Figures of one load run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub requests: usize,
    pub errors: usize,
    pub secs: f64,
    /// Latency of each successful request, sorted, in microseconds.
    pub lat_us: Vec<u32>,
    pub first_error: Option<String>,
    /// CPU seconds used during the run by the load generator (this process)
    /// and by the server process, when it is local.
    pub gen_cpu_s: Option<f64>,
    pub server_cpu_s: Option<f64>,
    /// ... and by the server's etcd, when it has one here.
    pub store_cpu_s: Option<f64>,
}

impl Stats {
    pub fn rate(&self) -> f64 {
        (self.requests - self.errors) as f64 / self.secs
    }
    /// Latency percentile in milliseconds.
    pub fn p_ms(&self, q: f64) -> f64 {
        if self.lat_us.is_empty() {
            return f64::NAN;
        }
        let i = ((self.lat_us.len() - 1) as f64 * q).round() as usize;
        self.lat_us[i] as f64 / 1000.0
    }
}

/// Runs `total` requests of `op` from one task per connection, each task
/// sending its next request as soon as the last one is answered.
/// `server_pid` and `store_pid` (its etcd) are processes whose CPU time
/// is recorded.
pub async fn load(
    conns: &[Conn],
    total: usize,
    op: Op,
    server_pid: Option<u32>,
    store_pid: Option<u32>,
) -> Stats {
    let op = Arc::new(op);
    let cpu0 = (
        cpu_secs(std::process::id()),
        server_pid.and_then(cpu_secs),
        store_pid.and_then(cpu_secs),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(conns.len());
    for c in conns {
        let (mut c, op, next) = (c.clone(), op.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(total / 8 + 1);
            let mut errors = 0;
            let mut first_error = None;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let uri = op.uris[i % op.uris.len()].clone();
                let body = if op.bodies.is_empty() {
                    Bytes::new()
                } else {
                    op.bodies[i % op.bodies.len()].clone()
                };
                let t = Instant::now();
                let r = tokio::time::timeout(
                    REQUEST_TIMEOUT,
                    c.call_len(op.method.clone(), uri.clone(), body),
                )
                .await;
                let failure = match r {
                    Ok(Ok((s, n))) if s == op.expect && n >= op.min_len => None,
                    Ok(Ok((s, n))) => Some(format!("{} {uri}: {s} ({n} bytes)", op.method)),
                    Ok(Err(e)) => Some(format!("{} {uri}: {e:#}", op.method)),
                    Err(_) => Some(format!("{} {uri}: timed out", op.method)),
                };
                match failure {
                    None => lat.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32),
                    Some(f) => {
                        errors += 1;
                        first_error.get_or_insert(f);
                    }
                }
            }
            (lat, errors, first_error)
        }));
    }
    let mut stats = Stats {
        requests: total,
        ..Default::default()
    };
    for t in tasks {
        let (lat, errors, first) = t.await.expect("load task");
        stats.lat_us.extend(lat);
        stats.errors += errors;
        if stats.first_error.is_none() {
            stats.first_error = first;
        }
    }
    stats.secs = start.elapsed().as_secs_f64();
    stats.lat_us.sort_unstable();
    stats.gen_cpu_s = cpu_secs(std::process::id()).zip(cpu0.0).map(|(b, a)| b - a);
    stats.server_cpu_s = server_pid
        .and_then(cpu_secs)
        .zip(cpu0.1)
        .map(|(b, a)| b - a);
    stats.store_cpu_s = store_pid.and_then(cpu_secs).zip(cpu0.2).map(|(b, a)| b - a);
    stats
}

// ---------------------------------------------------------------- processes

/// A `kapi serve` child on a free port.
pub struct KapiProc {
    pub child: Child,
    pub url: String,
    pub kubeconfig: PathBuf,
    pub stderr: PathBuf,
}

impl KapiProc {
    /// Starts kapi and waits for its "listening" and kubeconfig lines.
    pub fn spawn(bin: &str, data_dir: &Path, extra: &[&str]) -> Result<KapiProc> {
        KapiProc::spawn_under(&[], bin, data_dir, extra)
    }

    /// [`KapiProc::spawn`] under a wrapper command (e.g. valgrind's).
    pub fn spawn_under(
        wrapper: &[String],
        bin: &str,
        data_dir: &Path,
        extra: &[&str],
    ) -> Result<KapiProc> {
        let stderr = data_dir.with_extension("stderr.log");
        let mut cmd = match wrapper {
            [first, rest @ ..] => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin);
                c
            }
            [] => Command::new(bin),
        };
        let mut child = cmd
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(data_dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr)?)
            .spawn()
            .context("spawn kapi")?;
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (mut url, mut kubeconfig) = (None, None);
        while url.is_none() || kubeconfig.is_none() {
            match rx.recv_timeout(Duration::from_secs(180)) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("kapi listening on ") {
                        url = rest.split_whitespace().next().map(String::from);
                    } else if let Some(rest) = line.strip_prefix("export KUBECONFIG=") {
                        kubeconfig = Some(PathBuf::from(rest));
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(&stderr).unwrap_or_default();
                    bail!("kapi did not start; stderr:\n{log}");
                }
            }
        }
        Ok(KapiProc {
            child,
            url: url.unwrap(),
            kubeconfig: kubeconfig.unwrap(),
            stderr,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then SIGKILL after 10 s.
    pub fn stop(mut self) {
        terminate(&mut self.child);
    }
}

impl Drop for KapiProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGTERM, then SIGKILL when the child has not exited after 10 s.
pub fn terminate(child: &mut Child) {
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// User + system CPU seconds of a process so far (`/proc/<pid>/stat`).
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / if hz > 0.0 { hz } else { 100.0 })
}

/// The kapi binary to measure: `KAPI_BENCH_BIN` when set, else cargo's.
///
/// `bench/run` sets it to a plain `cargo build --release` of kapi, the
/// binary a developer runs. The one `cargo bench` builds beside the
/// benches has the library's `testing` feature on (a dev-dependency's
/// features are unified into it); its symbol names differ, so the layout
/// `cmd/symbol-order.txt` gives the release link does not apply to it.
pub fn kapi_bin() -> String {
    std::env::var("KAPI_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kapi").to_string())
}

/// VmRSS of a process in MiB.
pub fn rss_mib(pid: u32) -> Option<f64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// The newest `kubectl.1.NN` next to the image's kubectl dispatcher (as
/// tests/common/mod.rs picks it), else `kubectl` from PATH.
pub fn kubectl_path() -> Option<PathBuf> {
    let dispatcher = std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join("kubectl"))
        .find(|p| p.is_file())?;
    let real = std::fs::canonicalize(&dispatcher).unwrap_or(dispatcher.clone());
    let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut best: Option<(u32, PathBuf)> = None;
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(minor) = name
            .strip_prefix("kubectl.1.")
            .and_then(|m| m.parse::<u32>().ok())
        {
            if best.as_ref().is_none_or(|(b, _)| minor > *b) {
                best = Some((minor, e.path()));
            }
        }
    }
    Some(best.map(|(_, p)| p).unwrap_or(dispatcher))
}

/// Percentile `q` of sorted values.
pub fn pct(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[(((sorted.len() - 1) as f64) * q).round() as usize]
}

// ---------------------------------------------------------------- watch fan-out

/// Figures of one watch fan-out run.
#[derive(Clone, Debug, Default)]
pub struct Fanout {
    pub watchers: usize,
    /// Changes made one at a time (each waits until every watcher has it).
    pub changes: usize,
    /// Changes made all at once for the delivery rate.
    pub burst: usize,
    /// Latency of each (watcher, change) delivery, sorted, in ms.
    pub lat_ms: Vec<f64>,
    /// Per change: the time until the last watcher had it, sorted, in ms.
    pub all_ms: Vec<f64>,
    /// The same for the first change after the watches opened, made before
    /// the measured ones and not counted in `all_ms` or `lat_ms`.
    pub first_ms: f64,
    pub events_per_s: f64,
    pub missing: usize,
}

/// Scans watch stream bytes for complete lines (one event each, JSON has
/// no raw newlines), keeping the first bytes of the current line to spot
/// `ERROR` events.
struct LineScanner {
    head: [u8; 24],
    head_len: usize,
}

impl LineScanner {
    /// Calls `event(is_error)` per completed line.
    fn feed(&mut self, mut data: &[u8], mut event: impl FnMut(bool)) {
        loop {
            let end = data.iter().position(|&b| b == b'\n');
            let part = &data[..end.unwrap_or(data.len())];
            let take = part.len().min(self.head.len() - self.head_len);
            self.head[self.head_len..self.head_len + take].copy_from_slice(&part[..take]);
            self.head_len += take;
            match end {
                Some(p) => {
                    let head = &self.head[..self.head_len];
                    event(head.windows(5).any(|w| w == b"ERROR"));
                    self.head_len = 0;
                    data = &data[p + 1..];
                }
                None => return,
            }
        }
    }
}

/// Opens `watchers` watches of one namespace's ConfigMaps spread over
/// `conns` (HTTP/2 streams), then creates `1 + changes` ConfigMaps one at a
/// time, waiting each time until every watcher has the event, and then
/// `burst` at once. `body(i)` is the i-th ConfigMap.
///
/// The first change is timed apart (`first_ms`): it is each stream's first
/// DATA frame and each connection's first large write, on both ends, so it
/// pays one-time costs (buffers grown, first-touch pages) that the changes
/// after it do not, and it would otherwise be one of the slowest two of 100,
/// which is what p99 reads. Watchers keep reading until every change is
/// in, so no stream is closed while a measured change is on its way.
pub async fn fanout(
    target: &Target,
    conns: &[Conn],
    writer: &Conn,
    ns: &str,
    watchers: usize,
    changes: usize,
    burst: usize,
    body: impl Fn(usize) -> Bytes,
) -> Result<Fanout> {
    use tokio::sync::Notify;
    // Change 0 is the first, timed apart; 1..=changes are measured.
    let seq = 1 + changes;
    let total = seq + burst;
    let coll = format!("/api/v1/namespaces/{ns}/configmaps");
    let (status, list) = writer
        .clone()
        .call(
            Method::GET,
            target.uri(&format!("{coll}?limit=1")),
            Bytes::new(),
        )
        .await?;
    if status != StatusCode::OK {
        bail!("GET {coll}?limit=1: {status}");
    }
    let list: serde_json::Value = serde_json::from_slice(&list)?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .ok_or_else(|| anyhow!("list has no resourceVersion"))?
        .to_string();
    let watch_uri = target.uri(&format!("{coll}?watch=true&resourceVersion={rv}"));

    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..total).map(|_| AtomicUsize::new(0)).collect());
    let opened = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let notify = Arc::new(Notify::new());
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = Vec::with_capacity(watchers);
    for w in 0..watchers {
        let mut c = conns[w % conns.len()].clone();
        let (uri, counts, opened, failed, notify, stop) = (
            watch_uri.clone(),
            counts.clone(),
            opened.clone(),
            failed.clone(),
            notify.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut arrivals: Vec<Instant> = Vec::with_capacity(total);
            let resp = match c.send(Method::GET, uri, Bytes::new()).await {
                Ok(r) if r.status() == StatusCode::OK => r,
                Ok(r) => {
                    failed
                        .lock()
                        .unwrap()
                        .push(format!("watch: {}", r.status()));
                    notify.notify_one();
                    return arrivals;
                }
                Err(e) => {
                    failed.lock().unwrap().push(format!("watch: {e:#}"));
                    notify.notify_one();
                    return arrivals;
                }
            };
            opened.fetch_add(1, Ordering::SeqCst);
            notify.notify_one();
            let mut body = resp.into_body();
            let mut scan = LineScanner {
                head: [0; 24],
                head_len: 0,
            };
            loop {
                let frame = tokio::select! {
                    _ = stop.cancelled() => break,
                    f = body.frame() => f,
                };
                let Some(Ok(frame)) = frame else { break };
                let Some(data) = frame.data_ref() else {
                    continue;
                };
                let now = Instant::now();
                scan.feed(data, |is_error| {
                    if is_error {
                        return;
                    }
                    let k = arrivals.len();
                    arrivals.push(now);
                    if k < total && counts[k].fetch_add(1, Ordering::SeqCst) + 1 == watchers {
                        notify.notify_one();
                    }
                });
            }
            arrivals
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = notify.notified();
        let (o, f) = (opened.load(Ordering::SeqCst), failed.lock().unwrap().len());
        if o + f >= watchers {
            break;
        }
        if Instant::now() > deadline {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(50), n).await;
    }
    let o = opened.load(Ordering::SeqCst);
    if o < watchers {
        stop.cancel();
        let first = failed.lock().unwrap().first().cloned().unwrap_or_default();
        bail!("only {o} of {watchers} watches opened within 60 s {first}");
    }

    let coll_uri = target.uri(&coll);
    let wait_all = |ks: std::ops::Range<usize>, limit: Duration| {
        let (counts, notify) = (counts.clone(), notify.clone());
        async move {
            let deadline = Instant::now() + limit;
            loop {
                let n = notify.notified();
                if ks
                    .clone()
                    .all(|k| counts[k].load(Ordering::SeqCst) >= watchers)
                {
                    return true;
                }
                if Instant::now() > deadline {
                    return false;
                }
                let _ = tokio::time::timeout(Duration::from_millis(50), n).await;
            }
        }
    };
    let mut sent = Vec::with_capacity(seq);
    for k in 0..seq {
        let b = body(k);
        let mut c = writer.clone();
        let t0 = Instant::now();
        let (s, _) = c.call_len(Method::POST, coll_uri.clone(), b).await?;
        if s != StatusCode::CREATED {
            bail!("create change {k}: {s}");
        }
        sent.push(t0);
        wait_all(k..k + 1, Duration::from_secs(10)).await;
    }
    let bodies: Vec<Bytes> = (seq..total).map(&body).collect();
    let burst_start = Instant::now();
    let mut posts = Vec::with_capacity(burst);
    for b in bodies {
        let (mut c, u) = (writer.clone(), coll_uri.clone());
        posts.push(tokio::spawn(
            async move { c.call_len(Method::POST, u, b).await },
        ));
    }
    for p in posts {
        let (s, _) = p.await??;
        if s != StatusCode::CREATED {
            bail!("create burst change: {s}");
        }
    }
    wait_all(seq..total, Duration::from_secs(30)).await;
    stop.cancel();

    let mut f = Fanout {
        watchers,
        changes,
        burst,
        ..Default::default()
    };
    let mut all = vec![0f64; seq];
    let mut burst_last = burst_start;
    let mut delivered = 0usize;
    for t in tasks {
        let arr = t.await?;
        for (k, at) in arr.iter().enumerate() {
            if k < seq {
                let ms = at.duration_since(sent[k]).as_secs_f64() * 1000.0;
                if k > 0 {
                    f.lat_ms.push(ms);
                }
                all[k] = all[k].max(ms);
            } else if k < total {
                burst_last = burst_last.max(*at);
                delivered += 1;
            }
        }
        f.missing += total.saturating_sub(arr.len());
    }
    f.first_ms = all.remove(0);
    f.lat_ms.sort_by(|a, b| a.total_cmp(b));
    all.sort_by(|a, b| a.total_cmp(b));
    f.all_ms = all;
    let secs = burst_last.duration_since(burst_start).as_secs_f64();
    f.events_per_s = if secs > 0.0 {
        delivered as f64 / secs
    } else {
        f64::NAN
    };
    Ok(f)
}

// ---------------------------------------------------------------- main

/// A single-figure bench's `main`: `--smoke` asks for small sizes, `run`
/// gets the kapi binary and that choice, and a failure exits 1.
pub fn bench_main<F, Fut>(title: &str, run: F)
where
    F: FnOnce(&'static str, bool) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let smoke = std::env::args().any(|a| a == "--smoke");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("{title}{}", if smoke { ", smoke sizes" } else { "" });
    // Lives as long as the bench.
    let bin: &'static str = Box::leak(kapi_bin().into_boxed_str());
    if let Err(e) = rt.block_on(run(bin, smoke)) {
        eprintln!("{title}: bench failed: {e:#}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------- raw etcd

/// A 1 KiB ConfigMap, serialized once before any clock starts.
pub fn configmap_json(name: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"pad":"{}"}}}}"#,
        "x".repeat(1024)
    ))
}

/// A create as kapi (and kube-apiserver) writes it to etcd: one
/// transaction that puts `key` if it has never been written, else reads it.
pub fn create_if_absent(key: String, value: Vec<u8>) -> etcd_client::Txn {
    etcd_client::Txn::new()
        .when([etcd_client::Compare::mod_revision(
            key.clone(),
            etcd_client::CompareOp::Equal,
            0,
        )])
        .and_then([etcd_client::TxnOp::put(key.clone(), value, None)])
        .or_else([etcd_client::TxnOp::get(key, None)])
}

/// Transactional 1 KiB puts (create-if-absent, as kapi's create) straight
/// through the etcd-client crate, one client shared by `clients` tasks.
pub async fn raw_etcd(
    endpoints: &[String],
    total: usize,
    clients: usize,
    etcd_pid: Option<u32>,
) -> Result<Stats> {
    let client = etcd_client::Client::connect(endpoints, None).await?;
    let prefix = "/kapi-bench-raw/configmaps/";
    let values: std::sync::Arc<Vec<Vec<u8>>> = std::sync::Arc::new(
        (0..total)
            .map(|i| configmap_json(&format!("c-{i}")).to_vec())
            .collect(),
    );
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cpu0 = (cpu_secs(std::process::id()), etcd_pid.and_then(cpu_secs));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (mut c, next, values) = (client.clone(), next.clone(), values.clone());
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut first) = (Vec::new(), 0usize, None);
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let txn = create_if_absent(format!("{prefix}{i}"), values[i].clone());
                let t = Instant::now();
                match c.txn(txn).await {
                    Ok(r) if r.succeeded() => lat.push(t.elapsed().as_micros() as u32),
                    Ok(_) => {
                        errors += 1;
                        first.get_or_insert_with(|| "key existed".to_string());
                    }
                    Err(e) => {
                        errors += 1;
                        first.get_or_insert_with(|| e.to_string());
                    }
                }
            }
            (lat, errors, first)
        }));
    }
    let mut st = Stats {
        requests: total,
        ..Default::default()
    };
    for t in tasks {
        let (lat, errors, first) = t.await?;
        st.lat_us.extend(lat);
        st.errors += errors;
        if st.first_error.is_none() {
            st.first_error = first;
        }
    }
    st.secs = start.elapsed().as_secs_f64();
    st.lat_us.sort_unstable();
    st.gen_cpu_s = cpu_secs(std::process::id()).zip(cpu0.0).map(|(b, a)| b - a);
    st.server_cpu_s = etcd_pid.and_then(cpu_secs).zip(cpu0.1).map(|(b, a)| b - a);
    // One key per delete, not one prefix delete: etcd 3.4 keeps a read
    // buffer of the writes its backend has not committed yet, sized by the
    // largest batch it ever held, and copies all of it for every
    // transaction after (`bucketBuffer.Copy`). A single delete of 9,500
    // keys left every later transaction copying ~16,000 entries and halved
    // the creates measured after this phase.
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (mut c, next) = (client.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    return Ok::<_, etcd_client::Error>(());
                }
                c.delete(format!("{prefix}{i}"), None).await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(st)
}
