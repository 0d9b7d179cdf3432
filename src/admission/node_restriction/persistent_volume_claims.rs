//! The kubelet and PersistentVolumeClaims: it may update only the status
//! fields it owns (capacity, conditions, allocated resources).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{op_name, semantic_eq, unexpected_type};
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

/// The PVC with what a kubelet may change cleared: the resource version,
/// status capacity, conditions and (RecoverVolumeExpansionFailure, on in
/// v1.34) allocated resources and their statuses, and managed fields.
pub(super) fn pvc_without_kubelet_fields(pvc: &Value) -> Value {
    let mut v = pvc.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        m.remove("managedFields");
    }
    if let Some(s) = v.get_mut("status").and_then(Value::as_object_mut) {
        for k in [
            "capacity",
            "conditions",
            "allocatedResourceStatuses",
            "allocatedResources",
        ] {
            s.remove(k);
        }
    }
    v
}

/// Where two JSON values differ, as `path: old -> new` lines (upstream
/// prints go-cmp's diff here, which kapi does not reproduce).
pub(super) fn json_diff(old: &Value, new: &Value, path: &str, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                json_diff(p, q, &format!("{path}.{k}"), out);
            }
        }
        _ if semantic_eq(old, new) => {}
        _ => out.push(format!("{path}: {old} -> {new}")),
    }
}

pub(super) fn admit_pvc_status(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation != Operation::Update {
        return Err(forbidden(
            a,
            format!(
                "unexpected operation {}",
                crate::api::go_quote(op_name(a.operation))
            ),
        ));
    }
    let old = pvc_without_kubelet_fields(a.old_object.ok_or_else(|| unexpected_type(a))?);
    let new = pvc_without_kubelet_fields(a.object.as_ref().ok_or_else(|| unexpected_type(a))?);
    if !semantic_eq(&old, &new) {
        let mut diff = Vec::new();
        json_diff(&old, &new, "", &mut diff);
        return Err(forbidden(
            a,
            format!(
                "node {} is not allowed to update fields other than status.quantity and status.conditions: {}",
                crate::api::go_quote(node),
                diff.join("; ")
            ),
        ));
    }
    Ok(())
}
