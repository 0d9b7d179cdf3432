//! ServiceAccount (upstream's pkg/registry/core/serviceaccount). The strategy
//! is small (deletes return the object; the table counts its secrets), but a
//! kind gets its own file so it is found by its name.

use serde_json::json;

use crate::registry::strategy::{age_column, name_column, Column, Strategy};

pub struct ServiceAccountStrategy;

static SA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Secrets", kind: "string", format: "", description: "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.", priority: 0, cell: |o| json!(o["secrets"].as_array().map_or(0, |a| a.len())) },
        age_column(),
    ]
});

impl Strategy for ServiceAccountStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SA_COLUMNS)
    }
}
