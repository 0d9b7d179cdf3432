//! The options a verb takes and what it answers: upstream's metav1
//! CreateOptions, UpdateOptions, PatchOptions, DeleteOptions and ListOptions as
//! the store sees them. Apart from the store because the API handlers build
//! them and every verb shares them.

use std::sync::Arc;

use bytes::Bytes;

use crate::registry::fieldmanager;
use crate::storage::store::Preconditions;

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
    pub user: crate::authentication::UserInfo,
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
    pub user: crate::authentication::UserInfo,
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
