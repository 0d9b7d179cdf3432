//! PodTolerationRestriction (plugin/pkg/admission/podtolerationrestriction):
//! a namespace's `scheduler.alpha.kubernetes.io/defaultTolerations` are
//! merged into pods created in it, pods that are not BestEffort tolerate
//! memory pressure, and every toleration must be covered by the
//! namespace's `scheduler.alpha.kubernetes.io/tolerationsWhitelist`.
//! (Upstream's optional configuration file, with cluster-wide defaults and
//! whitelist, is not read.)

use serde_json::{json, Value};

use super::common::{self, forbidden};
use super::tolerations;
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub const DEFAULTS: &str = "scheduler.alpha.kubernetes.io/defaultTolerations";
pub const WHITELIST: &str = "scheduler.alpha.kubernetes.io/tolerationsWhitelist";

pub struct PodTolerationRestriction;

fn applies(a: &Attributes<'_>) -> bool {
    matches!(a.operation, Operation::Create | Operation::Update)
        && common::is_core(a, "pods")
        && a.subresource.is_empty()
        && a.object.is_some()
}

/// A namespace annotation holding a JSON list of tolerations; `None` when unset.
async fn annotated(
    a: &Attributes<'_>,
    ctx: &Context,
    key: &str,
) -> Result<Option<Vec<Value>>, ApiError> {
    let ns = common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace)
        .await?
        .ok_or_else(|| ApiError::not_found("", "namespaces", a.namespace))?;
    match ns["metadata"]["annotations"][key]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        None => Ok(None),
        Some(text) => serde_json::from_str::<Vec<Value>>(text)
            .map(Some)
            .map_err(|e| forbidden(a, format!("namespace annotation {key}: {e}"))),
    }
}

/// upstream's GetPodQOS, as far as BestEffort goes: no container (nor the
/// pod itself) asks for or limits a positive amount of cpu or memory.
fn best_effort(pod: &Value) -> bool {
    let positive = |list: &Value| {
        ["cpu", "memory"]
            .iter()
            .any(|r| crate::registry::helpers::quantity(&list[*r]).is_some_and(|q| q > 0))
    };
    let asks = |res: &Value| positive(&res["requests"]) || positive(&res["limits"]);
    !asks(&pod["spec"]["resources"])
        && !["initContainers", "containers"]
            .iter()
            .flat_map(|l| pod["spec"][*l].as_array().into_iter().flatten())
            .any(|c| asks(&c["resources"]))
}

#[async_trait::async_trait]
impl MutatingPlugin for PodTolerationRestriction {
    fn name(&self) -> &'static str {
        "PodTolerationRestriction"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !applies(a) {
            return Ok(Vec::new());
        }
        let mut extra = Vec::new();
        if a.operation == Operation::Create {
            extra = annotated(a, ctx, DEFAULTS).await?.unwrap_or_default();
        }
        let Some(pod) = a.object.as_mut() else {
            return Ok(Vec::new());
        };
        if !best_effort(pod) {
            extra.push(json!({"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}));
        }
        if !extra.is_empty() {
            let merged = tolerations::merge(&tolerations::of(&pod["spec"]), &extra);
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("tolerations".into(), Value::Array(merged));
            }
        }
        Ok(Vec::new())
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for PodTolerationRestriction {
    fn name(&self) -> &'static str {
        "PodTolerationRestriction"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        let Some(pod) = a.object.as_ref().filter(|_| applies(a)) else {
            return Ok(Vec::new());
        };
        let ts = tolerations::of(&pod["spec"]);
        if ts.is_empty() {
            return Ok(Vec::new());
        }
        let whitelist = annotated(a, ctx, WHITELIST).await?.unwrap_or_default();
        if !tolerations::allowed_by(&ts, &whitelist) {
            return Err(forbidden(
                a,
                "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist",
            ));
        }
        Ok(Vec::new())
    }
}
