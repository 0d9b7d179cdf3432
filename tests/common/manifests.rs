//! The objects the tests make of every built-in kind: one minimal valid
//! object per resource aggregated discovery serves (for a review, the
//! review), and the resources as aggregated discovery lists them. Shared by
//! the discovery walk (tests/discovery_walk.rs) and the validation walk
//! (tests/kinds_invalid.rs).

use base64::Engine;
use serde_json::{json, Value};

/// The media type of aggregated discovery (`/api`, `/apis`).
pub const AGG_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/// The namespace the namespaced kinds are walked in.
pub const NS: &str = "walk";

/// One resource of one group version, as aggregated discovery lists it.
#[derive(Clone, Debug)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub kind: String,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    pub subresources: Vec<(String, Vec<String>)>,
}

impl Resource {
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// "apps/v1 deployments".
    pub fn id(&self) -> String {
        format!("{} {}", self.group_version(), self.plural)
    }

    pub fn collection(&self) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        let ns = if self.namespaced {
            format!("/namespaces/{NS}")
        } else {
            String::new()
        };
        format!("{prefix}{ns}/{}", self.plural)
    }

    /// The object the walk created for this resource.
    pub fn item(&self) -> String {
        format!("{}/{}", self.collection(), fixture_name(self))
    }

    pub fn has(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// Aggregated discovery's resources, every group and every version.
pub fn resources_of(doc: &Value) -> Vec<Resource> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for g in doc["items"].as_array().into_iter().flatten() {
        let group = g["metadata"]["name"].as_str().unwrap_or("");
        for v in g["versions"].as_array().into_iter().flatten() {
            let version = v["version"].as_str().unwrap_or("");
            for r in v["resources"].as_array().into_iter().flatten() {
                out.push(Resource {
                    group: group.to_string(),
                    version: version.to_string(),
                    plural: r["resource"].as_str().unwrap_or("").to_string(),
                    kind: r["responseKind"]["kind"].as_str().unwrap_or("").to_string(),
                    namespaced: r["scope"] == "Namespaced",
                    verbs: strings(&r["verbs"]),
                    subresources: r["subresources"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| {
                            (
                                s["subresource"].as_str().unwrap_or("").to_string(),
                                strings(&s["verbs"]),
                            )
                        })
                        .collect(),
                });
            }
        }
    }
    out
}

/// The name of the object the walk makes (or, for a kind it cannot make,
/// reads) for `r`. Kinds served at two versions get one object each.
pub fn fixture_name(r: &Resource) -> String {
    match (r.group.as_str(), r.plural.as_str()) {
        ("", "componentstatuses") => "etcd-0".into(),
        ("networking.k8s.io", "ipaddresses") => "10.250.0.7".into(),
        ("apiregistration.k8s.io", "apiservices") => "v1.walk-agg.example.com".into(),
        ("apiextensions.k8s.io", "customresourcedefinitions") => "gadgets.walk.example.com".into(),
        // Stored with the core Events: another name.
        ("events.k8s.io", _) => format!("walk-kevents-{}", r.version),
        _ => format!("walk-{}-{}", r.plural, r.version),
    }
}

pub const NODE: &str = "walk-nodes-v1";
pub const POD: &str = "walk-pods-v1";
pub const SERVICE: &str = "walk-services-v1";

pub fn containers() -> Value {
    json!([{"name": "c", "image": "busybox"}])
}

pub fn template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": containers()}})
}

/// The body that creates `r`'s object (for a review, the review). None for
/// a kind the walk does not know: a kind added to kapi must be added here.
pub fn manifest(r: &Resource, csr: &str) -> Option<Value> {
    let fields = match (r.group.as_str(), r.plural.as_str()) {
        ("", "bindings") => json!({"metadata": {"name": "walk-bind2"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}}),
        ("", "configmaps") => json!({"data": {"walk": "yes"}}),
        ("", "endpoints") => json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
            "ports": [{"port": 80}]}]}),
        ("", "events") => json!({"involvedObject": {"apiVersion": "v1", "kind": "Pod",
            "name": POD, "namespace": NS}, "reason": "Walked", "message": "walked",
            "type": "Normal", "source": {"component": "discovery-walk"}}),
        ("", "limitranges") => json!({"spec": {"limits": [{"type": "PersistentVolumeClaim",
            "max": {"storage": "100Gi"}}]}}),
        ("", "namespaces") => json!({}),
        // Its kubelet "listens" on a port nothing listens on.
        ("", "nodes") => json!({"status": {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 1}}}}),
        ("", "persistentvolumeclaims") => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}}),
        ("", "persistentvolumes") => json!({"spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/walk"}}}),
        ("", "pods") => json!({"spec": {"containers": [{"name": "c", "image": "busybox",
            "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                          "limits": {"cpu": "200m", "memory": "128Mi"}}}]}}),
        ("", "podtemplates") => json!({"template": template("walk-tmpl")}),
        ("", "replicationcontrollers") => json!({"spec": {"replicas": 0,
            "selector": {"app": "walk-rc"}, "template": template("walk-rc")}}),
        // A quota on something nobody makes: it refuses nothing.
        ("", "resourcequotas") => {
            json!({"spec": {"hard": {"count/nothing.walk.example.com": "1"}}})
        }
        ("", "secrets") => json!({"stringData": {"walk": "yes"}}),
        ("", "serviceaccounts") => json!({}),
        ("", "services") => json!({"spec": {"selector": {"app": "walk-none"},
            "ports": [{"port": 80}]}}),
        ("apiregistration.k8s.io", "apiservices") => json!({"spec": {
            "group": "walk-agg.example.com", "version": "v1",
            "service": {"namespace": NS, "name": SERVICE, "port": 443},
            "insecureSkipTLSVerify": true, "groupPriorityMinimum": 100, "versionPriority": 10}}),
        ("apps", "controllerrevisions") => json!({"revision": 1, "data": {"spec": {}}}),
        // Selects no node: the controller makes no pods.
        ("apps", "daemonsets") => json!({"spec": {
            "selector": {"matchLabels": {"app": "walk-ds"}},
            "template": {"metadata": {"labels": {"app": "walk-ds"}},
                "spec": {"nodeSelector": {"kapi-walk/none": "true"}, "containers": containers()}}}}),
        ("apps", "deployments") => json!({"spec": {"replicas": 0,
            "selector": {"matchLabels": {"app": "walk-deploy"}}, "template": template("walk-deploy")}}),
        ("apps", "replicasets") => json!({"spec": {"replicas": 0,
            "selector": {"matchLabels": {"app": "walk-rs"}}, "template": template("walk-rs")}}),
        ("apps", "statefulsets") => json!({"spec": {"replicas": 0, "serviceName": "walk",
            "selector": {"matchLabels": {"app": "walk-sts"}}, "template": template("walk-sts")}}),
        ("events.k8s.io", "events") => json!({"eventTime": "2025-01-01T00:00:00.000000Z",
            "type": "Normal", "reason": "Walked", "action": "Walk", "note": "walked",
            "reportingController": "example.com/walk", "reportingInstance": "walk-1",
            "regarding": {"kind": "Pod", "name": POD, "namespace": NS}}),
        ("authentication.k8s.io", "selfsubjectreviews") => json!({}),
        ("authentication.k8s.io", "tokenreviews") => json!({"spec": {"token": "not-a-token"}}),
        ("authorization.k8s.io", "localsubjectaccessreviews" | "subjectaccessreviews") => {
            json!({"spec": {"user": "walk-user",
                "resourceAttributes": {"namespace": NS, "verb": "get", "resource": "pods"}}})
        }
        ("authorization.k8s.io", "selfsubjectaccessreviews") => json!({"spec": {
            "resourceAttributes": {"namespace": NS, "verb": "get", "resource": "pods"}}}),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => {
            json!({"spec": {"namespace": NS}})
        }
        ("autoscaling", "horizontalpodautoscalers") => json!({"spec": {"maxReplicas": 3,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                "name": "walk-deployments-v1"}}}),
        ("batch", "cronjobs") => json!({"spec": {"schedule": "0 0 * * *", "suspend": true,
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": containers()}}}}}}),
        ("batch", "jobs") => json!({"spec": {"suspend": true, "template": {"spec": {
            "restartPolicy": "Never", "containers": containers()}}}}),
        ("certificates.k8s.io", "certificatesigningrequests") => json!({"spec": {
            "request": csr, "signerName": "example.com/walk", "usages": ["client auth"]}}),
        ("networking.k8s.io", "ingressclasses") => {
            json!({"spec": {"controller": "example.com/walk"}})
        }
        ("networking.k8s.io", "ingresses") => json!({"spec": {"defaultBackend": {
            "service": {"name": SERVICE, "port": {"number": 80}}}}}),
        ("networking.k8s.io", "ipaddresses") => json!({"spec": {"parentRef": {
            "group": "", "resource": "services", "namespace": NS, "name": SERVICE}}}),
        ("networking.k8s.io", "networkpolicies") => json!({"spec": {
            "podSelector": {"matchLabels": {"app": "walk-none"}}}}),
        ("networking.k8s.io", "servicecidrs") => json!({"spec": {"cidrs": ["10.250.0.0/24"]}}),
        ("policy", "poddisruptionbudgets") => json!({"spec": {"minAvailable": 1,
            "selector": {"matchLabels": {"app": "walk-none"}}}}),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => json!({
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": "walk-clusterroles-v1"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "walk-user"}]}),
        ("rbac.authorization.k8s.io", "clusterroles" | "roles") => json!({"rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
        ("rbac.authorization.k8s.io", "rolebindings") => json!({
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                "name": "walk-roles-v1"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "walk-user"}]}),
        ("storage.k8s.io", "csidrivers") => json!({"spec": {"attachRequired": false}}),
        ("storage.k8s.io", "csinodes") => json!({"spec": {"drivers": []}}),
        ("storage.k8s.io", "csistoragecapacities") => json!({
            "storageClassName": "walk-storageclasses-v1", "capacity": "1Gi"}),
        ("storage.k8s.io", "storageclasses") => json!({"provisioner": "example.com/walk"}),
        ("storage.k8s.io", "volumeattachments") => json!({"spec": {
            "attacher": "walk.example.com", "nodeName": NODE,
            "source": {"persistentVolumeName": "walk-persistentvolumes-v1"}}}),
        ("storage.k8s.io", "volumeattributesclasses") => json!({
            "driverName": "example.com/walk", "parameters": {"iops": "100"}}),
        // Hooks and policies on a resource nothing serves: they never run.
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations" | "validatingwebhookconfigurations",
        ) => json!({"webhooks": [{"name": "walk.example.com",
            "clientConfig": {"url": "https://127.0.0.1:1/walk"},
            "rules": [{"operations": ["CREATE"], "apiGroups": ["walk.invalid"],
                "apiVersions": ["v1"], "resources": ["nothing"]}],
            "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => json!({"spec": {
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
                "apiGroups": ["walk.invalid"], "apiVersions": ["v1"], "resources": ["nothing"]}]},
            "validations": [{"expression": "true"}]}}),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => json!({"spec": {
            "policyName": "walk-validatingadmissionpolicies-v1", "validationActions": ["Audit"]}}),
        ("apiextensions.k8s.io", "customresourcedefinitions") => json!({"spec": {
            "group": "walk.example.com", "scope": "Cluster",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}}),
        ("scheduling.k8s.io", "priorityclasses") => json!({"value": 1000}),
        ("coordination.k8s.io", "leases") => json!({"spec": {"holderIdentity": "walk",
            "leaseDurationSeconds": 15}}),
        ("node.k8s.io", "runtimeclasses") => json!({"handler": "walk"}),
        ("discovery.k8s.io", "endpointslices") => json!({"addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.9"]}], "ports": [{"port": 80}]}),
        // Matches one user nobody is.
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => json!({"spec": {
            "priorityLevelConfiguration": {"name": "walk-prioritylevelconfigurations-v1"},
            "matchingPrecedence": 9000, "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "walk-nobody"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/walk"]}]}]}}),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => json!({"spec": {
            "type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Reject"}}}}),
        ("resource.k8s.io", "deviceclasses") => json!({"spec": {"selectors": [
            {"cel": {"expression": "device.driver == \"walk.example.com\""}}]}}),
        ("resource.k8s.io", "resourceclaims") => json!({"spec": {"devices": {"requests": [
            {"name": "dev", "exactly": {"deviceClassName": "walk-deviceclasses-v1"}}]}}}),
        ("resource.k8s.io", "resourceclaimtemplates") => json!({"spec": {"spec": {"devices": {
            "requests": [{"name": "dev", "exactly": {"deviceClassName": "walk-deviceclasses-v1"}}]}}}}),
        ("resource.k8s.io", "resourceslices") => json!({"spec": {"driver": "walk.example.com",
            "nodeName": NODE, "pool": {"name": "walk", "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": "dev-0"}]}}),
        ("walk.example.com", "walkers") => json!({"spec": {"replicas": 1}}),
        _ => return None,
    };
    let mut obj = json!({"apiVersion": r.group_version(), "kind": r.kind,
        "metadata": {"name": fixture_name(r), "labels": {"kapi-walk": "doomed"}}});
    if r.namespaced {
        obj["metadata"]["namespace"] = json!(NS);
    }
    for (k, v) in fields.as_object().expect("fields").clone() {
        if k == "metadata" {
            for (mk, mv) in v.as_object().expect("metadata").clone() {
                obj["metadata"][mk] = mv;
            }
        } else {
            obj[k] = v;
        }
    }
    Some(obj)
}

pub fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": containers()}})
}

pub fn csr_pem_base64() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "walk-user");
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    base64::engine::general_purpose::STANDARD.encode(pem)
}
