//! CSINode (upstream's pkg/registry/storage/csinode).

use serde_json::{json, Value};

use super::{col, csi_driver_name, drop_generation, go_json, go_struct, qualified_name, sem_eq};
use crate::registry::helpers::{self, items, s};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

const CSI_NODE_ID_MAX: usize = 192;
const CSI_NODE_ID_LONGER_MAX: usize = 256;

pub struct CSINodeStrategy;

static CSI_NODE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        col(
            "Drivers",
            "integer",
            "Drivers indicates the number of CSI drivers registered on the node",
            |o| json!(items(&o["spec"]["drivers"]).len()),
        ),
        age_column(),
    ]
});

fn validate_csi_node(obj: &Value, allow_long_node_id: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, d) in items(&obj["spec"]["drivers"]).iter().enumerate() {
        let p = format!("spec.drivers[{i}]");
        let name = s(d, "name");
        csi_driver_name(name, &format!("{p}.name"), &mut errs);
        let node_id = s(d, "nodeID");
        if node_id.is_empty() {
            errs.push(FieldError::required(format!("{p}.nodeID"), ""));
        }
        let max = if allow_long_node_id {
            CSI_NODE_ID_LONGER_MAX
        } else {
            CSI_NODE_ID_MAX
        };
        if node_id.len() > max {
            errs.push(FieldError::invalid(
                format!("{p}.nodeID"),
                json!(node_id),
                format!("must be {max} characters or less"),
            ));
        }
        helpers::nonnegative(
            &format!("{p}.allocatable.count"),
            &d["allocatable"]["count"],
            &mut errs,
        );
        if !names.insert(name.to_string()) {
            errs.push(FieldError::duplicate(format!("{p}.name"), json!(name)));
        }
        let mut keys = std::collections::HashSet::new();
        for key in helpers::strings(&d["topologyKeys"]) {
            if key.is_empty() {
                errs.push(FieldError::required(&p, ""));
            }
            if !keys.insert(key.clone()) {
                errs.push(FieldError::duplicate(&p, json!(key)));
            }
            for m in qualified_name(&key) {
                errs.push(FieldError::invalid(&p, json!(key), m));
            }
        }
    }
    errs
}

/// A CSINodeDriver as the immutability message prints it: the JSON of
/// upstream's internal type, whose fields carry their Go names.
fn go_csi_node_driver(d: &Value) -> String {
    let alloc = match &d["allocatable"] {
        Value::Null => "null".to_string(),
        a => go_struct(&[("Count", go_json(&a["count"]))]),
    };
    let keys = if d["topologyKeys"].is_array() {
        go_json(&d["topologyKeys"])
    } else {
        "null".into()
    };
    go_struct(&[
        ("Name", go_json(&json!(s(d, "name")))),
        ("NodeID", go_json(&json!(s(d, "nodeID")))),
        ("TopologyKeys", keys),
        ("Allocatable", alloc),
    ])
}

impl Strategy for CSINodeStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csi_node(obj, false)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let old_drivers = items(&old["spec"]["drivers"]);
        let allow_long = old_drivers
            .iter()
            .any(|d| s(d, "nodeID").len() > CSI_NODE_ID_MAX);
        let mut errs = validate_csi_node(new, allow_long);
        // ValidateCSINodeUpdate validates the new object a second time.
        errs.extend(validate_csi_node(new, allow_long));
        // MutableCSINodeAllocatableCount is off in v1.34: drivers are immutable whole.
        for od in &old_drivers {
            for nd in items(&new["spec"]["drivers"])
                .iter()
                .filter(|nd| s(nd, "name") == s(od, "name"))
            {
                if !sem_eq(nd, od) {
                    errs.push(helpers::invalid_raw(
                        "spec.drivers",
                        &go_csi_node_driver(nd),
                        "field is immutable",
                    ));
                }
            }
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CSI_NODE_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::storage_kinds::{cells, fields};

    #[test]
    fn csi_node_validation_and_cells() {
        let mut o = json!({"metadata": {"name": "node-1", "generation": 1}, "spec": {"drivers": [
                {"name": "csi.example.com", "nodeID": "n1", "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 3}}]}});
        CSINodeStrategy.prepare_for_create(&mut o);
        assert!(o["metadata"].get("generation").is_none());
        assert!(CSINodeStrategy.validate(&o).is_empty());
        assert_eq!(
            cells(&CSI_NODE_COLUMNS, &o)[..2],
            [json!("node-1"), json!(1)]
        );
        let bad = json!({"spec": {"drivers": [
                {"name": "Bad_Driver", "nodeID": "", "topologyKeys": ["", "k", "k"], "allocatable": {"count": -1}},
                {"name": "Bad_Driver", "nodeID": "x".repeat(193)}]}});
        let got = fields(&CSINodeStrategy.validate(&bad));
        let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.drivers[0].name",
                "spec.drivers[0].nodeID",
                "spec.drivers[0].allocatable.count",
                "spec.drivers[0]",
                "spec.drivers[0]",
                "spec.drivers[0]",
                "spec.drivers[0]",
                "spec.drivers[1].name",
                "spec.drivers[1].nodeID",
                "spec.drivers[1].name"
            ]
        );
        assert_eq!(got[1].1, "Required value");
        assert_eq!(
            got[2].1,
            "Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(got[4].1, "Invalid value: \"\": name part must be non-empty");
        assert!(
            got[5]
                .1
                .starts_with("Invalid value: \"\": name part must consist of alphanumeric"),
            "{}",
            got[5].1
        );
        assert_eq!(got[6].1, "Duplicate value: \"k\"");
        assert_eq!(
            got[8].1,
            format!(
                "Invalid value: \"{}\": must be 192 characters or less",
                "x".repeat(193)
            )
        );
        assert_eq!(got[9].1, "Duplicate value: \"Bad_Driver\"");
        // Drivers are immutable whole; new ones may be added.
        let mut new = o.clone();
        new["spec"]["drivers"][0]["allocatable"]["count"] = json!(4);
        if let Some(a) = new["spec"]["drivers"].as_array_mut() {
            a.push(json!({"name": "other.example.com", "nodeID": "n1"}));
        }
        assert_eq!(
                fields(&CSINodeStrategy.validate_update(&new, &o)),
                [("spec.drivers".into(), "Invalid value: {\"Name\":\"csi.example.com\",\"NodeID\":\"n1\",\"TopologyKeys\":[\"topology.example.com/zone\"],\"Allocatable\":{\"Count\":4}}: field is immutable".into())]
            );
        assert!(!CSINodeStrategy.generation_changed(&new, &o));
    }
}
