//! NodeRestriction (plugin/pkg/admission/noderestriction): what a kubelet
//! (`system:node:<name>` in `system:nodes`) may write is limited to its
//! own node: its Node object (no taints, ownerReferences or reserved
//! labels of its own choosing), mirror pods bound to it, the status of
//! pods bound to it, its Lease, CSINode and ResourceSlices, PVC status,
//! tokens for its own pods, and CSRs in its own name.
//!
//! upstream runs it as a mutating plugin (Admit) that never mutates: it
//! decides before any validation and before later mutating plugins change
//! the object. kapi does the same: [`MutatingPlugin`] carries the checks.
//!
//! Here: the plugin and its dispatch by resource; each resource's checks
//! live in the submodule named after it.

use std::sync::Arc;

use serde_json::Value;

use super::common::forbidden;
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::auth::authorizer::Authorizer;
use crate::auth::UserInfo;

mod certificate_signing_requests;
mod csi_nodes;
mod leases;
mod nodes;
mod persistent_volume_claims;
mod pods;
mod resource_slices;
mod service_accounts;
#[cfg(test)]
mod tests;

use certificate_signing_requests::admit_csr;
use csi_nodes::admit_csi_node;
use leases::admit_lease;
use nodes::admit_node;
pub use nodes::{forbidden_labels, modified_labels};
use persistent_volume_claims::admit_pvc_status;
use pods::{admit_pod_eviction, admit_pod_status};
use resource_slices::admit_resource_slice;
use service_accounts::admit_service_account;

pub struct NodeRestriction {
    pub authorizer: Arc<dyn Authorizer>,
}

const NODE_USER_PREFIX: &str = "system:node:";
const NODES_GROUP: &str = "system:nodes";

/// upstream's default NodeIdentifier: `Some(name)` for a node user (the
/// name may be empty), `None` for anyone else.
fn node_identity(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix(NODE_USER_PREFIX)?;
    user.in_group(NODES_GROUP).then_some(name)
}

/// Semantic equality of JSON as Go's apiequality.Semantic sees decoded
/// objects: a missing field, null, and an empty list or map are the same.
pub fn semantic_eq(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::Array(x) => x.is_empty(),
        Value::Object(x) => x.is_empty(),
        _ => false,
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).all(|k| {
            semantic_eq(
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            )
        }),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(p, q))
        }
        _ if empty(a) && empty(b) => true,
        _ => a == b,
    }
}

fn op_name(op: Operation) -> &'static str {
    op.as_str()
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

impl NodeRestriction {
    async fn admit_node_request(
        &self,
        node: &str,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<(), ApiError> {
        let (group, plural) = (a.resource.group.as_str(), a.resource.plural.as_str());
        match (group, plural) {
            ("", "pods") => match a.subresource {
                "" => self.admit_pod(node, a, ctx).await,
                "status" => admit_pod_status(node, a),
                "eviction" => admit_pod_eviction(node, a, ctx).await,
                other => Err(forbidden(
                    a,
                    format!(
                        "unexpected pod subresource {}, only 'status' and 'eviction' are allowed",
                        crate::api::go_quote(other)
                    ),
                )),
            },
            ("", "nodes") => admit_node(node, a),
            ("", "persistentvolumeclaims") => match a.subresource {
                "status" => admit_pvc_status(node, a),
                _ => Err(forbidden(a, "may only update PVC status")),
            },
            ("", "serviceaccounts") => admit_service_account(node, a, ctx).await,
            ("coordination.k8s.io", "leases") => admit_lease(node, a),
            ("storage.k8s.io", "csinodes") => admit_csi_node(node, a),
            ("resource.k8s.io", "resourceslices") => admit_resource_slice(node, a),
            ("certificates.k8s.io", "certificatesigningrequests") => admit_csr(node, a),
            _ => Ok(()),
        }
    }
}

fn unexpected_type(a: &Attributes<'_>) -> ApiError {
    forbidden(a, "unexpected type <nil>")
}

/// The object's name on create (the request has none yet), the request's otherwise.
fn target_name<'a>(a: &'a Attributes<'_>) -> &'a str {
    match a.operation {
        Operation::Create => a
            .object
            .as_ref()
            .map_or("", |o| str_at(o, &["metadata", "name"])),
        _ => a.name,
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(
            a.operation,
            Operation::Create | Operation::Update | Operation::Delete
        ) {
            return Ok(Vec::new());
        }
        let Some(node) = node_identity(a.user) else {
            return Ok(Vec::new());
        };
        if node.is_empty() {
            return Err(forbidden(
                a,
                format!(
                    "could not determine node from user {}",
                    crate::api::go_quote(&a.user.name)
                ),
            ));
        }
        self.admit_node_request(node, a, ctx).await?;
        Ok(Vec::new())
    }
}

/// Nothing to do here: upstream decides in the mutating phase (see the
/// module comment); registering only this would check nothing.
#[async_trait::async_trait]
impl ValidatingPlugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    async fn validate(&self, _a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        Ok(Vec::new())
    }
}
