//! The kubelet and node Leases: only its own, in kube-node-lease.

use super::{target_name, unexpected_type};
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

/// api.NamespaceNodeLease.
const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

pub(super) fn admit_lease(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.namespace != NODE_LEASE_NAMESPACE {
        return Err(forbidden(
            a,
            format!(
                "can only access leases in the {} system namespace",
                crate::api::go_quote(NODE_LEASE_NAMESPACE)
            ),
        ));
    }
    if a.operation == Operation::Create && a.object.is_none() {
        return Err(unexpected_type(a));
    }
    if target_name(a) != node {
        return Err(forbidden(
            a,
            "can only access node lease with the same name as the requesting node",
        ));
    }
    Ok(())
}
