//! ResourceClaimTemplate (upstream's
//! pkg/registry/resource/resourceclaimtemplate); its validation is in
//! claim.rs.

use serde_json::Value;

use super::claim;
use super::{default_claim_spec, drop_disabled_claim_spec, drop_generation, NAME_AGE_COLUMNS};
use crate::registry::strategy::{Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ResourceClaimTemplateStrategy;

fn template_claim_spec(obj: &mut Value) -> Option<&mut Value> {
    obj.get_mut("spec").and_then(|s| s.get_mut("spec"))
}

impl Strategy for ResourceClaimTemplateStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = template_claim_spec(obj) {
            default_claim_spec(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(spec) = template_claim_spec(obj) {
            drop_disabled_claim_spec(spec, None);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(spec) = template_claim_spec(new) {
            drop_disabled_claim_spec(spec, Some(&old["spec"]["spec"]));
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_template(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_template_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAME_AGE_COLUMNS)
    }
}
