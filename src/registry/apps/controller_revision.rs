//! ControllerRevision (upstream's pkg/registry/apps/controllerrevision).

use serde_json::{json, Value};

use crate::registry::helpers;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct ControllerRevisionStrategy;

/// The printer's Controller cell: the controlling owner as `kind.group/name`.
fn controller_cell(o: &Value) -> Value {
    let owner = o["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"].as_bool() == Some(true));
    let Some(r) = owner else {
        return json!("<none>");
    };
    let name = r["name"].as_str().unwrap_or("");
    let kind = r["kind"].as_str().unwrap_or("");
    let api_version = r["apiVersion"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let group_kind = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    if group_kind.is_empty() {
        json!(name)
    } else {
        json!(format!("{}/{name}", group_kind.to_lowercase()))
    }
}

static CONTROLLER_REVISION_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            Column {
                name: "Controller",
                kind: "string",
                format: "",
                description: "Controller of the object",
                priority: 0,
                cell: controller_cell,
            },
            Column {
                name: "Revision",
                kind: "string",
                format: "",
                description: "revision indicates the revision of the state represented by Data.",
                priority: 0,
                cell: |o| json!(o["revision"].as_i64().unwrap_or(0)),
            },
            age_column(),
        ]
    });

/// Go's `%#v` of the runtime.RawExtension holding `data` (its JSON bytes).
fn go_raw_extension(data: &Value) -> String {
    let raw = if data.is_null() {
        "[]uint8(nil)".to_string()
    } else {
        let bytes: Vec<String> = serde_json::to_vec(data)
            .unwrap_or_default()
            .iter()
            .map(|b| format!("{b:#x}"))
            .collect();
        format!("[]uint8{{{}}}", bytes.join(", "))
    };
    format!("runtime.RawExtension{{Raw:{raw}, Object:runtime.Object(nil)}}")
}

impl Strategy for ControllerRevisionStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        helpers::nonnegative("revision", &obj["revision"], &mut errs);
        match obj.get("data") {
            None | Some(Value::Null) => {
                errs.push(FieldError::required("data", "data is mandatory"))
            }
            Some(Value::Object(_)) => {}
            Some(_) => errs.push(FieldError::required(
                "data",
                "data must be a valid JSON object",
            )),
        }
        errs
    }

    /// The revision may change; the data may not.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        helpers::nonnegative("revision", &new["revision"], &mut errs);
        if new["data"] != old["data"] {
            errs.push(helpers::invalid_raw(
                "data",
                &go_raw_extension(&new["data"]),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CONTROLLER_REVISION_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(v: Vec<FieldError>) -> Vec<(String, String)> {
        v.into_iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    #[test]
    fn data_and_revision() {
        let s = ControllerRevisionStrategy;
        let ok = json!({"metadata": {"name": "r", "namespace": "ns"}, "data": {"spec": {}}, "revision": 3});
        assert!(s.validate(&ok).is_empty());
        let bad = json!({"metadata": {"name": "r"}, "revision": -1});
        assert_eq!(
            msgs(s.validate(&bad)),
            [
                (
                    "revision".to_string(),
                    "Invalid value: -1: must be greater than or equal to 0".to_string()
                ),
                ("data".into(), "Required value: data is mandatory".into()),
            ]
        );
        let list = json!({"metadata": {"name": "r"}, "data": [1]});
        assert_eq!(
            msgs(s.validate(&list)),
            [(
                "data".to_string(),
                "Required value: data must be a valid JSON object".to_string()
            )]
        );
    }

    #[test]
    fn data_is_immutable_revision_is_not() {
        let s = ControllerRevisionStrategy;
        let old = json!({"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 1});
        let bumped = json!({"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 2});
        assert!(s.validate_update(&bumped, &old).is_empty());
        let changed = json!({"metadata": {"name": "r"}, "data": {"a": 2}, "revision": 1});
        assert_eq!(
            msgs(s.validate_update(&changed, &old)),
            [("data".to_string(), "Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x32, 0x7d}, Object:runtime.Object(nil)}: field is immutable".to_string())]
        );
    }

    #[test]
    fn controller_cell_names_kind_and_group() {
        let o = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p"},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]}, "revision": 7});
        let cells: Vec<Value> = CONTROLLER_REVISION_COLUMNS
            .iter()
            .map(|c| (c.cell)(&o))
            .collect();
        assert_eq!(cells[1], "statefulset.apps/web");
        assert_eq!(cells[2], 7);
        assert_eq!(controller_cell(&json!({})), "<none>");
        let core = json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": true}]}});
        assert_eq!(controller_cell(&core), "replicationcontroller/rc");
    }
}
