//! delete and deletecollection (upstream's `Store.Delete` and
//! `DeleteCollection`): a delete first marks the object (grace period,
//! finalizers, propagation policy) and removes it only when nothing keeps it;
//! what an allocator gave the object is given back.

use bytes::Bytes;
use serde_json::{json, Value};

use super::{storage_err, Registry};
use crate::api::ApiError;
use crate::registry::admission;
use crate::registry::validation::FieldError;
use crate::registry::{graceful, meta, DeleteOptions, ListOut, ListParams};
use crate::storage::store::{Preconditions, StorageError};

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

/// Deletes one delete-collection keeps in flight.
const DELETE_COLLECTION_WORKERS: usize = 16;

impl Registry {
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
            // Namespaces and CRDs deleting their contents first have a
            // Delete of their own upstream, which only sets the deletion
            // timestamp (no grace period, no generation bump).
            _ if deferred => {
                let m = meta::meta_mut(v);
                if m.get("deletionTimestamp").is_none_or(Value::is_null) {
                    m.insert(
                        "deletionTimestamp".into(),
                        Value::String(graceful::now_rfc3339()),
                    );
                }
                DeleteMark::Kept
            }
            _ if kept => {
                graceful::mark_as_deleting(v);
                DeleteMark::Kept
            }
            _ => DeleteMark::DeleteNow,
        }
    }

    /// Gives back what a deleted object held.
    pub(super) async fn released(&self, stored: &[u8]) {
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
}
