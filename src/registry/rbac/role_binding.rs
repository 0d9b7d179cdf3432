//! RoleBinding (upstream's pkg/registry/rbac/rolebinding).

use serde_json::Value;

use super::{binding_columns, default_binding, validate_binding, validate_binding_update};
use crate::registry::meta::NameRule;
use crate::registry::strategy::{Column, Strategy};
use crate::registry::validation::FieldError;

pub(super) static ROLE_BINDING_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(
    || {
        binding_columns("roleBinding", "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.")
    },
);

pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn default(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_binding(obj, true)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_binding_update(new, old, true)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&ROLE_BINDING_COLUMNS)
    }
}
