//! The kubelet and ResourceSlices: it creates and deletes only slices
//! whose spec.nodeName is the node itself.

use super::{str_at, unexpected_type};
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

pub(super) fn admit_resource_slice(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    // Other writes are the node authorizer's to judge; it cannot see a
    // created object's content, nor each object of a collection delete.
    let (slice, verb) = match a.operation {
        Operation::Create => (a.object.as_ref(), "create"),
        Operation::Delete => (a.old_object, "delete"),
        _ => return Ok(()),
    };
    let slice = slice.ok_or_else(|| unexpected_type(a))?;
    if str_at(slice, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            format!("can only {verb} ResourceSlice with the same NodeName as the requesting node"),
        ));
    }
    Ok(())
}
