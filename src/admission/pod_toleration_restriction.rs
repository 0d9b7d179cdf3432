//! PodTolerationRestriction (plugin/pkg/admission/podtolerationrestriction):
//! a namespace's `scheduler.alpha.kubernetes.io/defaultTolerations` (or,
//! where the namespace has no such annotation, the configuration's
//! `default`) are merged into pods created in it, pods that are not
//! BestEffort tolerate memory pressure, and every toleration must be
//! covered by the namespace's `scheduler.alpha.kubernetes.io/tolerationsWhitelist`
//! (or the configuration's `whitelist`).

use serde_json::{json, Value};

use super::common;
use super::tolerations;
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub const DEFAULTS: &str = "scheduler.alpha.kubernetes.io/defaultTolerations";
pub const WHITELIST: &str = "scheduler.alpha.kubernetes.io/tolerationsWhitelist";

/// The cluster-wide defaults and whitelist of the plugin's configuration
/// (`podtolerationrestriction.admission.k8s.io/v1alpha1` `Configuration`).
#[derive(Debug, Clone, Default)]
pub struct PodTolerationRestriction {
    default: Vec<Value>,
    whitelist: Vec<Value>,
}

const CONFIG_API_VERSION: &str = "podtolerationrestriction.admission.k8s.io/v1alpha1";

impl PodTolerationRestriction {
    /// Reads the configuration as upstream does: versioned, kind
    /// `Configuration`, its tolerations validated; an error stops the start.
    pub fn from_config(config: Option<&Value>) -> Result<PodTolerationRestriction, String> {
        let Some(doc) = config else {
            return Ok(PodTolerationRestriction::default());
        };
        let raw = || String::from_utf8_lossy(&crate::api::go_json::to_vec(doc)).into_owned();
        let api_version = doc["apiVersion"].as_str().unwrap_or("");
        let kind = doc["kind"].as_str().unwrap_or("");
        if kind.is_empty() {
            return Err(format!("Object 'Kind' is missing in '{}'", raw()));
        }
        if api_version.is_empty() {
            return Err(format!("Object 'apiVersion' is missing in '{}'", raw()));
        }
        if api_version != CONFIG_API_VERSION || kind != "Configuration" {
            return Err(format!(
                "no kind {} is registered for version {} in scheme \"k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction/config.go\"",
                crate::api::go_quote(kind),
                crate::api::go_quote(api_version)
            ));
        }
        let list = |field: &str| -> Result<Vec<Value>, String> {
            match &doc[field] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => Ok(items.clone()),
                other => Err(format!(
                    "json: cannot unmarshal {} into Go struct field Configuration.{field} of type []v1.Toleration",
                    go_json_type(other)
                )),
            }
        };
        let (default, whitelist) = (list("default")?, list("whitelist")?);
        let mut errs = Vec::new();
        crate::registry::node::validate_tolerations(
            &default,
            "podtolerationrestriction.default",
            &mut errs,
        );
        crate::registry::node::validate_tolerations(
            &whitelist,
            "podtolerationrestriction.whitelist",
            &mut errs,
        );
        if !errs.is_empty() {
            let all: Vec<String> = errs
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message()))
                .collect();
            return Err(format!("invalid config: [{}]", all.join(" ")));
        }
        Ok(PodTolerationRestriction { default, whitelist })
    }
}

/// The JSON type name Go's decoder names in its errors.
fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Null => "null",
    }
}

fn applies(a: &Attributes<'_>) -> bool {
    matches!(a.operation, Operation::Create | Operation::Update)
        && common::is_core(a, "pods")
        && a.subresource.is_empty()
        && a.object.is_some()
}

/// A namespace annotation holding a JSON list of tolerations: `None` when
/// unset (the configuration applies), empty when set to "" (it overrides
/// the configuration with nothing), as upstream reads it.
async fn annotated(
    a: &Attributes<'_>,
    ctx: &Context,
    key: &str,
) -> Result<Option<Vec<Value>>, ApiError> {
    let ns = common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace)
        .await?
        .ok_or_else(|| ApiError::not_found("", "namespaces", a.namespace))?;
    match ns["metadata"]["annotations"][key].as_str() {
        None => Ok(None),
        Some("") => Ok(Some(Vec::new())),
        Some(text) => serde_json::from_str::<Vec<Value>>(text)
            .map(|ts| Some(ts.iter().map(normalized_keys).collect()))
            .map_err(|e| common::plain_error(e.to_string())),
    }
}

/// Go's decoder matches field names without regard to case: `"Key"` in an
/// annotation is the toleration's `key`.
fn normalized_keys(t: &Value) -> Value {
    const FIELDS: &[&str] = &["key", "operator", "value", "effect", "tolerationSeconds"];
    match t.as_object() {
        Some(m) => Value::Object(
            m.iter()
                .filter_map(|(k, v)| {
                    FIELDS
                        .iter()
                        .find(|f| f.eq_ignore_ascii_case(k))
                        .map(|f| (f.to_string(), v.clone()))
                })
                .collect(),
        ),
        None => t.clone(),
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
            extra = match annotated(a, ctx, DEFAULTS).await? {
                Some(ts) => ts,
                None => self.default.clone(),
            };
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
        let (whitelist, scope) = match annotated(a, ctx, WHITELIST).await? {
            Some(ts) => (ts, "namespace"),
            None => (self.whitelist.clone(), "cluster"),
        };
        if !tolerations::allowed_by(&ts, &whitelist) {
            // A plain error upstream, not a Forbidden one: a 500 without a reason.
            return Err(common::plain_error(format!(
                "pod tolerations (possibly merged with namespace default tolerations) conflict with its {scope} whitelist"
            )));
        }
        Ok(Vec::new())
    }
}
