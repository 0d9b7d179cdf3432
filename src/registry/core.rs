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
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            set_default(m, "spec", json!({}));
        }
        if let Some(spec) = obj_mut(obj, "spec") {
            set_default(spec, "finalizers", json!(["kubernetes"]));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), json!({"phase": "Active"}));
        }
        // The namespace's name is also a label, as upstream adds it.
        let name = super::meta::name(obj).to_string();
        let meta = super::meta::meta_mut(obj);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
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

/// upstream's SetDefaults_PodSpec and container defaults; shared by pod templates.
pub fn default_pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    set_default(spec, "enableServiceLinks", json!(true));
    for key in ["containers", "initContainers"] {
        if let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
}

/// upstream's ValidatePodSpec for the fields people get wrong.
pub fn validate_pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let mut names = std::collections::HashSet::new();
    for (key, list) in [
        (
            "initContainers",
            spec["initContainers"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        ),
        ("containers", containers),
    ] {
        for (i, c) in list.iter().enumerate() {
            let cpath = format!("{path}.{key}[{i}]");
            let name = c["name"].as_str().unwrap_or("");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{cpath}.name"), ""));
            } else {
                for m in validation::dns1123_label(name) {
                    errs.push(FieldError::invalid(format!("{cpath}.name"), json!(name), m));
                }
                if !names.insert(name.to_string()) {
                    errs.push(FieldError::duplicate(format!("{cpath}.name"), json!(name)));
                }
            }
            if c["image"].as_str().unwrap_or("").trim().is_empty() {
                errs.push(FieldError::required(format!("{cpath}.image"), ""));
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

fn pod_restarts(o: &Value) -> Value {
    json!(o["status"]["containerStatuses"].as_array().map_or(0, |a| a
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum::<i64>()))
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

/// upstream's QoS class from requests and limits.
fn qos_class(spec: &Value) -> &'static str {
    let cs = spec["containers"].as_array().cloned().unwrap_or_default();
    let mut any = false;
    let mut guaranteed = !cs.is_empty();
    for c in &cs {
        let req = c["resources"]["requests"].as_object();
        let lim = c["resources"]["limits"].as_object();
        if req.is_some_and(|m| !m.is_empty()) || lim.is_some_and(|m| !m.is_empty()) {
            any = true;
        }
        let has_both = |r: &str| {
            lim.and_then(|m| m.get(r)).is_some()
                && req.is_none_or(|m| m.get(r).is_none() || m.get(r) == lim.and_then(|l| l.get(r)))
        };
        if !(has_both("cpu") && has_both("memory")) {
            guaranteed = false;
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

impl Strategy for PodStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj_mut(obj, "spec") {
            default_pod_spec(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let qos = qos_class(&obj["spec"]);
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
