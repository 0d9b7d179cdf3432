//! The generic registry (upstream's `genericregistry.Store`): every verb
//! written once over storage, the watch cache and a resource's strategy.
//! Each stage of the write path is a named step: decode, default, prepare,
//! admit, validate, encode, store.
//!
//! Laid out by concept: the options every verb takes are in `options`, the
//! per-resource store (`Registry`) and its verbs under `store/`, one file
//! per verb; the kinds' strategies live in their API group's module.
//! `Registries`, the set of stores built from the catalog on first use, and
//! the `Allocator` hook stay here.

pub mod admission;
pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod conversion;
pub mod coordination;
pub mod core;
pub mod customresource;
pub mod discovery;
pub mod events;
pub mod eviction;
pub mod fieldmanager;
pub mod flowcontrol;
pub mod graceful;
pub mod helpers;
pub mod ipaddress;
pub mod networking;
pub mod node;
mod options;
pub mod patch;
pub mod pod_resize;
pub mod policy;
pub mod rbac;
pub mod resource;
pub mod scale;
pub mod scheduling;
pub mod service_resolver;
pub mod storage_kinds;
mod store;
pub mod strategy;

/// Field errors and ObjectMeta rules sit in `api`, below every user of them;
/// strategies reach them here too.
pub use crate::api::{meta, validation};

pub use options::{
    DeleteOptions, FieldValidation, ListOut, ListParams, PatchType, WriteOptions, Written,
};
pub use store::{field_value, selectable_values, Registry};

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::Value;

use crate::api::catalog::Catalog;
use crate::api::ApiError;
use crate::storage::cacher_set::CacherSet;
use crate::storage::store::Store;

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
    by_gvr: Arc<RwLock<crate::api::catalog::GvrMap<Arc<Registry>>>>,
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
        let found = self
            .by_gvr
            .read()
            .get(&(group, version, plural) as &dyn crate::api::catalog::GvrKey)
            .cloned();
        if found.is_some() {
            return found;
        }
        let resource = self.catalog.get_stored(group, version, plural)?;
        let reg = Arc::new(Registry::new(resource, self.clone()));
        let key = (group.to_string(), version.to_string(), plural.to_string());
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
