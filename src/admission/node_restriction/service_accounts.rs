//! The kubelet and service account tokens: only tokens bound to a pod
//! (by name and uid) scheduled on the node itself.

use super::{str_at, unexpected_type};
use crate::admission::common::{forbidden, get_core_cached};
use crate::admission::{Attributes, Context, Operation};
use crate::api::ApiError;

pub(super) async fn admit_service_account(
    node: &str,
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<(), ApiError> {
    if a.operation != Operation::Create || a.subresource != "token" {
        return Ok(());
    }
    let tr = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    let r = &tr["spec"]["boundObjectRef"];
    if r.is_null()
        || str_at(r, &["apiVersion"]) != "v1"
        || str_at(r, &["kind"]) != "Pod"
        || str_at(r, &["name"]).is_empty()
    {
        return Err(forbidden(a, "node requested token not bound to a pod"));
    }
    let uid = str_at(r, &["uid"]);
    if uid.is_empty() {
        return Err(forbidden(
            a,
            "node requested token with a pod binding without a uid",
        ));
    }
    let pod_name = str_at(r, &["name"]);
    let pod = get_core_cached(&ctx.registries, "pods", a.namespace, pod_name)
        .await
        .map_err(|e| forbidden(a, e.message))?
        .ok_or_else(|| ApiError::not_found("", "pods", pod_name))?;
    if uid != str_at(&pod, &["metadata", "uid"]) {
        return Err(forbidden(
            a,
            format!("the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"),
        ));
    }
    if str_at(&pod, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            "node requested token bound to a pod scheduled on a different node",
        ));
    }
    Ok(())
}
