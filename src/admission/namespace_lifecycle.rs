//! NamespaceLifecycle: no new objects in a namespace that does not exist
//! or is being terminated; the system namespaces cannot be deleted (the
//! namespace strategy refuses that before admission is reached).

use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;

pub struct NamespaceLifecycle;

/// Upstream decides in its Admit, so the namespace is checked before any
/// other plugin (ServiceAccount, LimitRanger) looks for what lives in it:
/// a create in a namespace that does not exist is a 404 naming it.
#[async_trait::async_trait]
impl MutatingPlugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        ValidatingPlugin::validate(self, a, ctx).await
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if a.operation != Operation::Create || !a.resource.namespaced || a.namespace.is_empty() {
            return Ok(Vec::new());
        }
        // Some review-like subresources are allowed in terminating namespaces (upstream: tokens, evictions).
        let Some(nsr) = ctx.registries.get("", "v1", "namespaces") else {
            return Ok(Vec::new());
        };
        // The cache first, live when it does not know the namespace yet.
        let got = match nsr.get_object("", a.namespace, Some("0")).await {
            Err(e) if e.code == 404 => nsr.get_object("", a.namespace, None).await,
            other => other,
        };
        let ns = match got {
            Ok(b) if !may_be_terminating(&b) => Lifecycle::default(),
            Ok(b) => serde_json::from_slice::<Lifecycle>(&b).unwrap_or_default(),
            Err(e) if e.code == 404 => {
                return Err(ApiError::not_found("", "namespaces", a.namespace))
            }
            Err(e) => return Err(e),
        };
        if ns.terminating() {
            let r = a.resource;
            let qualified = crate::api::status::qualified_resource(&r.group, &r.plural);
            return Err(ApiError::forbidden(format!(
                "{qualified} {:?} is forbidden: unable to create new content in namespace {} because it is being terminated",
                a.name, a.namespace
            ))
            .with_details(Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                name: (!a.name.is_empty()).then(|| a.name.to_string()),
                group: (!r.group.is_empty()).then(|| r.group.clone()),
                kind: Some(r.plural.clone()),
                causes: Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                    reason: Some("NamespaceTerminating".into()),
                    message: Some(format!("namespace {} is being terminated", a.namespace)),
                    field: Some("metadata.namespace".into()),
                }]),
                ..Default::default()
            })));
        }
        Ok(Vec::new())
    }
}

/// The two facts about a namespace this plugin reads, decoded without
/// building the whole object (this runs on every namespaced create).
#[derive(Debug, Default, serde::Deserialize)]
struct Lifecycle {
    #[serde(default)]
    metadata: LifecycleMeta,
    #[serde(default)]
    status: LifecycleStatus,
}

#[derive(Debug, Default, serde::Deserialize)]
struct LifecycleMeta {
    #[serde(default, rename = "deletionTimestamp")]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct LifecycleStatus {
    #[serde(default)]
    phase: Option<String>,
}

/// False when the namespace's JSON holds neither a deletion timestamp nor
/// a Terminating phase: most creates then need not decode it. Stored JSON
/// (kapi's or Go's encoder) writes these keys and values unescaped.
fn may_be_terminating(json: &[u8]) -> bool {
    std::str::from_utf8(json).map_or(true, |s| {
        s.contains("deletionTimestamp") || s.contains("Terminating")
    })
}

impl Lifecycle {
    fn terminating(&self) -> bool {
        self.status.phase.as_deref() == Some("Terminating")
            || self.metadata.deletion_timestamp.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut may send a namespace to the decoder for nothing, never
    /// skip one that is terminating.
    #[test]
    fn only_namespaces_that_cannot_be_terminating_skip_decoding() {
        let cases: [(&str, bool); 4] = [
            (
                r#"{"metadata":{"name":"a"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}"#,
                false,
            ),
            (
                r#"{"metadata":{"name":"a","deletionTimestamp":"2026-11-29T10:00:00Z"},"status":{"phase":"Active"}}"#,
                true,
            ),
            (
                r#"{"metadata":{"name":"a"},"status":{"phase":"Terminating"}}"#,
                true,
            ),
            (
                r#"{"metadata":{"name":"a","labels":{"x":"Terminating"}},"status":{"phase":"Active"}}"#,
                false,
            ),
        ];
        for (json, terminating) in cases {
            let decoded = serde_json::from_slice::<Lifecycle>(json.as_bytes()).expect("json");
            assert_eq!(decoded.terminating(), terminating, "{json}");
            if terminating {
                assert!(may_be_terminating(json.as_bytes()), "{json}");
            }
        }
        assert!(!may_be_terminating(br#"{"status":{"phase":"Active"}}"#));
    }
}
