//! The kubelet and CSINodes: only the one named after the node.

use super::target_name;
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

pub(super) fn admit_csi_node(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation == Operation::Create && a.object.is_none() {
        return Err(forbidden(a, "unable to access the object name"));
    }
    if target_name(a) != node {
        return Err(forbidden(
            a,
            "can only access CSINode with the same name as the requesting node",
        ));
    }
    Ok(())
}
