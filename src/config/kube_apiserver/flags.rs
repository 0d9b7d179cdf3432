//! The flag table: every kube-apiserver v1.34 flag (from
//! `kube-apiserver-flags.tsv`) and what kapi does with each (honoured, a
//! no-op and why, or accepted at its default only).

use std::sync::OnceLock;

/// One kube-apiserver flag, from the table in `kube-apiserver-flags.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    pub section: &'static str,
    pub name: &'static str,
    pub shorthand: Option<char>,
    /// The type word pflag prints (`string`, `strings`, `duration`, `bool`...).
    pub kind: &'static str,
    /// pflag's DefValue, verbatim (`""` for the empty string).
    pub default: &'static str,
    /// Printed by `--help` (not deprecated).
    pub visible: bool,
}

impl Flag {
    /// Flags that take no value (`--name` means true).
    pub(super) fn is_boolean(&self) -> bool {
        matches!(self.kind, "bool" | "version")
    }

    pub(super) fn default_value(&self) -> &'static str {
        if self.default == "\"\"" {
            ""
        } else {
            self.default
        }
    }

    /// How kapi treats it, for `--help` and for start-up.
    pub fn handling(&self) -> Handling {
        if HONOURED.contains(&self.name) {
            Handling::Honoured
        } else if NO_OPS.iter().any(|(n, _)| *n == self.name) {
            Handling::NoOp
        } else {
            Handling::DefaultOnly
        }
    }
}

/// What kapi does with a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Does what kube-apiserver's does.
    Honoured,
    /// Accepted with any value; it cannot matter for one kapi on one machine.
    NoOp,
    /// Accepted at its default value; any other value is refused at start,
    /// because kapi does not have the behaviour it asks for.
    DefaultOnly,
}

const TABLE: &str = include_str!("kube-apiserver-flags.tsv");

/// Every kube-apiserver v1.34 flag, in `--help` order.
pub fn flags() -> &'static [Flag] {
    static FLAGS: OnceLock<Vec<Flag>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let f: Vec<&'static str> = l.split('\t').collect();
                let [section, name, short, kind, default, status] = f[..] else {
                    return None;
                };
                Some(Flag {
                    section,
                    name,
                    shorthand: short.chars().next().filter(|c| *c != '-'),
                    kind,
                    default,
                    visible: status == "visible",
                })
            })
            .collect()
    })
}

pub(super) fn lookup(name: &str) -> Option<&'static Flag> {
    // cliflag.WordSepNormalizeFunc: `_` in a flag name reads as `-`.
    let name = name.replace('_', "-");
    flags().iter().find(|f| f.name == name)
}

/// Flags kapi honours as kube-apiserver does.
pub(super) const HONOURED: &[&str] = &[
    "advertise-address",
    "bind-address",
    "secure-port",
    "cert-dir",
    "tls-cert-file",
    "tls-private-key-file",
    "client-ca-file",
    "etcd-servers",
    "etcd-prefix",
    "etcd-cafile",
    "etcd-certfile",
    "etcd-keyfile",
    "etcd-compaction-interval",
    "storage-media-type",
    "service-cluster-ip-range",
    "service-node-port-range",
    "anonymous-auth",
    "token-auth-file",
    "admission-control",
    "enable-admission-plugins",
    "disable-admission-plugins",
    "allow-privileged",
    "authorization-mode",
    "max-requests-inflight",
    "max-mutating-requests-inflight",
    "enable-priority-and-fairness",
    "min-request-timeout",
    "http2-max-streams-per-connection",
    "request-timeout",
    "shutdown-delay-duration",
    "audit-policy-file",
    "admission-control-config-file",
    "audit-log-path",
    "service-account-issuer",
    "service-account-key-file",
    "service-account-signing-key-file",
    "api-audiences",
    "profiling",
    "encryption-provider-config",
    "runtime-config",
    "etcd-servers-overrides",
    "authorization-webhook-config-file",
    "tls-min-version",
    "tls-cipher-suites",
    "authorization-webhook-version",
    "authorization-webhook-cache-authorized-ttl",
    "authorization-webhook-cache-unauthorized-ttl",
    "authentication-token-webhook-config-file",
    "authentication-token-webhook-version",
    "authentication-token-webhook-cache-ttl",
    "feature-gates",
    "audit-webhook-config-file",
    "audit-webhook-mode",
    "audit-webhook-batch-max-size",
    "audit-webhook-batch-max-wait",
    "audit-webhook-initial-backoff",
    "audit-webhook-batch-initial-backoff",
    "audit-webhook-version",
    "tls-sni-cert-key",
    "enable-bootstrap-token-auth",
    "watch-cache",
    "watch-cache-sizes",
    "default-watch-cache-size",
    "requestheader-client-ca-file",
    "requestheader-allowed-names",
    "requestheader-username-headers",
    "requestheader-uid-headers",
    "requestheader-group-headers",
    "requestheader-extra-headers-prefix",
    "proxy-client-cert-file",
    "proxy-client-key-file",
    "v",
    "logging-format",
    "help",
    "version",
];

/// Flags accepted with any value, and why they cannot matter here.
pub const NO_OPS: &[(&str, &str)] = &[
    ("emulated-version", "kapi serves v1.34"),
    ("emulation-forward-compatible", "kapi serves v1.34"),
    (
        "runtime-config-emulation-forward-compatible",
        "kapi serves v1.34",
    ),
    ("external-hostname", "no generated links use it"),
    ("cors-allowed-origins", "browsers are not kapi's clients"),
    ("goaway-chance", "one server: no load to balance"),
    ("livez-grace-period", "kapi is live at once"),
    (
        "shutdown-send-retry-after",
        "kapi drains in-flight requests on SIGTERM",
    ),
    (
        "shutdown-watch-termination-grace-period",
        "kapi drains in-flight requests on SIGTERM",
    ),
    (
        "storage-initialization-timeout",
        "kapi's storage is ready when it listens",
    ),
    ("strict-transport-security-directives", "no browsers"),
    (
        "default-not-ready-toleration-seconds",
        "no DefaultTolerationSeconds admission here",
    ),
    (
        "default-unreachable-toleration-seconds",
        "no DefaultTolerationSeconds admission here",
    ),
    (
        "delete-collection-workers",
        "deletecollection runs in one pass",
    ),
    ("etcd-count-metric-poll-period", "metrics"),
    ("etcd-db-metric-poll-interval", "metrics"),
    (
        "etcd-healthcheck-timeout",
        "kapi's etcd check has its own timeout",
    ),
    (
        "etcd-readycheck-timeout",
        "kapi's etcd check has its own timeout",
    ),
    (
        "lease-reuse-duration-seconds",
        "etcd leases are not shared here",
    ),
    ("storage-backend", "etcd3 is the only backend upstream has"),
    (
        "disable-http2-serving",
        "HTTP/1.1 and HTTP/2 are both served",
    ),
    ("permit-address-sharing", "the listener is kapi's own"),
    ("permit-port-sharing", "the listener is kapi's own"),
    (
        "audit-log-batch-buffer-size",
        "audit lines are written as they come",
    ),
    (
        "audit-log-batch-max-size",
        "audit lines are written as they come",
    ),
    (
        "audit-log-batch-max-wait",
        "audit lines are written as they come",
    ),
    (
        "audit-log-batch-throttle-burst",
        "audit lines are written as they come",
    ),
    (
        "audit-log-batch-throttle-enable",
        "audit lines are written as they come",
    ),
    (
        "audit-log-batch-throttle-qps",
        "audit lines are written as they come",
    ),
    (
        "audit-webhook-batch-buffer-size",
        "the webhook's batcher buffers without a bound",
    ),
    (
        "audit-webhook-batch-throttle-burst",
        "batches are sent as they fill, unthrottled",
    ),
    (
        "audit-webhook-batch-throttle-enable",
        "batches are sent as they fill, unthrottled",
    ),
    (
        "audit-webhook-batch-throttle-qps",
        "batches are sent as they fill, unthrottled",
    ),
    ("audit-webhook-truncate-enabled", "events are sent whole"),
    (
        "audit-webhook-truncate-max-batch-size",
        "events are sent whole",
    ),
    (
        "audit-webhook-truncate-max-event-size",
        "events are sent whole",
    ),
    ("audit-log-compress", "no rotation"),
    ("audit-log-format", "JSON lines"),
    ("audit-log-maxage", "no rotation"),
    ("audit-log-maxbackup", "no rotation"),
    ("audit-log-maxsize", "no rotation"),
    ("audit-log-mode", "audit lines are written as they come"),
    ("audit-log-truncate-enabled", "events are written whole"),
    (
        "audit-log-truncate-max-batch-size",
        "events are written whole",
    ),
    (
        "audit-log-truncate-max-event-size",
        "events are written whole",
    ),
    ("audit-log-version", "audit.k8s.io/v1"),
    ("contention-profiling", "no Go profiler"),
    ("debug-socket-path", "no Go profiler"),
    ("oidc-signing-algs", "no OIDC issuer"),
    ("oidc-username-claim", "no OIDC issuer"),
    ("oidc-groups-claim", "no OIDC issuer"),
    ("oidc-groups-prefix", "no OIDC issuer"),
    ("oidc-username-prefix", "no OIDC issuer"),
    ("oidc-required-claim", "no OIDC issuer"),
    ("oidc-client-id", "no OIDC issuer"),
    (
        "enable-aggregator-routing",
        "APIServices are reached at their service URL",
    ),
    (
        "aggregator-reject-forwarding-redirect",
        "kapi never follows redirects of aggregated servers",
    ),
    (
        "service-account-extend-token-expiration",
        "tokens live as long as asked",
    ),
    (
        "service-account-lookup",
        "kapi always checks the ServiceAccount exists",
    ),
    (
        "service-account-max-token-expiration",
        "tokens live as long as asked",
    ),
    (
        "service-account-jwks-uri",
        "the discovery document names the key set at the server's own address",
    ),
    (
        "service-account-signing-endpoint",
        "kapi signs with the key file",
    ),
    ("allow-metric-labels", "metrics"),
    ("allow-metric-labels-manifest", "metrics"),
    ("disabled-metrics", "metrics"),
    ("show-hidden-metrics-for-version", "metrics"),
    ("log-flush-frequency", "logs are written at once"),
    ("log-json-info-buffer-size", "logs are written at once"),
    ("log-json-split-stream", "logs go to standard error"),
    ("log-text-info-buffer-size", "logs are written at once"),
    ("log-text-split-stream", "logs go to standard error"),
    ("vmodule", "-v sets the level"),
    ("apiserver-count", "one server"),
    ("coordinated-leadership-lease-duration", "one server"),
    ("coordinated-leadership-renew-deadline", "one server"),
    ("coordinated-leadership-retry-period", "one server"),
    ("endpoint-reconciler-type", "one server"),
    ("peer-advertise-ip", "one server"),
    ("peer-advertise-port", "one server"),
    ("peer-ca-file", "one server"),
    ("enable-logs-handler", "no node logs"),
    ("event-ttl", "events are kept until deleted"),
    ("kubelet-certificate-authority", "no kubelets"),
    ("kubelet-client-certificate", "no kubelets"),
    ("kubelet-client-key", "no kubelets"),
    ("kubelet-port", "no kubelets"),
    ("kubelet-preferred-address-types", "no kubelets"),
    ("kubelet-read-only-port", "no kubelets"),
    ("kubelet-timeout", "no kubelets"),
    (
        "kubernetes-service-node-port",
        "the kubernetes Service is ClusterIP",
    ),
    (
        "max-connection-bytes-per-sec",
        "no per-connection throttling",
    ),
    (
        "enable-garbage-collector",
        "kapi's garbage collector runs in-process",
    ),
    ("cloud-config", "no cloud provider"),
    ("cloud-provider", "no cloud provider"),
];
