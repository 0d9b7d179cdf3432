//! kube-apiserver's own command line, for when kapi runs in its place
//! (envtest, scripts, unit files): every flag kube-apiserver v1.34 has is
//! parsed with pflag's syntax and errors, and each one is honoured, accepted
//! as a no-op that cannot matter on one machine, or refused when it would
//! change behaviour kapi does not have.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::ServeOptions;

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
    fn is_boolean(&self) -> bool {
        matches!(self.kind, "bool" | "version")
    }

    fn default_value(&self) -> &'static str {
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

fn lookup(name: &str) -> Option<&'static Flag> {
    // cliflag.WordSepNormalizeFunc: `_` in a flag name reads as `-`.
    let name = name.replace('_', "-");
    flags().iter().find(|f| f.name == name)
}

/// Flags kapi honours as kube-apiserver does.
const HONOURED: &[&str] = &[
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
    ("service-account-jwks-uri", "no OIDC discovery documents"),
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

/// A command line as pflag read it: each flag's values, in order.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    values: BTreeMap<&'static str, Vec<String>>,
    positional: Vec<String>,
}

/// What pflag and cobra print for a command line they refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("unknown flag: --{0}")]
    UnknownFlag(String),
    #[error("unknown shorthand flag: '{0}' in -{1}")]
    UnknownShorthand(char, String),
    #[error("flag needs an argument: --{0}")]
    NeedsArgument(String),
    #[error("invalid argument \"{value}\" for \"{flag}\" flag: {reason}")]
    Invalid {
        value: String,
        flag: String,
        reason: String,
    },
    #[error("\"kube-apiserver\" does not take any arguments, got {0}")]
    Positional(String),
}

impl CommandLine {
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<CommandLine, ParseError> {
        let mut cl = CommandLine::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--" {
                cl.positional.extend(args.by_ref());
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let flag = lookup(name).ok_or_else(|| ParseError::UnknownFlag(name.to_string()))?;
                let value = match inline {
                    Some(v) => v,
                    None if flag.is_boolean() => "true".into(),
                    None => args
                        .next()
                        .ok_or_else(|| ParseError::NeedsArgument(flag.name.to_string()))?,
                };
                cl.set(flag, &format!("--{}", flag.name), value)?;
            } else if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
                for (i, c) in shorts.char_indices() {
                    let flag = flags()
                        .iter()
                        .find(|f| f.shorthand == Some(c))
                        .ok_or_else(|| ParseError::UnknownShorthand(c, shorts.to_string()))?;
                    let rest = &shorts[i + c.len_utf8()..];
                    if flag.is_boolean() {
                        let value = rest.strip_prefix('=').map_or("true", |v| v);
                        cl.set(flag, &format!("-{c}"), value.to_string())?;
                        if rest.starts_with('=') {
                            break;
                        }
                        continue;
                    }
                    let value = if let Some(v) = rest.strip_prefix('=') {
                        v.to_string()
                    } else if !rest.is_empty() {
                        rest.to_string()
                    } else {
                        args.next()
                            .ok_or_else(|| ParseError::NeedsArgument(flag.name.to_string()))?
                    };
                    cl.set(flag, &format!("-{c}"), value)?;
                    break;
                }
            } else {
                cl.positional.push(arg);
            }
        }
        if cl.positional.iter().any(|a| !a.is_empty()) {
            let quoted: Vec<String> = cl.positional.iter().map(|a| format!("\"{a}\"")).collect();
            return Err(ParseError::Positional(format!("[{}]", quoted.join(" "))));
        }
        Ok(cl)
    }

    fn set(&mut self, flag: &'static Flag, shown: &str, value: String) -> Result<(), ParseError> {
        check_value(flag, &value).map_err(|reason| ParseError::Invalid {
            value: value.clone(),
            flag: shown.to_string(),
            reason,
        })?;
        self.values.entry(flag.name).or_default().push(value);
        Ok(())
    }

    /// The flag's last value, if it was given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name)?.last().map(String::as_str)
    }

    /// Every value of a list flag: repeated and comma-separated alike.
    pub fn list(&self, name: &str) -> Vec<String> {
        let kind = lookup(name).map_or("strings", |f| f.kind);
        self.values
            .get(name)
            .into_iter()
            .flatten()
            .flat_map(|v| -> Vec<String> {
                if kind == "stringArray" {
                    vec![v.clone()]
                } else {
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                }
            })
            .collect()
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(parse_bool)
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The flags given, by name.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.keys().copied()
    }
}

pub(crate) use crate::component_base::parse_bool;

/// The value checks pflag's typed flags make, with Go's messages.
fn check_value(flag: &Flag, value: &str) -> Result<(), String> {
    let syntax = |f: &str| format!("{f}: parsing \"{value}\": invalid syntax");
    match flag.kind {
        "bool" | "version" => parse_bool(value)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseBool")),
        "int" | "Level" => parse_go_int(value)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseInt")),
        "uint" => parse_go_int(value)
            .filter(|n| *n >= 0)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseUint")),
        "float" | "float32" => value
            .parse::<f64>()
            .map(|_| ())
            .map_err(|_| syntax("strconv.ParseFloat")),
        "duration" => crate::config::duration::parse(value)
            .map(|_| ())
            .map_err(|_| format!("time: invalid duration \"{value}\"")),
        "ip" => value
            .parse::<IpAddr>()
            .map(|_| ())
            .map_err(|_| format!("failed to parse IP: \"{value}\"")),
        _ => Ok(()),
    }
}

/// strconv.ParseInt(s, 0, 64): decimal, or 0x/0o/0b prefixed.
fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let digits = digits.replace('_', "");
    let n = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        i64::from_str_radix(o, 8).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some(if neg { -n } else { n })
}

/// What a kube-apiserver command line asks kapi to do.
#[derive(Debug, Clone)]
pub struct Personality {
    pub serve: ServeOptions,
    /// `-v`.
    pub verbosity: u8,
    /// `--logging-format`.
    pub logging_format: crate::logs::Format,
    /// The serving pair in `--cert-dir` to write when kapi made its own (as
    /// kube-apiserver writes a self-signed pair there when none is given).
    pub write_serving_pair_to: Option<(PathBuf, PathBuf)>,
}

/// A setting kapi refuses, with kube-apiserver's flag name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl Personality {
    /// kube-apiserver's defaults, with the flags given applied over them.
    pub fn from_command_line(
        cl: &CommandLine,
        defaults: ServeOptions,
    ) -> Result<Personality, Refused> {
        // Logging is validated and applied first, as upstream's RunE does.
        let logging_format = match cl.get("logging-format") {
            Some(f) => f.parse().map_err(Refused)?,
            None => crate::logs::Format::Text,
        };
        // Feature gates next, as upstream's PersistentPreRunE sets them
        // (their warnings are said when the options are completed).
        let feature_gates = cl.values.get("feature-gates").cloned().unwrap_or_default();
        super::feature_gates::check(&feature_gates).map_err(Refused)?;
        let mut refused = Vec::new();
        for name in cl.names() {
            let Some(flag) = lookup(name) else { continue };
            if flag.handling() == Handling::DefaultOnly {
                let at_default = cl.values[name].iter().all(|v| same_as_default(flag, v));
                if !at_default {
                    refused.push(format!(
                        "--{name}: kapi does not implement this setting yet (only its default, {}, is accepted)",
                        shown_default(flag)
                    ));
                }
            }
        }
        let etcd_servers = cl.list("etcd-servers");
        if etcd_servers.is_empty() {
            refused.push("--etcd-servers must be specified".into());
        }
        if !refused.is_empty() {
            return Err(Refused(format!("[{}]", refused.join(", "))));
        }
        let mut o = defaults;
        let parse_err =
            |flag: &str, e: String| Refused(format!("invalid argument for --{flag}: {e}"));
        o.secure_port = match cl.get("secure-port") {
            Some(v) => v
                .parse()
                .map_err(|_| parse_err("secure-port", format!("{v} is not a port")))?,
            None => 6443,
        };
        o.bind_address = match cl.get("bind-address") {
            Some(v) => v.parse().map_err(|_| parse_err("bind-address", v.into()))?,
            None => IpAddr::from([0, 0, 0, 0]),
        };
        if let Some(v) = cl.get("advertise-address") {
            o.advertise_address = Some(
                v.parse()
                    .map_err(|_| parse_err("advertise-address", v.into()))?,
            );
        }
        let cert_dir = PathBuf::from(cl.get("cert-dir").unwrap_or("/var/run/kubernetes"));
        // kapi's own credentials (its CA, the aggregator's front-proxy pair,
        // the default ServiceAccount key) live apart from the caller's files.
        o.data_dir = cert_dir.join("kapi");
        o.cert_dir = None;
        o.kubeconfig_out = None;
        let mut write_serving_pair_to = None;
        match (cl.get("tls-cert-file"), cl.get("tls-private-key-file")) {
            (Some(c), Some(k)) => {
                o.tls_cert_file = Some(c.into());
                o.tls_private_key_file = Some(k.into());
            }
            (None, None) => {
                let (c, k) = (
                    cert_dir.join("apiserver.crt"),
                    cert_dir.join("apiserver.key"),
                );
                if c.is_file() && k.is_file() {
                    o.tls_cert_file = Some(c);
                    o.tls_private_key_file = Some(k);
                } else {
                    write_serving_pair_to = Some((c, k));
                }
            }
            _ => {
                return Err(Refused(
                    "--tls-cert-file and --tls-private-key-file go together".into(),
                ))
            }
        }
        o.client_ca_file = cl
            .get("client-ca-file")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from);
        o.etcd_servers = etcd_servers;
        if let Some(v) = cl.get("etcd-prefix") {
            o.etcd_prefix = v.into();
        }
        let path = |name: &str| cl.get(name).filter(|s| !s.is_empty()).map(PathBuf::from);
        o.etcd_cafile = path("etcd-cafile");
        o.etcd_certfile = path("etcd-certfile");
        o.etcd_keyfile = path("etcd-keyfile");
        if let Some(v) = cl.get("etcd-compaction-interval") {
            o.etcd_compaction_interval = crate::config::duration::parse(v)
                .map_err(|e| parse_err("etcd-compaction-interval", e))?;
        }
        o.storage_media_type = crate::storage::codec::MediaType::parse(
            cl.get("storage-media-type")
                .unwrap_or(crate::storage::codec::MediaType::PROTOBUF),
        )
        .map_err(|e| parse_err("storage-media-type", e))?;
        if let Some(v) = cl.get("service-cluster-ip-range").filter(|s| !s.is_empty()) {
            o.service_cluster_ip_range = super::parse_service_cidr(v)
                .map_err(|e| parse_err("service-cluster-ip-range", e))?;
        }
        if let Some(v) = cl.get("service-node-port-range") {
            o.service_node_port_range =
                super::parse_port_range(v).map_err(|e| parse_err("service-node-port-range", e))?;
        }
        o.anonymous_auth = cl.bool("anonymous-auth").unwrap_or(true);
        o.token_auth_file = path("token-auth-file");
        let mut enable = cl.list("admission-control");
        enable.extend(cl.list("enable-admission-plugins"));
        o.enable_admission_plugins = enable;
        o.disable_admission_plugins = cl.list("disable-admission-plugins");
        o.allow_privileged = cl.bool("allow-privileged").unwrap_or(false);
        // An empty --authorization-mode is AlwaysAllow upstream (its Complete()).
        let modes = cl.list("authorization-mode");
        o.authorization_mode = if modes.is_empty() {
            vec!["AlwaysAllow".into()]
        } else {
            modes
        };
        for (name, field) in [
            ("max-requests-inflight", &mut o.max_requests_inflight),
            (
                "max-mutating-requests-inflight",
                &mut o.max_mutating_requests_inflight,
            ),
        ] {
            if let Some(v) = cl.get(name) {
                *field = v
                    .parse()
                    .map_err(|_| parse_err(name, format!("{v} is not a count")))?;
            }
        }
        // kube-apiserver's default is 0: 100 streams.
        o.http2_max_streams_per_connection = match cl.get("http2-max-streams-per-connection") {
            Some(v) => v.parse().map_err(|_| {
                parse_err(
                    "http2-max-streams-per-connection",
                    format!("{v} is not a count"),
                )
            })?,
            None => 0,
        };
        if let Some(v) = cl.get("min-request-timeout") {
            o.min_request_timeout = v
                .parse()
                .map_err(|_| parse_err("min-request-timeout", format!("{v} is not a count")))?;
        }
        if let Some(v) = cl.bool("enable-priority-and-fairness") {
            o.enable_priority_and_fairness = v;
        }
        if let Some(v) = cl.get("request-timeout") {
            o.request_timeout =
                crate::config::duration::parse(v).map_err(|e| parse_err("request-timeout", e))?;
        }
        if let Some(v) = cl.get("shutdown-delay-duration") {
            o.shutdown_delay_duration = crate::config::duration::parse(v)
                .map_err(|e| parse_err("shutdown-delay-duration", e))?;
        }
        o.audit_policy_file = path("audit-policy-file");
        o.admission_control_config_file = path("admission-control-config-file");
        o.audit_log_path = path("audit-log-path");
        o.audit_webhook_config_file = path("audit-webhook-config-file");
        if let Some(v) = cl.get("audit-webhook-mode") {
            o.audit_webhook_mode = v.into();
        }
        if let Some(v) = cl.get("audit-webhook-version") {
            o.audit_webhook_version = v.into();
        }
        if let Some(v) = cl.get("audit-webhook-batch-max-size") {
            o.audit_webhook_batch_max_size = parse_go_int(v)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    parse_err(
                        "audit-webhook-batch-max-size",
                        format!("{v} is not a count"),
                    )
                })?;
        }
        let duration = |name: &str| {
            cl.get(name)
                .map(|v| crate::config::duration::parse(v).map_err(|e| parse_err(name, e)))
                .transpose()
        };
        if let Some(d) = duration("audit-webhook-batch-max-wait")? {
            o.audit_webhook_batch_max_wait = d;
        }
        // The batch backoff is the deprecated spelling of the same setting.
        for name in [
            "audit-webhook-batch-initial-backoff",
            "audit-webhook-initial-backoff",
        ] {
            if let Some(d) = duration(name)? {
                o.audit_webhook_initial_backoff = d;
            }
        }
        // The first issuer signs; kapi accepts tokens of the first only.
        if let Some(first) = cl.list("service-account-issuer").into_iter().next() {
            o.service_account_issuer = first;
        }
        o.service_account_key_file = cl
            .list("service-account-key-file")
            .into_iter()
            .map(PathBuf::from)
            .collect();
        o.service_account_signing_key_file = path("service-account-signing-key-file");
        o.api_audiences = cl.list("api-audiences");
        // With profiling upstream installs /debug/flags; kapi has no Go
        // profiler, so that is all the flag changes here.
        o.profiling = cl.bool("profiling").unwrap_or(true);
        o.encryption_provider_config = path("encryption-provider-config");
        o.runtime_config = cl.list("runtime-config");
        o.etcd_servers_overrides = cl.list("etcd-servers-overrides");
        o.authorization_webhook_config_file = path("authorization-webhook-config-file");
        o.tls_min_version = cl.get("tls-min-version").unwrap_or_default().into();
        o.tls_cipher_suites = cl.list("tls-cipher-suites");
        if let Some(v) = cl.get("authorization-webhook-version") {
            o.authorization_webhook_version = v.into();
        }
        for (name, field) in [
            (
                "authorization-webhook-cache-authorized-ttl",
                &mut o.authorization_webhook_cache_authorized_ttl,
            ),
            (
                "authorization-webhook-cache-unauthorized-ttl",
                &mut o.authorization_webhook_cache_unauthorized_ttl,
            ),
        ] {
            if let Some(v) = cl.get(name) {
                *field = crate::config::duration::parse(v).map_err(|e| parse_err(name, e))?;
            }
        }
        o.authentication_token_webhook_config_file =
            path("authentication-token-webhook-config-file");
        if let Some(v) = cl.get("authentication-token-webhook-version") {
            o.authentication_token_webhook_version = v.into();
        }
        if let Some(v) = cl.get("authentication-token-webhook-cache-ttl") {
            o.authentication_token_webhook_cache_ttl = crate::config::duration::parse(v)
                .map_err(|e| parse_err("authentication-token-webhook-cache-ttl", e))?;
        }
        o.feature_gates = feature_gates;
        // Each value is one pair (its names are comma separated too).
        o.tls_sni_cert_key = cl
            .values
            .get("tls-sni-cert-key")
            .cloned()
            .unwrap_or_default();
        o.enable_bootstrap_token_auth = cl.bool("enable-bootstrap-token-auth").unwrap_or(false);
        if let Some(v) = cl.bool("watch-cache") {
            o.watch_cache = v;
        }
        if let Some(v) = cl.get("default-watch-cache-size") {
            o.default_watch_cache_size = parse_go_int(v).ok_or_else(|| {
                parse_err("default-watch-cache-size", format!("{v} is not a count"))
            })?;
        }
        o.watch_cache_sizes = cl.list("watch-cache-sizes");
        o.requestheader_client_ca_file = path("requestheader-client-ca-file");
        o.requestheader_allowed_names = cl.list("requestheader-allowed-names");
        o.requestheader_username_headers = cl.list("requestheader-username-headers");
        o.requestheader_uid_headers = cl.list("requestheader-uid-headers");
        o.requestheader_group_headers = cl.list("requestheader-group-headers");
        o.requestheader_extra_headers_prefix = cl.list("requestheader-extra-headers-prefix");
        match (
            path("proxy-client-cert-file"),
            path("proxy-client-key-file"),
        ) {
            (Some(c), Some(k)) => {
                o.proxy_client_cert_file = Some(c);
                o.proxy_client_key_file = Some(k);
            }
            (None, None) => {}
            _ => {
                return Err(Refused(
                    "--proxy-client-cert-file and --proxy-client-key-file go together".into(),
                ))
            }
        }
        let verbosity = cl.get("v").and_then(parse_go_int).unwrap_or(0).clamp(0, 10) as u8;
        Ok(Personality {
            serve: o,
            verbosity,
            logging_format,
            write_serving_pair_to,
        })
    }
}

/// Whether a value is the flag's default, as a value of its type.
fn same_as_default(flag: &Flag, value: &str) -> bool {
    let default = flag.default_value();
    match flag.kind {
        "bool" => parse_bool(value) == parse_bool(default).or(Some(false)),
        "int" | "uint" => parse_go_int(value) == parse_go_int(default),
        "duration" => {
            crate::config::duration::parse(value).ok()
                == crate::config::duration::parse(default).ok()
        }
        "strings" | "stringArray" => {
            let want = default.trim_start_matches('[').trim_end_matches(']');
            value.trim() == want || value.is_empty() && want.is_empty()
        }
        _ => value == default || value.is_empty() && (default.is_empty() || default == "[]"),
    }
}

fn shown_default(flag: &Flag) -> String {
    match flag.default_value() {
        "" => "empty".into(),
        d => format!("\"{d}\""),
    }
}

/// `--help`, laid out as kube-apiserver's (cobra's usage, pflag's named
/// sections), each flag described by what kapi does with it.
pub fn help() -> String {
    let mut out = String::from(
        "The Kubernetes API server validates and configures data\n\
         for the api objects which include pods, services, replicationcontrollers, and\n\
         others. The API Server services REST operations and serves as the frontend to the\n\
         cluster's shared state through which all other components interact.\n\
         \n\
         This is kapi in kube-apiserver's place: every flag of kube-apiserver v1.34 is\n\
         accepted; each says below whether kapi honours it, ignores it (and why), or\n\
         accepts only its default.\n\
         \n\
         Usage:\n  kube-apiserver [flags]\n",
    );
    let mut section = "";
    for f in flags().iter().filter(|f| f.visible) {
        if f.section != section {
            section = f.section;
            out.push_str(&format!("\n{section} flags:\n\n"));
        }
        let head = match (f.shorthand, f.kind) {
            (Some(c), "bool") => format!("  -{c}, --{}", f.name),
            (Some(c), kind) => format!("  -{c}, --{} {kind}", f.name),
            (None, "bool") => format!("      --{}", f.name),
            (None, "version") => format!("      --{} version[=true]", f.name),
            (None, kind) => format!("      --{} {kind}", f.name),
        };
        let what = match f.handling() {
            Handling::Honoured => "Honoured as kube-apiserver honours it.".to_string(),
            Handling::NoOp => {
                let why = NO_OPS
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map_or("", |(_, w)| *w);
                format!("Accepted; no effect in kapi ({why}).")
            }
            Handling::DefaultOnly => {
                "Accepted at its default; other values are refused.".to_string()
            }
        };
        let default = match f.default_value() {
            "" | "0" | "0s" | "false" | "<nil>" | "[]" => String::new(),
            d => format!(" (default {d})"),
        };
        out.push_str(&format!("{head:<48} {what}{default}\n"));
    }
    out
}

/// The serving pair kapi made, written where kube-apiserver would have
/// written its self-signed one.
pub fn write_serving_pair(
    cert: &Path,
    key: &Path,
    cert_pem: &str,
    key_pem: &str,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = cert.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(cert, cert_pem)?;
    let mut f = std::fs::OpenOptions::new();
    f.write(true).create(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut f, 0o600);
    f.open(key)?.write_all(key_pem.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<CommandLine, ParseError> {
        CommandLine::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn pflag_syntax() {
        let cl = parse(&[
            "--secure-port=7443",
            "--etcd-servers",
            "http://a:2379,http://b:2379",
            "--allow-privileged",
            "--anonymous-auth=false",
            "-v=4",
            "--service-account-key-file=a.pub",
            "--service-account-key-file",
            "b.pub",
            "--etcd_prefix=/x",
        ])
        .expect("parses");
        assert_eq!(cl.get("secure-port"), Some("7443"));
        assert_eq!(cl.list("etcd-servers"), ["http://a:2379", "http://b:2379"]);
        assert_eq!(cl.bool("allow-privileged"), Some(true));
        assert_eq!(cl.bool("anonymous-auth"), Some(false));
        assert_eq!(cl.get("v"), Some("4"));
        assert_eq!(cl.list("service-account-key-file"), ["a.pub", "b.pub"]);
        assert_eq!(cl.get("etcd-prefix"), Some("/x"));
        assert_eq!(parse(&["-v", "2"]).expect("-v 2").get("v"), Some("2"));
        assert_eq!(parse(&["-v3"]).expect("-v3").get("v"), Some("3"));
    }

    #[test]
    fn pflag_errors() {
        assert_eq!(
            parse(&["--no-such-flag"]).unwrap_err().to_string(),
            "unknown flag: --no-such-flag"
        );
        assert_eq!(
            parse(&["-x"]).unwrap_err().to_string(),
            "unknown shorthand flag: 'x' in -x"
        );
        assert_eq!(
            parse(&["--etcd-servers"]).unwrap_err().to_string(),
            "flag needs an argument: --etcd-servers"
        );
        assert_eq!(
            parse(&["--secure-port=abc"]).unwrap_err().to_string(),
            "invalid argument \"abc\" for \"--secure-port\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax"
        );
        assert_eq!(
            parse(&["serve"]).unwrap_err().to_string(),
            "\"kube-apiserver\" does not take any arguments, got [\"serve\"]"
        );
    }

    #[test]
    fn settings_kapi_lacks_are_refused_unless_at_their_default() {
        let defaults = ServeOptions::defaults();
        let ok =
            parse(&["--etcd-servers=http://127.0.0.1:2379", "--runtime-config="]).expect("parses");
        assert!(Personality::from_command_line(&ok, defaults.clone()).is_ok());
        let refused = parse(&[
            "--etcd-servers=http://127.0.0.1:2379",
            "--authentication-config=authn.yaml",
        ])
        .expect("parses");
        let e = Personality::from_command_line(&refused, defaults.clone()).unwrap_err();
        assert!(e.0.contains("--authentication-config"), "{e}");
        let no_etcd = parse(&["--secure-port=1"]).expect("parses");
        let e = Personality::from_command_line(&no_etcd, defaults).unwrap_err();
        assert_eq!(e.0, "[--etcd-servers must be specified]");
    }

    #[test]
    fn kubeadms_front_proxy_flags_reach_serve_options() {
        let cl = parse(&[
            "--etcd-servers=http://127.0.0.1:2379",
            "--requestheader-client-ca-file=/pki/front-proxy-ca.crt",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-uid-headers=X-Remote-Uid",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--proxy-client-cert-file=/pki/front-proxy-client.crt",
            "--proxy-client-key-file=/pki/front-proxy-client.key",
        ])
        .expect("parses");
        let o = Personality::from_command_line(&cl, ServeOptions::defaults())
            .expect("ok")
            .serve;
        assert_eq!(
            o.requestheader_client_ca_file.as_deref(),
            Some(Path::new("/pki/front-proxy-ca.crt"))
        );
        assert_eq!(o.requestheader_allowed_names, ["front-proxy-client"]);
        assert_eq!(o.requestheader_username_headers, ["X-Remote-User"]);
        assert_eq!(o.requestheader_uid_headers, ["X-Remote-Uid"]);
        assert_eq!(o.requestheader_group_headers, ["X-Remote-Group"]);
        assert_eq!(o.requestheader_extra_headers_prefix, ["X-Remote-Extra-"]);
        assert_eq!(
            o.proxy_client_key_file.as_deref(),
            Some(Path::new("/pki/front-proxy-client.key"))
        );
        let half = parse(&[
            "--etcd-servers=http://127.0.0.1:2379",
            "--proxy-client-cert-file=/pki/front-proxy-client.crt",
        ])
        .expect("parses");
        assert!(Personality::from_command_line(&half, ServeOptions::defaults()).is_err());
    }

    #[test]
    fn http2_streams_default_to_kube_apiservers_hundred() {
        let cl = parse(&["--etcd-servers=http://127.0.0.1:2379"]).expect("parses");
        let p = Personality::from_command_line(&cl, ServeOptions::defaults()).expect("ok");
        assert_eq!(p.serve.http2_max_streams_per_connection, 0);
        let completed = p.serve.complete().expect("completes");
        assert_eq!(completed.http2_max_streams_per_connection, 100);
        let cl = parse(&[
            "--etcd-servers=http://127.0.0.1:2379",
            "--http2-max-streams-per-connection=250",
        ])
        .expect("parses");
        let p = Personality::from_command_line(&cl, ServeOptions::defaults()).expect("ok");
        assert_eq!(p.serve.http2_max_streams_per_connection, 250);
    }

    #[test]
    fn every_flag_is_classified_once() {
        for (name, _) in NO_OPS {
            assert!(
                lookup(name).is_some(),
                "{name} is not a kube-apiserver flag"
            );
            assert!(
                !HONOURED.contains(name),
                "{name} is both honoured and a no-op"
            );
        }
        for name in HONOURED {
            assert!(
                lookup(name).is_some(),
                "{name} is not a kube-apiserver flag"
            );
        }
    }
}
