//! StorageClass (upstream's pkg/registry/storage/storageclass).

use serde_json::{json, Value};

use super::{MAX_PROVISIONER_PARAMETER_LEN, MAX_PROVISIONER_PARAMETER_SIZE};
use crate::registry::helpers::{self, items, s};
use crate::registry::strategy::{age_column, set_default, Column, Strategy, NAME_DESCRIPTION};
use crate::registry::validation::{self, FieldError};

pub const IS_DEFAULT_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
pub const BETA_IS_DEFAULT_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";

pub struct StorageClassStrategy;

fn is_default(o: &Value) -> bool {
    let a = &o["metadata"]["annotations"];
    a[IS_DEFAULT_ANNOTATION].as_str() == Some("true")
        || a[BETA_IS_DEFAULT_ANNOTATION].as_str() == Some("true")
}

static STORAGE_CLASS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        Column {
            name: "Name",
            kind: "string",
            format: "name",
            description: NAME_DESCRIPTION,
            priority: 0,
            cell: |o| {
                let name = crate::registry::meta::name(o);
                json!(if is_default(o) { format!("{name} (default)") } else { name.to_string() })
            },
        },
        Column { name: "Provisioner", kind: "string", format: "", description: "provisioner indicates the type of the provisioner.", priority: 0, cell: |o| json!(s(o, "provisioner")) },
        Column { name: "ReclaimPolicy", kind: "string", format: "", description: "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.", priority: 0, cell: |o| json!(o["reclaimPolicy"].as_str().unwrap_or("Delete")) },
        Column { name: "VolumeBindingMode", kind: "string", format: "", description: "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.", priority: 0, cell: |o| json!(o["volumeBindingMode"].as_str().unwrap_or("Immediate")) },
        Column { name: "AllowVolumeExpansion", kind: "string", format: "", description: "allowVolumeExpansion shows whether the storage class allow volume expand.", priority: 0, cell: |o| json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false)) },
        age_column(),
    ]
});

fn validate_allowed_topologies(terms: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<std::collections::BTreeMap<String, Vec<String>>> = Vec::new();
    for (i, term) in items(terms).iter().enumerate() {
        let tp = format!("allowedTopologies[{i}]");
        let mut exprs = std::collections::BTreeMap::new();
        for (j, req) in items(&term["matchLabelExpressions"]).iter().enumerate() {
            let rp = format!("{tp}.matchLabelExpressions[{j}]");
            let values = helpers::strings(&req["values"]);
            if values.is_empty() {
                errs.push(FieldError::required(
                    format!("{rp}.values"),
                    "must specify as least one value",
                ));
            }
            let mut set: Vec<String> = Vec::new();
            for v in values {
                if set.contains(&v) {
                    errs.push(FieldError::duplicate(format!("{rp}.values"), json!(v)));
                } else {
                    set.push(v);
                }
            }
            set.sort();
            let key = s(req, "key").to_string();
            helpers::label_name(&key, &format!("{rp}.key"), errs);
            if exprs.contains_key(&key) {
                errs.push(FieldError::duplicate(format!("{rp}.key"), json!(key)));
            }
            exprs.insert(key, set);
        }
        if seen.contains(&exprs) {
            errs.push(FieldError::duplicate(
                format!("{tp}.matchLabelExpressions"),
                json!(""),
            ));
        }
        seen.push(exprs);
    }
}

impl Strategy for StorageClassStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            set_default(m, "reclaimPolicy", json!("Delete"));
            set_default(m, "volumeBindingMode", json!("Immediate"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let prov = s(obj, "provisioner");
        if prov.is_empty() {
            errs.push(FieldError::required("provisioner", ""));
        } else {
            for m in validation::qualified_name(&prov.to_lowercase()) {
                errs.push(FieldError::invalid("provisioner", json!(prov), m));
            }
        }
        if let Some(params) = obj["parameters"].as_object() {
            if params.len() > MAX_PROVISIONER_PARAMETER_LEN {
                errs.push(FieldError::too_long(
                    "parameters",
                    MAX_PROVISIONER_PARAMETER_LEN,
                ));
            } else {
                let mut total = 0usize;
                for (k, v) in params {
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
            }
        }
        if let Some(rp) = obj["reclaimPolicy"].as_str().filter(|r| !r.is_empty()) {
            if rp != "Delete" && rp != "Retain" {
                errs.push(FieldError::not_supported(
                    "reclaimPolicy",
                    json!(rp),
                    &["Delete", "Retain"],
                ));
            }
        }
        match obj["volumeBindingMode"].as_str() {
            None => errs.push(FieldError::required("volumeBindingMode", "")),
            Some("Immediate" | "WaitForFirstConsumer") => {}
            Some(other) => errs.push(FieldError::not_supported(
                "volumeBindingMode",
                json!(other),
                &["Immediate", "WaitForFirstConsumer"],
            )),
        }
        validate_allowed_topologies(&obj["allowedTopologies"], &mut errs);
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let params = |v: &Value| {
            v.get("parameters")
                .filter(|p| !helpers::is_empty(p))
                .cloned()
        };
        if params(new) != params(old) {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        if new["provisioner"] != old["provisioner"] {
            errs.push(FieldError::forbidden(
                "provisioner",
                "updates to provisioner are forbidden.",
            ));
        }
        if new["reclaimPolicy"] != old["reclaimPolicy"] {
            errs.push(FieldError::forbidden(
                "reclaimPolicy",
                "updates to reclaimPolicy are forbidden.",
            ));
        }
        helpers::immutable(
            "volumeBindingMode",
            &new["volumeBindingMode"],
            &old["volumeBindingMode"],
            &mut errs,
        );
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&STORAGE_CLASS_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc() -> Value {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "kubernetes.io/no-provisioner", "parameters": {"type": "ssd"}})
    }

    #[test]
    fn defaults_and_cells() {
        let mut o = sc();
        StorageClassStrategy.default(&mut o);
        assert_eq!(o["reclaimPolicy"], "Delete");
        assert_eq!(o["volumeBindingMode"], "Immediate");
        assert!(StorageClassStrategy.validate(&o).is_empty());
        let cells: Vec<Value> = STORAGE_CLASS_COLUMNS.iter().map(|c| (c.cell)(&o)).collect();
        assert_eq!(cells[0], "fast");
        assert_eq!(cells[1], "kubernetes.io/no-provisioner");
        assert_eq!(cells[2], "Delete");
        assert_eq!(cells[3], "Immediate");
        assert_eq!(cells[4], false);
        o["metadata"]["annotations"] = json!({IS_DEFAULT_ANNOTATION: "true"});
        assert_eq!((STORAGE_CLASS_COLUMNS[0].cell)(&o), "fast (default)");
        let names: Vec<&str> = STORAGE_CLASS_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Provisioner",
                "ReclaimPolicy",
                "VolumeBindingMode",
                "AllowVolumeExpansion",
                "Age"
            ]
        );
    }

    #[test]
    fn validation() {
        let mut o = sc();
        o["provisioner"] = json!("");
        o["reclaimPolicy"] = json!("Recycle");
        o["volumeBindingMode"] = json!("Later");
        o["allowedTopologies"] =
            json!([{"matchLabelExpressions": [{"key": "zone", "values": []}]}]);
        let got: Vec<(String, String)> = StorageClassStrategy
            .validate(&o)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                ("provisioner".into(), "Required value".into()),
                ("reclaimPolicy".into(), "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"".into()),
                ("volumeBindingMode".into(), "Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"".into()),
                ("allowedTopologies[0].matchLabelExpressions[0].values".into(), "Required value: must specify as least one value".into()),
            ]
        );
        let mut old = sc();
        StorageClassStrategy.default(&mut old);
        let mut new = old.clone();
        new["parameters"] = json!({"type": "hdd"});
        new["provisioner"] = json!("example.com/x");
        new["volumeBindingMode"] = json!("WaitForFirstConsumer");
        let got: Vec<(String, String)> = StorageClassStrategy
            .validate_update(&new, &old)
            .iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "parameters".into(),
                    "Forbidden: updates to parameters are forbidden.".into()
                ),
                (
                    "provisioner".into(),
                    "Forbidden: updates to provisioner are forbidden.".into()
                ),
                (
                    "volumeBindingMode".into(),
                    "Invalid value: \"WaitForFirstConsumer\": field is immutable".into()
                ),
            ]
        );
    }
}
