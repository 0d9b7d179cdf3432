//! Objects at rest in either encoding (`--storage-media-type`): written in
//! protobuf and read back by a kapi writing JSON and the other way round,
//! and an etcd written as kube-apiserver writes it (protobuf built by an
//! independent encoder, the `k8s-pb` crate's prost types, with Go's zero
//! values) served to kubectl.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use common::{runtime, Kapi};
use kapi::storage::backend::Backend;
use prost::Message;
use serde_json::{json, Value};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A collection and an object to create in it (name `enc`).
fn objects() -> Vec<(&'static str, Value)> {
    let pod_spec = json!({"containers": [{"name": "c", "image": "nginx:1.27",
        "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "250m", "memory": "64Mi"}}}]});
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": pod_spec});
    let selector = json!({"matchLabels": {"app": "x"}});
    vec![
        (
            "/api/v1/namespaces/enc/configmaps",
            json!({"data": {"a": "1", "b": ""}, "binaryData": {"c": "AAEC"}}),
        ),
        (
            "/api/v1/namespaces/enc/secrets",
            json!({"type": "Opaque", "stringData": {"k": "v"}}),
        ),
        (
            "/api/v1/namespaces/enc/services",
            json!({"spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": "http"}]}}),
        ),
        (
            "/api/v1/namespaces/enc/serviceaccounts",
            json!({"automountServiceAccountToken": false}),
        ),
        ("/api/v1/namespaces/enc/pods", json!({"spec": pod_spec})),
        (
            "/api/v1/namespaces/enc/limitranges",
            json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}}),
        ),
        (
            "/api/v1/namespaces/enc/resourcequotas",
            json!({"spec": {"hard": {"pods": "10"}}}),
        ),
        (
            "/api/v1/namespaces/enc/persistentvolumeclaims",
            json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        (
            "/apis/apps/v1/namespaces/enc/deployments",
            json!({"spec": {"replicas": 0, "selector": selector, "template": template,
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}),
        ),
        (
            "/apis/apps/v1/namespaces/enc/statefulsets",
            json!({"spec": {"replicas": 0, "serviceName": "s", "selector": selector, "template": template}}),
        ),
        (
            "/apis/apps/v1/namespaces/enc/daemonsets",
            json!({"spec": {"selector": selector, "template": template}}),
        ),
        (
            "/apis/batch/v1/namespaces/enc/jobs",
            json!({"spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
        (
            "/apis/batch/v1/namespaces/enc/cronjobs",
            json!({"spec": {"schedule": "*/5 * * * *", "suspend": true, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/enc/roles",
            json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/enc/rolebindings",
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                "subjects": [{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/enc/leases",
            json!({"spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2024-05-06T07:08:09.123456Z"}}),
        ),
        (
            "/apis/discovery.k8s.io/v1/namespaces/enc/endpointslices",
            json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": true}}],
                "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}),
        ),
        (
            "/apis/policy/v1/namespaces/enc/poddisruptionbudgets",
            json!({"spec": {"minAvailable": 1, "selector": selector}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/enc/networkpolicies",
            json!({"spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}),
        ),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            json!({"value": 1000, "description": "enc"}),
        ),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json!({"metadata": {"name": "widgets.enc.example.com"}, "spec": {"group": "enc.example.com",
                "scope": "Namespaced", "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object",
                        "properties": {"size": {"type": "integer"}}}}}}}]}}),
        ),
    ]
}

/// The path of the object `objects()` creates from `collection`.
fn object_path(collection: &str, body: &Value) -> String {
    match body.pointer("/metadata/name").and_then(Value::as_str) {
        Some(name) => format!("{collection}/{name}"),
        None => format!("{collection}/enc"),
    }
}

async fn request(
    k: &Kapi,
    method: reqwest::Method,
    path: &str,
    body: Option<(&str, Value)>,
) -> (u16, Value) {
    let mut req = k
        .admin_client()
        .request(method, format!("{}{path}", k.url))
        .header("Accept", "application/json");
    if let Some((ct, b)) = body {
        req = req.header("Content-Type", ct).body(b.to_string());
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    let bytes = r.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Every object of `objects()` as a GET answers it, by path.
async fn read_all(k: &Kapi) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (collection, body) in objects() {
        let path = object_path(collection, &body);
        let (status, v) = request(k, reqwest::Method::GET, &path, None).await;
        assert_eq!(status, 200, "GET {path}: {v}");
        out.insert(path, v);
    }
    let widget = "/apis/enc.example.com/v1/namespaces/enc/widgets/w";
    let (status, v) = request(k, reqwest::Method::GET, widget, None).await;
    assert_eq!(status, 200, "GET {widget}: {v}");
    out.insert(widget.to_string(), v);
    out
}

/// [`read_all`] once the built-in controllers are done with the objects
/// (the quota controller writes a ResourceQuota's status after its create):
/// two reads in a row that agree.
async fn settled(k: &Kapi) -> BTreeMap<String, Value> {
    let mut last = read_all(k).await;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = read_all(k).await;
        if now == last {
            return now;
        }
        last = now;
    }
    panic!("objects never stopped changing");
}

/// `kapi etcd dump` of a stopped kapi's data dir: encoding by key.
fn dump_encodings(data_dir: &std::path::Path) -> BTreeMap<String, String> {
    let out = std::process::Command::new(common::kapi_bin())
        .args(["etcd", "dump", "-o", "json", "--data-dir"])
        .arg(data_dir)
        .output()
        .expect("kapi etcd dump");
    assert!(
        out.status.success(),
        "dump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("dump json");
    v["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap_or_default().to_string(),
                e["encoding"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn encoding_of<'a>(dump: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    dump.get(key).map(String::as_str).unwrap_or_else(|| {
        panic!(
            "{key} not in the dump: {:?}",
            dump.keys().collect::<Vec<_>>()
        )
    })
}

/// The storage keys of the objects `objects()` creates (and the widget).
const KEYS: &[&str] = &[
    "/registry/configmaps/enc/enc",
    "/registry/secrets/enc/enc",
    "/registry/services/specs/enc/enc",
    "/registry/serviceaccounts/enc/enc",
    "/registry/pods/enc/enc",
    "/registry/limitranges/enc/enc",
    "/registry/resourcequotas/enc/enc",
    "/registry/persistentvolumeclaims/enc/enc",
    "/registry/deployments/enc/enc",
    "/registry/statefulsets/enc/enc",
    "/registry/daemonsets/enc/enc",
    "/registry/jobs/enc/enc",
    "/registry/cronjobs/enc/enc",
    "/registry/roles/enc/enc",
    "/registry/rolebindings/enc/enc",
    "/registry/clusterroles/enc",
    "/registry/leases/enc/enc",
    "/registry/endpointslices/enc/enc",
    "/registry/poddisruptionbudgets/enc/enc",
    "/registry/networkpolicies/enc/enc",
    "/registry/priorityclasses/enc",
    "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.enc.example.com",
    "/registry/namespaces/enc",
];
const WIDGET_KEY: &str = "/registry/enc.example.com/widgets/enc/w";

#[test]
fn objects_written_in_one_encoding_are_read_in_the_other() {
    let rt = runtime();
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();

    // 1. Written in protobuf.
    let mut k = Kapi::start_in(dir, &["--storage-media-type", PROTOBUF]);
    let written = rt.block_on(async {
        let namespace = json!({"metadata": {"name": "enc"}});
        let (status, v) = request(
            &k,
            reqwest::Method::POST,
            "/api/v1/namespaces",
            Some(("application/json", namespace)),
        )
        .await;
        assert_eq!(status, 201, "POST namespace: {v}");
        for (collection, mut body) in objects() {
            if body.pointer("/metadata/name").is_none() {
                body["metadata"] = json!({"name": "enc", "labels": {"written": "protobuf"}});
            }
            let (status, v) = request(
                &k,
                reqwest::Method::POST,
                collection,
                Some(("application/json", body)),
            )
            .await;
            assert_eq!(status, 201, "POST {collection}: {v}");
        }
        // The custom resource, once its CRD is served.
        let widgets = "/apis/enc.example.com/v1/namespaces/enc/widgets";
        let mut created = false;
        for _ in 0..100 {
            let (status, _) = request(
                &k,
                reqwest::Method::POST,
                widgets,
                Some((
                    "application/json",
                    json!({"apiVersion": "enc.example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"size": 3}}),
                )),
            )
            .await;
            if status == 201 {
                created = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(created, "the Widget CRD was never served");
        settled(&k).await
    });
    assert!(k.terminate().success());
    let dump = dump_encodings(dir);
    for key in KEYS {
        assert_eq!(encoding_of(&dump, key), "protobuf", "{key}");
    }
    // Custom resources have no protobuf form, upstream or here.
    assert_eq!(encoding_of(&dump, WIDGET_KEY), "json");

    // 2. Read by a kapi writing JSON: every object as it was answered.
    let k = Kapi::start_in(dir, &[]);
    let changed = rt.block_on(async {
        let read = read_all(&k).await;
        for (path, before) in &written {
            assert_eq!(read.get(path), Some(before), "{path} after the restart");
        }
        // Half of them rewritten, now in JSON.
        let mut changed = BTreeMap::new();
        for (i, path) in written.keys().enumerate() {
            if i % 2 == 1 {
                continue;
            }
            let (status, v) = request(
                &k,
                reqwest::Method::PATCH,
                path,
                Some((
                    "application/merge-patch+json",
                    json!({"metadata": {"labels": {"written": "json"}}}),
                )),
            )
            .await;
            assert_eq!(status, 200, "PATCH {path}: {v}");
            changed.insert(path.clone(), v);
        }
        // As the controllers leave them (a quota's status, say).
        let now = settled(&k).await;
        changed
            .into_keys()
            .filter_map(|p| now.get(&p).cloned().map(|v| (p, v)))
            .collect::<BTreeMap<_, _>>()
    });
    let mut k = k;
    assert!(k.terminate().success());
    let dump = dump_encodings(dir);
    let encodings: std::collections::BTreeSet<&str> =
        KEYS.iter().map(|key| encoding_of(&dump, key)).collect();
    assert_eq!(
        encodings,
        ["json", "protobuf"].into_iter().collect(),
        "a mixed store after writes in JSON"
    );

    // 3. Read by a kapi writing protobuf: the mix, as last answered.
    let mut k = Kapi::start_in(dir, &["--storage-media-type", PROTOBUF]);
    rt.block_on(async {
        let read = read_all(&k).await;
        for (path, before) in &written {
            let want = changed.get(path).unwrap_or(before);
            assert_eq!(
                read.get(path),
                Some(want),
                "{path} after the second restart"
            );
        }
        // kubectl reads the whole mixed namespace.
    });
    let out = k
        .kubectl()
        .args([
            "get",
            "all,cm,secrets,roles,rolebindings,leases",
            "-n",
            "enc",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = String::from_utf8_lossy(&out.stdout);
    for want in [
        "configmap/enc",
        "deployment.apps/enc",
        "role.rbac.authorization.k8s.io/enc",
    ] {
        assert!(names.contains(want), "{want} missing from {names}");
    }
    assert!(k.terminate().success());
}

// ---- an etcd written by kube-apiserver ----

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;

/// `k8s\0` + runtime.Unknown, as kube-apiserver's storage codec writes it.
fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Bytes {
    let u = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\x00".to_vec();
    out.extend(u.encode_to_vec());
    Bytes::from(out)
}

/// ObjectMeta as Go writes it: every non-pointer field, empty or not, and
/// no resourceVersion (storage clears it).
fn go_meta(name: &str, namespace: &str, uid: &str) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: Some(name.into()),
        generate_name: Some(String::new()),
        namespace: Some(namespace.into()),
        self_link: Some(String::new()),
        uid: Some(uid.into()),
        resource_version: Some(String::new()),
        generation: Some(1),
        creation_timestamp: Some(meta::Time {
            seconds: Some(1_700_000_000),
            nanos: Some(0),
        }),
        labels: [("app".to_string(), "web".to_string())].into(),
        ..Default::default()
    }
}

/// A zero `metav1.Time`: Go writes an empty message.
fn zero_time() -> Option<meta::Time> {
    Some(meta::Time::default())
}

fn go_deployment() -> Bytes {
    let container = core::Container {
        name: Some("web".into()),
        image: Some("nginx:1.27".into()),
        working_dir: Some(String::new()),
        termination_message_path: Some("/dev/termination-log".into()),
        termination_message_policy: Some("File".into()),
        image_pull_policy: Some("IfNotPresent".into()),
        stdin: Some(false),
        stdin_once: Some(false),
        tty: Some(false),
        resources: Some(core::ResourceRequirements::default()),
        ..Default::default()
    };
    let pod_spec = core::PodSpec {
        containers: vec![container],
        restart_policy: Some("Always".into()),
        termination_grace_period_seconds: Some(30),
        dns_policy: Some("ClusterFirst".into()),
        service_account_name: Some(String::new()),
        service_account: Some(String::new()),
        node_name: Some(String::new()),
        host_network: Some(false),
        host_pid: Some(false),
        host_ipc: Some(false),
        security_context: Some(core::PodSecurityContext::default()),
        hostname: Some(String::new()),
        subdomain: Some(String::new()),
        scheduler_name: Some("default-scheduler".into()),
        priority_class_name: Some(String::new()),
        ..Default::default()
    };
    let d = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            annotations: [(
                "deployment.kubernetes.io/revision".to_string(),
                "1".to_string(),
            )]
            .into(),
            ..go_meta("web", "legacy", "5b0c6c8e-7a55-4a38-9c6b-1f1f7e1e0001")
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(2),
            selector: Some(meta::LabelSelector {
                match_labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    name: Some(String::new()),
                    generate_name: Some(String::new()),
                    namespace: Some(String::new()),
                    self_link: Some(String::new()),
                    uid: Some(String::new()),
                    resource_version: Some(String::new()),
                    generation: Some(0),
                    creation_timestamp: zero_time(),
                    labels: [("app".to_string(), "web".to_string())].into(),
                    ..Default::default()
                }),
                spec: Some(pod_spec),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".into()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(k8s_pb::apimachinery::pkg::util::intstr::IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".into()),
                    }),
                    max_surge: Some(k8s_pb::apimachinery::pkg::util::intstr::IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".into()),
                    }),
                }),
            }),
            min_ready_seconds: Some(0),
            revision_history_limit: Some(10),
            paused: Some(false),
            progress_deadline_seconds: Some(600),
        }),
        status: Some(apps::DeploymentStatus {
            observed_generation: Some(0),
            replicas: Some(0),
            updated_replicas: Some(0),
            ready_replicas: Some(0),
            available_replicas: Some(0),
            unavailable_replicas: Some(0),
            terminating_replicas: None,
            conditions: vec![],
            collision_count: None,
        }),
    };
    envelope("apps/v1", "Deployment", d.encode_to_vec())
}

fn go_namespace() -> Bytes {
    let ns = core::Namespace {
        metadata: Some(meta::ObjectMeta {
            namespace: Some(String::new()),
            generation: Some(0),
            labels: [(
                "kubernetes.io/metadata.name".to_string(),
                "legacy".to_string(),
            )]
            .into(),
            ..go_meta("legacy", "", "5b0c6c8e-7a55-4a38-9c6b-1f1f7e1e0002")
        }),
        spec: Some(core::NamespaceSpec {
            finalizers: vec!["kubernetes".into()],
        }),
        status: Some(core::NamespaceStatus {
            phase: Some("Active".into()),
            conditions: vec![],
        }),
    };
    envelope("v1", "Namespace", ns.encode_to_vec())
}

fn go_configmap() -> Bytes {
    let cm = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            generation: Some(0),
            ..go_meta("settings", "legacy", "5b0c6c8e-7a55-4a38-9c6b-1f1f7e1e0003")
        }),
        immutable: None,
        data: [("mode".to_string(), "fast".to_string())].into(),
        binary_data: Default::default(),
    };
    envelope("v1", "ConfigMap", cm.encode_to_vec())
}

#[test]
fn serves_an_etcd_written_by_kube_apiserver() {
    let rt = runtime();
    let cluster = common::etcd::EtcdCluster::start(1);
    let endpoints = cluster.endpoints();
    let raw = rt.block_on(async {
        let cfg = kapi::storage::etcd::EtcdConfig {
            endpoints: endpoints.clone(),
            ..Default::default()
        };
        let raw = kapi::storage::etcd::Etcd::connect(&cfg, "/registry")
            .await
            .expect("connect to etcd");
        for (key, value) in [
            ("/registry/namespaces/legacy", go_namespace()),
            ("/registry/configmaps/legacy/settings", go_configmap()),
            ("/registry/deployments/legacy/web", go_deployment()),
            // A value nothing can decode: a ConfigMap envelope around garbage.
            (
                "/registry/configmaps/legacy/broken",
                envelope("v1", "ConfigMap", vec![0x0a, 0xff, 0xff, 0xff]),
            ),
        ] {
            raw.create(key, value).await.expect("put");
        }
        raw
    });

    let etcd_servers = endpoints.join(",");
    let mut k = Kapi::start(&["--etcd-servers", &etcd_servers]);
    let kubectl = |args: &[&str]| {
        let out = k.kubectl().args(args).output().expect("kubectl");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    // The undecodable key is left out; the rest is listed.
    let (ok, out, err) = kubectl(&["get", "configmaps", "-n", "legacy", "-o", "name"]);
    assert!(ok, "{err}");
    assert!(out.contains("configmap/settings"), "{out}");
    assert!(!out.contains("broken"), "{out}");

    // Served as upstream serves it: Go's omitted zero values left out.
    let (ok, out, err) = kubectl(&["get", "deployment", "web", "-n", "legacy", "-o", "json"]);
    assert!(ok, "{err}");
    let d: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(d["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    assert_eq!(d["metadata"]["generation"], 1);
    assert!(d["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    for absent in [
        "/spec/paused",
        "/spec/minReadySeconds",
        "/metadata/generateName",
        "/metadata/selfLink",
        "/spec/template/metadata/creationTimestamp",
        "/spec/template/metadata/name",
        "/spec/template/spec/hostNetwork",
        "/spec/template/spec/nodeName",
        "/spec/template/spec/containers/0/stdin",
        "/spec/template/spec/containers/0/workingDir",
    ] {
        assert!(d.pointer(absent).is_none(), "{absent} is served: {out}");
    }
    assert_eq!(d["status"], json!({}), "{out}");
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["resources"], json!({}));

    let (ok, out, err) = kubectl(&["describe", "deployment", "web", "-n", "legacy"]);
    assert!(ok, "{err}");
    assert!(out.contains("nginx:1.27"), "{out}");

    // kubectl edit: the change is written back, in JSON (this kapi's setting).
    let editor_dir = tempfile::tempdir().expect("tmp");
    let editor = editor_dir.path().join("editor");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/^  replicas: 2$/  replicas: 3/' \"$1\"\n",
    )
    .expect("editor script");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let edited = k
        .kubectl()
        .args(["edit", "deployment", "web", "-n", "legacy"])
        .env("EDITOR", &editor)
        .output()
        .expect("kubectl edit");
    assert!(
        edited.status.success(),
        "{}",
        String::from_utf8_lossy(&edited.stderr)
    );
    let (ok, out, err) = kubectl(&[
        "get",
        "deployment",
        "web",
        "-n",
        "legacy",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert!(ok && out == "3", "{out} {err}");
    let stored = rt.block_on(raw.get("/registry/deployments/legacy/web"));
    let value = stored.expect("get").0.expect("stored").value;
    assert!(value.starts_with(b"{"), "not written back in JSON");

    // The undecodable key is reported once, by name.
    let (ok, _, err) = kubectl(&["get", "configmaps", "-A"]);
    assert!(ok, "{err}");
    assert!(k.terminate().success());
    let reports = k
        .stderr_lines
        .try_iter()
        .filter(|l| l.contains("/registry/configmaps/legacy/broken"))
        .count();
    assert_eq!(reports, 1, "the undecodable key is reported once");

    // A kapi writing protobuf writes back as kube-apiserver would.
    let k = Kapi::start(&[
        "--etcd-servers",
        &etcd_servers,
        "--storage-media-type",
        PROTOBUF,
    ]);
    let out = k
        .kubectl()
        .args([
            "label",
            "configmap",
            "settings",
            "-n",
            "legacy",
            "edited=yes",
        ])
        .output()
        .expect("kubectl label");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = rt.block_on(raw.get("/registry/configmaps/legacy/settings"));
    let value = stored.expect("get").0.expect("stored").value;
    assert!(
        value.starts_with(b"k8s\x00"),
        "not written back in protobuf"
    );
    let back = kapi::api::protobuf::decode(&value).expect("decode");
    assert_eq!(back["metadata"]["labels"]["edited"], "yes");
    assert_eq!(back["data"]["mode"], "fast");

    // And deletes.
    let out = k
        .kubectl()
        .args(["delete", "deployment", "web", "-n", "legacy"])
        .output()
        .expect("kubectl delete");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gone = rt.block_on(raw.get("/registry/deployments/legacy/web"));
    assert!(gone.expect("get").0.is_none());
}
