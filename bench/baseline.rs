//! What the machine allows, measured in the same run as kapi (issue 26):
//! a minimal HTTPS server (axum on hyper, rustls, HTTP/2) answering every
//! request with a fixed 300-byte JSON body, and the disk's rate of 4 KiB
//! `fdatasync`s. kapi's figures are printed as fractions of these.
//!
//! The minimal server runs in its own process (this benchmark binary
//! started again with `--minimal-server`), so its CPU and RSS are its own.

use std::io::Write as _;
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use axum::response::IntoResponse;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The argument that turns this binary into the minimal server:
/// `--minimal-server <dir>`; it writes `<dir>/port` once listening.
pub const FLAG: &str = "--minimal-server";

/// The fixed answer: 300 bytes of JSON, the size of a small object.
fn answer() -> &'static str {
    static BODY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BODY.get_or_init(|| {
        let head =
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","message":""#;
        let tail = r#""}"#;
        let pad = 300 - head.len() - tail.len();
        format!("{head}{}{tail}", "x".repeat(pad))
    })
}

/// Runs the minimal server until killed (called from `main` on [`FLAG`]).
pub fn serve(dir: &Path) -> Result<()> {
    // This binary links the `kube` crate (for the tests' clients), which
    // turns on tracing's `log` feature; with no subscriber set, every span
    // hyper and h2 open would then be handed to the `log` crate, about
    // 9,000 instructions per GET (callgrind). A minimal server does not
    // pay that, and neither does `kapi serve`, whose subscriber turns those
    // spans off: set one that turns them all off.
    let _ = tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default());
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let key = rcgen::KeyPair::generate()?;
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])?.self_signed(&key)?;
    let chain = vec![cert.der().clone()];
    let der = rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| anyhow::anyhow!("key: {e}"))?;
    // kapi's TLS choices (`kapi::server::serve::prefer_as_go_does`), so
    // both servers encrypt with the same suite.
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    kapi::server::serve::prefer_as_go_does(&mut provider.cipher_suites);
    let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, der)?;
    tls.ignore_client_order = true;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    // The same runtime shape as `kapi serve` (`kapi::server::serve::worker_threads`:
    // one worker per core but one). On the 2-core machine that shape alone
    // makes a server about a fifth faster with the load generator beside
    // it; the ratio is meant to measure what kapi does per request, not
    // which of the two got the better shape.
    let workers = kapi::server::serve::worker_threads();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let app = axum::Router::new().fallback(|| async {
            ([(http::header::CONTENT_TYPE, "application/json")], answer()).into_response()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        std::fs::write(dir.join("port"), port.to_string())?;
        loop {
            let (tcp, _) = listener.accept().await?;
            let _ = tcp.set_nodelay(true);
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    })
}

/// The minimal server as a child process, with a kubeconfig for the load
/// generator (no credentials; the server's certificate is not checked).
pub struct Minimal {
    child: Child,
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Minimal {
    pub fn start() -> Result<Minimal> {
        Minimal::start_with(None)
    }

    /// Starts it, under `wrapper` (e.g. valgrind's command line) when given.
    pub fn start_with(wrapper: Option<&[String]>) -> Result<Minimal> {
        let dir = tempfile::tempdir()?;
        let exe = std::env::current_exe()?;
        let mut cmd = match wrapper {
            Some([first, rest @ ..]) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&exe);
                c
            }
            _ => Command::new(&exe),
        };
        let mut child = cmd
            .arg(FLAG)
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("spawn the minimal server")?;
        let port_file = dir.path().join("port");
        let deadline = Instant::now() + Duration::from_secs(120);
        let port = loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|p| p.trim().parse::<u16>().ok())
            {
                break p;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                bail!("the minimal server did not start");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: minimal\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: minimal\n  context:\n    cluster: minimal\n    user: none\ncurrent-context: minimal\nusers:\n- name: none\n  user: {{}}\n"
            ),
        )?;
        Ok(Minimal {
            child,
            kubeconfig,
            _dir: dir,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Minimal {
    fn drop(&mut self) {
        crate::common::terminate(&mut self.child);
    }
}

/// 4 KiB writes, each followed by `fdatasync`, on one file in `dir` for
/// about `secs`: the disk's durable-commit rate per second, which a store
/// committing every write alone cannot beat.
pub fn fsync_rate(dir: &Path, secs: f64) -> Result<f64> {
    let path = dir.join("kapi-bench-fsync");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)?;
    let block = [0x5au8; 4096];
    let (start, mut n) = (Instant::now(), 0u64);
    while start.elapsed().as_secs_f64() < secs {
        f.write_all(&block)?;
        if unsafe { libc::fdatasync(f.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    drop(f);
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}
