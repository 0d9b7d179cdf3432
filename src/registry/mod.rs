//! The generic registry (upstream's `genericregistry.Store`): every verb
//! written once over storage, the watch cache and a resource's strategy.
//! Each stage of the write path is a named step: decode, default, prepare,
//! admit, validate, encode, store.

pub mod admissionregistration;
pub mod apiregistration;
pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod conversion;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod events;
pub mod eviction;
pub mod fieldmanager;
pub mod flowcontrol;
pub mod graceful;
pub mod helpers;
pub mod ipaddress;
pub mod meta;
pub mod networking;
pub mod node;
pub mod patch;
pub mod pod_resize;
pub mod policy;
pub mod rbac;
pub mod resource;
pub mod reviews;
pub mod scheduling;
pub mod storage_kinds;
pub mod strategy;
pub mod validation;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::RwLock;
use serde_json::{json, Value};

use crate::admission;
use crate::api::catalog::{Catalog, Resource};
use crate::api::selector::{FieldSelector, LabelSelector};
use crate::api::status::qualified_kind;
use crate::api::ApiError;
use crate::storage::cacher::{
    AttrsFn, CacheWatch, Cacher, Filter, ObjectAttrs, WatchOptions, WatchStart,
};
use crate::storage::cacher_set::CacherSet;
use crate::storage::store::{
    self, ListOptions, Preconditions, RvMatch, StorageError, Store, CONFLICT_MODIFIED,
};
use crate::trace;
use validation::FieldError;

/// `fieldValidation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// Options every write takes.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    /// The client's User-Agent: names the field manager when `fieldManager` is unset.
    pub user_agent: Option<String>,
    /// `force` of an apply patch.
    pub force: bool,
    /// Set by the registry when server-side apply already recorded managedFields.
    pub force_applied: bool,
    /// Who is writing, for admission (controllers write as nobody in particular).
    pub user: crate::auth::UserInfo,
}

impl WriteOptions {
    /// The field manager recording this write (upstream's default from the User-Agent).
    pub fn manager(&self) -> String {
        // kapi's own writes (bootstrap objects, built-in controllers) come
        // from no client; upstream's come from its loopback client, whose
        // User-Agent names it kube-apiserver.
        let internal = self.user_agent.is_none() && self.user.name.is_empty();
        fieldmanager::manager_or_user_agent(
            self.field_manager.as_deref(),
            if internal {
                "kube-apiserver"
            } else {
                self.user_agent.as_deref().unwrap_or("")
            },
        )
    }
}

/// What a write returns: the object as stored, and warnings for the client.
#[derive(Debug, Clone)]
pub struct Written {
    pub object: Bytes,
    pub warnings: Vec<String>,
    /// The write created the object (an apply of something new): 201.
    pub created: bool,
}

/// The patch formats kapi accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    Apply,
}

/// `DeleteOptions` that change what a delete does.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub preconditions: Preconditions,
    pub propagation_policy: Option<String>,
    pub dry_run: bool,
    /// As the client sent it (negative means 1 s, as upstream); only kinds
    /// deleted gracefully (pods) heed it.
    pub grace_period_seconds: Option<i64>,
    /// Who is deleting, for admission.
    pub user: crate::auth::UserInfo,
}

/// What a delete's first step decided (see `Registry::mark_for_deletion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeleteMark {
    /// A graceful deletion already runs; nothing changes.
    Pending,
    /// Marked and kept: by finalizers or a running grace period.
    Kept,
    /// Marked with no grace period left and nothing keeping it: removed next.
    GraceOver,
    /// Nothing to mark: removed at once.
    DeleteNow,
}

/// A list request's selection and paging.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: i64,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

/// A list as bytes: each item is an object's JSON.
#[derive(Debug, Default)]
pub struct ListOut {
    pub items: Vec<Bytes>,
    /// The watch cache's objects behind `items`, when `items` are their
    /// JSON unchanged (no conversion): their protobuf form is kept there.
    pub cached: Vec<Arc<crate::storage::cacher::CachedObject>>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

/// Resources that hold something outside their object (ClusterIPs, node
/// ports) take and give it back around create and delete, as upstream's
/// REST decorators around the generic store do.
#[async_trait::async_trait]
pub trait Allocator: Send + Sync {
    /// Fills in what the object gets allocated; on error nothing stays taken.
    async fn allocate(&self, obj: &mut Value, dry_run: bool) -> Result<(), ApiError>;
    /// Gives back what a deleted object (or a failed create) held.
    async fn release(&self, obj: &Value);
}

/// All registries, created on first use from the catalog.
#[derive(Clone)]
pub struct Registries {
    pub catalog: Catalog,
    pub cachers: CacherSet,
    prefix: String,
    by_gvr: Arc<RwLock<HashMap<(String, String, String), Arc<Registry>>>>,
    allocators: Arc<RwLock<HashMap<(String, String), Arc<dyn Allocator>>>>,
    admission: Arc<RwLock<admission::Chain>>,
}

impl Registries {
    pub fn new(catalog: Catalog, cachers: CacherSet, prefix: String) -> Self {
        Registries {
            catalog,
            cachers,
            prefix,
            by_gvr: Arc::default(),
            allocators: Arc::default(),
            admission: Arc::default(),
        }
    }

    /// Installs the admission chain every write goes through.
    pub fn set_admission(&self, chain: admission::Chain) {
        *self.admission.write() = chain;
    }

    /// Adds an always-on validating plugin to the installed chain.
    pub fn add_validating_admission(&self, plugin: Arc<dyn admission::ValidatingPlugin>) {
        let mut chain = self.admission.write();
        *chain = chain.clone().with_validating(plugin);
    }

    /// The mutating admission plugins, in order.
    pub async fn admit(
        &self,
        attrs: &mut admission::Attributes<'_>,
    ) -> Result<Vec<String>, ApiError> {
        let chain = self.admission.read().clone();
        chain
            .admit(
                attrs,
                &admission::Context {
                    registries: self.clone(),
                },
            )
            .await
    }

    /// The validating admission plugins, in order.
    pub async fn validate_admission(
        &self,
        attrs: &admission::Attributes<'_>,
    ) -> Result<Vec<String>, ApiError> {
        let chain = self.admission.read().clone();
        chain
            .validate(
                attrs,
                &admission::Context {
                    registries: self.clone(),
                },
            )
            .await
    }

    /// Registers the allocator of a kind (group, kind).
    pub fn set_allocator(&self, group: &str, kind: &str, a: Arc<dyn Allocator>) {
        self.allocators
            .write()
            .insert((group.to_string(), kind.to_string()), a);
    }

    fn allocator(&self, group: &str, kind: &str) -> Option<Arc<dyn Allocator>> {
        self.allocators
            .read()
            .get(&(group.to_string(), kind.to_string()))
            .cloned()
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn store(&self) -> &Store {
        self.cachers.store()
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Registry>> {
        let key = (group.to_string(), version.to_string(), plural.to_string());
        if let Some(r) = self.by_gvr.read().get(&key) {
            return Some(r.clone());
        }
        let resource = self.catalog.get_stored(group, version, plural)?;
        let reg = Arc::new(Registry::new(resource, self.clone()));
        self.by_gvr.write().insert(key, reg.clone());
        Some(reg)
    }

    /// Forgets a registry (a CRD went away).
    pub fn forget(&self, group: &str, version: &str, plural: &str) {
        self.by_gvr
            .write()
            .remove(&(group.to_string(), version.to_string(), plural.to_string()));
    }
}

pub struct Registry {
    pub resource: Arc<Resource>,
    pub strategy: strategy::StrategyRef,
    registries: Registries,
    /// `<prefix>/<storage path>/`
    key_root: String,
    cacher: Option<Arc<Cacher>>,
    /// A custom resource whose schema has defaults: apply them on reads too.
    defaults_on_read: bool,
    /// The revision of the last write to this resource the server
    /// acknowledged (see [`Registry::fresh_rv`]).
    written: Arc<std::sync::atomic::AtomicI64>,
}

/// Label and field values of an object, for selectors.
fn attrs_fn(selectable: Vec<String>, namespaced: bool) -> AttrsFn {
    Arc::new(move |v: &Value| {
        let mut a = ObjectAttrs::default();
        if let Some(l) = v["metadata"]["labels"].as_object() {
            for (k, val) in l {
                a.labels
                    .insert(k.clone(), val.as_str().unwrap_or("").to_string());
            }
        }
        a.fields.insert(
            "metadata.name".into(),
            v["metadata"]["name"].as_str().unwrap_or("").to_string(),
        );
        if namespaced {
            a.fields.insert(
                "metadata.namespace".into(),
                v["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        for f in &selectable {
            a.fields.insert(f.clone(), field_value(v, f));
        }
        a
    })
}

/// A selectable field's value as a string, as upstream's field sets hold them.
pub fn field_value(v: &Value, path: &str) -> String {
    let path = match path {
        "source" => "source.component",
        // A legacy alias upstream still accepts.
        "name" => "metadata.name",
        other => other,
    };
    let mut cur = v;
    for part in path.split('.') {
        cur = &cur[part];
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a
            .first()
            .map(|x| x["ip"].as_str().or(x.as_str()).unwrap_or("").to_string())
            .unwrap_or_default(),
        // Go's field sets print a plain (non-pointer) field's zero value
        // when the object leaves it out: a Node without `unschedulable`
        // matches `spec.unschedulable=false`.
        _ => match path {
            "spec.unschedulable" | "spec.hostNetwork" => "false".into(),
            "status.replicas" | "status.successful" => "0".into(),
            _ => String::new(),
        },
    }
}

/// A storage error as the API answers it. `op` names the verb for upstream's
/// ServerTimeout message when storage cannot be reached.
fn storage_err(r: &Resource, op: &str, name: &str, e: StorageError) -> ApiError {
    match e {
        StorageError::NotFound { .. } => ApiError::not_found(&r.group, &r.plural, name),
        StorageError::KeyExists { .. } => ApiError::already_exists(&r.group, &r.plural, name),
        StorageError::Conflict { message, .. } => {
            ApiError::conflict(&r.group, &r.plural, name, &message)
        }
        StorageError::Expired(m) => ApiError::expired(m),
        StorageError::ExpiredContinue {
            message,
            continue_token,
        } => ApiError {
            continue_token: Some(continue_token),
            ..ApiError::expired(message)
        },
        StorageError::Gone(m) => ApiError::expired(m),
        StorageError::TooLargeResourceVersion { requested, current } => {
            let mut e = ApiError::timeout(format!(
                "Too large resource version: {requested}, current: {current}"
            ));
            e.details = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    retry_after_seconds: Some(1),
                    causes: Some(vec![
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                            reason: Some("ResourceVersionTooLarge".into()),
                            message: Some("Too large resource version".into()),
                            field: None,
                        },
                    ]),
                    ..Default::default()
                },
            );
            e
        }
        StorageError::BadRequest(m) => ApiError::bad_request(m),
        StorageError::RequestTooLarge => ApiError::new(
            413,
            crate::api::Reason::RequestEntityTooLarge,
            "etcdserver: request is too large",
        ),
        // upstream's NewServerTimeout: storage did not answer. What the
        // client library said goes to the log, not to the user.
        StorageError::Unavailable(m) => {
            crate::warn_limited!("storage-unavailable", resource = %r.plural, op, error = %m, "storage unavailable");
            ApiError::new(
                500,
                crate::api::Reason::ServerTimeout,
                format!(
                    "The {op} operation against {} could not be completed at this time, please try again.",
                    crate::api::status::qualified_resource(&r.group, &r.plural)
                ),
            )
            .with_details(Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    name: (!name.is_empty()).then(|| name.to_string()),
                    group: (!r.group.is_empty()).then(|| r.group.clone()),
                    kind: Some(r.plural.clone()),
                    retry_after_seconds: Some(2),
                    ..Default::default()
                },
            ))
        }
        StorageError::Internal(m) => ApiError::internal(m),
        StorageError::Api(e) => e,
    }
}

/// Paths of fields in `input` that the typed object did not keep.
fn unknown_fields(input: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (input, typed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match b.get(k) {
                    Some(tv) => unknown_fields(v, tv, &p, out),
                    None if v.is_null() => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                unknown_fields(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// upstream's `APIObjectVersioner.ParseResourceVersion`: Go's `ParseUint`,
/// which takes digits only (no sign, so "-0" and "+1" are refused).
fn parse_rv(rv: &str) -> Result<i64, ApiError> {
    let why = if rv.is_empty() || !rv.bytes().all(|b| b.is_ascii_digit()) {
        Some("invalid syntax")
    } else if rv.parse::<i64>().is_err() {
        Some("value out of range")
    } else {
        None
    };
    match why {
        None => rv.parse::<i64>().map_err(|_| ApiError::bad_request("invalid resource version")),
        Some(why) => Err(ApiError::bad_request(format!(
            "invalid resource version: resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: {why}"
        ))),
    }
}

/// upstream's `maxNameGenerationCreateAttempts`.
const MAX_GENERATE_NAME_ATTEMPTS: usize = 8;

/// Deletes one delete-collection keeps in flight.
const DELETE_COLLECTION_WORKERS: usize = 16;

impl Registry {
    fn new(resource: Arc<Resource>, registries: Registries) -> Self {
        let strategy = match &resource.custom {
            Some(custom) => strategy::StrategyRef::Dynamic(
                crate::apiextensions::customresource::strategy(custom.clone()),
            ),
            None => strategy::StrategyRef::Static(
                strategy::for_kind(&resource.group, &resource.kind)
                    .unwrap_or(&strategy::NeverStored),
            ),
        };
        let key_root = format!("{}/{}/", registries.prefix, resource.storage_path);
        let cacher = resource.is_stored().then(|| {
            let (sel, ns) = (resource.selectable_fields.clone(), resource.namespaced);
            registries
                .cachers
                .get(&key_root, (&resource.group, &resource.plural), move || {
                    attrs_fn(sel, ns)
                })
        });
        let defaults_on_read = resource
            .custom
            .as_ref()
            .and_then(|c| c.schema.as_ref())
            .is_some_and(|s| s.to_string().contains("\"default\""));
        let written = registries.store().write_mark(&key_root);
        Registry {
            resource,
            strategy,
            registries,
            key_root,
            cacher,
            defaults_on_read,
            written,
        }
    }

    /// The revision of the last write to this resource this server
    /// acknowledged (0 before the first).
    pub fn last_write(&self) -> i64 {
        self.written.load(std::sync::atomic::Ordering::Acquire)
    }

    /// A resourceVersion ("not older than") that makes a read from the
    /// watch cache reflect every write to this resource the server has
    /// acknowledged: what in-process readers (admission plugins) pass to
    /// read their clients' writes without a round trip to storage.
    pub fn fresh_rv(&self) -> String {
        match self.written.load(std::sync::atomic::Ordering::Acquire) {
            n if n > 0 => n.to_string(),
            _ => "0".into(),
        }
    }

    fn cacher(&self) -> Result<&Arc<Cacher>, ApiError> {
        self.cacher
            .as_ref()
            .ok_or_else(ApiError::method_not_allowed)
    }

    /// Where this resource's objects are stored: `<prefix>/<storage path>/`.
    pub fn key_root(&self) -> &str {
        &self.key_root
    }

    pub fn registries(&self) -> &Registries {
        &self.registries
    }

    pub fn key(&self, namespace: &str, name: &str) -> String {
        if self.resource.namespaced {
            format!("{}{namespace}/{name}", self.key_root)
        } else {
            format!("{}{name}", self.key_root)
        }
    }

    fn kind_for(&self, subresource: Option<&str>) -> (String, String, String) {
        match subresource.and_then(|s| self.resource.subresource(s)) {
            Some(s) if s.name != "status" => (s.group.clone(), s.version.clone(), s.kind.clone()),
            _ => (
                self.resource.group.clone(),
                self.resource.version.clone(),
                self.resource.kind.clone(),
            ),
        }
    }

    fn invalid(&self, name: &str, errs: Vec<FieldError>) -> ApiError {
        ApiError::invalid(
            &self.resource.group,
            &self.resource.kind,
            name,
            errs.iter().map(FieldError::to_cause).collect(),
        )
    }

    /// Decode stage: the body must be this kind in this group version;
    /// the typed round trip drops unknown fields (reported per
    /// `fieldValidation`); the namespace is checked against the URL.
    pub fn decode(
        &self,
        body: Value,
        namespace: &str,
        opts: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let r = &self.resource;
        let expected = qualified_kind("", &r.kind);
        // JSON `null` decodes to the zero object, as Go's decoder leaves it.
        let body = if body.is_null() { json!({}) } else { body };
        let Some(obj) = body.as_object() else {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {expected}): couldn't get version/kind; json parse error: expected an object"
            )));
        };
        // As upstream's decoder: what the body leaves out comes from the URL.
        let r_api_version = r.api_version();
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .unwrap_or(&r.kind)
            .to_string();
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .unwrap_or(&r_api_version)
            .to_string();
        let (kind, api_version) = (kind.as_str(), api_version.as_str());
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        if kind == r.kind && group == r.group && version != r.version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({r_api_version})"
            )));
        }
        if kind != r.kind || group != r.group || version != r.version {
            return Err(ApiError::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {}: converting ({version}.{kind}) to ({}.{}): unknown conversion",
                r.kind,
                if r.group.is_empty() { "core" } else { r.group.split('.').next().unwrap_or("") },
                r.kind
            )));
        }
        // Go's decoder refuses metadata fields of the wrong JSON type.
        if let Some(m) = obj.get("metadata").filter(|m| !m.is_null()) {
            let wrong = |field: &str, want: &str, v: &Value| {
                ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {}: json: cannot unmarshal {} into Go struct field {field} of type {want}",
                    r.kind,
                    crate::api::json_type_name(v)
                ))
            };
            let Some(m) = m.as_object() else {
                return Err(wrong("ObjectMeta.metadata", "v1.ObjectMeta", m));
            };
            for f in [
                "name",
                "generateName",
                "namespace",
                "uid",
                "resourceVersion",
            ] {
                if let Some(v) = m.get(f).filter(|v| !v.is_null() && !v.is_string()) {
                    return Err(wrong(&format!("ObjectMeta.metadata.{f}"), "string", v));
                }
            }
        }
        let mut value = body.clone();
        if let Some(m) = value.as_object_mut() {
            m.insert("kind".into(), Value::String(kind.to_string()));
            m.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        {
            let m = meta::meta_mut(&mut value);
            let obj_ns = m
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if r.namespaced {
                if obj_ns.is_empty() {
                    m.insert("namespace".into(), Value::String(namespace.to_string()));
                } else if obj_ns != namespace {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
            } else {
                m.remove("namespace");
            }
        }
        let mut warnings = Vec::new();
        if let Some(schema) = r.custom.as_ref().and_then(|c| c.schema.as_ref()) {
            // Custom resources: the CRD's structural schema prunes what it does not know.
            let unknown = crate::apiextensions::schema::prune(&mut value, schema);
            if !unknown.is_empty() {
                match opts.field_validation {
                    FieldValidation::Strict => {
                        let list: Vec<String> = unknown
                            .iter()
                            .map(|f| format!("unknown field {f:?}"))
                            .collect();
                        return Err(ApiError::bad_request(format!(
                            "{kind} in version {version:?} cannot be handled as a {}: strict decoding error: {}",
                            r.kind,
                            list.join(", ")
                        )));
                    }
                    FieldValidation::Warn => {
                        warnings.extend(unknown.iter().map(|f| format!("unknown field {f:?}")))
                    }
                    FieldValidation::Ignore => {}
                }
            }
        }
        if let Some(codec) = r.codec {
            let typed = codec(&value).map_err(|e| {
                ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {}: {e}",
                    r.kind
                ))
            })?;
            let mut unknown = Vec::new();
            unknown_fields(&value, &typed, "", &mut unknown);
            if !unknown.is_empty() {
                match opts.field_validation {
                    FieldValidation::Strict => {
                        let list: Vec<String> = unknown
                            .iter()
                            .map(|f| format!("unknown field {f:?}"))
                            .collect();
                        return Err(ApiError::bad_request(format!(
                            "{kind} in version {version:?} cannot be handled as a {}: strict decoding error: {}",
                            r.kind,
                            list.join(", ")
                        )));
                    }
                    FieldValidation::Warn => {
                        warnings.extend(unknown.iter().map(|f| format!("unknown field {f:?}")))
                    }
                    FieldValidation::Ignore => {}
                }
            }
            value = typed;
        }
        Ok((value, warnings))
    }

    fn validate_create(&self, obj: &Value) -> Result<(), ApiError> {
        let mut errs = meta::validate(obj, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(self.strategy.validate(obj));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(obj), errs))
        }
    }

    /// Object-meta checks plus a subresource's own errors.
    fn errors_to_invalid(&self, new: &Value, more: Vec<FieldError>) -> Result<(), ApiError> {
        let mut errs = meta::validate(new, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(more);
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(new), errs))
        }
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut errs = meta::validate(new, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(meta::validate_update(new, old));
        errs.extend(self.strategy.validate_update(new, old));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(new), errs))
        }
    }

    fn encode(obj: &Value) -> Bytes {
        let mut v = obj.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            // ObjectMeta's maps and lists are `omitempty` in Go: removing
            // the last label leaves no `labels: {}` behind upstream.
            for f in [
                "labels",
                "annotations",
                "finalizers",
                "ownerReferences",
                "managedFields",
            ] {
                let empty = match m.get(f) {
                    Some(Value::Object(o)) => o.is_empty(),
                    Some(Value::Array(a)) => a.is_empty(),
                    Some(Value::Null) => true,
                    _ => false,
                };
                if empty {
                    m.remove(f);
                }
            }
        }
        // In Go's field order, as upstream stores and serves built-ins.
        Bytes::from(crate::api::go_json::to_vec(&v))
    }

    pub async fn create(
        &self,
        namespace: &str,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if !self.resource.is_stored() {
            return Err(ApiError::method_not_allowed());
        }
        let began = trace::start();
        let decoded = self.decode(body, namespace, opts);
        trace::result(
            began,
            "decode",
            &decoded,
            || json!({"kind": self.resource.kind, "apiVersion": self.resource.api_version()}),
        );
        let (mut obj, mut warnings) = decoded?;
        let resource_version_set = !meta::str_field(&obj, "resourceVersion").is_empty();
        // A name the server generates may collide; it is generated again
        // rather than answered with 409 (KEP-4420, RetryGenerateName).
        let generated_from = (meta::name(&obj).is_empty())
            .then(|| obj["metadata"]["generateName"].as_str().map(String::from))
            .flatten()
            .filter(|p| !p.is_empty());
        let began = trace::start();
        let before = began.and(Some(obj.clone()));
        self.strategy.default(&mut obj);
        meta::prepare_create(&mut obj);
        if !self.strategy.tracks_generation() {
            meta::meta_mut(&mut obj).remove("generation");
        }
        // As upstream, the writer owns what it sent (defaults included),
        // not what admission or the strategy add after.
        if !opts.force_applied {
            obj = self.record_fields(None, &obj, "", opts);
        }
        trace::stage(
            began,
            "defaulting",
            "ok",
            || json!({"patch": trace::diff(&before.unwrap_or_default(), &obj)}),
        );
        let name = meta::name(&obj).to_string();
        let mut attrs = admission::Attributes {
            operation: admission::Operation::Create,
            resource: &self.resource,
            subresource: "",
            namespace,
            name: &name,
            object: Some(obj),
            old_object: None,
            user: &opts.user,
            dry_run: opts.dry_run,
            options: json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}),
        };
        warnings.extend(self.registries.admit(&mut attrs).await?);
        let mut obj = attrs.object.take().unwrap_or(Value::Null);
        if self.resource.subresource("status").is_some() && !self.strategy.keeps_status_on_create()
        {
            // Reset as upstream resets it: to the status struct's zero
            // value, which Go prints (`status: {}`), not to nothing.
            let api_version = self.resource.api_version();
            let zero = crate::api::protobuf::zero_status(&api_version, &self.resource.kind);
            if let Some(m) = obj.as_object_mut() {
                match zero {
                    Some(z) => m.insert("status".into(), z),
                    None => m.remove("status"),
                };
            }
        }
        self.strategy.prepare_for_create(&mut obj);
        self.strategy.prepare_for_create_by(&mut obj, &opts.user);
        let began = trace::start();
        let valid = self.validate_create(&obj);
        trace::result(began, "validation", &valid, || json!({}));
        valid?;
        attrs.object = Some(obj);
        warnings.extend(self.registries.validate_admission(&attrs).await?);
        let mut obj = attrs.object.take().unwrap_or(Value::Null);
        let allocator = self
            .registries
            .allocator(&self.resource.group, &self.resource.kind);
        if let Some(a) = &allocator {
            a.allocate(&mut obj, opts.dry_run).await?;
        }
        let name = meta::name(&obj).to_string();
        if opts.dry_run {
            // Encoded for what it shows (a conversion that fails, fails it).
            self.encode_for_storage(&obj)?;
            trace::stage(
                trace::start(),
                "storage",
                "skipped",
                || json!({"operation": "create", "key": self.key(namespace, &name), "reason": "dry run: nothing written"}),
            );
            return Ok(Written {
                object: Self::encode(&obj),
                warnings,
                created: false,
            });
        }
        // Storage refuses to create what names a revision (upstream's
        // ErrResourceVersionSetOnCreate, a 400); a dry run never reaches it.
        if resource_version_set {
            if let Some(a) = &allocator {
                a.release(&obj).await;
            }
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let mut name = name;
        let mut attempt = 1;
        let (bytes, rv) = loop {
            let bytes = self.encode_for_storage(&obj)?;
            let key = self.key(namespace, &name);
            let began = trace::start();
            let created = self.registries.store().create(&key, bytes.clone()).await;
            trace::result(
                began,
                "storage",
                &created,
                || json!({"operation": "create", "key": key, "resourceVersion": created.as_ref().map(|rv| rv.to_string()).unwrap_or_default()}),
            );
            match (created, &generated_from) {
                (Ok(rv), _) => break (bytes, rv),
                (Err(StorageError::KeyExists { .. }), Some(prefix))
                    if attempt < MAX_GENERATE_NAME_ATTEMPTS =>
                {
                    attempt += 1;
                    name = meta::generate_name(prefix);
                    meta::meta_mut(&mut obj).insert("name".into(), Value::String(name.clone()));
                }
                (Err(e), _) => {
                    if let Some(a) = &allocator {
                        a.release(&obj).await;
                    }
                    return Err(storage_err(&self.resource, "create", &name, e));
                }
            }
        };
        Ok(Written {
            object: self.served(crate::storage::rv::with_resource_version(&bytes, rv)),
            warnings,
            created: false,
        })
    }

    /// What a trace shows of encoding: the conversion from the served to
    /// the storage version, and the size stored.
    /// The object as stored: converted to the storage version and encoded
    /// (the `encode` stage of a trace).
    fn encode_for_storage(&self, obj: &Value) -> Result<Bytes, ApiError> {
        let began = trace::start();
        let bytes = Self::encode(&conversion::to_storage(
            &self.registries,
            &self.resource,
            obj.clone(),
        )?);
        trace::stage(began, "encode", "ok", || self.encode_detail(bytes.len()));
        Ok(bytes)
    }

    /// The storage version, as an apiVersion.
    fn storage_api_version(&self) -> String {
        if self.resource.storage_group.is_empty() {
            self.resource.storage_version.clone()
        } else {
            format!(
                "{}/{}",
                self.resource.storage_group, self.resource.storage_version
            )
        }
    }

    fn encode_detail(&self, bytes: usize) -> Value {
        let storage = self.storage_api_version();
        json!({"conversion": format!("{} -> {storage}", self.resource.api_version()), "storageVersion": storage, "bytes": bytes})
    }

    /// What a read converts: from the storage version to the one served.
    fn decode_detail(&self, bytes: usize) -> Value {
        let storage = self.storage_api_version();
        let conversion = if conversion::needed(&self.resource) {
            format!("{storage} -> {}", self.resource.api_version())
        } else {
            format!("none ({storage} is served as stored)")
        };
        json!({"conversion": conversion, "bytes": bytes})
    }

    /// Stored bytes as the served version shows them (no work when they
    /// agree): converted, and for custom resources defaulted by the schema
    /// as upstream defaults on read from storage.
    pub fn served(&self, stored: Bytes) -> Bytes {
        let convert = conversion::needed(&self.resource);
        if !convert && !self.defaults_on_read {
            return stored;
        }
        let converted = serde_json::from_slice::<Value>(&stored)
            .map_err(|e| ApiError::internal(e.to_string()))
            .and_then(|v| {
                if convert {
                    conversion::to_served(&self.registries, &self.resource, v)
                } else {
                    Ok(v)
                }
            });
        match converted {
            Ok(mut v) => {
                if self.defaults_on_read {
                    self.strategy.default(&mut v);
                }
                Bytes::from(crate::api::go_json::to_vec(&v))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot convert a stored object to the served version");
                stored
            }
        }
    }

    /// get, from the watch cache: `rv` of `None` or "" is a consistent read, "0" any.
    pub async fn get_object(
        &self,
        namespace: &str,
        name: &str,
        rv: Option<&str>,
    ) -> Result<Bytes, ApiError> {
        let consistent = rv.is_none_or(|s| s.is_empty());
        let not_older_than = match rv.filter(|s| !s.is_empty()) {
            Some(r) => parse_rv(r)?,
            None => 0,
        };
        let key = self.key(namespace, name);
        let began = trace::start_read();
        let cacher = self.cacher()?;
        let obj = cacher.get(&key, consistent, not_older_than).await;
        trace::stage(
            began,
            cacher.read_from(),
            if matches!(obj, Ok(Some(_))) {
                "ok"
            } else {
                "error"
            },
            || {
                json!({
                    "operation": "get",
                    "key": key,
                    "read": if consistent { "consistent (waits for the cache to reach storage's revision)" } else { "any revision at least resourceVersion" },
                    "found": matches!(obj, Ok(Some(_))),
                })
            },
        );
        let obj = obj.map_err(|e| storage_err(&self.resource, "get", name, e))?;
        let Some(o) = obj else {
            return Err(ApiError::not_found(
                &self.resource.group,
                &self.resource.plural,
                name,
            ));
        };
        let began = trace::start_read();
        let bytes = self.served(o.json.clone());
        trace::stage(began, "encode", "ok", || self.decode_detail(bytes.len()));
        Ok(bytes)
    }

    fn filter(&self, namespace: &str, params: &ListParams) -> Result<Filter, ApiError> {
        let label = LabelSelector::parse(params.label_selector.as_deref().unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        let field = FieldSelector::parse(params.field_selector.as_deref().unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        for k in field.keys() {
            let known = k == "metadata.name"
                || (k == "metadata.namespace" && self.resource.namespaced)
                || self.resource.selectable_fields.iter().any(|f| f == k);
            if !known {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {k}"
                )));
            }
        }
        let key_prefix = (self.resource.namespaced && !namespace.is_empty())
            .then(|| format!("{}{namespace}/", self.key_root));
        Ok(Filter {
            key_prefix,
            exact_key: None,
            label,
            field,
        })
    }

    pub async fn list(&self, namespace: &str, params: &ListParams) -> Result<ListOut, ApiError> {
        let filter = self.filter(namespace, params)?;
        let rv = match params.resource_version.as_deref().filter(|s| !s.is_empty()) {
            Some(s) => Some(parse_rv(s)?),
            None => None,
        };
        let rv_match = match params.resource_version_match.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            Some("NotOlderThan") => Some(RvMatch::NotOlderThan),
            Some("Exact") => Some(RvMatch::Exact),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "resourceVersionMatch: Unsupported value: {other:?}: supported values: \"Exact\", \"NotOlderThan\""
                )))
            }
        };
        if rv_match.is_some() && rv.is_none() {
            return Err(ApiError::bad_request(
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if rv_match == Some(RvMatch::Exact) && rv == Some(0) {
            return Err(ApiError::bad_request(
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        let opts = ListOptions {
            resource_version: rv,
            rv_match,
            limit: params.limit.max(0),
            continue_token: params.continue_token.clone().filter(|s| !s.is_empty()),
            predicate: None,
        };
        let name_for_errors = "";
        if opts.continue_token.is_some() || rv_match == Some(RvMatch::Exact) {
            // Paging beyond the first page, and exact reads, come from storage at that revision.
            let attrs = attrs_fn(
                self.resource.selectable_fields.clone(),
                self.resource.namespaced,
            );
            let f = filter.clone();
            let predicate: store::Predicate = Arc::new(move |raw: &[u8]| {
                let Ok(v) = serde_json::from_slice::<Value>(raw) else {
                    return false;
                };
                let a = attrs(&v);
                f.label.matches(&a.labels) && f.field.matches(&a.fields)
            });
            let prefix = filter
                .key_prefix
                .clone()
                .unwrap_or_else(|| self.key_root.clone());
            let unfiltered = filter.label.is_empty() && filter.field.is_empty();
            let opts = ListOptions {
                predicate: (!unfiltered).then_some(predicate),
                ..opts
            };
            let began = trace::start_read();
            let listed = self.registries.store().list(&prefix, &opts).await;
            trace::result(
                began,
                "storage",
                &listed,
                || json!({"operation": "list", "prefix": prefix, "read": "from storage (a later page, or an exact resourceVersion)", "items": listed.as_ref().map(|r| r.items.len()).unwrap_or(0)}),
            );
            let mut res =
                listed.map_err(|e| storage_err(&self.resource, "list", name_for_errors, e))?;
            if filter.label.is_empty() && filter.field.is_empty() {
                // remainingItemCount is only exact without selectors.
            } else {
                res.remaining_item_count = None;
            }
            let began = trace::start_read();
            let items: Vec<Bytes> = res.items.iter().map(|o| self.served(o.to_json())).collect();
            trace::stage(began, "encode", "ok", || {
                self.decode_detail(items.iter().map(Bytes::len).sum())
            });
            return Ok(ListOut {
                items,
                cached: Vec::new(),
                resource_version: res.resource_version,
                continue_token: res.continue_token,
                remaining_item_count: res.remaining_item_count,
            });
        }
        let began = trace::start_read();
        let cacher = self.cacher()?;
        let listed = cacher.list(&filter, &opts).await;
        trace::result(
            began,
            cacher.read_from(),
            &listed,
            || json!({"operation": "list", "prefix": filter.key_prefix.as_deref().unwrap_or(&self.key_root), "items": listed.as_ref().map(|r| r.items.len()).unwrap_or(0)}),
        );
        let res = listed.map_err(|e| storage_err(&self.resource, "list", name_for_errors, e))?;
        let began = trace::start_read();
        let items: Vec<Bytes> = res
            .items
            .iter()
            .map(|o| self.served(o.json.clone()))
            .collect();
        trace::stage(began, "encode", "ok", || {
            self.decode_detail(items.iter().map(Bytes::len).sum())
        });
        let unchanged = items
            .iter()
            .zip(&res.items)
            .all(|(served, o)| served.as_ptr() == o.json.as_ptr());
        Ok(ListOut {
            items,
            cached: if unchanged { res.items } else { Vec::new() },
            resource_version: res.resource_version,
            continue_token: res.continue_token,
            remaining_item_count: res.remaining_item_count,
        })
    }

    /// A watch from the cache; `rv` "" is the consistent current state,
    /// "0" any state, N after N. `deadline` is when the watch will end.
    pub async fn watch(
        &self,
        namespace: &str,
        name: Option<&str>,
        params: &ListParams,
        send_initial_events: bool,
        bookmarks: bool,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<CacheWatch, ApiError> {
        let mut filter = self.filter(namespace, params)?;
        if let Some(n) = name {
            filter.exact_key = Some(self.key(namespace, n));
        }
        let start = match params.resource_version.as_deref().unwrap_or("") {
            "" => WatchStart::Now { consistent: true },
            "0" => WatchStart::Now { consistent: false },
            s => WatchStart::After(parse_rv(s)?),
        };
        let start =
            match (start, send_initial_events) {
                (WatchStart::After(_), true) => return Err(ApiError::bad_request(
                    "sendInitialEvents is forbidden for resourceVersion other than \"\" or \"0\"",
                )),
                (s, _) => s,
            };
        self.cacher()?
            .watch(WatchOptions {
                start,
                filter,
                send_initial_events,
                bookmarks,
                deadline,
            })
            .await
            .map_err(|e| storage_err(&self.resource, "watch", name.unwrap_or(""), e))
    }

    /// The update path shared by PUT and PATCH: `make_new` turns the
    /// current object into the desired one.
    async fn update_with<F>(
        &self,
        namespace: &str,
        name: &str,
        subresource: Option<&str>,
        opts: &WriteOptions,
        mut make_new: F,
    ) -> Result<Written, ApiError>
    where
        F: FnMut(&Value) -> Result<(Value, Vec<String>), ApiError> + Send,
    {
        let key = self.key(namespace, name);
        let status_only = subresource == Some("status");
        let has_status = self.resource.subresource("status").is_some();
        let store = self.registries.store();
        let mut current = store
            .get(&key)
            .await
            .map_err(|e| storage_err(&self.resource, "update", name, e))?;
        // Read-modify-write with compare-and-swap on the key's revision,
        // retried on contention; each try runs the whole path again.
        for _ in 0..1000 {
            let old: Value = serde_json::from_slice(&current.value)
                .map_err(|e| ApiError::internal(format!("stored object: {e}")))?;
            let mut old = conversion::to_served(&self.registries, &self.resource, old)?;
            meta::meta_mut(&mut old).insert(
                "resourceVersion".into(),
                Value::String(current.resource_version.to_string()),
            );
            let began = trace::start();
            let made = make_new(&old);
            trace::result(
                began,
                "decode",
                &made,
                || json!({"kind": self.resource.kind, "apiVersion": self.resource.api_version(), "currentResourceVersion": current.resource_version.to_string()}),
            );
            let (mut new, mut warnings) = made?;
            let mut recorded = false;
            let asked_rv = meta::str_field(&new, "resourceVersion").to_string();
            if !asked_rv.is_empty() && asked_rv != current.resource_version.to_string() {
                return Err(ApiError::conflict(
                    &self.resource.group,
                    &self.resource.plural,
                    name,
                    CONFLICT_MODIFIED,
                ));
            }
            if meta::name(&new) != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    meta::name(&new)
                )));
            }
            if status_only {
                // The status subresource changes status only.
                let mut merged = old.clone();
                if let Some(m) = merged.as_object_mut() {
                    m.insert(
                        "status".into(),
                        new.get("status").cloned().unwrap_or(Value::Null),
                    );
                }
                new = merged;
            } else if subresource == Some("ephemeralcontainers") {
                new = core::ephemeral_containers_update(&new, &old);
            } else if subresource == Some("approval") {
                new = certificates::approval_update(&new, &old);
            } else if subresource == Some("resize") {
                // Requests default to limits, as decoding the pod does.
                self.strategy.default(&mut new);
                new = pod_resize::resize_update(&new, &old);
            } else if subresource == Some("binding") {
                new = core::binding_update(&new, &old);
            } else if subresource == Some("finalize") {
                // namespaces/finalize changes spec.finalizers only.
                let mut merged = old.clone();
                let fins = new["spec"].get("finalizers").cloned().unwrap_or(json!([]));
                if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.insert("finalizers".into(), fins);
                }
                new = merged;
            } else {
                if has_status {
                    if let Some(m) = new.as_object_mut() {
                        match old.get("status") {
                            Some(s) => m.insert("status".into(), s.clone()),
                            None => m.remove("status"),
                        };
                    }
                }
                let began = trace::start();
                let before = began.and(Some(new.clone()));
                self.strategy.default(&mut new);
                trace::stage(
                    began,
                    "defaulting",
                    "ok",
                    || json!({"patch": trace::diff(&before.unwrap_or_default(), &new)}),
                );
                // As upstream, the writer owns what it sent (defaults
                // included), not what admission or the strategy add later.
                if !opts.force_applied {
                    new = self.record_fields(Some(&old), &new, subresource.unwrap_or(""), opts);
                    recorded = true;
                }
            }
            let mut attrs = admission::Attributes {
                operation: admission::Operation::Update,
                resource: &self.resource,
                subresource: subresource.unwrap_or(""),
                namespace,
                name,
                object: Some(new),
                old_object: Some(&old),
                user: &opts.user,
                dry_run: opts.dry_run,
                options: json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}),
            };
            warnings.extend(self.registries.admit(&mut attrs).await?);
            let mut new = attrs.object.take().unwrap_or(Value::Null);
            // Subresources that take one part of the object keep the rest as is.
            let whole = !matches!(
                subresource,
                Some(
                    "status"
                        | "finalize"
                        | "ephemeralcontainers"
                        | "approval"
                        | "binding"
                        | "resize"
                )
            );
            if whole {
                self.strategy.prepare_for_update(&mut new, &old);
            }
            let bump = self.strategy.generation_changed(&new, &old);
            meta::prepare_update(&mut new, &old, bump);
            if !opts.force_applied && !recorded {
                new = self.record_fields(Some(&old), &new, subresource.unwrap_or(""), opts);
            }
            fieldmanager::ignore_timestamp_only_changes(&mut new, &old);
            let began = trace::start();
            let valid = match subresource {
                Some("ephemeralcontainers") => self.errors_to_invalid(
                    &new,
                    core::validate_ephemeral_containers_update(&new, &old),
                ),
                Some("approval") => {
                    self.errors_to_invalid(&new, certificates::validate_approval(&new, &old))
                }
                Some("resize") => {
                    self.errors_to_invalid(&new, pod_resize::validate_resize(&new, &old))
                }
                // The pod's spec is immutable but for what binding sets.
                Some("binding") => Ok(()),
                _ => self.validate_update(&new, &old),
            };
            trace::result(began, "validation", &valid, || json!({}));
            valid?;
            attrs.object = Some(new);
            warnings.extend(self.registries.validate_admission(&attrs).await?);
            let new = attrs.object.take().unwrap_or(Value::Null);
            trace::stage(trace::start(), "diff", "ok", || {
                // The revision is storage's to set; everything else shows.
                let unversioned = |v: &Value| {
                    let mut v = v.clone();
                    meta::meta_mut(&mut v).remove("resourceVersion");
                    v
                };
                json!({"patch": trace::diff(&unversioned(&old), &unversioned(&new))})
            });
            // A dry run is encoded too (a conversion that fails, fails it),
            // as upstream's dry-run storage does; only the write is skipped.
            let bytes = self.encode_for_storage(&new)?;
            if opts.dry_run {
                trace::stage(
                    trace::start(),
                    "storage",
                    "skipped",
                    || json!({"operation": "update", "key": key, "reason": "dry run: nothing written"}),
                );
                let object = crate::storage::rv::with_resource_version(
                    &Self::encode(&new),
                    current.resource_version,
                );
                return Ok(Written {
                    object,
                    warnings,
                    created: false,
                });
            }
            // A stale object (read with an old encryption key) is written
            // again even unchanged, as upstream does, to re-encrypt it.
            if bytes == current.value && !current.stale {
                trace::stage(
                    trace::start(),
                    "storage",
                    "skipped",
                    || json!({"operation": "update", "key": key, "reason": "no change: nothing written"}),
                );
                // Nothing changed: no write, no new resourceVersion.
                return Ok(Written {
                    object: self.served(current.to_json()),
                    warnings,
                    created: false,
                });
            }
            let began = trace::start();
            let swapped = store
                .swap(&key, bytes, current.resource_version)
                .await
                .map_err(|e| storage_err(&self.resource, "update", name, e));
            trace::result(began, "storage", &swapped, || {
                let outcome = match &swapped {
                    Ok(store::Swap::Done(o)) => json!(o.resource_version.to_string()),
                    _ => json!("conflict: retrying on the newer object"),
                };
                json!({"operation": "compare-and-swap", "key": key, "expectedResourceVersion": current.resource_version.to_string(), "resourceVersion": outcome})
            });
            let result = match swapped? {
                store::Swap::Done(obj) => obj,
                store::Swap::Changed(Some(now)) => {
                    current = now;
                    continue;
                }
                store::Swap::Changed(None) => {
                    return Err(ApiError::not_found(
                        &self.resource.group,
                        &self.resource.plural,
                        name,
                    ))
                }
            };
            // An object being deleted whose last finalizer went away is deleted now.
            if let Ok(v) = serde_json::from_slice::<Value>(&result.value) {
                if graceful::delete_during_update(&v, &old)
                    && !self.strategy.defer_deletion(&mut v.clone())
                {
                    let pre = Preconditions {
                        resource_version: Some(result.resource_version.to_string()),
                        uid: None,
                    };
                    match store.delete(&key, &pre, |_| Ok(())).await {
                        Ok(gone) => self.released(&gone.value).await,
                        Err(StorageError::NotFound { .. }) => {}
                        Err(e) => return Err(storage_err(&self.resource, "update", name, e)),
                    }
                }
            }
            return Ok(Written {
                object: self.served(result.to_json()),
                warnings,
                created: false,
            });
        }
        Err(ApiError::conflict(
            &self.resource.group,
            &self.resource.plural,
            name,
            CONFLICT_MODIFIED,
        ))
    }

    pub async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let (decoded, warnings) = self.decode(body, namespace, opts)?;
        // An object that names its uid may only replace that object, not
        // one recreated under the same name (upstream's update preconditions).
        let uid = meta::str_field(&decoded, "uid").to_string();
        let key = self.key(namespace, name);
        self.update_with(namespace, name, subresource, opts, |old| {
            let have = meta::str_field(old, "uid");
            if !uid.is_empty() && uid != have {
                let e = crate::storage::store::precondition_failed(
                    &key,
                    format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"),
                );
                return Err(storage_err(&self.resource, "update", name, e));
            }
            Ok((decoded.clone(), warnings.clone()))
        })
        .await
    }

    pub async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        patch: &[u8],
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let patch_value: Value = serde_json::from_slice(patch)
            .or_else(|_| serde_saphyr::from_slice::<Value>(patch))
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
        let sub = subresource.unwrap_or("");
        let mut opts = opts.clone();
        if patch_type == PatchType::Apply {
            self.check_applied(&patch_value, namespace, name, &opts)?;
            opts.force_applied = true;
        } else if opts.force {
            let cause = FieldError::forbidden("force", "may not be specified for non-apply patch")
                .to_cause();
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![cause],
            ));
        }
        let opts = &opts;
        let result = self.update_with(namespace, name, subresource, opts, |old| {
            let mut doc = old.clone();
            match patch_type {
                PatchType::Json => patch::json::apply_request(&mut doc, &patch_value)?,
                PatchType::Merge => json_patch::merge(&mut doc, &patch_value),
                                PatchType::StrategicMerge => {
                    // Custom resources have no patch strategies: 415, as upstream.
                    let Some(type_name) = self.resource.schema.and_then(patch::strategic::type_name_of).filter(|_| self.resource.codec.is_some()) else {
                        return Err(ApiError::new(
                            415,
                            crate::api::Reason::UnsupportedMediaType,
                            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                        )
                        .with_details(None));
                    };
                    doc = patch::strategic::apply(&doc, &patch_value, &type_name).map_err(|e| {
                        // upstream answers the errors it does not classify
                        // (an unknown `$patch`) with a 500; every one of them
                        // is the patch's fault, so kapi says 400.
                        match e.code() {
                            422 => ApiError::new(422, crate::api::Reason::Invalid, e.message),
                            _ => ApiError::bad_request(e.message),
                        }
                    })?;
                }
                PatchType::Apply => doc = self.apply_fields(Some(old), &patch_value, sub, opts)?,
            }
            // A patch that does not name a resourceVersion is unconditional.
            if patch_value["metadata"].get("resourceVersion").is_none() {
                meta::meta_mut(&mut doc).remove("resourceVersion");
            }
            // A patched object that no longer decodes is an invalid patch
            // (422 naming `patch`), not a bad request.
            let patched = serde_json::to_string(&doc).unwrap_or_default();
            self.decode(doc, namespace, opts).map_err(|e| {
                if e.code != 400 {
                    return e;
                }
                let cause = FieldError::invalid("patch", Value::String(patched.clone()), e.message)
                    .to_cause();
                ApiError::invalid("", "", "", vec![cause])
            })
        })
        .await;
        match result {
            // Apply creates what does not exist yet.
            Err(e) if e.code == 404 && patch_type == PatchType::Apply && sub.is_empty() => {
                let created = self.apply_fields(None, &patch_value, sub, opts)?;
                let mut w = self.create(namespace, created, opts).await?;
                w.created = true;
                Ok(w)
            }
            other => other,
        }
    }

    /// An apply configuration must name this kind, the URL's name and namespace,
    /// and a field manager.
    fn check_applied(
        &self,
        applied: &Value,
        namespace: &str,
        name: &str,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        if opts.field_manager.as_deref().unwrap_or("").is_empty() {
            let cause =
                FieldError::required("fieldManager", "is required for apply patch").to_cause();
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![cause],
            ));
        }
        let r = &self.resource;
        let (kind, api_version) = (
            applied["kind"].as_str().unwrap_or(""),
            applied["apiVersion"].as_str().unwrap_or(""),
        );
        if kind != r.kind || api_version != r.api_version() {
            return Err(ApiError::bad_request(format!(
                "invalid object type: {}, Kind={}",
                if api_version.is_empty() {
                    "/"
                } else {
                    api_version
                },
                kind
            )));
        }
        let applied_name = meta::name(applied);
        if !applied_name.is_empty() && applied_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({applied_name}) does not match the name on the URL ({name})"
            )));
        }
        let ns = meta::namespace(applied);
        if r.namespaced && !ns.is_empty() && ns != namespace {
            return Err(ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request"));
        }
        Ok(())
    }

    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<(Bytes, bool), ApiError> {
        let key = self.key(namespace, name);
        let store = self.registries.store();
        let current = store
            .get(&key)
            .await
            .map_err(|e| storage_err(&self.resource, "delete", name, e))?;
        opts.preconditions
            .check(&current)
            .map_err(|e| storage_err(&self.resource, "delete", name, e))?;
        let obj: Value = serde_json::from_slice(&current.value).unwrap_or(json!({}));
        let mut attrs = admission::Attributes {
            operation: admission::Operation::Delete,
            resource: &self.resource,
            subresource: "",
            namespace,
            name,
            object: None,
            old_object: Some(&obj),
            user: &opts.user,
            dry_run: opts.dry_run,
            options: json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": opts.propagation_policy}),
        };
        // Mutating admission sees deletes too (webhooks may refuse them).
        self.registries.admit(&mut attrs).await?;
        self.registries.validate_admission(&attrs).await?;
        let mut finalizers = meta::finalizers(&obj);
        let extra = match opts.propagation_policy.as_deref() {
            Some("Foreground") => Some("foregroundDeletion"),
            Some("Orphan") => Some("orphan"),
            Some("Background") | None => None,
            Some(other) => {
                return Err(self.invalid(
                    name,
                    vec![FieldError::not_supported(
                        "propagationPolicy",
                        json!(other),
                        &["Foreground", "Background", "Orphan"],
                    )],
                ))
            }
        };
        if let Some(f) = extra {
            if !finalizers.iter().any(|x| x == f) {
                finalizers.push(f.to_string());
            }
        }
        if let Some(why) = self.strategy.forbid_deletion(name) {
            return Err(ApiError::forbidden(format!(
                "{} {name:?} is forbidden: {why}",
                crate::api::status::qualified_resource(&self.resource.group, &self.resource.plural)
            ))
            .with_details(Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    name: Some(name.to_string()),
                    kind: Some(self.resource.plural.clone()),
                    ..Default::default()
                },
            )));
        }
        let requested = opts.grace_period_seconds;
        let plan = graceful::plan(&*self.strategy, &obj, requested);
        if plan == graceful::Plan::Pending {
            // A graceful deletion already runs and this one would not end
            // it sooner: the object is answered as it is.
            return Ok((self.served(current.to_json()), false));
        }
        let deferred = self.strategy.defer_deletion(&mut obj.clone());
        let mut delete_pre = Preconditions {
            uid: opts.preconditions.uid.clone(),
            resource_version: opts.preconditions.resource_version.clone(),
        };
        if matches!(plan, graceful::Plan::Graceful { .. }) || !finalizers.is_empty() || deferred {
            // Marked first (the update watchers see), then removed only if
            // neither a grace period nor a finalizer keeps it.
            let mut outcome = DeleteMark::DeleteNow;
            let marked = if opts.dry_run {
                let mut v = obj.clone();
                outcome = self.mark_for_deletion(&mut v, requested, extra);
                v["metadata"]["resourceVersion"] = json!(current.resource_version.to_string());
                crate::storage::store::Object {
                    value: Self::encode(&v),
                    ..current.clone()
                }
            } else {
                store
                    .guaranteed_update(&key, &opts.preconditions, false, |existing| {
                        let Some(existing) = existing else {
                            return Err(StorageError::NotFound { key: key.clone() });
                        };
                        let mut v: Value = serde_json::from_slice(&existing.value)
                            .map_err(|e| StorageError::Internal(e.to_string()))?;
                        outcome = self.mark_for_deletion(&mut v, requested, extra);
                        Ok(match outcome {
                            DeleteMark::Pending | DeleteMark::DeleteNow => None,
                            DeleteMark::Kept | DeleteMark::GraceOver => Some(Self::encode(&v)),
                        })
                    })
                    .await
                    .map_err(|e| storage_err(&self.resource, "delete", name, e))?
            };
            match outcome {
                DeleteMark::Pending | DeleteMark::Kept => {
                    return Ok((self.served(marked.to_json()), false));
                }
                DeleteMark::GraceOver => {
                    if opts.dry_run {
                        return Ok((self.served(marked.to_json()), true));
                    }
                    // Marked with no grace left: removed now, under the
                    // client's own preconditions (a resourceVersion it gave
                    // moves to the mark's, as upstream's Delete does).
                    if delete_pre.resource_version.is_some() {
                        delete_pre.resource_version = Some(marked.resource_version.to_string());
                    }
                    return match store.delete(&key, &delete_pre, |_| Ok(())).await {
                        Ok(deleted) => {
                            self.released(&deleted.value).await;
                            Ok((self.served(deleted.to_json()), true))
                        }
                        // Another delete won the race (upstream's ignoreNotFound).
                        Err(StorageError::NotFound { .. }) => {
                            Ok((self.served(marked.to_json()), true))
                        }
                        Err(e) => Err(storage_err(&self.resource, "delete", name, e)),
                    };
                }
                DeleteMark::DeleteNow => {}
            }
        }
        if opts.dry_run {
            return Ok((self.served(current.to_json()), true));
        }
        let deleted = store
            .delete(&key, &delete_pre, |_| Ok(()))
            .await
            .map_err(|e| storage_err(&self.resource, "delete", name, e))?;
        self.released(&deleted.value).await;
        Ok((self.served(deleted.to_json()), true))
    }

    /// The update a delete makes to `v` (as stored now), and what follows
    /// it: upstream's updateForGracefulDeletionAndFinalizers.
    fn mark_for_deletion(
        &self,
        v: &mut Value,
        requested: Option<i64>,
        extra_finalizer: Option<&str>,
    ) -> DeleteMark {
        let plan = graceful::plan(&*self.strategy, v, requested);
        if plan == graceful::Plan::Pending {
            return DeleteMark::Pending;
        }
        let deferred = self.strategy.defer_deletion(v);
        if let Some(x) = extra_finalizer {
            let m = meta::meta_mut(v);
            let mut f: Vec<Value> = m
                .get("finalizers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if !f.iter().any(|v| v == x) {
                f.push(Value::String(x.into()));
            }
            m.insert("finalizers".into(), Value::Array(f));
        }
        let kept = deferred || !meta::finalizers(v).is_empty();
        match plan {
            graceful::Plan::Graceful {
                deletion_timestamp,
                period,
            } => {
                graceful::mark(v, &deletion_timestamp, period);
                if kept || period > 0 {
                    DeleteMark::Kept
                } else {
                    DeleteMark::GraceOver
                }
            }
            _ if kept => {
                graceful::mark_as_deleting(v);
                DeleteMark::Kept
            }
            _ => DeleteMark::DeleteNow,
        }
    }

    /// The field-management scope of this resource: its schema (built-in
    /// type or CRD structural schema) and whether it has a status subresource.
    fn with_scope<T>(&self, subresource: &str, f: impl FnOnce(&fieldmanager::Scope) -> T) -> T {
        use fieldmanager::Schema;
        let status_subresource = self.resource.subresource("status").is_some();
        let builtin = self
            .resource
            .schema
            .and_then(patch::strategic::type_name_of)
            .and_then(|n| Schema::builtin(&n));
        let schema = match (
            builtin,
            self.resource
                .custom
                .as_ref()
                .and_then(|c| c.schema.as_ref()),
        ) {
            (Some(s), _) => s,
            (None, Some(crd_schema)) => Schema::structural(crd_schema),
            (None, None) => Schema::untyped(),
        };
        let scope = fieldmanager::Scope {
            schema,
            subresource,
            status_subresource,
            now: None,
        };
        f(&scope)
    }

    /// Records an Update by the request's field manager in managedFields.
    fn record_fields(
        &self,
        old: Option<&Value>,
        new: &Value,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Value {
        let manager = opts.manager();
        let version = self.resource.api_version();
        self.with_scope(subresource, |scope| {
            fieldmanager::update_in(scope, old, new, &manager, &version)
        })
    }

    /// Server-side apply of `applied` onto `live` (None: the object is created).
    fn apply_fields(
        &self,
        live: Option<&Value>,
        applied: &Value,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let manager = opts.field_manager.clone().unwrap_or_default();
        self.with_scope(subresource, |scope| {
            fieldmanager::apply_in(scope, live, applied, &manager, opts.force)
        })
        .map_err(|e| match e {
            fieldmanager::ApplyError::Conflicts(c) => {
                let causes = c
                    .causes()
                    .into_iter()
                    .filter_map(|v| {
                        serde_json::from_value::<
                            k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause,
                        >(v)
                        .ok()
                    })
                    .collect();
                ApiError::new(409, crate::api::Reason::Conflict, c.to_status_message())
                    .with_details(Some(
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                            causes: Some(causes),
                            ..Default::default()
                        },
                    ))
            }
            other => {
                let reason = match other.code() {
                    400 => crate::api::Reason::BadRequest,
                    422 => crate::api::Reason::Invalid,
                    _ => crate::api::Reason::InternalError,
                };
                ApiError::new(other.code(), reason, other.message())
            }
        })
    }

    /// Gives back what a deleted object held.
    async fn released(&self, stored: &[u8]) {
        if let Some(a) = self
            .registries
            .allocator(&self.resource.group, &self.resource.kind)
        {
            if let Ok(v) = serde_json::from_slice::<Value>(stored) {
                a.release(&v).await;
            }
        }
    }

    /// deletecollection: deletes every object the selection names; returns them.
    pub async fn delete_collection(
        &self,
        namespace: &str,
        params: &ListParams,
        opts: &DeleteOptions,
    ) -> Result<ListOut, ApiError> {
        let list = self
            .list(
                namespace,
                &ListParams {
                    limit: 0,
                    continue_token: None,
                    ..params.clone()
                },
            )
            .await?;
        let mut out = ListOut {
            resource_version: list.resource_version,
            ..Default::default()
        };
        // Several deletes in flight (upstream runs delete-collection workers
        // too); answers stay in list order.
        use futures::StreamExt;
        let mut deletes = futures::stream::iter(list.items)
            .map(|item| async move {
                let v: Value = serde_json::from_slice(&item).unwrap_or(json!({}));
                let (ns, name) = (meta::namespace(&v).to_string(), meta::name(&v).to_string());
                self.delete(&ns, &name, opts).await
            })
            .buffered(DELETE_COLLECTION_WORKERS);
        while let Some(result) = deletes.next().await {
            match result {
                Ok((obj, _)) => out.items.push(obj),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The kind served at a subresource (for Status bodies and decoding).
    pub fn subresource_kind(&self, subresource: Option<&str>) -> (String, String, String) {
        self.kind_for(subresource)
    }

    /// How many objects the cache holds.
    pub fn cached_count(&self) -> Option<usize> {
        self.cacher.as_ref().map(|c| c.len())
    }
}

/// Selectable field values of an object, for callers outside the registry.
pub fn selectable_values(r: &Resource, v: &Value) -> BTreeMap<String, String> {
    attrs_fn(r.selectable_fields.clone(), r.namespaced)(v).fields
}
