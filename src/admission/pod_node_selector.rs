//! PodNodeSelector (plugin/pkg/admission/podnodeselector): a namespace's
//! `scheduler.alpha.kubernetes.io/node-selector` annotation is merged into
//! the node selector of every pod created in it; a pod asking for another
//! value of the same label is refused. (Upstream's optional configuration
//! file, with a cluster default and per-namespace whitelists, is not read.)

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::common::{self, forbidden_for};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub const ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";

pub struct PodNodeSelector;

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

async fn namespace_selector(
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<BTreeMap<String, String>, ApiError> {
    let ns = common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace)
        .await?
        .ok_or_else(|| ApiError::not_found("", "namespaces", a.namespace))?;
    match ns["metadata"]["annotations"][ANNOTATION].as_str() {
        Some(s) => parse(s).map_err(ApiError::internal),
        None => Ok(BTreeMap::new()),
    }
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

fn conflict_error(pod: &Value) -> ApiError {
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    forbidden_for(
        "",
        "pods",
        name,
        "pod node label selector conflicts with its namespace node label selector",
    )
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
        let selector = namespace_selector(a, ctx).await?;
        let Some(pod) = a.object.as_mut() else {
            return Ok(Vec::new());
        };
        if conflicts(&selector, pod) {
            return Err(conflict_error(pod));
        }
        if selector.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            let ns = spec.entry("nodeSelector").or_insert_with(|| json!({}));
            if let Some(m) = ns.as_object_mut() {
                for (k, v) in selector {
                    m.entry(k).or_insert(json!(v));
                }
            }
        }
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
        if conflicts(&namespace_selector(a, ctx).await?, pod) {
            return Err(conflict_error(pod));
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
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
