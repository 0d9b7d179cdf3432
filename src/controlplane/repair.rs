//! The ClusterIP and NodePort repair loops: every allocation a Service holds
//! is recorded (re-recorded if missing), allocations nobody holds are
//! released after a grace period, and duplicates are reported. Each finding
//! is an Event on the Service, as upstream's repair controllers report them.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::registry::{meta, ListParams, Registries, WriteOptions};
use crate::storage::backend::{prefix_end, RangeRequest};
use crate::storage::store::Preconditions;

/// upstream's repair interval (kube-apiserver's ServiceClusterIPInterval
/// and ServiceNodePortInterval): an audit of every allocation against
/// every Service is a full pass by design, at start and then this often.
/// It is the one periodic list in the control plane, as upstream's is.
const EVERY: Duration = Duration::from_secs(3 * 60);
/// A leak must be seen this many passes in a row before it is released
/// (a create may be between allocating and storing its Service); upstream
/// waits for three.
const LEAK_PASSES: u32 = 3;

pub async fn run(registries: Registries, stop: CancellationToken) {
    let mut suspects: HashMap<String, u32> = HashMap::new();
    loop {
        if let Err(e) = pass(&registries, &mut suspects).await {
            tracing::debug!(error = %e, "service allocation repair pass failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(EVERY) => {}
            _ = stop.cancelled() => return,
        }
    }
}

async fn event(registries: &Registries, svc: &Value, reason: &str, message: String) {
    let Some(events) = registries.get("", "v1", "events") else {
        return;
    };
    let ns = meta::namespace(svc).to_string();
    let now = meta::now_rfc3339();
    let ev = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{}.{:x}", meta::name(svc), rand::random::<u64>()), "namespace": ns},
        "involvedObject": {"apiVersion": "v1", "kind": "Service", "namespace": ns, "name": meta::name(svc), "uid": meta::str_field(svc, "uid")},
        "reason": reason, "message": message, "type": "Warning",
        "source": {"component": "ipallocator-repair-controller"}, "reportingComponent": "ipallocator-repair-controller",
        "firstTimestamp": now, "lastTimestamp": now, "count": 1});
    let _ = events.create(&ns, ev, &WriteOptions::default()).await;
}

async fn pass(registries: &Registries, suspects: &mut HashMap<String, u32>) -> Result<(), String> {
    let services = registries
        .get("", "v1", "services")
        .ok_or("services are not served")?;
    let ips = registries
        .get("networking.k8s.io", "v1", "ipaddresses")
        .ok_or("ipaddresses are not served")?;
    let svc_list: Vec<Value> = services
        .list("", &ListParams::default())
        .await
        .map_err(|e| e.to_string())?
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect();
    let ip_list: Vec<Value> = ips
        .list("", &ListParams::default())
        .await
        .map_err(|e| e.to_string())?
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect();
    let ip_owner: BTreeMap<String, (String, String)> = ip_list
        .iter()
        .map(|ip| {
            (
                meta::name(ip).to_string(),
                (
                    ip["spec"]["parentRef"]["namespace"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    ip["spec"]["parentRef"]["name"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                ),
            )
        })
        .collect();
    let prefix = format!("{}/kapi.io/nodeports/", registries.prefix());
    let store = registries.store();
    let ports = store
        .backend()
        .range(RangeRequest {
            start: prefix.clone(),
            end: prefix_end(&prefix),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let port_owner: BTreeMap<i64, String> = ports
        .kvs
        .iter()
        .filter_map(|kv| {
            Some((
                kv.key.strip_prefix(&prefix)?.parse().ok()?,
                String::from_utf8_lossy(&kv.value).into_owned(),
            ))
        })
        .collect();
    let mut held_ips: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut held_ports: BTreeMap<i64, Vec<&Value>> = BTreeMap::new();
    for s in &svc_list {
        for ip in s["spec"]["clusterIPs"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
        {
            if ip != "None" && !ip.is_empty() {
                held_ips.entry(ip).or_default().push(s);
            }
        }
        for p in s["spec"]["ports"].as_array().cloned().unwrap_or_default() {
            if let Some(np) = p["nodePort"].as_i64().filter(|n| *n > 0) {
                held_ports.entry(np).or_default().push(s);
            }
        }
    }
    for (ip, holders) in &held_ips {
        let family = if ip.contains(':') { "IPv6" } else { "IPv4" };
        if holders.len() > 1 {
            for s in holders {
                event(registries, s, "ClusterIPAlreadyAllocated", format!("Cluster IP [{family}]:{ip} was assigned to multiple services; please recreate service")).await;
            }
        }
        let s = holders[0];
        let (ns, name) = (meta::namespace(s), meta::name(s));
        match ip_owner.get(ip) {
            Some((ons, oname)) if ons == ns && oname == name => {}
            Some(_) => event(registries, s, "ClusterIPAlreadyAllocated", format!("Cluster IP [{family}]:{ip} was assigned to multiple services; please recreate service")).await,
            None => {
                event(registries, s, "ClusterIPNotAllocated", format!("Cluster IP [{family}]:{ip} is not allocated; repairing")).await;
                let body = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": ip, "labels": {"ipaddress.kubernetes.io/ip-family": family, "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}},
                    "spec": {"parentRef": {"group": "", "resource": "services", "namespace": ns, "name": name}}});
                let _ = ips.create("", body, &WriteOptions::default()).await;
            }
        }
    }
    for (port, holders) in &held_ports {
        if holders.len() > 1 {
            for s in holders {
                event(
                    registries,
                    s,
                    "PortAlreadyAllocated",
                    format!(
                        "Port {port} was assigned to multiple services; please recreate service"
                    ),
                )
                .await;
            }
        }
        if !port_owner.contains_key(port) {
            let s = holders[0];
            event(
                registries,
                s,
                "PortNotAllocated",
                format!("Port {port} is not allocated; repairing"),
            )
            .await;
            let _ = store
                .create(
                    &format!("{prefix}{port}"),
                    Bytes::from(format!("{}/{}", meta::namespace(s), meta::name(s))),
                )
                .await;
        }
    }
    // Allocations no Service holds: released once seen leaked twice.
    let mut seen = HashMap::new();
    for (ip, (ns, name)) in &ip_owner {
        let held = held_ips.get(ip).is_some_and(|h| {
            h.iter()
                .any(|s| meta::namespace(s) == ns && meta::name(s) == name)
        });
        if !held {
            let key = format!("ip/{ip}");
            let n = suspects.get(&key).copied().unwrap_or(0) + 1;
            if n >= LEAK_PASSES {
                tracing::info!(ip = %ip, "the IP address appears to have leaked: cleaning up");
                let _ = store
                    .delete(
                        &format!("{}/ipaddresses/{ip}", registries.prefix()),
                        &Preconditions::default(),
                        |_| Ok(()),
                    )
                    .await;
            } else {
                seen.insert(key, n);
            }
        }
    }
    for port in port_owner.keys() {
        if !held_ports.contains_key(port) {
            let key = format!("port/{port}");
            let n = suspects.get(&key).copied().unwrap_or(0) + 1;
            if n >= LEAK_PASSES {
                tracing::info!(port, "the node port appears to have leaked: cleaning up");
                let _ = store
                    .delete(
                        &format!("{prefix}{port}"),
                        &Preconditions::default(),
                        |_| Ok(()),
                    )
                    .await;
            } else {
                seen.insert(key, n);
            }
        }
    }
    *suspects = seen;
    Ok(())
}
