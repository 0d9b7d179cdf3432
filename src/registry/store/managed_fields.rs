//! managedFields on writes (upstream's field manager as the store wires it
//! in): the schema scope of this resource, recording an Update's fields, and
//! server-side apply, whose conflicts are answered as 409 causes.

use serde_json::Value;

use super::Registry;
use crate::api::ApiError;
use crate::registry::{fieldmanager, patch, WriteOptions};

impl Registry {
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
    pub(super) fn record_fields(
        &self,
        old: Option<&Value>,
        new: Value,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Value {
        let manager = opts.manager();
        let version = self.resource.api_version();
        self.with_scope(subresource, |scope| {
            fieldmanager::update_owned(scope, old, new, &manager, &version)
        })
    }

    /// Server-side apply of `applied` onto `live` (None: the object is created).
    pub(super) fn apply_fields(
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
}
