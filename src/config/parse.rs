//! Flag value parsers: the `value_parser`s of `ServeOptions` and
//! `--etcd-servers-overrides`, with upstream's checks and messages.

use std::time::Duration;

use ipnet::IpNet;

use super::complete::FlagError;
use super::{duration, PortRange};

pub(super) fn parse_storage_media_type(
    s: &str,
) -> Result<crate::storage::codec::MediaType, String> {
    crate::storage::codec::MediaType::parse(s)
}

pub(super) fn parse_port_range(s: &str) -> Result<PortRange, String> {
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

pub(super) fn parse_service_cidr(s: &str) -> Result<IpNet, String> {
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

pub(super) fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration::parse(s)?;
    if d.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(d)
}

/// `group/resource#url;url,...`, checked as upstream's etcd options check it.
pub(super) fn parse_etcd_servers_overrides(
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
