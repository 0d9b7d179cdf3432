//! The proxy subresources' locations: upstream's `SplitSchemeNamePort`
//! and service/pod `ResourceLocation` checks. kapi dials nothing, so each
//! ends in a refusal, but the same one upstream gives first.

use axum::response::Response;
use serde_json::{json, Value};

use super::ResourceHandler;
use crate::api::ApiError;

impl ResourceHandler {
    /// Where `services/{id}/proxy` goes, as upstream's service
    /// ResourceLocation decides: a numbered port must be one of the
    /// Service's, and its Endpoints must exist and hold an address.
    pub(super) async fn service_proxy_location(
        &self,
        ns: &str,
        id: &str,
    ) -> Result<Response, ApiError> {
        let (name, port) = split_scheme_name_port(id)?;
        if let Ok(number) = port.parse::<i64>() {
            let services = self
                .registries
                .get("", "v1", "services")
                .ok_or_else(ApiError::resource_not_found)?;
            let svc: Value = serde_json::from_slice(&services.get_object(ns, name, None).await?)
                .unwrap_or(json!({}));
            let declared = svc["spec"]["ports"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["port"].as_i64() == Some(number)));
            if !declared {
                return Err(ApiError::service_unavailable(format!(
                    "no service port {number} found for service {}",
                    crate::api::go_quote(name)
                )));
            }
        }
        let endpoints = self
            .registries
            .get("", "v1", "endpoints")
            .ok_or_else(ApiError::resource_not_found)?;
        let eps: Value = serde_json::from_slice(&endpoints.get_object(ns, name, None).await?)
            .unwrap_or(json!({}));
        let subsets = eps["subsets"].as_array().cloned().unwrap_or_default();
        let ready = subsets.iter().any(|s| {
            s["addresses"].as_array().is_some_and(|a| !a.is_empty())
                && s["ports"].as_array().is_some_and(|p| !p.is_empty())
        });
        // upstream names the Service when there are no subsets at all, and
        // the whole id when none of them serves the port.
        if !ready {
            let named = if subsets.is_empty() { name } else { id };
            return Err(ApiError::service_unavailable(format!(
                "no endpoints available for service {}",
                crate::api::go_quote(named)
            )));
        }
        Err(ApiError::service_unavailable(format!(
            "kapi does not proxy to services yet: services/{name}/proxy has endpoints, which this server does not dial"
        )))
    }
}

/// upstream's `SplitSchemeNamePort`: `name`, `name:port` or
/// `scheme:name:port` (scheme http or https), as a proxy subresource's id.
pub(super) fn split_scheme_name_port(id: &str) -> Result<(&str, &str), ApiError> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => ("", "", ""),
    };
    if name.is_empty() || !matches!(scheme, "" | "http" | "https") {
        return Err(ApiError::bad_request(format!(
            "invalid request {}",
            crate::api::go_quote(id)
        )));
    }
    Ok((name, port))
}

/// Go's `net.IP.IsGlobalUnicast`: not unspecified, loopback, multicast,
/// link-local or the IPv4 broadcast address.
pub(super) fn is_global_unicast(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}
