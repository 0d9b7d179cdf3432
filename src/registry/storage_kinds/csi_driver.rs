//! CSIDriver (upstream's pkg/registry/storage/csidriver).

use serde_json::{json, Value};

use super::{col, drop_generation, go_json, sem_eq};
use crate::registry::helpers::{self, items, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::FieldError;

const ATTACH_REQUIRED_DESC: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const POD_INFO_ON_MOUNT_DESC: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const STORAGE_CAPACITY_DESC: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const TOKEN_REQUESTS_DESC: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const REQUIRES_REPUBLISH_DESC: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const MODES_DESC: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";

pub struct CSIDriverStrategy;

static CSI_DRIVER_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        col("AttachRequired", "boolean", ATTACH_REQUIRED_DESC, |o| {
            json!(o["spec"]["attachRequired"].as_bool().unwrap_or(true))
        }),
        col("PodInfoOnMount", "boolean", POD_INFO_ON_MOUNT_DESC, |o| {
            json!(o["spec"]["podInfoOnMount"].as_bool().unwrap_or(false))
        }),
        col("StorageCapacity", "boolean", STORAGE_CAPACITY_DESC, |o| {
            json!(o["spec"]["storageCapacity"].as_bool().unwrap_or(false))
        }),
        col("TokenRequests", "string", TOKEN_REQUESTS_DESC, |o| {
            // An empty list is stored as none, which prints as unset.
            let reqs = items(&o["spec"]["tokenRequests"]);
            let auds: Vec<&str> = reqs.iter().map(|t| s(t, "audience")).collect();
            json!(if reqs.is_empty() {
                "<unset>".to_string()
            } else {
                auds.join(",")
            })
        }),
        col(
            "RequiresRepublish",
            "boolean",
            REQUIRES_REPUBLISH_DESC,
            |o| json!(o["spec"]["requiresRepublish"].as_bool().unwrap_or(false)),
        ),
        col("Modes", "string", MODES_DESC, |o| {
            let modes = helpers::strings(&o["spec"]["volumeLifecycleModes"]);
            json!(if modes.is_empty() {
                "<none>".to_string()
            } else {
                modes.join(",")
            })
        }),
        age_column(),
    ]
});

/// MutableCSINodeAllocatableCount is off in v1.34: its field is dropped
/// unless the stored object already has it.
fn drop_disabled_driver_fields(new: &mut Value, old: Option<&Value>) {
    if old.is_none_or(|o| o["spec"]["nodeAllocatableUpdatePeriodSeconds"].is_null()) {
        if let Some(spec) = helpers::obj_mut(new, "spec") {
            spec.remove("nodeAllocatableUpdatePeriodSeconds");
        }
    }
}

fn validate_csi_driver_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ] {
        if spec[key].is_null() {
            errs.push(FieldError::required(path, ""));
        }
    }
    if let Some(p) = spec["fsGroupPolicy"].as_str() {
        if !["File", "None", "ReadWriteOnceWithFSType"].contains(&p) {
            errs.push(FieldError::not_supported(
                "spec.fsGroupPolicy",
                json!(p),
                &["File", "None", "ReadWriteOnceWithFSType"],
            ));
        }
    }
    let mut audiences = std::collections::HashSet::new();
    for (i, t) in items(&spec["tokenRequests"]).iter().enumerate() {
        let aud = s(t, "audience");
        if !audiences.insert(aud.to_string()) {
            errs.push(FieldError::duplicate(
                format!("spec.tokenRequests[{i}].audience"),
                json!(aud),
            ));
            continue;
        }
        let Some(exp) = t["expirationSeconds"].as_i64() else {
            continue;
        };
        let p = format!("spec.tokenRequests[{i}].expirationSeconds");
        if exp < 600 {
            errs.push(FieldError::invalid(
                &p,
                json!(exp),
                "may not specify a duration less than 10 minutes",
            ));
        }
        if exp > 1 << 32 {
            errs.push(FieldError::invalid(
                &p,
                json!(exp),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    for m in helpers::strings(&spec["volumeLifecycleModes"]) {
        if m != "Persistent" && m != "Ephemeral" {
            errs.push(FieldError::not_supported(
                "spec.volumeLifecycleModes",
                json!(m),
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    // SELinuxMountReadWriteOncePod is on in v1.34.
    if spec["seLinuxMount"].is_null() {
        errs.push(FieldError::required("spec.seLinuxMount", ""));
    }
    if let Some(p) = spec["nodeAllocatableUpdatePeriodSeconds"]
        .as_i64()
        .filter(|p| *p < 10)
    {
        errs.push(FieldError::invalid(
            "spec.nodeAllocatableUpdatePeriodSeconds",
            json!(p),
            "must be greater than or equal to 10 seconds",
        ));
    }
    errs
}

impl Strategy for CSIDriverStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(m) = obj.as_object_mut() else { return };
        let spec = helpers::ensure_obj(m, "spec");
        set_default(spec, "attachRequired", json!(true));
        set_default(spec, "podInfoOnMount", json!(false));
        set_default(spec, "storageCapacity", json!(false));
        set_default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
        if spec
            .get("volumeLifecycleModes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
        }
        set_default(spec, "requiresRepublish", json!(false));
        set_default(spec, "seLinuxMount", json!(false));
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_disabled_driver_fields(obj, None);
        drop_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_disabled_driver_fields(new, Some(old));
    }

    fn generation_changed(&self, new: &Value, old: &Value) -> bool {
        !sem_eq(&new["spec"], &old["spec"])
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csi_driver_spec(&obj["spec"])
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_csi_driver_spec(&new["spec"]);
        helpers::immutable(
            "spec.attachedRequired",
            &new["spec"]["attachRequired"],
            &old["spec"]["attachRequired"],
            &mut errs,
        );
        let (nm, om) = (
            &new["spec"]["volumeLifecycleModes"],
            &old["spec"]["volumeLifecycleModes"],
        );
        if !sem_eq(nm, om) {
            errs.push(helpers::invalid_raw(
                "spec.volumeLifecycleModes",
                &go_json(nm),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CSI_DRIVER_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::storage_kinds::{cells, fields};

    fn driver() -> Value {
        let mut o = json!({"metadata": {"name": "csi.example.com", "generation": 1}, "spec": {"nodeAllocatableUpdatePeriodSeconds": 30}});
        CSIDriverStrategy.default(&mut o);
        CSIDriverStrategy.prepare_for_create(&mut o);
        o
    }

    #[test]
    fn csi_driver_defaults_drops_and_cells() {
        let o = driver();
        assert_eq!(
            o["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                    "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                    "requiresRepublish": false, "seLinuxMount": false})
        );
        assert!(o["metadata"].get("generation").is_none());
        assert!(CSIDriverStrategy.validate(&o).is_empty());
        let names: Vec<&str> = CSI_DRIVER_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Name",
                "AttachRequired",
                "PodInfoOnMount",
                "StorageCapacity",
                "TokenRequests",
                "RequiresRepublish",
                "Modes",
                "Age"
            ]
        );
        let c = cells(&CSI_DRIVER_COLUMNS, &o);
        assert_eq!(
            c[..7],
            [
                json!("csi.example.com"),
                json!(true),
                json!(false),
                json!(false),
                json!("<unset>"),
                json!(false),
                json!("Persistent")
            ]
        );
        let mut t = o.clone();
        t["spec"]["tokenRequests"] = json!([{"audience": "a"}, {"audience": "b"}]);
        t["spec"]["volumeLifecycleModes"] = json!(["Persistent", "Ephemeral"]);
        assert_eq!((CSI_DRIVER_COLUMNS[4].cell)(&t), "a,b");
        assert_eq!((CSI_DRIVER_COLUMNS[6].cell)(&t), "Persistent,Ephemeral");
        // The gated field survives an update only when already stored.
        let mut new = o.clone();
        new["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(30);
        CSIDriverStrategy.prepare_for_update(&mut new, &o);
        assert!(new["spec"]
            .get("nodeAllocatableUpdatePeriodSeconds")
            .is_none());
        let mut old = o.clone();
        old["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(60);
        new["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(30);
        CSIDriverStrategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["spec"]["nodeAllocatableUpdatePeriodSeconds"], 30);
        assert!(CSIDriverStrategy.generation_changed(&new, &o));
        assert!(!CSIDriverStrategy.generation_changed(&o, &o));
    }

    #[test]
    fn csi_driver_validation() {
        let mut o = driver();
        o["spec"]["fsGroupPolicy"] = json!("Sometimes");
        o["spec"]["volumeLifecycleModes"] = json!(["Persistent", "Forever"]);
        o["spec"]["tokenRequests"] = json!([{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}, {"audience": "b", "expirationSeconds": 5_000_000_000i64}]);
        o["spec"]["seLinuxMount"] = Value::Null;
        o["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(5);
        assert_eq!(
                fields(&CSIDriverStrategy.validate(&o)),
                [
                    ("spec.fsGroupPolicy".into(), "Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"".into()),
                    ("spec.tokenRequests[0].expirationSeconds".into(), "Invalid value: 60: may not specify a duration less than 10 minutes".into()),
                    ("spec.tokenRequests[1].audience".into(), "Duplicate value: \"a\"".into()),
                    ("spec.tokenRequests[2].expirationSeconds".into(), "Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds".into()),
                    ("spec.volumeLifecycleModes".into(), "Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"".into()),
                    ("spec.seLinuxMount".into(), "Required value".into()),
                    ("spec.nodeAllocatableUpdatePeriodSeconds".into(), "Invalid value: 5: must be greater than or equal to 10 seconds".into()),
                ]
            );
        let old = driver();
        let mut new = old.clone();
        new["spec"]["attachRequired"] = json!(false);
        new["spec"]["volumeLifecycleModes"] = json!(["Ephemeral"]);
        new["spec"]["podInfoOnMount"] = json!(true);
        assert_eq!(
            fields(&CSIDriverStrategy.validate_update(&new, &old)),
            [
                (
                    "spec.attachedRequired".into(),
                    "Invalid value: false: field is immutable".into()
                ),
                (
                    "spec.volumeLifecycleModes".into(),
                    "Invalid value: [\"Ephemeral\"]: field is immutable".into()
                ),
            ]
        );
    }
}
