//! `ServeOptions::complete`: the flags resolved into a `CompletedConfig`
//! (defaults resolved, paths derived, values checked), as upstream's
//! `Options.Complete()`.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use ipnet::IpNet;

use super::admission::admission_plugins;
use super::authorization::{parse_authorization_modes, AuthorizationMode};
use super::options::ServeOptions;
use super::parse::parse_etcd_servers_overrides;
use super::{clocks, feature_gates, runtime_config, PortRange};

/// Where the store lives.
#[derive(Debug, Clone)]
pub enum StorageBackend {
    Embedded {
        dir: PathBuf,
        /// Commits wait for the disk; off only for `kapi::testing`'s
        /// throwaway stores.
        durable: bool,
    },
    Etcd {
        endpoints: Vec<String>,
        ca_file: Option<PathBuf>,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
    },
}

/// Everything `kapi serve` needs, resolved and checked.
#[derive(Debug, Clone)]
pub struct CompletedConfig {
    pub secure_port: u16,
    pub bind_address: IpAddr,
    pub advertise_address: IpAddr,
    pub data_dir: PathBuf,
    pub cert_dir: PathBuf,
    pub tls_cert_file: Option<(PathBuf, PathBuf)>,
    pub client_ca_file: Option<PathBuf>,
    pub storage: StorageBackend,
    pub storage_prefix: String,
    /// `--etcd-servers-overrides`: (group, resource, endpoints).
    pub etcd_servers_overrides: Vec<(String, String, Vec<String>)>,
    pub storage_media_type: crate::storage::codec::MediaType,
    pub compaction_interval: Duration,
    pub service_cluster_ip_range: IpNet,
    pub service_node_port_range: PortRange,
    pub anonymous_auth: bool,
    pub token_auth_file: Option<PathBuf>,
    /// The admission plugins that run, in upstream's order.
    pub admission_plugins: Vec<String>,
    pub allow_privileged: bool,
    pub authorization_modes: Vec<AuthorizationMode>,
    pub max_requests_inflight: u32,
    pub max_mutating_requests_inflight: u32,
    pub enable_priority_and_fairness: bool,
    pub min_request_timeout: Duration,
    pub http2_max_streams_per_connection: u32,
    pub request_timeout: Duration,
    pub shutdown_delay: Duration,
    /// Where the admin kubeconfig goes; `None` writes none (kube-apiserver's way).
    pub kubeconfig_out: Option<PathBuf>,
    pub service_account_issuer: String,
    pub service_account_key_files: Vec<PathBuf>,
    pub service_account_signing_key_file: Option<PathBuf>,
    pub api_audiences: Vec<String>,
    pub audit_policy_file: Option<PathBuf>,
    pub admission_config_file: Option<PathBuf>,
    pub audit_log_path: Option<PathBuf>,
    /// The audit webhook's kubeconfig and batching.
    pub audit_webhook: Option<(PathBuf, crate::server::audit_webhook::Batching)>,
    pub controllers: crate::controlplane::manager::Selection,
    /// The built-in controllers' periods: upstream's unless a test shortens them.
    pub clocks: clocks::Clocks,
    /// Planted in an empty store before anything reads it (`kapi::testing`).
    pub seed: Option<crate::storage::seed::Seed>,
    /// `/debug/flags` is served.
    pub profiling: bool,
    pub encryption_provider_config: Option<PathBuf>,
    /// `--runtime-config`, resolved: what is served.
    pub runtime_config: runtime_config::RuntimeConfig,
    /// `--tls-min-version` and `--tls-cipher-suites`.
    pub tls_policy: crate::server::serve::TlsPolicy,
    /// The authorization webhook of `--authorization-mode=...,Webhook`.
    pub authorization_webhook: Option<crate::auth::authz_webhook::Settings>,
    /// The token webhook's kubeconfig, review version and cache TTL.
    pub token_webhook: Option<(PathBuf, crate::auth::token_webhook::Version, Duration)>,
    /// A caller's front-proxy CA and header names; `None`: kapi's own.
    pub request_header: Option<crate::auth::request_header::Settings>,
    /// The aggregator's client certificate and key; `None`: kapi's own.
    pub proxy_client: Option<(PathBuf, PathBuf)>,
    pub enable_bootstrap_token_auth: bool,
    /// `--tls-sni-cert-key`, in flag order.
    pub tls_sni_cert_key: Vec<crate::server::sni::NamedCertKey>,
    /// `--watch-cache`, `--default-watch-cache-size`, `--watch-cache-sizes`.
    pub watch_cache: crate::storage::cacher_set::WatchCachePolicy,
    /// `--feature-gates` over v1.34's defaults.
    pub feature_gates: feature_gates::FeatureGates,
    /// Said once at start.
    pub warnings: Vec<String>,
}

/// A flag whose value is wrong; printed as one line, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("invalid value for --{flag}: {message}")]
pub struct FlagError {
    pub flag: &'static str,
    pub message: String,
}

impl ServeOptions {
    pub fn complete(self) -> Result<CompletedConfig, FlagError> {
        let data_dir = self.data_dir;
        let cert_dir = self.cert_dir.unwrap_or_else(|| data_dir.join("pki"));
        let advertise_address = match self.advertise_address {
            Some(a) if a.is_unspecified() => {
                return Err(FlagError {
                    flag: "advertise-address",
                    message: format!("{a} is unspecified; give an address clients can reach"),
                })
            }
            Some(a) => a,
            None if self.bind_address.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            None => self.bind_address,
        };
        let prefix = self.etcd_prefix.trim_end_matches('/').to_string();
        if !prefix.starts_with('/') {
            return Err(FlagError {
                flag: "etcd-prefix",
                message: format!("{:?} must start with /", self.etcd_prefix),
            });
        }
        let endpoints: Vec<String> = self
            .etcd_servers
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        for e in &endpoints {
            if !(e.starts_with("http://") || e.starts_with("https://")) {
                return Err(FlagError {
                    flag: "etcd-servers",
                    message: format!(
                        "{} must be a URL such as http://127.0.0.1:2379",
                        crate::api::go_quote(e)
                    ),
                });
            }
        }
        let storage = if endpoints.is_empty() {
            StorageBackend::Embedded {
                dir: data_dir.join("store"),
                durable: true,
            }
        } else {
            StorageBackend::Etcd {
                endpoints,
                ca_file: self.etcd_cafile,
                cert_file: self.etcd_certfile,
                key_file: self.etcd_keyfile,
            }
        };
        let etcd_servers_overrides = parse_etcd_servers_overrides(&self.etcd_servers_overrides)?;
        if !etcd_servers_overrides.is_empty() && matches!(storage, StorageBackend::Embedded { .. })
        {
            return Err(FlagError {
                flag: "etcd-servers-overrides",
                message: "needs --etcd-servers: the embedded store is one store".into(),
            });
        }
        for (flag, value) in [
            ("max-requests-inflight", self.max_requests_inflight),
            (
                "max-mutating-requests-inflight",
                self.max_mutating_requests_inflight,
            ),
        ] {
            if value == 0 {
                return Err(FlagError {
                    flag,
                    message: "must be at least 1".into(),
                });
            }
        }
        for (flag, file) in [
            ("client-ca-file", &self.client_ca_file),
            (
                "requestheader-client-ca-file",
                &self.requestheader_client_ca_file,
            ),
            ("proxy-client-cert-file", &self.proxy_client_cert_file),
            ("proxy-client-key-file", &self.proxy_client_key_file),
            ("token-auth-file", &self.token_auth_file),
            ("tls-cert-file", &self.tls_cert_file),
            ("tls-private-key-file", &self.tls_private_key_file),
            ("audit-policy-file", &self.audit_policy_file),
            ("audit-webhook-config-file", &self.audit_webhook_config_file),
            (
                "encryption-provider-config",
                &self.encryption_provider_config,
            ),
            (
                "authentication-token-webhook-config-file",
                &self.authentication_token_webhook_config_file,
            ),
            (
                "admission-control-config-file",
                &self.admission_control_config_file,
            ),
            (
                "service-account-signing-key-file",
                &self.service_account_signing_key_file,
            ),
        ] {
            if let Some(f) = file {
                if !f.is_file() {
                    return Err(FlagError {
                        flag,
                        message: format!("{} is not a readable file", f.display()),
                    });
                }
            }
        }
        let authorization_modes = parse_authorization_modes(&self.authorization_mode)?;
        let authorization_webhook = match (
            authorization_modes.contains(&AuthorizationMode::Webhook),
            self.authorization_webhook_config_file,
        ) {
            (true, Some(kubeconfig)) => Some(crate::auth::authz_webhook::Settings {
                kubeconfig,
                version: crate::auth::authz_webhook::parse_version(
                    &self.authorization_webhook_version,
                )
                .map_err(|message| FlagError {
                    flag: "authorization-webhook-version",
                    message,
                })?,
                authorized_ttl: self.authorization_webhook_cache_authorized_ttl,
                unauthorized_ttl: self.authorization_webhook_cache_unauthorized_ttl,
            }),
            (true, None) => {
                return Err(FlagError {
                    flag: "authorization-mode",
                    message: "authorization-mode Webhook's authorization config file not passed"
                        .into(),
                })
            }
            (false, Some(_)) => {
                return Err(FlagError {
                    flag: "authorization-webhook-config-file",
                    message:
                        "cannot specify --authorization-webhook-config-file without mode Webhook"
                            .into(),
                })
            }
            (false, None) => None,
        };
        let admission_plugins = admission_plugins(
            &self.enable_admission_plugins,
            &self.disable_admission_plugins,
        )?;
        let (feature_gates, mut warnings) =
            feature_gates::check(&self.feature_gates).map_err(|message| FlagError {
                flag: "feature-gates",
                message,
            })?;
        if !self.requestheader_uid_headers.is_empty()
            && !feature_gates.enabled("RemoteRequestHeaderUID")
        {
            return Err(FlagError {
                flag: "requestheader-uid-headers",
                message: "--requestheader-uid-headers requires the \"RemoteRequestHeaderUID\" feature to be enabled".into(),
            });
        }
        let (request_header, header_warnings) = crate::auth::request_header::Flags {
            client_ca_file: self.requestheader_client_ca_file,
            allowed_names: self.requestheader_allowed_names,
            username_headers: self.requestheader_username_headers,
            uid_headers: self.requestheader_uid_headers,
            group_headers: self.requestheader_group_headers,
            extra_headers_prefix: self.requestheader_extra_headers_prefix,
        }
        .resolve()
        .map_err(|(flag, message)| FlagError { flag, message })?;
        warnings.extend(header_warnings);
        let watch_cache = crate::storage::cacher_set::WatchCachePolicy {
            enabled: self.watch_cache,
            default_size: self.default_watch_cache_size,
            sizes: crate::storage::cacher_set::WatchCachePolicy::parse_sizes(
                &self.watch_cache_sizes,
            )
            .map_err(|message| FlagError {
                flag: "watch-cache-sizes",
                message,
            })?,
        };
        let tls_sni_cert_key = self
            .tls_sni_cert_key
            .iter()
            .map(|v| crate::server::sni::NamedCertKey::parse(v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| FlagError {
                flag: "tls-sni-cert-key",
                message,
            })?;
        if self.audit_webhook_mode != "batch" {
            return Err(FlagError {
                flag: "audit-webhook-mode",
                message: match self.audit_webhook_mode.as_str() {
                    "blocking" | "blocking-strict" => format!(
                        "kapi sends audit webhooks in batches only, not {}",
                        crate::api::go_quote(&self.audit_webhook_mode)
                    ),
                    other => format!(
                        "invalid audit webhook mode {}, allowed modes are \"batch,blocking,blocking-strict\"",
                        crate::api::go_quote(other)
                    ),
                },
            });
        }
        if self.audit_webhook_version != "audit.k8s.io/v1" {
            return Err(FlagError {
                flag: "audit-webhook-version",
                message: format!(
                    "invalid audit webhook version {}, version is not registered: audit.k8s.io/v1 is",
                    self.audit_webhook_version
                ),
            });
        }
        let audit_webhook = self.audit_webhook_config_file.map(|f| {
            (
                f,
                crate::server::audit_webhook::Batching {
                    max_size: self.audit_webhook_batch_max_size.max(1),
                    max_wait: self.audit_webhook_batch_max_wait,
                    initial_backoff: self.audit_webhook_initial_backoff,
                },
            )
        });
        Ok(CompletedConfig {
            audit_webhook,
            tls_sni_cert_key,
            enable_bootstrap_token_auth: self.enable_bootstrap_token_auth,
            watch_cache,
            request_header,
            feature_gates,
            warnings,
            proxy_client: self.proxy_client_cert_file.zip(self.proxy_client_key_file),
            secure_port: self.secure_port,
            bind_address: self.bind_address,
            advertise_address,
            kubeconfig_out: Some(
                self.kubeconfig_out
                    .unwrap_or_else(|| data_dir.join("admin.kubeconfig")),
            ),
            cert_dir,
            data_dir,
            tls_cert_file: self.tls_cert_file.zip(self.tls_private_key_file),
            client_ca_file: self.client_ca_file,
            storage,
            storage_prefix: prefix,
            etcd_servers_overrides,
            storage_media_type: self.storage_media_type,
            compaction_interval: self.etcd_compaction_interval,
            service_cluster_ip_range: self.service_cluster_ip_range,
            service_node_port_range: self.service_node_port_range,
            anonymous_auth: self.anonymous_auth,
            token_auth_file: self.token_auth_file,
            admission_plugins,
            allow_privileged: self.allow_privileged,
            authorization_modes,
            max_requests_inflight: self.max_requests_inflight,
            max_mutating_requests_inflight: self.max_mutating_requests_inflight,
            enable_priority_and_fairness: self.enable_priority_and_fairness,
            min_request_timeout: Duration::from_secs(self.min_request_timeout.max(1)),
            // upstream: zero is "golang's default", stated as 100.
            http2_max_streams_per_connection: match self.http2_max_streams_per_connection {
                0 => 100,
                n => n,
            },
            request_timeout: self.request_timeout,
            shutdown_delay: self.shutdown_delay_duration,
            controllers: crate::controlplane::manager::Selection::parse(&self.controllers)
                .map_err(|message| FlagError {
                    flag: "controllers",
                    message,
                })?,
            clocks: clocks::Clocks::UPSTREAM,
            seed: None,
            audit_policy_file: self.audit_policy_file,
            audit_log_path: self.audit_log_path,
            admission_config_file: self.admission_control_config_file,
            service_account_issuer: self.service_account_issuer,
            service_account_key_files: self.service_account_key_file,
            service_account_signing_key_file: self.service_account_signing_key_file,
            api_audiences: self.api_audiences,
            profiling: self.profiling,
            encryption_provider_config: self.encryption_provider_config,
            runtime_config: runtime_config::resolve(
                &self.runtime_config,
                self.enable_priority_and_fairness,
            )
            .map_err(|message| FlagError {
                flag: "runtime-config",
                message,
            })?,
            authorization_webhook,
            tls_policy: crate::server::serve::TlsPolicy::parse(
                &self.tls_min_version,
                &self.tls_cipher_suites,
            )
            .map_err(|message| FlagError {
                flag: if message.starts_with("Cipher") {
                    "tls-cipher-suites"
                } else {
                    "tls-min-version"
                },
                message,
            })?,
            token_webhook: match self.authentication_token_webhook_config_file {
                Some(file) => Some((
                    file,
                    crate::auth::token_webhook::parse_version(
                        &self.authentication_token_webhook_version,
                    )
                    .map_err(|message| FlagError {
                        flag: "authentication-token-webhook-version",
                        message,
                    })?,
                    self.authentication_token_webhook_cache_ttl,
                )),
                None => None,
            },
        })
    }
}

impl CompletedConfig {
    /// The first address of the service range: the `kubernetes` Service's ClusterIP.
    pub fn first_service_ip(&self) -> IpAddr {
        match self.service_cluster_ip_range {
            IpNet::V4(n) => IpAddr::V4(Ipv4Addr::from(u32::from(n.network()).wrapping_add(1))),
            IpNet::V6(n) => IpAddr::V6(std::net::Ipv6Addr::from(
                u128::from(n.network()).wrapping_add(1),
            )),
        }
    }
}
