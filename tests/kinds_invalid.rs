//! Every built-in kind the server stores, checked against upstream's
//! validation: the test walks aggregated discovery (`/api` and `/apis`) and,
//! for every resource whose verbs include `create` (the reviews and
//! bindings, which store nothing, aside), sends
//!
//! - one invalid object: the shared valid manifest (tests/common/manifests.rs)
//!   with one field upstream validates made wrong. The answer must be
//!   upstream's 422 (`reason: Invalid`) with upstream's field path in
//!   `details.causes[].field` and upstream's wording, as
//!   k8s.io/kubernetes pkg/apis/<group>/validation words it (v1.34);
//! - the valid object: 201, and read back, every field sent is there with
//!   the value sent (fields the server sets or defaults may be added).
//!
//! A served kind the table below does not know is a failure: a kind added
//! to kapi must be added here. Every failure is collected and reported at
//! the end.

mod common;

use common::manifests::{csr_pem_base64, manifest, resources_of, Resource, AGG_V2, NS};
use common::{runtime, Kapi};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const JSON: &str = "application/json";
/// Requests in flight at once.
const PARALLEL: usize = 8;

/// The kinds that are created and not stored: reviews and bindings.
const NOT_STORED: &[&str] = &[
    "TokenReview",
    "SubjectAccessReview",
    "LocalSubjectAccessReview",
    "SelfSubjectAccessReview",
    "SelfSubjectRulesReview",
    "SelfSubjectReview",
    "Binding",
];

/// The built-in kinds with create: the walk must see at least these many.
const MIN_KINDS: usize = 50;

/// Upstream's rejection of one invalid variant of a kind's valid manifest.
struct Invalid {
    /// What is changed: (JSON pointer into the manifest, the new value).
    /// Objects on the way are made; a null removes the field.
    edits: Vec<(&'static str, Value)>,
    /// The cause's `field`.
    field: &'static str,
    /// How upstream's message for that cause begins, field path included
    /// (`spec.replicas: Invalid value: -1: must be ...`).
    message: &'static str,
}

fn inv(edits: Vec<(&'static str, Value)>, field: &'static str, message: &'static str) -> Invalid {
    Invalid {
        edits,
        field,
        message,
    }
}

/// The invalid variant of each kind, with upstream's answer (v1.34,
/// k8s.io/kubernetes pkg/apis/<group>/validation unless noted). None: a
/// kind this table does not know.
fn invalid(r: &Resource) -> Option<Invalid> {
    let c = match (r.group.as_str(), r.plural.as_str()) {
        // ValidateConfigMap: IsConfigMapKey on every data key.
        ("", "configmaps") => inv(
            vec![("/data/bad key!", json!("x"))],
            "data[bad key!]",
            "data[bad key!]: Invalid value: \"bad key!\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
        // validateEndpointPort: IsValidPortNum.
        ("", "endpoints") => inv(
            vec![("/subsets/0/ports/0/port", json!(70000))],
            "subsets[0].ports[0].port",
            "subsets[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        // ValidateEventCreate (legacyValidateEvent): the involved object's
        // namespace is the event's.
        ("", "events") => inv(
            vec![("/involvedObject/namespace", json!("elsewhere"))],
            "involvedObject.namespace",
            "involvedObject.namespace: Invalid value: \"elsewhere\": does not match event.namespace",
        ),
        // ValidateLimitRange: validateLimitRangeTypeName.
        ("", "limitranges") => inv(
            vec![("/spec/limits/0/type", json!("Bogus"))],
            "spec.limits[0].type",
            "spec.limits[0].type: Invalid value: \"Bogus\": must be a standard limit type or fully qualified",
        ),
        // ValidateNamespace: validateFinalizerName on spec.finalizers (the
        // path carries no index), a qualified name that, without a domain,
        // is a standard finalizer.
        ("", "namespaces") => inv(
            vec![("/spec/finalizers", json!(["bad finalizer!"]))],
            "spec.finalizers",
            "spec.finalizers: Invalid value: \"bad finalizer!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        // ValidateNode: every taint's effect (validateNodeTaints), which
        // upstream reports under metadata.taints, not spec.taints.
        ("", "nodes") => inv(
            vec![(
                "/spec/taints",
                json!([{"key": "walk", "value": "x", "effect": "Bogus"}]),
            )],
            "metadata.taints[0].effect",
            "metadata.taints[0].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
        ),
        // ValidatePersistentVolumeClaimSpec: the access modes.
        ("", "persistentvolumeclaims") => inv(
            vec![("/spec/accessModes", json!(["Bogus"]))],
            "spec.accessModes",
            "spec.accessModes: Unsupported value: \"Bogus\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
        ),
        // ValidatePersistentVolumeSpec: the reclaim policy.
        ("", "persistentvolumes") => inv(
            vec![("/spec/persistentVolumeReclaimPolicy", json!("Bogus"))],
            "spec.persistentVolumeReclaimPolicy",
            "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Bogus\": supported values: \"Delete\", \"Recycle\", \"Retain\"",
        ),
        // validateContainerPorts: IsValidPortNum.
        ("", "pods") => inv(
            vec![("/spec/containers/0/ports/0/containerPort", json!(70000))],
            "spec.containers[0].ports[0].containerPort",
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        // validateContainers: the name is a DNS-1123 label.
        ("", "podtemplates") => inv(
            vec![("/template/spec/containers/0/name", json!("Bad_Name"))],
            "template.spec.containers[0].name",
            "template.spec.containers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of",
        ),
        // ValidateReplicationControllerSpec: ValidateNonnegativeField.
        ("", "replicationcontrollers") => inv(
            vec![("/spec/replicas", json!(-1))],
            "spec.replicas",
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        // ValidateResourceQuotaSpec: validateResourceQuantityValue.
        ("", "resourcequotas") => inv(
            vec![("/spec/hard/pods", json!("-1"))],
            "spec.hard[pods]",
            "spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0",
        ),
        // ValidateSecret: IsConfigMapKey on every data key.
        ("", "secrets") => inv(
            vec![("/data/bad key!", json!("eA=="))],
            "data[bad key!]",
            "data[bad key!]: Invalid value: \"bad key!\": a valid config key must consist of alphanumeric characters",
        ),
        // ValidateServiceAccount validates its metadata alone.
        ("", "serviceaccounts") => inv(
            vec![("/metadata/labels/bad label!", json!("x"))],
            "metadata.labels",
            "metadata.labels: Invalid value: \"bad label!\": name part must consist of alphanumeric characters",
        ),
        // validateServicePort: IsValidPortNum.
        ("", "services") => inv(
            vec![("/spec/ports/0/port", json!(70000))],
            "spec.ports[0].port",
            "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        // k8s.io/kube-aggregator pkg/apis/apiregistration/validation.
        ("apiregistration.k8s.io", "apiservices") => inv(
            vec![("/spec/groupPriorityMinimum", json!(0))],
            "spec.groupPriorityMinimum",
            "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
        ),
        // ValidateControllerRevision: ValidateNonnegativeField.
        ("apps", "controllerrevisions") => inv(
            vec![("/revision", json!(-1))],
            "revision",
            "revision: Invalid value: -1: must be greater than or equal to 0",
        ),
        // ValidateDaemonSetSpec: ValidateNonnegativeField.
        ("apps", "daemonsets") => inv(
            vec![("/spec/minReadySeconds", json!(-1))],
            "spec.minReadySeconds",
            "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("apps", "deployments") => inv(
            vec![("/spec/replicas", json!(-1))],
            "spec.replicas",
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("apps", "replicasets") => inv(
            vec![("/spec/replicas", json!(-1))],
            "spec.replicas",
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        // ValidateStatefulSetSpec: field.Invalid, not NotSupported.
        ("apps", "statefulsets") => inv(
            vec![("/spec/podManagementPolicy", json!("Bogus"))],
            "spec.podManagementPolicy",
            "spec.podManagementPolicy: Invalid value: \"Bogus\": must be 'OrderedReady' or 'Parallel'",
        ),
        // ValidateEventCreate (events.k8s.io/v1): the type is Normal or
        // Warning, reported with an empty bad value.
        ("events.k8s.io", "events") => inv(
            vec![("/type", json!("Bogus"))],
            "type",
            "type: Invalid value: \"\": has invalid value: Bogus",
        ),
        // validateHorizontalPodAutoscalerSpec.
        ("autoscaling", "horizontalpodautoscalers") => inv(
            vec![("/spec/maxReplicas", json!(0))],
            "spec.maxReplicas",
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        ),
        ("batch", "cronjobs") => inv(
            vec![("/spec/concurrencyPolicy", json!("Bogus"))],
            "spec.concurrencyPolicy",
            "spec.concurrencyPolicy: Unsupported value: \"Bogus\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
        ),
        ("batch", "jobs") => inv(
            vec![("/spec/parallelism", json!(-1))],
            "spec.parallelism",
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("certificates.k8s.io", "certificatesigningrequests") => inv(
            vec![("/spec/expirationSeconds", json!(100))],
            "spec.expirationSeconds",
            "spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 600 seconds (10 minutes)",
        ),
        ("networking.k8s.io", "ingressclasses") => inv(
            vec![("/spec/controller", json!("Bad Controller"))],
            "spec.controller",
            "spec.controller: Invalid value: \"Bad Controller\": must be a domain-prefixed path (such as \"acme.io/foo\")",
        ),
        ("networking.k8s.io", "ingresses") => inv(
            vec![("/spec/defaultBackend/service/port/number", json!(70000))],
            "spec.defaultBackend.service.port.number",
            "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        ("networking.k8s.io", "ipaddresses") => inv(
            vec![("/spec/parentRef/resource", json!(""))],
            "spec.parentRef.resource",
            "spec.parentRef.resource: Required value",
        ),
        ("networking.k8s.io", "networkpolicies") => inv(
            vec![("/spec/policyTypes", json!(["Bogus"]))],
            "spec.policyTypes[0]",
            "spec.policyTypes[0]: Unsupported value: \"Bogus\": supported values: \"Ingress\", \"Egress\"",
        ),
        ("networking.k8s.io", "servicecidrs") => inv(
            vec![("/spec/cidrs", json!(["not-a-cidr"]))],
            "spec.cidrs[0]",
            "spec.cidrs[0]: Invalid value: \"not-a-cidr\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        ),
        ("policy", "poddisruptionbudgets") => inv(
            vec![("/spec/minAvailable", json!(-1))],
            "spec.minAvailable",
            "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => inv(
            vec![("/roleRef/kind", json!("Role"))],
            "roleRef.kind",
            "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
        ),
        ("rbac.authorization.k8s.io", "clusterroles" | "roles") => inv(
            vec![("/rules/0/verbs", json!([]))],
            "rules[0].verbs",
            "rules[0].verbs: Required value: verbs must contain at least one value",
        ),
        ("rbac.authorization.k8s.io", "rolebindings") => inv(
            vec![("/roleRef/kind", json!("Bogus"))],
            "roleRef.kind",
            "roleRef.kind: Unsupported value: \"Bogus\": supported values: \"Role\", \"ClusterRole\"",
        ),
        ("storage.k8s.io", "csidrivers") => inv(
            vec![("/spec/fsGroupPolicy", json!("Bogus"))],
            "spec.fsGroupPolicy",
            "spec.fsGroupPolicy: Unsupported value: \"Bogus\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"",
        ),
        ("storage.k8s.io", "csinodes") => inv(
            vec![("/spec/drivers", json!([{"name": "walk.example.com", "nodeID": ""}]))],
            "spec.drivers[0].nodeID",
            "spec.drivers[0].nodeID: Required value",
        ),
        ("storage.k8s.io", "csistoragecapacities") => inv(
            vec![("/capacity", json!("-1Gi"))],
            "capacity",
            "capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0",
        ),
        ("storage.k8s.io", "storageclasses") => inv(
            vec![("/reclaimPolicy", json!("Bogus"))],
            "reclaimPolicy",
            "reclaimPolicy: Unsupported value: \"Bogus\": supported values: \"Delete\", \"Retain\"",
        ),
        // validateAttacher, then (v1) ValidateCSIDriverName: "Required
        // value" twice in the causes, once in the message.
        ("storage.k8s.io", "volumeattachments") => inv(
            vec![("/spec/attacher", json!(""))],
            "spec.attacher",
            "spec.attacher: Required value",
        ),
        ("storage.k8s.io", "volumeattributesclasses") => inv(
            vec![("/driverName", json!(""))],
            "driverName",
            "driverName: Required value",
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations" | "validatingwebhookconfigurations",
        ) => inv(
            vec![("/webhooks/0/timeoutSeconds", json!(31))],
            "webhooks[0].timeoutSeconds",
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        ),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => inv(
            vec![("/spec/failurePolicy", json!("Bogus"))],
            "spec.failurePolicy",
            "spec.failurePolicy: Unsupported value: \"Bogus\": supported values: \"Fail\", \"Ignore\"",
        ),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => inv(
            vec![("/spec/validationActions", json!(["Bogus"]))],
            "spec.validationActions[0]",
            "spec.validationActions[0]: Unsupported value: \"Bogus\": supported values: \"Audit\", \"Deny\", \"Warn\"",
        ),
        // k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation.
        ("apiextensions.k8s.io", "customresourcedefinitions") => inv(
            vec![("/spec/scope", json!("Bogus"))],
            "spec.scope",
            "spec.scope: Unsupported value: \"Bogus\": supported values: \"Cluster\", \"Namespaced\"",
        ),
        ("scheduling.k8s.io", "priorityclasses") => inv(
            vec![("/value", json!(2000000000))],
            "value",
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        ("coordination.k8s.io", "leases") => inv(
            vec![("/spec/leaseDurationSeconds", json!(0))],
            "spec.leaseDurationSeconds",
            "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        ),
        ("node.k8s.io", "runtimeclasses") => inv(
            vec![("/handler", json!("Bad_Handler"))],
            "handler",
            "handler: Invalid value: \"Bad_Handler\": a lowercase RFC 1123 label must consist of",
        ),
        // validatePorts: the protocol (the port number is not checked).
        ("discovery.k8s.io", "endpointslices") => inv(
            vec![("/ports/0/protocol", json!("Bogus"))],
            "ports[0].protocol",
            "ports[0].protocol: Unsupported value: \"Bogus\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
        ),
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => inv(
            vec![("/spec/matchingPrecedence", json!(10001))],
            "spec.matchingPrecedence",
            "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
        ),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => inv(
            vec![("/spec/limited/limitResponse/type", json!("Bogus"))],
            "spec.limited.limitResponse.type",
            "spec.limited.limitResponse.type: Unsupported value: \"Bogus\": supported values: \"Queue\", \"Reject\"",
        ),
        // validateDeviceClassConfiguration: the opaque driver's name
        // (ValidateCSIDriverName).
        ("resource.k8s.io", "deviceclasses") => inv(
            vec![(
                "/spec/config",
                json!([{"opaque": {"driver": "bad_driver", "parameters": {}}}]),
            )],
            "spec.config[0].opaque.driver",
            "spec.config[0].opaque.driver: Invalid value: \"bad_driver\": a lowercase RFC 1123 subdomain must consist of",
        ),
        ("resource.k8s.io", "resourceclaims") => inv(
            vec![("/spec/devices/requests/0/name", json!("Bad_Name"))],
            "spec.devices.requests[0].name",
            "spec.devices.requests[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of",
        ),
        ("resource.k8s.io", "resourceclaimtemplates") => inv(
            vec![("/spec/spec/devices/requests/0/name", json!("Bad_Name"))],
            "spec.spec.devices.requests[0].name",
            "spec.spec.devices.requests[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of",
        ),
        ("resource.k8s.io", "resourceslices") => inv(
            vec![("/spec/pool/resourceSliceCount", json!(0))],
            "spec.pool.resourceSliceCount",
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        ),
        _ => return None,
    };
    Some(c)
}

/// Sets (or, for null, removes) the field at a JSON pointer, making the
/// objects on the way.
fn set(obj: &mut Value, pointer: &str, value: Value) {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, path)) = tokens.split_last() else {
        *obj = value;
        return;
    };
    let mut at = obj;
    for t in path {
        at = match at {
            Value::Array(a) => &mut a[t.parse::<usize>().expect("index")],
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                other
                    .as_object_mut()
                    .expect("object")
                    .entry(t.clone())
                    .or_insert_with(|| json!({}))
            }
        };
    }
    match at {
        Value::Array(a) => a[last.parse::<usize>().expect("index")] = value,
        other => {
            if !other.is_object() {
                *other = json!({});
            }
            let map = other.as_object_mut().expect("object");
            if value.is_null() {
                map.remove(last);
            } else {
                map.insert(last.clone(), value);
            }
        }
    }
}

/// Where `got` differs from `sent`: every field sent must be there with
/// the value sent; objects may hold more fields, lists must be as long.
fn differences(path: &str, sent: &Value, got: &Value, out: &mut Vec<String>) {
    match (sent, got) {
        (Value::Object(s), Value::Object(g)) => {
            for (k, v) in s {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match g.get(k) {
                    Some(gv) => differences(&p, v, gv, out),
                    None => out.push(format!("{p}: sent {v}, read back nothing")),
                }
            }
        }
        (Value::Array(s), Value::Array(g)) if s.len() == g.len() => {
            for (i, (sv, gv)) in s.iter().zip(g).enumerate() {
                differences(&format!("{path}[{i}]"), sv, gv, out);
            }
        }
        _ if sent == got => {}
        _ => out.push(format!("{path}: sent {sent}, read back {got}")),
    }
}

struct Answer {
    status: u16,
    body: Value,
}

struct Check {
    c: reqwest::Client,
    base: String,
    csr: String,
    failures: Mutex<Vec<String>>,
    covered: Mutex<BTreeSet<String>>,
}

impl Check {
    async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        let mut rq = self
            .c
            .request(
                method.parse().expect("method"),
                format!("{}{path}", self.base),
            )
            .header("Accept", JSON);
        if let Some(b) = body {
            rq = rq.header("Content-Type", JSON).body(b.to_string());
        }
        let resp = rq
            .send()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp
            .text()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        Ok(Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        })
    }

    fn fail(&self, r: &Resource, what: String) {
        self.failures
            .lock()
            .expect("lock")
            .push(format!("{}: {what}", r.id()));
    }

    async fn check(&self, r: &Resource) {
        let Some(valid) = manifest(r, &self.csr) else {
            self.fail(r, "no valid manifest in tests/common/manifests.rs".into());
            return;
        };
        let Some(case) = invalid(r) else {
            self.fail(r, "no invalid variant in tests/kinds_invalid.rs".into());
            return;
        };
        self.covered.lock().expect("lock").insert(r.id());
        if let Err(e) = self.check_invalid(r, &valid, case).await {
            self.fail(r, e);
        }
        if let Err(e) = self.check_valid(r, &valid).await {
            self.fail(r, e);
        }
    }

    /// The invalid variant (sent first, under the valid object's name):
    /// upstream's 422.
    async fn check_invalid(
        &self,
        r: &Resource,
        valid: &Value,
        case: Invalid,
    ) -> Result<(), String> {
        let mut bad = valid.clone();
        for (pointer, value) in case.edits {
            set(&mut bad, pointer, value);
        }
        let a = self.send("POST", &r.collection(), Some(&bad)).await?;
        if (200..300).contains(&a.status) {
            // Out of the valid object's way.
            let _ = self.send("DELETE", &r.item(), None).await;
            for _ in 0..100 {
                match self.send("GET", &r.item(), None).await {
                    Ok(g) if g.status == 404 => break,
                    _ => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
            return Err(format!(
                "invalid: answered {}, not 422; expected {}",
                a.status, case.message
            ));
        }
        let b = &a.body;
        let top = b["message"].as_str().unwrap_or("");
        let causes: Vec<(String, String)> = b["details"]["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["field"].as_str().unwrap_or("").to_string(),
                    c["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let shown = || {
            causes
                .iter()
                .map(|(f, m)| format!("{f}: {m}"))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        if std::env::var_os("KINDS_INVALID_SHOW").is_some() {
            println!("{}: {} {top}", r.id(), a.status);
        }
        let mut wrong = Vec::new();
        if a.status != 422 || b["reason"] != "Invalid" {
            wrong.push(format!(
                "answered {} {}, not 422 Invalid",
                a.status,
                b["reason"].as_str().unwrap_or("")
            ));
        }
        if !causes.iter().any(|(f, _)| f == case.field) {
            wrong.push(format!("no cause with field {}", case.field));
        } else if !causes
            .iter()
            .any(|(f, m)| f == case.field && format!("{f}: {m}").starts_with(case.message))
        {
            wrong.push("the cause's wording is not upstream's".to_string());
        }
        if wrong.is_empty() && !top.contains(case.message) {
            wrong.push("the message does not carry the cause".to_string());
        }
        // upstream's message: `<Kind> "<name>" is invalid: ` and the causes
        // as ErrorList.ToAggregate lists them, each distinct one once.
        let mut distinct: Vec<String> = Vec::new();
        for (f, m) in &causes {
            let line = format!("{f}: {m}");
            if !distinct.contains(&line) {
                distinct.push(line);
            }
        }
        let listed = match distinct.as_slice() {
            [one] => one.clone(),
            all => format!("[{}]", all.join(", ")),
        };
        if wrong.is_empty() && top.split_once(" is invalid: ").map(|(_, l)| l) != Some(&listed) {
            wrong.push(format!(
                "the message does not list the causes as upstream's does (`{listed}`)"
            ));
        }
        if wrong.is_empty() {
            return Ok(());
        }
        Err(format!(
            "invalid: {}; expected `{}`; got {} `{top}` causes [{}]",
            wrong.join(", "),
            case.message,
            a.status,
            shown()
        ))
    }

    /// The valid object: created, and read back with every field sent.
    async fn check_valid(&self, r: &Resource, valid: &Value) -> Result<(), String> {
        let a = self.send("POST", &r.collection(), Some(valid)).await?;
        if a.status != 201 {
            return Err(format!(
                "valid: answered {}, not 201: {}",
                a.status,
                a.body["message"].as_str().unwrap_or("")
            ));
        }
        let g = self.send("GET", &r.item(), None).await?;
        if g.status != 200 {
            return Err(format!("valid: GET answered {}", g.status));
        }
        let mut sent = valid.clone();
        // Write-only: merged into data on the way in.
        if r.kind == "Secret" {
            if let Some(m) = sent.as_object_mut() {
                m.remove("stringData");
            }
        }
        let mut out = Vec::new();
        differences("", &sent, &g.body, &mut out);
        if out.is_empty() {
            Ok(())
        } else {
            Err(format!("valid: does not round-trip: {}", out.join("; ")))
        }
    }
}

#[test]
fn every_kind_refuses_upstreams_invalid_object_and_keeps_a_valid_one() {
    let started = Instant::now();
    let k = Kapi::start(&[]);
    let rt = runtime();
    let check = Check {
        c: k.admin_client(),
        base: k.url.clone(),
        csr: csr_pem_base64(),
        failures: Mutex::new(Vec::new()),
        covered: Mutex::new(BTreeSet::new()),
    };
    rt.block_on(async {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}});
        let a = check
            .send("POST", "/api/v1/namespaces", Some(&ns))
            .await
            .expect("namespace");
        assert_eq!(a.status, 201, "namespace {NS}: {}", a.body);
    });
    k.wait_for_default_service_account(NS);

    let resources = rt.block_on(async {
        let mut all = Vec::new();
        for root in ["/api", "/apis"] {
            let r = check
                .c
                .get(format!("{}{root}", check.base))
                .header("Accept", AGG_V2)
                .send()
                .await
                .expect("discovery");
            assert_eq!(r.status(), 200, "aggregated discovery at {root}");
            let doc: Value = r.json().await.expect("discovery json");
            assert_eq!(doc["kind"], "APIGroupDiscoveryList", "{root}");
            all.extend(resources_of(&doc));
        }
        all
    });
    let stored: Vec<Resource> = resources
        .into_iter()
        .filter(|r| r.has("create") && !NOT_STORED.contains(&r.kind.as_str()))
        .collect();
    rt.block_on(stream::iter(&stored).for_each_concurrent(PARALLEL, |r| check.check(r)));

    let covered = check.covered.into_inner().expect("covered");
    let mut failures = check.failures.into_inner().expect("failures");
    failures.sort();
    println!(
        "kinds_invalid: {} resources with create and storage, {} in the table, {} failures, {:?}",
        stored.len(),
        covered.len(),
        failures.len(),
        started.elapsed()
    );
    assert!(
        stored.len() >= MIN_KINDS,
        "discovery serves {} stored kinds with create, fewer than the {MIN_KINDS} built in",
        stored.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} kinds went wrong:\n{}",
        failures.len(),
        stored.len(),
        failures.join("\n")
    );
}
