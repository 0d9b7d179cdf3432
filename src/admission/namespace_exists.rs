//! NamespaceExists and NamespaceAutoProvision (plugin/pkg/admission/
//! namespace/exists and autoprovision): a namespaced write needs its
//! namespace, or creates it.

use serde_json::json;

use super::common::{self, forbidden};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::WriteOptions;

/// Whether the request is for an object in a namespace (other than a Namespace).
fn in_namespace(a: &Attributes<'_>) -> bool {
    !a.namespace.is_empty() && !(a.resource.group.is_empty() && a.resource.kind == "Namespace")
}

pub struct NamespaceExists;

#[async_trait::async_trait]
impl ValidatingPlugin for NamespaceExists {
    fn name(&self) -> &'static str {
        "NamespaceExists"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !in_namespace(a) {
            return Ok(Vec::new());
        }
        match common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace).await? {
            Some(_) => Ok(Vec::new()),
            None => Err(ApiError::not_found("", "namespaces", a.namespace)),
        }
    }
}

pub struct NamespaceAutoProvision;

#[async_trait::async_trait]
impl MutatingPlugin for NamespaceAutoProvision {
    fn name(&self) -> &'static str {
        "NamespaceAutoProvision"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        // A dry run must not leave a namespace behind.
        if a.operation != Operation::Create || !in_namespace(a) || a.dry_run {
            return Ok(Vec::new());
        }
        if common::get_core_cached(&ctx.registries, "namespaces", "", a.namespace)
            .await?
            .is_some()
        {
            return Ok(Vec::new());
        }
        let Some(namespaces) = ctx.registries.get("", "v1", "namespaces") else {
            return Ok(Vec::new());
        };
        let ns =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": a.namespace}});
        match namespaces.create("", ns, &WriteOptions::default()).await {
            Ok(_) => Ok(Vec::new()),
            // Created by a concurrent request: just as good.
            Err(e) if e.code == 409 => Ok(Vec::new()),
            Err(e) => Err(forbidden(a, e.message)),
        }
    }
}
