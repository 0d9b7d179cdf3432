//! Strategic merge patch (`application/strategic-merge-patch+json`), applied
//! as upstream's `strategicpatch.StrategicMergePatch` applies it on the
//! server (`MergeParallelList` and `IgnoreUnmatchedNulls` both on).
//!
//! - Maps merge recursively; `null` deletes a key.
//! - Lists are replaced unless the field's patch strategy is `merge`: then
//!   lists of maps merge item by item on the field's merge key, and lists of
//!   primitives are unioned. Items the patch names come first, in the
//!   patch's order, with the live list's other items woven in by their live
//!   order (upstream's `normalizeElementOrder`).
//! - Directives: `$patch: replace|delete` in a map or a list item,
//!   `$retainKeys`, `$setElementOrder/<field>` and
//!   `$deleteFromPrimitiveList/<field>`. No directive key is left in the
//!   result.
//!
//! Field strategies and merge keys come from [`super::meta`]; the type of
//! each field's value comes from the OpenAPI schemas of `k8s-openapi`.
//! Types without a schema get JSON merge patch (RFC 7386).
//!
//! Layout: [`apply`] is here; `map` merges maps (and the `$retainKeys`
//! directive), `list` merges lists, `order` orders merged lists
//! (`$setElementOrder`), `schema` says which strategy and merge key each
//! field has, and `error` holds upstream's error texts.

mod error;
mod list;
mod map;
mod order;
mod schema;

#[cfg(test)]
mod tests;

use serde_json::Value;

pub use error::{PatchError, PatchErrorKind};
pub use schema::type_name_of;
pub(crate) use schema::Node;

use map::merge_map;

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Applies a strategic merge patch to `original` (both JSON objects of the
/// kind whose OpenAPI schema name is `type_name`, e.g.
/// "io.k8s.api.apps.v1.Deployment"), as upstream's
/// strategicpatch.StrategicMergePatch does.
///
/// A `type_name` kapi has no schema for gets JSON merge patch (RFC 7386).
pub fn apply(original: &Value, patch: &Value, type_name: &str) -> Result<Value, PatchError> {
    let Some(node) = Node::named(type_name) else {
        let mut doc = original.clone();
        json_patch::merge(&mut doc, patch);
        return Ok(doc);
    };
    let (Some(o), Some(p)) = (original.as_object(), patch.as_object()) else {
        return Err(PatchError::bad_json_doc());
    };
    merge_map(o.clone(), p.clone(), node).map(Value::Object)
}
