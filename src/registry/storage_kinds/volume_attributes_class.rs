//! VolumeAttributesClass (upstream's pkg/registry/storage/volumeattributesclass).

use serde_json::{json, Value};

use super::{col, qualified_name, MAX_PROVISIONER_PARAMETER_LEN, MAX_PROVISIONER_PARAMETER_SIZE};
use crate::registry::helpers::s;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

const DRIVER_NAME_DESC: &str = "Name of the CSI driver This field is immutable.";

pub struct VolumeAttributesClassStrategy;

static VOLUME_ATTRIBUTES_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            col("DriverName", "string", DRIVER_NAME_DESC, |o| {
                json!(s(o, "driverName"))
            }),
            age_column(),
        ]
    });

fn validate_volume_attributes_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let driver = s(obj, "driverName");
    if driver.is_empty() {
        errs.push(FieldError::required("driverName", ""));
    } else {
        let lower = driver.to_lowercase();
        for m in qualified_name(&lower) {
            errs.push(FieldError::invalid("driverName", json!(lower), m));
        }
    }
    let params = obj["parameters"].as_object().cloned().unwrap_or_default();
    if params.len() > MAX_PROVISIONER_PARAMETER_LEN {
        errs.push(FieldError::too_long(
            "parameters",
            MAX_PROVISIONER_PARAMETER_LEN,
        ));
        return errs;
    }
    let mut total = 0usize;
    for (k, v) in &params {
        if k.is_empty() {
            errs.push(FieldError::invalid(
                "parameters",
                json!(k),
                "field can not be empty.",
            ));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > MAX_PROVISIONER_PARAMETER_SIZE {
        errs.push(FieldError::too_long(
            "parameters",
            MAX_PROVISIONER_PARAMETER_SIZE,
        ));
    }
    if params.is_empty() {
        errs.push(FieldError::required(
            "parameters",
            "must contain at least one key/value pair",
        ));
    }
    errs
}

impl Strategy for VolumeAttributesClassStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_volume_attributes_class(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if new["driverName"] != old["driverName"] {
            errs.push(FieldError::forbidden(
                "driverName",
                "updates to driverName are forbidden.",
            ));
        }
        // reflect.DeepEqual: a missing map and an empty one differ.
        if new.get("parameters") != old.get("parameters") {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        errs.extend(validate_volume_attributes_class(new));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&VOLUME_ATTRIBUTES_CLASS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::storage_kinds::{cells, fields};

    #[test]
    fn volume_attributes_class_validation_and_cells() {
        let o = json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "100"}});
        assert!(VolumeAttributesClassStrategy.validate(&o).is_empty());
        assert_eq!(
            cells(&VOLUME_ATTRIBUTES_CLASS_COLUMNS, &o)[..2],
            [json!("gold"), json!("csi.example.com")]
        );
        let got = fields(
            &VolumeAttributesClassStrategy
                .validate(&json!({"driverName": "Bad Driver", "parameters": {"": "x"}})),
        );
        assert_eq!(got[0].0, "driverName");
        assert!(
            got[0]
                .1
                .starts_with("Invalid value: \"bad driver\": name part must consist of"),
            "{}",
            got[0].1
        );
        assert_eq!(
            got[1],
            (
                "parameters".into(),
                "Invalid value: \"\": field can not be empty.".into()
            )
        );
        assert_eq!(
            fields(&VolumeAttributesClassStrategy.validate(&json!({}))),
            [
                ("driverName".into(), "Required value".into()),
                (
                    "parameters".into(),
                    "Required value: must contain at least one key/value pair".into()
                ),
            ]
        );
        let mut new = o.clone();
        new["driverName"] = json!("other.example.com");
        new["parameters"] = json!({"iops": "200"});
        assert_eq!(
            fields(&VolumeAttributesClassStrategy.validate_update(&new, &o)),
            [
                (
                    "driverName".into(),
                    "Forbidden: updates to driverName are forbidden.".into()
                ),
                (
                    "parameters".into(),
                    "Forbidden: updates to parameters are forbidden.".into()
                ),
            ]
        );
    }
}
