//! RuntimeClass (plugin/pkg/admission/runtimeclass): a pod naming a
//! RuntimeClass gets the class's pod overhead and scheduling constraints
//! (node selector and tolerations); a class that does not exist, or an
//! overhead other than the class's, is refused.

use serde_json::{json, Value};

use super::common::{self, forbidden};
use super::tolerations;
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub struct RuntimeClass;

fn applies(a: &Attributes<'_>) -> bool {
    a.operation == Operation::Create && common::is_core(a, "pods") && a.subresource.is_empty()
}

async fn class_of(
    a: &Attributes<'_>,
    ctx: &Context,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    let Some(reg) = ctx.registries.get("node.k8s.io", "v1", "runtimeclasses") else {
        return Ok(None);
    };
    match reg.get_object("", name, Some(&reg.fresh_rv())).await {
        Ok(b) => Ok(serde_json::from_slice(&b).ok()),
        Err(e) if e.code == 404 => match reg.get_object("", name, None).await {
            Ok(b) => Ok(serde_json::from_slice(&b).ok()),
            Err(e) if e.code == 404 => Ok(None),
            Err(e) => Err(forbidden(a, e.message)),
        },
        Err(e) => Err(forbidden(a, e.message)),
    }
}

/// Resource lists compared as quantities (`1000m` is `1`), as Go's
/// semantic equality does.
fn same_resources(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a.as_object().is_none_or(|m| m.is_empty())
            && b.as_object().is_none_or(|m| m.is_empty());
    };
    a.len() == b.len()
        && a.iter().all(|(k, v)| {
            b.get(k).is_some_and(|w| {
                crate::registry::helpers::quantity(v) == crate::registry::helpers::quantity(w)
            })
        })
}

fn overhead_error(a: &Attributes<'_>, pod: &Value, class: Option<&Value>) -> Option<ApiError> {
    let pod_overhead = &pod["spec"]["overhead"];
    let set = pod_overhead.as_object().is_some_and(|m| !m.is_empty());
    match class
        .map(|c| &c["overhead"]["podFixed"])
        .filter(|o| !o.is_null())
    {
        Some(fixed) if set && !same_resources(fixed, pod_overhead) => Some(forbidden(
            a,
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        )),
        None if set => Some(forbidden(
            a,
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
        )),
        _ => None,
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !applies(a) {
            return Ok(Vec::new());
        }
        let Some(name) = a
            .object
            .as_ref()
            .and_then(|p| p["spec"]["runtimeClassName"].as_str())
            .filter(|n| !n.is_empty())
            .map(String::from)
        else {
            return Ok(Vec::new());
        };
        let Some(class) = class_of(a, ctx, &name).await? else {
            return Err(forbidden(
                a,
                format!(
                    "pod rejected: RuntimeClass {} not found",
                    crate::api::go_quote(&name)
                ),
            ));
        };
        let fixed = class["overhead"]["podFixed"].clone();
        if let Some(pod) = a.object.as_ref() {
            if !fixed.is_null() {
                if let Some(e) = overhead_error(a, pod, Some(&class)) {
                    return Err(e);
                }
            }
        }
        let mut conflict = None;
        if let Some(spec) = a
            .object
            .as_mut()
            .and_then(|p| p.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            if !fixed.is_null() {
                spec.insert("overhead".into(), fixed);
            }
            let wanted = class["scheduling"]["nodeSelector"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            if !wanted.is_empty() {
                let selector = spec.entry("nodeSelector").or_insert_with(|| json!({}));
                if let Some(sel) = selector.as_object_mut() {
                    for (k, v) in wanted {
                        match sel.get(&k) {
                            Some(have) if *have != v => {
                                conflict = Some(format!(
                                    "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {}; pod.spec.nodeSelector[{k}] = {}",
                                    v.as_str().unwrap_or(""),
                                    have.as_str().unwrap_or("")
                                ));
                                break;
                            }
                            _ => {
                                sel.insert(k, v);
                            }
                        }
                    }
                }
            }
            let extra = class["scheduling"]["tolerations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !extra.is_empty() {
                let have = tolerations::of(&Value::Object(spec.clone()));
                spec.insert(
                    "tolerations".into(),
                    Value::Array(tolerations::merge(&have, &extra)),
                );
            }
        }
        match conflict {
            Some(why) => Err(forbidden(a, why)),
            None => Ok(Vec::new()),
        }
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        let Some(pod) = a.object.as_ref().filter(|_| applies(a)) else {
            return Ok(Vec::new());
        };
        let class = match pod["spec"]["runtimeClassName"]
            .as_str()
            .filter(|n| !n.is_empty())
        {
            Some(name) => class_of(a, ctx, name).await?,
            None => None,
        };
        match overhead_error(a, pod, class.as_ref()) {
            Some(e) => Err(e),
            None => Ok(Vec::new()),
        }
    }
}
