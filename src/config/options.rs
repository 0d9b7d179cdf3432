//! `kapi serve`'s flags (`ServeOptions`), named as kube-apiserver names
//! them, and their defaults.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};
use ipnet::IpNet;

use super::parse::{
    parse_port_range, parse_positive_duration, parse_service_cidr, parse_storage_media_type,
};
use super::{duration, PortRange};

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
}
