//! Strategies of networking.k8s.io: Ingress, IngressClass and
//! NetworkPolicy (upstream's pkg/registry/networking,
//! pkg/apis/networking/v1/defaults.go and pkg/apis/networking/validation).

use serde_json::{json, Value};

use super::helpers::{self, invalid_raw, items, port_name, port_num, s};
use super::strategy::{age_column, name_column, set_default, Column, Strategy};
use super::validation::{self, FieldError};

const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

const WILDCARD_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// upstream's IsWildcardDNS1123Subdomain.
fn wildcard_subdomain(h: &str) -> Vec<String> {
    let mut out = Vec::new();
    if h.len() > 253 {
        out.push("must be no more than 253 characters".into());
    }
    let ok = h
        .strip_prefix("*.")
        .is_some_and(|rest| validation::dns1123_subdomain(rest).is_empty());
    if !ok {
        out.push(WILDCARD_MSG.into());
    }
    out
}

// ---- Ingress ----

pub struct IngressStrategy;

#[derive(Default, Clone, Copy)]
struct IngressOpts {
    allow_invalid_secret_name: bool,
    allow_invalid_wildcard_host_rule: bool,
}

fn validate_backend(b: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let has_resource = !b["resource"].is_null();
    let has_service = !b["service"].is_null();
    match (has_resource, has_service) {
        (true, true) => errs.push(FieldError::invalid(
            path,
            json!(""),
            "cannot set both resource and service backends",
        )),
        (true, false) => {
            validate_typed_local_ref(&b["resource"], &format!("{path}.resource"), errs)
        }
        (false, true) => {
            let svc = &b["service"];
            let name = s(svc, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{path}.service.name"), ""));
            } else {
                for m in validation::dns1035_label(name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.service.name"),
                        json!(name),
                        m,
                    ));
                }
            }
            let pname = s(&svc["port"], "name");
            let pnum = svc["port"]["number"].as_i64().unwrap_or(0);
            if !pname.is_empty() && pnum != 0 {
                errs.push(FieldError::invalid(
                    path,
                    json!(""),
                    "cannot set both port name & port number",
                ));
            } else if !pname.is_empty() {
                for m in port_name(pname) {
                    errs.push(FieldError::invalid(
                        format!("{path}.service.port.name"),
                        json!(pname),
                        m,
                    ));
                }
            } else if pnum != 0 {
                for m in port_num(pnum) {
                    errs.push(FieldError::invalid(
                        format!("{path}.service.port.number"),
                        json!(pnum),
                        m,
                    ));
                }
            } else {
                errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                ));
            }
        }
        (false, false) => errs.push(FieldError::invalid(
            path,
            json!(""),
            "resource or service backend is required",
        )),
    }
}

/// upstream's validateIngressTypedLocalObjectReference.
fn validate_typed_local_ref(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if r.is_null() {
        return;
    }
    if let Some(g) = r["apiGroup"].as_str() {
        for m in validation::dns1123_subdomain(g) {
            errs.push(FieldError::invalid(format!("{path}.apiGroup"), json!(g), m));
        }
    }
    for (key, what) in [("kind", "kind is required"), ("name", "name is required")] {
        let v = s(r, key);
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), what));
        } else {
            for m in validation::path_segment_name(v) {
                errs.push(FieldError::invalid(format!("{path}.{key}"), json!(v), m));
            }
        }
    }
}

fn validate_http_path(p: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(pt) = p["pathType"].as_str() else {
        errs.push(FieldError::required(
            format!("{path}.pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let value = s(p, "path");
    match pt {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    format!("{path}.path"),
                    json!(value),
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(seq) {
                        errs.push(FieldError::invalid(
                            format!("{path}.path"),
                            json!(value),
                            format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        errs.push(FieldError::invalid(
                            format!("{path}.path"),
                            json!(value),
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    format!("{path}.path"),
                    json!(value),
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.pathType"),
            json!(other),
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    validate_backend(&p["backend"], &format!("{path}.backend"), errs);
}

fn validate_rule_value(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if rule["http"].is_null() {
        return;
    }
    let paths = items(&rule["http"]["paths"]);
    if paths.is_empty() {
        errs.push(FieldError::required(format!("{path}.http.paths"), ""));
    }
    for (i, p) in paths.iter().enumerate() {
        validate_http_path(p, &format!("{path}.http.paths[{i}]"), errs);
    }
}

fn validate_ingress_spec(spec: &Value, opts: IngressOpts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = items(&spec["rules"]);
    if rules.is_empty() && spec["defaultBackend"].is_null() {
        let rendered = if spec["rules"].is_array() {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        errs.push(invalid_raw(
            "spec",
            rendered,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if !spec["defaultBackend"].is_null() {
        validate_backend(&spec["defaultBackend"], "spec.defaultBackend", &mut errs);
    }
    for (i, r) in rules.iter().enumerate() {
        let rp = format!("spec.rules[{i}]");
        let host = s(r, "host");
        let mut wildcard = false;
        if !host.is_empty() {
            if helpers::parse_ip(host).is_some() {
                errs.push(FieldError::invalid(
                    format!("{rp}.host"),
                    json!(host),
                    "must be a DNS name, not an IP address",
                ));
            }
            let msgs = if host.contains('*') {
                wildcard = true;
                wildcard_subdomain(host)
            } else {
                validation::dns1123_subdomain(host)
            };
            for m in msgs {
                errs.push(FieldError::invalid(format!("{rp}.host"), json!(host), m));
            }
        }
        if !wildcard || !opts.allow_invalid_wildcard_host_rule {
            validate_rule_value(r, &rp, &mut errs);
        }
    }
    for (t, tls) in items(&spec["tls"]).iter().enumerate() {
        for (i, host) in helpers::strings(&tls["hosts"]).iter().enumerate() {
            let msgs = if host.contains('*') {
                wildcard_subdomain(host)
            } else {
                validation::dns1123_subdomain(host)
            };
            for m in msgs {
                errs.push(FieldError::invalid(
                    format!("spec.tls[{t}].hosts[{i}]"),
                    json!(host),
                    m,
                ));
            }
        }
        let secret = s(tls, "secretName");
        if !opts.allow_invalid_secret_name && !secret.is_empty() {
            for m in validation::dns1123_subdomain(secret) {
                errs.push(FieldError::invalid(
                    format!("spec.tls[{t}].secretName"),
                    json!(secret),
                    m,
                ));
            }
        }
    }
    if let Some(c) = spec["ingressClassName"].as_str() {
        for m in validation::dns1123_subdomain(c) {
            errs.push(FieldError::invalid("spec.ingressClassName", json!(c), m));
        }
    }
    errs
}

/// Hosts as upstream's formatHosts prints them.
fn ingress_hosts(o: &Value) -> Value {
    let rules = items(&o["spec"]["rules"]);
    let max = 3;
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for r in &rules {
        if list.len() == max {
            more = true;
        }
        let h = s(r, "host");
        if !more && !h.is_empty() {
            list.push(h);
        }
    }
    if list.is_empty() {
        return json!("*");
    }
    let ret = list.join(",");
    json!(if more {
        format!("{ret} + {} more...", rules.len() - max)
    } else {
        ret
    })
}

/// The load balancer's IPs or hostnames, sorted and unique (wide, as the server prints).
fn ingress_address(o: &Value) -> Value {
    let mut set: Vec<String> = items(&o["status"]["loadBalancer"]["ingress"])
        .iter()
        .filter_map(|i| {
            let ip = s(i, "ip");
            let host = s(i, "hostname");
            if !ip.is_empty() {
                Some(ip.to_string())
            } else if !host.is_empty() {
                Some(host.to_string())
            } else {
                None
            }
        })
        .collect();
    set.sort();
    set.dedup();
    json!(set.join(","))
}

static INGRESS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Class", kind: "string", format: "", description: "The name of the IngressClass resource that should be used for additional configuration", priority: 0, cell: |o| json!(o["spec"]["ingressClassName"].as_str().unwrap_or("<none>")) },
        Column { name: "Hosts", kind: "string", format: "", description: "Hosts that incoming requests are matched against before the ingress rule", priority: 0, cell: ingress_hosts },
        Column { name: "Address", kind: "string", format: "", description: "Address is a list containing ingress points for the load-balancer", priority: 0, cell: ingress_address },
        Column { name: "Ports", kind: "string", format: "", description: "Ports of TLS configurations that open", priority: 0, cell: |o| json!(if items(&o["spec"]["tls"]).is_empty() { "80" } else { "80, 443" }) },
        age_column(),
    ]
});

fn ingress_opts_from_old(old: &Value) -> IngressOpts {
    let allow_invalid_secret_name = items(&old["spec"]["tls"]).iter().any(|t| {
        let n = s(t, "secretName");
        !n.is_empty() && !validation::dns1123_subdomain(n).is_empty()
    });
    let allow_invalid_wildcard_host_rule = items(&old["spec"]["rules"]).iter().any(|r| {
        let mut e = Vec::new();
        validate_rule_value(r, "", &mut e);
        s(r, "host").contains('*') && !e.is_empty()
    });
    IngressOpts {
        allow_invalid_secret_name,
        allow_invalid_wildcard_host_rule,
    }
}

impl Strategy for IngressStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"loadBalancer": {}}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_ingress_spec(&obj["spec"], IngressOpts::default());
        let ann = &obj["metadata"]["annotations"][INGRESS_CLASS_ANNOTATION];
        if let (Some(a), Some(c)) = (ann.as_str(), obj["spec"]["ingressClassName"].as_str()) {
            if a != c {
                errs.push(FieldError::invalid(
                    format!("annotations.{INGRESS_CLASS_ANNOTATION}"),
                    json!(a),
                    "must match `ingressClassName` when both are specified",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_ingress_spec(&new["spec"], ingress_opts_from_old(old))
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&INGRESS_COLUMNS)
    }
}

// ---- IngressClass ----

pub struct IngressClassStrategy;

static INGRESS_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Controller",
            kind: "string",
            format: "",
            description: "Controller that is responsible for handling this class",
            priority: 0,
            cell: |o| json!(s(&o["spec"], "controller")),
        },
        Column {
            name: "Parameters",
            kind: "string",
            format: "",
            description: "A reference to a resource with additional parameters",
            priority: 0,
            cell: |o| {
                let p = &o["spec"]["parameters"];
                if p.is_null() {
                    return json!("<none>");
                }
                let mut out = s(p, "kind").to_string();
                if let Some(g) = p["apiGroup"].as_str() {
                    out = format!("{out}.{g}");
                }
                json!(format!("{out}/{}", s(p, "name")))
            },
        },
        age_column(),
    ]
});

fn validate_ingress_class_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let controller = s(spec, "controller");
    if controller.len() > 250 {
        errs.push(FieldError::too_long("spec.controller", 250));
    }
    errs.extend(helpers::domain_prefixed_path("spec.controller", controller));
    let p = &spec["parameters"];
    if !p.is_null() {
        validate_typed_local_ref(p, "spec.parameters", &mut errs);
        match p["scope"].as_str() {
            None => errs.push(FieldError::required("spec.parameters.scope", "")),
            Some(scope @ ("Namespace" | "Cluster")) => {
                if scope == "Namespace" {
                    match p["namespace"].as_str() {
                        None => errs.push(FieldError::required(
                            "spec.parameters.namespace",
                            "`parameters.scope` is set to 'Namespace'",
                        )),
                        Some(ns) => {
                            for m in validation::dns1123_label(ns) {
                                errs.push(FieldError::invalid(
                                    "spec.parameters.namespace",
                                    json!(ns),
                                    m,
                                ));
                            }
                        }
                    }
                } else if !p["namespace"].is_null() {
                    errs.push(FieldError::forbidden(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Cluster'",
                    ));
                }
            }
            Some(other) => errs.push(FieldError::not_supported(
                "spec.parameters.scope",
                json!(other),
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

impl Strategy for IngressClassStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(p) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut("parameters"))
            .and_then(Value::as_object_mut)
        {
            set_default(p, "scope", json!("Cluster"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_ingress_class_spec(&obj["spec"])
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        helpers::immutable(
            "spec.controller",
            &new["spec"]["controller"],
            &old["spec"]["controller"],
            &mut errs,
        );
        errs.extend(validate_ingress_class_spec(&new["spec"]));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&INGRESS_CLASS_COLUMNS)
    }
}

// ---- NetworkPolicy ----

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

    fn ingress() -> Value {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"rules": [{"host": "example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}})
    }

    #[test]
    fn ingress_validation() {
        let mut o = ingress();
        IngressStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"], json!({"loadBalancer": {}}));
        assert!(IngressStrategy.validate(&o).is_empty());

        let mut bad = ingress();
        bad["spec"]["rules"][0]["http"]["paths"][0]
            .as_object_mut()
            .unwrap()
            .remove("pathType");
        let errs = IngressStrategy.validate(&bad);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.rules[0].http.paths[0].pathType");
        assert_eq!(
            errs[0].message(),
            "Required value: pathType must be specified"
        );

        let errs = IngressStrategy.validate(&json!({"spec": {}}));
        assert_eq!(errs[0].field, "spec");
        assert_eq!(errs[0].message(), "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified");

        let mut bad = ingress();
        bad["spec"]["rules"][0]["host"] = json!("1.2.3.4");
        bad["spec"]["rules"][0]["http"]["paths"][0]["path"] = json!("/a//b");
        bad["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] = json!({});
        bad["spec"]["tls"] = json!([{"hosts": ["*.bad_host"], "secretName": "Bad"}]);
        let fields: Vec<String> = IngressStrategy
            .validate(&bad)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.rules[0].host",
                "spec.rules[0].http.paths[0].path",
                "spec.rules[0].http.paths[0].backend",
                "spec.tls[0].hosts[0]",
                "spec.tls[0].secretName"
            ]
        );
        let mut bad = ingress();
        bad["metadata"]["annotations"] = json!({"kubernetes.io/ingress.class": "a"});
        bad["spec"]["ingressClassName"] = json!("b");
        let errs = IngressStrategy.validate(&bad);
        assert_eq!(errs[0].field, "annotations.kubernetes.io/ingress.class");
    }

    #[test]
    fn ingress_cells() {
        let mut o = ingress();
        let cells: Vec<Value> = INGRESS_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[1], "<none>");
        assert_eq!(cells[2], "example.com");
        assert_eq!(cells[3], "");
        assert_eq!(cells[4], "80");
        o["spec"]["tls"] = json!([{}]);
        o["spec"]["rules"] =
            json!([{"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}, {}]);
        o["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb"}, {"ip": "10.0.0.2"}]}});
        assert_eq!(ingress_hosts(&o), "a,b,c + 2 more...");
        assert_eq!(ingress_address(&o), "10.0.0.2,lb");
        assert_eq!((INGRESS_COLUMNS[4].cell)(&o), "80, 443");
        assert_eq!(ingress_hosts(&json!({})), "*");
    }

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

    #[test]
    fn ingress_class() {
        let mut o = json!({"spec": {"controller": "example.com/ingress", "parameters": {"kind": "Params", "apiGroup": "k8s.example.com", "name": "p"}}});
        IngressClassStrategy.default(&mut o);
        assert_eq!(o["spec"]["parameters"]["scope"], "Cluster");
        assert!(IngressClassStrategy.validate(&o).is_empty());
        assert_eq!(
            (INGRESS_CLASS_COLUMNS[2].cell)(&o),
            "Params.k8s.example.com/p"
        );
        assert_eq!((INGRESS_CLASS_COLUMNS[2].cell)(&json!({})), "<none>");
        let errs = IngressClassStrategy.validate(&json!({"spec": {"controller": "nginx"}}));
        assert_eq!(errs[0].field, "spec.controller");
        assert_eq!(
            errs[0].message(),
            "Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
        );
        let mut new = o.clone();
        new["spec"]["controller"] = json!("example.com/other");
        let errs = IngressClassStrategy.validate_update(&new, &o);
        assert_eq!(
            errs[0].message(),
            "Invalid value: \"example.com/other\": field is immutable"
        );
    }
}
