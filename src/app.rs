//! `kapi serve` as a library call, as upstream's `cmd/kube-apiserver/app`:
//! config -> certificates -> storage -> the server chain -> serving ->
//! post-start hooks. The CLI only renders progress and waits for a signal.

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

use crate::api::catalog::{Catalog, Owner, Resource};
use crate::auth::authorizer::{AlwaysAllow, AlwaysDeny, Authorizer, Chain, PrivilegedGroups};
use crate::auth::rbac::{self, RbacAuthorizer, SharedIndex};
use crate::auth::tokenfile::TokenFile;
use crate::auth::x509::ClientCertAuthority;
use crate::auth::Authenticator;
use crate::config::{AuthorizationMode, CompletedConfig, StorageBackend};
use crate::controlplane::{self, Health};
use crate::endpoints::ResourceHandler;
use crate::pki::{self, Pki, ServingNames};
use crate::registry::Registries;
use crate::server::filters::{self, ChainState};
use crate::server::healthz::HealthCheck;
use crate::server::hooks::PostStartHooks;
use crate::server::instance_lock::InstanceLock;
use crate::server::metrics::Metrics;
use crate::server::serve::{self, TlsServing};
use crate::server::{chain, GenericServer, RouteInfo};
use crate::storage::backend::{Backend, BackendError};
use crate::storage::cacher_set::CacherSet;
use crate::storage::codec::{Codec, MediaType};
use crate::storage::dump::KeyLayout;
use crate::storage::embedded::Embedded;
use crate::storage::encryption::{Encrypted, EncryptionConfig};
use crate::storage::etcd::{Etcd, EtcdConfig};
use crate::storage::routed::Routed;
use crate::storage::store::Store;
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
    let mut manager = controlplane::manager::Manager::default();
    let i = informers.clone();
    manager.add("namespace", move |stop| {
        controlplane::namespace::run(i.clone(), clocks, stop)
    });
    let i = informers.clone();
    manager.add("garbagecollector", move |stop| {
        controlplane::gc::run(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("serviceaccount", move |stop| {
        controlplane::serviceaccounts::run_service_accounts(i.clone(), stop)
    });
    let (i, ca_pem) = (informers.clone(), pki.ca.cert_pem.clone());
    manager.add("root-ca-cert-publisher", move |stop| {
        controlplane::serviceaccounts::run_root_ca_publisher(i.clone(), ca_pem.clone(), stop)
    });
    let i = informers.clone();
    manager.add("podgc", move |stop| {
        controlplane::podgc::run(i.clone(), clocks, stop)
    });
    let i = informers.clone();
    manager.add("pvc-protection", move |stop| {
        controlplane::storage_protection::run_pvc_protection(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("pv-protection", move |stop| {
        controlplane::storage_protection::run_pv_protection(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("resourcequota", move |stop| {
        controlplane::resourcequota::run(i.clone(), clocks, stop)
    });
    let r = registries.clone();
    manager.add("service-allocation-repair", move |stop| {
        controlplane::repair::run(r.clone(), stop)
    });
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
            profiling: cfg.profiling,
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
    let router = aggregator.into_router(kube.into_router(extensions.into_router(not_found)));
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

/// The authorizer of `--authorization-mode`: upstream's privileged-group
/// shortcut (`system:masters`) first, then each mode in order.
fn authorizer_chain(
    modes: &[AuthorizationMode],
    index: &SharedIndex,
    registries: &Registries,
    mut webhook: Option<crate::auth::authz_webhook::WebhookAuthorizer>,
) -> anyhow::Result<Chain> {
    let mut chain: Vec<Box<dyn Authorizer>> = vec![Box::new(PrivilegedGroups::default())];
    for mode in modes {
        chain.push(match mode {
            AuthorizationMode::Webhook => match webhook.take() {
                Some(w) => Box::new(w),
                None => continue,
            },
            AuthorizationMode::AlwaysAllow => Box::new(AlwaysAllow),
            AuthorizationMode::AlwaysDeny => Box::new(AlwaysDeny),
            AuthorizationMode::Rbac => Box::new(RbacAuthorizer {
                index: index.clone(),
            }),
            AuthorizationMode::Node => Box::new(
                crate::auth::node::NodeAuthorizer::new(registries.clone())
                    .map_err(|e| anyhow::anyhow!(e))?,
            ),
        });
    }
    Ok(Chain(chain))
}

/// The admission chain of `--enable-admission-plugins` and
/// `--disable-admission-plugins` (the chain orders them as upstream).
/// Config has refused names kapi does not implement.
fn admission_chain(
    enabled: &[String],
    authorizer: &Arc<dyn Authorizer>,
    config: &crate::admission::config::AdmissionConfig,
    image_policy: Option<Arc<dyn crate::admission::ValidatingPlugin>>,
) -> Result<crate::admission::Chain, String> {
    use crate::admission::{self as adm, MutatingPlugin, ValidatingPlugin};
    let mut mutating: Vec<Arc<dyn MutatingPlugin>> = Vec::new();
    let mut validating: Vec<Arc<dyn ValidatingPlugin>> = Vec::new();
    for name in enabled {
        let az = || authorizer.clone();
        match name.as_str() {
            "AlwaysAdmit" => mutating.push(Arc::new(adm::always::AlwaysAdmit)),
            "AlwaysDeny" => mutating.push(Arc::new(adm::always::AlwaysDeny)),
            "NamespaceAutoProvision" => {
                mutating.push(Arc::new(adm::namespace_exists::NamespaceAutoProvision))
            }
            "NamespaceExists" => validating.push(Arc::new(adm::namespace_exists::NamespaceExists)),
            "NamespaceLifecycle" => {
                validating.push(Arc::new(adm::namespace_lifecycle::NamespaceLifecycle))
            }
            "LimitPodHardAntiAffinityTopology" => validating.push(Arc::new(
                adm::antiaffinity::LimitPodHardAntiAffinityTopology,
            )),
            "LimitRanger" => {
                mutating.push(Arc::new(adm::limit_ranger::LimitRanger));
                validating.push(Arc::new(adm::limit_ranger::LimitRanger));
            }
            "ServiceAccount" => {
                mutating.push(Arc::new(adm::service_account::ServiceAccount));
                validating.push(Arc::new(adm::service_account::ServiceAccount));
            }
            // Upstream's NodeRestriction decides in its Admit, before any
            // later mutating plugin or webhook sees the request.
            "NodeRestriction" => mutating.push(Arc::new(adm::node_restriction::NodeRestriction {
                authorizer: az(),
            })),
            "TaintNodesByCondition" => {
                mutating.push(Arc::new(adm::node_taint::TaintNodesByCondition))
            }
            "AlwaysPullImages" => {
                mutating.push(Arc::new(adm::always_pull_images::AlwaysPullImages));
                validating.push(Arc::new(adm::always_pull_images::AlwaysPullImages));
            }
            "ImagePolicyWebhook" => validating.push(image_policy.clone().ok_or(
                "couldn't init admission plugin \"ImagePolicyWebhook\": no config specified",
            )?),
            "PodSecurity" => validating.push(Arc::new(adm::pod_security::PodSecurity)),
            "PodNodeSelector" => {
                let p = Arc::new(adm::pod_node_selector::PodNodeSelector::from_config(
                    config.plugin("PodNodeSelector"),
                ));
                mutating.push(p.clone());
                validating.push(p);
            }
            "Priority" => mutating.push(Arc::new(adm::priority::Priority)),
            "DefaultTolerationSeconds" => mutating.push(Arc::new(
                adm::default_toleration_seconds::DefaultTolerationSeconds,
            )),
            "PodTolerationRestriction" => {
                let p = Arc::new(
                    adm::pod_toleration_restriction::PodTolerationRestriction::from_config(
                        config.plugin("PodTolerationRestriction"),
                    )
                    .map_err(|e| {
                        format!("couldn't init admission plugin \"PodTolerationRestriction\": {e}")
                    })?,
                );
                mutating.push(p.clone());
                validating.push(p);
            }
            "ExtendedResourceToleration" => mutating.push(Arc::new(
                adm::extended_resource_toleration::ExtendedResourceToleration,
            )),
            "DefaultStorageClass" => {
                mutating.push(Arc::new(adm::default_storage_class::DefaultStorageClass))
            }
            "StorageObjectInUseProtection" => mutating.push(Arc::new(
                adm::storage_protection::StorageObjectInUseProtection,
            )),
            "OwnerReferencesPermissionEnforcement" => validating.push(Arc::new(
                adm::owner_references::OwnerReferencesPermissionEnforcement { authorizer: az() },
            )),
            "PersistentVolumeClaimResize" => {
                validating.push(Arc::new(adm::pvc_resize::PersistentVolumeClaimResize))
            }
            "RuntimeClass" => {
                mutating.push(Arc::new(adm::runtime_class::RuntimeClass));
                validating.push(Arc::new(adm::runtime_class::RuntimeClass));
            }
            "CertificateApproval" => {
                validating.push(Arc::new(adm::certificates::CertificateApproval {
                    authorizer: az(),
                }))
            }
            "CertificateSigning" => {
                validating.push(Arc::new(adm::certificates::CertificateSigning {
                    authorizer: az(),
                }))
            }
            "CertificateSubjectRestriction" => {
                validating.push(Arc::new(adm::certificates::CertificateSubjectRestriction {
                    authorizer: az(),
                }))
            }
            "DefaultIngressClass" => {
                mutating.push(Arc::new(adm::default_ingress_class::DefaultIngressClass))
            }
            "DenyServiceExternalIPs" => {
                validating.push(Arc::new(adm::deny_external_ips::DenyServiceExternalIPs))
            }
            "ClusterTrustBundleAttest" | "PodTopologyLabels" | "MutatingAdmissionPolicy" => {
                let n = adm::ORDER
                    .iter()
                    .find(|o| *o == name)
                    .copied()
                    .unwrap_or("");
                validating.push(Arc::new(adm::inactive::Inactive(n)));
            }
            "MutatingAdmissionWebhook" => {
                mutating.push(Arc::new(adm::webhook::MutatingAdmissionWebhook::default()))
            }
            "ValidatingAdmissionPolicy" => {
                validating.push(Arc::new(adm::policy::ValidatingAdmissionPolicy::default()))
            }
            "ValidatingAdmissionWebhook" => {
                validating.push(Arc::new(adm::webhook::ValidatingAdmissionWebhook::default()))
            }
            "ResourceQuota" => validating.push(Arc::new(adm::resource_quota::ResourceQuota::new())),
            "EventRateLimit" => {
                let c = config.plugin("EventRateLimit").ok_or(
                    "EventRateLimit: no config file specified (--admission-control-config-file)",
                )?;
                let p = adm::event_rate_limit::EventRateLimit::from_config(c)
                    .map_err(|e| format!("EventRateLimit: {e}"))?;
                validating.push(Arc::new(p));
            }
            other => tracing::error!(plugin = %other, "admission plugin has no implementation"),
        }
    }
    Ok(adm::Chain::new(mutating, validating))
}

/// Every plugin name config accepts has a place in the chain: a name
/// reaching the `other` arm above would be skipped silently.
#[cfg(test)]
#[test]
fn every_accepted_admission_plugin_is_built() {
    let authorizer: Arc<dyn Authorizer> = Arc::new(AlwaysAllow);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("admission.yaml");
    std::fs::write(&file, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    limits: [{type: Server, qps: 1, burst: 1}]\n").expect("write");
    let config = crate::admission::config::AdmissionConfig::load(&file).expect("config");
    for name in crate::admission::ORDER {
        // ImagePolicyWebhook needs a backend: tests/admission_plugins.rs.
        if crate::admission::NOT_IMPLEMENTED
            .iter()
            .any(|(n, _)| n == name)
            || *name == "ImagePolicyWebhook"
        {
            continue;
        }
        let chain =
            admission_chain(&[name.to_string()], &authorizer, &config, None).expect("chain");
        assert_eq!(chain.names(), vec![*name], "{name}");
    }
}

/// The catalog `kapi serve` starts with: every built-in resource.
pub fn builtin_catalog() -> Catalog {
    let catalog = Catalog::default();
    for def in crate::api::builtin::BUILTINS {
        catalog.add(Resource::from_builtin(def));
    }
    catalog
}

/// The servers of the chain in delegation order, with their non-resource
/// routes; `start` attaches the resource handlers.
struct Servers {
    aggregator: GenericServer,
    kube: GenericServer,
    extensions: GenericServer,
}

impl Servers {
    fn new(
        catalog: &Catalog,
        address: Arc<RwLock<String>>,
        proxy: Option<Arc<aggregator::proxy::Proxy>>,
        deps: controlplane::Deps,
    ) -> Self {
        Servers {
            aggregator: aggregator::server(catalog.clone(), address, proxy),
            kube: controlplane::server(deps),
            extensions: apiextensions::server(),
        }
    }

    fn route_table(&self) -> Vec<RouteInfo> {
        let mut routes = self.aggregator.route_table();
        routes.extend(self.kube.route_table());
        routes.extend(self.extensions.route_table());
        routes
    }
}

/// The non-resource routes of every server of the chain, in delegation
/// order, built exactly as `kapi serve` builds them but without storage,
/// listening or anything else started (for `kapi routes`).
pub fn route_tables(catalog: &Catalog) -> Vec<RouteInfo> {
    Servers::new(
        catalog,
        Arc::new(RwLock::new(String::new())),
        None,
        controlplane::Deps {
            health: controlplane::Health::default(),
            metrics: Metrics::default(),
            root_paths: Arc::new(OnceLock::new()),
            profiling: true,
        },
    )
    .route_table()
}

async fn open_storage(cfg: &CompletedConfig) -> anyhow::Result<Arc<dyn Backend>> {
    let raw: Arc<dyn Backend> = match &cfg.storage {
        StorageBackend::Embedded { dir, durable } => {
            let (dir, durable) = (dir.clone(), *durable);
            let b = tokio::task::spawn_blocking(move || Embedded::open_with(&dir, durable))
                .await
                .context("storage task")?
                .map_err(|e| anyhow::anyhow!("--data-dir {}: {e}", cfg.data_dir.display()))?;
            Arc::new(b)
        }
        StorageBackend::Etcd {
            endpoints,
            ca_file,
            cert_file,
            key_file,
        } => {
            let ecfg = EtcdConfig {
                endpoints: endpoints.clone(),
                ca_file: ca_file.clone(),
                cert_file: cert_file.clone(),
                key_file: key_file.clone(),
            };
            let b = Etcd::connect(&ecfg, &cfg.storage_prefix)
                .await
                .map_err(|e| anyhow::anyhow!("--etcd-servers: {e}"))?;
            let main: Arc<dyn Backend> = Arc::new(b);
            if cfg.etcd_servers_overrides.is_empty() {
                main
            } else {
                let mut overrides = Vec::new();
                for (prefix, endpoints) in override_prefixes(cfg) {
                    let ecfg = EtcdConfig {
                        endpoints: endpoints.clone(),
                        ..ecfg.clone()
                    };
                    let b = Etcd::connect(&ecfg, &cfg.storage_prefix)
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!("--etcd-servers-overrides {}: {e}", endpoints.join(";"))
                        })?;
                    overrides.push((prefix, Arc::new(b) as Arc<dyn Backend>));
                }
                Arc::new(Routed::new(main, overrides))
            }
        }
    };
    let raw = match &cfg.encryption_provider_config {
        Some(path) => {
            let config = EncryptionConfig::load(path).map_err(|e| anyhow::anyhow!(e))?;
            let layout = KeyLayout::new(&builtin_catalog(), &cfg.storage_prefix);
            Arc::new(Encrypted::new(raw, config, layout)) as Arc<dyn Backend>
        }
        None => raw,
    };
    Ok(Arc::new(Codec::new(raw, cfg.storage_media_type)))
}

/// Each override's key prefix (`/registry/events/`) and endpoints. Only
/// built-in resources can be placed, as upstream's flag says; another
/// is ignored, as upstream ignores it, with a warning.
fn override_prefixes(cfg: &CompletedConfig) -> Vec<(String, Vec<String>)> {
    let catalog = builtin_catalog();
    let mut out = Vec::new();
    for (group, resource, endpoints) in &cfg.etcd_servers_overrides {
        let paths: std::collections::BTreeSet<String> = catalog
            .all_stored()
            .iter()
            .filter(|r| r.group == *group && r.plural == *resource && r.is_stored())
            .map(|r| format!("{}/{}/", cfg.storage_prefix, r.storage_path))
            .collect();
        if paths.is_empty() {
            tracing::warn!(
                group = %group,
                resource = %resource,
                "--etcd-servers-overrides names no built-in resource; ignored, as upstream ignores it"
            );
        }
        for p in paths {
            out.push((p, endpoints.clone()));
        }
    }
    out
}

fn storage_detail(cfg: &CompletedConfig) -> String {
    let at = match &cfg.storage {
        StorageBackend::Embedded { dir, .. } => format!("embedded store in {}", dir.display()),
        StorageBackend::Etcd { endpoints, .. } => format!(
            "etcd at {} (prefix {})",
            endpoints.join(","),
            cfg.storage_prefix
        ),
    };
    let at = match cfg.storage_media_type {
        MediaType::Json => at,
        MediaType::Protobuf => format!("{at}, objects written in protobuf"),
    };
    match &cfg.encryption_provider_config {
        Some(f) => format!("{at}, encrypted at rest as {} says", f.display()),
        None => at,
    }
}

/// upstream's compactor: every interval, compact to the revision seen at
/// the previous tick, so one interval of history always stays.
async fn compactor(backend: Arc<dyn Backend>, every: Duration, stop: CancellationToken) {
    let mut last: Option<i64> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.cancelled() => return,
        }
        if let Some(rev) = last {
            match backend.compact(rev).await {
                Ok(()) => tracing::debug!(revision = rev, "compacted storage"),
                Err(BackendError::Compacted { .. }) => {}
                Err(e) => {
                    crate::warn_limited!("compaction-failed", error = %e, "compaction failed")
                }
            }
        }
        last = backend.current_revision().await.ok();
    }
}

/// ServiceAccount token keys: kapi's own `sa.key` pair unless the flags
/// name a signing key and the keys that verify, as kube-apiserver's do.
fn service_account_tokens(
    cfg: &CompletedConfig,
    pki: &Pki,
) -> anyhow::Result<crate::auth::serviceaccount::TokenIssuer> {
    let read = |flag: &str, f: &std::path::Path| {
        std::fs::read_to_string(f).with_context(|| format!("--{flag} {}", f.display()))
    };
    let signing = match &cfg.service_account_signing_key_file {
        Some(f) => read("service-account-signing-key-file", f)?,
        None => pki.service_account_key_pem.clone(),
    };
    let mut verify = Vec::new();
    for f in &cfg.service_account_key_files {
        verify.push(read("service-account-key-file", f)?);
    }
    if verify.is_empty() {
        // The signing key verifies its own tokens.
        verify.push(match &cfg.service_account_signing_key_file {
            Some(_) => signing.clone(),
            None => pki.service_account_pub_pem.clone(),
        });
    }
    crate::auth::serviceaccount::TokenIssuer::new(
        &signing,
        &verify,
        cfg.service_account_issuer.clone(),
        cfg.api_audiences.clone(),
    )
    .map_err(|e| anyhow::anyhow!(e))
}

/// Whom kapi trusts for client certificates: its own CA and
/// `--client-ca-file` for users, and a front-proxy CA (the caller's
/// `--requestheader-client-ca-file`, else kapi's own) for proxies.
struct ClientTrust {
    client_ca_bundle: String,
    front_proxy: crate::auth::request_header::Trust,
}

fn client_trust(cfg: &CompletedConfig, pki: &Pki) -> anyhow::Result<ClientTrust> {
    let mut client_ca_bundle = pki.ca.cert_pem.clone();
    if let Some(f) = &cfg.client_ca_file {
        let pem = std::fs::read_to_string(f)
            .with_context(|| format!("--client-ca-file {}", f.display()))?;
        if !client_ca_bundle.ends_with('\n') {
            client_ca_bundle.push('\n');
        }
        client_ca_bundle.push_str(&pem);
    }
    let front_proxy = match &cfg.request_header {
        Some(s) => crate::auth::request_header::Trust {
            ca_pem: std::fs::read_to_string(&s.client_ca_file).with_context(|| {
                format!(
                    "--requestheader-client-ca-file {}",
                    s.client_ca_file.display()
                )
            })?,
            allowed_names: s.allowed_names.clone(),
            headers: s.headers.clone(),
        },
        // Requests kapi itself makes as a front proxy name their user in
        // X-Remote-* headers.
        None => crate::auth::request_header::Trust {
            ca_pem: pki.front_proxy_ca.cert_pem.clone(),
            allowed_names: vec![aggregator::authentication_info::FRONT_PROXY_CLIENT.to_string()],
            headers: crate::auth::request_header::HeaderNames::standard().clone(),
        },
    };
    Ok(ClientTrust {
        client_ca_bundle,
        front_proxy,
    })
}

fn tls_serving(
    cfg: &CompletedConfig,
    pki: &Pki,
    trust: &ClientTrust,
) -> anyhow::Result<TlsServing> {
    let client_ca = ClientCertAuthority::new(&[&trust.client_ca_bundle])
        .and_then(|ca| {
            ca.with_front_proxy(
                &trust.front_proxy.ca_pem,
                trust.front_proxy.allowed_names.clone(),
            )
        })
        .map_err(|e| anyhow::anyhow!("client CA: {e}"))?;
    let (cert, key) = match &cfg.tls_cert_file {
        Some((c, k)) => (
            std::fs::read_to_string(c)
                .with_context(|| format!("--tls-cert-file {}", c.display()))?,
            std::fs::read_to_string(k)
                .with_context(|| format!("--tls-private-key-file {}", k.display()))?,
        ),
        None => (pki.serving.cert_pem.clone(), pki.serving.key_pem.clone()),
    };
    let mut sni = Vec::new();
    for n in &cfg.tls_sni_cert_key {
        let read = |f: &std::path::Path| {
            std::fs::read_to_string(f)
                .with_context(|| format!("--tls-sni-cert-key {}", f.display()))
        };
        sni.push(crate::server::sni::LoadedCert {
            cert_pem: read(&n.cert_file)?,
            key_pem: read(&n.key_file)?,
            names: n.names.clone(),
        });
    }
    TlsServing::with_policy(&cert, &key, client_ca, &cfg.tls_policy, &sni)
        .map_err(|e| anyhow::anyhow!(e))
}

fn health_checks(
    hooks: &PostStartHooks,
    boot_sequence: Vec<HealthCheck>,
    shutting_down: Arc<AtomicBool>,
    backend: Arc<dyn Backend>,
) -> Health {
    let etcd = HealthCheck::new("etcd", move || {
        let b = backend.clone();
        async move {
            match tokio::time::timeout(Duration::from_secs(2), b.current_revision()).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("{} did not answer within 2s", b.name())),
            }
        }
    });
    let mut base = vec![
        HealthCheck::ping(),
        HealthCheck::new("log", || async { Ok(()) }),
        etcd,
    ];
    base.extend(hooks.checks());
    base.extend(boot_sequence);
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

/// The aggregator's post-start hooks, named as upstream's.
fn add_aggregator_hooks(
    hooks: &mut PostStartHooks,
    registries: &Registries,
    proxy: &Arc<aggregator::proxy::Proxy>,
    autoregister: &Arc<aggregator::autoregister::AutoRegister>,
    trust: &ClientTrust,
    background: &CancellationToken,
    informers: &crate::informers::Informers,
) {
    let (i, stop) = (informers.clone(), background.child_token());
    let trust = aggregator::authentication_info::data(&trust.client_ca_bundle, &trust.front_proxy);
    hooks.add(
        "start-cluster-authentication-info-controller",
        move || async move {
            tokio::spawn(aggregator::authentication_info::run(i, trust, stop));
            Ok(())
        },
    );
    let (r, i, stop, auto) = (
        registries.clone(),
        informers.clone(),
        background.child_token(),
        autoregister.clone(),
    );
    hooks.add("kube-apiserver-autoregistration", move || async move {
        // The first pass is part of starting: ready means registered.
        if let Err(e) = auto.start(&r).await {
            tracing::warn!(error = %e, "initial APIService registration");
        }
        tokio::spawn(auto.run(i, stop));
        Ok(())
    });
    let (i, stop) = (informers.clone(), background.child_token());
    hooks.add(
        "apiservice-status-local-available-controller",
        move || async move {
            tokio::spawn(aggregator::available::run_local(i, stop));
            Ok(())
        },
    );
    let (p, i, stop) = (proxy.clone(), informers.clone(), background.child_token());
    hooks.add(
        "apiservice-status-remote-available-controller",
        move || async move {
            tokio::spawn(aggregator::available::run_remote(p, i, stop));
            Ok(())
        },
    );
}
