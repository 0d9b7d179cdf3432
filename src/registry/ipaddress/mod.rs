//! Strategies of networking.k8s.io's IP address allocation kinds: IPAddress
//! and ServiceCIDR (upstream's pkg/registry/networking/ipaddress and
//! servicecidr, pkg/apis/networking/validation, and apimachinery's strict
//! IsValidIP / IsValidCIDR).
//!
//! One file per kind, named as upstream's package; this module keeps what
//! both use (Go's IP and CIDR parsing and printing, the strict IP and CIDR
//! checks) and re-exports the strategies, so
//! `registry::ipaddress::IPAddressStrategy` and the like stay the paths
//! callers use.

mod ip_address;
mod service_cidr;

pub use ip_address::IPAddressStrategy;
pub use service_cidr::ServiceCIDRStrategy;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::Value;

const IMMUTABLE: &str = "field is immutable";

// ---- Go's IP parsing and printing ----

/// An IPv4 address of four decimal octets; `strict` refuses leading zeros
/// as netip.ParseAddr does, otherwise they are read as decimal
/// (netutils.ParseIPSloppy).
fn parse_v4(s: &str, strict: bool) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut o = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if strict && p.len() > 1 && p.starts_with('0') {
            return None;
        }
        o[i] = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(o))
}

/// An IPv6 address, an embedded IPv4 tail allowed (with leading zeros
/// unless `strict`); zones are refused as net.ParseIP refuses them.
fn parse_v6(s: &str, strict: bool) -> Option<Ipv6Addr> {
    if s.contains('%') {
        return None;
    }
    if let Some(idx) = s.rfind(':') {
        let tail = &s[idx + 1..];
        if tail.contains('.') {
            let v4 = parse_v4(tail, strict)?;
            let head = format!("{}{}", &s[..=idx], "0:0");
            let mut seg = head.parse::<Ipv6Addr>().ok()?.segments();
            let o = v4.octets();
            seg[6] = u16::from_be_bytes([o[0], o[1]]);
            seg[7] = u16::from_be_bytes([o[2], o[3]]);
            return Some(Ipv6Addr::from(seg));
        }
    }
    s.parse::<Ipv6Addr>().ok()
}

fn parse_ip(s: &str, strict: bool) -> Option<IpAddr> {
    if s.contains(':') {
        parse_v6(s, strict).map(IpAddr::V6)
    } else {
        parse_v4(s, strict).map(IpAddr::V4)
    }
}

fn is_4in6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// net.IP.String(): dotted quad for IPv4 (and IPv4-mapped IPv6), RFC 5952 for IPv6.
fn go_ip_string(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4.to_string();
            }
            let seg = v6.segments();
            // The longest run of two or more zero groups (the first of equals) becomes "::".
            let (mut best, mut best_len, mut i) = (0usize, 0usize, 0usize);
            while i < 8 {
                if seg[i] == 0 {
                    let start = i;
                    while i < 8 && seg[i] == 0 {
                        i += 1;
                    }
                    if i - start > best_len {
                        best = start;
                        best_len = i - start;
                    }
                } else {
                    i += 1;
                }
            }
            let hex = |r: &[u16]| r.iter().map(|g| format!("{g:x}")).collect::<Vec<_>>();
            if best_len < 2 {
                return hex(&seg).join(":");
            }
            format!(
                "{}::{}",
                hex(&seg[..best]).join(":"),
                hex(&seg[best + best_len..]).join(":")
            )
        }
    }
}

/// A CIDR's address and prefix length; `strict` as netip.ParsePrefix (no
/// leading zeros in the address or the length).
fn parse_cidr(s: &str, strict: bool) -> Option<(IpAddr, u8)> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_ip(ip, strict)?;
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if strict && bits.len() > 1 && bits.starts_with('0') {
        return None;
    }
    let n: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (n <= max).then_some((ip, n))
}

fn masked(ip: &IpAddr, bits: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let m = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            IpAddr::V4(Ipv4Addr::from(u32::from(*v4) & m))
        }
        IpAddr::V6(v6) => {
            let m = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits)
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(*v6) & m))
        }
    }
}

/// net.IPNet.String() of a sloppily parsed CIDR: the masked address and the
/// length (an IPv4-mapped address counts its length in IPv4 bits).
fn go_cidr_string(ip: &IpAddr, bits: u8) -> String {
    let m = masked(ip, bits);
    if is_4in6(&m) && bits >= 96 {
        return format!("{}/{}", go_ip_string(&m), bits - 96);
    }
    format!("{}/{}", go_ip_string(&m), bits)
}

/// apimachinery's IsValidIP: the messages, in order.
pub fn ip_errors(value: &str) -> Vec<String> {
    let Some(ip) = parse_ip(value, false) else {
        return vec!["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()];
    };
    let mut errs = Vec::new();
    let strict = parse_ip(value, true);
    if strict.is_none() {
        errs.push("must not have leading 0s".to_string());
    }
    if strict.is_some_and(|a| is_4in6(&a)) {
        errs.push("must not be an IPv4-mapped IPv6 address".into());
    }
    if errs.is_empty() && value != go_ip_string(&ip) {
        errs.push(format!(
            "must be in canonical form (\"{}\")",
            go_ip_string(&ip)
        ));
    }
    errs
}

/// apimachinery's IsValidCIDR: the messages, in order.
pub fn cidr_errors(value: &str) -> Vec<String> {
    let Some((ip, bits)) = parse_cidr(value, false) else {
        return vec!["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)".into()];
    };
    let canonical = go_cidr_string(&ip, bits);
    match parse_cidr(value, true) {
        None => vec!["must not have leading 0s in IP or prefix length".into()],
        Some((a, _)) if is_4in6(&a) => vec!["must not have an IPv4-mapped IPv6 address".into()],
        Some((a, b)) if masked(&a, b) != a => {
            vec!["must not have bits set beyond the prefix length".into()]
        }
        Some(_) if value != canonical => {
            vec![format!("must be in canonical form (\"{canonical}\")")]
        }
        Some(_) => Vec::new(),
    }
}

/// Upstream keeps no generation for these kinds.
fn drop_generation(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("generation");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_validation_matches_apimachinery() {
        assert!(ip_errors("10.0.0.1").is_empty());
        assert!(ip_errors("2001:db8::1").is_empty());
        assert_eq!(
            ip_errors("bad"),
            ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
        );
        assert_eq!(ip_errors("010.0.0.1"), ["must not have leading 0s"]);
        assert_eq!(
            ip_errors("::ffff:1.2.3.4"),
            ["must not be an IPv4-mapped IPv6 address"]
        );
        assert_eq!(
            ip_errors("2001:DB8::1"),
            ["must be in canonical form (\"2001:db8::1\")"]
        );
        assert_eq!(
            ip_errors("2001:db8:0:0:0:0:0:1"),
            ["must be in canonical form (\"2001:db8::1\")"]
        );
        // A single zero group is not compressed (RFC 5952).
        assert!(ip_errors("2001:db8:0:1:1:1:1:1").is_empty());
        assert_eq!(
            go_ip_string(&"1:0:0:2:0:0:0:3".parse().unwrap()),
            "1:0:0:2::3"
        );
        assert_eq!(
            go_ip_string(&"1:0:0:2:0:0:3:4".parse().unwrap()),
            "1::2:0:0:3:4"
        );
        // The allocator names IPAddresses with Rust's Display, which must be canonical.
        for a in [
            "fd00::a",
            "fd00:0:0:1::5",
            "2001:db8:0:1:1:1:1:1",
            "10.96.0.1",
            "::1",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert_eq!(ip.to_string(), go_ip_string(&ip));
            assert!(ip_errors(&ip.to_string()).is_empty(), "{a}");
        }
    }

    #[test]
    fn cidr_validation_matches_apimachinery() {
        assert!(cidr_errors("10.96.0.0/12").is_empty());
        assert!(cidr_errors("fd00::/108").is_empty());
        assert_eq!(
            cidr_errors("10.96.0.0"),
            ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
        );
        assert_eq!(
            cidr_errors("10.96.0.1/12"),
            ["must not have bits set beyond the prefix length"]
        );
        assert_eq!(
            cidr_errors("10.96.0.0/012"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_errors("FD00::/108"),
            ["must be in canonical form (\"fd00::/108\")"]
        );
    }
}
