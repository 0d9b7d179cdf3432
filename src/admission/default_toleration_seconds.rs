//! DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds):
//! pods tolerate the `node.kubernetes.io/not-ready` and
//! `node.kubernetes.io/unreachable` NoExecute taints for 300 seconds
//! unless they already tolerate them (or every taint).

use serde_json::{json, Value};

use super::common;
use super::{Attributes, Context, MutatingPlugin, Operation};
use crate::api::ApiError;

pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`.
pub const DEFAULT_SECONDS: i64 = 300;

pub struct DefaultTolerationSeconds;

/// Adds the two tolerations a pod spec lacks.
pub fn add_tolerations(spec: &mut serde_json::Map<String, Value>) {
    let tolerates = |key: &str| {
        common::items(&Value::Object(spec.clone()), "tolerations").any(|t| {
            let k = t["key"].as_str().unwrap_or("");
            let e = t["effect"].as_str().unwrap_or("");
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        })
    };
    let missing: Vec<&str> = [NOT_READY, UNREACHABLE]
        .into_iter()
        .filter(|k| !tolerates(k))
        .collect();
    if missing.is_empty() {
        return;
    }
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Some(l) = list.as_array_mut() {
        for key in missing {
            l.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_SECONDS}),
            );
        }
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(a.operation, Operation::Create | Operation::Update)
            || !common::is_core(a, "pods")
            || !a.subresource.is_empty()
        {
            return Ok(Vec::new());
        }
        if let Some(spec) = a
            .object
            .as_mut()
            .and_then(|o| o.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            add_tolerations(spec);
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: Value) -> Value {
        let mut m = spec.as_object().cloned().unwrap_or_default();
        add_tolerations(&mut m);
        Value::Object(m)["tolerations"].clone()
    }

    #[test]
    fn adds_what_is_missing() {
        assert_eq!(
            run(json!({})),
            json!([
                {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ])
        );
        let own = json!({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        assert_eq!(
            run(json!({"tolerations": [own.clone()]})),
            json!([own, {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])
        );
        // Tolerating everything covers both.
        assert_eq!(
            run(json!({"tolerations": [{"operator": "Exists"}]})),
            json!([{"operator": "Exists"}])
        );
    }
}
