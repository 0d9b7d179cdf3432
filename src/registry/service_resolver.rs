//! Service references resolved for the webhook client
//! ([`crate::webhook::ServiceResolver`]): a Service's port to the first
//! ready address of its Endpoints.

use futures::future::BoxFuture;
use serde_json::Value;

use super::Registries;

impl crate::webhook::ServiceResolver for Registries {
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<(String, u16), String>> {
        Box::pin(resolve_service(self, namespace, name, port))
    }
}

/// The address a Service's port `port` is served at: the first ready
/// endpoint address, with the endpoint port that the service port targets.
pub async fn resolve_service(
    registries: &Registries,
    namespace: &str,
    name: &str,
    port: u16,
) -> Result<(String, u16), String> {
    let services = registries
        .get("", "v1", "services")
        .ok_or("services are not served")?;
    let svc = services
        .get_object(namespace, name, None)
        .await
        .map_err(|_| format!("service \"{namespace}/{name}\" not found"))?;
    let svc: Value = serde_json::from_slice(&svc).map_err(|e| e.to_string())?;
    let sport = svc["spec"]["ports"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["port"].as_u64() == Some(u64::from(port)))
                .cloned()
        })
        .ok_or_else(|| format!("service \"{namespace}/{name}\" has no port {port}"))?;
    let port_name = sport["name"].as_str().unwrap_or("").to_string();
    if svc["spec"]["type"] == "ExternalName" {
        let host = svc["spec"]["externalName"]
            .as_str()
            .unwrap_or("")
            .to_string();
        return Ok((host, port));
    }
    let endpoints = registries
        .get("", "v1", "endpoints")
        .ok_or("endpoints are not served")?;
    let ep = endpoints
        .get_object(namespace, name, None)
        .await
        .map_err(|_| format!("endpoints for service/{name} in {namespace:?} not found"))?;
    let ep: Value = serde_json::from_slice(&ep).map_err(|e| e.to_string())?;
    for subset in ep["subsets"].as_array().cloned().unwrap_or_default() {
        let Some(addr) = subset["addresses"]
            .as_array()
            .and_then(|a| a.first())
            .and_then(|a| a["ip"].as_str())
            .map(String::from)
        else {
            continue;
        };
        let ports = subset["ports"].as_array().cloned().unwrap_or_default();
        let p = ports
            .iter()
            .find(|p| p["name"].as_str().unwrap_or("") == port_name)
            .or_else(|| (ports.len() == 1).then(|| &ports[0]))
            .and_then(|p| p["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok());
        if let Some(p) = p {
            return Ok((addr, p));
        }
    }
    Err(format!(
        "service \"{namespace}/{name}\" has no ready endpoints for port {port}"
    ))
}
