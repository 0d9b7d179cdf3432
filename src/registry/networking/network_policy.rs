//! NetworkPolicy (upstream's pkg/registry/networking/networkpolicy).

use serde_json::{json, Value};

use crate::registry::helpers::{self, items, port_name, port_num, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct NetworkPolicyStrategy;

fn validate_np_port(p: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(proto) = p["protocol"].as_str() {
        if !["TCP", "UDP", "SCTP"].contains(&proto) {
            errs.push(FieldError::not_supported(
                format!("{path}.protocol"),
                json!(proto),
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end = p["endPort"].as_i64();
    match &p["port"] {
        Value::Number(n) => {
            let port = n.as_i64().unwrap_or(0);
            for m in port_num(port) {
                errs.push(FieldError::invalid(format!("{path}.port"), json!(port), m));
            }
            if let Some(e) = end {
                if e < port {
                    errs.push(FieldError::invalid(
                        format!("{path}.endPort"),
                        json!(port),
                        "must be greater than or equal to `port`",
                    ));
                }
                for m in port_num(e) {
                    errs.push(FieldError::invalid(format!("{path}.endPort"), json!(e), m));
                }
            }
        }
        Value::String(name) => {
            if let Some(e) = end {
                errs.push(FieldError::invalid(
                    format!("{path}.endPort"),
                    json!(e),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for m in port_name(name) {
                errs.push(FieldError::invalid(format!("{path}.port"), json!(name), m));
            }
        }
        _ => {
            if let Some(e) = end {
                errs.push(FieldError::invalid(
                    format!("{path}.endPort"),
                    json!(e),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

fn ip_bits(ip: std::net::IpAddr) -> (u128, u8) {
    match ip {
        std::net::IpAddr::V4(v) => (u32::from(v) as u128, 32),
        std::net::IpAddr::V6(v) => (u128::from(v), 128),
    }
}

/// Whether `inner` is a strict subset of `outer` (upstream's IPBlock except rule).
fn strict_subset(outer: (std::net::IpAddr, u8), inner: (std::net::IpAddr, u8)) -> bool {
    let ((o, olen), (i, ilen)) = (ip_bits(outer.0), ip_bits(inner.0));
    if olen != ilen || outer.1 >= inner.1 {
        return false;
    }
    let shift = olen - outer.1;
    let mask = if shift >= 128 { 0 } else { u128::MAX << shift };
    (o & mask) == (i & mask)
}

fn validate_ip_block(b: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let cidr = s(b, "cidr");
    if cidr.is_empty() {
        errs.push(FieldError::required(format!("{path}.cidr"), ""));
        return;
    }
    let Some(outer) = helpers::parse_cidr(cidr) else {
        errs.push(FieldError::invalid(
            format!("{path}.cidr"),
            json!(cidr),
            CIDR_MSG,
        ));
        return;
    };
    for (i, e) in helpers::strings(&b["except"]).iter().enumerate() {
        let ep = format!("{path}.except[{i}]");
        match helpers::parse_cidr(e) {
            None => errs.push(FieldError::invalid(ep, json!(e), CIDR_MSG)),
            Some(inner) => {
                if !strict_subset(outer, inner) {
                    errs.push(FieldError::invalid(
                        ep,
                        json!(e),
                        "must be a strict subset of `cidr`",
                    ));
                }
            }
        }
    }
}

fn validate_np_peer(p: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let mut n = 0;
    if !p["podSelector"].is_null() {
        n += 1;
        errs.extend(helpers::validate_label_selector(
            &p["podSelector"],
            &format!("{path}.podSelector"),
        ));
    }
    if !p["namespaceSelector"].is_null() {
        n += 1;
        errs.extend(helpers::validate_label_selector(
            &p["namespaceSelector"],
            &format!("{path}.namespaceSelector"),
        ));
    }
    if !p["ipBlock"].is_null() {
        n += 1;
        validate_ip_block(&p["ipBlock"], &format!("{path}.ipBlock"), errs);
    }
    if n == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if n > 1 && !p["ipBlock"].is_null() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
}

fn validate_network_policy_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = helpers::validate_label_selector(&spec["podSelector"], "spec.podSelector");
    for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(&spec[dir]).iter().enumerate() {
            let rp = format!("spec.{dir}[{i}]");
            for (j, port) in items(&rule["ports"]).iter().enumerate() {
                validate_np_port(port, &format!("{rp}.ports[{j}]"), &mut errs);
            }
            for (j, peer) in items(&rule[peers]).iter().enumerate() {
                validate_np_peer(peer, &format!("{rp}.{peers}[{j}]"), &mut errs);
            }
        }
    }
    let types = items(&spec["policyTypes"]);
    if types.len() > 2 {
        errs.push(FieldError::invalid(
            "spec.policyTypes",
            spec["policyTypes"].clone(),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if t != "Ingress" && t != "Egress" {
            errs.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                json!(t),
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

static NETWORK_POLICY_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
            name_column(),
            Column { name: "Pod-Selector", kind: "string", format: "", description: "podSelector selects the pods to which this NetworkPolicy object applies. The array of rules is applied to any pods selected by this field. An empty selector matches all pods in the policy's namespace. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is optional. If it is not specified, it defaults to an empty selector.", priority: 0, cell: |o| json!(helpers::format_label_selector(&o["spec"]["podSelector"])) },
            age_column(),
        ]
});

impl Strategy for NetworkPolicyStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(spec) = helpers::obj_mut(obj, "spec") else {
            return;
        };
        for dir in ["ingress", "egress"] {
            if let Some(rules) = spec.get_mut(dir).and_then(Value::as_array_mut) {
                for r in rules {
                    if let Some(ports) = r.get_mut("ports").and_then(Value::as_array_mut) {
                        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                            set_default(p, "protocol", json!("TCP"));
                        }
                    }
                }
            }
        }
        if spec
            .get("policyTypes")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty())
        {
            let mut types = vec![json!("Ingress")];
            if spec
                .get("egress")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
            {
                types.push(json!("Egress"));
            }
            spec.insert("policyTypes".into(), Value::Array(types));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_network_policy_spec(&obj["spec"])
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NETWORK_POLICY_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_policy_defaults_and_validation() {
        let mut o = json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}});
        NetworkPolicyStrategy.default(&mut o);
        assert_eq!(o["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(o["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
        let mut o2 = json!({"spec": {"podSelector": {"matchLabels": {"app": "db"}}}});
        NetworkPolicyStrategy.default(&mut o2);
        assert_eq!(o2["spec"]["policyTypes"], json!(["Ingress"]));
        assert!(NetworkPolicyStrategy.validate(&o).is_empty());
        assert_eq!((NETWORK_POLICY_COLUMNS[1].cell)(&o), "<none>");
        assert_eq!((NETWORK_POLICY_COLUMNS[1].cell)(&o2), "app=db");

        let bad = json!({"spec": {"podSelector": {}, "policyTypes": ["Sideways"], "ingress": [{
            "ports": [{"port": 70000, "protocol": "ICMP"}, {"port": "http", "endPort": 90}],
            "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}, "podSelector": {}}]}]}});
        let errs = NetworkPolicyStrategy.validate(&bad);
        let got: Vec<(String, String)> = errs
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "spec.ingress[0].ports[0].protocol".into(),
                    "Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\""
                        .into()
                ),
                (
                    "spec.ingress[0].ports[0].port".into(),
                    "Invalid value: 70000: must be between 1 and 65535, inclusive".into()
                ),
                (
                    "spec.ingress[0].ports[1].endPort".into(),
                    "Invalid value: 90: may not be specified when `port` is non-numeric".into()
                ),
                (
                    "spec.ingress[0].from[0]".into(),
                    "Required value: must specify a peer".into()
                ),
                (
                    "spec.ingress[0].from[1].ipBlock.except[0]".into(),
                    "Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`".into()
                ),
                (
                    "spec.ingress[0].from[1]".into(),
                    "Forbidden: may not specify both ipBlock and another peer".into()
                ),
                (
                    "spec.policyTypes[0]".into(),
                    "Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""
                        .into()
                ),
            ]
        );
        assert!(strict_subset(
            helpers::parse_cidr("10.0.0.0/16").unwrap(),
            helpers::parse_cidr("10.0.5.0/24").unwrap()
        ));
    }
}
