//! Node (upstream's pkg/registry/core/node and ValidateNode*). Apart because
//! nodes are written by kubelets, not people: they register with their status,
//! and their podCIDRs and taints have their own update rules and printing.

use serde_json::{json, Value};

use super::{obj_mut, resource_quantity_value};
use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct NodeStrategy;

fn node_status_cell(o: &Value) -> Value {
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = kh::items(&o["status"]["conditions"])
        .iter()
        .rev()
        .find(|c| kh::s(c, "type") == "Ready")
    {
        status.push(if kh::s(c, "status") == "True" {
            "Ready".into()
        } else {
            "NotReady".into()
        });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if o["spec"]["unschedulable"].as_bool() == Some(true) {
        status.push("SchedulingDisabled".into());
    }
    json!(status.join(","))
}

fn node_roles_cell(o: &Value) -> Value {
    let mut roles: Vec<String> = Vec::new();
    if let Some(labels) = o["metadata"]["labels"].as_object() {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.push(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
                    roles.push(v.to_string());
                }
            }
        }
    }
    roles.sort();
    roles.dedup();
    kh::or_none(&roles.join(","))
}

fn node_address(o: &Value, ty: &str) -> Value {
    json!(kh::items(&o["status"]["addresses"])
        .iter()
        .find(|a| kh::s(a, "type") == ty)
        .map(|a| kh::s(a, "address").to_string())
        .unwrap_or_else(|| "<none>".into()))
}

fn node_info(o: &Value, key: &str) -> Value {
    json!(o["status"]["nodeInfo"][key]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<unknown>"))
}

static NODE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Status", kind: "string", format: "", description: "The status of the node", priority: 0, cell: node_status_cell },
        Column { name: "Roles", kind: "string", format: "", description: "The roles of the node", priority: 0, cell: node_roles_cell },
        age_column(),
        Column { name: "Version", kind: "string", format: "", description: "Kubelet Version reported by the node.", priority: 0, cell: |o| json!(kh::s(&o["status"]["nodeInfo"], "kubeletVersion")) },
        Column { name: "Internal-IP", kind: "string", format: "", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", priority: 1, cell: |o| node_address(o, "InternalIP") },
        Column { name: "External-IP", kind: "string", format: "", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", priority: 1, cell: |o| node_address(o, "ExternalIP") },
        Column { name: "OS-Image", kind: "string", format: "", description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", priority: 1, cell: |o| node_info(o, "osImage") },
        Column { name: "Kernel-Version", kind: "string", format: "", description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority: 1, cell: |o| node_info(o, "kernelVersion") },
        Column { name: "Container-Runtime", kind: "string", format: "", description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", priority: 1, cell: |o| node_info(o, "containerRuntimeVersion") },
    ]
});

/// upstream's validateNodeTaints (reported under metadata.taints, as upstream does).
fn validate_node_taints(taints: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, t) in kh::items(taints).iter().enumerate() {
        let p = format!("metadata.taints[{i}]");
        let key = kh::s(t, "key");
        kh::label_name(key, &format!("{p}.key"), errs);
        let value = kh::s(t, "value");
        let msgs = validation::label_value(value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.value"),
                json!(value),
                msgs.join(";"),
            ));
        }
        let effect = kh::s(t, "effect");
        match effect {
            "" => errs.push(FieldError::required(format!("{p}.effect"), "")),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => {}
            other => errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                json!(other),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
        }
        let k = (effect.to_string(), key.to_string());
        if seen.contains(&k) {
            errs.push(FieldError {
                kind: validation::ErrorType::Duplicate,
                field: p,
                value: Some(t.clone()),
                detail: "taints must be unique by key and effect pair".into(),
            });
            continue;
        }
        seen.push(k);
    }
}

fn validate_node(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_node_taints(&obj["spec"]["taints"], &mut errs);
    for key in ["capacity", "allocatable"] {
        if let Some(m) = obj["status"][key].as_object() {
            for (r, q) in m {
                resource_quantity_value(r, q, &format!("status.{key}.{r}"), &mut errs);
            }
        }
    }
    let cidrs = kh::strings(&obj["spec"]["podCIDRs"]);
    for (i, c) in cidrs.iter().enumerate() {
        if kh::parse_cidr(c).is_none() {
            errs.push(FieldError::invalid(
                format!("spec.podCIDRs[{i}]"),
                json!(c),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    if cidrs.len() > 1 {
        let fams: Vec<bool> = cidrs
            .iter()
            .filter_map(|c| kh::parse_cidr(c))
            .map(|(ip, _)| ip.is_ipv4())
            .collect();
        let dual = fams.len() == 2 && fams[0] != fams[1];
        if !dual || cidrs.len() > 2 {
            errs.push(FieldError::invalid(
                "spec.podCIDRs",
                obj["spec"]["podCIDRs"].clone(),
                "may specify no more than one CIDR for each IP family",
            ));
        }
    }
    errs
}

impl Strategy for NodeStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        // NodeStatus's daemonEndpoints and nodeInfo are Go structs, always
        // written (kubelets and clients compare whole nodes).
        if let (Some(m), Some(zero)) = (
            obj.as_object_mut(),
            crate::api::protobuf::zero_status("v1", "Node"),
        ) {
            let status = m.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut() {
                crate::registry::strategy::fill_go_zero(status, &zero);
            }
        }
        if let Some(status) = obj_mut(obj, "status") {
            if status.get("allocatable").is_none_or(Value::is_null) {
                if let Some(cap) = status.get("capacity").filter(|c| c.is_object()).cloned() {
                    status.insert("allocatable".into(), cap);
                }
            }
        }
    }

    /// Kubelets register with their status: upstream keeps it on create.
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_node(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for key in ["capacity", "allocatable"] {
            if let Some(m) = new["status"][key].as_object() {
                for (r, q) in m {
                    resource_quantity_value(r, q, &format!("status.{key}.{r}"), &mut errs);
                }
            }
        }
        let mut seen = Vec::new();
        for (i, a) in kh::items(&new["status"]["addresses"]).iter().enumerate() {
            if seen.contains(a) {
                errs.push(FieldError::duplicate(
                    format!("status.addresses[{i}]"),
                    a.clone(),
                ));
            }
            seen.push(a.clone());
        }
        let (ocidrs, ncidrs) = (
            kh::strings(&old["spec"]["podCIDRs"]),
            kh::strings(&new["spec"]["podCIDRs"]),
        );
        const CIDR_MSG: &str = "node updates may not change podCIDR except from \"\" to valid";
        if !ocidrs.is_empty() {
            if ocidrs.len() != ncidrs.len() {
                errs.push(FieldError::forbidden("spec.podCIDRs", CIDR_MSG));
            } else {
                for (i, (o, n)) in ocidrs.iter().zip(&ncidrs).enumerate() {
                    if o != n {
                        errs.push(FieldError::forbidden(
                            format!("spec.podCIDRs[{i}]"),
                            CIDR_MSG,
                        ));
                    }
                }
            }
        }
        let oid = kh::s(&old["spec"], "providerID");
        if !oid.is_empty() && oid != kh::s(&new["spec"], "providerID") {
            errs.push(FieldError::forbidden(
                "spec.providerID",
                "node updates may not change providerID except from \"\" to valid",
            ));
        }
        validate_node_taints(&new["spec"]["taints"], &mut errs);
        if new["spec"]["externalID"] != old["spec"]["externalID"] {
            errs.push(FieldError::forbidden(
                "spec.externalID",
                "may not be updated",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NODE_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    fn node() -> Value {
        json!({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"podCIDRs": ["10.244.0.0/24"]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://2.0", "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}})
    }

    #[test]
    fn node_keeps_status_and_prints() {
        let mut o = node();
        NodeStrategy.default(&mut o);
        assert!(NodeStrategy.keeps_status_on_create());
        NodeStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"]["allocatable"], o["status"]["capacity"]);
        assert!(NodeStrategy.validate(&o).is_empty());
        let c = cells(&NODE_COLUMNS, &o);
        assert_eq!(c[1], "Ready");
        assert_eq!(c[2], "control-plane,worker");
        assert_eq!(c[4], "v1.34.0");
        assert_eq!(c[5], "10.0.0.5");
        assert_eq!(c[6], "<none>");
        assert_eq!(c[9], "containerd://2.0");
        o["spec"]["unschedulable"] = json!(true);
        o["status"]["conditions"][0]["status"] = json!("Unknown");
        assert_eq!(node_status_cell(&o), "NotReady,SchedulingDisabled");
        assert_eq!(node_status_cell(&json!({})), "Unknown");
        assert_eq!(node_roles_cell(&json!({})), "<none>");
        assert_eq!(node_info(&json!({}), "osImage"), "<unknown>");

        let mut upd = o.clone();
        NodeStrategy.default(&mut upd);
        NodeStrategy.prepare_for_update(&mut upd, &o);
        upd["spec"]["podCIDRs"] = json!(["10.244.1.0/24"]);
        upd["spec"]["taints"] = json!([{"key": "a", "effect": "Sometimes"}]);
        assert_eq!(
            msgs(&NodeStrategy.validate_update(&upd, &o)),
            [
                ("spec.podCIDRs[0]".to_string(), "Forbidden: node updates may not change podCIDR except from \"\" to valid".to_string()),
                ("metadata.taints[0].effect".into(), "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"".into()),
            ]
        );
    }
}
