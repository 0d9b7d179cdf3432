//! Strategies of discovery.k8s.io: EndpointSlice (upstream's
//! pkg/registry/discovery/endpointslice, pkg/apis/discovery/v1/defaults.go
//! and pkg/apis/discovery/validation, as of v1.34).

use std::collections::HashSet;
use std::net::IpAddr;

use serde_json::{json, Value};

use super::helpers::{self, items, s};
use super::storage_kinds::{qualified_name, sem_eq};
use super::strategy::{age_column, name_column, set_default, Column, Strategy};
use super::validation::{self, FieldError};

pub struct EndpointSliceStrategy;

const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

// The printers describe these columns with discovery/v1beta1's field docs.
const ADDRESS_TYPE_DESC: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.";
const PORTS_DESC: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.";
const ENDPOINTS_DESC: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";

/// The printers' listWithMoreString: at most three, then `+ N more...`.
fn list_with_more(all: Vec<String>) -> Value {
    const MAX: usize = 3;
    let shown = all.iter().take(MAX).cloned().collect::<Vec<_>>().join(",");
    if all.len() > MAX {
        json!(format!("{shown} + {} more...", all.len() - MAX))
    } else if shown.is_empty() {
        json!("<unset>")
    } else {
        json!(shown)
    }
}

fn ports_cell(o: &Value) -> Value {
    let ports = items(&o["ports"])
        .iter()
        .map(|p| match (&p["port"], &p["name"]) {
            (Value::Number(n), _) => n.to_string(),
            (_, Value::String(name)) => name.clone(),
            _ => "*".to_string(),
        })
        .collect();
    list_with_more(ports)
}

fn endpoints_cell(o: &Value) -> Value {
    let addrs = items(&o["endpoints"])
        .iter()
        .flat_map(|e| helpers::strings(&e["addresses"]))
        .collect();
    list_with_more(addrs)
}

static ENDPOINT_SLICE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    let col = |name, description, cell| Column {
        name,
        kind: "string",
        format: "",
        description,
        priority: 0,
        cell,
    };
    vec![
        name_column(),
        col("AddressType", ADDRESS_TYPE_DESC, |o| {
            json!(s(o, "addressType"))
        }),
        col("Ports", PORTS_DESC, ports_cell),
        col("Endpoints", ENDPOINTS_DESC, endpoints_cell),
        age_column(),
    ]
});

/// An IP as Go sees it: an IPv4-mapped IPv6 address is an IPv4 one.
fn go_ip(addr: &str) -> Option<IpAddr> {
    helpers::parse_ip(addr).map(|ip| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    })
}

/// upstream's ValidateEndpointIP: addresses that make no sense as endpoints.
fn endpoint_ip(addr: &str, path: &str, errs: &mut Vec<FieldError>) {
    let Some(ip) = go_ip(addr) else {
        errs.push(FieldError::invalid(
            path,
            json!(addr),
            "must be a valid IP address",
        ));
        return;
    };
    let (unspecified, loopback, link_local, ll_multicast) = special_ranges(ip);
    let mut bad = |m: String| errs.push(FieldError::invalid(path, json!(addr), m));
    if unspecified {
        bad(format!("may not be unspecified ({addr})"));
    }
    if loopback {
        bad("may not be in the loopback range (127.0.0.0/8, ::1/128)".into());
    }
    if link_local {
        bad("may not be in the link-local range (169.254.0.0/16, fe80::/10)".into());
    }
    if ll_multicast {
        bad("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)".into());
    }
}

/// Whether `ip` is one upstream's `ValidateNonSpecialIP` refuses in an
/// endpoint: unspecified, loopback, link-local or link-local multicast.
pub fn is_special_ip(ip: IpAddr) -> bool {
    let (a, b, c, d) = special_ranges(ip);
    a || b || c || d
}

/// (unspecified, loopback, link-local, link-local multicast).
fn special_ranges(ip: IpAddr) -> (bool, bool, bool, bool) {
    match ip {
        IpAddr::V4(v) => (
            v.is_unspecified(),
            v.is_loopback(),
            v.is_link_local(),
            v.octets()[..3] == [224, 0, 0],
        ),
        IpAddr::V6(v) => {
            let seg = v.segments();
            (
                v.is_unspecified(),
                v.is_loopback(),
                seg[0] & 0xffc0 == 0xfe80,
                seg[0] & 0xff0f == 0xff02,
            )
        }
    }
}

/// upstream's IsFullyQualifiedDomainName.
fn fqdn(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = validation::dns1123_subdomain(name);
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(path, json!(name), msgs.join(",")));
        return;
    }
    if !name.contains('.') {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "should be a domain with at least two segments separated by dots",
        ));
        return;
    }
    for label in name.split('.') {
        let msgs = validation::dns1123_label(label);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(path, json!(label), msgs.join(",")));
            return;
        }
    }
}

fn validate_address(addr: &str, ty: &str, path: &str, errs: &mut Vec<FieldError>) {
    match ty {
        "IPv4" | "IPv6" => {
            let v4 = ty == "IPv4";
            if go_ip(addr).is_none_or(|ip| ip.is_ipv4() != v4) {
                errs.push(FieldError::invalid(
                    path,
                    json!(addr),
                    format!("must be a valid {ty} address"),
                ));
            }
            endpoint_ip(addr, path, errs);
        }
        "FQDN" => fqdn(addr, path, errs),
        // Unknown types are refused by addressType's own check.
        _ => {}
    }
}

/// One hint list (forZones or forNodes): bounded, unique, valid names.
fn validate_hint_names(list: &Value, path: &str, max: usize, errs: &mut Vec<FieldError>) -> bool {
    let hints = items(list);
    if hints.len() > max {
        errs.push(FieldError::too_many(path, hints.len(), max));
        return false;
    }
    let mut seen = HashSet::new();
    for (i, h) in hints.iter().enumerate() {
        let p = format!("{path}[{i}].name");
        let name = s(h, "name");
        if !seen.insert(name.to_string()) {
            errs.push(FieldError::duplicate(&p, json!(name)));
        }
        let msgs = if path.ends_with("forZones") {
            validation::label_value(name)
        } else {
            validation::dns1123_subdomain(name)
        };
        for m in msgs {
            errs.push(FieldError::invalid(&p, json!(name), m));
        }
    }
    true
}

fn validate_endpoint(ep: &Value, ty: &str, p: &str, errs: &mut Vec<FieldError>) {
    let addresses = helpers::strings(&ep["addresses"]);
    let ap = format!("{p}.addresses");
    if addresses.is_empty() {
        errs.push(FieldError::required(&ap, "must contain at least 1 address"));
    } else if addresses.len() > MAX_ADDRESSES {
        errs.push(FieldError::too_many(&ap, addresses.len(), MAX_ADDRESSES));
    }
    for (j, a) in addresses.iter().enumerate() {
        validate_address(a, ty, &format!("{ap}[{j}]"), errs);
    }
    if let Some(node) = ep["nodeName"].as_str() {
        for m in validation::dns1123_subdomain(node) {
            errs.push(FieldError::invalid(format!("{p}.nodeName"), json!(node), m));
        }
    }
    let tp = format!("{p}.deprecatedTopology");
    if let Some(topo) = ep["deprecatedTopology"].as_object() {
        if topo.len() > MAX_TOPOLOGY_LABELS {
            errs.push(FieldError::too_many(&tp, topo.len(), MAX_TOPOLOGY_LABELS));
        }
    }
    helpers::validate_labels(&ep["deprecatedTopology"], &tp, errs);
    if let Some(h) = ep["hostname"].as_str() {
        for m in validation::dns1123_label(h) {
            errs.push(FieldError::invalid(format!("{p}.hostname"), json!(h), m));
        }
    }
    let hints = &ep["hints"];
    if !hints.is_null() {
        let hp = format!("{p}.hints");
        // Too many of one kind stops the hints' checks, as upstream's early return does.
        if validate_hint_names(
            &hints["forZones"],
            &format!("{hp}.forZones"),
            MAX_ZONE_HINTS,
            errs,
        ) {
            validate_hint_names(
                &hints["forNodes"],
                &format!("{hp}.forNodes"),
                MAX_NODE_HINTS,
                errs,
            );
        }
    }
}

fn validate_ports(ports: &Value, errs: &mut Vec<FieldError>) {
    let ports = items(ports);
    if ports.len() > MAX_PORTS {
        errs.push(FieldError::too_many("ports", ports.len(), MAX_PORTS));
        return;
    }
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = format!("ports[{i}]");
        let name = s(port, "name");
        if !name.is_empty() {
            for m in validation::dns1123_label(name) {
                errs.push(FieldError::invalid(format!("{p}.name"), json!(name), m));
            }
        }
        if !names.insert(name.to_string()) {
            errs.push(FieldError::duplicate(format!("{p}.name"), json!(name)));
        }
        match port["protocol"].as_str() {
            None => errs.push(FieldError::required(format!("{p}.protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                format!("{p}.protocol"),
                json!(proto),
                &PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = port["appProtocol"].as_str() {
            for m in qualified_name(app) {
                errs.push(FieldError::invalid(
                    format!("{p}.appProtocol"),
                    json!(app),
                    m,
                ));
            }
        }
    }
}

/// upstream's ValidateEndpointSlice (without the object metadata).
fn validate_endpoint_slice(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = s(obj, "addressType");
    if ty.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            "addressType",
            json!(ty),
            &ADDRESS_TYPES,
        ));
    }
    let endpoints = items(&obj["endpoints"]);
    if endpoints.len() > MAX_ENDPOINTS {
        errs.push(FieldError::too_many(
            "endpoints",
            endpoints.len(),
            MAX_ENDPOINTS,
        ));
    } else {
        for (i, ep) in endpoints.iter().enumerate() {
            validate_endpoint(ep, ty, &format!("endpoints[{i}]"), &mut errs);
        }
    }
    validate_ports(&obj["ports"], &mut errs);
    errs
}

/// Writes to deprecatedTopology through v1 are dropped; a node name the
/// stored object kept there is carried into nodeName (upstream's dropTopologyOnV1).
fn drop_topology(new: &mut Value, old: Option<&Value>) {
    if let Some(old) = old {
        if sem_eq(&new["endpoints"], &old["endpoints"]) {
            return;
        }
    }
    let prev: HashSet<String> = old
        .map(|o| items(&o["endpoints"]))
        .unwrap_or_default()
        .iter()
        .filter_map(|e| {
            e["deprecatedTopology"][HOSTNAME_LABEL]
                .as_str()
                .map(String::from)
        })
        .filter(|n| !n.is_empty())
        .collect();
    let Some(eps) = new.get_mut("endpoints").and_then(Value::as_array_mut) else {
        return;
    };
    for ep in eps.iter_mut().filter_map(Value::as_object_mut) {
        let host = ep
            .get("deprecatedTopology")
            .and_then(|t| t.get(HOSTNAME_LABEL))
            .and_then(Value::as_str)
            .map(String::from);
        if let Some(host) = host {
            let no_node = ep.get("nodeName").is_none_or(Value::is_null);
            if no_node && prev.contains(&host) && validation::dns1123_subdomain(&host).is_empty() {
                ep.insert("nodeName".into(), json!(host));
            }
        }
        ep.remove("deprecatedTopology");
    }
}

/// Everything but metadata, for the generation's "anything changed".
fn without_meta(o: &Value) -> Value {
    let mut o = o.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("metadata");
    }
    o
}

impl Strategy for EndpointSliceStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) else {
            return;
        };
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "name", json!(""));
            set_default(p, "protocol", json!("TCP"));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        super::meta::meta_mut(obj).insert("generation".into(), json!(1));
        // TopologyAwareHints and PreferSameTrafficDistribution are on in
        // v1.34, so no hints are dropped.
        drop_topology(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_topology(new, Some(old));
    }

    fn generation_changed(&self, new: &Value, old: &Value) -> bool {
        !sem_eq(&without_meta(new), &without_meta(old))
            || !sem_eq(&new["metadata"]["labels"], &old["metadata"]["labels"])
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_endpoint_slice(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_endpoint_slice(new);
        helpers::immutable(
            "addressType",
            &new["addressType"],
            &old["addressType"],
            &mut errs,
        );
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&ENDPOINT_SLICE_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    fn slice() -> Value {
        let mut o = json!({"metadata": {"name": "web-abc", "namespace": "ns", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": {"kubernetes.io/hostname": "node-1"}},
                          {"addresses": ["10.0.0.2", "10.0.0.3"], "hostname": "b"}],
            "ports": [{"port": 80}, {"name": "https", "port": 443, "protocol": "TCP", "appProtocol": "https"}]});
        EndpointSliceStrategy.default(&mut o);
        EndpointSliceStrategy.prepare_for_create(&mut o);
        o
    }

    #[test]
    fn defaults_create_and_cells() {
        let o = slice();
        assert_eq!(
            o["ports"][0],
            json!({"port": 80, "name": "", "protocol": "TCP"})
        );
        assert_eq!(o["metadata"]["generation"], 1);
        // v1 writes to deprecatedTopology are dropped; on create no node name is carried.
        assert!(o["endpoints"][0].get("deprecatedTopology").is_none());
        assert!(o["endpoints"][0].get("nodeName").is_none());
        assert!(EndpointSliceStrategy.validate(&o).is_empty());
        let names: Vec<&str> = ENDPOINT_SLICE_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "AddressType", "Ports", "Endpoints", "Age"]);
        let cells: Vec<Value> = ENDPOINT_SLICE_COLUMNS[..4]
            .iter()
            .map(|c| (c.cell)(&o))
            .collect();
        assert_eq!(
            cells,
            [
                json!("web-abc"),
                json!("IPv4"),
                json!("80,443"),
                json!("10.0.0.1,10.0.0.2,10.0.0.3")
            ]
        );
        let many = json!({"endpoints": [{"addresses": ["1.1.1.1", "1.1.1.2"]}, {"addresses": ["1.1.1.3", "1.1.1.4", "1.1.1.5"]}],
            "ports": [{"name": "a"}, {"port": 1}, {"port": 2}, {"port": 3}]});
        assert_eq!(endpoints_cell(&many), "1.1.1.1,1.1.1.2,1.1.1.3 + 2 more...");
        assert_eq!(ports_cell(&many), "a,1,2 + 1 more...");
        assert_eq!(ports_cell(&json!({"ports": [{}]})), "*");
        assert_eq!(endpoints_cell(&json!({})), "<unset>");
        assert_eq!(ports_cell(&json!({"ports": []})), "<unset>");
    }

    #[test]
    fn validation() {
        let bad = json!({"addressType": "IPv4",
            "endpoints": [
                {"addresses": ["::1", "127.0.0.1", "300.1.1.1"], "nodeName": "Node_1", "hostname": "a.b",
                 "hints": {"forZones": [{"name": "z"}, {"name": "z"}], "forNodes": [{"name": "Bad"}]}},
                {"addresses": []}],
            "ports": [{"name": "http", "protocol": "TCP"}, {"name": "http", "protocol": "ICMP", "appProtocol": "a/b/c"}, {"name": "Bad", "protocol": "UDP"}]});
        let got = fields(&EndpointSliceStrategy.validate(&bad));
        let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            paths,
            [
                "endpoints[0].addresses[0]",
                "endpoints[0].addresses[0]",
                "endpoints[0].addresses[1]",
                "endpoints[0].addresses[2]",
                "endpoints[0].addresses[2]",
                "endpoints[0].nodeName",
                "endpoints[0].hostname",
                "endpoints[0].hints.forZones[1].name",
                "endpoints[0].hints.forNodes[0].name",
                "endpoints[1].addresses",
                "ports[1].name",
                "ports[1].protocol",
                "ports[1].appProtocol",
                "ports[2].name",
            ]
        );
        assert_eq!(
            got[0].1,
            "Invalid value: \"::1\": must be a valid IPv4 address"
        );
        assert_eq!(
            got[1].1,
            "Invalid value: \"::1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
        );
        assert_eq!(
            got[4].1,
            "Invalid value: \"300.1.1.1\": must be a valid IP address"
        );
        assert_eq!(got[7].1, "Duplicate value: \"z\"");
        assert_eq!(got[9].1, "Required value: must contain at least 1 address");
        assert_eq!(got[10].1, "Duplicate value: \"http\"");
        assert_eq!(
            got[11].1,
            "Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
        );
        assert_eq!(
            fields(&EndpointSliceStrategy.validate(&json!({"addressType": "IP"}))),
            [(
                "addressType".into(),
                "Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\"".into()
            )]
        );
        assert_eq!(
            fields(&EndpointSliceStrategy.validate(&json!({})))[0],
            ("addressType".into(), "Required value".into())
        );
        let fq = json!({"addressType": "FQDN", "endpoints": [{"addresses": ["example.com.", "localhost", "Bad.com", ""]}]});
        let got = fields(&EndpointSliceStrategy.validate(&fq));
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], ("endpoints[0].addresses[1]".into(), "Invalid value: \"localhost\": should be a domain with at least two segments separated by dots".into()));
        assert_eq!(
            got[2],
            ("endpoints[0].addresses[3]".into(), "Required value".into())
        );
        let v6 = json!({"addressType": "IPv6", "endpoints": [{"addresses": ["2001:db8::1", "10.0.0.1", "fe80::1"]}]});
        let got = fields(&EndpointSliceStrategy.validate(&v6));
        assert_eq!(
            got.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
            ["endpoints[0].addresses[1]", "endpoints[0].addresses[2]"]
        );
        let many = json!({"addressType": "IPv4", "endpoints": vec![json!({"addresses": ["10.0.0.1"]}); 1001]});
        assert_eq!(
            fields(&EndpointSliceStrategy.validate(&many)),
            [(
                "endpoints".into(),
                "Too many: 1001: must have at most 1000 items".into()
            )]
        );
    }

    #[test]
    fn updates_generation_and_topology() {
        let mut old = slice();
        old["endpoints"][0]["deprecatedTopology"] = json!({"kubernetes.io/hostname": "node-1"});
        let mut same = old.clone();
        EndpointSliceStrategy.prepare_for_update(&mut same, &old);
        assert_eq!(
            same["endpoints"][0]["deprecatedTopology"]["kubernetes.io/hostname"],
            "node-1"
        );
        assert!(!EndpointSliceStrategy.generation_changed(&same, &old));
        let mut new = old.clone();
        new["endpoints"][1]["addresses"] = json!(["10.0.0.9"]);
        assert!(EndpointSliceStrategy.generation_changed(&new, &old));
        EndpointSliceStrategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["endpoints"][0]["nodeName"], "node-1");
        assert!(new["endpoints"][0].get("deprecatedTopology").is_none());
        let mut relabel = old.clone();
        relabel["metadata"]["labels"]["x"] = json!("y");
        assert!(EndpointSliceStrategy.generation_changed(&relabel, &old));
        let mut ty = old.clone();
        ty["addressType"] = json!("IPv6");
        ty["endpoints"] = json!([]);
        assert_eq!(
            fields(&EndpointSliceStrategy.validate_update(&ty, &old)),
            [(
                "addressType".into(),
                "Invalid value: \"IPv6\": field is immutable".into()
            )]
        );
    }
}
