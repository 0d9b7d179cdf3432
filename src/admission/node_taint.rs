//! TaintNodesByCondition (plugin/pkg/admission/nodetaint): a new Node is
//! not ready until its kubelet says so, so it starts tainted
//! `node.kubernetes.io/not-ready:NoSchedule` and nothing lands on it early.

use serde_json::json;

use super::common;
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

pub struct TaintNodesByCondition;

#[async_trait::async_trait]
impl MutatingPlugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create
            || !common::is_core(a, "nodes")
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        let Some(spec) = a.object.as_mut().and_then(|n| {
            let m = n.as_object_mut()?;
            m.entry("spec").or_insert_with(|| json!({})).as_object_mut()
        }) else {
            return Ok(Vec::new());
        };
        let taints = spec.entry("taints").or_insert_with(|| json!([]));
        if !taints.is_array() {
            *taints = json!([]);
        }
        if let Some(list) = taints.as_array_mut() {
            let present = list
                .iter()
                .any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule");
            if !present {
                list.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
            }
        }
        Ok(Vec::new())
    }
}
