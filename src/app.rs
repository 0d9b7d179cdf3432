//! `kapi serve` as a library call, as upstream's `cmd/kube-apiserver/app`:
//! config -> certificates -> storage -> the server chain -> serving ->
//! post-start hooks. The CLI only renders progress and waits for a signal.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::auth::authorizer::{BootstrapPolicy, Chain};
use crate::auth::tokenfile::TokenFile;
use crate::auth::x509::ClientCertAuthority;
use crate::auth::Authenticator;
use crate::config::CompletedConfig;
use crate::controlplane::{self, Health};
use crate::pki::{self, Pki, ServingNames};
use crate::server::filters::{self, ChainState};
use crate::server::healthz::HealthCheck;
use crate::server::hooks::PostStartHooks;
use crate::server::metrics::Metrics;
use crate::server::serve::{self, TlsServing};
use crate::server::{chain, RouteInfo};
use crate::{aggregator, apiextensions};

/// Told about each start-up step, so a terminal can show a spinner and a
/// log can show lines.
pub trait StartObserver: Send + Sync {
    fn step(&self, name: &str);
    fn done(&self, name: &str, detail: &str);
}

/// A server that is listening.
pub struct Started {
    pub addr: SocketAddr,
    pub kubeconfig: PathBuf,
    pub started_in: Duration,
    pub routes: Vec<RouteInfo>,
    stop: CancellationToken,
    shutting_down: Arc<AtomicBool>,
    serving: JoinHandle<()>,
}

/// How long in-flight requests get to finish after a stop is asked for.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

impl Started {
    /// Stops accepting, lets in-flight requests finish (bounded), then returns.
    pub async fn shutdown(self) {
        self.shutting_down.store(true, Ordering::Release);
        self.stop.cancel();
        let _ = self.serving.await;
    }
}

pub async fn start(cfg: CompletedConfig, obs: &dyn StartObserver) -> anyhow::Result<Started> {
    let t0 = Instant::now();

    obs.step("certificates");
    let names = ServingNames::standard(cfg.advertise_address, cfg.first_service_ip());
    let cert_dir = cfg.cert_dir.clone();
    let pki = tokio::task::spawn_blocking(move || Pki::ensure(&cert_dir, &names))
        .await
        .context("certificate task")??;
    let detail = if pki.generated.is_empty() {
        format!("reused from {}", cfg.cert_dir.display())
    } else {
        format!(
            "generated {} in {}",
            pki.generated.join(", "),
            cfg.cert_dir.display()
        )
    };
    obs.done("certificates", &detail);

    let tls = tls_serving(&cfg, &pki)?;
    let tokens = cfg
        .token_auth_file
        .as_deref()
        .map(TokenFile::load)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--token-auth-file: {e}"))?;

    obs.step("servers");
    let metrics = Metrics::default();
    let shutting_down = Arc::new(AtomicBool::new(false));
    let hooks = PostStartHooks::default();
    let health = health_checks(&hooks, shutting_down.clone());
    let root_paths = Arc::new(OnceLock::new());
    let aggregator = aggregator::server();
    let kube = controlplane::server(controlplane::Deps {
        health,
        metrics: metrics.clone(),
        root_paths: root_paths.clone(),
    });
    let extensions = apiextensions::server();
    let mut routes = aggregator.route_table();
    routes.extend(kube.route_table());
    routes.extend(extensions.route_table());
    let mut paths: Vec<String> = [&aggregator, &kube, &extensions]
        .iter()
        .flat_map(|s| s.listed_paths())
        .collect();
    paths.sort();
    paths.dedup();
    let _ = root_paths.set(paths);
    let not_found = chain::not_found(Arc::new(|_group: &str, _version: &str| false));
    let router = aggregator.into_router(kube.into_router(extensions.into_router(not_found)));
    let state = Arc::new(ChainState {
        authenticator: Authenticator::new(tokens, cfg.anonymous_auth),
        authorizer: Arc::new(Chain(vec![Box::new(BootstrapPolicy)])),
        metrics,
        readonly_inflight: Semaphore::new(cfg.max_requests_inflight as usize),
        mutating_inflight: Semaphore::new(cfg.max_mutating_requests_inflight as usize),
        request_timeout: cfg.request_timeout,
        audit: None,
    });
    let app = filters::build(router, state);
    obs.done(
        "servers",
        "aggregator -> kube-apiserver -> apiextensions-apiserver",
    );

    obs.step("listening");
    let (listener, addr) = serve::bind(SocketAddr::new(cfg.bind_address, cfg.secure_port))
        .await
        .with_context(|| {
            format!(
                "--secure-port {}: cannot listen on {}",
                cfg.secure_port, cfg.bind_address
            )
        })?;
    let host = if cfg.bind_address.is_unspecified() {
        cfg.advertise_address
    } else {
        cfg.bind_address
    };
    let url = pki::server_url(host, addr.port());
    pki::write_admin_kubeconfig(&cfg.kubeconfig_out, &pki, &url)?;
    let stop = CancellationToken::new();
    let serving = tokio::spawn(serve::serve(
        listener,
        tls,
        app,
        stop.clone(),
        DRAIN_TIMEOUT,
    ));
    obs.done("listening", &url);

    obs.step("post-start hooks");
    let names = hooks.names();
    hooks.run_all().await;
    obs.done("post-start hooks", &names.join(", "));

    Ok(Started {
        addr,
        kubeconfig: cfg.kubeconfig_out.clone(),
        started_in: t0.elapsed(),
        routes,
        stop,
        shutting_down,
        serving,
    })
}

fn tls_serving(cfg: &CompletedConfig, pki: &Pki) -> anyhow::Result<TlsServing> {
    let mut client_cas = vec![pki.ca.cert_pem.clone()];
    if let Some(f) = &cfg.client_ca_file {
        client_cas.push(
            std::fs::read_to_string(f)
                .with_context(|| format!("--client-ca-file {}", f.display()))?,
        );
    }
    let refs: Vec<&str> = client_cas.iter().map(String::as_str).collect();
    let client_ca =
        ClientCertAuthority::new(&refs).map_err(|e| anyhow::anyhow!("client CA: {e}"))?;
    let (cert, key) = match &cfg.tls_cert_file {
        Some((c, k)) => (
            std::fs::read_to_string(c)
                .with_context(|| format!("--tls-cert-file {}", c.display()))?,
            std::fs::read_to_string(k)
                .with_context(|| format!("--tls-private-key-file {}", k.display()))?,
        ),
        None => (pki.serving.cert_pem.clone(), pki.serving.key_pem.clone()),
    };
    TlsServing::new(&cert, &key, client_ca).map_err(|e| anyhow::anyhow!(e))
}

fn health_checks(hooks: &PostStartHooks, shutting_down: Arc<AtomicBool>) -> Health {
    let mut base = vec![
        HealthCheck::ping(),
        HealthCheck::new("log", || async { Ok(()) }),
    ];
    base.extend(hooks.checks());
    let mut readyz = base.clone();
    readyz.push(HealthCheck::new("shutdown", move || {
        let down = shutting_down.load(Ordering::Acquire);
        async move {
            if down {
                Err("process is shutting down".to_string())
            } else {
                Ok(())
            }
        }
    }));
    Health {
        healthz: Arc::new(base.clone()),
        livez: Arc::new(base),
        readyz: Arc::new(readyz),
    }
}
