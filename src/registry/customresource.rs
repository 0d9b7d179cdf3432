//! Custom resources: the strategy that applies a CRD version's schema
//! (defaults, validation), its status and scale subresources and its
//! printer columns, and the conversion between its versions.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::catalog::CustomInfo;
use crate::api::jsonpath;
use crate::registry::strategy::{Strategy, AGE_DESCRIPTION, NAME_DESCRIPTION};
use crate::registry::validation::FieldError;

pub struct CustomResourceStrategy {
    pub info: Arc<CustomInfo>,
}

pub fn strategy(info: Arc<CustomInfo>) -> Arc<dyn Strategy> {
    Arc::new(CustomResourceStrategy { info })
}

/// What an object looks like to generation tracking: all but metadata (and
/// status when status is a subresource), as upstream's CR strategy compares.
fn desired(v: &Value, status_subresource: bool) -> Value {
    let mut c = v.clone();
    if let Some(m) = c.as_object_mut() {
        m.remove("metadata");
        if status_subresource {
            m.remove("status");
        }
    }
    c
}

fn cell(o: &Value, kind: &str, path: &str) -> Value {
    match jsonpath::get(o, path) {
        None | Some(Value::Null) => Value::Null,
        Some(v) => match (kind, v) {
            ("date", Value::String(s)) => json!(crate::registry::strategy::human_age(s)),
            ("integer" | "number" | "boolean", other) => other.clone(),
            (_, Value::String(s)) => json!(s),
            (_, other) => json!(other.to_string()),
        },
    }
}

impl Strategy for CustomResourceStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(schema) = &self.info.schema {
            crate::schema::apply_defaults(obj, schema);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        // Custom resources always carry a generation, spec or not.
        crate::registry::meta::meta_mut(obj).insert("generation".into(), json!(1));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        self.validate_with(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_with(new, Some(old))
    }

    fn generation_changed(&self, new: &Value, old: &Value) -> bool {
        desired(new, self.info.status) != desired(old, self.info.status)
    }

    fn dynamic_columns(&self) -> Option<(Vec<Value>, Box<dyn Fn(&Value) -> Vec<Value> + '_>)> {
        let mut defs = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
        ];
        let cols = self.info.printer_columns.clone();
        if cols.is_empty() {
            defs.push(json!({"name": "Age", "type": "date", "format": "", "description": AGE_DESCRIPTION, "priority": 0}));
            return Some((
                defs,
                Box::new(|o: &Value| {
                    vec![
                        o["metadata"]["name"].clone(),
                        cell(o, "date", ".metadata.creationTimestamp"),
                    ]
                }),
            ));
        }
        for c in &cols {
            let description = if c.description.is_empty() {
                format!(
                    "Custom resource definition column (in JSONPath format): {}",
                    c.json_path
                )
            } else {
                c.description.clone()
            };
            defs.push(json!({"name": c.name, "type": c.kind, "format": c.format, "description": description, "priority": c.priority}));
        }
        Some((
            defs,
            Box::new(move |o: &Value| {
                let mut row = vec![o["metadata"]["name"].clone()];
                row.extend(cols.iter().map(|c| cell(o, &c.kind, &c.json_path)));
                row
            }),
        ))
    }
}

impl CustomResourceStrategy {
    /// The schema (types, formats, bounds...), the CEL rules and the scale paths.
    fn validate_with(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(schema) = &self.info.schema {
            errs.extend(crate::schema::validate(obj, schema, ""));
            errs.extend(crate::cel::validate(schema, obj, old));
        }
        if let Some(scale) = &self.info.scale {
            if let Some(v) = jsonpath::get(obj, &scale.spec_replicas_path) {
                if !v.is_null() && !v.is_i64() {
                    errs.push(FieldError::invalid(
                        scale.spec_replicas_path.trim_start_matches('.'),
                        v.clone(),
                        "must be an integer",
                    ));
                }
            }
        }
        errs
    }
}

/// Rewrites a custom resource's apiVersion to `group/version`: conversion
/// strategy `None`, where versions share one schema.
pub fn convert_none(obj: &mut Value, group: &str, version: &str) {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), json!(format!("{group}/{version}")));
    }
}
