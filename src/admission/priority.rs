//! Priority (plugin/pkg/admission/priority): a pod's `priority` and
//! `preemptionPolicy` come from its PriorityClass (or the global default
//! class, or 0), and a pod may not name a value of its own that differs.

use serde_json::{json, Value};

use super::common;
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub struct Priority;

/// upstream's `DefaultPriorityWhenNoDefaultClassExists`.
const DEFAULT_PRIORITY: i64 = 0;

/// The system classes upstream's scheduling post-start hook writes.
pub const SYSTEM_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The PriorityClass objects of [`SYSTEM_CLASSES`].
pub fn system_classes() -> Vec<Value> {
    SYSTEM_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description,
                "preemptionPolicy": "PreemptLowerPriority"})
        })
        .collect()
}

async fn classes(ctx: &Context) -> Result<Vec<Value>, ApiError> {
    common::list_in(
        &ctx.registries,
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "",
    )
    .await
}

#[async_trait::async_trait]
impl MutatingPlugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !common::is_core(a, "pods") || !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        match a.operation {
            // An update keeps what admission computed at create.
            Operation::Update => {
                let old = a.old_object.as_ref().map(|o| o["spec"].clone());
                if let (Some(old), Some(spec)) = (
                    old,
                    a.object
                        .as_mut()
                        .and_then(|o| o.get_mut("spec"))
                        .and_then(Value::as_object_mut),
                ) {
                    for f in ["priority", "preemptionPolicy"] {
                        if !spec.contains_key(f) && !old[f].is_null() {
                            spec.insert(f.into(), old[f].clone());
                        }
                    }
                }
                return Ok(Vec::new());
            }
            Operation::Create => {}
            _ => return Ok(Vec::new()),
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let class_name = obj["spec"]["priorityClassName"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let all = classes(ctx).await?;
        let (name, priority, policy) = if class_name.is_empty() {
            match all.iter().find(|c| c["globalDefault"] == json!(true)) {
                Some(c) => (
                    c["metadata"]["name"].as_str().map(String::from),
                    c["value"].as_i64().unwrap_or(DEFAULT_PRIORITY),
                    c["preemptionPolicy"]
                        .as_str()
                        .unwrap_or("PreemptLowerPriority")
                        .to_string(),
                ),
                None => (None, DEFAULT_PRIORITY, "PreemptLowerPriority".to_string()),
            }
        } else {
            let Some(c) = all
                .iter()
                .find(|c| c["metadata"]["name"] == json!(class_name))
            else {
                return Err(common::forbidden(
                    a,
                    format!("no PriorityClass with name {class_name} was found"),
                ));
            };
            (
                None,
                c["value"].as_i64().unwrap_or(DEFAULT_PRIORITY),
                c["preemptionPolicy"]
                    .as_str()
                    .unwrap_or("PreemptLowerPriority")
                    .to_string(),
            )
        };
        if let Some(given) = obj["spec"]["priority"].as_i64() {
            if given != priority {
                return Err(common::forbidden(a, format!("the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name")));
            }
        }
        if let Some(given) = obj["spec"]["preemptionPolicy"].as_str() {
            if given != policy {
                return Err(common::forbidden(a, format!("the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name")));
            }
        }
        if let Some(spec) = a
            .object
            .as_mut()
            .and_then(|o| o.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            if let Some(n) = name {
                spec.insert("priorityClassName".into(), json!(n));
            }
            spec.insert("priority".into(), json!(priority));
            spec.insert("preemptionPolicy".into(), json!(policy));
        }
        Ok(Vec::new())
    }
}
