//! DenyServiceExternalIPs (plugin/pkg/admission/network/
//! denyserviceexternalips): no Service may gain `spec.externalIPs`, the
//! field that lets any service owner capture traffic to any IP
//! (CVE-2020-8554). Addresses a Service already has may stay.

use super::common::{self, forbidden};
use super::{Attributes, Context, ValidatingPlugin};
use crate::api::ApiError;

pub struct DenyServiceExternalIPs;

fn ips(svc: Option<&serde_json::Value>) -> Vec<String> {
    svc.and_then(|s| s["spec"]["externalIPs"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect()
}

#[async_trait::async_trait]
impl ValidatingPlugin for DenyServiceExternalIPs {
    fn name(&self) -> &'static str {
        "DenyServiceExternalIPs"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !common::is_core(a, "services") || !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let (new, old) = (ips(a.object.as_ref()), ips(a.old_object));
        if new.iter().all(|ip| old.contains(ip)) {
            return Ok(Vec::new());
        }
        Err(forbidden(
            a,
            "Use of external IPs is denied by admission control",
        ))
    }
}
