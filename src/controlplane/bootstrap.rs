//! The bootstrap controller's first duty: the system namespaces exist.

use serde_json::json;

use crate::registry::{Registries, WriteOptions};

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates each system namespace that is missing (an existing one is fine).
pub async fn ensure_system_namespaces(registries: &Registries) -> Result<(), String> {
    let ns = registries
        .get("", "v1", "namespaces")
        .ok_or("namespaces are not served")?;
    for name in SYSTEM_NAMESPACES {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match ns.create("", body, &WriteOptions::default()).await {
            Ok(_) => tracing::debug!(namespace = name, "created system namespace"),
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(format!("creating namespace {name}: {e}")),
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
        "spec": {"clusterIP": ep.service_ip.to_string(), "type": "ClusterIP", "sessionAffinity": "None",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": ep.port}]}
    });
    create_or_replace(registries, "", "services", service, false).await?;
    let endpoints = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": ep.advertise.to_string()}], "ports": [{"name": "https", "port": ep.port, "protocol": "TCP"}]}]
    });
    create_or_replace(registries, "", "endpoints", endpoints, true).await?;
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": family,
        "endpoints": [{"addresses": [ep.advertise.to_string()], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": ep.port, "protocol": "TCP"}]
    });
    create_or_replace(
        registries,
        "discovery.k8s.io",
        "endpointslices",
        slice,
        true,
    )
    .await
}
