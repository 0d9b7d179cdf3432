//! Endpoints (upstream's pkg/registry/core/endpoint and ValidateEndpoints):
//! the addresses behind a Service. Apart because its address rules (no
//! loopback or link-local, except the apiserver's own `kubernetes` endpoints)
//! and its compact printing are its own.

use serde_json::{json, Value};

use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct EndpointsStrategy;

/// upstream's ValidateNonSpecialIP.
fn non_special_ip(ip: &str, path: &str, errs: &mut Vec<FieldError>) {
    let Some(addr) = kh::parse_ip(ip) else {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "must be a valid IP address",
        ));
        return;
    };
    let (unspecified, loopback, link_local, ll_multicast) = match addr {
        std::net::IpAddr::V4(v) => (
            v.is_unspecified(),
            v.is_loopback(),
            v.is_link_local(),
            v.octets()[..3] == [224, 0, 0],
        ),
        std::net::IpAddr::V6(v) => {
            let seg = v.segments();
            (
                v.is_unspecified(),
                v.is_loopback(),
                seg[0] & 0xffc0 == 0xfe80,
                seg[0] & 0xff0f == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            format!("may not be unspecified ({ip})"),
        ));
    }
    if loopback {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if ll_multicast {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

fn validate_endpoint_address(a: &Value, path: &str, special_ok: bool, errs: &mut Vec<FieldError>) {
    let ip = kh::s(a, "ip");
    if kh::parse_ip(ip).is_none() {
        errs.push(FieldError::invalid(
            format!("{path}.ip"),
            json!(ip),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    if let Some(h) = a["hostname"].as_str().filter(|h| !h.is_empty()) {
        for m in validation::dns1123_label(h) {
            errs.push(FieldError::invalid(format!("{path}.hostname"), json!(h), m));
        }
    }
    if let Some(n) = a["nodeName"].as_str() {
        for m in validation::dns1123_subdomain(n) {
            errs.push(FieldError::invalid(format!("{path}.nodeName"), json!(n), m));
        }
    }
    if !special_ok {
        non_special_ip(ip, &format!("{path}.ip"), errs);
    }
}

fn validate_endpoints(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // kapi's own `default/kubernetes` endpoints carry the advertise address,
    // which is a loopback one when kapi serves on 127.0.0.1.
    let special_ok = crate::registry::meta::namespace(obj) == "default"
        && crate::registry::meta::name(obj) == "kubernetes";
    for (i, ss) in kh::items(&obj["subsets"]).iter().enumerate() {
        let p = format!("subsets[{i}]");
        let (ready, not_ready) = (
            kh::items(&ss["addresses"]),
            kh::items(&ss["notReadyAddresses"]),
        );
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                p.clone(),
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, a) in ready.iter().enumerate() {
            validate_endpoint_address(a, &format!("{p}.addresses[{j}]"), special_ok, &mut errs);
        }
        for (j, a) in not_ready.iter().enumerate() {
            validate_endpoint_address(
                a,
                &format!("{p}.notReadyAddresses[{j}]"),
                special_ok,
                &mut errs,
            );
        }
        let ports = kh::items(&ss["ports"]);
        for (j, port) in ports.iter().enumerate() {
            let pp = format!("{p}.ports[{j}]");
            let name = kh::s(port, "name");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(format!("{pp}.name"), ""));
            } else if !name.is_empty() {
                for m in validation::dns1123_label(name) {
                    errs.push(FieldError::invalid(format!("{pp}.name"), json!(name), m));
                }
            }
            let n = port["port"].as_i64().unwrap_or(0);
            for m in kh::port_num(n) {
                errs.push(FieldError::invalid(format!("{pp}.port"), json!(n), m));
            }
            match kh::s(port, "protocol") {
                "" => errs.push(FieldError::required(format!("{pp}.protocol"), "")),
                "TCP" | "UDP" | "SCTP" => {}
                other => errs.push(FieldError::not_supported(
                    format!("{pp}.protocol"),
                    json!(other),
                    &["SCTP", "TCP", "UDP"],
                )),
            }
            if let Some(ap) = port["appProtocol"].as_str() {
                for m in validation::qualified_name(ap) {
                    errs.push(FieldError::invalid(
                        format!("{pp}.appProtocol"),
                        json!(ap),
                        m,
                    ));
                }
            }
        }
    }
    errs
}

/// upstream's formatEndpoints.
fn endpoints_cell(o: &Value) -> Value {
    let subsets = kh::items(&o["subsets"]);
    if subsets.is_empty() {
        return json!("<none>");
    }
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::<String>::new(), false, 0usize);
    for ss in &subsets {
        let addrs = kh::items(&ss["addresses"]);
        let ports = kh::items(&ss["ports"]);
        if ports.is_empty() {
            count += addrs.len();
            for a in &addrs {
                if list.len() == max {
                    more = true;
                    break;
                }
                list.push(kh::s(a, "ip").to_string());
            }
            continue;
        }
        for port in &ports {
            count += addrs.len();
            for a in &addrs {
                if list.len() == max {
                    more = true;
                    break;
                }
                let ip = kh::s(a, "ip");
                let pn = port["port"].as_i64().unwrap_or(0);
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{pn}")
                } else {
                    format!("{ip}:{pn}")
                });
            }
        }
    }
    let ret = list.join(",");
    json!(if more {
        format!("{ret} + {} more...", count - max)
    } else {
        ret
    })
}

static ENDPOINTS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Endpoints", kind: "string", format: "", description: "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.", priority: 0, cell: endpoints_cell },
        age_column(),
    ]
});

impl Strategy for EndpointsStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) {
            for ss in subsets {
                if let Some(ports) = ss.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        if p.get("protocol")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .is_empty()
                        {
                            p.insert("protocol".into(), json!("TCP"));
                        }
                    }
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_endpoints(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&ENDPOINTS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::msgs;

    #[test]
    fn endpoints() {
        let mut o = json!({"metadata": {"name": "web", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443, "name": "https"}]}]});
        EndpointsStrategy.default(&mut o);
        assert_eq!(o["subsets"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(
            msgs(&EndpointsStrategy.validate(&o)),
            [(
                "subsets[0].ports[0].name".to_string(),
                "Required value".to_string()
            )]
        );
        assert_eq!(
            endpoints_cell(&o),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(endpoints_cell(&json!({})), "<none>");
        let bad = json!({"metadata": {"name": "x", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}, {"ip": "nope"}]}, {}]});
        assert_eq!(
            msgs(&EndpointsStrategy.validate(&bad)),
            [
                ("subsets[0].addresses[0].ip".to_string(), "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)".to_string()),
                ("subsets[0].addresses[1].ip".into(), "Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()),
                ("subsets[0].addresses[1].ip".into(), "Invalid value: \"nope\": must be a valid IP address".into()),
                ("subsets[1]".into(), "Required value: must specify `addresses` or `notReadyAddresses`".into()),
            ]
        );
        let own = json!({"metadata": {"name": "kubernetes", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]});
        assert!(EndpointsStrategy.validate(&own).is_empty());
    }
}
