//! ClusterRole (upstream's pkg/registry/rbac/clusterrole).

use serde_json::{json, Value};

use super::validate_rules;
use crate::registry::helpers::{self, items};
use crate::registry::meta::NameRule;
use crate::registry::strategy::Strategy;
use crate::registry::validation::FieldError;

pub struct ClusterRoleStrategy;

impl Strategy for ClusterRoleStrategy {
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
        let mut errs = validate_rules(obj, false);
        let agg = &obj["aggregationRule"];
        if !agg.is_null() {
            let selectors = items(&agg["clusterRoleSelectors"]);
            if selectors.is_empty() {
                errs.push(FieldError::required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                ));
            }
            for (i, sel) in selectors.iter().enumerate() {
                let p = format!("aggregationRule.clusterRoleSelectors[{i}]");
                let sel_errs = helpers::validate_label_selector(sel, &p);
                let unusable = helpers::selector_matches(sel, &json!({})).is_none();
                errs.extend(sel_errs);
                if unusable {
                    errs.push(FieldError::invalid(
                        p,
                        sel.clone(),
                        "invalid label selector.",
                    ));
                }
            }
        }
        errs
    }
}
