//! kubectl's `last-applied-configuration` annotation under server-side
//! apply (upstream's lastAppliedUpdater and lastAppliedManager): kept
//! current when kubectl applies server-side, and read to let kubectl move
//! an object from client-side to server-side apply without conflicts.

use serde_json::Value;

use super::fieldset::{self, FieldSet};
use super::schema::Ty;
use super::typed;
use super::LAST_APPLIED_ANNOTATION;

/// The fields of the live object's last-applied-configuration whose
/// values are still what it says (upstream's
/// allowedConflictsFromLastApplied); `None` without one.
pub(super) fn allowed_from_last_applied(
    live: &Value,
    live_obj: &Value,
    ty: Ty,
) -> Option<FieldSet> {
    let text = live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION].as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    let set = typed::to_field_set(&last, ty, false).ok()?;
    let cmp = typed::compare(&last, live_obj, ty);
    Some(set.difference(&cmp.modified).difference(&cmp.removed))
}

pub(super) fn has_last_applied(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// Upstream's `lastAppliedUpdater`: the annotation becomes the applied
/// configuration (without the annotation), as JSON with a newline.
pub(super) fn set_last_applied(obj: &mut Value, applied: &Value) {
    let mut config = applied.clone();
    if let Some(Value::Object(ann)) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        ann.remove(LAST_APPLIED_ANNOTATION);
    }
    let text = format!("{}\n", fieldset::go_json(&config));
    if let Some(Value::Object(ann)) = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        ann.insert(LAST_APPLIED_ANNOTATION.into(), Value::String(text));
    }
}
