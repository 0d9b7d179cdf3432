//! The validate stage of the write path: object-meta checks plus the
//! strategy's, answered as one 422 Invalid naming the kind. Shared by create,
//! update, delete and the subresources that bring their own errors, so every
//! verb reports invalid objects the same way.

use serde_json::Value;

use super::Registry;
use crate::api::ApiError;
use crate::registry::meta;
use crate::registry::validation::FieldError;

impl Registry {
    pub(super) fn invalid(&self, name: &str, errs: Vec<FieldError>) -> ApiError {
        ApiError::invalid(
            &self.resource.group,
            &self.resource.kind,
            name,
            errs.iter().map(FieldError::to_cause).collect(),
        )
    }

    pub(super) fn validate_create(&self, obj: &Value) -> Result<(), ApiError> {
        let mut errs = meta::validate(obj, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(self.strategy.validate(obj));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(obj), errs))
        }
    }

    /// Object-meta checks plus a subresource's own errors.
    pub(super) fn errors_to_invalid(
        &self,
        new: &Value,
        more: Vec<FieldError>,
    ) -> Result<(), ApiError> {
        let mut errs = meta::validate(new, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(more);
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(new), errs))
        }
    }

    pub(super) fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut errs = meta::validate(new, self.resource.namespaced, self.strategy.name_rule());
        errs.extend(meta::validate_update(new, old));
        errs.extend(self.strategy.validate_update(new, old));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(self.invalid(meta::name(new), errs))
        }
    }
}
