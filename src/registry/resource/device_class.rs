//! DeviceClass (upstream's pkg/registry/resource/deviceclass); its
//! validation is in claim.rs.

use serde_json::Value;

use super::claim;
use super::{present, set_generation, NAME_AGE_COLUMNS};
use crate::registry::strategy::{Column, Strategy};
use crate::registry::validation::FieldError;

pub struct DeviceClassStrategy;

fn drop_disabled_class(new: &mut Value, old: Option<&Value>) {
    if old.is_some_and(|o| present(&o["spec"]["extendedResourceName"])) {
        return;
    }
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("extendedResourceName");
    }
}

impl Strategy for DeviceClassStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation(obj, 1);
        drop_disabled_class(obj, None);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_disabled_class(new, Some(old));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        claim::validate_class(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        claim::validate_class_update(new, old)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAME_AGE_COLUMNS)
    }
}
