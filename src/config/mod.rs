//! Flags -> completed config, as upstream's `Options.Complete()`: defaults
//! resolved, paths derived, values checked, before anything starts.

pub use crate::component_base::{clocks, duration, feature_gates};
pub use crate::controlplane::allocator::PortRange;
pub mod kube_apiserver;
pub mod runtime_config;

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};
use ipnet::IpNet;

/// `kapi serve` flags, named as kube-apiserver names them.
#[derive(Debug, Clone, Args)]
pub struct ServeOptions {
    /// Port to serve HTTPS on; 0 picks a free port and prints it.
    #[arg(long, default_value_t = 6443, value_name = "PORT")]
    pub secure_port: u16,

    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", value_name = "IP")]
    pub bind_address: IpAddr,

    /// Address advertised to clients and in the `kubernetes` Service (default: the bind address, or 127.0.0.1 when that is unspecified).
    #[arg(long, value_name = "IP")]
    pub advertise_address: Option<IpAddr>,

    /// Where kapi keeps its store, certificates and kubeconfig.
    #[arg(long, default_value = "./.kapi", value_name = "DIR")]
    pub data_dir: PathBuf,

    /// Where generated certificates live (default: <data-dir>/pki).
    #[arg(long, value_name = "DIR")]
    pub cert_dir: Option<PathBuf>,

    /// Serving certificate to use instead of a generated one (needs --tls-private-key-file).
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// Key of --tls-cert-file.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Extra CA bundle whose client certificates are accepted (the generated CA is always trusted).
    #[arg(long, value_name = "FILE")]
    pub client_ca_file: Option<PathBuf>,

    /// etcd endpoints, comma separated; empty means the embedded store.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub etcd_servers: Vec<String>,

    /// Key prefix for everything kapi stores.
    #[arg(long, default_value = "/registry", value_name = "PREFIX")]
    pub etcd_prefix: String,

    /// How built-in objects are written to storage: application/json, or application/vnd.kubernetes.protobuf as kube-apiserver writes them. Both are always read.
    #[arg(long, default_value = crate::storage::codec::MediaType::JSON, value_parser = parse_storage_media_type, value_name = "TYPE")]
    pub storage_media_type: crate::storage::codec::MediaType,

    /// CA bundle to verify etcd's serving certificate.
    #[arg(long, value_name = "FILE")]
    pub etcd_cafile: Option<PathBuf>,

    /// Client certificate for etcd.
    #[arg(long, value_name = "FILE", requires = "etcd_keyfile")]
    pub etcd_certfile: Option<PathBuf>,

    /// Client key for etcd.
    #[arg(long, value_name = "FILE", requires = "etcd_certfile")]
    pub etcd_keyfile: Option<PathBuf>,

    /// Resources in etcd clusters of their own, comma separated: group/resource#servers, servers semicolon separated (e.g. /events#http://127.0.0.1:2381).
    #[arg(long, value_delimiter = ',', value_name = "OVERRIDES")]
    pub etcd_servers_overrides: Vec<String>,

    /// How often old revisions are compacted (Go duration; 0 disables).
    #[arg(long, default_value = "5m", value_parser = duration::parse, value_name = "DURATION")]
    pub etcd_compaction_interval: Duration,

    /// CIDR from which Service cluster IPs are allocated.
    #[arg(long, default_value = "10.0.0.0/24", value_parser = parse_service_cidr, value_name = "CIDR")]
    pub service_cluster_ip_range: IpNet,

    /// Port range reserved for NodePort Services.
    #[arg(long, default_value = "30000-32767", value_parser = parse_port_range, value_name = "RANGE")]
    pub service_node_port_range: PortRange,

    /// Let unauthenticated requests through as system:anonymous (authorization still limits them).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub anonymous_auth: bool,

    /// Static bearer tokens, CSV lines: token,user,uid,"group1,group2".
    #[arg(long, value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,

    /// Admission plugins to enable besides the default ones, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "PLUGINS")]
    pub enable_admission_plugins: Vec<String>,

    /// Default admission plugins to disable, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "PLUGINS")]
    pub disable_admission_plugins: Vec<String>,

    /// Let containers run privileged (securityContext.privileged).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub allow_privileged: bool,

    /// Authorization modes, in order, comma separated: AlwaysAllow, AlwaysDeny, RBAC.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "RBAC",
        value_name = "MODES"
    )]
    pub authorization_mode: Vec<String>,

    /// With API Priority and Fairness: the server's seats are this plus
    /// --max-mutating-requests-inflight. Without: the most non-mutating
    /// requests served at once; more get 429.
    #[arg(long, default_value_t = 400, value_name = "N")]
    pub max_requests_inflight: u32,

    /// Most mutating requests served at once without API Priority and
    /// Fairness; with it, part of the server's seats.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_mutating_requests_inflight: u32,

    /// API Priority and Fairness (flowcontrol.apiserver.k8s.io): classify,
    /// queue fairly and shed with 429. Off: max-in-flight limits, with
    /// system:masters exempt.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub enable_priority_and_fairness: bool,

    /// Streams a client may open at once on one HTTP/2 connection; 0 means
    /// 100, the default of kube-apiserver (and of Go's clients). kapi's
    /// default is higher, for tools that multiplex many watches.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub http2_max_streams_per_connection: u32,

    /// Seconds a watch lasts at least when the client names no
    /// timeoutSeconds (it ends between once and twice this, at random).
    #[arg(long, default_value_t = 1800, value_name = "SECONDS")]
    pub min_request_timeout: u64,

    /// Deadline for non-long-running requests (Go duration).
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub request_timeout: Duration,

    /// After SIGTERM, keep serving this long with /readyz failing before draining, so load balancers stop sending (Go duration).
    #[arg(long, default_value = "0s", value_parser = duration::parse, value_name = "DURATION")]
    pub shutdown_delay_duration: Duration,

    /// Where to write the admin kubeconfig (default: <data-dir>/admin.kubeconfig).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,

    /// AdmissionConfiguration (apiserver.config.k8s.io/v1) holding the
    /// plugins' own configuration (EventRateLimit's, for one).
    #[arg(long, value_name = "FILE")]
    pub admission_control_config_file: Option<PathBuf>,

    /// audit.k8s.io/v1 Policy deciding what is audited (needs --audit-log-path or --audit-webhook-config-file).
    #[arg(long, value_name = "FILE")]
    pub audit_policy_file: Option<PathBuf>,

    /// Where audit events go, as JSON lines ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub audit_log_path: Option<PathBuf>,

    /// Kubeconfig of a webhook that receives audit events as EventLists.
    #[arg(long, value_name = "FILE")]
    pub audit_webhook_config_file: Option<PathBuf>,

    /// How audit events reach the webhook: batch (blocking modes are not implemented).
    #[arg(long, default_value = "batch", value_name = "MODE")]
    pub audit_webhook_mode: String,

    /// Events per webhook batch.
    #[arg(long, default_value_t = 400, value_name = "N")]
    pub audit_webhook_batch_max_size: usize,

    /// Longest a webhook batch waits for more events (Go duration).
    #[arg(long, default_value = "30s", value_parser = duration::parse, value_name = "DURATION")]
    pub audit_webhook_batch_max_wait: Duration,

    /// Wait before the first retry of a failed webhook batch (Go duration).
    #[arg(long, default_value = "10s", value_parser = duration::parse, value_name = "DURATION")]
    pub audit_webhook_initial_backoff: Duration,

    /// API version of the webhook's EventLists: audit.k8s.io/v1.
    #[arg(long, default_value = "audit.k8s.io/v1", value_name = "VERSION")]
    pub audit_webhook_version: String,

    /// Built-in controllers to run: `*` for all, `name` to add, `-name` to remove (kube-controller-manager's flag).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub controllers: Vec<String>,

    /// Issuer (`iss`) of ServiceAccount tokens.
    #[arg(long, default_value = crate::auth::serviceaccount::DEFAULT_ISSUER, value_name = "URL")]
    pub service_account_issuer: String,

    /// PEM files with public keys (or certificates, or private keys) that verify ServiceAccount tokens; repeatable (default: the signing key's).
    #[arg(long, value_delimiter = ',', value_name = "FILE")]
    pub service_account_key_file: Vec<PathBuf>,

    /// PEM private key (RSA or ECDSA P-256) that signs ServiceAccount tokens (default: <cert-dir>/sa.key, generated).
    #[arg(long, value_name = "FILE")]
    pub service_account_signing_key_file: Option<PathBuf>,

    /// Audiences the API accepts in tokens, comma separated (default: the issuer).
    #[arg(long, value_delimiter = ',', value_name = "AUDIENCES")]
    pub api_audiences: Vec<String>,

    /// Serve /debug/flags/v, where an administrator changes the log verbosity of the running server (PUT the level), as kube-apiserver does with profiling on.
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set, value_name = "BOOL")]
    pub profiling: bool,

    /// EncryptionConfiguration (apiserver.config.k8s.io/v1): which resources are encrypted at rest, with which providers (aescbc, aesgcm, secretbox, identity) and keys.
    #[arg(long, value_name = "FILE")]
    pub encryption_provider_config: Option<PathBuf>,

    /// Built-in APIs to switch on or off, as kube-apiserver's flag: api/all=false, apps/v1=false, batch/v1/cronjobs=false, v1=true (repeatable, comma separated).
    #[arg(long, value_name = "KEY=VALUE")]
    pub runtime_config: Vec<String>,

    /// kubeconfig of a token webhook: bearer tokens no other authenticator knows are sent there as TokenReviews.
    #[arg(long, value_name = "FILE")]
    pub authentication_token_webhook_config_file: Option<PathBuf>,

    /// The authentication.k8s.io version of the TokenReviews sent to the webhook: v1 or v1beta1.
    #[arg(long, default_value = "v1beta1", value_name = "VERSION")]
    pub authentication_token_webhook_version: String,

    /// How long the webhook's answers are kept (Go duration).
    #[arg(long, default_value = "2m", value_parser = duration::parse, value_name = "DURATION")]
    pub authentication_token_webhook_cache_ttl: Duration,

    /// kubeconfig of an authorization webhook (with --authorization-mode ...,Webhook): requests are sent there as SubjectAccessReviews.
    #[arg(long, value_name = "FILE")]
    pub authorization_webhook_config_file: Option<PathBuf>,

    /// The authorization.k8s.io version of the SubjectAccessReviews sent to the webhook: v1 or v1beta1.
    #[arg(long, default_value = "v1beta1", value_name = "VERSION")]
    pub authorization_webhook_version: String,

    /// How long the webhook's allowing answers are kept (Go duration).
    #[arg(long, default_value = "5m", value_parser = duration::parse, value_name = "DURATION")]
    pub authorization_webhook_cache_authorized_ttl: Duration,

    /// How long the webhook's other answers are kept (Go duration).
    #[arg(long, default_value = "30s", value_parser = duration::parse, value_name = "DURATION")]
    pub authorization_webhook_cache_unauthorized_ttl: Duration,

    /// Lowest TLS version served: VersionTLS12 (default) or VersionTLS13.
    #[arg(long, default_value = "", value_name = "VERSION")]
    pub tls_min_version: String,

    /// TLS 1.2 cipher suites allowed, by Go's names, comma separated (TLS 1.3's are not configurable).
    #[arg(long, value_delimiter = ',', value_name = "SUITES")]
    pub tls_cipher_suites: Vec<String>,

    /// CA of authenticating front proxies, which name their user in request headers (default: kapi's own front-proxy CA, X-Remote-* headers).
    #[arg(long, value_name = "FILE")]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// Common names a front proxy's certificate may have, comma separated; empty allows any.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub requestheader_allowed_names: Vec<String>,

    /// Request headers naming the user (X-Remote-User is suggested).
    #[arg(long, value_delimiter = ',', value_name = "HEADERS")]
    pub requestheader_username_headers: Vec<String>,

    /// Request headers naming the user's UID (X-Remote-Uid is suggested).
    #[arg(long, value_delimiter = ',', value_name = "HEADERS")]
    pub requestheader_uid_headers: Vec<String>,

    /// Request headers naming the user's groups (X-Remote-Group is suggested).
    #[arg(long, value_delimiter = ',', value_name = "HEADERS")]
    pub requestheader_group_headers: Vec<String>,

    /// Request header prefixes of the user's extra values (X-Remote-Extra- is suggested).
    #[arg(long, value_delimiter = ',', value_name = "PREFIXES")]
    pub requestheader_extra_headers_prefix: Vec<String>,

    /// Client certificate the aggregator presents to aggregated API servers (default: kapi's front-proxy-client).
    #[arg(long, value_name = "FILE", requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,

    /// More serving pairs chosen by SNI: `cert,key[:name,...]` (names default to the certificate's); repeatable.
    #[arg(long, value_name = "CERT,KEY[:NAMES]", action = clap::ArgAction::Append)]
    pub tls_sni_cert_key: Vec<String>,

    /// Accept bootstrap tokens (Secrets `kube-system/bootstrap-token-<id>`) as bearer tokens.
    #[arg(long)]
    pub enable_bootstrap_token_auth: bool,

    /// Serve lists and watches from a watch cache (false: every read goes to storage).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub watch_cache: bool,

    /// Watch cache size of resources no --watch-cache-sizes entry names; 0 reads them from storage.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub default_watch_cache_size: i64,

    /// Per resource, `resource[.group]#size`, comma separated; only 0 (no cache) differs from the default.
    #[arg(long, value_delimiter = ',', value_name = "SIZES")]
    pub watch_cache_sizes: Vec<String>,

    /// Feature gates, `Name=bool` comma separated (kube-apiserver v1.34's; see `kapi kube-apiserver --help`).
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Vec<String>,

    /// Key of --proxy-client-cert-file.
    #[arg(long, value_name = "FILE", requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,
}

fn parse_storage_media_type(s: &str) -> Result<crate::storage::codec::MediaType, String> {
    crate::storage::codec::MediaType::parse(s)
}

fn parse_port_range(s: &str) -> Result<PortRange, String> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let lo: u16 = a.trim().parse().map_err(|_| {
        format!(
            "{} is not a port range like 30000-32767",
            crate::api::go_quote(s)
        )
    })?;
    let hi: u16 = b.trim().parse().map_err(|_| {
        format!(
            "{} is not a port range like 30000-32767",
            crate::api::go_quote(s)
        )
    })?;
    if hi < lo || lo == 0 {
        return Err(format!(
            "{} is not a valid port range",
            crate::api::go_quote(s)
        ));
    }
    Ok(PortRange {
        base: lo,
        size: hi - lo + 1,
    })
}

fn parse_service_cidr(s: &str) -> Result<IpNet, String> {
    let net: IpNet = s
        .parse()
        .map_err(|e| format!("{} is not a CIDR: {e}", crate::api::go_quote(s)))?;
    // Upstream needs room for at least the kubernetes service and one more.
    let host_bits = net.max_prefix_len() - net.prefix_len();
    if host_bits < 2 {
        return Err(format!(
            "{} is too small: it must hold at least 4 addresses",
            crate::api::go_quote(s)
        ));
    }
    if net.network() != net.addr() {
        return Err(format!(
            "{s:?} has host bits set; did you mean {}?",
            net.trunc()
        ));
    }
    Ok(net)
}

fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration::parse(s)?;
    if d.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(d)
}

/// One `--authorization-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizationMode {
    AlwaysAllow,
    AlwaysDeny,
    Rbac,
    Webhook,
    Node,
}

impl AuthorizationMode {
    pub const NAMES: &'static [&'static str] =
        &["AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"];

    pub fn as_str(self) -> &'static str {
        match self {
            AuthorizationMode::AlwaysAllow => "AlwaysAllow",
            AuthorizationMode::AlwaysDeny => "AlwaysDeny",
            AuthorizationMode::Rbac => "RBAC",
            AuthorizationMode::Webhook => "Webhook",
            AuthorizationMode::Node => "Node",
        }
    }
}

/// `group/resource#url;url,...`, checked as upstream's etcd options check it.
fn parse_etcd_servers_overrides(
    values: &[String],
) -> Result<Vec<(String, String, Vec<String>)>, FlagError> {
    let invalid = || {
        FlagError {
        flag: "etcd-servers-overrides",
        message: "--etcd-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated".into(),
    }
    };
    let mut out = Vec::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let (resource, servers) = v.split_once('#').ok_or_else(invalid)?;
        if servers.contains('#') {
            return Err(invalid());
        }
        let (group, resource) = resource.split_once('/').ok_or_else(invalid)?;
        if resource.contains('/') {
            return Err(invalid());
        }
        let servers: Vec<String> = servers
            .split(';')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if servers.is_empty() {
            return Err(invalid());
        }
        out.push((group.to_string(), resource.to_string(), servers));
    }
    Ok(out)
}

/// The modes in order: each known, none twice, at least one (upstream's checks).
fn parse_authorization_modes(values: &[String]) -> Result<Vec<AuthorizationMode>, FlagError> {
    let err = |message: String| FlagError {
        flag: "authorization-mode",
        message,
    };
    let mut modes = Vec::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        let mode = match v {
            "AlwaysAllow" => AuthorizationMode::AlwaysAllow,
            "AlwaysDeny" => AuthorizationMode::AlwaysDeny,
            "RBAC" => AuthorizationMode::Rbac,
            "Webhook" => AuthorizationMode::Webhook,
            "Node" => AuthorizationMode::Node,
            other => {
                return Err(err(format!(
                    "authorization-mode {other:?} is not a valid mode (supported: {})",
                    AuthorizationMode::NAMES.join(", ")
                )))
            }
        };
        if modes.contains(&mode) {
            return Err(err(format!(
                "authorization-mode {} has mode specified more than once",
                crate::api::go_quote(v)
            )));
        }
        modes.push(mode);
    }
    if modes.is_empty() {
        return Err(err("at least one authorization-mode must be passed".into()));
    }
    Ok(modes)
}

/// upstream's admission options: the names must be known and not both
/// enabled and disabled; the default-on plugins minus the disabled ones,
/// plus the enabled ones, in upstream's order.
fn admission_plugins(enable: &[String], disable: &[String]) -> Result<Vec<String>, FlagError> {
    let clean = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let (enable, disable) = (clean(enable), clean(disable));
    let known = |n: &str| crate::admission::ORDER.contains(&n);
    for (flag, names) in [
        ("enable-admission-plugins", &enable),
        ("disable-admission-plugins", &disable),
    ] {
        if let Some(n) = names.iter().find(|n| !known(n)) {
            return Err(FlagError {
                flag,
                message: format!("plugin {} is unknown", crate::api::go_quote(n)),
            });
        }
    }
    if let Some((n, why)) = crate::admission::NOT_IMPLEMENTED
        .iter()
        .find(|(n, _)| enable.iter().any(|e| e == n))
    {
        return Err(FlagError {
            flag: "enable-admission-plugins",
            message: format!(
                "plugin {} is not supported by kapi: {why}",
                crate::api::go_quote(n)
            ),
        });
    }
    let mut both: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
    if !both.is_empty() {
        both.sort();
        both.dedup();
        let list: Vec<&str> = both.iter().map(|s| s.as_str()).collect();
        return Err(FlagError {
            flag: "enable-admission-plugins",
            message: format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                list.join(" ")
            ),
        });
    }
    let on = |n: &str| {
        enable.iter().any(|e| e == n)
            || (crate::admission::DEFAULT_ON.contains(&n) && !disable.iter().any(|d| d == n))
    };
    let out: Vec<String> = crate::admission::ORDER
        .iter()
        .filter(|n| on(n))
        .map(|n| n.to_string())
        .collect();
    Ok(out)
}

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
    /// `kapi serve`'s defaults, as if no flag were given.
    pub fn defaults() -> ServeOptions {
        use clap::Parser;
        #[derive(Parser)]
        struct Bare {
            #[command(flatten)]
            opts: ServeOptions,
        }
        // Every flag has a default, so an empty command line always parses.
        Bare::parse_from(["kapi"]).opts
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_ranges() {
        assert_eq!(
            parse_port_range("30000-32767"),
            Ok(PortRange {
                base: 30000,
                size: 2768
            })
        );
        assert!(parse_port_range("5-1").is_err());
        assert!(parse_port_range("x").is_err());
    }

    #[test]
    fn admission_plugin_flags() {
        let run = |e: &[&str], d: &[&str]| {
            let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            admission_plugins(&v(e), &v(d)).map_err(|e| e.to_string())
        };
        let all = run(&[], &[]).unwrap_or_default();
        assert_eq!(all.first().map(String::as_str), Some("NamespaceLifecycle"));
        assert_eq!(all.last().map(String::as_str), Some("ResourceQuota"));
        assert_eq!(all.len(), crate::admission::DEFAULT_ON.len());
        let some =
            run(&["AlwaysPullImages"], &["ResourceQuota", "PodSecurity"]).unwrap_or_default();
        assert!(some.contains(&"AlwaysPullImages".to_string()));
        assert!(!some
            .iter()
            .any(|p| p == "ResourceQuota" || p == "PodSecurity"));
        assert_eq!(
            run(&["Nope"], &[]),
            Err("invalid value for --enable-admission-plugins: plugin \"Nope\" is unknown".into())
        );
        assert_eq!(
            run(&[], &["Bogus"]),
            Err(
                "invalid value for --disable-admission-plugins: plugin \"Bogus\" is unknown".into()
            )
        );
        assert_eq!(
            run(&["LimitRanger"], &["LimitRanger"]),
            Err("invalid value for --enable-admission-plugins: [LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped".into())
        );
    }

    #[test]
    fn authorization_modes() {
        let modes = |v: &[&str]| {
            parse_authorization_modes(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(modes(&["RBAC"]).ok(), Some(vec![AuthorizationMode::Rbac]));
        assert_eq!(
            modes(&["AlwaysDeny", "RBAC"]).ok(),
            Some(vec![AuthorizationMode::AlwaysDeny, AuthorizationMode::Rbac])
        );
        assert_eq!(
            modes(&["Node", "RBAC"]).ok(),
            Some(vec![AuthorizationMode::Node, AuthorizationMode::Rbac])
        );
        assert_eq!(
            modes(&["ABAC", "RBAC"]).map_err(|e| e.to_string()).err().as_deref(),
            Some("invalid value for --authorization-mode: authorization-mode \"ABAC\" is not a valid mode (supported: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook)")
        );
        assert!(modes(&["RBAC", "RBAC"]).is_err());
        assert!(modes(&[""]).is_err());
    }

    #[test]
    fn service_cidr_checks() {
        assert!(parse_service_cidr("10.0.0.0/24").is_ok());
        assert!(parse_service_cidr("10.0.0.1/24").is_err());
        assert!(parse_service_cidr("10.0.0.0/31").is_err());
        assert!(parse_service_cidr("nope").is_err());
    }
}
