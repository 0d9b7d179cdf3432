//! Expected results follow upstream's documented behaviour
//! (contributors/devel/sig-api-machinery/strategic-merge-patch.md) and the
//! ordering rules of apimachinery's strategicpatch.

use serde_json::{json, Value};

use super::super::meta;
use super::*;

const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";
const POD: &str = "io.k8s.api.core.v1.Pod";

fn app() -> Value {
    json!({
        "name": "app",
        "image": "app:1",
        "args": ["--a", "--b"],
        "ports": [
            {"containerPort": 80, "protocol": "TCP"},
            {"containerPort": 443, "protocol": "TCP"}
        ],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "resources": {"limits": {"cpu": "1"}}
    })
}

fn sidecar() -> Value {
    json!({"name": "sidecar", "image": "side:1"})
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "tier": "fe"},
            "annotations": {"a": "1"},
            "finalizers": ["f1", "f2"]
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}
            },
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "nodeSelector": {"disk": "ssd", "zone": "a"},
                    "containers": [app(), sidecar()],
                    "volumes": [
                        {"name": "data", "emptyDir": {}},
                        {"name": "cfg", "configMap": {"name": "cfg"}}
                    ],
                    "tolerations": [{"key": "k1", "operator": "Exists"}],
                    "imagePullSecrets": [{"name": "reg1"}]
                }
            }
        },
        "status": {
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "True"}
            ]
        }
    })
}

fn service() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8443}
            ]
        }
    })
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}
            ]
        },
        "spec": {
            "containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}],
            "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["one"]}]
        },
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "True"}
            ]
        }
    })
}

/// `v` with the value at JSON pointer `ptr` set (created if missing).
fn set(mut v: Value, ptr: &str, value: Value) -> Value {
    let (parent, last) = ptr.rsplit_once('/').unwrap();
    match v.pointer_mut(parent).unwrap() {
        Value::Object(m) => {
            m.insert(last.to_string(), value);
        }
        Value::Array(a) => a[last.parse::<usize>().unwrap()] = value,
        other => panic!("cannot set {ptr} in {other}"),
    }
    v
}

/// `v` without the value at JSON pointer `ptr`.
fn unset(mut v: Value, ptr: &str) -> Value {
    let (parent, last) = ptr.rsplit_once('/').unwrap();
    v.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(last)
        .unwrap();
    v
}

/// A patch reaching into the deployment's pod spec.
fn pod_spec_patch(spec: Value) -> Value {
    json!({"spec": {"template": {"spec": spec}}})
}

const CONTAINERS: &str = "/spec/template/spec/containers";
const APP: &str = "/spec/template/spec/containers/0";

struct Case {
    name: &'static str,
    type_name: &'static str,
    original: Value,
    patch: Value,
    expected: Value,
}

fn case(name: &'static str, original: Value, patch: Value, expected: Value) -> Case {
    Case {
        name,
        type_name: DEPLOYMENT,
        original,
        patch,
        expected,
    }
}

fn typed(type_name: &'static str, mut c: Case) -> Case {
    c.type_name = type_name;
    c
}

fn cases() -> Vec<Case> {
    let d = deployment;
    let mut app_new_port = app();
    app_new_port["ports"] = json!([
        {"containerPort": 8080, "protocol": "TCP"},
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443, "protocol": "TCP"}
    ]);
    vec![
        case(
            "container image updated by name",
            d(),
            pod_spec_patch(json!({"containers": [{"name": "sidecar", "image": "side:2"}]})),
            set(
                d(),
                "/spec/template/spec/containers/1/image",
                json!("side:2"),
            ),
        ),
        case(
            "container added without $setElementOrder goes first",
            d(),
            pod_spec_patch(json!({"containers": [{"name": "new", "image": "n:1"}]})),
            set(
                d(),
                CONTAINERS,
                json!([{"name": "new", "image": "n:1"}, app(), sidecar()]),
            ),
        ),
        case(
            "container appended with $setElementOrder",
            d(),
            pod_spec_patch(json!({
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "new"}],
                "containers": [{"name": "new", "image": "n:1"}]
            })),
            set(
                d(),
                CONTAINERS,
                json!([app(), sidecar(), {"name": "new", "image": "n:1"}]),
            ),
        ),
        case(
            "container deleted with $patch: delete",
            d(),
            pod_spec_patch(json!({"containers": [{"name": "sidecar", "$patch": "delete"}]})),
            set(d(), CONTAINERS, json!([app()])),
        ),
        case(
            "containers reordered by $setElementOrder alone",
            d(),
            pod_spec_patch(
                json!({"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}),
            ),
            set(d(), CONTAINERS, json!([sidecar(), app()])),
        ),
        case(
            "port added by containerPort",
            d(),
            pod_spec_patch(json!({"containers": [
                {"name": "app", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
            ]})),
            set(d(), APP, app_new_port),
        ),
        case(
            "port updated by containerPort",
            d(),
            pod_spec_patch(json!({"containers": [
                {"name": "app", "ports": [{"containerPort": 443, "name": "https"}]}
            ]})),
            set(
                d(),
                &format!("{APP}/ports/1"),
                json!({"containerPort": 443, "protocol": "TCP", "name": "https"}),
            ),
        ),
        case(
            "env value updated by name",
            d(),
            pod_spec_patch(
                json!({"containers": [{"name": "app", "env": [{"name": "B", "value": "3"}]}]}),
            ),
            set(d(), &format!("{APP}/env/1/value"), json!("3")),
        ),
        case(
            "env var deleted with $patch: delete",
            d(),
            pod_spec_patch(json!({"containers": [
                {"name": "app", "env": [{"name": "A", "$patch": "delete"}]}
            ]})),
            set(
                d(),
                &format!("{APP}/env"),
                json!([{"name": "B", "value": "2"}]),
            ),
        ),
        case(
            "env var value cleared by null",
            d(),
            pod_spec_patch(
                json!({"containers": [{"name": "app", "env": [{"name": "A", "value": null}]}]}),
            ),
            set(d(), &format!("{APP}/env/0"), json!({"name": "A"})),
        ),
        case(
            "env var inserted where $setElementOrder puts it",
            d(),
            pod_spec_patch(json!({"containers": [{
                "name": "app",
                "$setElementOrder/env": [{"name": "A"}, {"name": "C"}, {"name": "B"}],
                "env": [{"name": "C", "value": "3"}]
            }]})),
            set(
                d(),
                &format!("{APP}/env"),
                json!([
                    {"name": "A", "value": "1"},
                    {"name": "C", "value": "3"},
                    {"name": "B", "value": "2"}
                ]),
            ),
        ),
        case(
            "volume added by name",
            d(),
            pod_spec_patch(json!({"volumes": [{"name": "tmp", "emptyDir": {}}]})),
            set(
                d(),
                "/spec/template/spec/volumes",
                json!([
                    {"name": "tmp", "emptyDir": {}},
                    {"name": "data", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "cfg"}}
                ]),
            ),
        ),
        case(
            "volume source switched with $retainKeys",
            d(),
            pod_spec_patch(json!({"volumes": [
                {"name": "data", "$retainKeys": ["hostPath", "name"], "hostPath": {"path": "/x"}}
            ]})),
            set(
                d(),
                "/spec/template/spec/volumes/0",
                json!({"name": "data", "hostPath": {"path": "/x"}}),
            ),
        ),
        case(
            "tolerations (no strategy) replaced",
            d(),
            pod_spec_patch(json!({"tolerations": [{"key": "k2", "operator": "Exists"}]})),
            set(
                d(),
                "/spec/template/spec/tolerations",
                json!([{"key": "k2", "operator": "Exists"}]),
            ),
        ),
        case(
            "imagePullSecret added by name",
            d(),
            pod_spec_patch(json!({"imagePullSecrets": [{"name": "reg2"}]})),
            set(
                d(),
                "/spec/template/spec/imagePullSecrets",
                json!([{"name": "reg2"}, {"name": "reg1"}]),
            ),
        ),
        case(
            "finalizers unioned",
            d(),
            json!({"metadata": {"finalizers": ["f3", "f1"]}}),
            set(d(), "/metadata/finalizers", json!(["f3", "f1", "f2"])),
        ),
        case(
            "finalizer removed with $deleteFromPrimitiveList",
            d(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}}),
            set(d(), "/metadata/finalizers", json!(["f2"])),
        ),
        case(
            "finalizers extended and ordered by $setElementOrder",
            d(),
            json!({"metadata": {
                "$setElementOrder/finalizers": ["f2", "f3", "f1"],
                "finalizers": ["f3"]
            }}),
            set(d(), "/metadata/finalizers", json!(["f2", "f3", "f1"])),
        ),
        case(
            "strategy switched to Recreate with $retainKeys clears rollingUpdate",
            d(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            set(d(), "/spec/strategy", json!({"type": "Recreate"})),
        ),
        case(
            "strategy type changed without $retainKeys keeps rollingUpdate",
            d(),
            json!({"spec": {"strategy": {"type": "Recreate"}}}),
            set(d(), "/spec/strategy/type", json!("Recreate")),
        ),
        case(
            "nodeSelector replaced with $patch: replace",
            d(),
            pod_spec_patch(json!({"nodeSelector": {"$patch": "replace", "zone": "b"}})),
            set(
                d(),
                "/spec/template/spec/nodeSelector",
                json!({"zone": "b"}),
            ),
        ),
        case(
            "labels merged, null deletes one",
            d(),
            json!({"metadata": {"labels": {"env": "prod", "tier": null}}}),
            set(
                d(),
                "/metadata/labels",
                json!({"app": "web", "env": "prod"}),
            ),
        ),
        case(
            "nulls delete at several depths",
            d(),
            json!({
                "metadata": {"annotations": null},
                "spec": {
                    "replicas": null,
                    "template": {"spec": {"containers": [
                        {"name": "app", "resources": {"limits": {"cpu": null}}}
                    ]}}
                }
            }),
            set(
                unset(unset(d(), "/metadata/annotations"), "/spec/replicas"),
                &format!("{APP}/resources"),
                json!({"limits": {}}),
            ),
        ),
        case(
            "null for a missing key is dropped",
            d(),
            json!({"metadata": {"generateName": null}, "spec": {"paused": null}}),
            d(),
        ),
        case(
            "args replaced",
            d(),
            pod_spec_patch(json!({"containers": [{"name": "app", "args": ["--c"]}]})),
            set(d(), &format!("{APP}/args"), json!(["--c"])),
        ),
        case(
            "status conditions merged by type",
            d(),
            json!({"status": {"conditions": [
                {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}
            ]}}),
            set(
                d(),
                "/status/conditions/0",
                json!({"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}),
            ),
        ),
        typed(
            "io.k8s.api.core.v1.Service",
            case(
                "service port updated by port",
                service(),
                json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}),
                set(service(), "/spec/ports/0/targetPort", json!(9090)),
            ),
        ),
        typed(
            "io.k8s.api.core.v1.Service",
            case(
                "service port added by port; selector merged",
                service(),
                json!({"spec": {"ports": [{"name": "metrics", "port": 9100}], "selector": {"tier": "fe"}}}),
                set(
                    set(
                        service(),
                        "/spec/ports",
                        json!([
                            {"name": "metrics", "port": 9100},
                            {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                            {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8443}
                        ]),
                    ),
                    "/spec/selector",
                    json!({"app": "web", "tier": "fe"}),
                ),
            ),
        ),
        case("empty patch changes nothing", d(), json!({}), d()),
        case("patch equal to the object changes nothing", d(), d(), d()),
        case(
            "list replaced by a $patch: replace item",
            d(),
            pod_spec_patch(json!({"containers": [
                {"$patch": "replace"},
                {"name": "only", "image": "o:1"}
            ]})),
            set(d(), CONTAINERS, json!([{"name": "only", "image": "o:1"}])),
        ),
        case(
            "map-typed field deleted with $patch: delete",
            d(),
            json!({"metadata": {"annotations": {"$patch": "delete"}}}),
            unset(d(), "/metadata/annotations"),
        ),
        case(
            "struct field emptied with $patch: delete",
            d(),
            json!({"spec": {"strategy": {"$patch": "delete"}}}),
            set(d(), "/spec/strategy", json!({})),
        ),
        case(
            "struct replaced with $patch: replace",
            d(),
            pod_spec_patch(json!({"containers": [
                {"name": "app", "resources": {"$patch": "replace", "requests": {"cpu": "2"}}}
            ]})),
            set(
                d(),
                &format!("{APP}/resources"),
                json!({"requests": {"cpu": "2"}}),
            ),
        ),
        case(
            "new fields take the patch without nulls or directives",
            d(),
            pod_spec_patch(json!({
                "securityContext": {"runAsUser": 1000, "fsGroup": null},
                "initContainers": [
                    {"name": "init", "image": "i:1", "env": [{"name": "X", "value": null}]},
                    {"name": "gone", "$patch": "delete"}
                ]
            })),
            set(
                set(
                    d(),
                    "/spec/template/spec/securityContext",
                    json!({"runAsUser": 1000}),
                ),
                "/spec/template/spec/initContainers",
                json!([{"name": "init", "image": "i:1", "env": [{"name": "X"}]}]),
            ),
        ),
        case(
            "value of another type replaces the original",
            d(),
            json!({"spec": {"template": {"spec": {"nodeSelector": ["x"]}}}}),
            set(d(), "/spec/template/spec/nodeSelector", json!(["x"])),
        ),
        typed(
            POD,
            case(
                "pod container image updated; owner reference merged by uid",
                pod(),
                json!({
                    "metadata": {"ownerReferences": [{"uid": "u1", "controller": true}]},
                    "spec": {"containers": [{"name": "b", "image": "b:2"}]}
                }),
                set(
                    set(pod(), "/spec/containers/1/image", json!("b:2")),
                    "/metadata/ownerReferences/0/controller",
                    json!(true),
                ),
            ),
        ),
        typed(
            POD,
            case(
                "hostAliases merged by ip, hostnames replaced",
                pod(),
                json!({"spec": {"hostAliases": [{"ip": "1.1.1.1", "hostnames": ["uno"]}]}}),
                set(pod(), "/spec/hostAliases/0/hostnames", json!(["uno"])),
            ),
        ),
        typed(
            POD,
            case(
                "pod conditions merged by type",
                pod(),
                json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                set(pod(), "/status/conditions/0/status", json!("True")),
            ),
        ),
        typed(
            "io.k8s.api.core.v1.Node",
            case(
                "node taints replaced, addresses merged by type",
                json!({
                    "metadata": {"name": "n1"},
                    "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
                    "status": {"addresses": [
                        {"type": "InternalIP", "address": "10.0.0.1"},
                        {"type": "Hostname", "address": "n1"}
                    ]}
                }),
                json!({
                    "spec": {"taints": [{"key": "b", "effect": "NoExecute"}]},
                    "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}
                }),
                json!({
                    "metadata": {"name": "n1"},
                    "spec": {"taints": [{"key": "b", "effect": "NoExecute"}]},
                    "status": {"addresses": [
                        {"type": "InternalIP", "address": "10.0.0.2"},
                        {"type": "Hostname", "address": "n1"}
                    ]}
                }),
            ),
        ),
        typed(
            "io.k8s.api.core.v1.ConfigMap",
            case(
                "configmap data merged, null deletes",
                json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}),
                json!({"data": {"b": null, "c": "3"}}),
                json!({"metadata": {"name": "c"}, "data": {"a": "1", "c": "3"}}),
            ),
        ),
        typed(
            "io.k8s.api.batch.v1.CronJob",
            case(
                "cronjob pod template containers merged by name",
                json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                    "containers": [{"name": "a", "image": "a:1", "args": ["x"]}]
                }}}}}}),
                json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
                    "containers": [{"name": "a", "image": "a:2"}]
                }}}}}}),
                json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                    "containers": [{"name": "a", "image": "a:2", "args": ["x"]}]
                }}}}}}),
            ),
        ),
        typed(
            "io.k8s.api.apps.v1.StatefulSet",
            case(
                "statefulset volumeClaimTemplates replaced, containers merged",
                json!({"spec": {
                    "volumeClaimTemplates": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
                    "template": {"spec": {"containers": [{"name": "c", "image": "c:1"}]}}
                }}),
                json!({"spec": {
                    "volumeClaimTemplates": [{"metadata": {"name": "z"}}],
                    "template": {"spec": {"containers": [{"name": "c", "image": "c:2"}]}}
                }}),
                json!({"spec": {
                    "volumeClaimTemplates": [{"metadata": {"name": "z"}}],
                    "template": {"spec": {"containers": [{"name": "c", "image": "c:2"}]}}
                }}),
            ),
        ),
        typed(
            "io.k8s.api.policy.v1.PodDisruptionBudget",
            case(
                "pdb selector (replace strategy) replaced",
                json!({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "1"}}}}),
                json!({"spec": {"selector": {"matchLabels": {"b": "2"}}}}),
                json!({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"b": "2"}}}}),
            ),
        ),
        typed(
            "io.k8s.api.networking.v1.NetworkPolicy",
            case(
                "networkpolicy ingress rules replaced",
                json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}, {}]}}),
                json!({"spec": {"ingress": [{"ports": [{"port": 443}]}]}}),
                json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 443}]}]}}),
            ),
        ),
        typed(
            "io.k8s.api.rbac.v1.ClusterRole",
            case(
                "clusterrole rules replaced",
                json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
                json!({"rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
                json!({"rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
            ),
        ),
        typed(
            "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
            case(
                "hpa metrics replaced, conditions merged by type",
                json!({
                    "spec": {"maxReplicas": 3, "metrics": [{"type": "Resource"}, {"type": "Pods"}]},
                    "status": {"conditions": [
                        {"type": "AbleToScale", "status": "True"},
                        {"type": "ScalingActive", "status": "True"}
                    ]}
                }),
                json!({
                    "spec": {"metrics": [{"type": "External"}]},
                    "status": {"conditions": [{"type": "ScalingActive", "status": "False"}]}
                }),
                json!({
                    "spec": {"maxReplicas": 3, "metrics": [{"type": "External"}]},
                    "status": {"conditions": [
                        {"type": "AbleToScale", "status": "True"},
                        {"type": "ScalingActive", "status": "False"}
                    ]}
                }),
            ),
        ),
        typed(
            "com.example.v1.Widget",
            case(
                "unknown type gets JSON merge patch",
                json!({"spec": {"items": [{"name": "a"}], "x": 1, "y": 2}}),
                json!({"spec": {"items": [{"name": "b"}], "x": null}}),
                json!({"spec": {"items": [{"name": "b"}], "y": 2}}),
            ),
        ),
    ]
}

/// Fails on any directive key left in `v`.
fn assert_no_directives(name: &str, v: &Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                assert!(
                    !(k == "$patch"
                        || k == "$retainKeys"
                        || k.starts_with("$setElementOrder")
                        || k.starts_with("$deleteFromPrimitiveList")),
                    "{name}: directive {k} left in the result"
                );
                assert_no_directives(name, x);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| assert_no_directives(name, x)),
        _ => {}
    }
}

#[test]
fn table() {
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for c in &cases {
        match apply(&c.original, &c.patch, c.type_name) {
            Ok(got) => {
                assert_no_directives(c.name, &got);
                if got != c.expected {
                    failures.push(format!(
                        "{}:\n  got:      {got}\n  expected: {}",
                        c.name, c.expected
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: error {e}", c.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

struct ErrCase {
    name: &'static str,
    original: Value,
    patch: Value,
    kind: PatchErrorKind,
    message: &'static str,
}

fn err_case(
    name: &'static str,
    patch: Value,
    kind: PatchErrorKind,
    message: &'static str,
) -> ErrCase {
    ErrCase {
        name,
        original: deployment(),
        patch,
        kind,
        message,
    }
}

#[test]
fn errors() {
    use PatchErrorKind::*;
    let cases = vec![
        err_case(
            "list item missing its merge key",
            pod_spec_patch(json!({"containers": [{"image": "x"}]})),
            Internal,
            "map: map[image:x] does not contain declared merge key: name",
        ),
        err_case(
            "delete item missing its merge key",
            pod_spec_patch(json!({"containers": [{"$patch": "delete"}]})),
            Internal,
            "map: map[$patch:delete] does not contain declared merge key: name",
        ),
        err_case(
            "unknown $patch in a map",
            pod_spec_patch(json!({"nodeSelector": {"$patch": "bogus"}})),
            Internal,
            "unknown patch type: bogus in map: map[$patch:bogus]",
        ),
        err_case(
            "unknown $patch in a list item",
            pod_spec_patch(json!({"containers": [{"name": "app", "env": [{"name": "A", "$patch": "nope"}]}]})),
            Internal,
            "unknown patch type: nope in map: map[$patch:nope name:A]",
        ),
        err_case(
            "$patch: merge in a map",
            json!({"metadata": {"labels": {"$patch": "merge", "x": "y"}}}),
            Internal,
            "unknown patch type: merge in map: map[$patch:merge x:y]",
        ),
        err_case(
            "$patch: merge in a list",
            pod_spec_patch(json!({"containers": [{"name": "app", "$patch": "merge"}]})),
            Internal,
            "merging lists cannot yet be specified in the patch",
        ),
        err_case(
            "non-string $patch",
            json!({"spec": {"strategy": {"$patch": 1}}}),
            Internal,
            "unknown patch type: %!s(int64=1) in map: map[$patch:1]",
        ),
        err_case(
            "$deleteFromPrimitiveList without a field",
            json!({"metadata": {"$deleteFromPrimitiveList": ["f1"]}}),
            BadRequest,
            "invalid patch format of primitive list",
        ),
        err_case(
            "$retainKeys not a list",
            json!({"spec": {"strategy": {"$retainKeys": "type", "type": "Recreate"}}}),
            BadRequest,
            "invalid patch format of retainKeys",
        ),
        err_case(
            "patched key missing from $retainKeys",
            json!({"spec": {"strategy": {
                "$retainKeys": ["type"],
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1}
            }}}),
            BadRequest,
            "invalid patch format of retainKeys",
        ),
        err_case(
            "$setElementOrder contradicting the patch list",
            pod_spec_patch(json!({
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                "containers": [{"name": "sidecar", "image": "s"}, {"name": "app", "image": "a"}]
            })),
            Internal,
            "the order in patch list:\n[map[image:s name:sidecar] map[image:a name:app]]\n doesn't match $setElementOrder list:\n[map[name:app] map[name:sidecar]]",
        ),
        err_case(
            "$setElementOrder not a list",
            pod_spec_patch(json!({"$setElementOrder/containers": "app"})),
            Internal,
            "expected a []interface {}, but received a string",
        ),
        err_case(
            "$setElementOrder without a field",
            pod_spec_patch(json!({"$setElementOrder": []})),
            BadRequest,
            "invalid patch format of setElementOrder list",
        ),
        err_case(
            "list element types differ",
            json!({"metadata": {"finalizers": [1]}}),
            Internal,
            "list element types are not identical: [[f1 f2] [1]]",
        ),
        ErrCase {
            name: "list of lists",
            original: set(deployment(), "/metadata/finalizers", json!([])),
            patch: json!({"metadata": {"finalizers": [["a"]]}}),
            kind: Unprocessable,
            message: "lists of lists are not supported",
        },
        ErrCase {
            name: "maps in a merged list of primitives",
            original: set(deployment(), "/metadata/finalizers", json!([])),
            patch: json!({"metadata": {"finalizers": [{"a": 1}]}}),
            kind: Internal,
            message: "cannot merge lists without merge key for type string",
        },
        err_case(
            "patch not an object",
            json!([1]),
            BadRequest,
            "invalid JSON document",
        ),
    ];
    let mut failures = Vec::new();
    for c in &cases {
        match apply(&c.original, &c.patch, DEPLOYMENT) {
            Ok(v) => failures.push(format!("{}: no error, got {v}", c.name)),
            Err(e) if e.kind != c.kind || e.message != c.message => failures.push(format!(
                "{}: got {:?} {:?}, expected {:?} {:?}",
                c.name, e.kind, e.message, c.kind, c.message
            )),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_codes() {
    let e = apply(&deployment(), &json!("x"), DEPLOYMENT).unwrap_err();
    assert_eq!(e.code(), 400);
    assert_eq!(e.to_string(), "invalid JSON document");
}

/// Every annotated field of a type kapi has a schema for is a property of
/// that schema, under the same JSON name.
#[test]
fn metadata_matches_schemas() {
    let mut checked = 0;
    for m in meta::FIELDS {
        let Some(node) = Node::named(m.type_name) else {
            continue;
        };
        let props = node
            .schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        assert!(
            props.is_some_and(|p| p.contains_key(m.field)),
            "{}.{} is not in kapi's schema",
            m.type_name,
            m.field
        );
        checked += 1;
    }
    assert!(checked > 200, "only {checked} fields checked");
}

/// The pod template is reached through every workload kind.
#[test]
fn navigation_reaches_pod_templates() {
    let paths: &[(&str, &[&str])] = &[
        (
            "io.k8s.api.apps.v1.Deployment",
            &["spec", "template", "spec"],
        ),
        (
            "io.k8s.api.apps.v1.DaemonSet",
            &["spec", "template", "spec"],
        ),
        (
            "io.k8s.api.apps.v1.StatefulSet",
            &["spec", "template", "spec"],
        ),
        (
            "io.k8s.api.apps.v1.ReplicaSet",
            &["spec", "template", "spec"],
        ),
        (
            "io.k8s.api.core.v1.ReplicationController",
            &["spec", "template", "spec"],
        ),
        ("io.k8s.api.core.v1.PodTemplate", &["template", "spec"]),
        ("io.k8s.api.batch.v1.Job", &["spec", "template", "spec"]),
        (
            "io.k8s.api.batch.v1.CronJob",
            &["spec", "jobTemplate", "spec", "template", "spec"],
        ),
        ("io.k8s.api.core.v1.Pod", &["spec"]),
    ];
    for (root, path) in paths {
        let mut node = Node::named(root).unwrap_or_else(|| panic!("no schema for {root}"));
        for key in *path {
            node = node.field(key).0;
        }
        assert_eq!(node.name, Some("io.k8s.api.core.v1.PodSpec"), "{root}");
        let (containers, m) = node.field("containers");
        assert_eq!(m.and_then(|m| m.merge_key), Some("name"), "{root}");
        let (env, m) = containers.items().field("env");
        assert_eq!(m.and_then(|m| m.merge_key), Some("name"), "{root}");
        assert_eq!(env.items().name, Some("io.k8s.api.core.v1.EnvVar"));
    }
    let labels = Node::named(DEPLOYMENT)
        .unwrap()
        .field("metadata")
        .0
        .field("labels")
        .0;
    assert!(labels.is_map());
}

#[test]
fn type_names_of_builtins() {
    let mut named = 0;
    for d in crate::api::builtin::BUILTINS {
        let Some(f) = d.schema else { continue };
        let name = type_name_of(f).unwrap_or_else(|| panic!("{} has no type name", d.kind));
        assert!(
            name.ends_with(&format!(".{}", d.kind)),
            "{name} for {}",
            d.kind
        );
        assert!(Node::named(&name).is_some(), "{name} has no schema");
        named += 1;
    }
    assert!(named > 50);
}
