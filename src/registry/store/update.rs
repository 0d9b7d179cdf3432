//! update and patch (upstream's `Store.Update` and the patch handler): both
//! turn the current object into a desired one and share one compare-and-swap
//! loop, which also carries the subresources (status, binding, resize, ...)
//! that change only their part of the object.

use serde_json::{json, Value};

use super::{storage_err, Registry};
use crate::api::ApiError;
use crate::registry::admission;
use crate::registry::strategy::StatusUpdate;
use crate::registry::validation::FieldError;
use crate::registry::{
    certificates, conversion, core, fieldmanager, graceful, meta, patch, pod_resize, PatchType,
    WriteOptions, Written,
};
use crate::storage::store::{self, Preconditions, StorageError, CONFLICT_MODIFIED};
use crate::trace;

impl Registry {
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
            let mut old = conversion::from_storage(&self.registries, &self.resource, old)?;
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
            // "0", like none, asks for an unconditional update (upstream's
            // doUnconditionalUpdate: the versioner reads both as 0).
            let asked_rv = meta::str_field(&new, "resourceVersion").to_string();
            if !asked_rv.is_empty()
                && asked_rv != "0"
                && asked_rv != current.resource_version.to_string()
            {
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
                new = status_update(self.strategy.status_update(), new, &old);
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
                let before = began.map(|_| new.clone());
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
                    new = self.record_fields(Some(&old), new, subresource.unwrap_or(""), opts);
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
                new = self.record_fields(Some(&old), new, subresource.unwrap_or(""), opts);
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
        // A field the kind does not have cannot be owned: upstream's
        // field manager fails to type the applied object, whatever
        // fieldValidation says. Upstream answers 500 (kubernetes#122480);
        // kapi says 400 with the same words, the client's fault as it is.
        if let Some(codec) = r.codec {
            if let Ok(typed) = codec(applied) {
                let mut unknown = Vec::new();
                super::codec::unknown_fields(applied, &typed, "", &mut unknown);
                if !unknown.is_empty() {
                    let group_version = if r.group.is_empty() {
                        format!("/{}", r.version)
                    } else {
                        r.api_version()
                    };
                    let errs: Vec<String> = unknown
                        .iter()
                        .map(|f| format!(".{f}: field not declared in schema"))
                        .collect();
                    let errs = match errs.as_slice() {
                        [one] => one.clone(),
                        many => format!("errors:\n  {}", many.join("\n  ")),
                    };
                    let ns = if ns.is_empty() && r.namespaced {
                        namespace
                    } else {
                        ns
                    };
                    return Err(ApiError::bad_request(format!(
                        "failed to create typed patch object ({ns}/{name}; {group_version}, Kind={}): {errs}",
                        r.kind
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The object a status write stores: what the kind's status strategy
/// keeps of the one sent, the rest from the stored one. A status left out
/// leaves none (upstream's strategies delete the key), rather than a
/// `null` a CRD schema refuses.
fn status_update(how: StatusUpdate, sent: Value, old: &Value) -> Value {
    let take = |into: &mut Value, from: &Value, key: &str| {
        if let Some(m) = into.as_object_mut() {
            match from.get(key) {
                Some(v) => m.insert(key.into(), v.clone()),
                None => m.remove(key),
            };
        }
    };
    if how == StatusUpdate::StatusOnly {
        let mut merged = old.clone();
        take(&mut merged, &sent, "status");
        return merged;
    }
    let mut merged = sent;
    take(&mut merged, old, "spec");
    let reset = match how {
        StatusUpdate::AllButSpecAndLabels => Some("labels"),
        StatusUpdate::AllButSpecAndOwners => Some("ownerReferences"),
        _ => None,
    };
    if let Some(key) = reset {
        let kept = old["metadata"].get(key).cloned();
        let m = meta::meta_mut(&mut merged);
        match kept {
            Some(v) => m.insert(key.into(), v),
            None => m.remove(key),
        };
    }
    merged
}
