//! Role (upstream's pkg/registry/rbac/role).

use serde_json::Value;

use super::validate_rules;
use crate::registry::meta::NameRule;
use crate::registry::strategy::Strategy;
use crate::registry::validation::FieldError;

pub struct RoleStrategy;

impl Strategy for RoleStrategy {
    /// `rules` has no omitempty: Go writes `null` for a role without any.
    fn default(&self, obj: &mut serde_json::Value) {
        if let Some(m) = obj.as_object_mut() {
            m.entry("rules").or_insert(serde_json::Value::Null);
        }
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_rules(obj, true)
    }
}
