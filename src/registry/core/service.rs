//! Service (upstream's pkg/registry/core/service): the strategy, validation
//! and table of the object; a Service is a kind of its own, with its own
//! defaulting and update rules, so it is found here by name.

use serde_json::{json, Value};

use super::obj_mut;
use crate::registry::meta::NameRule;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct ServiceStrategy;

fn service_ports(o: &Value) -> Value {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let proto = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64() {
                        Some(np) if np > 0 => format!("{}:{np}/{proto}", p["port"]),
                        _ => format!("{}/{proto}", p["port"]),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Value::String(if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    })
}

static SERVICE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "type determines how the Service is exposed.", priority: 0, cell: |o| o["spec"]["type"].clone() },
        Column { name: "Cluster-IP", kind: "string", format: "", description: "clusterIP is the IP address of the service and is usually assigned randomly.", priority: 0, cell: |o| json!(o["spec"]["clusterIP"].as_str().filter(|s| !s.is_empty()).unwrap_or("<none>")) },
        Column {
            name: "External-IP",
            kind: "string",
            format: "",
            description: "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            priority: 0,
            cell: |o| {
                let ips: Vec<String> = o["spec"]["externalIPs"].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default();
                if !ips.is_empty() {
                    return json!(ips.join(","));
                }
                match o["spec"]["type"].as_str() {
                    Some("LoadBalancer") => json!("<pending>"),
                    Some("ExternalName") => o["spec"]["externalName"].clone(),
                    _ => json!("<none>"),
                }
            },
        },
        Column { name: "Port(s)", kind: "string", format: "", description: "The list of ports that are exposed by this service.", priority: 0, cell: service_ports },
        age_column(),
        Column {
            name: "Selector",
            kind: "string",
            format: "",
            description: "Route service traffic to pods with label keys and values matching this selector.",
            priority: 1,
            cell: |o| {
                let sel: Vec<String> = o["spec"]["selector"].as_object().map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect()).unwrap_or_default();
                json!(if sel.is_empty() { "<none>".to_string() } else { sel.join(",") })
            },
        },
    ]
});

impl Strategy for ServiceStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        set_default(spec, "type", json!("ClusterIP"));
        let ty = spec["type"].as_str().unwrap_or("ClusterIP").to_string();
        if ty != "ExternalName" {
            set_default(spec, "sessionAffinity", json!("None"));
            set_default(spec, "internalTrafficPolicy", json!("Cluster"));
        }
        if ty == "NodePort" || ty == "LoadBalancer" {
            set_default(spec, "externalTrafficPolicy", json!("Cluster"));
        }
        if ty == "LoadBalancer" {
            set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
        }
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                set_default(p, "protocol", json!("TCP"));
                if p.get("targetPort")
                    .is_none_or(|t| t.is_null() || t == &json!(0) || t == &json!(""))
                {
                    let port = p.get("port").cloned().unwrap_or(Value::Null);
                    p.insert("targetPort".into(), port);
                }
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"loadBalancer": {}}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        let ty = spec["type"].as_str().unwrap_or("ClusterIP");
        if !["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"].contains(&ty) {
            errs.push(FieldError::not_supported(
                "spec.type",
                json!(ty),
                &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
            ));
        }
        let headless = spec["clusterIP"].as_str() == Some("None");
        let ports = spec["ports"].as_array().cloned().unwrap_or_default();
        if ports.is_empty() && ty != "ExternalName" && !headless {
            errs.push(FieldError::required("spec.ports", ""));
        }
        if ty == "ExternalName" && spec["externalName"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
        let mut names = std::collections::HashSet::new();
        for (i, p) in ports.iter().enumerate() {
            let path = format!("spec.ports[{i}]");
            let name = p["name"].as_str().unwrap_or("");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(format!("{path}.name"), ""));
            }
            if !name.is_empty() {
                for m in validation::dns1123_label(name) {
                    errs.push(FieldError::invalid(format!("{path}.name"), json!(name), m));
                }
                if !names.insert(name.to_string()) {
                    errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
                }
            }
            match p["port"].as_i64() {
                None => errs.push(FieldError::required(format!("{path}.port"), "")),
                Some(n) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                    format!("{path}.port"),
                    json!(n),
                    "must be between 1 and 65535, inclusive",
                )),
                _ => {}
            }
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            if !["TCP", "UDP", "SCTP"].contains(&proto) {
                errs.push(FieldError::not_supported(
                    format!("{path}.protocol"),
                    json!(proto),
                    &["SCTP", "TCP", "UDP"],
                ));
            }
            if let Some(np) = p["nodePort"].as_i64() {
                if np != 0 && ty == "ClusterIP" {
                    errs.push(FieldError::forbidden(
                        format!("{path}.nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    ));
                }
            }
        }
        if let Some(sa) = spec["sessionAffinity"].as_str() {
            if !["None", "ClientIP"].contains(&sa) {
                errs.push(FieldError::not_supported(
                    "spec.sessionAffinity",
                    json!(sa),
                    &["ClientIP", "None"],
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (nip, oip) = (&new["spec"]["clusterIP"], &old["spec"]["clusterIP"]);
        let old_set = oip.as_str().is_some_and(|s| !s.is_empty());
        let changing_type_to_external = new["spec"]["type"].as_str() == Some("ExternalName");
        if old_set && nip != oip && !changing_type_to_external && nip.as_str().unwrap_or("") != "" {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                nip.clone(),
                "may not change once set",
            ));
        }
        errs
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // An update that leaves clusterIP empty keeps the allocated one.
        let old_ip = old["spec"]["clusterIP"].clone();
        let old_ips = old["spec"]["clusterIPs"].clone();
        if let Some(spec) = obj_mut(new, "spec") {
            if spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
                && !old_ip.is_null()
            {
                spec.insert("clusterIP".into(), old_ip);
                if !old_ips.is_null() {
                    spec.insert("clusterIPs".into(), old_ips);
                }
            }
        }
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SERVICE_COLUMNS)
    }
}
