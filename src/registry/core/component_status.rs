//! ComponentStatus (upstream's pkg/registry/core/componentstatus): computed
//! on request and never written, so only its table is its own; apart so the
//! one kind with no storage is found by its name.

use serde_json::{json, Value};

use crate::registry::strategy::{name_column, Column, Strategy};

/// componentstatuses: computed on request, never written; only the table
/// upstream prints (printComponentStatus) is its own.
pub struct ComponentStatusStrategy;

fn healthy_condition(o: &Value) -> &Value {
    o["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Healthy"))
        .unwrap_or(&Value::Null)
}

static COMPONENT_STATUS_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            Column {
                name: "Status",
                kind: "string",
                format: "",
                description: "Status of the component conditions",
                priority: 0,
                cell: |o| {
                    json!(match healthy_condition(o)["status"].as_str() {
                        Some("True") => "Healthy",
                        Some("False") => "Unhealthy",
                        _ => "Unknown",
                    })
                },
            },
            Column {
                name: "Message",
                kind: "string",
                format: "",
                description: "Message of the component conditions",
                priority: 0,
                cell: |o| json!(healthy_condition(o)["message"].as_str().unwrap_or("")),
            },
            Column {
                name: "Error",
                kind: "string",
                format: "",
                description: "Error of the component conditions",
                priority: 0,
                cell: |o| json!(healthy_condition(o)["error"].as_str().unwrap_or("")),
            },
        ]
    });

impl Strategy for ComponentStatusStrategy {
    fn columns(&self) -> Option<&'static [Column]> {
        Some(&COMPONENT_STATUS_COLUMNS)
    }
}
