//! Strategies of the core (`""`) group kinds people use most.

use serde_json::{json, Map, Value};

use super::meta::NameRule;
use super::strategy::{
    age_cell, age_column, name_column, set_default, Column, Strategy, AGE_DESCRIPTION,
};
use super::validation::{self, FieldError};

fn obj_mut<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    v.get_mut(key).and_then(Value::as_object_mut)
}

// ---- Namespace ----

pub struct NamespaceStrategy;

static NAMESPACE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Status",
            kind: "string",
            format: "",
            description: "The status of the namespace",
            priority: 0,
            cell: |o| o["status"]["phase"].clone(),
        },
        age_column(),
    ]
});

impl Strategy for NamespaceStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    /// SetDefaults_Namespace: the namespace's name is also a label (so
    /// its writer owns it, as upstream's).
    fn default(&self, obj: &mut Value) {
        let name = super::meta::name(obj).to_string();
        if name.is_empty() {
            return;
        }
        let meta = super::meta::meta_mut(obj);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }

    /// The `kubernetes` finalizer is the server's, added after the
    /// writer's fields are recorded (PrepareForCreate).
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"phase": "Active"}));
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            if !spec.is_object() {
                *spec = json!({});
            }
            if let Some(spec) = spec.as_object_mut() {
                let fins = spec.entry("finalizers").or_insert_with(|| json!([]));
                if !fins.is_array() {
                    *fins = json!([]);
                }
                if let Some(list) = fins.as_array_mut() {
                    if !list.iter().any(|f| f == "kubernetes") {
                        list.push(json!("kubernetes"));
                    }
                }
            }
        }
        self.default(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // spec.finalizers change only through the finalize subresource.
        if let Some(m) = new.as_object_mut() {
            m.insert("spec".into(), old.get("spec").cloned().unwrap_or(json!({})));
        }
        let name = super::meta::name(new).to_string();
        let meta = super::meta::meta_mut(new);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }

    fn defer_deletion(&self, obj: &mut Value) -> bool {
        let pending = obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if pending {
            if let Some(m) = obj.as_object_mut() {
                let status = m.entry("status").or_insert_with(|| json!({}));
                if let Some(s) = status.as_object_mut() {
                    s.insert("phase".into(), json!("Terminating"));
                }
            }
        }
        pending
    }

    fn forbid_deletion(&self, name: &str) -> Option<&'static str> {
        crate::controlplane::bootstrap::SYSTEM_NAMESPACES
            .contains(&name)
            .then_some("this namespace may not be deleted")
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NAMESPACE_COLUMNS)
    }
}

// ---- ConfigMap and Secret ----

fn validate_data_keys(obj: &Value, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(data) = obj.get(field).and_then(Value::as_object) {
        for k in data.keys() {
            let ok = !k.is_empty()
                && k.len() <= 253
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !ok || k == "." || k == ".." {
                errs.push(FieldError::invalid(
                    format!("{field}[{k}]"),
                    Value::String(k.clone()),
                    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                ));
            }
        }
    }
}

/// upstream's `MaxSecretSize`, the cap on a ConfigMap's or Secret's data.
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The bytes a data map holds: strings as they are, base64 values decoded.
fn data_bytes(obj: &Value, field: &str, base64_values: bool) -> usize {
    use base64::Engine;
    obj.get(field).and_then(Value::as_object).map_or(0, |m| {
        m.values()
            .filter_map(Value::as_str)
            .map(|s| {
                if base64_values {
                    base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_or(s.len(), |b| b.len())
                } else {
                    s.len()
                }
            })
            .sum()
    })
}

/// Data over the cap is refused for the whole object (an empty field path).
fn validate_data_size(total: usize, errs: &mut Vec<FieldError>) {
    if total > MAX_DATA_BYTES {
        errs.push(FieldError::too_long("", MAX_DATA_BYTES));
    }
}

fn validate_immutable_data(new: &Value, old: &Value, errs: &mut Vec<FieldError>) {
    if old.get("immutable").and_then(Value::as_bool) == Some(true) {
        if new.get("immutable").and_then(Value::as_bool) != Some(true) {
            errs.push(FieldError::forbidden(
                "immutable",
                "field is immutable when `immutable` is set",
            ));
        }
        for field in ["data", "binaryData"] {
            if new.get(field) != old.get(field) {
                errs.push(FieldError::forbidden(
                    field,
                    "field is immutable when `immutable` is set",
                ));
            }
        }
    }
}

pub struct ConfigMapStrategy;

static CONFIGMAP_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Data",
            kind: "string",
            format: "",
            description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
            priority: 0,
            cell: |o| json!(o["data"].as_object().map_or(0, |m| m.len()) + o["binaryData"].as_object().map_or(0, |m| m.len())),
        },
        age_column(),
    ]
});

impl Strategy for ConfigMapStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_data_keys(obj, "data", &mut errs);
        validate_data_keys(obj, "binaryData", &mut errs);
        validate_data_size(
            data_bytes(obj, "data", false) + data_bytes(obj, "binaryData", true),
            &mut errs,
        );
        if let (Some(d), Some(b)) = (
            obj.get("data").and_then(Value::as_object),
            obj.get("binaryData").and_then(Value::as_object),
        ) {
            for k in d.keys().filter(|k| b.contains_key(*k)) {
                errs.push(FieldError::invalid(
                    format!("data[{k}]"),
                    Value::String(k.clone()),
                    "duplicate of key present in binaryData",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        validate_immutable_data(new, old, &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&CONFIGMAP_COLUMNS)
    }
}

pub struct SecretStrategy;

static SECRET_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types", priority: 0, cell: |o| o["type"].clone() },
        Column {
            name: "Data",
            kind: "string",
            format: "",
            description: "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
            priority: 0,
            cell: |o| json!(o["data"].as_object().map_or(0, |m| m.len())),
        },
        age_column(),
    ]
});

impl Strategy for SecretStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            set_default(m, "type", json!("Opaque"));
            // stringData is write-only: merged into data, as upstream's conversion does.
            if let Some(Value::Object(sd)) = m.remove("stringData") {
                use base64::Engine;
                let data = m.entry("data").or_insert_with(|| json!({}));
                if let Some(d) = data.as_object_mut() {
                    for (k, v) in sd {
                        let text = v.as_str().unwrap_or("").to_string();
                        d.insert(
                            k,
                            json!(base64::engine::general_purpose::STANDARD.encode(text)),
                        );
                    }
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate_data_keys(obj, "data", &mut errs);
        validate_data_size(data_bytes(obj, "data", true), &mut errs);
        let ty = obj["type"].as_str().unwrap_or("");
        let need = |key: &str, errs: &mut Vec<FieldError>| {
            if obj["data"].get(key).is_none() {
                errs.push(FieldError::required(format!("data[{key}]"), ""));
            }
        };
        match ty {
            "kubernetes.io/tls" => {
                need("tls.crt", &mut errs);
                need("tls.key", &mut errs);
            }
            "kubernetes.io/dockerconfigjson" => need(".dockerconfigjson", &mut errs),
            "kubernetes.io/basic-auth" => {}
            "kubernetes.io/ssh-auth" => need("ssh-privatekey", &mut errs),
            _ => {}
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("type") != old.get("type") {
            errs.push(FieldError::invalid(
                "type",
                new["type"].clone(),
                "field is immutable",
            ));
        }
        validate_immutable_data(new, old, &mut errs);
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SECRET_COLUMNS)
    }
}

// ---- ServiceAccount ----

pub struct ServiceAccountStrategy;

static SA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Secrets", kind: "string", format: "", description: "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.", priority: 0, cell: |o| json!(o["secrets"].as_array().map_or(0, |a| a.len())) },
        age_column(),
    ]
});

impl Strategy for ServiceAccountStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SA_COLUMNS)
    }
}

// ---- Service ----

pub struct ServiceStrategy;

fn service_ports(o: &Value) -> Value {
    let ports: Vec<String> = o["spec"]["ports"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let proto = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64() {
                        Some(np) if np > 0 => format!("{}:{np}/{proto}", p["port"]),
                        _ => format!("{}/{proto}", p["port"]),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Value::String(if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    })
}

static SERVICE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Type", kind: "string", format: "", description: "type determines how the Service is exposed.", priority: 0, cell: |o| o["spec"]["type"].clone() },
        Column { name: "Cluster-IP", kind: "string", format: "", description: "clusterIP is the IP address of the service and is usually assigned randomly.", priority: 0, cell: |o| json!(o["spec"]["clusterIP"].as_str().filter(|s| !s.is_empty()).unwrap_or("<none>")) },
        Column {
            name: "External-IP",
            kind: "string",
            format: "",
            description: "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            priority: 0,
            cell: |o| {
                let ips: Vec<String> = o["spec"]["externalIPs"].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default();
                if !ips.is_empty() {
                    return json!(ips.join(","));
                }
                match o["spec"]["type"].as_str() {
                    Some("LoadBalancer") => json!("<pending>"),
                    Some("ExternalName") => o["spec"]["externalName"].clone(),
                    _ => json!("<none>"),
                }
            },
        },
        Column { name: "Port(s)", kind: "string", format: "", description: "The list of ports that are exposed by this service.", priority: 0, cell: service_ports },
        age_column(),
        Column {
            name: "Selector",
            kind: "string",
            format: "",
            description: "Route service traffic to pods with label keys and values matching this selector.",
            priority: 1,
            cell: |o| {
                let sel: Vec<String> = o["spec"]["selector"].as_object().map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect()).unwrap_or_default();
                json!(if sel.is_empty() { "<none>".to_string() } else { sel.join(",") })
            },
        },
    ]
});

impl Strategy for ServiceStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035
    }

    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        set_default(spec, "type", json!("ClusterIP"));
        let ty = spec["type"].as_str().unwrap_or("ClusterIP").to_string();
        if ty != "ExternalName" {
            set_default(spec, "sessionAffinity", json!("None"));
            set_default(spec, "internalTrafficPolicy", json!("Cluster"));
        }
        if ty == "NodePort" || ty == "LoadBalancer" {
            set_default(spec, "externalTrafficPolicy", json!("Cluster"));
        }
        if ty == "LoadBalancer" {
            set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
        }
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                set_default(p, "protocol", json!("TCP"));
                if p.get("targetPort")
                    .is_none_or(|t| t.is_null() || t == &json!(0) || t == &json!(""))
                {
                    let port = p.get("port").cloned().unwrap_or(Value::Null);
                    p.insert("targetPort".into(), port);
                }
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"loadBalancer": {}}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        let ty = spec["type"].as_str().unwrap_or("ClusterIP");
        if !["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"].contains(&ty) {
            errs.push(FieldError::not_supported(
                "spec.type",
                json!(ty),
                &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
            ));
        }
        let headless = spec["clusterIP"].as_str() == Some("None");
        let ports = spec["ports"].as_array().cloned().unwrap_or_default();
        if ports.is_empty() && ty != "ExternalName" && !headless {
            errs.push(FieldError::required("spec.ports", ""));
        }
        if ty == "ExternalName" && spec["externalName"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
        let mut names = std::collections::HashSet::new();
        for (i, p) in ports.iter().enumerate() {
            let path = format!("spec.ports[{i}]");
            let name = p["name"].as_str().unwrap_or("");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(format!("{path}.name"), ""));
            }
            if !name.is_empty() {
                for m in validation::dns1123_label(name) {
                    errs.push(FieldError::invalid(format!("{path}.name"), json!(name), m));
                }
                if !names.insert(name.to_string()) {
                    errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
                }
            }
            match p["port"].as_i64() {
                None => errs.push(FieldError::required(format!("{path}.port"), "")),
                Some(n) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                    format!("{path}.port"),
                    json!(n),
                    "must be between 1 and 65535, inclusive",
                )),
                _ => {}
            }
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            if !["TCP", "UDP", "SCTP"].contains(&proto) {
                errs.push(FieldError::not_supported(
                    format!("{path}.protocol"),
                    json!(proto),
                    &["SCTP", "TCP", "UDP"],
                ));
            }
            if let Some(np) = p["nodePort"].as_i64() {
                if np != 0 && ty == "ClusterIP" {
                    errs.push(FieldError::forbidden(
                        format!("{path}.nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    ));
                }
            }
        }
        if let Some(sa) = spec["sessionAffinity"].as_str() {
            if !["None", "ClientIP"].contains(&sa) {
                errs.push(FieldError::not_supported(
                    "spec.sessionAffinity",
                    json!(sa),
                    &["ClientIP", "None"],
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (nip, oip) = (&new["spec"]["clusterIP"], &old["spec"]["clusterIP"]);
        let old_set = oip.as_str().is_some_and(|s| !s.is_empty());
        let changing_type_to_external = new["spec"]["type"].as_str() == Some("ExternalName");
        if old_set && nip != oip && !changing_type_to_external && nip.as_str().unwrap_or("") != "" {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                nip.clone(),
                "may not change once set",
            ));
        }
        errs
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // An update that leaves clusterIP empty keeps the allocated one.
        let old_ip = old["spec"]["clusterIP"].clone();
        let old_ips = old["spec"]["clusterIPs"].clone();
        if let Some(spec) = obj_mut(new, "spec") {
            if spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
                && !old_ip.is_null()
            {
                spec.insert("clusterIP".into(), old_ip);
                if !old_ips.is_null() {
                    spec.insert("clusterIPs".into(), old_ips);
                }
            }
        }
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SERVICE_COLUMNS)
    }
}

// ---- Pod ----

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
    if super::meta::is_deleting(o) {
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
            super::strategy::human_age(t)
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
        let qos = super::pod_resize::compute_qos(&obj["spec"]);
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

// ======================================================================
// Volumes, nodes, events, quotas and the other core kinds (upstream's
// pkg/registry/core/*, pkg/apis/core/v1/defaults.go, ValidatePersistent*,
// ValidateNode*, legacyValidateEvent, ValidateLimitRange,
// ValidateResourceQuota*, ValidateEndpoints, ValidateReplicationController*,
// ValidatePodTemplate and the matching printers).

use super::helpers as kh;

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// upstream's standardResources (helper.IsStandardResourceName).
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];
/// upstream's standardQuotaResources.
const STANDARD_QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];
/// upstream's integerResources.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_hugepages(name: &str) -> bool {
    ["hugepages-", "requests.hugepages-", "limits.hugepages-"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// upstream's validateResourceName.
fn validate_resource_name(name: &str, path: &str, errs: &mut Vec<FieldError>) -> bool {
    let before = errs.len();
    for m in validation::qualified_name(name) {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
    if errs.len() > before {
        return false;
    }
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !is_hugepages(name) {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must be a standard resource type or fully qualified",
        ));
        return false;
    }
    true
}

/// upstream's ValidatePositiveQuantityValue.
fn positive_quantity(v: &Value, path: &str, errs: &mut Vec<FieldError>) -> bool {
    if kh::quantity(v).is_none_or(|q| q <= 0) {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be greater than zero",
        ));
        return false;
    }
    true
}

/// upstream's ValidateResourceQuantityValue.
fn resource_quantity_value(resource: &str, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let q = kh::quantity(v).unwrap_or(0);
    if q < 0 {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be greater than or equal to 0",
        ));
    }
    if INTEGER_RESOURCES.contains(&resource) && q % 1_000_000_000 != 0 {
        errs.push(FieldError::invalid(
            path,
            json!(kh::quantity_str(v)),
            "must be an integer",
        ));
    }
}

fn validate_access_modes(modes: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let (mut rwop, mut other) = (false, false);
    for m in kh::strings(modes) {
        if !ACCESS_MODES.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(path, json!(m), &ACCESS_MODES));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
}

/// helper.GetAccessModesAsString.
fn access_modes_string(modes: &Value) -> String {
    let modes = kh::strings(modes);
    let mut out = Vec::new();
    for (m, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if modes.iter().any(|x| x == m) {
            out.push(short);
        }
    }
    out.join(",")
}

fn volume_mode_cell(o: &Value) -> Value {
    json!(o["spec"]["volumeMode"].as_str().unwrap_or("<unset>"))
}

fn vac_cell(o: &Value) -> Value {
    json!(o["spec"]["volumeAttributesClassName"]
        .as_str()
        .unwrap_or("<unset>"))
}

fn validate_class_name(v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(n) = v.as_str().filter(|n| !n.is_empty()) {
        for m in validation::dns1123_subdomain(n) {
            errs.push(FieldError::invalid(path, json!(n), m));
        }
    }
}

// ---- PersistentVolumeClaim ----

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
        Column { name: "Status", kind: "string", format: "", description: "phase represents the current phase of PersistentVolumeClaim.", priority: 0, cell: |o| json!(if super::meta::is_deleting(o) { "Terminating" } else { o["status"]["phase"].as_str().unwrap_or("") }) },
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

// ---- PersistentVolume ----

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
        Column { name: "Status", kind: "string", format: "", description: "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase", priority: 0, cell: |o| json!(if super::meta::is_deleting(o) { "Terminating" } else { o["status"]["phase"].as_str().unwrap_or("") }) },
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
                json!({"phase": "Pending", "lastPhaseTransitionTime": super::meta::now_rfc3339()}),
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

// ---- Node ----

pub struct NodeStrategy;

fn node_status_cell(o: &Value) -> Value {
    let mut status: Vec<String> = Vec::new();
    if let Some(c) = kh::items(&o["status"]["conditions"])
        .iter()
        .rev()
        .find(|c| kh::s(c, "type") == "Ready")
    {
        status.push(if kh::s(c, "status") == "True" {
            "Ready".into()
        } else {
            "NotReady".into()
        });
    }
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if o["spec"]["unschedulable"].as_bool() == Some(true) {
        status.push("SchedulingDisabled".into());
    }
    json!(status.join(","))
}

fn node_roles_cell(o: &Value) -> Value {
    let mut roles: Vec<String> = Vec::new();
    if let Some(labels) = o["metadata"]["labels"].as_object() {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.push(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
                    roles.push(v.to_string());
                }
            }
        }
    }
    roles.sort();
    roles.dedup();
    kh::or_none(&roles.join(","))
}

fn node_address(o: &Value, ty: &str) -> Value {
    json!(kh::items(&o["status"]["addresses"])
        .iter()
        .find(|a| kh::s(a, "type") == ty)
        .map(|a| kh::s(a, "address").to_string())
        .unwrap_or_else(|| "<none>".into()))
}

fn node_info(o: &Value, key: &str) -> Value {
    json!(o["status"]["nodeInfo"][key]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<unknown>"))
}

static NODE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Status", kind: "string", format: "", description: "The status of the node", priority: 0, cell: node_status_cell },
        Column { name: "Roles", kind: "string", format: "", description: "The roles of the node", priority: 0, cell: node_roles_cell },
        age_column(),
        Column { name: "Version", kind: "string", format: "", description: "Kubelet Version reported by the node.", priority: 0, cell: |o| json!(kh::s(&o["status"]["nodeInfo"], "kubeletVersion")) },
        Column { name: "Internal-IP", kind: "string", format: "", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", priority: 1, cell: |o| node_address(o, "InternalIP") },
        Column { name: "External-IP", kind: "string", format: "", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", priority: 1, cell: |o| node_address(o, "ExternalIP") },
        Column { name: "OS-Image", kind: "string", format: "", description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", priority: 1, cell: |o| node_info(o, "osImage") },
        Column { name: "Kernel-Version", kind: "string", format: "", description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority: 1, cell: |o| node_info(o, "kernelVersion") },
        Column { name: "Container-Runtime", kind: "string", format: "", description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", priority: 1, cell: |o| node_info(o, "containerRuntimeVersion") },
    ]
});

/// upstream's validateNodeTaints (reported under metadata.taints, as upstream does).
fn validate_node_taints(taints: &Value, errs: &mut Vec<FieldError>) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, t) in kh::items(taints).iter().enumerate() {
        let p = format!("metadata.taints[{i}]");
        let key = kh::s(t, "key");
        kh::label_name(key, &format!("{p}.key"), errs);
        let value = kh::s(t, "value");
        let msgs = validation::label_value(value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{p}.value"),
                json!(value),
                msgs.join(";"),
            ));
        }
        let effect = kh::s(t, "effect");
        match effect {
            "" => errs.push(FieldError::required(format!("{p}.effect"), "")),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => {}
            other => errs.push(FieldError::not_supported(
                format!("{p}.effect"),
                json!(other),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
        }
        let k = (effect.to_string(), key.to_string());
        if seen.contains(&k) {
            errs.push(FieldError {
                kind: validation::ErrorType::Duplicate,
                field: p,
                value: Some(t.clone()),
                detail: "taints must be unique by key and effect pair".into(),
            });
            continue;
        }
        seen.push(k);
    }
}

fn validate_node(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_node_taints(&obj["spec"]["taints"], &mut errs);
    for key in ["capacity", "allocatable"] {
        if let Some(m) = obj["status"][key].as_object() {
            for (r, q) in m {
                resource_quantity_value(r, q, &format!("status.{key}.{r}"), &mut errs);
            }
        }
    }
    let cidrs = kh::strings(&obj["spec"]["podCIDRs"]);
    for (i, c) in cidrs.iter().enumerate() {
        if kh::parse_cidr(c).is_none() {
            errs.push(FieldError::invalid(
                format!("spec.podCIDRs[{i}]"),
                json!(c),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    if cidrs.len() > 1 {
        let fams: Vec<bool> = cidrs
            .iter()
            .filter_map(|c| kh::parse_cidr(c))
            .map(|(ip, _)| ip.is_ipv4())
            .collect();
        let dual = fams.len() == 2 && fams[0] != fams[1];
        if !dual || cidrs.len() > 2 {
            errs.push(FieldError::invalid(
                "spec.podCIDRs",
                obj["spec"]["podCIDRs"].clone(),
                "may specify no more than one CIDR for each IP family",
            ));
        }
    }
    errs
}

impl Strategy for NodeStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        if let Some(status) = obj_mut(obj, "status") {
            if status.get("allocatable").is_none_or(Value::is_null) {
                if let Some(cap) = status.get("capacity").filter(|c| c.is_object()).cloned() {
                    status.insert("allocatable".into(), cap);
                }
            }
        }
    }

    /// Kubelets register with their status: upstream keeps it on create.
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_node(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for key in ["capacity", "allocatable"] {
            if let Some(m) = new["status"][key].as_object() {
                for (r, q) in m {
                    resource_quantity_value(r, q, &format!("status.{key}.{r}"), &mut errs);
                }
            }
        }
        let mut seen = Vec::new();
        for (i, a) in kh::items(&new["status"]["addresses"]).iter().enumerate() {
            if seen.contains(a) {
                errs.push(FieldError::duplicate(
                    format!("status.addresses[{i}]"),
                    a.clone(),
                ));
            }
            seen.push(a.clone());
        }
        let (ocidrs, ncidrs) = (
            kh::strings(&old["spec"]["podCIDRs"]),
            kh::strings(&new["spec"]["podCIDRs"]),
        );
        const CIDR_MSG: &str = "node updates may not change podCIDR except from \"\" to valid";
        if !ocidrs.is_empty() {
            if ocidrs.len() != ncidrs.len() {
                errs.push(FieldError::forbidden("spec.podCIDRs", CIDR_MSG));
            } else {
                for (i, (o, n)) in ocidrs.iter().zip(&ncidrs).enumerate() {
                    if o != n {
                        errs.push(FieldError::forbidden(
                            format!("spec.podCIDRs[{i}]"),
                            CIDR_MSG,
                        ));
                    }
                }
            }
        }
        let oid = kh::s(&old["spec"], "providerID");
        if !oid.is_empty() && oid != kh::s(&new["spec"], "providerID") {
            errs.push(FieldError::forbidden(
                "spec.providerID",
                "node updates may not change providerID except from \"\" to valid",
            ));
        }
        validate_node_taints(&new["spec"]["taints"], &mut errs);
        if new["spec"]["externalID"] != old["spec"]["externalID"] {
            errs.push(FieldError::forbidden(
                "spec.externalID",
                "may not be updated",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&NODE_COLUMNS)
    }
}

// ---- Event (core/v1) ----

pub struct EventStrategy;

fn event_first_seen(o: &Value) -> String {
    match o["firstTimestamp"].as_str() {
        Some(t) => super::strategy::human_age(t),
        None => o["eventTime"]
            .as_str()
            .map(super::strategy::human_age)
            .unwrap_or_else(|| "<unknown>".into()),
    }
}

fn event_last_seen(o: &Value) -> Value {
    if let Some(t) = o["series"]["lastObservedTime"].as_str() {
        return json!(super::strategy::human_age(t));
    }
    json!(match o["lastTimestamp"].as_str() {
        Some(t) => super::strategy::human_age(t),
        None => event_first_seen(o),
    })
}

fn event_object(o: &Value) -> Value {
    let io = &o["involvedObject"];
    let kind = kh::s(io, "kind").to_lowercase();
    let name = kh::s(io, "name");
    json!(if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    })
}

fn event_source(o: &Value) -> Value {
    let first = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first(
        kh::s(&o["source"], "component"),
        kh::s(o, "reportingComponent"),
    );
    let instance = first(kh::s(&o["source"], "host"), kh::s(o, "reportingInstance"));
    json!(if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    })
}

fn event_count(o: &Value) -> Value {
    if !o["series"].is_null() {
        return json!(o["series"]["count"].as_i64().unwrap_or(0));
    }
    json!(o["count"].as_i64().filter(|c| *c != 0).unwrap_or(1))
}

static EVENT_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        Column { name: "Last Seen", kind: "string", format: "", description: "The time at which the most recent occurrence of this event was recorded.", priority: 0, cell: event_last_seen },
        Column { name: "Type", kind: "string", format: "", description: "Type of this event (Normal, Warning), new types could be added in the future", priority: 0, cell: |o| json!(kh::s(o, "type")) },
        Column { name: "Reason", kind: "string", format: "", description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", priority: 0, cell: |o| json!(kh::s(o, "reason")) },
        Column { name: "Object", kind: "string", format: "", description: "The object that this event is about.", priority: 0, cell: event_object },
        Column { name: "Subobject", kind: "string", format: "", description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", priority: 1, cell: |o| json!(kh::s(&o["involvedObject"], "fieldPath")) },
        Column { name: "Source", kind: "string", format: "", description: "The component reporting this event. Should be a short machine understandable string.", priority: 1, cell: event_source },
        Column { name: "Message", kind: "string", format: "", description: "A human-readable description of the status of this operation.", priority: 0, cell: |o| json!(kh::s(o, "message").trim()) },
        Column { name: "First Seen", kind: "string", format: "", description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", priority: 1, cell: |o| json!(event_first_seen(o)) },
        Column { name: "Count", kind: "string", format: "", description: "The number of times this event has occurred.", priority: 1, cell: event_count },
        Column { name: "Name", kind: "string", format: "name", description: super::strategy::NAME_DESCRIPTION, priority: 1, cell: |o| o["metadata"]["name"].clone() },
    ]
});

/// upstream's legacyValidateEvent for core/v1 requests.
fn validate_event(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ns = super::meta::namespace(obj);
    let io_ns = kh::s(&obj["involvedObject"], "namespace");
    let mismatch = |errs: &mut Vec<FieldError>| {
        errs.push(FieldError::invalid(
            "involvedObject.namespace",
            json!(io_ns),
            "does not match event.namespace",
        ))
    };
    let event_time = obj["eventTime"].as_str().filter(|t| !t.is_empty());
    if event_time.is_none() {
        if io_ns.is_empty() {
            if !ns.is_empty() && ns != "default" {
                mismatch(&mut errs);
            }
        } else if ns != io_ns {
            mismatch(&mut errs);
        }
    } else {
        if io_ns.is_empty() && ns != "default" && ns != "kube-system" {
            mismatch(&mut errs);
        }
        let rc = kh::s(obj, "reportingComponent");
        if rc.is_empty() {
            errs.push(FieldError::required("reportingComponent", ""));
        }
        for m in validation::qualified_name(rc) {
            errs.push(FieldError::invalid("reportingComponent", json!(rc), m));
        }
        for (key, limit) in [("reportingInstance", 128), ("action", 128), ("reason", 128)] {
            let v = kh::s(obj, key);
            if v.is_empty() {
                errs.push(FieldError::required(key, ""));
            }
            if v.len() > limit {
                errs.push(FieldError::invalid(
                    key,
                    json!(""),
                    format!("can have at most {limit} characters"),
                ));
            }
        }
        if kh::s(obj, "message").len() > 1024 {
            errs.push(FieldError::invalid(
                "message",
                json!(""),
                "can have at most 1024 characters",
            ));
        }
    }
    for m in validation::dns1123_subdomain(ns) {
        errs.push(FieldError::invalid("namespace", json!(ns), m));
    }
    errs
}

impl Strategy for EventStrategy {
    /// legacyValidateEvent checks no name rule: only the generic path-segment one applies.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_event(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&EVENT_COLUMNS)
    }
}

// ---- LimitRange ----

pub struct LimitRangeStrategy;

fn validate_limit_resource_name(ty: &str, name: &str, path: &str, errs: &mut Vec<FieldError>) {
    let ok = validate_resource_name(name, path, errs);
    if ty == "Pod" || ty == "Container" {
        if !name.contains('/') {
            let std = ["cpu", "memory", "ephemeral-storage"].contains(&name)
                || name.starts_with("hugepages-");
            if !std {
                errs.push(FieldError::invalid(
                    path,
                    json!(name),
                    "must be a standard resource for containers",
                ));
            }
        } else if ok && name.starts_with("kubernetes.io/") {
            errs.push(FieldError::invalid(
                path,
                json!(name),
                "doesn't follow extended resource name standard",
            ));
        }
    }
}

fn validate_limit_range(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut types: Vec<String> = Vec::new();
    for (i, limit) in kh::items(&obj["spec"]["limits"]).iter().enumerate() {
        let ip = format!("spec.limits[{i}]");
        let ty = kh::s(limit, "type");
        let before = errs.len();
        for m in validation::qualified_name(ty) {
            errs.push(FieldError::invalid(format!("{ip}.type"), json!(ty), m));
        }
        if errs.len() == before
            && !ty.contains('/')
            && !["Pod", "Container", "PersistentVolumeClaim"].contains(&ty)
        {
            errs.push(FieldError::invalid(
                format!("{ip}.type"),
                json!(ty),
                "must be a standard limit type or fully qualified",
            ));
        }
        if types.iter().any(|t| t == ty) {
            errs.push(FieldError::duplicate(format!("{ip}.type"), json!(ty)));
        }
        types.push(ty.to_string());

        let mut maps: std::collections::BTreeMap<&str, Map<String, Value>> = Default::default();
        let mut keys: std::collections::BTreeSet<String> = Default::default();
        let mut collect = |field: &'static str, errs: &mut Vec<FieldError>| {
            let m = limit[field].as_object().cloned().unwrap_or_default();
            for k in m.keys() {
                validate_limit_resource_name(ty, k, &format!("{ip}.{field}[{k}]"), errs);
                keys.insert(k.clone());
            }
            maps.insert(field, m);
        };
        collect("max", &mut errs);
        collect("min", &mut errs);
        if ty == "Pod" {
            for f in ["default", "defaultRequest"] {
                if limit[f].as_object().is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        format!("{ip}.{f}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            collect("default", &mut errs);
            collect("defaultRequest", &mut errs);
        }
        if ty == "PersistentVolumeClaim"
            && limit["min"]["storage"].is_null()
            && limit["max"]["storage"].is_null()
        {
            errs.push(FieldError::required(
                format!("{ip}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        collect("maxLimitRequestRatio", &mut errs);
        for k in &keys {
            let get = |f: &str| maps.get(f).and_then(|m| m.get(k)).cloned();
            let qv = |v: &Option<Value>| v.as_ref().and_then(kh::quantity);
            let qs = |v: &Option<Value>| v.as_ref().map(kh::quantity_str).unwrap_or_default();
            let (min, max, def, req, ratio) = (
                get("min"),
                get("max"),
                get("default"),
                get("defaultRequest"),
                get("maxLimitRequestRatio"),
            );
            let gt = |a: &Option<Value>, b: &Option<Value>| match (qv(a), qv(b)) {
                (Some(x), Some(y)) => x > y,
                _ => false,
            };
            let mut push = |field: &str, v: &Option<Value>, msg: String| {
                errs.push(FieldError::invalid(
                    format!("{ip}.{field}[{k}]"),
                    json!(qs(v)),
                    msg,
                ))
            };
            if gt(&min, &max) {
                push(
                    "min",
                    &min,
                    format!(
                        "min value {} is greater than max value {}",
                        qs(&min),
                        qs(&max)
                    ),
                );
            }
            if gt(&min, &req) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "min value {} is greater than default request value {}",
                        qs(&min),
                        qs(&req)
                    ),
                );
            }
            if gt(&req, &max) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "default request value {} is greater than max value {}",
                        qs(&req),
                        qs(&max)
                    ),
                );
            }
            if gt(&req, &def) {
                push(
                    "defaultRequest",
                    &req,
                    format!(
                        "default request value {} is greater than default limit value {}",
                        qs(&req),
                        qs(&def)
                    ),
                );
            }
            if gt(&min, &def) {
                push(
                    "default",
                    &min,
                    format!(
                        "min value {} is greater than default value {}",
                        qs(&min),
                        qs(&def)
                    ),
                );
            }
            if gt(&def, &max) {
                push(
                    "default",
                    &max,
                    format!(
                        "default value {} is greater than max value {}",
                        qs(&def),
                        qs(&max)
                    ),
                );
            }
            if qv(&ratio).is_some_and(|r| r < 1_000_000_000) {
                push(
                    "maxLimitRequestRatio",
                    &ratio,
                    format!("ratio {} is less than 1", qs(&ratio)),
                );
            }
            if let (Some(r), Some(mn), Some(mx)) = (qv(&ratio), qv(&min), qv(&max)) {
                if mn > 0 {
                    let limit = mx as f64 / mn as f64;
                    if r as f64 / 1e9 > limit {
                        push(
                            "maxLimitRequestRatio",
                            &ratio,
                            format!("ratio {} is greater than max/min = {limit:.6}", qs(&ratio)),
                        );
                    }
                }
            }
            let overcommit = !(k.starts_with("hugepages-")
                || k.contains('/') && !k.starts_with("kubernetes.io/"));
            if !overcommit {
                if let (Some(d), Some(r)) = (qv(&def), qv(&req)) {
                    if d != r {
                        push(
                            "defaultRequest",
                            &req,
                            format!(
                                "default value {} must equal to defaultRequest value {} in {k}",
                                qs(&def),
                                qs(&req)
                            ),
                        );
                    }
                }
            }
        }
    }
    errs
}

impl Strategy for LimitRangeStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn default(&self, obj: &mut Value) {
        let Some(limits) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut("limits"))
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        for item in limits.iter_mut().filter_map(Value::as_object_mut) {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            let max = item
                .get("max")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let min = item
                .get("min")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut def = item
                .get("default")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut req = item
                .get("defaultRequest")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for (k, v) in &max {
                def.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in &def {
                req.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in &min {
                req.entry(k.clone()).or_insert_with(|| v.clone());
            }
            if !def.is_empty() {
                item.insert("default".into(), Value::Object(def));
            }
            if !req.is_empty() {
                item.insert("defaultRequest".into(), Value::Object(req));
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_limit_range(obj)
    }
}

// ---- ResourceQuota ----

pub struct ResourceQuotaStrategy;

const QUOTA_SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

fn validate_quota_resources(m: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(m) = m.as_object() {
        for (k, v) in m {
            let p = format!("{path}[{k}]");
            validate_resource_name(k, &p, errs);
            if !k.contains('/')
                && !STANDARD_QUOTA_RESOURCES.contains(&k.as_str())
                && !is_hugepages(k)
            {
                errs.push(FieldError::invalid(
                    p.clone(),
                    json!(k),
                    "must be a standard resource for quota",
                ));
            }
            resource_quantity_value(k, v, &p, errs);
        }
    }
}

fn validate_resource_quota(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    validate_quota_resources(&spec["hard"], "spec.hard", &mut errs);
    let scopes = kh::strings(&spec["scopes"]);
    for sc in &scopes {
        if !QUOTA_SCOPES.contains(&sc.as_str()) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                spec["scopes"].clone(),
                "unsupported scope",
            ));
        }
    }
    let has = |s: &str| scopes.iter().any(|x| x == s);
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if has(a) && has(b) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                spec["scopes"].clone(),
                "conflicting scopes",
            ));
        }
    }
    for (i, e) in kh::items(&spec["scopeSelector"]["matchExpressions"])
        .iter()
        .enumerate()
    {
        let p = format!("spec.scopeSelector.matchExpressions[{i}]");
        let sn = kh::s(e, "scopeName");
        if !QUOTA_SCOPES.contains(&sn) {
            errs.push(FieldError::invalid(
                format!("{p}.scopeName"),
                json!(sn),
                "unsupported scope",
            ));
        }
        let values = kh::strings(&e["values"]);
        match kh::s(e, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{p}.values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::invalid(
                        format!("{p}.values"),
                        e["values"].clone(),
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                format!("{p}.operator"),
                json!(other),
                "not a valid selector operator",
            )),
        }
    }
    validate_quota_resources(&obj["status"]["hard"], "status.hard", &mut errs);
    validate_quota_resources(&obj["status"]["used"], "status.used", &mut errs);
    errs
}

/// The Request and Limit cells: `resource: used/hard`, limits.* in the second.
fn quota_cells(o: &Value) -> (String, String) {
    let hard = o["status"]["hard"].as_object().cloned().unwrap_or_default();
    let (mut req, mut lim) = (Vec::new(), Vec::new());
    for (r, h) in &hard {
        let used = o["status"]["used"]
            .get(r.as_str())
            .map(kh::quantity_str)
            .unwrap_or_else(|| "0".into());
        let text = format!("{r}: {used}/{}", kh::quantity_str(h));
        if r.split('.').next() == Some("limits") && r.contains('.') {
            lim.push(text);
        } else {
            req.push(text);
        }
    }
    (req.join(", "), lim.join(", "))
}

static QUOTA_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Request", kind: "string", format: "", description: "Request represents a minimum amount of cpu/memory that a container may consume.", priority: 0, cell: |o| json!(quota_cells(o).0) },
        Column { name: "Limit", kind: "string", format: "", description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", priority: 0, cell: |o| json!(quota_cells(o).1) },
        age_column(),
    ]
});

impl Strategy for ResourceQuotaStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_resource_quota(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let set = |v: &Value| {
            let mut s = kh::strings(&v["spec"]["scopes"]);
            s.sort();
            s.dedup();
            s
        };
        if set(new) != set(old) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                new["spec"]["scopes"].clone(),
                "field is immutable",
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&QUOTA_COLUMNS)
    }
}

// ---- Endpoints ----

pub struct EndpointsStrategy;

/// upstream's ValidateNonSpecialIP.
fn non_special_ip(ip: &str, path: &str, errs: &mut Vec<FieldError>) {
    let Some(addr) = kh::parse_ip(ip) else {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "must be a valid IP address",
        ));
        return;
    };
    let (unspecified, loopback, link_local, ll_multicast) = match addr {
        std::net::IpAddr::V4(v) => (
            v.is_unspecified(),
            v.is_loopback(),
            v.is_link_local(),
            v.octets()[..3] == [224, 0, 0],
        ),
        std::net::IpAddr::V6(v) => {
            let seg = v.segments();
            (
                v.is_unspecified(),
                v.is_loopback(),
                seg[0] & 0xffc0 == 0xfe80,
                seg[0] & 0xff0f == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            format!("may not be unspecified ({ip})"),
        ));
    }
    if loopback {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if ll_multicast {
        errs.push(FieldError::invalid(
            path,
            json!(ip),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

fn validate_endpoint_address(a: &Value, path: &str, special_ok: bool, errs: &mut Vec<FieldError>) {
    let ip = kh::s(a, "ip");
    if kh::parse_ip(ip).is_none() {
        errs.push(FieldError::invalid(
            format!("{path}.ip"),
            json!(ip),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    if let Some(h) = a["hostname"].as_str().filter(|h| !h.is_empty()) {
        for m in validation::dns1123_label(h) {
            errs.push(FieldError::invalid(format!("{path}.hostname"), json!(h), m));
        }
    }
    if let Some(n) = a["nodeName"].as_str() {
        for m in validation::dns1123_subdomain(n) {
            errs.push(FieldError::invalid(format!("{path}.nodeName"), json!(n), m));
        }
    }
    if !special_ok {
        non_special_ip(ip, &format!("{path}.ip"), errs);
    }
}

fn validate_endpoints(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // kapi's own `default/kubernetes` endpoints carry the advertise address,
    // which is a loopback one when kapi serves on 127.0.0.1.
    let special_ok =
        super::meta::namespace(obj) == "default" && super::meta::name(obj) == "kubernetes";
    for (i, ss) in kh::items(&obj["subsets"]).iter().enumerate() {
        let p = format!("subsets[{i}]");
        let (ready, not_ready) = (
            kh::items(&ss["addresses"]),
            kh::items(&ss["notReadyAddresses"]),
        );
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                p.clone(),
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, a) in ready.iter().enumerate() {
            validate_endpoint_address(a, &format!("{p}.addresses[{j}]"), special_ok, &mut errs);
        }
        for (j, a) in not_ready.iter().enumerate() {
            validate_endpoint_address(
                a,
                &format!("{p}.notReadyAddresses[{j}]"),
                special_ok,
                &mut errs,
            );
        }
        let ports = kh::items(&ss["ports"]);
        for (j, port) in ports.iter().enumerate() {
            let pp = format!("{p}.ports[{j}]");
            let name = kh::s(port, "name");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(format!("{pp}.name"), ""));
            } else if !name.is_empty() {
                for m in validation::dns1123_label(name) {
                    errs.push(FieldError::invalid(format!("{pp}.name"), json!(name), m));
                }
            }
            let n = port["port"].as_i64().unwrap_or(0);
            for m in kh::port_num(n) {
                errs.push(FieldError::invalid(format!("{pp}.port"), json!(n), m));
            }
            match kh::s(port, "protocol") {
                "" => errs.push(FieldError::required(format!("{pp}.protocol"), "")),
                "TCP" | "UDP" | "SCTP" => {}
                other => errs.push(FieldError::not_supported(
                    format!("{pp}.protocol"),
                    json!(other),
                    &["SCTP", "TCP", "UDP"],
                )),
            }
            if let Some(ap) = port["appProtocol"].as_str() {
                for m in validation::qualified_name(ap) {
                    errs.push(FieldError::invalid(
                        format!("{pp}.appProtocol"),
                        json!(ap),
                        m,
                    ));
                }
            }
        }
    }
    errs
}

/// upstream's formatEndpoints.
fn endpoints_cell(o: &Value) -> Value {
    let subsets = kh::items(&o["subsets"]);
    if subsets.is_empty() {
        return json!("<none>");
    }
    let max = 3;
    let (mut list, mut more, mut count) = (Vec::<String>::new(), false, 0usize);
    for ss in &subsets {
        let addrs = kh::items(&ss["addresses"]);
        let ports = kh::items(&ss["ports"]);
        if ports.is_empty() {
            count += addrs.len();
            for a in &addrs {
                if list.len() == max {
                    more = true;
                    break;
                }
                list.push(kh::s(a, "ip").to_string());
            }
            continue;
        }
        for port in &ports {
            count += addrs.len();
            for a in &addrs {
                if list.len() == max {
                    more = true;
                    break;
                }
                let ip = kh::s(a, "ip");
                let pn = port["port"].as_i64().unwrap_or(0);
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{pn}")
                } else {
                    format!("{ip}:{pn}")
                });
            }
        }
    }
    let ret = list.join(",");
    json!(if more {
        format!("{ret} + {} more...", count - max)
    } else {
        ret
    })
}

static ENDPOINTS_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Endpoints", kind: "string", format: "", description: "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.", priority: 0, cell: endpoints_cell },
        age_column(),
    ]
});

impl Strategy for EndpointsStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) {
            for ss in subsets {
                if let Some(ports) = ss.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        if p.get("protocol")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .is_empty()
                        {
                            p.insert("protocol".into(), json!("TCP"));
                        }
                    }
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_endpoints(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&ENDPOINTS_COLUMNS)
    }
}

// ---- ReplicationController ----

pub struct ReplicationControllerStrategy;

fn labels_match(selector: &Value, labels: &Value) -> bool {
    selector.as_object().is_none_or(|sel| {
        sel.iter()
            .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str())
    })
}

fn validate_rc(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    kh::nonnegative("spec.minReadySeconds", &spec["minReadySeconds"], &mut errs);
    let sel = &spec["selector"];
    let empty = sel.as_object().is_none_or(|m| m.is_empty());
    if empty {
        errs.push(FieldError::required("spec.selector", ""));
    }
    kh::nonnegative("spec.replicas", &spec["replicas"], &mut errs);
    let t = &spec["template"];
    if t.is_null() {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    }
    let labels = &t["metadata"]["labels"];
    if !empty && !labels_match(sel, labels) {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            if labels.is_null() {
                json!({})
            } else {
                labels.clone()
            },
            "`selector` does not match template `labels`",
        ));
    }
    kh::validate_labels(labels, "spec.template.metadata.labels", &mut errs);
    errs.extend(validate_pod_spec(&t["spec"], "spec.template.spec"));
    let rp = t["spec"]["restartPolicy"].as_str().unwrap_or("");
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            json!(rp),
            &["Always"],
        ));
    }
    if let Some(ads) = t["spec"]["activeDeadlineSeconds"].as_i64() {
        errs.push(FieldError::invalid(
            "spec.template.spec.activeDeadlineSeconds",
            json!(ads),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}

static RC_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column { name: "Desired", kind: "integer", format: "", description: "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", priority: 0, cell: |o| json!(o["spec"]["replicas"].as_i64().unwrap_or(0)) },
        Column { name: "Current", kind: "integer", format: "", description: "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", priority: 0, cell: |o| json!(o["status"]["replicas"].as_i64().unwrap_or(0)) },
        Column { name: "Ready", kind: "integer", format: "", description: "The number of ready replicas for this replication controller.", priority: 0, cell: |o| json!(o["status"]["readyReplicas"].as_i64().unwrap_or(0)) },
        age_column(),
        Column { name: "Containers", kind: "string", format: "", description: "Names of each container in the template.", priority: 1, cell: |o| json!(kh::container_cells(&o["spec"]["template"]["spec"]).0) },
        Column { name: "Images", kind: "string", format: "", description: "Images referenced by each container in the template.", priority: 1, cell: |o| json!(kh::container_cells(&o["spec"]["template"]["spec"]).1) },
        Column { name: "Selector", kind: "string", format: "", description: "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", priority: 1, cell: |o| json!(kh::format_labels(&o["spec"]["selector"])) },
    ]
});

impl Strategy for ReplicationControllerStrategy {
    fn default(&self, obj: &mut Value) {
        let labels = obj["spec"]["template"]["metadata"]["labels"].clone();
        if labels.is_object() {
            let empty = |v: &Value| v.as_object().is_none_or(|m| m.is_empty());
            if empty(&obj["spec"]["selector"]) {
                if let Some(spec) = obj_mut(obj, "spec") {
                    spec.insert("selector".into(), labels.clone());
                }
            }
            if empty(&obj["metadata"]["labels"]) {
                super::meta::meta_mut(obj).insert("labels".into(), labels);
            }
        }
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        set_default(spec, "replicas", json!(1));
        if let Some(ps) = spec
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            default_pod_spec(ps);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"replicas": 0}));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_rc(obj)
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&RC_COLUMNS)
    }
}

// ---- PodTemplate ----

pub struct PodTemplateStrategy;

static POD_TEMPLATE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Containers",
            kind: "string",
            format: "",
            description: "Names of each container in the template.",
            priority: 0,
            cell: |o| json!(kh::container_cells(&o["template"]["spec"]).0),
        },
        Column {
            name: "Images",
            kind: "string",
            format: "",
            description: "Images referenced by each container in the template.",
            priority: 0,
            cell: |o| json!(kh::container_cells(&o["template"]["spec"]).1),
        },
        Column {
            name: "Pod Labels",
            kind: "string",
            format: "",
            description: "The labels for the pod template.",
            priority: 0,
            cell: |o| json!(kh::format_labels(&o["template"]["metadata"]["labels"])),
        },
    ]
});

impl Strategy for PodTemplateStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(ps) = obj
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            default_pod_spec(ps);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        kh::validate_labels(
            &obj["template"]["metadata"]["labels"],
            "template.metadata.labels",
            &mut errs,
        );
        errs.extend(validate_pod_spec(&obj["template"]["spec"], "template.spec"));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&POD_TEMPLATE_COLUMNS)
    }
}

#[cfg(test)]
mod kinds_tests {
    use super::*;

    fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    fn cells(cols: &[Column], o: &Value) -> Vec<Value> {
        cols.iter().map(|c| (c.cell)(o)).collect()
    }

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

    fn node() -> Value {
        json!({"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"podCIDRs": ["10.244.0.0/24"]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://2.0", "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}})
    }

    #[test]
    fn node_keeps_status_and_prints() {
        let mut o = node();
        NodeStrategy.default(&mut o);
        assert!(NodeStrategy.keeps_status_on_create());
        NodeStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"]["allocatable"], o["status"]["capacity"]);
        assert!(NodeStrategy.validate(&o).is_empty());
        let c = cells(&NODE_COLUMNS, &o);
        assert_eq!(c[1], "Ready");
        assert_eq!(c[2], "control-plane,worker");
        assert_eq!(c[4], "v1.34.0");
        assert_eq!(c[5], "10.0.0.5");
        assert_eq!(c[6], "<none>");
        assert_eq!(c[9], "containerd://2.0");
        o["spec"]["unschedulable"] = json!(true);
        o["status"]["conditions"][0]["status"] = json!("Unknown");
        assert_eq!(node_status_cell(&o), "NotReady,SchedulingDisabled");
        assert_eq!(node_status_cell(&json!({})), "Unknown");
        assert_eq!(node_roles_cell(&json!({})), "<none>");
        assert_eq!(node_info(&json!({}), "osImage"), "<unknown>");

        let mut upd = o.clone();
        NodeStrategy.default(&mut upd);
        NodeStrategy.prepare_for_update(&mut upd, &o);
        upd["spec"]["podCIDRs"] = json!(["10.244.1.0/24"]);
        upd["spec"]["taints"] = json!([{"key": "a", "effect": "Sometimes"}]);
        assert_eq!(
            msgs(&NodeStrategy.validate_update(&upd, &o)),
            [
                ("spec.podCIDRs[0]".to_string(), "Forbidden: node updates may not change podCIDR except from \"\" to valid".to_string()),
                ("metadata.taints[0].effect".into(), "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"".into()),
            ]
        );
    }

    #[test]
    fn events() {
        let ev = json!({"metadata": {"name": "e1", "namespace": "default"}, "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "fieldPath": "spec.containers{web}"},
            "reason": "Started", "message": " Started container web ", "type": "Normal", "count": 3, "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2024-01-01T00:00:00Z"});
        assert!(EventStrategy.validate(&ev).is_empty());
        assert_eq!(EventStrategy.name_rule(), NameRule::PathSegment);
        let c = cells(&EVENT_COLUMNS, &ev);
        assert_eq!(c[1], "Normal");
        assert_eq!(c[2], "Started");
        assert_eq!(c[3], "pod/web");
        assert_eq!(c[4], "spec.containers{web}");
        assert_eq!(c[5], "kubelet, n1");
        assert_eq!(c[6], "Started container web");
        assert_eq!(c[8], 3);
        assert_eq!(c[9], "e1");
        assert_eq!(c[0], c[7]);
        let names: Vec<&str> = EVENT_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
        assert_eq!(event_count(&json!({})), 1);
        assert_eq!(event_last_seen(&json!({})), "<unknown>");

        let mut bad = ev.clone();
        bad["involvedObject"]["namespace"] = json!("other");
        assert_eq!(
            msgs(&EventStrategy.validate(&bad)),
            [(
                "involvedObject.namespace".to_string(),
                "Invalid value: \"other\": does not match event.namespace".to_string()
            )]
        );
        let new_style = json!({"metadata": {"namespace": "team"}, "eventTime": "2024-01-01T00:00:00.000000Z", "involvedObject": {"namespace": "team"}});
        let fields: Vec<String> = EventStrategy
            .validate(&new_style)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        // As upstream: Required, then the qualified-name check of the empty value.
        assert_eq!(
            fields,
            [
                "reportingComponent",
                "reportingComponent",
                "reportingInstance",
                "action",
                "reason"
            ]
        );
    }

    #[test]
    fn limit_ranges() {
        let mut o = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}});
        LimitRangeStrategy.default(&mut o);
        let item = &o["spec"]["limits"][0];
        assert_eq!(item["default"], json!({"cpu": "2"}));
        assert_eq!(
            item["defaultRequest"],
            json!({"cpu": "2", "memory": "64Mi"})
        );
        assert!(LimitRangeStrategy.validate(&o).is_empty());
        let bad = json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "Widget"},
            {"type": "PersistentVolumeClaim"},
            {"type": "Container", "max": {"gpus": "1"}}]}});
        assert_eq!(
            msgs(&LimitRangeStrategy.validate(&bad)),
            [
                ("spec.limits[0].min[cpu]".to_string(), "Invalid value: \"2\": min value 2 is greater than max value 1".to_string()),
                ("spec.limits[1].default".into(), "Forbidden: may not be specified when `type` is 'Pod'".into()),
                ("spec.limits[2].type".into(), "Invalid value: \"Widget\": must be a standard limit type or fully qualified".into()),
                ("spec.limits[3].limits".into(), "Required value: either minimum or maximum storage value is required, but neither was provided".into()),
                ("spec.limits[4].type".into(), "Duplicate value: \"Container\"".into()),
                ("spec.limits[4].max[gpus]".into(), "Invalid value: \"gpus\": must be a standard resource type or fully qualified".into()),
                ("spec.limits[4].max[gpus]".into(), "Invalid value: \"gpus\": must be a standard resource for containers".into()),
            ]
        );
    }

    #[test]
    fn resource_quotas() {
        let mut o = json!({"spec": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"}}, "status": {"hard": {"x": "1"}}});
        ResourceQuotaStrategy.prepare_for_create(&mut o);
        assert_eq!(o["status"], json!({}));
        assert!(ResourceQuotaStrategy.validate(&o).is_empty());
        let bad = json!({"spec": {"hard": {"pods": "1.5", "foo": "1", "cpu": "-1"}, "scopes": ["BestEffort", "NotBestEffort"]}});
        assert_eq!(
            msgs(&ResourceQuotaStrategy.validate(&bad)),
            [
                (
                    "spec.hard[cpu]".to_string(),
                    "Invalid value: \"-1\": must be greater than or equal to 0".to_string()
                ),
                (
                    "spec.hard[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource type or fully qualified"
                        .into()
                ),
                (
                    "spec.hard[foo]".into(),
                    "Invalid value: \"foo\": must be a standard resource for quota".into()
                ),
                (
                    "spec.hard[pods]".into(),
                    "Invalid value: \"1.5\": must be an integer".into()
                ),
                (
                    "spec.scopes".into(),
                    "Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes".into()
                ),
            ]
        );
        let with_status = json!({"status": {"hard": {"pods": "10", "limits.cpu": "2", "cpu": "1"}, "used": {"pods": "3"}}});
        let c = cells(&QUOTA_COLUMNS, &with_status);
        assert_eq!(c[1], "cpu: 0/1, pods: 3/10");
        assert_eq!(c[2], "limits.cpu: 0/2");
        let mut new = o.clone();
        new["spec"]["scopes"] = json!(["BestEffort"]);
        assert_eq!(
            ResourceQuotaStrategy.validate_update(&new, &o)[0].field,
            "spec.scopes"
        );
    }

    #[test]
    fn endpoints() {
        let mut o = json!({"metadata": {"name": "web", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443, "name": "https"}]}]});
        EndpointsStrategy.default(&mut o);
        assert_eq!(o["subsets"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(
            msgs(&EndpointsStrategy.validate(&o)),
            [(
                "subsets[0].ports[0].name".to_string(),
                "Required value".to_string()
            )]
        );
        assert_eq!(
            endpoints_cell(&o),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(endpoints_cell(&json!({})), "<none>");
        let bad = json!({"metadata": {"name": "x", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}, {"ip": "nope"}]}, {}]});
        assert_eq!(
            msgs(&EndpointsStrategy.validate(&bad)),
            [
                ("subsets[0].addresses[0].ip".to_string(), "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)".to_string()),
                ("subsets[0].addresses[1].ip".into(), "Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()),
                ("subsets[0].addresses[1].ip".into(), "Invalid value: \"nope\": must be a valid IP address".into()),
                ("subsets[1]".into(), "Required value: must specify `addresses` or `notReadyAddresses`".into()),
            ]
        );
        let own = json!({"metadata": {"name": "kubernetes", "namespace": "default"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]});
        assert!(EndpointsStrategy.validate(&own).is_empty());
    }

    #[test]
    fn replication_controllers() {
        let mut o = json!({"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        ReplicationControllerStrategy.default(&mut o);
        ReplicationControllerStrategy.prepare_for_create(&mut o);
        assert_eq!(o["spec"]["replicas"], 1);
        assert_eq!(o["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(o["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(o["status"], json!({"replicas": 0}));
        assert!(ReplicationControllerStrategy.validate(&o).is_empty());
        let c = cells(&RC_COLUMNS, &o);
        assert_eq!(c[1], 1);
        assert_eq!(c[2], 0);
        assert_eq!(c[5], "web");
        assert_eq!(c[6], "nginx");
        assert_eq!(c[7], "app=web");
        let mut bad = o.clone();
        bad["spec"]["selector"] = json!({"app": "db"});
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            msgs(&ReplicationControllerStrategy.validate(&bad)),
            [
                (
                    "spec.template.metadata.labels".to_string(),
                    "Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"
                        .to_string()
                ),
                (
                    "spec.template.spec.restartPolicy".into(),
                    "Unsupported value: \"Never\": supported values: \"Always\"".into()
                ),
            ]
        );
        let none = json!({"spec": {"template": {"spec": {"restartPolicy": "Always", "containers": [{"name": "a", "image": "b"}]}}}});
        assert_eq!(
            ReplicationControllerStrategy.validate(&none)[0].field,
            "spec.selector"
        );
    }

    #[test]
    fn pod_templates() {
        let mut o = json!({"template": {"metadata": {"labels": {"b": "2", "a": "1"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}});
        PodTemplateStrategy.default(&mut o);
        assert_eq!(o["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(
            o["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(PodTemplateStrategy.validate(&o).is_empty());
        let c = cells(&POD_TEMPLATE_COLUMNS, &o);
        assert_eq!(c[1], "c");
        assert_eq!(c[2], "busybox:1");
        assert_eq!(c[3], "a=1,b=2");
        let bad = json!({"template": {"spec": {}}});
        assert_eq!(
            PodTemplateStrategy.validate(&bad)[0].field,
            "template.spec.containers"
        );
    }
}

/// componentstatuses: computed on request, never written; only the table
/// upstream prints (printComponentStatus) is its own.
pub struct ComponentStatusStrategy;

fn healthy_condition(o: &Value) -> &Value {
    o["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Healthy"))
        .unwrap_or(&Value::Null)
}

static COMPONENT_STATUS_COLUMNS: std::sync::LazyLock<Vec<Column>> =
    std::sync::LazyLock::new(|| {
        vec![
            name_column(),
            Column {
                name: "Status",
                kind: "string",
                format: "",
                description: "Status of the component conditions",
                priority: 0,
                cell: |o| {
                    json!(match healthy_condition(o)["status"].as_str() {
                        Some("True") => "Healthy",
                        Some("False") => "Unhealthy",
                        _ => "Unknown",
                    })
                },
            },
            Column {
                name: "Message",
                kind: "string",
                format: "",
                description: "Message of the component conditions",
                priority: 0,
                cell: |o| json!(healthy_condition(o)["message"].as_str().unwrap_or("")),
            },
            Column {
                name: "Error",
                kind: "string",
                format: "",
                description: "Error of the component conditions",
                priority: 0,
                cell: |o| json!(healthy_condition(o)["error"].as_str().unwrap_or("")),
            },
        ]
    });

impl Strategy for ComponentStatusStrategy {
    fn columns(&self) -> Option<&'static [Column]> {
        Some(&COMPONENT_STATUS_COLUMNS)
    }
}
