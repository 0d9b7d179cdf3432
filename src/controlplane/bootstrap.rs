//! The bootstrap controller's first duty: the system namespaces exist.

use serde_json::json;

use crate::registry::{Registries, WriteOptions};

pub use crate::registry::core::{ensure_system_namespaces, SYSTEM_NAMESPACES};

/// upstream's scheduling post-start hook: the system PriorityClasses exist
/// (an existing one is left as it is).
pub async fn ensure_system_priority_classes(registries: &Registries) -> Result<(), String> {
    let reg = registries
        .get("scheduling.k8s.io", "v1", "priorityclasses")
        .ok_or("priorityclasses are not served")?;
    for body in crate::admission::priority::system_classes() {
        let name = body["metadata"]["name"].as_str().unwrap_or_default();
        if reg.get_object("", name, None).await.is_ok() {
            continue;
        }
        match reg.create("", body, &WriteOptions::default()).await {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(format!("creating the system PriorityClasses: {e}")),
        }
    }
    Ok(())
}

/// Where this kapi is reached: the `kubernetes` Service's endpoint.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub service_ip: std::net::IpAddr,
    pub advertise: std::net::IpAddr,
    pub port: u16,
}

async fn create_or_replace(
    registries: &Registries,
    group: &str,
    plural: &str,
    body: serde_json::Value,
    replace: bool,
) -> Result<(), String> {
    let (ns, name) = (
        body["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        body["metadata"]["name"].as_str().unwrap_or("").to_string(),
    );
    let reg = registries
        .get(group, "v1", plural)
        .ok_or_else(|| format!("{plural} are not served"))?;
    // Look first: creating would allocate (the Service's IP) before finding it exists.
    let exists = reg.get_object(&ns, &name, None).await.is_ok();
    if exists && !replace {
        return Ok(());
    }
    match reg
        .create(&ns, body.clone(), &WriteOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 && replace => reg
            .update(&ns, &name, body, None, &WriteOptions::default())
            .await
            .map(|_| ())
            .map_err(|e| format!("updating {plural} {name}: {e}")),
        Err(e) if e.code == 409 => Ok(()),
        Err(e) => Err(format!("creating {plural} {name}: {e}")),
    }
}

/// The `kubernetes` Service in `default` (first service IP, port 443 to the
/// secure port, no selector) with its Endpoints and EndpointSlice.
pub async fn ensure_kubernetes_service(
    registries: &Registries,
    ep: Endpoint,
) -> Result<(), String> {
    let family = if ep.advertise.is_ipv4() {
        "IPv4"
    } else {
        "IPv6"
    };
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": ep.service_ip.to_string(), "type": "ClusterIP", "sessionAffinity": "None", "ipFamilyPolicy": "SingleStack",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": ep.port}]}
    });
    let endpoints = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": ep.advertise.to_string()}], "ports": [{"name": "https", "port": ep.port, "protocol": "TCP"}]}]
    });
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": family,
        "endpoints": [{"addresses": [ep.advertise.to_string()], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": ep.port, "protocol": "TCP"}]
    });
    // Independent objects: written side by side, they share commits.
    let slice = async {
        // EndpointSlices may not hold loopback or link-local addresses (as
        // upstream validates them), which a server advertising 127.0.0.1
        // has: the slice is left out, as kube-apiserver leaves it out.
        if crate::registry::discovery::is_special_ip(ep.advertise) {
            tracing::info!(advertise = %ep.advertise, "no EndpointSlice for the kubernetes service: the address is loopback or link-local");
            return Ok(());
        }
        match create_or_replace(
            registries,
            "discovery.k8s.io",
            "endpointslices",
            slice,
            true,
        )
        .await
        {
            Err(e) if e.contains("is invalid") => {
                tracing::info!(advertise = %ep.advertise, "no EndpointSlice for the kubernetes service: {e}");
                Ok(())
            }
            other => other,
        }
    };
    let (service, endpoints, slice) = futures::join!(
        create_or_replace(registries, "", "services", service, false),
        create_or_replace(registries, "", "endpoints", endpoints, true),
        slice,
    );
    service.and(endpoints).and(slice)
}

const IDENTITY_LABEL: &str = "apiserver.kubernetes.io/identity";
const ENDPOINT_ANNOTATION: &str = "kapi.io/advertise";
const LEASE_SECONDS: i64 = 15;
/// Renewal of this instance's lease, a third of its lifetime: a timer by
/// nature (liveness is what it publishes), as upstream's reconciler's
/// EndpointInterval is; it reads the `kubernetes` EndpointSlice and the
/// identity Leases, not lists of user objects.
const RENEW: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps this instance's identity Lease alive and the `kubernetes`
/// Endpoints and EndpointSlice listing every live instance, so a dead
/// instance drops out within a lease period (upstream's lease endpoint reconciler).
pub async fn run_endpoint_reconciler(
    registries: Registries,
    ep: Endpoint,
    identity: String,
    stop: tokio_util::sync::CancellationToken,
) {
    loop {
        if let Err(e) = renew(&registries, &ep, &identity).await {
            tracing::debug!(error = %e, "renewing the apiserver identity lease");
        }
        if let Err(e) = reconcile(&registries, ep).await {
            tracing::debug!(error = %e, "reconciling the kubernetes endpoints");
        }
        tokio::select! {
            _ = tokio::time::sleep(RENEW) => {}
            _ = stop.cancelled() => break,
        }
    }
    // Leave cleanly: drop our lease so the others stop listing us.
    if let Some(leases) = registries.get("coordination.k8s.io", "v1", "leases") {
        let _ = leases
            .delete("kube-system", &identity, &Default::default())
            .await;
        let _ = reconcile(&registries, ep).await;
    }
}

async fn renew(registries: &Registries, ep: &Endpoint, identity: &str) -> Result<(), String> {
    let leases = registries
        .get("coordination.k8s.io", "v1", "leases")
        .ok_or("leases are not served")?;
    let now = chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    let address = format!("{}:{}", ep.advertise, ep.port);
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": identity, "namespace": "kube-system", "labels": {IDENTITY_LABEL: "kube-apiserver"}, "annotations": {ENDPOINT_ANNOTATION: address}},
        "spec": {"holderIdentity": identity, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": now}});
    match leases
        .create("kube-system", lease.clone(), &WriteOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 => leases
            .update(
                "kube-system",
                identity,
                lease,
                None,
                &WriteOptions::default(),
            )
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Endpoints of the live instances, grouped by port.
async fn reconcile(registries: &Registries, ep: Endpoint) -> Result<(), String> {
    let leases = registries
        .get("coordination.k8s.io", "v1", "leases")
        .ok_or("leases are not served")?;
    let params = crate::registry::ListParams {
        label_selector: Some(format!("{IDENTITY_LABEL}=kube-apiserver")),
        ..Default::default()
    };
    let list = leases
        .list("kube-system", &params)
        .await
        .map_err(|e| e.to_string())?;
    let now = chrono::Utc::now();
    let mut by_port: std::collections::BTreeMap<u16, std::collections::BTreeSet<String>> =
        Default::default();
    for item in list.items {
        let l: serde_json::Value = serde_json::from_slice(&item).map_err(|e| e.to_string())?;
        let renewed = l["spec"]["renewTime"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        let secs = l["spec"]["leaseDurationSeconds"]
            .as_i64()
            .unwrap_or(LEASE_SECONDS);
        if renewed
            .is_none_or(|r| now > r.with_timezone(&chrono::Utc) + chrono::Duration::seconds(secs))
        {
            continue;
        }
        let Some((ip, port)) = l["metadata"]["annotations"][ENDPOINT_ANNOTATION]
            .as_str()
            .and_then(|a| a.rsplit_once(':'))
        else {
            continue;
        };
        let Ok(port) = port.parse::<u16>() else {
            continue;
        };
        by_port
            .entry(port)
            .or_default()
            .insert(ip.trim_matches(|c| c == '[' || c == ']').to_string());
    }
    if by_port.is_empty() {
        by_port
            .entry(ep.port)
            .or_default()
            .insert(ep.advertise.to_string());
    }
    let subsets: Vec<serde_json::Value> = by_port
        .iter()
        .map(|(port, ips)| json!({"addresses": ips.iter().map(|ip| json!({"ip": ip})).collect::<Vec<_>>(), "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}))
        .collect();
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": subsets});
    let family = if ep.advertise.is_ipv4() {
        "IPv4"
    } else {
        "IPv6"
    };
    let (first_port, _) = by_port
        .iter()
        .next()
        .map(|(p, i)| (*p, i.clone()))
        .unwrap_or((ep.port, Default::default()));
    let all: std::collections::BTreeSet<String> = by_port.values().flatten().cloned().collect();
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": family,
        "endpoints": all.iter().map(|ip| json!({"addresses": [ip], "conditions": {"ready": true}})).collect::<Vec<_>>(),
        "ports": [{"name": "https", "port": first_port, "protocol": "TCP"}]});
    // A slice of loopback or link-local addresses would be refused.
    let slice_allowed = !all.iter().any(|ip| {
        ip.parse()
            .is_ok_and(crate::registry::discovery::is_special_ip)
    });
    for (group, plural, body) in [
        ("", "endpoints", endpoints),
        ("discovery.k8s.io", "endpointslices", slice),
    ] {
        if plural == "endpointslices" && !slice_allowed {
            continue;
        }
        let reg = registries
            .get(group, "v1", plural)
            .ok_or_else(|| format!("{plural} are not served"))?;
        let current = reg
            .get_object("default", "kubernetes", None)
            .await
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        let differs = current.as_ref().is_none_or(|c| {
            let key = if plural == "endpoints" {
                "subsets"
            } else {
                "endpoints"
            };
            c[key] != body[key] || c["ports"] != body["ports"]
        });
        if differs {
            create_or_replace(registries, group, plural, body, true).await?;
        }
    }
    Ok(())
}
