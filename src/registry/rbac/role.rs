//! Role (upstream's pkg/registry/rbac/role).

use serde_json::Value;

use super::validate_rules;
use crate::registry::meta::NameRule;
use crate::registry::strategy::Strategy;
use crate::registry::validation::FieldError;

pub struct RoleStrategy;

impl Strategy for RoleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_rules(obj, true)
    }
}
