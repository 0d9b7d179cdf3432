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

use std::fmt;
use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::meta::{self, FieldMeta};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Which HTTP answer a patch error maps to, as upstream's
/// `interpretStrategicMergePatchError` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchErrorKind {
    /// 400: a malformed document or directive list.
    BadRequest,
    /// 422: lists of lists.
    Unprocessable,
    /// 500: everything else (upstream passes these errors through as they are).
    Internal,
}

/// A patch that cannot be applied. `message` is upstream's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    pub kind: PatchErrorKind,
    pub message: String,
}

impl PatchError {
    fn new(kind: PatchErrorKind, message: impl Into<String>) -> Self {
        PatchError {
            kind,
            message: message.into(),
        }
    }

    fn internal(message: impl Into<String>) -> Self {
        Self::new(PatchErrorKind::Internal, message)
    }

    /// The HTTP status code upstream answers with.
    pub fn code(&self) -> u16 {
        match self.kind {
            PatchErrorKind::BadRequest => 400,
            PatchErrorKind::Unprocessable => 422,
            PatchErrorKind::Internal => 500,
        }
    }

    fn bad_json_doc() -> Self {
        Self::new(PatchErrorKind::BadRequest, "invalid JSON document")
    }

    fn no_list_of_lists() -> Self {
        Self::new(
            PatchErrorKind::Unprocessable,
            "lists of lists are not supported",
        )
    }

    fn bad_format_primitive_list() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of primitive list",
        )
    }

    fn bad_format_retain_keys() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of retainKeys",
        )
    }

    fn bad_format_set_element_order() -> Self {
        Self::new(
            PatchErrorKind::BadRequest,
            "invalid patch format of setElementOrder list",
        )
    }

    fn no_merge_key(m: &Map<String, Value>, key: &str) -> Self {
        Self::internal(format!(
            "map: {} does not contain declared merge key: {key}",
            go_map(m)
        ))
    }

    fn bad_arg_type(expected: &str, actual: &Value) -> Self {
        Self::internal(format!(
            "expected a {expected}, but received a {}",
            go_type(actual)
        ))
    }

    fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> Self {
        Self::internal(format!(
            "unknown patch type: {} in map: {}",
            go_s(directive),
            go_map(m)
        ))
    }

    fn merging_lists() -> Self {
        Self::internal("merging lists cannot yet be specified in the patch")
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatchError {}

const GO_MAP: &str = "map[string]interface {}";
const GO_SLICE: &str = "[]interface {}";

/// Go's `reflect.TypeOf` of a decoded JSON value, formatted with `%s`.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "%!s(<nil>)",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => GO_SLICE,
        Value::Object(_) => GO_MAP,
    }
}

/// Go's `%v` of a decoded JSON value.
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => go_map(m),
    }
}

/// Go's `%v` of a map: keys sorted.
fn go_map(m: &Map<String, Value>) -> String {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{k}:{}", go_v(v)))
        .collect();
    format!("map[{}]", parts.join(" "))
}

/// Go's `%s` of a decoded JSON value.
fn go_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        other => format!("%!s({}={})", go_type(other), go_v(other)),
    }
}

// ----------------------------------------------------------------- schemas

/// The OpenAPI definitions of every built-in kind, by definition name.
static SCHEMAS: LazyLock<Map<String, Value>> = LazyLock::new(|| {
    let mut g = SchemaSettings::openapi3().into_generator();
    for d in crate::controlplane::builtin::BUILTINS {
        if let Some(schema) = d.schema {
            schema(&mut g);
        }
    }
    // Served by every `scale` subresource.
    g.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
    g.take_definitions(true)
});

/// The definition name of the type a catalog schema function describes
/// (e.g. `io.k8s.api.apps.v1.Deployment`), the `type_name` [`apply`] takes.
pub fn type_name_of(schema: crate::api::catalog::SchemaFn) -> Option<String> {
    // Generating a schema walks the whole type graph: remember the answer.
    static NAMES: std::sync::LazyLock<
        parking_lot::Mutex<std::collections::HashMap<usize, Option<String>>>,
    > = std::sync::LazyLock::new(Default::default);
    let key = schema as usize;
    if let Some(n) = NAMES.lock().get(&key) {
        return n.clone();
    }
    let mut g = SchemaSettings::openapi3().into_generator();
    let s = schema(&mut g);
    let name = s.as_object().and_then(ref_name).map(str::to_string);
    NAMES.lock().insert(key, name.clone());
    name
}

/// Where a value sits in the schema: the (resolved) schema of its type and,
/// for named types, the definition name that keys the patch metadata.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Node {
    pub(crate) name: Option<&'static str>,
    pub(crate) schema: Option<&'static Map<String, Value>>,
}

/// The definition a schema refers to: `$ref`, or a `$ref` wrapped in
/// `allOf`/`anyOf`/`oneOf` (how siblings of a reference are kept).
fn ref_name(s: &Map<String, Value>) -> Option<&str> {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next();
    }
    ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|k| s.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|item| item.as_object().and_then(ref_name))
}

impl Node {
    /// The node of the definition `name`, if kapi has a schema for it.
    pub(crate) fn named(name: &str) -> Option<Node> {
        let (k, v) = SCHEMAS.get_key_value(name)?;
        Some(Node {
            name: Some(k.as_str()),
            schema: v.as_object(),
        })
    }

    fn resolve(schema: Option<&'static Value>) -> Node {
        let Some(obj) = schema.and_then(Value::as_object) else {
            return Node::default();
        };
        match ref_name(obj) {
            Some(name) => Node::named(name).unwrap_or_default(),
            None => Node {
                name: None,
                schema: Some(obj),
            },
        }
    }

    /// The node of `key`'s value, and the patch metadata of that field.
    pub(crate) fn field(&self, key: &str) -> (Node, Option<&'static FieldMeta>) {
        let Some(s) = self.schema else {
            return (Node::default(), None);
        };
        if let Some(p) = s
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.get(key))
        {
            let field_meta = self.name.and_then(|n| meta::lookup(n, key));
            return (Node::resolve(Some(p)), field_meta);
        }
        match s.get("additionalProperties") {
            Some(ap) if ap.is_object() => (Node::resolve(Some(ap)), None),
            _ => (Node::default(), None),
        }
    }

    /// The node of a list's items.
    pub(crate) fn items(&self) -> Node {
        Node::resolve(self.schema.and_then(|s| s.get("items")))
    }

    /// A string-keyed map (`additionalProperties`), not a struct.
    pub(crate) fn is_map(&self) -> bool {
        self.schema.is_some_and(|s| {
            s.get("properties").is_none()
                && s.get("additionalProperties").is_some_and(Value::is_object)
        })
    }

    /// Go's kind name of the type, for messages.
    fn go_kind(&self) -> &'static str {
        let Some(s) = self.schema else {
            return "interface";
        };
        match s.get("type").and_then(Value::as_str) {
            Some("string") => "string",
            Some("integer") => "int64",
            Some("number") => "float64",
            Some("boolean") => "bool",
            Some("array") => "slice",
            _ if self.is_map() => "map",
            _ => "struct",
        }
    }
}

/// Upstream's `extractRetainKeysPatchStrategy`: the strategy besides
/// `retainKeys` (which only enables the `$retainKeys` directive), and the
/// merge key.
fn strategy_of(m: Option<&FieldMeta>) -> Result<(&'static str, &'static str), PatchError> {
    let Some(m) = m else {
        return Ok(("", ""));
    };
    let strategies: Vec<&'static str> = m.patch_strategies().collect();
    let strategy = match strategies.as_slice() {
        [] => "",
        [one] if *one == RETAIN_KEYS_STRATEGY => "",
        [one] => one,
        [a, b] if *a == RETAIN_KEYS_STRATEGY => b,
        [a, b] if *b == RETAIN_KEYS_STRATEGY => a,
        _ => {
            return Err(PatchError::internal(format!(
                "unexpected patch strategy: [{}]",
                strategies.join(" ")
            )))
        }
    };
    Ok((strategy, m.merge_key.unwrap_or("")))
}

// -------------------------------------------------------------------- apply

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

/// Upstream's `mergeMap`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    node: Node,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return match directive.as_str() {
            // The map is replaced by the patch; the patch's own directives
            // apply to nothing.
            Some(REPLACE_DIRECTIVE) => {
                patch.remove(DIRECTIVE_MARKER);
                merge_map(Map::new(), patch, node)
            }
            Some(DELETE_DIRECTIVE) => Ok(Map::new()),
            _ => Err(PatchError::bad_patch_type(directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, node)?;

    // Upstream walks the patch in Go map order; here ordinary keys go
    // first and deletions from primitive lists last, so that a value both
    // added and deleted ends up deleted.
    let mut deletions = Vec::new();
    for (k, v) in patch {
        if k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            deletions.push((k, v));
        } else {
            merge_field(&mut original, k, v, node, false)?;
        }
    }
    for (k, v) in deletions {
        let key = extract_key(&k, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
        merge_field(&mut original, key, v, node, true)?;
    }
    Ok(original)
}

/// Merges one key of the patch into `original` (the body of `mergeMap`'s loop).
fn merge_field(
    original: &mut Map<String, Value>,
    key: String,
    patch_v: Value,
    node: Node,
    delete_list: bool,
) -> Result<(), PatchError> {
    if patch_v.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let (child, field_meta) = node.field(&key);
    let Some(orig_v) = original.remove(&key) else {
        if !delete_list {
            if let Some(v) = new_value(patch_v, child)? {
                original.insert(key, v);
            }
        }
        return Ok(());
    };
    if !same_shape(&orig_v, &patch_v) {
        if delete_list {
            original.insert(key, orig_v);
        } else if let Some(v) = new_value(patch_v, child)? {
            original.insert(key, v);
        }
        return Ok(());
    }
    let (strategy, merge_key) = strategy_of(field_meta)?;
    let merged = match (orig_v, patch_v) {
        (Value::Object(o), Value::Object(p)) => {
            if strategy == REPLACE_DIRECTIVE {
                Value::Object(merge_map(Map::new(), p, child)?)
            } else {
                let deleting =
                    p.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE);
                let m = merge_map(o, p, child)?;
                // Upstream leaves an empty map, which its typed encoding
                // then omits for map-typed fields (`omitempty`).
                if deleting && child.is_map() {
                    return Ok(());
                }
                Value::Object(m)
            }
        }
        (Value::Array(o), Value::Array(p)) => {
            if strategy == MERGE_DIRECTIVE || delete_list {
                Value::Array(merge_slice(o, p, child.items(), merge_key, delete_list)?)
            } else {
                Value::Array(new_list(p, child.items())?)
            }
        }
        (_, p) => p,
    };
    original.insert(key, merged);
    Ok(())
}

/// Both objects, both arrays, or both neither.
fn same_shape(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
    ) || (!a.is_object() && !a.is_array() && !b.is_object() && !b.is_array() && !a.is_null())
}

/// A patch value taking the place of nothing (upstream's `removeDirectives`
/// after `discardNullValuesFromPatch`): nulls in maps are dropped and
/// directives are applied to nothing. `None`: the key is not kept (a map
/// marked `$patch: delete`).
fn new_value(patch: Value, node: Node) -> Result<Option<Value>, PatchError> {
    match patch {
        Value::Object(m) => {
            if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
                return Ok(None);
            }
            Ok(Some(Value::Object(merge_map(Map::new(), m, node)?)))
        }
        Value::Array(items) => Ok(Some(Value::Array(new_list(items, node.items())?))),
        other => Ok(Some(other)),
    }
}

/// A list taking the place of another (or of nothing): items carrying
/// `$patch` are markers and are dropped; the others are cleaned.
fn new_list(items: Vec<Value>, item_node: Node) -> Result<Vec<Value>, PatchError> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Object(m) => {
                if let Some(d) = m.get(DIRECTIVE_MARKER) {
                    match d.as_str() {
                        Some(DELETE_DIRECTIVE | REPLACE_DIRECTIVE) => continue,
                        Some(MERGE_DIRECTIVE) => return Err(PatchError::merging_lists()),
                        _ => return Err(PatchError::bad_patch_type(d, &m)),
                    }
                }
                out.push(Value::Object(merge_map(Map::new(), m, item_node)?));
            }
            Value::Array(a) => out.push(Value::Array(new_list(a, Node::default())?)),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// Upstream's `extractKey`: `<prefix>/<key>` → `key`.
fn extract_key(s: &str, prefix: &str) -> Result<String, PatchError> {
    match s.split_once('/') {
        Some((p, key)) if p == prefix => Ok(key.to_string()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(PatchError::bad_format_primitive_list())
        }
        _ => Err(PatchError::bad_format_set_element_order()),
    }
}

/// Upstream's `applyRetainKeysDirective`: keys of `original` not listed
/// are cleared; every key the patch sets must be listed.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(list) = retain else {
        return Err(PatchError::bad_format_retain_keys());
    };
    let listed = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !listed(k) {
            return Err(PatchError::bad_format_retain_keys());
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// Upstream's `mergePatchIntoOriginal`: each `$setElementOrder/<field>`
/// merges its list now and orders it; the list leaves the patch.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    node: Node,
) -> Result<(), PatchError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order_v) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(set_order) = order_v else {
            return Err(PatchError::bad_arg_type(GO_SLICE, &order_v));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?;
        let orig_list = match original.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(PatchError::bad_arg_type(GO_SLICE, other)),
        };
        let patch_list = match patch.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(other) => return Err(PatchError::bad_arg_type(GO_SLICE, other)),
        };
        let (child, field_meta) = node.field(&field);
        let (strategy, merge_key) = strategy_of(field_meta)?;
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or(&[]),
            &set_order,
            merge_key,
        )?;
        let orig_items = orig_list.clone().unwrap_or_default();
        let patch_items = patch_list.clone().unwrap_or_default();
        let merged = match (orig_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => new_list(p, child.items())?,
            (Some(o), Some(p)) => {
                if strategy == MERGE_DIRECTIVE {
                    merge_slice(o, p, child.items(), merge_key, false)?
                } else {
                    new_list(p, child.items())?
                }
            }
            (None, None) => continue,
        };
        let Some(kind) = element_kind(&[&orig_items, &patch_items])? else {
            // Nothing to order (upstream errors on lists without elements).
            original.insert(field.clone(), Value::Array(merged));
            patch.remove(&field);
            continue;
        };
        let (in_order, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &set_order)
        } else {
            partition_maps(merged, &set_order, merge_key)?
        };
        let both = normalize_element_order(
            in_order,
            server_only,
            &set_order,
            &orig_items,
            merge_key,
            kind,
        )?;
        original.insert(field.clone(), Value::Array(both));
        patch.remove(&field);
    }
    Ok(())
}

/// Upstream's `validatePatchWithSetOrderList`: the patch list's items must
/// appear in the `$setElementOrder` list, in the same relative order.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut pi, mut si) = (0, 0);
    while pi < non_delete.len() && si < set_order.len() {
        if non_delete[pi]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
        {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[pi], &set_order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= set_order.len() {
        return Err(PatchError::internal(format!(
            "the order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}",
            go_v(&Value::Array(patch_list.to_vec())),
            go_v(&Value::Array(set_order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let l = left
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, left))?;
    let r = right
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, right))?;
    let lv = l
        .get(merge_key)
        .ok_or_else(|| PatchError::no_merge_key(l, merge_key))?;
    let rv = r
        .get(merge_key)
        .ok_or_else(|| PatchError::no_merge_key(r, merge_key))?;
    Ok(lv == rv)
}

/// The JSON kinds Go tells apart in a decoded list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::Array,
        Value::Object(_) => Kind::Object,
    }
}

/// Upstream's `sliceElementType`: all items of all lists are of one kind,
/// and not lists. `None`: no items at all.
fn element_kind(lists: &[&[Value]]) -> Result<Option<Kind>, PatchError> {
    let mut kind = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        let k = kind_of(v);
        match kind {
            None => {
                if k == Kind::Array {
                    return Err(PatchError::no_list_of_lists());
                }
                kind = Some(k);
            }
            Some(prev) if prev != k => {
                let all: Vec<String> = lists
                    .iter()
                    .map(|l| go_v(&Value::Array(l.to_vec())))
                    .collect();
                return Err(PatchError::internal(format!(
                    "list element types are not identical: [{}]",
                    all.join(" ")
                )));
            }
            Some(_) => {}
        }
    }
    Ok(kind)
}

/// Upstream's `mergeSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    item_node: Node,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    let Some(kind) = element_kind(&[&original, &patch])? else {
        return Ok(original);
    };
    if kind != Kind::Object {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for v in original.iter().chain(patch.iter()) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        let (in_patch, server_only) = partition_primitives(merged, &patch);
        return normalize_element_order(in_patch, server_only, &patch, &original, merge_key, kind);
    }
    if merge_key.is_empty() {
        return Err(PatchError::internal(format!(
            "cannot merge lists without merge key for type {}",
            item_node.go_kind()
        )));
    }
    let (original, patch) =
        merge_slice_with_special_elements(original, patch, merge_key, item_node)?;
    let merged =
        merge_slice_without_special_elements(original.clone(), &patch, merge_key, item_node)?;
    let (in_patch, server_only) = partition_maps(merged, &patch, merge_key)?;
    normalize_element_order(in_patch, server_only, &patch, &original, merge_key, kind)
}

/// Upstream's `mergeSliceWithSpecialElements`: items marked
/// `$patch: delete` delete their match from `original`; an item marked
/// `$patch: replace` makes the patch's other items the whole list.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    item_node: Node,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for v in patch {
        let Value::Object(m) = &v else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        let Some(directive) = m.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let Some(value) = m.get(merge_key) else {
                    return Err(PatchError::no_merge_key(m, merge_key));
                };
                for (i, o) in original.iter().enumerate() {
                    if !o.is_object() {
                        return Err(PatchError::internal(format!(
                            "value for key {i} is not a map."
                        )));
                    }
                }
                original.retain(|o| o.get(merge_key) != Some(value));
            }
            // Upstream keeps looking, to drop every other `$patch` item.
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => return Err(PatchError::merging_lists()),
            _ => return Err(PatchError::bad_patch_type(directive, m)),
        }
    }
    if replace {
        let mut items = Vec::with_capacity(plain.len());
        for v in plain {
            match v {
                Value::Object(m) => items.push(Value::Object(merge_map(Map::new(), m, item_node)?)),
                other => items.push(other),
            }
        }
        return Ok((items, Vec::new()));
    }
    Ok((original, plain))
}

/// The index of the first map in `list` whose `key` equals `value`.
fn find_map_in_slice(
    list: &[Value],
    key: &str,
    value: &Value,
) -> Result<Option<usize>, PatchError> {
    for (i, v) in list.iter().enumerate() {
        let Some(m) = v.as_object() else {
            return Err(PatchError::internal(format!(
                "value for key {i} is not a map."
            )));
        };
        if m.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Upstream's `mergeSliceWithoutSpecialElements`: each patch item merges
/// into the original item with its merge key, or is appended.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    item_node: Node,
) -> Result<Vec<Value>, PatchError> {
    for v in patch {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, v));
        };
        let Some(value) = m.get(merge_key) else {
            return Err(PatchError::no_merge_key(m, merge_key));
        };
        match find_map_in_slice(&original, merge_key, value)? {
            Some(i) => {
                let orig = match std::mem::take(&mut original[i]) {
                    Value::Object(o) => o,
                    // find_map_in_slice only matches maps.
                    _ => Map::new(),
                };
                original[i] = Value::Object(merge_map(orig, m.clone(), item_node)?);
            }
            None => original.push(Value::Object(merge_map(Map::new(), m.clone(), item_node)?)),
        }
    }
    Ok(original)
}

/// Items of `list` present in `by`, and the others.
fn partition_primitives(list: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    list.into_iter().partition(|v| by.contains(v))
}

/// Items of `list` whose merge key value appears in `by`, and the others.
fn partition_maps(
    list: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut found, mut others) = (Vec::new(), Vec::new());
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        let Some(value) = m.get(merge_key) else {
            return Err(PatchError::no_merge_key(m, merge_key));
        };
        if find_map_in_slice(by, merge_key, value)?.is_some() {
            found.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((found, others))
}

/// Upstream's `normalizeElementOrder`: `patch` sorted by `patch_order`,
/// `server_only` by `server_order`, then the two woven together.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted_slice(
        server_only,
        patch,
        server_order,
        merge_key,
        kind,
    ))
}

/// The position of `v` in `list`: by merge key value for maps, by value
/// otherwise.
fn index_of(list: &[Value], v: &Value, merge_key: &str, kind: Kind) -> Option<usize> {
    if kind == Kind::Object {
        let key_of = |x: &Value| x.as_object().and_then(|m| m.get(merge_key)).cloned();
        let want = key_of(v);
        list.iter().position(|x| key_of(x) == want)
    } else {
        list.iter().position(|x| x == v)
    }
}

fn validate_merge_key_in_lists(merge_key: &str, lists: &[&[Value]]) -> Result<(), PatchError> {
    for item in lists.iter().flat_map(|l| l.iter()) {
        let Some(m) = item.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, item));
        };
        if !m.contains_key(merge_key) {
            return Err(PatchError::no_merge_key(m, merge_key));
        }
    }
    Ok(())
}

/// Items marked `$patch: delete`, apart from the others.
fn extract_to_delete_items(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for v in list {
        let Some(m) = v.as_object() else {
            return Err(PatchError::bad_arg_type(GO_MAP, &v));
        };
        if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}

/// Upstream's `normalizeSliceOrder`: a stable sort by position in `order`
/// (items `order` lacks go last), `$patch: delete` items at the end.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let (mut to_sort, to_delete) = if kind == Kind::Object {
        validate_merge_key_in_lists(merge_key, &[&to_sort, order])?;
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    to_sort.sort_by_key(|v| index_of(order, v, merge_key, kind).unwrap_or(usize::MAX));
    to_sort.extend(to_delete);
    Ok(to_sort)
}

/// Upstream's `mergeSortedSlice`: weaves `left` (server-only items) into
/// `right` (patch items); a left item goes before a right item only when
/// both are in `server_order` and the left one comes first there.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                match (
                    index_of(server_order, l, merge_key, kind),
                    index_of(server_order, r, merge_key, kind),
                ) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests;
