//! The generic store (upstream's `genericregistry.Store`): one `Registry` per
//! stored resource, holding its strategy, storage key root and watch cache.
//! Each verb has its own file beside this one, as upstream's store.go names
//! them; this file keeps what they all lean on: the key layout, the selector
//! attributes the cache indexes, and how storage errors read as API errors.

use std::sync::Arc;

use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::registry::{strategy, Registries};
use crate::storage::cacher::Cacher;
use crate::storage::store::StorageError;

use attrs::attrs_fn;
pub use attrs::{field_value, selectable_values};

mod attrs;
mod codec;
mod create;
mod delete;
mod get;
mod list;
mod managed_fields;
mod update;
mod validate;
mod watch;

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

impl Registry {
    pub(super) fn new(resource: Arc<Resource>, registries: Registries) -> Self {
        let strategy = match &resource.custom {
            Some(custom) => strategy::StrategyRef::Dynamic(
                crate::registry::customresource::strategy(custom.clone()),
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

    /// The revision of the last change to this resource's objects, as its
    /// watch cache knows them once it has every write this server
    /// acknowledged ([`Registry::fresh_rv`]); `None` without a watch cache.
    /// A caller that parsed a list keeps what it parsed while this holds.
    pub async fn last_change(&self) -> Result<Option<i64>, ApiError> {
        let Some(cacher) = self.cacher.as_ref() else {
            return Ok(None);
        };
        let written = self.written.load(std::sync::atomic::Ordering::Acquire);
        cacher
            .last_change(written.max(0))
            .await
            .map_err(|e| storage_err(&self.resource, "list", "", e))
    }

    /// The key prefix of one namespace's objects; `None` when the request
    /// covers every object (no namespace, or a cluster-scoped resource).
    pub(super) fn namespace_prefix(&self, namespace: &str) -> Option<String> {
        (self.resource.namespaced && !namespace.is_empty())
            .then(|| format!("{}{namespace}/", self.key_root))
    }

    /// Whether `namespace` ("" for all) holds any object of this resource,
    /// never behind a write this server acknowledged: from the watch cache
    /// without building a list (admission asks it on every write), else a
    /// list of one.
    pub async fn any_in(&self, namespace: &str) -> Result<bool, ApiError> {
        if let Some(cacher) = self.cacher.as_ref() {
            let prefix = self
                .namespace_prefix(namespace)
                .unwrap_or_else(|| self.key_root.clone());
            let written = self.written.load(std::sync::atomic::Ordering::Acquire);
            let any = cacher
                .any_under(&prefix, written.max(0))
                .await
                .map_err(|e| storage_err(&self.resource, "list", "", e))?;
            if let Some(any) = any {
                return Ok(any);
            }
        }
        let params = crate::registry::ListParams {
            resource_version: Some(self.fresh_rv()),
            limit: 1,
            ..Default::default()
        };
        Ok(!self.list(namespace, &params).await?.items.is_empty())
    }

    /// Whether a watch cache holds this resource's objects (and serves
    /// each one's JSON from memory).
    pub fn watch_cached(&self) -> bool {
        self.cacher.as_ref().is_some_and(|c| c.is_cached())
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
        // Built by hand: `format!` costs several times as much, on every request.
        let mut key = String::with_capacity(self.key_root.len() + namespace.len() + name.len() + 1);
        key.push_str(&self.key_root);
        if self.resource.namespaced {
            key.push_str(namespace);
            key.push('/');
        }
        key.push_str(name);
        key
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

    /// The kind served at a subresource (for Status bodies and decoding).
    pub fn subresource_kind(&self, subresource: Option<&str>) -> (String, String, String) {
        self.kind_for(subresource)
    }

    /// How many objects the cache holds.
    pub fn cached_count(&self) -> Option<usize> {
        self.cacher.as_ref().map(|c| c.len())
    }
}
