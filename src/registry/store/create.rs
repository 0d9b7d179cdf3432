//! create (upstream's `Store.Create`): decode, default, admit, validate,
//! allocate and store, generating a colliding generated name again instead of
//! answering 409.

use serde_json::{json, Value};

use super::{storage_err, Registry};
use crate::api::ApiError;
use crate::registry::admission;
use crate::registry::{meta, WriteOptions, Written};
use crate::storage::store::StorageError;
use crate::trace;

/// upstream's `maxNameGenerationCreateAttempts`.
const MAX_GENERATE_NAME_ATTEMPTS: usize = 8;

impl Registry {
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
        // Only a revision storage could hold is refused: upstream's versioner
        // ignores a resourceVersion that does not parse as one ("v1") or is 0,
        // and clears it like any other.
        let resource_version_set =
            super::parse_rv(meta::str_field(&obj, "resourceVersion")).is_ok_and(|rv| rv != 0);
        // A name the server generates may collide; it is generated again
        // rather than answered with 409 (KEP-4420, RetryGenerateName).
        let generated_from = (meta::name(&obj).is_empty())
            .then(|| obj["metadata"]["generateName"].as_str().map(String::from))
            .flatten()
            .filter(|p| !p.is_empty());
        let began = trace::start();
        let before = began.map(|_| obj.clone());
        self.strategy.default(&mut obj);
        meta::prepare_create(&mut obj);
        if !self.strategy.tracks_generation() {
            meta::meta_mut(&mut obj).remove("generation");
        }
        // As upstream, the writer owns what it sent (defaults included),
        // not what admission or the strategy add after.
        if !opts.force_applied {
            obj = self.record_fields(None, obj, "", opts);
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
}
