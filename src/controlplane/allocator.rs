//! ClusterIP and NodePort allocation for Services. Each allocated IP is a
//! networking.k8s.io/v1 IPAddress object named by the address (as upstream
//! allocates since 1.33), and each node port a key under
//! `<prefix>/kapi.io/nodeports/`; creating either fails if it exists, so two
//! kapi instances on one etcd never hand out the same address or port.

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use ipnet::IpNet;
use rand::Rng;
use serde_json::{json, Value};

use crate::api::ApiError;
use crate::registry::validation::FieldError;
use crate::registry::{meta, Registries, WriteOptions};
use crate::storage::store::{Preconditions, StorageError};

/// An inclusive port range such as `30000-32767` (`--service-node-port-range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub size: u16,
}

#[derive(Clone)]
pub struct ServiceAllocator {
    pub cidr: IpNet,
    pub node_ports: PortRange,
    pub registries: Registries,
    pub prefix: String,
}

fn invalid(name: &str, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid(
        "",
        "Service",
        name,
        errs.iter().map(FieldError::to_cause).collect(),
    )
}

fn nth_ip(cidr: &IpNet, n: u128) -> IpAddr {
    match cidr {
        IpNet::V4(v4) => IpAddr::V4(std::net::Ipv4Addr::from(
            u32::from(v4.network()).wrapping_add(n as u32),
        )),
        IpNet::V6(v6) => IpAddr::V6(std::net::Ipv6Addr::from(
            u128::from(v6.network()).wrapping_add(n),
        )),
    }
}

fn range_size(cidr: &IpNet) -> u128 {
    let bits = cidr.max_prefix_len() - cidr.prefix_len();
    if bits >= 127 {
        u128::MAX
    } else {
        1u128 << bits
    }
}

impl ServiceAllocator {
    fn family(&self) -> &'static str {
        if matches!(self.cidr, IpNet::V4(_)) {
            "IPv4"
        } else {
            "IPv6"
        }
    }

    /// Reserves `ip` for the service; false if somebody holds it already.
    async fn claim_ip(&self, ip: IpAddr, namespace: &str, name: &str) -> Result<bool, ApiError> {
        let reg = self
            .registries
            .get("networking.k8s.io", "v1", "ipaddresses")
            .ok_or_else(|| ApiError::internal("IPAddress is not served"))?;
        let body = json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": ip.to_string(), "labels": {"ipaddress.kubernetes.io/ip-family": self.family(), "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}},
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace, "name": name}}
        });
        match reg.create("", body, &WriteOptions::default()).await {
            Ok(_) => Ok(true),
            Err(e) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn release_ip(&self, ip: &str) {
        let key = format!("{}/ipaddresses/{ip}", self.prefix);
        let _ = self
            .registries
            .store()
            .delete(&key, &Preconditions::default(), |_| Ok(()))
            .await;
    }

    async fn claim_port(&self, port: i64, owner: &str) -> Result<bool, ApiError> {
        let key = format!("{}/kapi.io/nodeports/{port}", self.prefix);
        match self
            .registries
            .store()
            .create(&key, Bytes::from(owner.to_string()))
            .await
        {
            Ok(_) => Ok(true),
            Err(StorageError::KeyExists { .. }) => Ok(false),
            Err(e) => Err(ApiError::internal(e.to_string())),
        }
    }

    async fn release_port(&self, port: i64) {
        let key = format!("{}/kapi.io/nodeports/{port}", self.prefix);
        let _ = self
            .registries
            .store()
            .delete(&key, &Preconditions::default(), |_| Ok(()))
            .await;
    }

    /// Fills spec.clusterIP(s) and node ports of a Service being created.
    /// On error nothing stays reserved.
    pub async fn allocate(&self, svc: &mut Value, dry_run: bool) -> Result<(), ApiError> {
        let (namespace, name) = (
            meta::namespace(svc).to_string(),
            meta::name(svc).to_string(),
        );
        let ty = svc["spec"]["type"]
            .as_str()
            .unwrap_or("ClusterIP")
            .to_string();
        let mut claimed_ip: Option<IpAddr> = None;
        if ty != "ExternalName" {
            let asked = svc["spec"]["clusterIP"].as_str().unwrap_or("").to_string();
            let ip = if asked == "None" {
                None
            } else if !asked.is_empty() {
                let ip: IpAddr = asked.parse().map_err(|_| {
                    invalid(
                        &name,
                        vec![FieldError::invalid(
                            "spec.clusterIPs[0]",
                            json!(asked),
                            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                        )],
                    )
                })?;
                if !self.cidr.contains(&ip)
                    || ip == self.cidr.network()
                    || ip == self.cidr.broadcast()
                {
                    return Err(invalid(&name, vec![FieldError::invalid("spec.clusterIPs", json!([asked]), format!("failed to allocate IP {asked}: the provided IP ({asked}) is not in the valid range. The range of valid IPs is {}", self.cidr))]));
                }
                if !dry_run && !self.claim_ip(ip, &namespace, &name).await? {
                    return Err(invalid(
                        &name,
                        vec![FieldError::invalid(
                            "spec.clusterIPs",
                            json!([asked]),
                            format!(
                                "failed to allocate IP {asked}: provided IP is already allocated"
                            ),
                        )],
                    ));
                }
                Some(ip)
            } else {
                // Random addresses above the reserved first one, as upstream's allocator picks.
                let size = range_size(&self.cidr);
                let usable = size.saturating_sub(3).max(1);
                let mut found = None;
                for attempt in 0..(usable.min(4096) as usize + 16) {
                    let n = if attempt < 64 {
                        rand::rng().random_range(0..usable) + 2
                    } else {
                        (attempt as u128 % usable) + 2
                    };
                    let ip = nth_ip(&self.cidr, n);
                    if dry_run || self.claim_ip(ip, &namespace, &name).await? {
                        found = Some(ip);
                        break;
                    }
                }
                let ip = found.ok_or_else(|| {
                    invalid(
                        &name,
                        vec![FieldError::invalid(
                            "spec.clusterIPs",
                            json!([]),
                            format!("failed to allocate IP: range is full ({})", self.cidr),
                        )],
                    )
                })?;
                Some(ip)
            };
            claimed_ip = ip.filter(|_| !dry_run);
            if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
                let ip_s = ip.map_or("None".to_string(), |i| i.to_string());
                spec.insert("clusterIP".into(), json!(ip_s));
                spec.insert("clusterIPs".into(), json!([ip_s]));
                spec.insert("ipFamilies".into(), json!([self.family()]));
                spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
            }
        }
        if ty == "NodePort" || ty == "LoadBalancer" {
            let owner = format!("{namespace}/{name}");
            let mut claimed = Vec::new();
            let ports = svc["spec"]["ports"].as_array().cloned().unwrap_or_default();
            let mut out = Vec::new();
            for (i, mut p) in ports.into_iter().enumerate() {
                let asked = p["nodePort"].as_i64().unwrap_or(0);
                let port = if asked != 0 {
                    let lo = i64::from(self.node_ports.base);
                    let hi = lo + i64::from(self.node_ports.size) - 1;
                    let bad = if !(lo..=hi).contains(&asked) {
                        Some(format!("provided port is not in the valid range. The range of valid ports is {lo}-{hi}"))
                    } else if !dry_run && !self.claim_port(asked, &owner).await? {
                        Some("provided port is already allocated".to_string())
                    } else {
                        None
                    };
                    if let Some(why) = bad {
                        self.rollback(claimed_ip, &claimed).await;
                        return Err(invalid(
                            &name,
                            vec![FieldError::invalid(
                                format!("spec.ports[{i}].nodePort"),
                                json!(asked),
                                why,
                            )],
                        ));
                    }
                    asked
                } else {
                    let mut got = None;
                    for attempt in 0..(self.node_ports.size as usize + 16) {
                        let off = if attempt < 64 {
                            rand::rng().random_range(0..self.node_ports.size)
                        } else {
                            (attempt % self.node_ports.size as usize) as u16
                        };
                        let candidate = i64::from(self.node_ports.base) + i64::from(off);
                        if dry_run || self.claim_port(candidate, &owner).await? {
                            got = Some(candidate);
                            break;
                        }
                    }
                    match got {
                        Some(p) => p,
                        None => {
                            self.rollback(claimed_ip, &claimed).await;
                            return Err(invalid(
                                &name,
                                vec![FieldError::invalid(
                                    format!("spec.ports[{i}].nodePort"),
                                    json!(0),
                                    "range is full",
                                )],
                            ));
                        }
                    }
                };
                if !dry_run {
                    claimed.push(port);
                }
                p["nodePort"] = json!(port);
                out.push(p);
            }
            svc["spec"]["ports"] = Value::Array(out);
        }
        Ok(())
    }

    async fn rollback(&self, ip: Option<IpAddr>, ports: &[i64]) {
        if let Some(ip) = ip {
            self.release_ip(&ip.to_string()).await;
        }
        for p in ports {
            self.release_port(*p).await;
        }
    }

    /// Gives back what a deleted (or failed) Service held.
    pub async fn release(&self, svc: &Value) {
        for ip in svc["spec"]["clusterIPs"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            if let Some(ip) = ip.as_str().filter(|s| *s != "None" && !s.is_empty()) {
                self.release_ip(ip).await;
            }
        }
        for p in svc["spec"]["ports"].as_array().cloned().unwrap_or_default() {
            if let Some(port) = p["nodePort"].as_i64().filter(|n| *n > 0) {
                self.release_port(port).await;
            }
        }
    }
}

/// Shared by the registry: which kinds have allocation.
pub type SharedAllocator = Arc<ServiceAllocator>;

#[async_trait::async_trait]
impl crate::registry::Allocator for ServiceAllocator {
    async fn allocate(&self, obj: &mut Value, dry_run: bool) -> Result<(), ApiError> {
        ServiceAllocator::allocate(self, obj, dry_run).await
    }

    async fn release(&self, obj: &Value) {
        ServiceAllocator::release(self, obj).await
    }
}
