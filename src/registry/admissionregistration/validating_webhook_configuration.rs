//! ValidatingWebhookConfiguration (upstream's
//! pkg/registry/admissionregistration/validatingwebhookconfiguration); its
//! webhooks' defaults and rules are shared with the mutating kind in
//! webhook.rs.

use serde_json::Value;

use super::common::set_generation_one;
use super::webhook::{default_webhooks, update_options, validate_configuration, COLUMNS, CREATE};
use crate::registry::strategy::{Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ValidatingWebhookConfigurationStrategy;

impl Strategy for ValidatingWebhookConfigurationStrategy {
    fn default(&self, obj: &mut Value) {
        default_webhooks(obj, false);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_generation_one(obj);
    }

    fn generation_changed(&self, new: &Value, old: &Value) -> bool {
        new.get("webhooks") != old.get("webhooks")
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_configuration(obj, false, &CREATE)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_configuration(new, false, &update_options(new, old))
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&COLUMNS)
    }
}
