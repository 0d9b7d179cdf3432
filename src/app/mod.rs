//! `kapi serve` as a library call, as upstream's `cmd/kube-apiserver/app`:
//! config -> certificates -> storage -> the server chain -> serving ->
//! post-start hooks. The CLI only renders progress and waits for a signal.
//!
//! Here: [`start`] and the [`Started`] server. What `start` wires, by
//! concept: the built-in catalog (`catalog`), storage (`storage`),
//! authentication and authorization (`auth`), TLS serving (`tls`), the
//! admission chain (`admission`), the servers of the chain and their
//! route tables (`servers`), health checks (`health`), and the
//! controllers and post-start hooks behind the server (`controllers`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use parking_lot::RwLock;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::aggregator;
use crate::api::catalog::Owner;
use crate::auth::authorizer::Authorizer;
use crate::auth::rbac::{self, SharedIndex};
use crate::auth::tokenfile::TokenFile;
use crate::auth::Authenticator;
use crate::config::{CompletedConfig, StorageBackend};
use crate::controlplane;
use crate::endpoints::ResourceHandler;
use crate::pki::{self, Pki, ServingNames};
use crate::registry::Registries;
use crate::server::filters::ChainState;
use crate::server::handler_chain;
use crate::server::healthz::HealthCheck;
use crate::server::hooks::PostStartHooks;
use crate::server::instance_lock::InstanceLock;
use crate::server::metrics::Metrics;
use crate::server::serve;
use crate::server::{chain, RouteInfo};
use crate::storage::backend::Backend;
use crate::storage::cacher_set::CacherSet;
use crate::storage::store::Store;

mod admission;
mod auth;
mod catalog;
mod controllers;
mod health;
mod servers;
mod storage;
mod tls;

use admission::admission_chain;
use auth::{authorizer_chain, client_trust, service_account_tokens};
pub use catalog::builtin_catalog;
use controllers::{add_aggregator_hooks, controller_manager};
use health::health_checks;
pub use servers::route_tables;
use servers::Servers;
use storage::{compactor, open_storage, storage_detail};
use tls::tls_serving;

/// Told about each start-up step, so a terminal can show a spinner and a
/// log can show lines.
pub trait StartObserver: Send + Sync {
    fn step(&self, name: &str);
    fn done(&self, name: &str, detail: &str);
}

/// A server that is listening.
pub struct Started {
    pub addr: SocketAddr,
    /// The admin kubeconfig written, if one was.
    pub kubeconfig: Option<PathBuf>,
    pub started_in: Duration,
    pub routes: Vec<RouteInfo>,
    /// Stops accepting connections.
    stop: CancellationToken,
    /// Caches, controllers and loops behind the server.
    background: CancellationToken,
    backend: Arc<dyn Backend>,
    shutting_down: Arc<AtomicBool>,
    shutdown_delay: Duration,
    serving: JoinHandle<()>,
    /// The controller manager, awaited on shutdown so it can hand its lease back.
    manager: Arc<parking_lot::Mutex<Option<JoinHandle<()>>>>,
    /// Stops the controller manager alone, while the caches it reads and
    /// writes through still run.
    manager_stop: CancellationToken,
    /// The data dir, ours until the store is closed.
    lock: InstanceLock,
    /// Where the objects every kapi writes alike at start are stored.
    seed_prefixes: Vec<String>,
}

/// What [`Started::take_seed`] takes: the bootstrap objects of the
/// post-start hooks, none of which names this server (its address, CA,
/// identity or port).
const SEEDED: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    (
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
    ),
    ("apiregistration.k8s.io", "apiservices"),
];

/// How long in-flight requests get to finish after a stop is asked for.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

impl Started {
    /// Stops accepting, lets in-flight requests finish (bounded), stops the
    /// controllers and closes storage with every acknowledged write flushed.
    /// `/readyz` fails from now on while everything keeps serving: the
    /// start of a graceful shutdown (`--shutdown-delay-duration`).
    pub fn not_ready(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    /// How long to keep serving after [`Started::not_ready`].
    pub fn shutdown_delay(&self) -> Duration {
        self.shutdown_delay
    }

    /// Tells the listener and every loop to stop, without waiting for them
    /// (for a server dropped where nothing can be awaited).
    pub fn stop_now(&self) {
        self.shutting_down.store(true, Ordering::Release);
        self.stop.cancel();
        self.background.cancel();
    }

    /// This server's bootstrap objects as stored, to plant in another
    /// server's empty store (`CompletedConfig::seed`).
    pub async fn take_seed(&self) -> anyhow::Result<crate::storage::seed::Seed> {
        crate::storage::seed::Seed::take(&*self.backend, &self.seed_prefixes)
            .await
            .map_err(|e| anyhow::anyhow!("taking the seed: {e}"))
    }

    pub async fn shutdown(self) {
        self.shutting_down.store(true, Ordering::Release);
        self.stop.cancel();
        // The manager hands its lease back through the watch cache: it
        // stops first, while the caches still run (stopped caches would
        // make each of its reads wait out the freshness timeout).
        self.manager_stop.cancel();
        let manager = self.manager.lock().take();
        if let Some(m) = manager {
            let _ = tokio::time::timeout(Duration::from_secs(5), m).await;
        }
        tracing::debug!("shutdown: controllers stopped");
        self.background.cancel();
        let _ = self.serving.await;
        tracing::debug!("shutdown: connections drained");
        self.backend.close().await;
        tracing::debug!("shutdown: storage closed");
        drop(self.lock);
    }
}

pub async fn start(cfg: CompletedConfig, obs: &dyn StartObserver) -> anyhow::Result<Started> {
    let t0 = Instant::now();
    // Said first, as upstream says them while parsing its flags.
    for w in cfg.runtime_config.warnings.iter().chain(&cfg.warnings) {
        tracing::warn!("{w}");
    }
    // Before anything is written to the data dir: a second server must not
    // touch the first one's certificates or kubeconfig.
    let lock =
        InstanceLock::acquire(&cfg.data_dir).map_err(|e| anyhow::anyhow!("--data-dir {e}"))?;

    obs.step("certificates");
    let names = ServingNames::standard(cfg.advertise_address, cfg.first_service_ip());
    let cert_dir = cfg.cert_dir.clone();
    // The flag that chose the directory is named with the error.
    let flag = if cfg.cert_dir == cfg.data_dir.join("pki") {
        format!("--data-dir {}", cfg.data_dir.display())
    } else {
        format!("--cert-dir {}", cfg.cert_dir.display())
    };
    // A store that need not survive a crash has certificates that need not either.
    let durable = match &cfg.storage {
        StorageBackend::Embedded { durable, .. } => *durable,
        _ => true,
    };
    let pki = tokio::task::spawn_blocking(move || Pki::ensure_with(&cert_dir, &names, durable))
        .await
        .context("certificate task")?
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
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

    let trust = client_trust(&cfg, &pki)?;
    let tls = tls_serving(&cfg, &pki, &trust)?;
    let tokens = cfg
        .token_auth_file
        .as_deref()
        .map(TokenFile::load)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--token-auth-file: {e}"))?;

    obs.step("storage");
    let backend = open_storage(&cfg).await?;
    if let Some(seed) = &cfg.seed {
        tracing::debug!(keys = seed.len(), "planting the seed");
        seed.plant(&*backend, &format!("{}/", cfg.storage_prefix))
            .await
            .map_err(|e| anyhow::anyhow!("planting the seed: {e}"))?;
    }
    obs.done("storage", &storage_detail(&cfg));
    let background = CancellationToken::new();
    let store = Store::new(backend.clone());
    let cachers =
        CacherSet::new(store, background.child_token()).with_policy(cfg.watch_cache.clone());
    let catalog = builtin_catalog();
    // --runtime-config: what is off is not served over HTTP (no discovery,
    // 404); kapi's own controllers and bootstrap still store it.
    for r in catalog.all() {
        if !cfg
            .runtime_config
            .resources
            .enabled(&r.group, &r.version, &r.plural)
        {
            catalog.hide(&r.group, &r.version, &r.plural);
        }
    }
    // pods/resize is InPlacePodVerticalScaling's.
    if !cfg.feature_gates.enabled("InPlacePodVerticalScaling") {
        if let Some(pods) = catalog.get_stored("", "v1", "pods") {
            let mut pods = (*pods).clone();
            pods.subresources.retain(|s| s.name != "resize");
            catalog.add(pods);
        }
    }
    let seed_prefixes = SEEDED
        .iter()
        .filter_map(|(group, plural)| catalog.get_stored(group, "v1", plural))
        .map(|r| format!("{}/{}/", cfg.storage_prefix, r.storage_path))
        .collect();
    let registries = Registries::new(catalog.clone(), cachers.clone(), cfg.storage_prefix.clone());
    let allocator = controlplane::allocator::ServiceAllocator {
        cidr: cfg.service_cluster_ip_range,
        node_ports: cfg.service_node_port_range,
        registries: registries.clone(),
        prefix: cfg.storage_prefix.clone(),
    };
    registries.set_allocator("", "Service", Arc::new(allocator));
    crate::registry::core::set_allow_privileged(cfg.allow_privileged);
    // Auditing is on with a policy and a log file or webhook, as upstream.
    let mut audit_logs = Vec::new();
    if let Some(log) = &cfg.audit_log_path {
        audit_logs.push(
            crate::server::audit::Log::open(log)
                .map_err(|e| anyhow::anyhow!("--audit-log-path: {e}"))?,
        );
    }
    if let Some((kubeconfig, batching)) = &cfg.audit_webhook {
        audit_logs.push(
            crate::server::audit::Log::webhook(kubeconfig, batching.clone())
                .await
                .map_err(|e| anyhow::anyhow!(e))?,
        );
    }
    let auditor = match &cfg.audit_policy_file {
        Some(policy) if !audit_logs.is_empty() => Some(crate::server::audit::Auditor {
            policy: crate::server::audit::Policy::load(policy)
                .map_err(|e| anyhow::anyhow!("--audit-policy-file: {e}"))?,
            logs: audit_logs,
        }),
        _ => None,
    };
    let token_issuer = Arc::new(service_account_tokens(&cfg, &pki)?);
    let mut authenticator = Authenticator::new(tokens, cfg.anonymous_auth)
        .with_service_accounts(token_issuer.clone(), registries.clone())
        .with_request_headers(trust.front_proxy.headers.clone());
    if cfg.enable_bootstrap_token_auth {
        authenticator = authenticator.with_bootstrap_tokens(registries.clone());
    }
    if let Some((kubeconfig, version, ttl)) = &cfg.token_webhook {
        let webhook = crate::auth::token_webhook::TokenWebhook::connect(
            kubeconfig,
            *version,
            *ttl,
            token_issuer.api_audiences.clone(),
        )
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
        authenticator = authenticator.with_token_webhook(webhook);
    }
    let informers = crate::informers::Informers::new(registries.clone(), background.child_token());
    let rbac_index = SharedIndex::default();
    rbac_index.follow_writes(&registries);
    let authz_webhook = match &cfg.authorization_webhook {
        Some(settings) => Some(
            crate::auth::authz_webhook::WebhookAuthorizer::connect(settings.clone())
                .await
                .map_err(|e| anyhow::anyhow!(e))?,
        ),
        None => None,
    };
    let authorizer: Arc<dyn Authorizer> = Arc::new(authorizer_chain(
        &cfg.authorization_modes,
        &rbac_index,
        &registries,
        authz_webhook,
    )?);
    let admission_config = match &cfg.admission_config_file {
        Some(f) => crate::admission::config::AdmissionConfig::load(f)
            .map_err(|e| anyhow::anyhow!("--admission-control-config-file: {e}"))?,
        None => Default::default(),
    };
    // The one plugin whose set-up waits on I/O (its backend's kubeconfig).
    let image_policy: Option<Arc<dyn crate::admission::ValidatingPlugin>> = if cfg
        .admission_plugins
        .iter()
        .any(|p| p == "ImagePolicyWebhook")
    {
        let p = crate::admission::image_policy::ImagePolicyWebhook::from_config(
                admission_config.plugin("ImagePolicyWebhook"),
            )
            .await
            .map_err(|e| {
                anyhow::anyhow!("failed to initialize admission: couldn't init admission plugin \"ImagePolicyWebhook\": {e}")
            })?;
        Some(Arc::new(p))
    } else {
        None
    };
    registries.set_admission(
        admission_chain(
            &cfg.admission_plugins,
            &authorizer,
            &admission_config,
            image_policy,
        )
        .map_err(|e| anyhow::anyhow!("failed to initialize admission: {e}"))?,
    );
    registries.add_validating_admission(Arc::new(
        crate::admission::rbac_escalation::RbacEscalation {
            authorizer: authorizer.clone(),
            index: rbac_index.clone(),
        },
    ));
    // What is stored decides from the first request on (a restart must not
    // serve a window with no policy); the refresher keeps it current.
    match tokio::time::timeout(
        Duration::from_secs(10),
        rbac::sync_now(&rbac_index, &registries),
    )
    .await
    {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot load the stored RBAC policy yet"),
        Err(_) => tracing::warn!("loading the stored RBAC policy timed out"),
    }
    tokio::spawn(rbac::run(
        rbac_index.clone(),
        informers.clone(),
        background.child_token(),
    ));
    let auth = crate::auth::reviews::AuthContext {
        authenticator: authenticator.clone(),
        authorizer: authorizer.clone(),
        tokens: Some(token_issuer),
    };
    let handler = |owner| ResourceHandler {
        registries: registries.clone(),
        owner,
        stop: background.child_token(),
        auth: auth.clone(),
        min_request_timeout: cfg.min_request_timeout,
    };

    obs.step("servers");
    let metrics = Metrics::default();
    let queues = informers.queue_metrics().clone();
    metrics.add_collector(Arc::new(move |out: &mut String| queues.render(out)));
    let watch_caches = cachers.clone();
    metrics.add_collector(Arc::new(move |out: &mut String| {
        watch_caches.render_metrics(out)
    }));
    let shutting_down = Arc::new(AtomicBool::new(false));
    let mut hooks = PostStartHooks::default();
    // kube-controller-manager's controllers, on the instance holding its lease.
    let clocks = cfg.clocks;
    let manager = controller_manager(&informers, &registries, &pki, clocks);
    let manager_stop = background.child_token();
    let (mgr_registries, mgr_stop, selection) = (
        registries.clone(),
        manager_stop.clone(),
        cfg.controllers.clone(),
    );
    let identity = format!("kapi-{}", uuid::Uuid::new_v4());
    let manager_task = Arc::new(parking_lot::Mutex::new(None));
    let task = manager_task.clone();
    hooks.add("start-kube-controller-manager", move || async move {
        let handle = tokio::spawn(manager.run(
            mgr_registries,
            identity,
            selection,
            clocks.leader_elect_retry_period,
            mgr_stop,
        ));
        *task.lock() = Some(handle);
        Ok(())
    });
    let (boot, boot_stop) = (registries.clone(), background.child_token());
    let bound_port = Arc::new(OnceLock::<u16>::new());
    let (port_for_boot, service_ip, advertise) = (
        bound_port.clone(),
        cfg.first_service_ip(),
        cfg.advertise_address,
    );
    let priority_registries = registries.clone();
    hooks.add(
        "scheduling/bootstrap-system-priority-classes",
        move || async move {
            controlplane::bootstrap::ensure_system_priority_classes(&priority_registries).await
        },
    );
    hooks.add("bootstrap-controller", move || async move {
        controlplane::bootstrap::ensure_system_namespaces(&boot).await?;
        let port = port_for_boot.get().copied().unwrap_or_default();
        let ep = controlplane::bootstrap::Endpoint {
            service_ip,
            advertise,
            port,
        };
        controlplane::bootstrap::ensure_kubernetes_service(&boot, ep).await?;
        let identity = format!("kube-apiserver-{}", uuid::Uuid::new_v4());
        tokio::spawn(controlplane::bootstrap::run_endpoint_reconciler(
            boot.clone(),
            ep,
            identity,
            boot_stop,
        ));
        Ok(())
    });
    let (tracked, tracked_metrics, tracker_stop) =
        (cachers.clone(), metrics.clone(), background.child_token());
    let (crd_informers, crd_stop) = (informers.clone(), background.child_token());
    hooks.add("start-apiextensions-controllers", move || async move {
        tokio::spawn(crate::apiextensions::controller::run(
            crd_informers,
            clocks,
            crd_stop,
        ));
        Ok(())
    });
    hooks.add("storage-object-count-tracker-hook", move || async move {
        tokio::spawn(controlplane::track_object_counts(
            tracked,
            tracked_metrics,
            tracker_stop,
        ));
        Ok(())
    });
    let (rbac_registries, hook_index) = (registries.clone(), rbac_index.clone());
    hooks.add("rbac/bootstrap-roles", move || async move {
        crate::auth::bootstrap_policy::ensure(&rbac_registries, &hook_index).await
    });
    // The aggregator: its proxy to aggregated API servers and its controllers.
    let front_proxy_identity = match &cfg.proxy_client {
        Some((cert, key)) => format!(
            "{}\n{}",
            std::fs::read_to_string(cert)
                .with_context(|| format!("--proxy-client-cert-file {}", cert.display()))?,
            std::fs::read_to_string(key)
                .with_context(|| format!("--proxy-client-key-file {}", key.display()))?
        ),
        None => format!(
            "{}\n{}",
            pki.front_proxy_client.cert_pem, pki.front_proxy_client.key_pem
        ),
    };
    let proxy = Arc::new(aggregator::proxy::Proxy::new(
        registries.clone(),
        Some(front_proxy_identity.into_bytes()),
    ));
    let autoregister = aggregator::autoregister::AutoRegister::new(
        aggregator::autoregister::builtin_api_services(&catalog),
    );
    add_aggregator_hooks(
        &mut hooks,
        &registries,
        &proxy,
        &autoregister,
        &trust,
        &background,
        &informers,
    );
    let apf = cfg.enable_priority_and_fairness.then(|| {
        let counts = metrics.clone();
        let apf = crate::server::flowcontrol::Apf::new(
            cfg.max_requests_inflight + cfg.max_mutating_requests_inflight,
            cfg.request_timeout,
            Arc::new(move |resource: &str| counts.storage_objects_of(resource)),
        );
        let rendered = apf.clone();
        metrics.add_collector(Arc::new(move |out: &mut String| rendered.render(out)));
        let (apf_hook, apf_registries, apf_informers, apf_stop) = (
            apf.clone(),
            registries.clone(),
            informers.clone(),
            background.child_token(),
        );
        hooks.add(
            "priority-and-fairness-config-producer",
            move || async move {
                tokio::spawn(crate::controlplane::apf_config::run(
                    apf_hook,
                    apf_registries,
                    apf_informers,
                    apf_stop,
                ));
                Ok(())
            },
        );
        apf
    });
    let completion = autoregister.clone();
    let autoregister_check = HealthCheck::new("autoregister-completion", move || {
        let done = completion.completion();
        async move { done }
    });
    let health = health_checks(
        &hooks,
        vec![autoregister_check],
        shutting_down.clone(),
        backend.clone(),
    );
    let root_paths = Arc::new(OnceLock::new());
    let server_address = Arc::new(RwLock::new(format!(
        "{}:{}",
        cfg.advertise_address, cfg.secure_port
    )));
    let servers = Servers::new(
        &catalog,
        server_address.clone(),
        Some(proxy),
        controlplane::Deps {
            health,
            metrics: metrics.clone(),
            root_paths: root_paths.clone(),
            api_paths: {
                let served = catalog.clone();
                Arc::new(move || {
                    let mut paths: Vec<String> = ["/api", "/api/v1", "/apis", "/apis/"]
                        .map(String::from)
                        .to_vec();
                    for (group, versions) in crate::endpoints::discovery::groups(&served) {
                        paths.push(format!("/apis/{group}"));
                        paths.extend(versions.iter().map(|v| format!("/apis/{group}/{v}")));
                    }
                    paths
                })
            },
            profiling: cfg.profiling,
            openid: auth::openid_metadata(&cfg, &pki)?
                .map(|m| (Arc::new(m), server_address.clone())),
        },
    );
    let routes = servers.route_table();
    let aggregator = servers
        .aggregator
        .with_resources(handler(Owner::Aggregator));
    let kube = servers.kube.with_resources(handler(Owner::KubeApiserver));
    let extensions = servers
        .extensions
        .with_resources(handler(Owner::Apiextensions));
    let mut paths: Vec<String> = [&aggregator, &kube, &extensions]
        .iter()
        .flat_map(|s| s.listed_paths())
        .collect();
    paths.sort();
    paths.dedup();
    let _ = root_paths.set(paths);
    let served = catalog.clone();
    let not_found = chain::not_found(Arc::new(move |group: &str, version: &str| {
        served.serves_group_version(group, version)
    }));
    let servers = aggregator.into_delegate(
        kube.into_delegate(extensions.into_delegate(chain::Delegate::from_router(not_found))),
    );
    let state = Arc::new(ChainState {
        authenticator,
        authorizer,
        metrics,
        readonly_inflight: Semaphore::new(cfg.max_requests_inflight as usize),
        mutating_inflight: Semaphore::new(cfg.max_mutating_requests_inflight as usize),
        request_timeout: cfg.request_timeout,
        audit: auditor,
        apf,
    });
    let app = handler_chain::build(servers, state);
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
    *server_address.write() = url.trim_start_matches("https://").to_string();
    let _ = bound_port.set(addr.port());
    lock.serving(&url)?;
    if let Some(path) = &cfg.kubeconfig_out {
        pki::write_admin_kubeconfig(path, &pki, &url)?;
    }
    let stop = CancellationToken::new();
    let serving = tokio::spawn(serve::serve_with_streams(
        listener,
        tls,
        app,
        stop.clone(),
        DRAIN_TIMEOUT,
        cfg.http2_max_streams_per_connection,
    ));
    if !cfg.compaction_interval.is_zero() {
        tokio::spawn(compactor(
            backend.clone(),
            cfg.compaction_interval,
            background.child_token(),
        ));
    }
    tokio::spawn(crate::server::heap_release::run(background.child_token()));
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
        background,
        backend,
        shutting_down,
        shutdown_delay: cfg.shutdown_delay,
        serving,
        manager: manager_task,
        manager_stop,
        lock,
        seed_prefixes,
    })
}
