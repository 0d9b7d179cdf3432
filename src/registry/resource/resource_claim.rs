//! ResourceClaim (upstream's pkg/registry/resource/resourceclaim); its
//! validation is in claim.rs.

use serde_json::{json, Value};

use super::claim;
use super::{
    default_claim_spec, default_tolerations, description_column, drop_disabled_claim_spec,
    drop_generation, each_mut,
};
use crate::registry::helpers::items;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ResourceClaimStrategy;

pub(super) const STATE_DESCRIPTION: &str =
    "A summary of the current state (allocated, pending, reserved, etc.).";

/// The printer's resourceClaimState.
pub(super) fn claim_state(o: &Value) -> Value {
    let deleted = crate::registry::meta::is_deleting(o);
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if o["status"]["allocation"].is_object() {
        states.push("allocated");
        if !items(&o["status"]["reservedFor"]).is_empty() {
            states.push("reserved");
        }
    } else if !deleted {
        states.push("pending");
    }
    json!(states.join(","))
}

pub(super) static CLAIM_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            description_column("State", STATE_DESCRIPTION, claim_state),
            age_column(),
        ]
    });

impl Strategy for ResourceClaimStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_claim_spec(spec);
        }
        if let Some(results) = obj
            .get_mut("status")
            .and_then(|s| s.get_mut("allocation"))
            .and_then(|a| a.get_mut("devices"))
        {
            each_mut(results, "results", default_tolerations);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(spec) = obj.get_mut("spec") {
            drop_disabled_claim_spec(spec, None);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(spec) = new.get_mut("spec") {
            drop_disabled_claim_spec(spec, Some(&old["spec"]));
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_claim(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_claim_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CLAIM_COLUMNS)
    }
}
