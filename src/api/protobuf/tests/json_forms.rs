//! Built-in objects decode into the JSON upstream prints: each Go type's
//! JSON form (Time, MicroTime, Duration, IntOrString, Quantity, RawExtension,
//! JSONSchemaPropsOr*), embedded structs inlined, proto2 presence kept.

use super::*;

#[test]
fn configmap_data_binary_data_labels_time() {
    let v = decode(&encode("v1", "ConfigMap", &configmap())).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "x",
                "namespace": "default",
                "labels": {"app": "web", "tier": "front"},
                "creationTimestamp": "2026-11-21T06:48:50Z"
            },
            "data": {"a": "b", "empty": ""},
            "binaryData": {"bin": "AAEC/w=="}
        })
    );
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert!(keys.contains(&&"apiVersion".to_string()));
}

#[test]
fn configmap_deserializes_into_k8s_openapi() {
    let v = decode(&encode("v1", "ConfigMap", &configmap())).unwrap();
    let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(v).unwrap();
    assert_eq!(cm.metadata.name.as_deref(), Some("x"));
    assert_eq!(cm.data.unwrap()["a"], "b");
    assert_eq!(cm.binary_data.unwrap()["bin"].0, vec![0u8, 1, 2, 255]);
    assert_eq!(
        cm.metadata.creation_timestamp.unwrap().0.to_string(),
        "2026-11-21T06:48:50Z"
    );
}

#[test]
fn zero_creation_timestamp_is_left_out_as_upstream() {
    // Go's client marshals a zero metav1.Time as an empty message;
    // since v1.34 upstream's JSON omits a zero creationTimestamp
    // (`omitzero`, kubernetes#130989) instead of writing null.
    let mut cm = configmap();
    cm.metadata.as_mut().unwrap().creation_timestamp = Some(meta::Time::default());
    let v = decode(&encode("v1", "ConfigMap", &cm)).unwrap();
    assert!(
        !v["metadata"]
            .as_object()
            .unwrap()
            .contains_key("creationTimestamp"),
        "{v}"
    );
}

#[test]
fn deployment_with_zero_replicas_and_int_or_string() {
    let d = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: s("web"),
            labels: labels(&[("app", "web")]),
            ..Default::default()
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: labels(&[("app", "web")]),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: labels(&[("app", "web")]),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![container()],
                    ..Default::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: s("RollingUpdate"),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: None,
                    }),
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: None,
                        str_val: s("25%"),
                    }),
                }),
            }),
            progress_deadline_seconds: Some(600),
            ..Default::default()
        }),
        status: None,
    };
    let v = decode(&encode("apps/v1", "Deployment", &d)).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{
                        "name": "nginx",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                        "securityContext": {}
                    }]}
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}
                },
                "progressDeadlineSeconds": 600
            }
        })
    );
    let typed: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(v).unwrap();
    assert_eq!(typed.spec.unwrap().replicas, Some(0));
}

#[test]
fn pod_with_status_ips_and_managed_fields() {
    let fields = br#"{"f:data":{"f:a":{}}}"#.to_vec();
    let p = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: s("p"),
            namespace: s("default"),
            uid: s("6f1c9a5e-0000-4000-8000-000000000001"),
            generation: Some(0),
            creation_timestamp: Some(time(T)),
            managed_fields: vec![meta::ManagedFieldsEntry {
                manager: s("kubectl-create"),
                operation: s("Update"),
                api_version: s("v1"),
                time: Some(time(T)),
                fields_type: s("FieldsV1"),
                fields_v1: Some(meta::FieldsV1 { raw: Some(fields) }),
                subresource: None,
            }],
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![container()],
            restart_policy: s("Always"),
            termination_grace_period_seconds: Some(30),
            host_network: Some(false),
            ..Default::default()
        }),
        status: Some(core::PodStatus {
            phase: s("Running"),
            host_ip: s("10.0.0.1"),
            pod_ip: s("10.244.0.5"),
            pod_ips: vec![core::PodIp {
                ip: s("10.244.0.5"),
            }],
            start_time: Some(time(T)),
            ..Default::default()
        }),
    };
    let v = decode(&encode("v1", "Pod", &p)).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "namespace": "default",
                "uid": "6f1c9a5e-0000-4000-8000-000000000001",
                "creationTimestamp": "2026-11-21T06:48:50Z",
                "managedFields": [{
                    "manager": "kubectl-create",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-21T06:48:50Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}}
                }]
            },
            "spec": {
                "containers": [{
                    "name": "nginx",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                    "securityContext": {}
                }],
                "restartPolicy": "Always",
                // Go writes `generation: 0` and `hostNetwork: false` in
                // protobuf; its JSON leaves both out (non-pointer omitempty).
                "terminationGracePeriodSeconds": 30
            },
            "status": {
                "phase": "Running",
                "hostIP": "10.0.0.1",
                "podIP": "10.244.0.5",
                "podIPs": [{"ip": "10.244.0.5"}],
                "startTime": "2026-11-21T06:48:50Z"
            }
        })
    );
    let _: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).unwrap();
}

#[test]
fn embedded_structs_are_inlined() {
    let spec = core::PodSpec {
        containers: vec![core::Container {
            name: s("app"),
            env_from: vec![core::EnvFromSource {
                config_map_ref: Some(core::ConfigMapEnvSource {
                    local_object_reference: Some(core::LocalObjectReference { name: s("cfg") }),
                    optional: Some(true),
                }),
                ..Default::default()
            }],
            liveness_probe: Some(core::Probe {
                handler: Some(core::ProbeHandler {
                    http_get: Some(core::HttpGetAction {
                        path: s("/healthz"),
                        port: Some(IntOrString {
                            r#type: Some(1),
                            int_val: Some(0),
                            str_val: s("http"),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                period_seconds: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        }],
        volumes: vec![core::Volume {
            name: s("cfg"),
            volume_source: Some(core::VolumeSource {
                config_map: Some(core::ConfigMapVolumeSource {
                    local_object_reference: Some(core::LocalObjectReference { name: s("cfg") }),
                    default_mode: Some(0o644),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        }],
        ..Default::default()
    };
    let v = decode_message("io.k8s.api.core.v1.PodSpec", &spec.encode_to_vec()).unwrap();
    assert_eq!(
        v,
        json!({
            "containers": [{
                "name": "app",
                "envFrom": [{"configMapRef": {"name": "cfg", "optional": true}}],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": "http"},
                    "periodSeconds": 10
                }
            }],
            "volumes": [{"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}]
        })
    );
    let _: k8s_openapi::api::core::v1::PodSpec = serde_json::from_value(v).unwrap();
}

#[test]
fn service_cluster_ip_and_target_port() {
    let svc = core::Service {
        metadata: Some(meta::ObjectMeta {
            name: s("web"),
            ..Default::default()
        }),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                name: s("http"),
                protocol: s("TCP"),
                port: Some(80),
                target_port: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(8080),
                    str_val: s(""),
                }),
                ..Default::default()
            }],
            selector: labels(&[("app", "web")]),
            cluster_ip: s("10.96.0.10"),
            cluster_ips: vec!["10.96.0.10".to_string()],
            r#type: s("ClusterIP"),
            ip_families: vec!["IPv4".to_string()],
            ..Default::default()
        }),
        status: None,
    };
    let v = decode(&encode("v1", "Service", &svc)).unwrap();
    assert_eq!(
        v["spec"],
        json!({
            "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
            "selector": {"app": "web"},
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "type": "ClusterIP",
            "ipFamilies": ["IPv4"]
        })
    );
}

#[test]
fn namespace_and_lease_micro_time() {
    let ns = core::Namespace {
        metadata: Some(meta::ObjectMeta {
            name: s("team-a"),
            ..Default::default()
        }),
        spec: None,
        status: None,
    };
    assert_eq!(
        decode(&encode("v1", "Namespace", &ns)).unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    );
    let lease = coordination::Lease {
        metadata: Some(meta::ObjectMeta {
            name: s("node-1"),
            ..Default::default()
        }),
        spec: Some(coordination::LeaseSpec {
            holder_identity: s("node-1"),
            lease_duration_seconds: Some(40),
            renew_time: Some(meta::MicroTime {
                seconds: Some(T),
                nanos: Some(123_456_789),
            }),
            ..Default::default()
        }),
    };
    let v = decode(&encode("coordination.k8s.io/v1", "Lease", &lease)).unwrap();
    assert_eq!(
        v["spec"],
        json!({
            "holderIdentity": "node-1",
            "leaseDurationSeconds": 40,
            "renewTime": "2026-11-21T06:48:50.123456Z"
        })
    );
}

#[test]
fn crd_schema_json_and_or_types() {
    let props = apiext::JsonSchemaProps {
        r#type: s("object"),
        properties: [(
            "spec".to_string(),
            apiext::JsonSchemaProps {
                r#type: s("object"),
                x_kubernetes_preserve_unknown_fields: Some(true),
                default: Some(apiext::Json {
                    raw: Some(br#"{"size":3}"#.to_vec()),
                }),
                maximum: Some(10.0),
                minimum: Some(0.5),
                additional_properties: Some(Box::new(apiext::JsonSchemaPropsOrBool {
                    allows: Some(true),
                    schema: None,
                })),
                items: Some(Box::new(apiext::JsonSchemaPropsOrArray {
                    schema: Some(Box::new(apiext::JsonSchemaProps {
                        r#type: s("string"),
                        ..Default::default()
                    })),
                    j_son_schemas: vec![],
                })),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let v = decode_message(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        &props.encode_to_vec(),
    )
    .unwrap();
    assert_eq!(
        v,
        json!({
            "type": "object",
            "properties": {"spec": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "default": {"size": 3},
                "maximum": 10,
                "minimum": 0.5,
                "additionalProperties": true,
                "items": {"type": "string"}
            }}
        })
    );
}

#[test]
fn raw_extension_is_json_or_nested_protobuf() {
    let ev = meta::WatchEvent {
        r#type: s("ADDED"),
        object: Some(RawExtension {
            raw: Some(encode("v1", "ConfigMap", &configmap())),
        }),
    };
    let v = decode(&encode("meta.k8s.io/v1", "WatchEvent", &ev)).unwrap();
    assert_eq!(v["type"], "ADDED");
    assert_eq!(v["object"]["kind"], "ConfigMap");
    assert_eq!(v["object"]["data"]["a"], "b");

    let rev = apps::ControllerRevision {
        metadata: None,
        data: Some(RawExtension {
            raw: Some(br#"{"spec":{"template":{}}}"#.to_vec()),
        }),
        revision: Some(2),
    };
    let v = decode(&encode("apps/v1", "ControllerRevision", &rev)).unwrap();
    assert_eq!(v["data"], json!({"spec": {"template": {}}}));
    assert_eq!(v["revision"], 2);
}

#[test]
fn verbs_and_status_from_meta() {
    let list = meta::APIResourceList {
        group_version: s("v1"),
        resources: vec![meta::APIResource {
            name: s("pods"),
            namespaced: Some(true),
            kind: s("Pod"),
            verbs: Some(meta::Verbs {
                items: vec!["get".into(), "list".into()],
            }),
            ..Default::default()
        }],
    };
    let v = decode(&encode("v1", "APIResourceList", &list)).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [{"name": "pods", "namespaced": true, "kind": "Pod", "verbs": ["get", "list"]}]
        })
    );
    let st = meta::Status {
        status: s("Failure"),
        code: Some(404),
        reason: s("NotFound"),
        ..Default::default()
    };
    let v = decode(&encode("v1", "Status", &st)).unwrap();
    assert_eq!(
        v,
        json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 404, "reason": "NotFound"})
    );
}

#[test]
fn go_duration_strings() {
    const S: i64 = 1_000_000_000;
    assert_eq!(go_duration(0), "0s");
    assert_eq!(go_duration(30 * S), "30s");
    assert_eq!(go_duration(3600 * S), "1h0m0s");
    assert_eq!(go_duration(S + S / 2), "1.5s");
    assert_eq!(go_duration(90 * 60 * S), "1h30m0s");
    assert_eq!(go_duration(1_500_000), "1.5ms");
    assert_eq!(go_duration(100_000), "100µs");
    assert_eq!(go_duration(42), "42ns");
    assert_eq!(go_duration(-2 * S), "-2s");
    let d = meta::Duration {
        duration: Some(5 * 60 * S),
    };
    assert_eq!(
        decode_message(
            "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
            &d.encode_to_vec()
        )
        .unwrap(),
        json!("5m0s")
    );
}
