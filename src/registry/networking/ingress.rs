//! Ingress (upstream's pkg/registry/networking/ingress).

use serde_json::{json, Value};

use super::validate_typed_local_ref;

use crate::registry::helpers::{self, invalid_raw, items, port_name, port_num, s};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

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
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

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
}
