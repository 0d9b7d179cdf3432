//! An API server per test, in the test's own process: the whole kapi chain
//! (TLS, authentication, RBAC, admission, the built-in controllers) on
//! 127.0.0.1 with a port of its own and a store in a temporary directory,
//! and a ready `kube::Client` out. Dropping the [`Server`] stops it and
//! removes its files. Behind the cargo feature `testing`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kapi::testing::Error> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! let server = kapi::testing::Server::start().await?;
//! let configmaps: kube::Api<ConfigMap> = kube::Api::namespaced(server.client(), "default");
//! let list = configmaps.list(&Default::default()).await?;
//! # Ok(()) }
//! ```

mod webhook;

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{json, Value};

use crate::app::{self, StartObserver, Started};
use crate::config::ServeOptions;

pub use crate::config::clocks::Clocks;
pub use webhook::{Webhook, WebhookCertificates};

/// Why a test server could not be started or reached.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("kapi did not start: {0}")]
    Start(String),
    #[error("CRD {name}: {message}")]
    Crd { name: String, message: String },
    #[error("{0}")]
    Credentials(String),
    #[error(transparent)]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A running kapi for one test.
pub struct Server {
    started: Option<Started>,
    client: kube::Client,
    kubeconfig: PathBuf,
    url: String,
    dir: tempfile::TempDir,
}

/// Options for [`Server::builder`].
#[derive(Default)]
pub struct Builder {
    crds: Vec<CustomResourceDefinition>,
    crd_errors: Vec<Error>,
    controllers: Vec<String>,
    enable_admission: Vec<String>,
    disable_admission: Vec<String>,
    authorization_modes: Vec<String>,
    clocks: Clocks,
    mutating_webhooks: Vec<MutatingWebhookConfiguration>,
    validating_webhooks: Vec<ValidatingWebhookConfiguration>,
}

impl Builder {
    /// A CRD to install, and wait for (`Established`, served in discovery)
    /// before the client is handed out.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// The CRD of a `#[derive(CustomResource)]` type.
    pub fn crd_for<K: kube::CustomResourceExt>(self) -> Self {
        self.crd(K::crd())
    }

    /// Every CRD in a YAML file (one or more documents).
    pub fn crd_yaml(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_saphyr::from_multiple::<CustomResourceDefinition>(&text)
                    .map_err(|e| e.to_string())
            });
        match parsed {
            Ok(crds) => self.crds.extend(crds),
            Err(message) => self.crd_errors.push(Error::Crd {
                name: path.display().to_string(),
                message,
            }),
        }
        self
    }

    /// Built-in controllers, as `--controllers` names them (`*`, `name`,
    /// `-name`); all of them by default.
    pub fn controllers<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.controllers = names.into_iter().map(Into::into).collect();
        self
    }

    /// Admission plugins to enable besides the default ones.
    pub fn enable_admission_plugins<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.enable_admission = names.into_iter().map(Into::into).collect();
        self
    }

    /// Default admission plugins to turn off.
    pub fn disable_admission_plugins<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.disable_admission = names.into_iter().map(Into::into).collect();
        self
    }

    /// `--authorization-mode` (RBAC by default).
    pub fn authorization_modes<S: Into<String>>(
        mut self,
        modes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.authorization_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// The built-in controllers' periods; kube-controller-manager's by
    /// default.
    pub fn clocks(mut self, clocks: Clocks) -> Self {
        self.clocks = clocks;
        self
    }

    /// [`Clocks::SHORT`]: what takes a cluster tens of seconds (a deleted
    /// namespace waiting for podgc to remove pods no kubelet stops, a
    /// quota's full recount) takes well under a second.
    pub fn short_clocks(self) -> Self {
        self.clocks(Clocks::SHORT)
    }

    /// A MutatingWebhookConfiguration to install before the client is
    /// handed out, each of its webhooks pointed at `webhook`
    /// ([`Webhook::point_at_me`]): a manifest written for a cluster works
    /// unchanged.
    pub fn mutating_webhooks(
        mut self,
        mut config: MutatingWebhookConfiguration,
        webhook: &Webhook,
    ) -> Self {
        for w in config.webhooks.iter_mut().flatten() {
            webhook.point_at_me(&mut w.client_config);
        }
        self.mutating_webhooks.push(config);
        self
    }

    /// As [`Builder::mutating_webhooks`], for a ValidatingWebhookConfiguration.
    pub fn validating_webhooks(
        mut self,
        mut config: ValidatingWebhookConfiguration,
        webhook: &Webhook,
    ) -> Self {
        for w in config.webhooks.iter_mut().flatten() {
            webhook.point_at_me(&mut w.client_config);
        }
        self.validating_webhooks.push(config);
        self
    }

    pub async fn start(self) -> Result<Server, Error> {
        if let Some(e) = self.crd_errors.into_iter().next() {
            return Err(e);
        }
        let seed = SEED.get().cloned();
        // Admission plugins could shape what the hooks write; a server with
        // the default set writes what every server does.
        let seeds_others =
            seed.is_none() && self.enable_admission.is_empty() && self.disable_admission.is_empty();
        let dir = tempfile::Builder::new().prefix("kapi-test-").tempdir()?;
        let mut opts = ServeOptions::defaults();
        opts.controllers = self.controllers;
        opts.enable_admission_plugins = self.enable_admission;
        opts.disable_admission_plugins = self.disable_admission;
        if !self.authorization_modes.is_empty() {
            opts.authorization_mode = self.authorization_modes;
        }
        let mut cfg = test_config(opts, dir.path())?;
        cfg.clocks = self.clocks;
        cfg.seed = seed;
        let started = app::start(cfg, &Quiet)
            .await
            .map_err(|e| Error::Start(format!("{e:#}")))?;
        if seeds_others {
            match started.take_seed().await {
                Ok(taken) => {
                    let _ = SEED.set(taken);
                }
                Err(e) => tracing::debug!(error = %e, "kapi::testing: no seed taken"),
            }
        }
        let kubeconfig = started
            .kubeconfig
            .clone()
            .ok_or_else(|| Error::Start("no kubeconfig was written".into()))?;
        let url = format!("https://{}", started.addr);
        let client = client_from(&kubeconfig).await?;
        let server = Server {
            started: Some(started),
            client,
            kubeconfig,
            url,
            dir,
        };
        for crd in &self.crds {
            server.install_crd(crd).await?;
        }
        // Admission reads webhook configurations as they are written: the
        // next request after a create is already called out.
        let params = kube::api::PostParams::default();
        for config in &self.mutating_webhooks {
            kube::Api::all(server.client())
                .create(&params, config)
                .await?;
        }
        for config in &self.validating_webhooks {
            kube::Api::all(server.client())
                .create(&params, config)
                .await?;
        }
        Ok(server)
    }
}

/// `opts` on 127.0.0.1 with a port of its own, the store in `dir`.
fn test_config(
    mut opts: ServeOptions,
    dir: &Path,
) -> Result<crate::config::CompletedConfig, Error> {
    opts.secure_port = 0;
    opts.data_dir = dir.to_path_buf();
    // Nothing to compact in a test's lifetime.
    opts.etcd_compaction_interval = Duration::ZERO;
    let mut cfg = opts.complete().map_err(|e| Error::Start(e.to_string()))?;
    // The store goes with the test: commits need not wait for the disk.
    if let crate::config::StorageBackend::Embedded { durable, .. } = &mut cfg.storage {
        *durable = false;
    }
    Ok(cfg)
}

/// The objects every server writes alike at start (RBAC policy, APF
/// configuration, ...), taken from the first server of the process once it
/// has started and planted in each later server's empty store: its
/// post-start hooks then check them instead of writing them, which was
/// most of a start.
static SEED: std::sync::OnceLock<crate::storage::seed::Seed> = std::sync::OnceLock::new();

/// Start-up steps go to the debug log only: a test's output is the test's.
struct Quiet;

impl StartObserver for Quiet {
    fn step(&self, name: &str) {
        tracing::debug!(step = name, "kapi::testing start");
    }
    fn done(&self, name: &str, detail: &str) {
        tracing::debug!(step = name, detail, "kapi::testing start: done");
    }
}

async fn client_from(kubeconfig: &Path) -> Result<kube::Client, Error> {
    crate::crypto_provider();
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| Error::Credentials(e.to_string()))?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Credentials(e.to_string()))?;
    Ok(kube::Client::try_from(cfg)?)
}

impl Server {
    /// A server with the defaults: every built-in controller, RBAC, the
    /// default admission plugins, no CRDs.
    pub async fn start() -> Result<Server, Error> {
        Builder::default().start().await
    }

    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A client as the admin (`system:masters`).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The admin kubeconfig, for tools run as subprocesses (kubectl).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client for user `name` in `groups`, with a client certificate from
    /// the server's CA: what RBAC lets that user do is what it can do.
    pub async fn client_for_user(
        &self,
        name: &str,
        groups: &[&str],
    ) -> Result<kube::Client, Error> {
        let pki = self.dir.path().join("pki");
        let ca_cert = std::fs::read_to_string(pki.join("ca.crt"))?;
        let ca_key = std::fs::read_to_string(pki.join("ca.key"))?;
        let (cert, key) = crate::pki::client_certificate(&ca_cert, &ca_key, name, groups)
            .map_err(|e| Error::Credentials(e.to_string()))?;
        let path = self
            .dir
            .path()
            .join(format!("user-{}.kubeconfig", file_safe(name)));
        crate::pki::write_client_kubeconfig(&path, &ca_cert, &self.url, name, &cert, &key)
            .map_err(|e| Error::Credentials(e.to_string()))?;
        client_from(&path).await
    }

    /// A client for ServiceAccount `namespace/name` (created when missing),
    /// with a token from its TokenRequest.
    pub async fn client_for_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kube::Client, Error> {
        use k8s_openapi::api::core::v1::ServiceAccount;
        let api: kube::Api<ServiceAccount> = kube::Api::namespaced(self.client(), namespace);
        let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}}))
            .map_err(|e| Error::Credentials(e.to_string()))?;
        match api.create(&Default::default(), &sa).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
        let request = k8s_openapi::api::authentication::v1::TokenRequest::default();
        let token = api
            .create_token_request(name, &Default::default(), &request)
            .await?
            .status
            .map(|s| s.token)
            .ok_or_else(|| Error::Credentials("the TokenRequest has no token".into()))?;
        let path = self.dir.path().join(format!(
            "sa-{}-{}.kubeconfig",
            file_safe(namespace),
            file_safe(name)
        ));
        self.write_kubeconfig(&path, &format!("    token: {token}\n"))?;
        client_from(&path).await
    }

    fn write_kubeconfig(&self, path: &Path, user: &str) -> Result<(), Error> {
        let ca = std::fs::read_to_string(self.dir.path().join("pki").join("ca.crt"))?;
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kapi\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: user\n  user:\n{user}contexts:\n- name: kapi\n  context:\n    cluster: kapi\n    user: user\ncurrent-context: kapi\n",
            self.url,
            b64(ca.as_bytes())
        );
        std::fs::write(path, text)?;
        Ok(())
    }

    /// Installs a CRD and waits until it is `Established` and served.
    pub async fn install_crd(&self, crd: &CustomResourceDefinition) -> Result<(), Error> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let fail = |message: String| Error::Crd {
            name: name.clone(),
            message,
        };
        let api: kube::Api<CustomResourceDefinition> = kube::Api::all(self.client());
        api.create(&Default::default(), crd).await?;
        let group = &crd.spec.group;
        let plural = &crd.spec.names.plural;
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.served)
            .map(|v| v.name.clone())
            .ok_or_else(|| fail("no served version".into()))?;
        for _ in 0..200 {
            let established = api.get(&name).await?.status.is_some_and(|s| {
                s.conditions
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
            if established {
                let served = self
                    .client
                    .list_api_group_resources(&format!("{group}/{version}"))
                    .await
                    .is_ok_and(|l| l.resources.iter().any(|r| &r.name == plural));
                if served {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Err(fail("not Established and served within 2 s".into()))
    }

    /// Stops the server, lets in-flight requests finish and closes its
    /// store; its directory goes when this returns.
    pub async fn shutdown(mut self) {
        if let Some(s) = self.started.take() {
            s.shutdown().await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Without an await here: the listener and every loop are told to
        // stop, and end on their own.
        if let Some(s) = self.started.take() {
            s.stop_now();
        }
    }
}

fn b64(b: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, b)
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A CRD from JSON or YAML text, for [`Builder::crd`].
pub fn crd_from_value(v: Value) -> Result<CustomResourceDefinition, Error> {
    serde_json::from_value(v).map_err(|e| Error::Crd {
        name: String::new(),
        message: e.to_string(),
    })
}
