//! Expectations follow upstream's documented behaviour
//! (kubernetes.io/docs/reference/using-api/server-side-apply) and objects
//! and errors recorded from a real v1.28 API server.
//!
//! Shared fixtures are here; the tests are by topic: `fieldset` (fieldsV1
//! and set operations), `update` (ownership by non-apply writes), `apply`
//! (server-side apply), `conflicts`, `lists` (merge keys, sets, atomic
//! types) and `custom_resources`.

mod apply;
mod conflicts;
mod custom_resources;
mod fieldset;
mod lists;
mod update;

use super::*;

const CM: &str = "io.k8s.api.core.v1.ConfigMap";
const DEPLOY: &str = "io.k8s.api.apps.v1.Deployment";
const POD: &str = "io.k8s.api.core.v1.Pod";
const T0: &str = "2024-01-01T00:00:00Z";
const T1: &str = "2024-01-01T00:01:00Z";
const T2: &str = "2024-01-01T00:02:00Z";

fn at<'a>(type_name: &str, subresource: &'a str, now: &'a str) -> Scope<'a> {
    Scope {
        now: Some(now),
        ..Scope::for_type(type_name, subresource)
    }
}

fn entries(obj: &Value) -> Vec<ManagedFieldsEntry> {
    entries_of(obj).expect("managed fields decode")
}

/// The fieldsV1 of `manager`'s entry with `op`.
fn fields(obj: &Value, manager: &str, op: Operation) -> Option<Value> {
    entries(obj)
        .into_iter()
        .find(|e| e.manager == manager && e.operation == op)
        .and_then(|e| e.fields_v1)
}

fn managers(obj: &Value) -> Vec<(String, Operation)> {
    entries(obj)
        .into_iter()
        .map(|e| (e.manager, e.operation))
        .collect()
}

fn cm(data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default"},
        "data": data,
    })
}

fn p(s: &str) -> Path {
    Path(s.split('.').map(PathElement::field).collect())
}

/// The managedFields entry a real API server wrote for `kubectl create
/// deployment web --image nginx:1.27` (tests/objects/deployments.json).
fn kubectl_create_deployment_fields() -> Value {
    json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:progressDeadlineSeconds": {},
            "f:replicas": {},
            "f:revisionHistoryLimit": {},
            "f:selector": {},
            "f:strategy": {
                "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                "f:type": {}
            },
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        "k:{\"name\":\"nginx\"}": {
                            ".": {},
                            "f:image": {},
                            "f:imagePullPolicy": {},
                            "f:name": {},
                            "f:resources": {},
                            "f:terminationMessagePath": {},
                            "f:terminationMessagePolicy": {}
                        }
                    },
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}
                }
            }
        }
    })
}

/// The deployment that entry describes, as the server stored it.
fn created_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "5",
            "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"app": "web"}
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "nginx", "image": "nginx:1.27", "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"
                    }],
                    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                    "dnsPolicy": "ClusterFirst", "securityContext": {},
                    "schedulerName": "default-scheduler"
                }
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        }
    })
}

fn nginx_apply(image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        }
    })
}
