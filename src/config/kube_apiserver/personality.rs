//! What a kube-apiserver command line asks kapi to do: the flags applied
//! over kube-apiserver's defaults to kapi's serve options, and settings
//! kapi lacks refused unless at their default.

use std::net::IpAddr;
use std::path::PathBuf;

use super::super::ServeOptions;
use super::command_line::{parse_go_int, CommandLine};
use super::flags::{lookup, Flag, Handling};
use crate::component_base::parse_bool;

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
        super::super::feature_gates::check(&feature_gates).map_err(Refused)?;
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
        // kube-apiserver runs none of kube-controller-manager's controllers
        // (its own repair loops stay): envtest has none, and suites written
        // for it count a namespace's ServiceAccounts and ConfigMaps and
        // finalize namespaces themselves; a kubeadm cluster runs its own
        // kube-controller-manager beside it.
        o.controllers = std::iter::once("*".to_string())
            .chain(
                crate::controlplane::manager::CONTROLLERS
                    .iter()
                    .map(|c| format!("-{c}")),
            )
            .collect();
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
            o.service_cluster_ip_range = super::super::parse_service_cidr(v)
                .map_err(|e| parse_err("service-cluster-ip-range", e))?;
        }
        if let Some(v) = cl.get("service-node-port-range") {
            o.service_node_port_range = super::super::parse_port_range(v)
                .map_err(|e| parse_err("service-node-port-range", e))?;
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
