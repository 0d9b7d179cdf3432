//! LimitPodHardAntiAffinityTopology (plugin/pkg/admission/antiaffinity):
//! required pod anti-affinity may only spread over hosts.

use super::common::{self, forbidden_for};
use super::{Attributes, Context, ValidatingPlugin};
use crate::api::ApiError;

const HOSTNAME: &str = "kubernetes.io/hostname";

pub struct LimitPodHardAntiAffinityTopology;

#[async_trait::async_trait]
impl ValidatingPlugin for LimitPodHardAntiAffinityTopology {
    fn name(&self) -> &'static str {
        "LimitPodHardAntiAffinityTopology"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !common::is_core(a, "pods") || !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let terms = &pod["spec"]["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"];
        for term in terms.as_array().into_iter().flatten() {
            let key = term["topologyKey"].as_str().unwrap_or("");
            if key != HOSTNAME {
                let name = pod["metadata"]["name"].as_str().unwrap_or("");
                return Err(forbidden_for(
                    "",
                    "pods",
                    name,
                    format!("affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} but only key {HOSTNAME} is allowed"),
                ));
            }
        }
        Ok(Vec::new())
    }
}
