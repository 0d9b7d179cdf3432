//! Pod (upstream's pkg/registry/core/pod, with the pod parts of
//! pkg/apis/core's defaults and validation), and the pods/binding and
//! pods/ephemeralcontainers update rules. Pod spec defaulting and validation
//! are public here because every kind that embeds a pod template
//! (ReplicationController, PodTemplate, the apps and batch workloads) must
//! default and check it exactly as a pod's.

use serde_json::{json, Map, Value};

use super::obj_mut;
use crate::registry::strategy::{
    age_cell, name_column, set_default, Column, Strategy, AGE_DESCRIPTION,
};
use crate::registry::validation::{self, FieldError};

pub struct PodStrategy;

fn default_container(c: &mut Map<String, Value>) {
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let last = image.rsplit('/').next().unwrap_or("");
    let tagless = !last.contains(':') && !image.contains('@');
    let pull = if tagless || image.ends_with(":latest") {
        "Always"
    } else {
        "IfNotPresent"
    };
    set_default(c, "imagePullPolicy", json!(pull));
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    set_default(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", json!("TCP"));
        }
    }
}

/// pods/binding (upstream's `setPodHostAndAnnotations`): the old pod with
/// the node the new one names, the Binding's annotations added, and the
/// PodScheduled condition set to True.
pub fn binding_update(new: &Value, old: &Value) -> Value {
    let mut merged = old.clone();
    if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), new["spec"]["nodeName"].clone());
    }
    if let Some(given) = new["metadata"]["annotations"].as_object() {
        if let Some(m) = merged.get_mut("metadata").and_then(Value::as_object_mut) {
            let ann = m.entry("annotations").or_insert_with(|| json!({}));
            if let Some(ann) = ann.as_object_mut() {
                for (k, v) in given {
                    ann.insert(k.clone(), v.clone());
                }
            }
        }
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if let Some(status) = merged.get_mut("status").and_then(Value::as_object_mut) {
        let conds = status.entry("conditions").or_insert_with(|| json!([]));
        if let Some(list) = conds.as_array_mut() {
            match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
                Some(c) if c["status"] == "True" => {}
                Some(c) => {
                    c["status"] = json!("True");
                    c["lastTransitionTime"] = json!(now);
                    if let Some(o) = c.as_object_mut() {
                        o.remove("reason");
                        o.remove("message");
                    }
                }
                None => list.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now})),
            }
        }
    }
    merged
}

/// pods/ephemeralcontainers (upstream's podEphemeralContainersStrategy):
/// the old pod with the new one's `spec.ephemeralContainers`, defaulted as
/// containers are; nothing else of the update is taken.
pub fn ephemeral_containers_update(new: &Value, old: &Value) -> Value {
    let mut merged = old.clone();
    let mut list = new["spec"]["ephemeralContainers"].clone();
    for c in list.as_array_mut().into_iter().flatten() {
        if let Some(c) = c.as_object_mut() {
            default_container(c);
        }
    }
    if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
        if list.is_null() {
            spec.remove("ephemeralContainers");
        } else {
            spec.insert("ephemeralContainers".into(), list);
        }
    }
    merged
}

/// upstream's ValidatePodEphemeralContainersUpdate: ephemeral containers
/// are only ever added; each new one is a valid container with a unique
/// name, an image, none of the fields an ephemeral container may not have,
/// and a target that exists.
pub fn validate_ephemeral_containers_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let path = "spec.ephemeralContainers";
    let mut errs = Vec::new();
    let list = |v: &Value, key: &str| -> Vec<Value> {
        v["spec"][key].as_array().cloned().unwrap_or_default()
    };
    let (new_list, old_list) = (
        list(new, "ephemeralContainers"),
        list(old, "ephemeralContainers"),
    );
    for o in &old_list {
        let name = o["name"].as_str().unwrap_or("");
        match new_list.iter().find(|n| n["name"] == o["name"]) {
            None => errs.push(FieldError::forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(n) if n != o => errs.push(FieldError::forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    let regular: Vec<String> = ["containers", "initContainers"]
        .iter()
        .flat_map(|k| list(new, k))
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    let mut names: std::collections::HashSet<String> = regular.iter().cloned().collect();
    for (i, c) in new_list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        check_container_name(&at, c, &mut names, &mut errs);
        if c["image"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required(format!("{at}.image"), ""));
        }
        for field in [
            "ports",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "lifecycle",
            "restartPolicy",
        ] {
            if !c[field].is_null() {
                errs.push(FieldError::forbidden(
                    format!("{at}.{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        if c["resources"].as_object().is_some_and(|r| !r.is_empty()) {
            errs.push(FieldError::forbidden(
                format!("{at}.resources"),
                "cannot be set for an Ephemeral Container",
            ));
        }
        if let Some(target) = c["targetContainerName"].as_str() {
            if !target.is_empty() && !regular.iter().any(|n| n == target) {
                errs.push(FieldError::not_found(
                    format!("{at}.targetContainerName"),
                    json!(target),
                ));
            }
        }
    }
    errs
}

/// upstream's SetDefaults_PodSpec and container defaults; shared by pod templates.
pub fn default_pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for key in ["containers", "initContainers"] {
        if let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container_parts(c);
            }
        }
    }
    if let Some(vs) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
}

/// Every source a pod's volume may name (VolumeSource's fields).
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// 0644, the mode files of secret, configMap, downwardAPI and projected
/// volumes get by default.
const DEFAULT_MODE: i64 = 0o644;

fn child<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    m.get_mut(key).and_then(Value::as_object_mut)
}

fn each_child<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    m.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// A downward API file or env source: SetDefaults_ObjectFieldSelector's
/// apiVersion, and the divisor a resourceFieldRef always shows (its Go
/// Quantity is never left out).
fn default_downward(m: &mut Map<String, Value>) {
    if let Some(f) = child(m, "fieldRef") {
        if f.get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            f.insert("apiVersion".into(), json!("v1"));
        }
    }
    if let Some(r) = child(m, "resourceFieldRef") {
        set_default(r, "divisor", json!("0"));
    }
}

/// upstream's SetDefaults_Volume and those of the volume sources.
fn default_volume(v: &mut Map<String, Value>) {
    if !VOLUME_SOURCES
        .iter()
        .any(|s| v.get(*s).is_some_and(|x| !x.is_null()))
    {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(src) = child(v, source) {
            set_default(src, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(d) = child(v, "downwardAPI") {
        each_child(d, "items").for_each(default_downward);
    }
    if let Some(p) = child(v, "projected") {
        for source in each_child(p, "sources") {
            if let Some(d) = child(source, "downwardAPI") {
                each_child(d, "items").for_each(default_downward);
            }
            if let Some(t) = child(source, "serviceAccountToken") {
                set_default(t, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(h) = child(v, "hostPath") {
        set_default(h, "type", json!(""));
    }
    if let Some(i) = child(v, "iscsi") {
        set_default(i, "iscsiInterface", json!("default"));
    }
    if let Some(r) = child(v, "rbd") {
        set_default(r, "pool", json!("rbd"));
        set_default(r, "user", json!("admin"));
        set_default(r, "keyring", json!("/etc/ceph/keyring"));
    }
    if let Some(a) = child(v, "azureDisk") {
        set_default(a, "cachingMode", json!("ReadWrite"));
        set_default(a, "fsType", json!("ext4"));
        set_default(a, "readOnly", json!(false));
        set_default(a, "kind", json!("Shared"));
    }
    if let Some(s) = child(v, "scaleIO") {
        set_default(s, "storageMode", json!("ThinProvisioned"));
        set_default(s, "fsType", json!("xfs"));
    }
}

/// SetDefaults_HTTPGetAction, wherever a handler may hold one.
fn default_handler(h: &mut Map<String, Value>) {
    if let Some(g) = child(h, "httpGet") {
        if g.get("path")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            g.insert("path".into(), json!("/"));
        }
        if g.get("scheme")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            g.insert("scheme".into(), json!("HTTP"));
        }
    }
}

/// What every kind of container gets below its own fields: probes
/// (SetDefaults_Probe), lifecycle handlers, downward API env sources.
fn default_container_parts(c: &mut Map<String, Value>) {
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = child(c, probe) {
            set_default(p, "timeoutSeconds", json!(1));
            set_default(p, "periodSeconds", json!(10));
            set_default(p, "successThreshold", json!(1));
            set_default(p, "failureThreshold", json!(3));
            default_handler(p);
        }
    }
    if let Some(l) = child(c, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = child(l, hook) {
                default_handler(h);
            }
        }
    }
    for env in each_child(c, "env") {
        if let Some(from) = child(env, "valueFrom") {
            default_downward(from);
        }
    }
}

/// `--allow-privileged`: whether containers may run privileged (upstream's
/// `capabilities.Get().AllowPrivileged`, false unless the flag says so).
static ALLOW_PRIVILEGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `--allow-privileged` for the pod validation of this process.
pub fn set_allow_privileged(allow: bool) {
    ALLOW_PRIVILEGED.store(allow, std::sync::atomic::Ordering::Relaxed);
}

/// A container's name: required, a DNS label, and not one of `names`
/// (which it joins): containers, init and ephemeral ones share one space.
fn check_container_name(
    at: &str,
    c: &Value,
    names: &mut std::collections::HashSet<String>,
    errs: &mut Vec<FieldError>,
) {
    let name = c["name"].as_str().unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{at}.name"), ""));
        return;
    }
    for m in validation::dns1123_label(name) {
        errs.push(FieldError::invalid(format!("{at}.name"), json!(name), m));
    }
    if !names.insert(name.to_string()) {
        errs.push(FieldError::duplicate(format!("{at}.name"), json!(name)));
    }
}

/// upstream's ValidatePodSpec for the fields people get wrong.
pub fn validate_pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let allow_privileged = ALLOW_PRIVILEGED.load(std::sync::atomic::Ordering::Relaxed);
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let mut names = std::collections::HashSet::new();
    // Upstream validates the containers before the init containers, and
    // each container's own fields before its name's uniqueness.
    for (key, list) in [
        ("containers", containers),
        (
            "initContainers",
            spec["initContainers"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        ),
    ] {
        for (i, c) in list.iter().enumerate() {
            let cpath = format!("{path}.{key}[{i}]");
            let mut unique = std::collections::HashSet::new();
            check_container_name(&cpath, c, &mut unique, &mut errs);
            if c["image"].as_str().unwrap_or("").trim().is_empty() {
                errs.push(FieldError::required(format!("{cpath}.image"), ""));
            }
            if c["resources"].is_object() {
                super::resource_requirements::validate(
                    &c["resources"],
                    &format!("{cpath}.resources"),
                    &mut errs,
                );
            }
            if !allow_privileged && c["securityContext"]["privileged"].as_bool() == Some(true) {
                errs.push(FieldError::forbidden(
                    format!("{cpath}.securityContext.privileged"),
                    "disallowed by cluster policy",
                ));
            }
            for (j, p) in c["ports"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                match p["containerPort"].as_i64() {
                    None => errs.push(FieldError::required(
                        format!("{cpath}.ports[{j}].containerPort"),
                        "",
                    )),
                    Some(n) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                        format!("{cpath}.ports[{j}].containerPort"),
                        json!(n),
                        "must be between 1 and 65535, inclusive",
                    )),
                    _ => {}
                }
            }
            if let Some(pp) = c["imagePullPolicy"].as_str() {
                if !["Always", "IfNotPresent", "Never"].contains(&pp) {
                    errs.push(FieldError::not_supported(
                        format!("{cpath}.imagePullPolicy"),
                        json!(pp),
                        &["Always", "IfNotPresent", "Never"],
                    ));
                }
            }
            let name = c["name"].as_str().unwrap_or("");
            if !name.is_empty() && !names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(format!("{cpath}.name"), json!(name)));
            }
        }
    }
    if let Some(rp) = spec["restartPolicy"].as_str() {
        if !["Always", "OnFailure", "Never"].contains(&rp) {
            errs.push(FieldError::not_supported(
                format!("{path}.restartPolicy"),
                json!(rp),
                &["Always", "OnFailure", "Never"],
            ));
        }
    }
    if let Some(dp) = spec["dnsPolicy"].as_str() {
        if !["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"].contains(&dp) {
            errs.push(FieldError::not_supported(
                format!("{path}.dnsPolicy"),
                json!(dp),
                &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
            ));
        }
    }
    if let Some(t) = spec["terminationGracePeriodSeconds"].as_i64() {
        if t < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.terminationGracePeriodSeconds"),
                json!(t),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

fn pod_ready(o: &Value) -> Value {
    let total = o["spec"]["containers"].as_array().map_or(0, |a| a.len());
    let ready = o["status"]["containerStatuses"].as_array().map_or(0, |a| {
        a.iter()
            .filter(|c| c["ready"].as_bool() == Some(true))
            .count()
    });
    json!(format!("{ready}/{total}"))
}

fn pod_status(o: &Value) -> Value {
    if crate::registry::meta::is_deleting(o) {
        return json!("Terminating");
    }
    o["status"]["reason"]
        .as_str()
        .or(o["status"]["phase"].as_str())
        .map_or(json!("Unknown"), |s| json!(s))
}

/// upstream's printPod: the restarts as a string, with how long ago the
/// last one ended (`3 (5m ago)`) once a container has restarted.
fn pod_restarts(o: &Value) -> Value {
    let statuses = o["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let restarts: i64 = statuses
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let last = statuses
        .iter()
        .filter_map(|c| c["lastState"]["terminated"]["finishedAt"].as_str())
        .max();
    match last {
        Some(t) if restarts > 0 => json!(format!(
            "{restarts} ({} ago)",
            crate::registry::strategy::human_age(t)
        )),
        _ => json!(restarts.to_string()),
    }
}

static POD_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Ready", kind: "string", format: "", description: "The aggregate readiness state of this pod for accepting traffic.", priority: 0, cell: pod_ready },
        Column { name: "Status", kind: "string", format: "", description: "The aggregate status of the containers in this pod.", priority: 0, cell: pod_status },
        Column { name: "Restarts", kind: "string", format: "", description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", priority: 0, cell: pod_restarts },
        Column { name: "Age", kind: "string", format: "", description: AGE_DESCRIPTION, priority: 0, cell: age_cell },
        Column { name: "IP", kind: "string", format: "", description: "podIP is the IP address allocated to the pod.", priority: 1, cell: |o| json!(o["status"]["podIP"].as_str().unwrap_or("<none>")) },
        Column { name: "Node", kind: "string", format: "", description: "NodeName indicates in which node this pod is scheduled.", priority: 1, cell: |o| json!(o["spec"]["nodeName"].as_str().unwrap_or("<none>")) },
        Column { name: "Nominated Node", kind: "string", format: "", description: "nominatedNodeName is set only when this pod preempts other pods on the node.", priority: 1, cell: |o| json!(o["status"]["nominatedNodeName"].as_str().unwrap_or("<none>")) },
        Column { name: "Readiness Gates", kind: "string", format: "", description: "If specified, all readiness gates will be evaluated for pod readiness.", priority: 1, cell: |o| json!(if o["spec"]["readinessGates"].as_array().is_some_and(|a| !a.is_empty()) { "" } else { "<none>" }) },
    ]
});

/// upstream's SetDefaults_Pod (pods only, not templates): a container's
/// limit without a request requests the limit.
fn default_requests_to_limits(spec: &mut Map<String, Value>) {
    for key in ["containers", "initContainers"] {
        let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                continue;
            };
            let Some(limits) = res
                .get("limits")
                .and_then(Value::as_object)
                .filter(|l| !l.is_empty())
                .cloned()
            else {
                continue;
            };
            let requests = res.entry("requests").or_insert_with(|| json!({}));
            if !requests.is_object() {
                *requests = json!({});
            }
            if let Some(r) = requests.as_object_mut() {
                for (k, v) in limits {
                    r.entry(k).or_insert(v);
                }
            }
        }
    }
}

impl Strategy for PodStrategy {
    fn status_update(&self) -> crate::registry::strategy::StatusUpdate {
        crate::registry::strategy::StatusUpdate::AllButSpecAndOwners
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj_mut(obj, "spec") {
            default_pod_spec(spec);
            // SetDefaults_Pod, not SetDefaults_PodSpec: pod templates
            // (Deployments, Jobs, ...) do not get it.
            set_default(spec, "enableServiceLinks", json!(true));
            default_requests_to_limits(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let qos = crate::registry::pod_resize::compute_qos(&obj["spec"]);
        if let Some(m) = obj.as_object_mut() {
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_pod_spec(&obj["spec"], "spec")
    }

    /// A pod on a node gets its grace period for the kubelet to stop it;
    /// one never scheduled, or already finished, goes at once.
    fn graceful_delete_period(&self, pod: &Value, requested: Option<i64>) -> Option<i64> {
        let unscheduled = pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty();
        let finished = matches!(
            pod["status"]["phase"].as_str(),
            Some("Failed" | "Succeeded")
        );
        if unscheduled || finished {
            return Some(0);
        }
        Some(
            requested
                .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
                .unwrap_or(0),
        )
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        // Pod specs are immutable but for images and a few fields.
        let strip = |v: &Value| {
            let mut s = v["spec"].clone();
            for key in ["containers", "initContainers"] {
                if let Some(cs) = s.get_mut(key).and_then(Value::as_array_mut) {
                    for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                        c.remove("image");
                    }
                }
            }
            if let Some(m) = s.as_object_mut() {
                for key in [
                    "activeDeadlineSeconds",
                    "tolerations",
                    "terminationGracePeriodSeconds",
                    "schedulingGates",
                ] {
                    m.remove(key);
                }
            }
            s
        };
        if strip(new) != strip(old) {
            errs.push(FieldError::forbidden(
                "spec",
                "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&POD_COLUMNS)
    }
}
