//! CSIStorageCapacity (upstream's pkg/registry/storage/csistoragecapacity).

use serde_json::{json, Value};

use super::{col, go_json, go_struct, sem_eq, subdomain};
use crate::registry::helpers::{self, items, s};
use crate::registry::strategy::{name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

const SC_NAME_DESC: &str = "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.";
const CAPACITY_DESC: &str = "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.";

pub struct CSIStorageCapacityStrategy;

static CSI_STORAGE_CAPACITY_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            col("StorageClassName", "string", SC_NAME_DESC, |o| {
                json!(s(o, "storageClassName"))
            }),
            col("Capacity", "string", CAPACITY_DESC, |o| {
                match &o["capacity"] {
                    Value::Null => json!("<unset>"),
                    q => json!(helpers::quantity_str(q)),
                }
            }),
        ]
    });

fn validate_csi_storage_capacity(obj: &Value, allow_invalid_label_value: bool) -> Vec<FieldError> {
    let mut errs = helpers::validate_label_selector(&obj["nodeTopology"], "nodeTopology");
    if allow_invalid_label_value {
        errs.retain(|e| {
            !(e.field.contains(".values[") && e.kind == validation::ErrorType::Invalid)
        });
    }
    let sc = s(obj, "storageClassName");
    subdomain(sc, "storageClassName", &mut errs);
    if helpers::quantity(&obj["capacity"]).is_some_and(|q| q < 0) {
        let shown = helpers::quantity_str(&obj["capacity"]);
        errs.push(FieldError::invalid(
            "capacity",
            json!(shown),
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// A LabelSelector's JSON in Go's field order.
fn go_label_selector(sel: &Value) -> String {
    let mut fields = Vec::new();
    if !helpers::is_empty(&sel["matchLabels"]) {
        fields.push(("matchLabels", go_json(&sel["matchLabels"])));
    }
    if !helpers::is_empty(&sel["matchExpressions"]) {
        let reqs: Vec<String> = items(&sel["matchExpressions"])
            .iter()
            .map(|r| {
                let mut q = vec![
                    ("key", go_json(&json!(s(r, "key")))),
                    ("operator", go_json(&json!(s(r, "operator")))),
                ];
                if !helpers::is_empty(&r["values"]) {
                    q.push(("values", go_json(&r["values"])));
                }
                go_struct(&q)
            })
            .collect();
        fields.push(("matchExpressions", format!("[{}]", reqs.join(","))));
    }
    go_struct(&fields)
}

impl Strategy for CSIStorageCapacityStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csi_storage_capacity(obj, false)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        // A selector stored with invalid label values may keep them.
        let old_invalid =
            !helpers::validate_label_selector(&old["nodeTopology"], "nodeTopology").is_empty();
        let mut errs = validate_csi_storage_capacity(new, old_invalid);
        if !sem_eq(&new["nodeTopology"], &old["nodeTopology"]) {
            let shown = match &new["nodeTopology"] {
                Value::Null => "null".to_string(),
                sel => go_label_selector(sel),
            };
            errs.push(helpers::invalid_raw(
                "nodeTopology",
                &shown,
                "field is immutable",
            ));
        }
        if s(new, "storageClassName") != s(old, "storageClassName") {
            errs.push(FieldError::invalid(
                "storageClassName",
                json!(s(new, "storageClassName")),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CSI_STORAGE_CAPACITY_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::storage_kinds::{cells, fields};

    #[test]
    fn csi_storage_capacity_validation_and_cells() {
        let o = json!({"metadata": {"name": "cap", "namespace": "ns"}, "storageClassName": "fast", "capacity": "10Gi",
                "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}});
        assert!(CSIStorageCapacityStrategy.validate(&o).is_empty());
        let names: Vec<&str> = CSI_STORAGE_CAPACITY_COLUMNS
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["Name", "StorageClassName", "Capacity"]);
        assert_eq!(
            cells(&CSI_STORAGE_CAPACITY_COLUMNS, &o),
            [json!("cap"), json!("fast"), json!("10Gi")]
        );
        assert_eq!(
            (CSI_STORAGE_CAPACITY_COLUMNS[2].cell)(&json!({})),
            "<unset>"
        );
        let bad = json!({"storageClassName": "", "capacity": "-1Gi", "nodeTopology": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["-bad"]}]}});
        let got = fields(&CSIStorageCapacityStrategy.validate(&bad));
        let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            paths,
            [
                "nodeTopology.matchExpressions[0].values[0]",
                "storageClassName",
                "capacity"
            ]
        );
        assert_eq!(
            got[2].1,
            "Invalid value: \"-1Gi\": must be greater than or equal to 0"
        );
        // An invalid label value already stored may stay; the selector may not change.
        let mut stored = bad.clone();
        stored["storageClassName"] = json!("fast");
        stored["capacity"] = json!("1Gi");
        let mut new = stored.clone();
        new["capacity"] = json!("2Gi");
        assert!(CSIStorageCapacityStrategy
            .validate_update(&new, &stored)
            .is_empty());
        let mut moved = o.clone();
        moved["nodeTopology"] = json!({"matchLabels": {"topology.kubernetes.io/zone": "b"}});
        moved["storageClassName"] = json!("slow");
        assert_eq!(
                fields(&CSIStorageCapacityStrategy.validate_update(&moved, &o)),
                [
                    ("nodeTopology".into(), "Invalid value: {\"matchLabels\":{\"topology.kubernetes.io/zone\":\"b\"}}: field is immutable".into()),
                    ("storageClassName".into(), "Invalid value: \"slow\": field is immutable".into()),
                ]
            );
    }
}
