//! The CSI kinds of storage.k8s.io: CSIDriver, CSINode,
//! CSIStorageCapacity, VolumeAttachment and VolumeAttributesClass
//! (upstream's pkg/registry/storage and pkg/apis/storage/validation).

use serde_json::{json, Value};

use crate::registry::helpers::{self, items, s};
use crate::registry::strategy::{age_column, name_column, set_default, Column, Strategy};
use crate::registry::validation::{self, FieldError};

use super::{MAX_PROVISIONER_PARAMETER_LEN, MAX_PROVISIONER_PARAMETER_SIZE};

// ---- CSI kinds: CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
// VolumeAttributesClass (upstream's pkg/registry/storage/<kind>) ----

const ATTACH_REQUIRED_DESC: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const POD_INFO_ON_MOUNT_DESC: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const STORAGE_CAPACITY_DESC: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const TOKEN_REQUESTS_DESC: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const REQUIRES_REPUBLISH_DESC: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const MODES_DESC: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";
const ATTACHER_DESC: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const PV_NAME_DESC: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const NODE_NAME_DESC: &str = "nodeName represents the node that the volume should be attached to.";
const ATTACHED_DESC: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";
const SC_NAME_DESC: &str = "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.";
const CAPACITY_DESC: &str = "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.";
const DRIVER_NAME_DESC: &str = "Name of the CSI driver This field is immutable.";
const CSI_NODE_ID_MAX: usize = 192;
const CSI_NODE_ID_LONGER_MAX: usize = 256;
const MAX_ATTACHED_VOLUME_METADATA_SIZE: usize = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE_SIZE: usize = 1024;
const QUALIFIED_NAME_REGEX_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn col(
    name: &'static str,
    kind: &'static str,
    desc: &'static str,
    cell: fn(&Value) -> Value,
) -> Column {
    Column {
        name,
        kind,
        format: "",
        description: desc,
        priority: 0,
        cell,
    }
}

/// upstream's IsQualifiedName, including what the shared helper leaves out:
/// an empty name part also fails the regex, and more than one '/' is one error.
pub(crate) fn qualified_name(v: &str) -> Vec<String> {
    if v.matches('/').count() > 1 {
        return vec![format!("a qualified name {QUALIFIED_NAME_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")];
    }
    let mut out = validation::qualified_name(v);
    if v.rsplit('/').next().is_some_and(str::is_empty) {
        out.push(format!("name part {QUALIFIED_NAME_REGEX_MSG}"));
    }
    out
}

/// The value with nulls and empty lists/maps left out: upstream compares
/// with apiequality.Semantic, for which nil and empty are the same.
pub(crate) fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), semantic(x)))
                .filter(|(_, x)| !helpers::is_empty(x) || x.is_string())
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

pub(crate) fn sem_eq(a: &Value, b: &Value) -> bool {
    semantic(a) == semantic(b)
}

/// upstream's ValidateCSIDriverName.
fn csi_driver_name(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if name.len() > 63 {
        errs.push(FieldError::too_long(path, 63));
    }
    for m in validation::dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
}

fn subdomain(v: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in validation::dns1123_subdomain(v) {
        errs.push(FieldError::invalid(path, json!(v), m));
    }
}

/// A value as upstream's v1.34 messages print a non-scalar: its JSON
/// (Go's encoder escapes HTML characters).
fn go_json(v: &Value) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A Go struct's JSON: fields in declaration order, values already rendered.
fn go_struct(fields: &[(&str, String)]) -> String {
    let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

// ---- CSIDriver ----

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

/// upstream sets no generation on create (only updates bump it).
fn drop_generation(obj: &mut Value) {
    crate::registry::meta::meta_mut(obj).remove("generation");
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

// ---- CSINode ----

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

// ---- CSIStorageCapacity ----

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

// ---- VolumeAttachment ----

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

// ---- VolumeAttributesClass ----

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
#[path = "csi_tests.rs"]
mod tests;
