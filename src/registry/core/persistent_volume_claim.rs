//! PersistentVolumeClaim (upstream's pkg/registry/core/persistentvolumeclaim
//! and ValidatePersistentVolumeClaim*): a claim's spec is fixed once made,
//! except that a bound claim may grow; the access-mode and class checks it
//! shares with PersistentVolume are in the parent module.

use serde_json::{json, Map, Value};

use super::{
    access_modes_string, obj_mut, positive_quantity, resource_quantity_value, vac_cell,
    validate_access_modes, validate_class_name, volume_mode_cell, BETA_STORAGE_CLASS_ANNOTATION,
    VOLUME_MODES,
};
use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct PersistentVolumeClaimStrategy;

fn validate_data_source(ds: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if kh::s(ds, "name").is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    let kind = kh::s(ds, "kind");
    if kind.is_empty() {
        errs.push(FieldError::required(format!("{path}.kind"), ""));
    }
    let group = kh::s(ds, "apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errs.push(FieldError::invalid(
            path,
            json!(kind),
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() {
        for m in validation::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(
                format!("{path}.apiGroup"),
                json!(group),
                m,
            ));
        }
    }
    if let Some(ns) = ds["namespace"].as_str().filter(|n| !n.is_empty()) {
        for m in validation::dns1123_label(ns) {
            errs.push(FieldError::invalid(
                format!("{path}.namespace"),
                json!(ns),
                m,
            ));
        }
    }
}

/// upstream's ValidatePersistentVolumeClaimSpec.
fn validate_pvc_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if kh::items(&spec["accessModes"]).is_empty() {
        errs.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    errs.extend(kh::validate_label_selector(
        &spec["selector"],
        "spec.selector",
    ));
    validate_access_modes(&spec["accessModes"], "spec.accessModes", &mut errs);
    let storage = &spec["resources"]["requests"]["storage"];
    if storage.is_null() {
        errs.push(FieldError::required("spec.resources[storage]", ""));
    } else if positive_quantity(storage, "spec.resources[storage]", &mut errs) {
        resource_quantity_value("storage", storage, "spec.resources[storage]", &mut errs);
    }
    validate_class_name(
        &spec["storageClassName"],
        "spec.storageClassName",
        &mut errs,
    );
    if let Some(vm) = spec["volumeMode"].as_str() {
        if !VOLUME_MODES.contains(&vm) {
            errs.push(FieldError::not_supported(
                "spec.volumeMode",
                json!(vm),
                &VOLUME_MODES,
            ));
        }
    }
    let (ds, dsr) = (&spec["dataSource"], &spec["dataSourceRef"]);
    if !ds.is_null() {
        validate_data_source(ds, "spec.dataSource", &mut errs);
    }
    if !dsr.is_null() {
        validate_data_source(dsr, "spec.dataSourceRef", &mut errs);
    }
    if dsr["namespace"].as_str().is_some_and(|n| !n.is_empty()) {
        if !ds.is_null() {
            errs.push(FieldError::invalid(
                "spec",
                json!("spec.dataSource"),
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if !ds.is_null() && !dsr.is_null() {
        let same = ["apiGroup", "kind", "name"]
            .iter()
            .all(|k| ds[*k] == dsr[*k]);
        if !same {
            errs.push(FieldError::invalid(
                "spec",
                json!("spec.dataSource"),
                "must match dataSourceRef",
            ));
        }
    }
    validate_class_name(
        &spec["volumeAttributesClassName"],
        "spec.volumeAttributesClassName",
        &mut errs,
    );
    errs
}

fn pvc_class(o: &Value) -> String {
    o["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION]
        .as_str()
        .or(o["spec"]["storageClassName"].as_str())
        .unwrap_or("")
        .to_string()
}

static PVC_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Status", kind: "string", format: "", description: "phase represents the current phase of PersistentVolumeClaim.", priority: 0, cell: |o| json!(if crate::registry::meta::is_deleting(o) { "Terminating" } else { o["status"]["phase"].as_str().unwrap_or("") }) },
        Column { name: "Volume", kind: "string", format: "", description: "volumeName is the binding reference to the PersistentVolume backing this claim.", priority: 0, cell: |o| json!(kh::s(&o["spec"], "volumeName")) },
        Column { name: "Capacity", kind: "string", format: "", description: "capacity represents the actual resources of the underlying volume.", priority: 0, cell: |o| json!(if kh::s(&o["spec"], "volumeName").is_empty() { String::new() } else { kh::quantity_str(&o["status"]["capacity"]["storage"]) }) },
        Column { name: "Access Modes", kind: "string", format: "", description: "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1", priority: 0, cell: |o| json!(if kh::s(&o["spec"], "volumeName").is_empty() { String::new() } else { access_modes_string(&o["status"]["accessModes"]) }) },
        Column { name: "StorageClass", kind: "string", format: "", description: "StorageClass of the pvc", priority: 0, cell: |o| json!(pvc_class(o)) },
        Column { name: "VolumeAttributesClass", kind: "string", format: "", description: "VolumeAttributesClass of the pvc", priority: 0, cell: vac_cell },
        age_column(),
        Column { name: "VolumeMode", kind: "string", format: "", description: "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.", priority: 1, cell: volume_mode_cell },
    ]
});

/// upstream's NormalizeDataSources: dataSource and dataSourceRef mirror each other.
fn normalize_data_sources(obj: &mut Value) {
    let Some(spec) = obj_mut(obj, "spec") else {
        return;
    };
    let ds = spec.get("dataSource").cloned().unwrap_or(Value::Null);
    let dsr = spec.get("dataSourceRef").cloned().unwrap_or(Value::Null);
    let pick = |v: &Value| {
        let mut m = Map::new();
        for k in ["apiGroup", "kind", "name"] {
            if let Some(x) = v.get(k).filter(|x| !x.is_null()) {
                m.insert(k.into(), x.clone());
            }
        }
        Value::Object(m)
    };
    if !ds.is_null() && dsr.is_null() {
        spec.insert("dataSourceRef".into(), pick(&ds));
    } else if !dsr.is_null() && ds.is_null() && dsr["namespace"].as_str().unwrap_or("").is_empty() {
        spec.insert("dataSource".into(), pick(&dsr));
    }
}

impl Strategy for PersistentVolumeClaimStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpec
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj_mut(obj, "spec") {
            set_default(spec, "volumeMode", json!("Filesystem"));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        normalize_data_sources(obj);
        if let Some(m) = obj.as_object_mut() {
            // Status is cleared; upstream's defaulting reads it back as Pending.
            m.insert("status".into(), json!({"phase": "Pending"}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_pvc_spec(&obj["spec"])
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (ns, os) = (&new["spec"], &old["spec"]);
        let mut nc = ns.clone();
        let mut oc = os.clone();
        if kh::s(os, "volumeName").is_empty() {
            oc["volumeName"] = ns["volumeName"].clone();
        }
        let old_ann = &old["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION];
        let new_ann = &new["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION];
        let from_annotation = old_ann.is_string()
            && os["storageClassName"].is_null()
            && ns["storageClassName"].is_string()
            && ns["storageClassName"] == *old_ann
            && (new_ann.is_null() || new_ann == old_ann);
        if from_annotation {
            nc["storageClassName"] = Value::Null;
        } else {
            if new_ann != old_ann {
                errs.push(FieldError::forbidden(
                    format!("metadata.annotations[{BETA_STORAGE_CLASS_ANNOTATION}]"),
                    "field is immutable",
                ));
            }
            let from_nil = ns["storageClassName"].is_string()
                && os["storageClassName"].is_null()
                && (old_ann.is_null() || *old_ann == ns["storageClassName"]);
            if from_nil {
                nc["storageClassName"] = Value::Null;
            }
        }
        let bound = new["status"]["phase"].as_str() == Some("Bound");
        if bound && !nc["resources"]["requests"].is_null() {
            nc["resources"]["requests"]["storage"] = os["resources"]["requests"]["storage"].clone();
        }
        nc["volumeAttributesClassName"] = oc["volumeAttributesClassName"].clone();
        let strip_nulls = |v: &mut Value| {
            if let Some(m) = v.as_object_mut() {
                m.retain(|_, x| !x.is_null());
            }
        };
        strip_nulls(&mut nc);
        strip_nulls(&mut oc);
        if nc != oc {
            errs.push(FieldError::forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
            ));
        }
        let new_size = kh::quantity(&ns["resources"]["requests"]["storage"]).unwrap_or(0);
        let old_size = kh::quantity(&os["resources"]["requests"]["storage"]).unwrap_or(0);
        let status_size = kh::quantity(&old["status"]["capacity"]["storage"]).unwrap_or(0);
        if new_size < old_size && new_size <= status_size {
            errs.push(FieldError::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
        kh::immutable(
            "volumeMode",
            &ns["volumeMode"],
            &os["volumeMode"],
            &mut errs,
        );
        if os["volumeAttributesClassName"].is_string() {
            match ns["volumeAttributesClassName"].as_str() {
                None => errs.push(FieldError::forbidden(
                    "spec.volumeAttributesClassName",
                    "update from non-nil value to nil is forbidden",
                )),
                Some("") => errs.push(FieldError::forbidden(
                    "spec.volumeAttributesClassName",
                    "update from non-nil value to an empty string is forbidden",
                )),
                _ => {}
            }
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PVC_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    #[test]
    fn pvc_defaults_validation_cells() {
        let mut o = json!({"metadata": {"name": "data", "namespace": "default"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}});
        PersistentVolumeClaimStrategy.default(&mut o);
        PersistentVolumeClaimStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["volumeMode"], "Filesystem");
        assert_eq!(o["status"], json!({"phase": "Pending"}));
        assert_eq!(
            o["spec"]["dataSourceRef"],
            json!({"kind": "PersistentVolumeClaim", "name": "src"})
        );
        assert!(PersistentVolumeClaimStrategy.validate(&o).is_empty());
        let c = cells(&PVC_COLUMNS, &o);
        assert_eq!(c[1], "Pending");
        assert_eq!(c[2], "");
        assert_eq!(c[3], "");
        assert_eq!(c[5], "");
        assert_eq!(c[6], "<unset>");
        assert_eq!(c[8], "Filesystem");
        let names: Vec<&str> = PVC_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Name",
                "Status",
                "Volume",
                "Capacity",
                "Access Modes",
                "StorageClass",
                "VolumeAttributesClass",
                "Age",
                "VolumeMode"
            ]
        );

        let bad = json!({"spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteMany", "Sometimes"], "resources": {}, "volumeMode": "Raw"}});
        assert_eq!(
            msgs(&PersistentVolumeClaimStrategy.validate(&bad)),
            [
                ("spec.accessModes".to_string(), "Unsupported value: \"Sometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"".to_string()),
                ("spec.accessModes".into(), "Forbidden: may not use ReadWriteOncePod with other access modes".into()),
                ("spec.resources[storage]".into(), "Required value".into()),
                ("spec.volumeMode".into(), "Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"".into()),
            ]
        );
        let empty = json!({"spec": {"resources": {"requests": {"storage": "0"}}}});
        assert_eq!(
            msgs(&PersistentVolumeClaimStrategy.validate(&empty)),
            [
                (
                    "spec.accessModes".to_string(),
                    "Required value: at least 1 access mode is required".to_string()
                ),
                (
                    "spec.resources[storage]".into(),
                    "Invalid value: \"0\": must be greater than zero".into()
                ),
            ]
        );
    }

    #[test]
    fn pvc_update_rules() {
        let mut old = json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        PersistentVolumeClaimStrategy.default(&mut old);
        PersistentVolumeClaimStrategy.prepare_for_create(&mut old);
        // Binding sets volumeName once.
        let mut new = old.clone();
        new["spec"]["volumeName"] = json!("pv1");
        assert!(PersistentVolumeClaimStrategy
            .validate_update(&new, &old)
            .is_empty());
        // Unbound claims may not grow.
        let mut new = old.clone();
        new["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        let errs = PersistentVolumeClaimStrategy.validate_update(&new, &old);
        assert_eq!(errs[0].field, "spec");
        assert!(errs[0]
            .detail
            .starts_with("spec is immutable after creation except resources.requests"));
        // Bound ones may.
        let mut bound = old.clone();
        bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
        let mut new = bound.clone();
        new["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        assert!(PersistentVolumeClaimStrategy
            .validate_update(&new, &bound)
            .is_empty());
        new["spec"]["resources"]["requests"]["storage"] = json!("512Mi");
        assert_eq!(
            msgs(&PersistentVolumeClaimStrategy.validate_update(&new, &bound)),
            [(
                "spec.resources.requests.storage".to_string(),
                "Forbidden: field can not be less than status.capacity".to_string()
            )]
        );
    }
}
