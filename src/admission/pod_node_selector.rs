//! PodNodeSelector (plugin/pkg/admission/podnodeselector): a namespace's
//! `scheduler.alpha.kubernetes.io/node-selector` annotation (or, where the
//! namespace has none, the configuration's `clusterDefaultNodeSelector`)
//! is merged into the node selector of every pod created in it; a pod
//! asking for another value of the same label is refused, and so is one
//! whose labels are not all in its namespace's whitelist, where the
//! configuration names one.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::common::{self, forbidden_for};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub const ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";

/// The plugin's configuration (`podNodeSelectorPluginConfig`): selectors
/// by namespace name, and the cluster default under its own key.
#[derive(Debug, Clone, Default)]
pub struct PodNodeSelector {
    selectors: BTreeMap<String, String>,
}

const CLUSTER_DEFAULT: &str = "clusterDefaultNodeSelector";

impl PodNodeSelector {
    /// Reads the configuration as upstream's readConfig does: unversioned,
    /// keys matched without regard to case, and a document that does not
    /// decode is passed over rather than refused (so no configuration is
    /// an error at start).
    pub fn from_config(config: Option<&Value>) -> PodNodeSelector {
        let selectors = config
            .and_then(Value::as_object)
            .and_then(|doc| {
                doc.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("podNodeSelectorPluginConfig"))
            })
            .and_then(|(_, m)| m.as_object())
            .and_then(|m| {
                m.iter()
                    .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect::<Option<BTreeMap<_, _>>>()
            })
            .unwrap_or_default();
        PodNodeSelector { selectors }
    }
}

/// upstream's labels.ConvertSelectorToLabelsMap: `k=v,k2=v2`, strictly
/// (no empty part, exactly one `=` in each).
fn parse(selector: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    if selector.is_empty() {
        return Ok(out);
    }
    for part in selector.split(',') {
        let pieces: Vec<&str> = part.split('=').collect();
        let [k, v] = pieces.as_slice() else {
            // Go prints the split parts as a slice: `[a b c]`.
            return Err(format!("invalid selector: [{}]", pieces.join(" ")));
        };
        let (k, v) = (k.trim(), v.trim());
        let mut problems = crate::registry::validation::qualified_name(k);
        problems.extend(crate::registry::validation::label_value(v));
        if let Some(p) = problems.first() {
            return Err(format!(
                "invalid label in selector {}: {p}",
                crate::api::go_quote(selector)
            ));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// The namespace's selector: its annotation when it has one (even empty),
/// the cluster default otherwise.
async fn namespace_selector(
    a: &Attributes<'_>,
    ctx: &Context,
    cluster_default: Option<&str>,
) -> Result<BTreeMap<String, String>, ApiError> {
    let ns = common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace)
        .await?
        .ok_or_else(|| ApiError::not_found("", "namespaces", a.namespace))?;
    let selector = ns["metadata"]["annotations"][ANNOTATION]
        .as_str()
        .or(cluster_default)
        .unwrap_or("");
    // upstream returns the parse error itself: a 500 without a reason.
    parse(selector).map_err(common::plain_error)
}

fn applies(a: &Attributes<'_>) -> bool {
    a.operation == Operation::Create && common::is_core(a, "pods") && a.subresource.is_empty()
}

fn conflicts(ns: &BTreeMap<String, String>, pod: &Value) -> bool {
    ns.iter().any(|(k, v)| {
        pod["spec"]["nodeSelector"][k.as_str()]
            .as_str()
            .is_some_and(|p| p != v)
    })
}

/// upstream names the pod by `metadata.name` alone here (a pod with only
/// `generateName` is `pods is forbidden: ...`).
fn refusal(pod: &Value, why: &str) -> ApiError {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    forbidden_for("", "pods", name, why)
}

fn conflict_error(pod: &Value) -> ApiError {
    refusal(
        pod,
        "pod node label selector conflicts with its namespace node label selector",
    )
}

impl PodNodeSelector {
    async fn selector(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<BTreeMap<String, String>, ApiError> {
        let default = self.selectors.get(CLUSTER_DEFAULT).map(String::as_str);
        namespace_selector(a, ctx, default).await
    }

    /// The namespace's whitelist from the configuration: every label of
    /// the pod's (merged) selector must be in it with the same value.
    fn check_whitelist(&self, a: &Attributes<'_>, pod: &Value) -> Result<(), ApiError> {
        let whitelist = parse(self.selectors.get(a.namespace).map_or("", String::as_str))
            .map_err(common::plain_error)?;
        if whitelist.is_empty() {
            return Ok(());
        }
        let within = pod["spec"]["nodeSelector"]
            .as_object()
            .into_iter()
            .flatten()
            .all(|(k, v)| {
                whitelist
                    .get(k)
                    .is_some_and(|w| Some(w.as_str()) == v.as_str())
            });
        if within {
            Ok(())
        } else {
            Err(refusal(
                pod,
                "pod node label selector labels conflict with its namespace whitelist",
            ))
        }
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for PodNodeSelector {
    fn name(&self) -> &'static str {
        "PodNodeSelector"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !applies(a) || a.object.is_none() {
            return Ok(Vec::new());
        }
        let selector = self.selector(a, ctx).await?;
        let Some(pod) = a.object.as_mut() else {
            return Ok(Vec::new());
        };
        if conflicts(&selector, pod) {
            return Err(conflict_error(pod));
        }
        if !selector.is_empty() {
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                let ns = spec.entry("nodeSelector").or_insert_with(|| json!({}));
                if let Some(m) = ns.as_object_mut() {
                    for (k, v) in selector {
                        m.entry(k).or_insert(json!(v));
                    }
                }
            }
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        self.check_whitelist(a, pod)?;
        Ok(Vec::new())
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for PodNodeSelector {
    fn name(&self) -> &'static str {
        "PodNodeSelector"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        let Some(pod) = a.object.as_ref().filter(|_| applies(a)) else {
            return Ok(Vec::new());
        };
        if conflicts(&self.selector(a, ctx).await?, pod) {
            return Err(conflict_error(pod));
        }
        self.check_whitelist(a, pod)?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_configuration_is_read_as_upstream_reads_it() {
        let c = super::PodNodeSelector::from_config(Some(&json!({
            "podNodeSelectorPluginConfig": {"clusterDefaultNodeSelector": "env=dev", "prod": "env=prod"}
        })));
        assert_eq!(
            c.selectors.get("prod").map(String::as_str),
            Some("env=prod")
        );
        // Keys without regard to case, as Go's encoding/json matches them.
        let c = super::PodNodeSelector::from_config(Some(&json!({
            "PodNodeSelectorPluginConfig": {"clusterDefaultNodeSelector": "env=dev"}
        })));
        assert_eq!(
            c.selectors.get(super::CLUSTER_DEFAULT).map(String::as_str),
            Some("env=dev")
        );
        // A value that is not a string spoils the document: no configuration.
        let c = super::PodNodeSelector::from_config(Some(&json!({
            "podNodeSelectorPluginConfig": {"clusterDefaultNodeSelector": 1}
        })));
        assert!(c.selectors.is_empty());
        assert!(super::PodNodeSelector::from_config(None)
            .selectors
            .is_empty());
    }

    #[test]
    fn selectors_parse_as_label_maps() {
        let m = super::parse("env=prod, zone = a").expect("parse");
        assert_eq!(m.get("env").map(String::as_str), Some("prod"));
        assert_eq!(m.get("zone").map(String::as_str), Some("a"));
        assert!(super::parse("env").is_err());
        assert!(super::parse("a==b").is_err());
        assert!(super::parse("a=b,").is_err());
        assert!(super::parse("").expect("empty").is_empty());
    }
}
