//! Strategies of networking.k8s.io's IP address allocation kinds: IPAddress
//! and ServiceCIDR (upstream's pkg/registry/networking/ipaddress and
//! servicecidr, pkg/apis/networking/validation, and apimachinery's strict
//! IsValidIP / IsValidCIDR).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::{json, Value};

use super::helpers::{s, strings};
use super::meta::NameRule;
use super::resource::gojson;
use super::strategy::NAME_DESCRIPTION;
use super::strategy::{age_cell, age_column, name_cell, name_column, Column, Strategy};
use super::validation::{self, FieldError};

const PARENT_REF_DESCRIPTION: &str = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.";
const CIDRS_DESCRIPTION: &str = "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.";
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

/// netutils.IPFamilyOfCIDRString: 4, 6, or 0 when it does not parse.
fn cidr_family(value: &str) -> u8 {
    match parse_cidr(value, false) {
        Some((IpAddr::V4(_), _)) => 4,
        Some((ip, _)) if is_4in6(&ip) => 4,
        Some(_) => 6,
        None => 0,
    }
}

/// Upstream keeps no generation for these kinds.
fn drop_generation(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("generation");
    }
}

// ---- IPAddress ----

pub struct IPAddressStrategy;

/// The internal ParentReference as upstream quotes it (`null` when unset).
fn parent_ref_go(v: &Value) -> String {
    if !has_parent_ref(v) {
        return "null".into();
    }
    gojson::opt_struct(v, |p| {
        gojson::structure(&[
            ("Group", gojson::str_field(&p["group"])),
            ("Resource", gojson::str_field(&p["resource"])),
            ("Namespace", gojson::str_field(&p["namespace"])),
            ("Name", gojson::str_field(&p["name"])),
        ])
    })
}

/// Whether the parent reference is set. The typed decoding fills a missing
/// `parentRef` (a pointer upstream) with empty strings, so an all-empty one
/// counts as unset.
fn has_parent_ref(p: &Value) -> bool {
    p.as_object().is_some_and(|m| {
        m.values()
            .any(|v| v.as_str().is_some_and(|s| !s.is_empty()))
    })
}

fn validate_ip_address(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = super::meta::name(obj);
    if !name.is_empty() {
        for msg in ip_errors(name) {
            errs.push(FieldError::invalid("metadata.name", json!(name), msg));
        }
    }
    let p = &obj["spec"]["parentRef"];
    if !has_parent_ref(p) {
        errs.push(FieldError::required("spec.parentRef", ""));
        return errs;
    }
    let group = s(p, "group");
    if !group.is_empty() {
        for msg in validation::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(
                "spec.parentRef.group",
                json!(group),
                msg,
            ));
        }
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let v = s(p, key);
        let path = format!("spec.parentRef.{key}");
        if v.is_empty() {
            if required {
                errs.push(FieldError::required(path, ""));
            }
            continue;
        }
        for msg in validation::path_segment_name(v) {
            errs.push(FieldError::invalid(path.clone(), json!(v), msg));
        }
    }
    errs
}

fn parent_ref_cell(o: &Value) -> Value {
    let p = &o["spec"]["parentRef"];
    if !has_parent_ref(p) {
        return json!("<none>");
    }
    let (group, resource) = (s(p, "group"), s(p, "resource"));
    let mut out = if group.is_empty() {
        resource.to_lowercase()
    } else {
        format!("{resource}.{group}").to_lowercase()
    };
    let ns = s(p, "namespace");
    if !ns.is_empty() {
        out.push('/');
        out.push_str(ns);
    }
    out.push('/');
    out.push_str(s(p, "name"));
    json!(out)
}

impl Strategy for IPAddressStrategy {
    // The IP checks are this kind's name rule; they run in `validate` (a
    // path segment is the loosest rule the registry knows and accepts every IP).
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_ip_address(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_ip_address(new);
        let (np, op) = (&new["spec"]["parentRef"], &old["spec"]["parentRef"]);
        let norm = |v: &Value| {
            if has_parent_ref(v) {
                v.clone()
            } else {
                Value::Null
            }
        };
        if norm(np) != norm(op) {
            errs.push(super::helpers::invalid_raw(
                "spec.parentRef",
                &parent_ref_go(np),
                IMMUTABLE,
            ));
        }
        errs
    }

    /// Upstream's printer declares two columns but fills three cells (the
    /// age too); kubectl prints the two.
    fn dynamic_columns(&self) -> Option<(Vec<Value>, Box<dyn Fn(&Value) -> Vec<Value> + '_>)> {
        let defs = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
            json!({"name": "ParentRef", "type": "string", "format": "", "description": PARENT_REF_DESCRIPTION, "priority": 0}),
        ];
        Some((
            defs,
            Box::new(|o: &Value| vec![name_cell(o), parent_ref_cell(o), age_cell(o)]),
        ))
    }
}

// ---- ServiceCIDR ----

pub struct ServiceCIDRStrategy;

static SERVICE_CIDR_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "CIDRs",
            kind: "string",
            format: "",
            description: CIDRS_DESCRIPTION,
            priority: 0,
            cell: |o| json!(strings(&o["spec"]["cidrs"]).join(",")),
        },
        age_column(),
    ]
});

/// upstream's validateServiceCIDRSpec at `spec.cidrs`.
fn validate_cidrs(cidrs: &Value) -> Vec<FieldError> {
    let list = strings(cidrs);
    if list.is_empty() {
        return vec![FieldError::required(
            "spec.cidrs",
            "at least one CIDR required",
        )];
    }
    if list.len() > 2 {
        let spec = gojson::structure(&[("CIDRs", gojson::strings(cidrs))]);
        return vec![super::helpers::invalid_raw(
            "spec.cidrs",
            &spec,
            "may only hold up to 2 values",
        )];
    }
    let mut errs = Vec::new();
    for (i, c) in list.iter().enumerate() {
        for msg in cidr_errors(c) {
            errs.push(FieldError::invalid(
                format!("spec.cidrs[{i}]"),
                json!(c),
                msg,
            ));
        }
    }
    if list.len() == 2
        && cidr_family(&list[0]) == cidr_family(&list[1])
        && cidr_family(&list[0]) != 0
    {
        errs.push(super::helpers::invalid_raw(
            "spec.cidrs",
            &gojson::strings(cidrs),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    errs
}

impl Strategy for ServiceCIDRStrategy {
    /// Upstream's PrepareForCreate leaves the status as sent.
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(m) = obj.as_object_mut() {
            if m.get("status").is_none_or(|s| !s.is_object()) {
                m.insert("status".into(), json!({}));
            }
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_cidrs(&obj["spec"]["cidrs"])
    }

    /// upstream's ValidateServiceCIDRUpdate: the CIDRs may only change by
    /// adding a second one (to go dual-stack); nothing else is re-checked.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let (nc, oc) = (
            strings(&new["spec"]["cidrs"]),
            strings(&old["spec"]["cidrs"]),
        );
        let mut errs = Vec::new();
        if nc.len() == oc.len() {
            for (i, o) in oc.iter().enumerate() {
                if &nc[i] != o {
                    errs.push(FieldError::invalid(
                        format!("spec.cidrs[{i}]"),
                        json!(nc[i]),
                        IMMUTABLE,
                    ));
                }
            }
        } else if oc.len() == 1 && nc.len() == 2 {
            if nc[0] != oc[0] {
                errs.push(FieldError::invalid(
                    "spec.cidrs[0]",
                    json!(nc[0]),
                    IMMUTABLE,
                ));
            }
            errs.extend(validate_cidrs(&new["spec"]["cidrs"]));
        } else {
            errs.push(super::helpers::invalid_raw(
                "spec.cidrs",
                &gojson::strings(&new["spec"]["cidrs"]),
                IMMUTABLE,
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SERVICE_CIDR_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

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

    #[test]
    fn ip_address_validation() {
        let ok = json!({"metadata": {"name": "10.0.0.5"}, "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "web"}}});
        assert!(IPAddressStrategy.validate(&ok).is_empty());
        let bad = json!({"metadata": {"name": "10.0.0.05"}, "spec": {"parentRef": {"group": "Bad_Group", "namespace": "a/b"}}});
        let got = msgs(&IPAddressStrategy.validate(&bad));
        assert_eq!(
            got[0],
            (
                "metadata.name".into(),
                "Invalid value: \"10.0.0.05\": must not have leading 0s".into()
            )
        );
        assert_eq!(got[1].0, "spec.parentRef.group");
        assert_eq!(
            got[2],
            ("spec.parentRef.resource".into(), "Required value".into())
        );
        assert_eq!(
            got[3],
            ("spec.parentRef.name".into(), "Required value".into())
        );
        assert_eq!(
            got[4],
            (
                "spec.parentRef.namespace".into(),
                "Invalid value: \"a/b\": may not contain '/'".into()
            )
        );
        let none = json!({"metadata": {"name": "10.0.0.5"}, "spec": {}});
        assert_eq!(
            msgs(&IPAddressStrategy.validate(&none)),
            [("spec.parentRef".into(), "Required value".into())]
        );
        // What the typed decoding makes of a missing parentRef.
        let decoded = json!({"metadata": {"name": "10.0.0.5"}, "spec": {"parentRef": {"name": "", "resource": ""}}});
        assert_eq!(
            msgs(&IPAddressStrategy.validate(&decoded)),
            [("spec.parentRef".into(), "Required value".into())]
        );
        let mut moved = ok.clone();
        moved["spec"]["parentRef"]["name"] = json!("other");
        assert_eq!(
            msgs(&IPAddressStrategy.validate_update(&moved, &ok)),
            [(
                "spec.parentRef".into(),
                "Invalid value: {\"Group\":\"\",\"Resource\":\"services\",\"Namespace\":\"default\",\"Name\":\"other\"}: field is immutable".into()
            )]
        );
        assert_eq!(parent_ref_cell(&ok), "services/default/web");
        let grouped = json!({"spec": {"parentRef": {"group": "Example.com", "resource": "Gateways", "name": "g"}}});
        assert_eq!(parent_ref_cell(&grouped), "gateways.example.com/g");
        assert_eq!(parent_ref_cell(&json!({})), "<none>");
        let mut o = json!({"metadata": {"generation": 1}});
        IPAddressStrategy.prepare_for_create(&mut o);
        assert!(o["metadata"].get("generation").is_none());
    }

    #[test]
    fn service_cidr_validation() {
        let sc = |c: Value| json!({"metadata": {"name": "x"}, "spec": {"cidrs": c}});
        assert!(ServiceCIDRStrategy
            .validate(&sc(json!(["10.0.0.0/24", "fd00::/64"])))
            .is_empty());
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!([])))),
            [(
                "spec.cidrs".into(),
                "Required value: at least one CIDR required".into()
            )]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.0/24", "10.1.0.0/24", "fd00::/64"])))),
            [("spec.cidrs".into(), "Invalid value: {\"CIDRs\":[\"10.0.0.0/24\",\"10.1.0.0/24\",\"fd00::/64\"]}: may only hold up to 2 values".into())]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.0/24", "10.1.0.0/24"])))),
            [("spec.cidrs".into(), "Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64".into())]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.1/24"])))),
            [(
                "spec.cidrs[0]".into(),
                "Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length"
                    .into()
            )]
        );
        let old = sc(json!(["10.0.0.0/24"]));
        assert!(ServiceCIDRStrategy
            .validate_update(&sc(json!(["10.0.0.0/24", "fd00::/64"])), &old)
            .is_empty());
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate_update(&sc(json!(["10.1.0.0/24"])), &old)),
            [(
                "spec.cidrs[0]".into(),
                "Invalid value: \"10.1.0.0/24\": field is immutable".into()
            )]
        );
        assert_eq!(
            msgs(
                &ServiceCIDRStrategy
                    .validate_update(&sc(json!(["10.0.0.0/24", "10.2.0.0/24"])), &old)
            )[0]
            .0,
            "spec.cidrs"
        );
        let two = sc(json!(["10.0.0.0/24", "fd00::/64"]));
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate_update(&old, &two)),
            [(
                "spec.cidrs".into(),
                "Invalid value: [\"10.0.0.0/24\"]: field is immutable".into()
            )]
        );
        assert_eq!(
            (SERVICE_CIDR_COLUMNS[1].cell)(&two),
            "10.0.0.0/24,fd00::/64"
        );
        let mut created =
            json!({"metadata": {"name": "x", "generation": 1}, "spec": {"cidrs": ["10.0.0.0/24"]}});
        ServiceCIDRStrategy.prepare_for_create(&mut created);
        assert_eq!(created["status"], json!({}));
        assert!(created["metadata"].get("generation").is_none());
    }
}
