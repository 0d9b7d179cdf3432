//! VolumeAttachment (upstream's pkg/registry/storage/volumeattachment).

use serde_json::{json, Value};

use super::{col, csi_driver_name, drop_generation, go_json, go_struct, sem_eq, subdomain};
use crate::registry::helpers::{self, s};
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::{self, FieldError};

const ATTACHER_DESC: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const PV_NAME_DESC: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const NODE_NAME_DESC: &str = "nodeName represents the node that the volume should be attached to.";
const ATTACHED_DESC: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";

const MAX_ATTACHED_VOLUME_METADATA_SIZE: usize = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE_SIZE: usize = 1024;

pub struct VolumeAttachmentStrategy;

static VOLUME_ATTACHMENT_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            Column {
                name: "Attacher",
                kind: "string",
                format: "name",
                description: ATTACHER_DESC,
                priority: 0,
                cell: |o| json!(s(&o["spec"], "attacher")),
            },
            col("PV", "string", PV_NAME_DESC, |o| {
                json!(s(&o["spec"]["source"], "persistentVolumeName"))
            }),
            col("Node", "string", NODE_NAME_DESC, |o| {
                json!(s(&o["spec"], "nodeName"))
            }),
            col("Attached", "boolean", ATTACHED_DESC, |o| {
                json!(o["status"]["attached"].as_bool().unwrap_or(false))
            }),
            age_column(),
        ]
    });

/// The volume sources of a PersistentVolumeSpec in the order upstream
/// counts them, with the path its "more than 1 volume type" error names.
const PV_SOURCES: [(&str, &str); 22] = [
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

const INLINE_ONLY: &str = "may not be specified in the context of inline volumes";

/// upstream's validatePVSecretReference.
fn pv_secret_ref(r: &Value, p: &str, errs: &mut Vec<FieldError>) {
    let (name, ns) = (s(r, "name"), s(r, "namespace"));
    if name.is_empty() {
        errs.push(FieldError::required(format!("{p}.name"), ""));
    } else {
        subdomain(name, &format!("{p}.name"), errs);
    }
    if ns.is_empty() {
        errs.push(FieldError::required(format!("{p}.namespace"), ""));
    } else {
        for m in validation::dns1123_label(ns) {
            errs.push(FieldError::invalid(format!("{p}.namespace"), json!(ns), m));
        }
    }
}

/// upstream's ValidatePersistentVolumeSpec for an inline volume (which must
/// be CSI); other volume sources are counted but not checked in depth.
fn validate_inline_pv_spec(spec: &Value, p: &str, errs: &mut Vec<FieldError>) {
    if !spec["claimRef"].is_null() {
        errs.push(FieldError::forbidden(format!("{p}.claimRef"), INLINE_ONLY));
    }
    if !helpers::is_empty(&spec["capacity"]) {
        errs.push(FieldError::forbidden(format!("{p}.capacity"), INLINE_ONLY));
    }
    if spec["csi"].is_null() {
        errs.push(FieldError::required(
            format!("{p}.csi"),
            "has to be specified in the context of inline volumes",
        ));
    }
    let modes = helpers::strings(&spec["accessModes"]);
    if modes.is_empty() {
        errs.push(FieldError::required(format!("{p}.accessModes"), ""));
    }
    const SUPPORTED: [&str; 4] = [
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let (mut rwop, mut other) = (false, false);
    for m in &modes {
        if !SUPPORTED.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(
                format!("{p}.accessModes"),
                json!(m),
                &SUPPORTED,
            ));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            format!("{p}.accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let policy = s(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && policy != "Retain" {
        errs.push(FieldError::forbidden(
            format!("{p}.persistentVolumeReclaimPolicy"),
            "may only be Retain in the context of inline volumes",
        ));
    }
    if !spec["nodeAffinity"].is_null() {
        errs.push(FieldError::forbidden(
            format!("{p}.nodeAffinity"),
            INLINE_ONLY,
        ));
    }
    let mut n = 0;
    for (key, shown) in PV_SOURCES {
        let src = &spec[key];
        if src.is_null() {
            continue;
        }
        if n > 0 && key != "flexVolume" {
            errs.push(FieldError::forbidden(
                format!("{p}.{shown}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        n += 1;
        if key == "local" {
            errs.push(FieldError::required(
                format!("{p}.nodeAffinity"),
                "Local volume requires node affinity",
            ));
        }
        if key == "csi" {
            let cp = format!("{p}.csi");
            csi_driver_name(s(src, "driver"), &format!("{cp}.driver"), errs);
            if s(src, "volumeHandle").is_empty() {
                errs.push(FieldError::required(format!("{cp}.volumeHandle"), ""));
            }
            for r in [
                "controllerPublishSecretRef",
                "controllerExpandSecretRef",
                "nodePublishSecretRef",
                "nodeExpandSecretRef",
            ] {
                if !src[r].is_null() {
                    pv_secret_ref(&src[r], &format!("{cp}.{r}"), errs);
                }
            }
        }
    }
    if n == 0 {
        errs.push(FieldError::required(p, "must specify a volume type"));
    }
    let host_path = s(&spec["hostPath"], "path");
    if !spec["hostPath"].is_null()
        && host_path.starts_with('/')
        && host_path.trim_matches('/').is_empty()
        && policy == "Recycle"
    {
        errs.push(FieldError::forbidden(
            format!("{p}.persistentVolumeReclaimPolicy"),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    if !s(spec, "storageClassName").is_empty() {
        errs.push(FieldError::forbidden(
            format!("{p}.storageClassName"),
            INLINE_ONLY,
        ));
    }
    if spec["volumeMode"]
        .as_str()
        .is_some_and(|m| m != "Filesystem")
    {
        errs.push(FieldError::forbidden(
            format!("{p}.volumeMode"),
            "may not specify volumeMode other than Filesystem in the context of inline volumes",
        ));
    }
}

fn validate_volume_error(e: &Value, p: &str, errs: &mut Vec<FieldError>) {
    if s(e, "message").len() > MAX_VOLUME_ERROR_MESSAGE_SIZE {
        // upstream names the metadata limit here, not the message one.
        errs.push(FieldError::too_long(
            format!("{p}.message"),
            MAX_ATTACHED_VOLUME_METADATA_SIZE,
        ));
    }
    if let Some(c) = e["errorCode"].as_i64().filter(|c| *c < 0) {
        errs.push(FieldError::invalid(
            format!("{p}.errorCode"),
            json!(c),
            "must be between 0 and 2147483647, inclusive",
        ));
    }
}

/// upstream's ValidateVolumeAttachment (without the object metadata).
fn validate_volume_attachment(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    if s(spec, "attacher").is_empty() {
        errs.push(FieldError::required("spec.attacher", ""));
    }
    let src = &spec["source"];
    match (
        src["inlineVolumeSpec"].is_null(),
        &src["persistentVolumeName"],
    ) {
        (true, Value::Null) => errs.push(FieldError::required(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (false, pv) if !pv.is_null() => errs.push(FieldError::forbidden(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        )),
        (true, pv) => {
            if pv.as_str().is_some_and(str::is_empty) {
                errs.push(FieldError::required(
                    "spec.source.persistentVolumeName",
                    "must specify non empty persistentVolumeName",
                ));
            }
        }
        (false, _) => validate_inline_pv_spec(
            &src["inlineVolumeSpec"],
            "spec.source.inlineVolumeSpec",
            &mut errs,
        ),
    }
    subdomain(s(spec, "nodeName"), "spec.nodeName", &mut errs);
    let status = &obj["status"];
    if let Some(md) = status["attachmentMetadata"].as_object() {
        let size: usize = md
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if size > MAX_ATTACHED_VOLUME_METADATA_SIZE {
            errs.push(FieldError::too_long(
                "status.attachmentMetadata",
                MAX_ATTACHED_VOLUME_METADATA_SIZE,
            ));
        }
    }
    for key in ["attachError", "detachError"] {
        if !status[key].is_null() {
            validate_volume_error(&status[key], &format!("status.{key}"), &mut errs);
        }
    }
    errs
}

/// A VolumeAttachmentSpec as the immutability message prints it: the JSON
/// of upstream's internal type (Go field names). An inline volume spec is
/// shown by its own JSON rather than the internal type's.
fn go_volume_attachment_spec(spec: &Value) -> String {
    let src = &spec["source"];
    let source = go_struct(&[
        (
            "PersistentVolumeName",
            go_json(&src["persistentVolumeName"]),
        ),
        ("InlineVolumeSpec", go_json(&src["inlineVolumeSpec"])),
    ]);
    go_struct(&[
        ("Attacher", go_json(&json!(s(spec, "attacher")))),
        ("Source", source),
        ("NodeName", go_json(&json!(s(spec, "nodeName")))),
    ])
}

impl Strategy for VolumeAttachmentStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
    }

    /// The spec is immutable, so upstream never bumps the generation.
    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_volume_attachment(obj);
        // ValidateVolumeAttachmentV1: the stricter checks of v1 objects.
        let spec = &obj["spec"];
        csi_driver_name(s(spec, "attacher"), "spec.attacher", &mut errs);
        if let Some(pv) = spec["source"]["persistentVolumeName"].as_str() {
            subdomain(pv, "spec.source.persistentVolumeName", &mut errs);
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        // upstream validates the new object twice on update (the strategy
        // and ValidateVolumeAttachmentUpdate each do), so errors repeat.
        let mut errs = validate_volume_attachment(new);
        errs.extend(validate_volume_attachment(new));
        if !sem_eq(&new["spec"], &old["spec"]) {
            errs.push(helpers::invalid_raw(
                "spec",
                &go_volume_attachment_spec(&new["spec"]),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&VOLUME_ATTACHMENT_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::storage_kinds::{cells, fields};

    fn attachment() -> Value {
        json!({"metadata": {"name": "va", "generation": 1}, "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
                "source": {"persistentVolumeName": "pv-1"}}, "status": {"attached": false}})
    }

    #[test]
    fn volume_attachment_validation_and_cells() {
        let mut o = attachment();
        VolumeAttachmentStrategy.prepare_for_create(&mut o);
        assert!(o["metadata"].get("generation").is_none());
        assert!(VolumeAttachmentStrategy.validate(&o).is_empty());
        let names: Vec<&str> = VOLUME_ATTACHMENT_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "Attacher", "PV", "Node", "Attached", "Age"]);
        assert_eq!(VOLUME_ATTACHMENT_COLUMNS[1].format, "name");
        assert_eq!(
            cells(&VOLUME_ATTACHMENT_COLUMNS, &o)[..5],
            [
                json!("va"),
                json!("csi.example.com"),
                json!("pv-1"),
                json!("node-1"),
                json!(false)
            ]
        );
        let bad = json!({"spec": {"attacher": "", "nodeName": "", "source": {}}, "status": {"attachError": {"errorCode": -1, "message": "x".repeat(1025)}}});
        let got = fields(&VolumeAttachmentStrategy.validate(&bad));
        let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.attacher",
                "spec.source",
                "spec.nodeName",
                "status.attachError.message",
                "status.attachError.errorCode",
                "spec.attacher",
                "spec.attacher"
            ]
        );
        assert_eq!(
            got[1].1,
            "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        );
        assert_eq!(got[3].1, "Too long: may not be more than 262144 bytes");
        assert_eq!(
            got[4].1,
            "Invalid value: -1: must be between 0 and 2147483647, inclusive"
        );
        let both = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"persistentVolumeName": "", "inlineVolumeSpec": {}}}});
        assert_eq!(
            fields(&VolumeAttachmentStrategy.validate(&both))[0].0,
            "spec.source"
        );
        let empty_pv = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"persistentVolumeName": ""}}});
        let got = fields(&VolumeAttachmentStrategy.validate(&empty_pv));
        assert_eq!(
            got[0],
            (
                "spec.source.persistentVolumeName".into(),
                "Required value: must specify non empty persistentVolumeName".into()
            )
        );
        assert_eq!(got[1].0, "spec.source.persistentVolumeName");
        let inline = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"inlineVolumeSpec": {
                "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Delete",
                "nfs": {"server": "s", "path": "/"}, "csi": {"driver": "", "volumeHandle": "", "nodePublishSecretRef": {"name": "s"}},
                "storageClassName": "fast", "volumeMode": "Block"}}}});
        let got = fields(&VolumeAttachmentStrategy.validate(&inline));
        let p = "spec.source.inlineVolumeSpec";
        let want: Vec<String> = [
            "capacity",
            "accessModes",
            "persistentVolumeReclaimPolicy",
            "csi",
            "storageClassName",
            "volumeMode",
        ]
        .iter()
        .map(|f| format!("{p}.{f}"))
        .collect();
        assert_eq!(got.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(), want);
        assert_eq!(
            got[3].1,
            "Forbidden: may not specify more than 1 volume type"
        );
        let csi_only = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"inlineVolumeSpec": {
                "accessModes": ["ReadWriteOnce"], "csi": {"driver": "", "volumeHandle": "", "nodePublishSecretRef": {"name": "s"}}}}}});
        let got = fields(&VolumeAttachmentStrategy.validate(&csi_only));
        let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            paths,
            [
                &format!("{p}.csi.driver"),
                &format!("{p}.csi.driver"),
                &format!("{p}.csi.volumeHandle"),
                &format!("{p}.csi.nodePublishSecretRef.namespace")
            ]
        );
    }

    #[test]
    fn volume_attachment_update_rules() {
        let old = attachment();
        let mut new = old.clone();
        new["spec"]["nodeName"] = json!("node-2");
        assert_eq!(
                fields(&VolumeAttachmentStrategy.validate_update(&new, &old)),
                [("spec".into(), "Invalid value: {\"Attacher\":\"csi.example.com\",\"Source\":{\"PersistentVolumeName\":\"pv-1\",\"InlineVolumeSpec\":null},\"NodeName\":\"node-2\"}: field is immutable".into())]
            );
        // upstream validates the new object twice on update.
        let mut status = old.clone();
        status["status"]["detachError"] = json!({"errorCode": -2});
        let got = fields(&VolumeAttachmentStrategy.validate_update(&status, &old));
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|(f, _)| f == "status.detachError.errorCode"));
        assert!(!VolumeAttachmentStrategy.generation_changed(&new, &old));
    }
}
