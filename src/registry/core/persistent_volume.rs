//! PersistentVolume (upstream's pkg/registry/core/persistentvolume and
//! ValidatePersistentVolume*): cluster-scoped storage naming exactly one
//! volume source, which may never change after creation.

use serde_json::{json, Map, Value};

use super::{
    access_modes_string, obj_mut, positive_quantity, vac_cell, validate_access_modes,
    validate_class_name, volume_mode_cell, BETA_STORAGE_CLASS_ANNOTATION, VOLUME_MODES,
};
use crate::registry::helpers as kh;
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

pub struct PersistentVolumeStrategy;

/// The volume sources a PersistentVolume may name, in upstream's order.
const PV_SOURCES: [&str; 22] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

fn no_backsteps(p: &str, path: &str, errs: &mut Vec<FieldError>) {
    if p.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(path, json!(p), "must not contain '..'"));
    }
}

fn validate_pv_source(key: &str, src: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match key {
        "hostPath" | "local" => {
            let p = kh::s(src, "path");
            if p.is_empty() {
                errs.push(FieldError::required(format!("{path}.path"), ""));
                return;
            }
            no_backsteps(p, &format!("{path}.path"), errs);
            if key == "hostPath" {
                let ty = src["type"].as_str().unwrap_or("");
                let types = [
                    "",
                    "DirectoryOrCreate",
                    "Directory",
                    "FileOrCreate",
                    "File",
                    "Socket",
                    "CharDevice",
                    "BlockDevice",
                ];
                if !types.contains(&ty) {
                    errs.push(FieldError::not_supported(
                        format!("{path}.type"),
                        json!(ty),
                        &types,
                    ));
                }
            }
        }
        "nfs" => {
            if kh::s(src, "server").is_empty() {
                errs.push(FieldError::required(format!("{path}.server"), ""));
            }
            let p = kh::s(src, "path");
            if p.is_empty() {
                errs.push(FieldError::required(format!("{path}.path"), ""));
            } else if !p.starts_with('/') {
                errs.push(FieldError::invalid(
                    format!("{path}.path"),
                    json!(p),
                    "must be an absolute path",
                ));
            }
        }
        "csi" => {
            let d = kh::s(src, "driver");
            if d.is_empty() {
                errs.push(FieldError::required(format!("{path}.driver"), ""));
            } else {
                if d.len() > 63 {
                    errs.push(FieldError::too_long(format!("{path}.driver"), 63));
                }
                for m in validation::dns1123_subdomain(&d.to_lowercase()) {
                    errs.push(FieldError::invalid(format!("{path}.driver"), json!(d), m));
                }
            }
            if kh::s(src, "volumeHandle").is_empty() {
                errs.push(FieldError::required(format!("{path}.volumeHandle"), ""));
            }
        }
        _ => {}
    }
}

/// upstream's ValidatePersistentVolumeSpec (volume sources: the common ones in depth).
fn validate_pv_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if kh::items(&spec["accessModes"]).is_empty() {
        errs.push(FieldError::required("spec.accessModes", ""));
    }
    validate_access_modes(&spec["accessModes"], "spec.accessModes", &mut errs);
    let cap = spec["capacity"].as_object().cloned().unwrap_or_default();
    if cap.is_empty() {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if !cap.contains_key("storage") || cap.len() > 1 {
        errs.push(FieldError::not_supported(
            "spec.capacity",
            spec["capacity"].clone(),
            &["storage"],
        ));
    }
    for (r, q) in &cap {
        let p = format!("spec.capacity[{r}]");
        if let Some(v) = kh::quantity(q).filter(|v| *v < 0) {
            // upstream quotes the quantity's integer Value() (rounded up) here.
            let value = v / 1_000_000_000;
            errs.push(FieldError::invalid(
                p.clone(),
                json!(value as i64),
                "must be a valid resource quantity",
            ));
        }
        positive_quantity(q, &p, &mut errs);
    }
    if let Some(rp) = spec["persistentVolumeReclaimPolicy"]
        .as_str()
        .filter(|r| !r.is_empty())
    {
        if !["Delete", "Recycle", "Retain"].contains(&rp) {
            errs.push(FieldError::not_supported(
                "spec.persistentVolumeReclaimPolicy",
                json!(rp),
                &["Delete", "Recycle", "Retain"],
            ));
        }
    }
    let affinity_specified = !spec["nodeAffinity"]["required"].is_null();
    let mut n = 0;
    for key in PV_SOURCES {
        if spec[key].is_null() {
            continue;
        }
        let path = format!("spec.{key}");
        if n > 0 && key != "flexVolume" {
            errs.push(FieldError::forbidden(
                path,
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        n += 1;
        validate_pv_source(key, &spec[key], &path, &mut errs);
        if key == "local" && !affinity_specified {
            errs.push(FieldError::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if n == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    let hp = kh::s(&spec["hostPath"], "path");
    if !spec["hostPath"].is_null()
        && hp.trim_end_matches('/').is_empty()
        && hp.starts_with('/')
        && spec["persistentVolumeReclaimPolicy"].as_str() == Some("Recycle")
    {
        errs.push(FieldError::forbidden(
            "spec.persistentVolumeReclaimPolicy",
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
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
    if let Some(vac) = spec["volumeAttributesClassName"].as_str() {
        if vac.is_empty() {
            errs.push(FieldError::required(
                "spec.volumeAttributesClassName",
                "an empty string is disallowed",
            ));
        } else {
            validate_class_name(
                &spec["volumeAttributesClassName"],
                "spec.volumeAttributesClassName",
                &mut errs,
            );
        }
        if spec["csi"].is_null() {
            errs.push(FieldError::required(
                "spec.csi",
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
    errs
}

fn pv_class(o: &Value) -> String {
    o["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION]
        .as_str()
        .or(o["spec"]["storageClassName"].as_str())
        .unwrap_or("")
        .to_string()
}

static PV_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Capacity", kind: "string", format: "", description: "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity", priority: 0, cell: |o| json!(kh::quantity_str(&o["spec"]["capacity"]["storage"])) },
        Column { name: "Access Modes", kind: "string", format: "", description: "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes", priority: 0, cell: |o| json!(access_modes_string(&o["spec"]["accessModes"])) },
        Column { name: "Reclaim Policy", kind: "string", format: "", description: "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming", priority: 0, cell: |o| json!(kh::s(&o["spec"], "persistentVolumeReclaimPolicy")) },
        Column { name: "Status", kind: "string", format: "", description: "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase", priority: 0, cell: |o| json!(if crate::registry::meta::is_deleting(o) { "Terminating" } else { o["status"]["phase"].as_str().unwrap_or("") }) },
        Column { name: "Claim", kind: "string", format: "", description: "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding", priority: 0, cell: |o| { let c = &o["spec"]["claimRef"]; json!(if c.is_null() { String::new() } else { format!("{}/{}", kh::s(c, "namespace"), kh::s(c, "name")) }) } },
        Column { name: "StorageClass", kind: "string", format: "", description: "StorageClass of the pv", priority: 0, cell: |o| json!(pv_class(o)) },
        Column { name: "VolumeAttributesClass", kind: "string", format: "", description: "VolumeAttributesClass of the pv", priority: 0, cell: vac_cell },
        Column { name: "Reason", kind: "string", format: "", description: "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.", priority: 0, cell: |o| json!(kh::s(&o["status"], "reason")) },
        age_column(),
        Column { name: "VolumeMode", kind: "string", format: "", description: "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.", priority: 1, cell: volume_mode_cell },
    ]
});

/// The PersistentVolumeSource part of a PV spec (what may never change).
fn pv_source(spec: &Value) -> Value {
    let mut m = Map::new();
    for key in PV_SOURCES {
        if let Some(v) = spec.get(key).filter(|v| !v.is_null()) {
            m.insert(key.into(), v.clone());
        }
    }
    Value::Object(m)
}

impl Strategy for PersistentVolumeStrategy {
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
            set_default(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
            set_default(spec, "volumeMode", json!("Filesystem"));
            if let Some(hp) = spec.get_mut("hostPath").and_then(Value::as_object_mut) {
                set_default(hp, "type", json!(""));
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "lastPhaseTransitionTime": crate::registry::meta::now_rfc3339()}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_pv_spec(&obj["spec"])
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (ns, os) = (&new["spec"], &old["spec"]);
        let mut new_source = pv_source(ns);
        if os["csi"].is_object()
            && os["csi"]["controllerExpandSecretRef"].is_null()
            && !ns["csi"]["controllerExpandSecretRef"].is_null()
        {
            if let Some(c) = new_source.get_mut("csi").and_then(Value::as_object_mut) {
                c.remove("controllerExpandSecretRef");
            }
        }
        if new_source != pv_source(os) {
            errs.push(FieldError::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        kh::immutable(
            "volumeMode",
            &ns["volumeMode"],
            &os["volumeMode"],
            &mut errs,
        );
        if !os["nodeAffinity"].is_null() && ns["nodeAffinity"] != os["nodeAffinity"] {
            errs.push(FieldError::invalid(
                "nodeAffinity",
                ns["nodeAffinity"].clone(),
                "field is immutable, except for updating from beta label to GA",
            ));
        }
        if os["volumeAttributesClassName"].is_string() && ns["volumeAttributesClassName"].is_null()
        {
            errs.push(FieldError::forbidden(
                "spec.volumeAttributesClassName",
                "update from non-nil value to nil is forbidden",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&PV_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::{cells, msgs};

    #[test]
    fn pv_defaults_validation_cells() {
        let mut o = json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "hostPath": {"path": "/data"}, "claimRef": {"namespace": "default", "name": "data"}}});
        PersistentVolumeStrategy.default(&mut o);
        PersistentVolumeStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(o["spec"]["volumeMode"], "Filesystem");
        assert_eq!(o["spec"]["hostPath"]["type"], "");
        assert_eq!(o["status"]["phase"], "Pending");
        assert!(o["status"]["lastPhaseTransitionTime"].is_string());
        assert!(
            PersistentVolumeStrategy.validate(&o).is_empty(),
            "{:?}",
            PersistentVolumeStrategy.validate(&o)
        );
        let c = cells(&PV_COLUMNS, &o);
        assert_eq!(c[1], "5Gi");
        assert_eq!(c[2], "RWO,ROX");
        assert_eq!(c[3], "Retain");
        assert_eq!(c[4], "Pending");
        assert_eq!(c[5], "default/data");
        assert_eq!(c[6], "");
        assert_eq!(c[7], "<unset>");
        assert_eq!(c[10], "Filesystem");

        let bad = json!({"spec": {"capacity": {"storage": "1Gi", "cpu": "1"}, "accessModes": ["ReadWriteOnce"], "nfs": {"server": ""}, "local": {"path": "/x"}}});
        let got = msgs(&PersistentVolumeStrategy.validate(&bad));
        assert_eq!(got[0].0, "spec.capacity");
        assert!(got[0].1.ends_with("supported values: \"storage\""));
        assert!(got.contains(&("spec.nfs.server".into(), "Required value".into())));
        assert!(got.contains(&("spec.nfs.path".into(), "Required value".into())));
        assert!(got.contains(&(
            "spec.local".into(),
            "Forbidden: may not specify more than 1 volume type".into()
        )));
        let none =
            json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            msgs(&PersistentVolumeStrategy.validate(&none)),
            [(
                "spec".to_string(),
                "Required value: must specify a volume type".to_string()
            )]
        );
        let mut new = o.clone();
        new["spec"]["hostPath"]["path"] = json!("/other");
        let errs = PersistentVolumeStrategy.validate_update(&new, &o);
        assert_eq!(errs[0].field, "spec.persistentvolumesource");
    }
}
