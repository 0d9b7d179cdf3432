//! ExtendedResourceToleration (plugin/pkg/admission/
//! extendedresourcetoleration): a pod asking for an extended resource
//! (`example.com/gpu`), on create or update, tolerates the taint of the same name that nodes
//! offering it carry, so such nodes can be kept for such pods.

use serde_json::{json, Value};

use super::common;
use super::tolerations;
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub struct ExtendedResourceToleration;

/// upstream's IsExtendedResourceName: a domain-prefixed name outside
/// `kubernetes.io/`, valid as a quota name too.
fn is_extended(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native
        && !name.starts_with("requests.")
        && crate::registry::validation::qualified_name(&format!("requests.{name}")).is_empty()
}

#[async_trait::async_trait]
impl MutatingPlugin for ExtendedResourceToleration {
    fn name(&self) -> &'static str {
        "ExtendedResourceToleration"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create
            || !common::is_core(a, "pods")
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_mut() else {
            return Ok(Vec::new());
        };
        let mut names: Vec<String> = ["initContainers", "containers"]
            .iter()
            .flat_map(|l| pod["spec"][*l].as_array().into_iter().flatten())
            .flat_map(|c| c["resources"]["requests"].as_object().into_iter().flatten())
            .map(|(k, _)| k.clone())
            .filter(|k| is_extended(k))
            .collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        // upstream's AddOrUpdateTolerationInPod: an identical toleration
        // stays as it is, any other is added; the pod's own are kept.
        let mut tolerations = tolerations::of(&pod["spec"]);
        for n in names {
            let t = json!({"key": n, "operator": "Exists", "effect": "NoSchedule"});
            let same = |have: &Value| {
                have["key"] == t["key"]
                    && have["operator"] == t["operator"]
                    && have["effect"] == t["effect"]
                    && have["value"].as_str().unwrap_or("") == ""
            };
            if !tolerations.iter().any(same) {
                tolerations.push(t);
            }
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("tolerations".into(), Value::Array(tolerations));
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn extended_resource_names() {
        assert!(super::is_extended("example.com/gpu"));
        assert!(!super::is_extended("cpu"));
        assert!(!super::is_extended("kubernetes.io/something"));
        assert!(!super::is_extended("hugepages-2Mi"));
    }
}
