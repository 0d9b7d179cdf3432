//! Field management: `metadata.managedFields` and server-side apply, as
//! upstream's `k8s.io/apimachinery/pkg/util/managedfields` does it over
//! `sigs.k8s.io/structured-merge-diff`.
//!
//! - [`update`] records a create, update or patch: the manager takes the
//!   fields it changed (from everyone else), and fields that went away
//!   leave every manager.
//! - [`apply`] merges an applied configuration into the live object by
//!   schema, removes what the manager applied before and no longer
//!   applies (unless someone else manages it), and fails with
//!   [`Conflicts`] when it would change fields other managers own (unless
//!   forced, when it takes them).
//!
//! Upstream's manager stack, and where each layer lives here:
//!
//! | upstream | here |
//! | --- | --- |
//! | `FieldManager` (decode from the request or the live object, `managedFields: []` resets) | [`update_in`], [`apply_in`] |
//! | `skipNonAppliedManager` (updates of untracked objects stay untracked; the first apply gives existing fields to `before-first-apply`) | same |
//! | `capManagersManager` (at most 10 update entries; older ones merge into `ancient-changes`) | `cap_update_managers` |
//! | `buildManagerInfoManager` (an entry per manager, operation, subresource, and apiVersion for updates) | `managed::ManagerId` |
//! | `managedFieldsUpdater` (times only move when the manager took fields) | `record_update`, [`apply_in`] |
//! | `stripMetaManager` (`apiVersion`, `kind`, `metadata.name` ... never owned) | [`strip_meta`] |
//! | `structuredMergeManager` + reset fields (`status` for the main resource, everything but `status` for `/status`) | [`Scope`] |
//! | `lastAppliedUpdater` (kubectl's last-applied annotation follows `kubectl` applies) | [`apply_in`] |
//! | `IgnoreManagedFieldsTimestampsTransformer` | [`ignore_timestamp_only_changes`] |

mod fieldset;
mod last_applied;
pub mod managed;
mod schema;
mod typed;

use std::collections::HashMap;
use std::fmt;

use serde_json::{json, Map, Value};

pub use fieldset::{FieldSet, Path, PathElement};
use last_applied::{allowed_from_last_applied, has_last_applied, set_last_applied};
pub use managed::{entries_of, ManagedFieldsEntry, Operation};
use managed::{Managed, ManagerId, VersionedSet};
pub use schema::Schema;
use schema::Ty;

/// Update entries kept before the oldest merge into `ancient-changes`.
pub const MAX_UPDATE_MANAGERS: usize = 10;
/// The longest `fieldManager` upstream accepts.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// kubectl's client-side apply annotation.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

const BEFORE_FIRST_APPLY: &str = "before-first-apply";
const ANCIENT_CHANGES: &str = "ancient-changes";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

impl FieldSet {
    /// The fields `v` sets, as structured-merge-diff's `ToFieldSet` computes
    /// them: scalars, atomic lists and maps, list items (`k:`/`v:`, with
    /// their fields), and the keys of string maps; not the structs between.
    pub fn from_value(v: &Value, schema: &Schema) -> FieldSet {
        typed::field_set_of(v, schema.root)
    }

    /// The fields an object of the built-in type `type_name` (any other
    /// name: no schema) would give its manager: [`FieldSet::from_value`]
    /// less what no one manages ([`strip_meta`]).
    pub fn from_object(v: &Value, type_name: &str) -> FieldSet {
        strip_meta(&Self::from_value(v, &Schema::for_type(type_name)))
    }
}

/// The set without what upstream's `stripMetaManager` keeps out of every
/// manager's set: `apiVersion`, `kind`, `metadata` itself and its
/// `name`, `namespace`, `creationTimestamp`, `selfLink`, `uid`,
/// `clusterName`, `generation`, `managedFields` and `resourceVersion`.
pub fn strip_meta(set: &FieldSet) -> FieldSet {
    // The same set on every write: built once.
    static STRIP: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(meta_fields);
    set.difference(&STRIP)
}

/// The fields no manager owns: type meta and the server-set metadata.
fn meta_fields() -> FieldSet {
    let mut strip = FieldSet::new();
    strip.insert(&[PathElement::field("apiVersion")]);
    strip.insert(&[PathElement::field("kind")]);
    strip.insert(&[PathElement::field("metadata")]);
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        strip.insert(&[PathElement::field("metadata"), PathElement::field(f)]);
    }
    strip
}

// ------------------------------------------------------------------ scope

/// Where a write happens: the object's schema, the subresource, and so
/// the fields its strategy resets (upstream's `GetResetFields`), which no
/// manager of the write gets or takes.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub schema: Schema<'a>,
    /// The request's subresource, "" for the resource itself.
    pub subresource: &'a str,
    /// The resource has a status subresource: writes to the resource do
    /// not manage `status`, and writes to `/status` manage only `status`.
    pub status_subresource: bool,
    /// The operation's time (RFC 3339, seconds); the clock's when `None`.
    pub now: Option<&'a str>,
}

impl<'a> Scope<'a> {
    /// A scope whose status subresource is inferred from the schema (a
    /// built-in kind with a `status` field has one).
    pub fn new(schema: Schema<'a>, subresource: &'a str) -> Self {
        Scope {
            schema,
            subresource,
            status_subresource: schema.has_status(),
            now: None,
        }
    }

    /// [`Scope::new`] of a built-in type by OpenAPI definition name; any
    /// other name (custom resources) is untyped.
    pub fn for_type(type_name: &str, subresource: &'a str) -> Self {
        Scope::new(Schema::for_type(type_name), subresource)
    }

    fn now(&self) -> String {
        match self.now {
            Some(t) => t.to_string(),
            None => crate::api::meta::now_rfc3339(),
        }
    }

    fn status_set() -> &'static FieldSet {
        static STATUS: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
            let mut s = FieldSet::new();
            s.insert(&[PathElement::field("status")]);
            s
        });
        &STATUS
    }

    /// The fields a manager of this write may own.
    fn filter(&self, set: FieldSet) -> FieldSet {
        match self.subresource {
            "status" => set.under(Self::status_set()),
            "" if self.status_subresource => set.recursive_difference(Self::status_set()),
            _ => set,
        }
    }

    fn filter_comparison(&self, c: typed::Comparison) -> typed::Comparison {
        typed::Comparison {
            added: self.filter(c.added),
            modified: self.filter(c.modified),
            removed: self.filter(c.removed),
        }
    }
}

// ----------------------------------------------------------------- update

/// Records an update (create when `live_old` is `None`, update, or a
/// non-apply patch) by `manager` at `operation_version` (`apps/v1`) on
/// `subresource` ("" for the resource) of an object of the built-in type
/// `type_name` (anything else: untyped). Returns `new` with
/// `metadata.managedFields` set. See [`update_in`].
pub fn update(
    live_old: Option<&Value>,
    new: &Value,
    manager: &str,
    operation_version: &str,
    subresource: &str,
    type_name: &str,
) -> Value {
    update_in(
        &Scope::for_type(type_name, subresource),
        live_old,
        new,
        manager,
        operation_version,
    )
}

/// [`update`] in a given scope. As upstream's `FieldManager.Update`:
///
/// - the managed fields come from `new` when it has valid ones (clients
///   may edit them), else from `live_old`; on a subresource always from
///   `live_old`; `managedFields: []` (or `[{}]`) starts afresh;
/// - an existing object without managed fields stays untracked;
/// - the manager's Update entry (per manager, API version and
///   subresource) gains the fields that were added or changed, which
///   every other manager loses; removed fields leave every manager;
/// - the entry's time moves only when it gained fields; empty entries go.
pub fn update_in(
    scope: &Scope,
    live_old: Option<&Value>,
    new: &Value,
    manager: &str,
    api_version: &str,
) -> Value {
    update_owned(scope, live_old, new.clone(), manager, api_version)
}

/// [`update_in`] of an object the caller gives up (the write path's own),
/// which is changed in place rather than copied.
pub fn update_owned(
    scope: &Scope,
    live_old: Option<&Value>,
    mut new_obj: Value,
    manager: &str,
    api_version: &str,
) -> Value {
    let manager = if manager.is_empty() {
        "unknown"
    } else {
        manager
    };
    let ty = scope.schema.root;
    let live_managed = || {
        live_old
            .and_then(|l| Managed::of(l).ok())
            .unwrap_or_default()
    };
    let managed = if !scope.subresource.is_empty() {
        live_managed()
    } else if is_reset_managed_fields(&new_obj) {
        Managed::default()
    } else {
        match Managed::of(&new_obj) {
            Ok(m) if !m.fields.is_empty() => m,
            _ => live_managed(),
        }
    };
    remove_managed_fields(&mut new_obj);
    if managed.fields.is_empty() && live_old.is_some() {
        return new_obj;
    }
    let live = match live_old {
        Some(l) => {
            let mut l = l.clone();
            remove_managed_fields(&mut l);
            l
        }
        None => zero_object(ty),
    };
    let managed = record_update(scope, &live, &new_obj, managed, manager, api_version);
    managed.write_to(&mut new_obj);
    new_obj
}

/// The managed fields after `manager` changed `live` into `new`.
fn record_update(
    scope: &Scope,
    live: &Value,
    new: &Value,
    mut managed: Managed,
    manager: &str,
    api_version: &str,
) -> Managed {
    let ty = scope.schema.root;
    let cmp = scope.filter_comparison(typed::compare(live, new, ty));
    // Gathered in place, and (as on a create) not copied when nothing was
    // removed.
    let mut changed = cmp.added;
    changed.extend(&cmp.modified);
    for vs in managed.fields.values_mut() {
        vs.set = vs.set.difference(&changed).difference(&cmp.removed);
    }
    managed.fields.retain(|_, vs| !vs.set.is_empty());
    let mine = if cmp.removed.is_empty() {
        strip_meta(&changed)
    } else {
        strip_meta(&changed.difference(&cmp.removed))
    };
    if !mine.is_empty() {
        let id = ManagerId::new(manager, Operation::Update, api_version, scope.subresource);
        let set = match managed.fields.get(&id) {
            Some(prev) => mine.union(&prev.set),
            None => mine,
        };
        managed.fields.insert(
            id.clone(),
            VersionedSet {
                set,
                api_version: api_version.to_string(),
                applied: false,
            },
        );
        managed.times.insert(id, Some(scope.now()));
    }
    cap_update_managers(&mut managed);
    managed
}

/// Upstream's `capManagersManager`: with more than
/// [`MAX_UPDATE_MANAGERS`] update entries, the oldest merge into one
/// `ancient-changes` entry per API version.
fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<ManagerId> = managed
        .fields
        .iter()
        .filter(|(_, vs)| !vs.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let seconds = |id: &ManagerId| {
        managed
            .times
            .get(id)
            .cloned()
            .flatten()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.timestamp())
            .unwrap_or(0)
    };
    updaters.sort_by(|a, b| {
        seconds(a)
            .cmp(&seconds(b))
            .then_with(|| a.identifier().cmp(&b.identifier()))
    });
    let mut first_of_version: HashMap<String, ManagerId> = HashMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(vs) = managed.fields.get(&id).cloned() else {
            continue;
        };
        let time = managed.times.get(&id).cloned().flatten();
        let bucket = ManagerId::new(ANCIENT_CHANGES, Operation::Update, &vs.api_version, "");
        match first_of_version.get(&vs.api_version) {
            // (Upstream would merge the bucket into itself and drop it.)
            Some(_) if id == bucket => {}
            Some(first) => {
                if !managed.fields.contains_key(&bucket) {
                    if let Some(s) = managed.fields.remove(first) {
                        managed.fields.insert(bucket.clone(), s);
                    }
                }
                let merged = managed
                    .fields
                    .get(&bucket)
                    .map(|b| b.set.union(&vs.set))
                    .unwrap_or_else(|| vs.set.clone());
                managed.fields.insert(
                    bucket.clone(),
                    VersionedSet {
                        set: merged,
                        api_version: vs.api_version.clone(),
                        applied: vs.applied,
                    },
                );
                managed.fields.remove(&id);
                length -= 1;
                managed.times.insert(bucket, time);
            }
            None => {
                first_of_version.insert(vs.api_version.clone(), id);
            }
        }
    }
}

// ------------------------------------------------------------------ apply

/// One field another manager owns that an apply would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    pub operation: Operation,
    /// The manager's API version (updaters only).
    pub api_version: String,
    pub subresource: String,
    /// As upstream prints paths: `.spec.replicas`,
    /// `.spec.template.spec.containers[name="nginx"].image`.
    pub field: String,
}

impl Conflict {
    /// Upstream's `printManager`: `"m"`, `"m" with subresource "status"`,
    /// and ` using <apiVersion>` for updaters.
    pub fn manager_text(&self) -> String {
        let mut s = fieldset::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s = format!(
                "{s} with subresource {}",
                fieldset::go_quote(&self.subresource)
            );
        }
        if self.operation == Operation::Update {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

/// The conflicts of an apply (HTTP 409).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// Upstream's `getConflictMessage`.
    pub fn to_status_message(&self) -> String {
        if let [one] = self.0.as_slice() {
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                one.manager_text(),
                one.field
            );
        }
        // Grouped by manager, in the order conflicts are listed (by
        // manager identifier).
        let mut lines: Vec<String> = Vec::new();
        let mut last: Option<String> = None;
        for c in &self.0 {
            let m = c.manager_text();
            if last.as_ref() != Some(&m) {
                lines.push(format!("conflicts with {m}:"));
                last = Some(m);
            }
            lines.push(format!("- {}", c.field));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            self.0.len(),
            lines.join("\n")
        )
    }

    /// The Status `details.causes`.
    pub fn causes(&self) -> Vec<Value> {
        self.0
            .iter()
            .map(|c| {
                json!({
                    "reason": "FieldManagerConflict",
                    "message": format!("conflict with {}", c.manager_text()),
                    "field": c.field,
                })
            })
            .collect()
    }

    /// The whole 409 Status body.
    pub fn to_status(&self) -> Value {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_status_message(),
            "reason": "Conflict",
            "details": {"causes": self.causes()},
            "code": 409,
        })
    }
}

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_status_message())
    }
}

impl std::error::Error for Conflicts {}

/// Why an apply failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// 409: fields other managers own would change.
    Conflicts(Conflicts),
    /// 400: e.g. `metadata.managedFields must be nil`.
    BadRequest(String),
    /// 500 upstream: the configuration does not fit the schema (an item
    /// of a map list without its key, a repeated key, ...), or the live
    /// managed fields do not decode.
    Internal(String),
}

impl ApplyError {
    pub fn code(&self) -> u16 {
        match self {
            ApplyError::Conflicts(_) => 409,
            ApplyError::BadRequest(_) => 400,
            ApplyError::Internal(_) => 500,
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApplyError::Conflicts(c) => c.to_status_message(),
            ApplyError::BadRequest(m) | ApplyError::Internal(m) => m.clone(),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ApplyError {}

impl From<Conflicts> for ApplyError {
    fn from(c: Conflicts) -> Self {
        ApplyError::Conflicts(c)
    }
}

/// Server-side apply of `applied` by `manager` to `live` (`None`: the
/// object is created) of the built-in type `type_name` (anything else:
/// untyped) on the resource itself. See [`apply_in`].
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    type_name: &str,
) -> Result<Value, ApplyError> {
    apply_in(
        &Scope::for_type(type_name, ""),
        live,
        applied,
        manager,
        force,
    )
}

/// [`apply`] in a given scope. As upstream's `FieldManager.Apply`:
///
/// - `applied` must not carry `metadata.managedFields`;
/// - an existing object without managed fields first gives its fields to
///   `before-first-apply` (an Update entry);
/// - `applied` is merged into the live object by schema (maps merge,
///   `map` lists merge by key, `set` lists union, atomic lists and maps
///   and scalars take the applied value);
/// - fields the manager applied last time and no longer applies are
///   removed, unless some manager (this one included) still owns them;
/// - a field that would change (or appear) and that another manager owns
///   is a conflict; with `force` the manager takes it from them; fields
///   the apply removes leave every other manager;
/// - the manager's Apply entry (per manager and subresource; its
///   apiVersion is `applied`'s) becomes the fields of `applied`, and its
///   time moves.
///
/// Returns the merged object with `metadata.managedFields` set; the
/// registry then defaults, validates and stores it as for any update.
pub fn apply_in(
    scope: &Scope,
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApplyError> {
    let ty = scope.schema.root;
    if !applied.is_object() {
        return Err(ApplyError::BadRequest(
            "the applied configuration must be an object".into(),
        ));
    }
    if applied
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|mf| !mf.is_null())
    {
        return Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".into(),
        ));
    }
    let manager = if manager.is_empty() {
        "unknown"
    } else {
        manager
    };
    let api_version = applied
        .get("apiVersion")
        .and_then(Value::as_str)
        .or_else(|| {
            live.and_then(|l| l.get("apiVersion"))
                .and_then(Value::as_str)
        })
        .unwrap_or("")
        .to_string();

    // A create starts from nothing (upstream's empty Go object adds only
    // zero values, and no manager owns anything yet).
    let mut live_obj = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    let mut managed = Managed::of(&live_obj)
        .map_err(|e| ApplyError::Internal(format!("failed to decode managed fields: {e}")))?;
    remove_managed_fields(&mut live_obj);
    if managed.fields.is_empty() && live.is_some() {
        managed = record_update(
            scope,
            &zero_object(ty),
            &live_obj,
            managed,
            BEFORE_FIRST_APPLY,
            &api_version,
        );
    }

    let config_set = typed::to_field_set(applied, ty, true).map_err(|errs| {
        ApplyError::Internal(if let [one] = errs.as_slice() {
            one.clone()
        } else {
            format!("errors:\n  {}", errs.join("\n  "))
        })
    })?;
    let id = ManagerId::new(manager, Operation::Apply, "", scope.subresource);
    let merged = typed::merge(&live_obj, applied, ty);
    let last = managed.fields.get(&id).cloned();
    managed.fields.insert(
        id.clone(),
        VersionedSet {
            set: scope.filter(config_set),
            api_version: api_version.clone(),
            applied: true,
        },
    );
    let merged = prune(merged, &managed, last.as_ref(), ty);

    let cmp = scope.filter_comparison(typed::compare(&live_obj, &merged, ty));
    let changed = cmp.modified.union(&cmp.added);
    let conflicts: Vec<(ManagerId, FieldSet)> = managed
        .fields
        .iter()
        .filter(|(m, _)| **m != id)
        .map(|(m, vs)| (m.clone(), vs.set.intersection(&changed)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    // Upstream's lastAppliedManager: kubectl moving an object from
    // client-side to server-side apply takes, without force, the fields
    // its last-applied-configuration still describes as they are.
    let mut blocking: Vec<(ManagerId, FieldSet)> =
        if force { Vec::new() } else { conflicts.clone() };
    if !blocking.is_empty() && manager == "kubectl" {
        if let Some(allowed) = live.and_then(|l| allowed_from_last_applied(l, &live_obj, ty)) {
            for (_, c) in blocking.iter_mut() {
                *c = c.difference(&allowed);
            }
            blocking.retain(|(_, c)| !c.is_empty());
        }
    }
    if !blocking.is_empty() {
        blocking.sort_by_key(|(m, _)| m.identifier());
        let list = blocking
            .iter()
            .flat_map(|(m, set)| {
                set.paths().into_iter().map(move |p| Conflict {
                    manager: m.manager.clone(),
                    operation: m.operation,
                    api_version: m.api_version.clone(),
                    subresource: m.subresource.clone(),
                    field: p.to_string(),
                })
            })
            .collect();
        return Err(ApplyError::Conflicts(Conflicts(list)));
    }
    for (m, c) in &conflicts {
        if let Some(vs) = managed.fields.get_mut(m) {
            vs.set = vs.set.difference(c);
        }
    }
    if !cmp.removed.is_empty() {
        for (m, vs) in managed.fields.iter_mut() {
            if *m != id {
                vs.set = vs.set.difference(&cmp.removed);
            }
        }
    }
    if let Some(vs) = managed.fields.get_mut(&id) {
        vs.set = strip_meta(&vs.set);
    }
    managed.fields.retain(|_, vs| !vs.set.is_empty());
    managed.times.insert(id, Some(scope.now()));

    let mut out = merged;
    strip_applied_nulls(&mut out, applied);
    managed.write_to(&mut out);
    if manager == "kubectl" && has_last_applied(&out) {
        set_last_applied(&mut out, applied);
    }
    Ok(out)
}

/// Upstream's `Updater.prune`: removes what the manager applied last time
/// (`last`) and no longer applies, unless a manager (the applier's new
/// configuration included) owns it; struct fields count as owned when
/// anything under them is.
fn prune(merged: Value, managed: &Managed, last: Option<&VersionedSet>, ty: Ty) -> Value {
    let Some(last) = last.filter(|l| !l.set.is_empty()) else {
        return merged;
    };
    let named = |s: &FieldSet| typed::ensure_named_fields(s, ty);
    let last_named = named(&last.set);
    let pruned = typed::remove_items(&merged, &last_named, ty);

    // Add back what some manager owns.
    let owned = managed
        .fields
        .values()
        .fold(FieldSet::new(), |acc, vs| acc.union(&vs.set));
    let merged_set = named(&typed::field_set_of(&merged, ty));
    let pruned_set = named(&typed::field_set_of(&pruned, ty));
    let pruned = typed::remove_items(
        &merged,
        &merged_set.difference(&pruned_set.union(&named(&owned))),
        ty,
    );

    // Add back what the manager did not own last time.
    let pruned_set = named(&typed::field_set_of(&pruned, ty));
    typed::remove_items(
        &merged,
        &merged_set.difference(&pruned_set).intersection(&last_named),
        ty,
    )
}

/// Map entries the configuration set to null are left out of the result,
/// as upstream's typed round trip leaves them out.
fn strip_applied_nulls(obj: &mut Value, applied: &Value) {
    let (Value::Object(o), Value::Object(a)) = (obj, applied) else {
        return;
    };
    for (k, av) in a {
        if av.is_null() {
            if o.get(k).is_some_and(Value::is_null) {
                o.remove(k);
            }
        } else if let Some(ov) = o.get_mut(k) {
            strip_applied_nulls(ov, av);
        }
    }
}

// ---------------------------------------------------------------- helpers

fn remove_managed_fields(obj: &mut Value) {
    if let Some(Value::Object(m)) = obj.get_mut("metadata") {
        m.remove("managedFields");
    }
}

/// `managedFields: []` or `[{}]` in a request: start afresh.
fn is_reset_managed_fields(obj: &Value) -> bool {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        Some(Value::Array(a)) => match a.as_slice() {
            [] => true,
            [one] => one.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}

/// Struct fields that Go holds by value, below a kind's `spec`: present
/// (as `{}`) in an empty object, so a create does not add them as a whole.
const VALUE_STRUCT_FIELDS: &[(&str, &str)] = &[
    ("io.k8s.api.apps.v1.DaemonSetSpec", "template"),
    ("io.k8s.api.apps.v1.DaemonSetSpec", "updateStrategy"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "strategy"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "template"),
    ("io.k8s.api.apps.v1.ReplicaSetSpec", "template"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "template"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "updateStrategy"),
    ("io.k8s.api.batch.v1.CronJobSpec", "jobTemplate"),
    ("io.k8s.api.batch.v1.JobSpec", "template"),
    ("io.k8s.api.batch.v1.JobTemplateSpec", "metadata"),
    ("io.k8s.api.batch.v1.JobTemplateSpec", "spec"),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "resources"),
    ("io.k8s.api.core.v1.PodTemplate", "template"),
    ("io.k8s.api.core.v1.PodTemplateSpec", "metadata"),
    ("io.k8s.api.core.v1.PodTemplateSpec", "spec"),
];

/// The empty object a create starts from, as upstream's (a new Go object
/// of the kind, converted to JSON): value structs as `{}`, required lists
/// and pointers as null, `creationTimestamp: null`.
fn zero_object(ty: Ty) -> Value {
    // Built once per kind: every create compares against it.
    static ZERO: std::sync::LazyLock<parking_lot::RwLock<std::collections::HashMap<usize, Value>>> =
        std::sync::LazyLock::new(Default::default);
    match ty {
        Ty::Builtin(node, _) => {
            let key = node.schema.map_or(0, |s| std::ptr::from_ref(s) as usize);
            if let Some(zero) = ZERO.read().get(&key) {
                return zero.clone();
            }
            let zero = zero_struct(node, true);
            ZERO.write().insert(key, zero.clone());
            zero
        }
        _ => Value::Object(Map::new()),
    }
}

fn zero_struct(node: crate::registry::patch::strategic::Node, root: bool) -> Value {
    let mut out = Map::new();
    let name = node.name.unwrap_or("");
    if name == OBJECT_META {
        out.insert("creationTimestamp".into(), Value::Null);
        return Value::Object(out);
    }
    let Some(s) = node.schema else {
        return Value::Object(out);
    };
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = s.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for field in props.keys() {
        let (child, _) = node.field(field);
        let is_struct = child
            .schema
            .is_some_and(|c| c.get("properties").is_some_and(Value::is_object));
        let by_value = (root && matches!(field.as_str(), "metadata" | "spec" | "status"))
            || VALUE_STRUCT_FIELDS.contains(&(name, field.as_str()));
        if by_value && is_struct {
            out.insert(field.clone(), zero_struct(child, false));
        } else if required.contains(&field.as_str()) {
            let is_list = child
                .schema
                .and_then(|c| c.get("type"))
                .and_then(Value::as_str)
                == Some("array");
            if is_list || is_struct {
                out.insert(field.clone(), Value::Null);
            }
        }
    }
    Value::Object(out)
}

/// The manager of a request without `fieldManager`: the user agent up to
/// its first `/`, printable characters only, at most
/// [`FIELD_MANAGER_MAX_LENGTH`] bytes (upstream's `prefixFromUserAgent`).
pub fn manager_from_user_agent(ua: &str) -> String {
    let prefix = ua.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars() {
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            continue;
        }
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// `fieldManager` if given, else [`manager_from_user_agent`].
pub fn manager_or_user_agent(field_manager: Option<&str>, ua: &str) -> String {
    match field_manager {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => manager_from_user_agent(ua),
    }
}

/// Upstream's `ValidateFieldManager`: the `fieldManager` query parameter
/// is at most 128 bytes of printable characters. The error is the
/// message of the 422 cause on `fieldManager`.
pub fn validate_field_manager(m: &str) -> Result<(), String> {
    if m.len() > FIELD_MANAGER_MAX_LENGTH {
        return Err(format!(
            "Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
        ));
    }
    if m.chars()
        .any(|c| c.is_control() || (c.is_whitespace() && c != ' '))
    {
        return Err(format!(
            "Invalid value: {}: must only contain printable characters",
            fieldset::go_quote(m)
        ));
    }
    Ok(())
}

/// Upstream's `IgnoreManagedFieldsTimestampsTransformer`: when an update
/// changes nothing but the times of managed fields entries, `new` gets
/// `old`'s managed fields back, so that a no-op write (an apply of the same
/// configuration) stores nothing new. `metadata.resourceVersion` is not
/// compared.
pub fn ignore_timestamp_only_changes(new: &mut Value, old: &Value) {
    let mf = |v: &Value| {
        v.get("metadata")
            .and_then(|m| m.get("managedFields"))
            .cloned()
    };
    let (Some(Value::Array(old_mf)), Some(Value::Array(new_mf))) = (mf(old), mf(new)) else {
        return;
    };
    if old_mf.len() != new_mf.len() {
        return;
    }
    let without_time = |e: &Value| {
        let mut e = e.clone();
        if let Value::Object(m) = &mut e {
            m.remove("time");
        }
        e
    };
    if old_mf
        .iter()
        .zip(new_mf.iter())
        .any(|(a, b)| without_time(a) != without_time(b))
    {
        return;
    }
    let mut candidate = new.clone();
    if let Some(Value::Object(m)) = candidate.get_mut("metadata") {
        m.insert("managedFields".into(), Value::Array(old_mf));
    }
    let without_rv = |v: &Value| {
        let mut v = v.clone();
        if let Some(Value::Object(m)) = v.get_mut("metadata") {
            m.remove("resourceVersion");
        }
        v
    };
    if without_rv(&candidate) == without_rv(old) {
        *new = candidate;
    }
}

#[cfg(test)]
mod tests;
