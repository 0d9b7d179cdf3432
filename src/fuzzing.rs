//! Entry points for the fuzz targets in `fuzz/` (`cargo fuzz`, see
//! `scripts/fuzz`): thin wrappers that take client bytes through the same
//! parsers and write paths the server runs on them. Not an API: hidden from
//! the docs and free to change with the targets.
//!
//! No function here may panic, hang or grow memory without bound for any
//! input: the fuzzer reports each of those as a bug of the code it calls.
//!
//! Writes go through the real [`Registry`] (decode, defaulting, admission
//! with an empty chain, managedFields, validation) as dry runs, over a
//! storage backend that holds one valid object per resource prefix (every
//! name under a prefix reads as that object): patches, updates and applies
//! meet a realistic live object and nothing is ever written.
//!
//! Where the server's own function is private, the few lines it runs are
//! repeated here and named at the place they stand in for:
//! `endpoints::decode_body`, `apiextensions::controller::resources_of`
//! and `registry::Registry::with_scope`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, OnceLock};

use bytes::Bytes;
use http::Method;
use serde_json::{json, Value};

use crate::api::catalog::{Catalog, CustomInfo, Owner, Resource, Subresource};
use crate::api::selector::{FieldSelector, LabelSelector};
use crate::endpoints::negotiation::{self, BodyFormat};
use crate::registry::fieldmanager::{self, Schema, Scope};
use crate::registry::{meta, FieldValidation, ListParams, PatchType, Registries, WriteOptions};
use crate::storage::backend::{
    Backend, BackendError, KeyValue, RangeRequest, RangeResponse, TxnOutcome, WatchReceiver,
};
use crate::storage::cacher_set::CacherSet;
use crate::storage::store::{decode_continue, encode_continue, Store};

pub use crate::endpoints::negotiation::BodyFormat as Format;
pub use crate::registry::PatchType as Patch;

const PREFIX: &str = "/registry";
/// The revision the fuzz backend is at; every object was written at it.
const REV: i64 = 42;

// ---------------------------------------------------------------- backend

/// One object per resource prefix: `get` of any key under `root` answers
/// `object` with the key's namespace and name. Writes are accepted and
/// forgotten (the registry only writes when not a dry run).
#[derive(Default)]
struct FuzzBackend {
    objects: OnceLock<Vec<(String, bool, Value)>>,
}

#[async_trait::async_trait]
impl Backend for FuzzBackend {
    fn name(&self) -> &'static str {
        "fuzz"
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        for (root, namespaced, obj) in self.objects.get().into_iter().flatten() {
            let Some(rest) = key.strip_prefix(root.as_str()) else {
                continue;
            };
            let (ns, name) = if *namespaced {
                match rest.split_once('/') {
                    Some(x) => x,
                    None => return Ok((None, REV)),
                }
            } else {
                ("", rest)
            };
            let mut o = obj.clone();
            let m = meta::meta_mut(&mut o);
            m.insert("name".into(), json!(name));
            if *namespaced {
                m.insert("namespace".into(), json!(ns));
            }
            let kv = KeyValue {
                key: key.to_string(),
                value: Bytes::from(serde_json::to_vec(&o).unwrap_or_default()),
                create_revision: 2,
                mod_revision: REV,
                version: 1,
                stale: false,
            };
            return Ok((Some(kv), REV));
        }
        Ok((None, REV))
    }

    async fn range(&self, _req: RangeRequest) -> Result<RangeResponse, BackendError> {
        Ok(RangeResponse {
            revision: REV,
            ..Default::default()
        })
    }

    async fn create(&self, _key: &str, _value: Bytes) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn update(&self, _: &str, _: Bytes, _: i64) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn delete(&self, _key: &str, _: i64) -> Result<TxnOutcome, BackendError> {
        Ok(TxnOutcome::Applied { revision: REV + 1 })
    }

    async fn watch(&self, _prefix: &str, _from: i64) -> Result<WatchReceiver, BackendError> {
        Err(BackendError::Unavailable(
            "the fuzz backend does not watch".into(),
        ))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        Ok(REV)
    }

    async fn compact(&self, _revision: i64) -> Result<(), BackendError> {
        Ok(())
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        Ok(1)
    }
}

// ------------------------------------------------------------ environment

/// A live object patches and updates start from.
struct Base {
    resource: Arc<Resource>,
    name: String,
    /// As stored: defaulted, with managedFields (an Apply by `kubectl`).
    object: Value,
}

struct Env {
    rt: tokio::runtime::Runtime,
    registries: Registries,
    cachers: CacherSet,
    by_gvk: HashMap<(String, String, String), Arc<Resource>>,
    widget: Arc<Resource>,
    bases: Vec<Base>,
    catalog: Catalog,
    routes: Vec<crate::routes::Route>,
}

/// The CRD of the custom resource every target knows: defaults, enums,
/// patterns, a map list, a set, CEL rules (one a transition rule), and
/// status and scale subresources.
pub fn widget_crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
                },
                "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                "selectableFields": [{"jsonPath": ".spec.color"}]
            }]
        }
    })
}

/// The Widget's `openAPIV3Schema`.
pub fn widget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["color"],
                "x-kubernetes-validations": [
                    {"rule": "self.minReplicas <= self.replicas", "message": "replicas must not be below minReplicas"},
                    {"rule": "self.color == oldSelf.color", "message": "color is immutable"},
                    {"rule": "self.ports.all(p, p.port > 0)", "messageExpression": "'bad port in ' + self.color"}
                ],
                "properties": {
                    "color": {"type": "string", "enum": ["red", "blue", "green"]},
                    "size": {"type": "string", "default": "M", "pattern": "^(S|M|L|XL)$", "maxLength": 2},
                    "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
                    "minReplicas": {"type": "integer", "default": 0},
                    "ratio": {"type": "number", "multipleOf": 0.5},
                    "schedule": {"type": "string", "format": "date-time"},
                    "timeout": {"type": "string", "format": "duration"},
                    "quota": {"x-kubernetes-int-or-string": true},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 16},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer", "format": "int32"}}
                        }
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 8},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "conditions": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}
                }
            }
        }
    })
}

/// The served resource of the first served version of a CRD, as
/// `apiextensions::controller::resources_of` (private) builds it.
fn custom_resource(crd: &Value) -> Option<Resource> {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = s(&spec["group"]);
    let plural = s(&names["plural"]);
    let storage = crate::registry::apiextensions::storage_version(crd).unwrap_or_default();
    let v = spec["versions"]
        .as_array()?
        .iter()
        .find(|v| v["served"] == true)?
        .clone();
    let version = s(&v["name"]);
    let status = v["subresources"]["status"].is_object();
    let scale = v["subresources"]["scale"]
        .as_object()
        .map(|sc| crate::api::catalog::ScaleInfo {
            spec_replicas_path: s(sc.get("specReplicasPath").unwrap_or(&Value::Null)),
            status_replicas_path: s(sc.get("statusReplicasPath").unwrap_or(&Value::Null)),
            label_selector_path: sc
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(String::from),
        });
    let mut subresources = Vec::new();
    if status {
        subresources.push(Subresource {
            name: "status".into(),
            group: group.clone(),
            version: version.clone(),
            kind: s(&names["kind"]),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    if scale.is_some() {
        subresources.push(Subresource {
            name: "scale".into(),
            group: "autoscaling".into(),
            version: "v1".into(),
            kind: "Scale".into(),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    let printer_columns = v["additionalPrinterColumns"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| crate::api::catalog::PrinterColumn {
            name: s(&c["name"]),
            kind: s(&c["type"]),
            format: s(&c["format"]),
            description: s(&c["description"]),
            priority: c["priority"].as_i64().unwrap_or(0) as i32,
            json_path: s(&c["jsonPath"]),
        })
        .collect();
    let selectable: Vec<String> = v["selectableFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f["jsonPath"].as_str())
        .map(|p| p.trim_start_matches('.').to_string())
        .collect();
    let info = CustomInfo {
        crd_name: meta::name(crd).to_string(),
        schema: v["schema"]["openAPIV3Schema"]
            .as_object()
            .map(|m| Value::Object(m.clone())),
        status,
        scale,
        printer_columns,
        storage_version: storage.clone(),
        conversion: spec["conversion"].clone(),
        selectable_fields: selectable.clone(),
    };
    Some(Resource {
        group: group.clone(),
        version,
        kind: s(&names["kind"]),
        list_kind: s(&names["listKind"]),
        plural: plural.clone(),
        singular: s(&names["singular"]),
        namespaced: spec["scope"] == "Namespaced",
        verbs: [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect(),
        short_names: strings(&names["shortNames"]),
        categories: strings(&names["categories"]),
        subresources,
        storage_path: format!("{group}/{plural}"),
        storage_group: group,
        storage_version: storage,
        selectable_fields: selectable,
        codec: None,
        schema: None,
        owner: Owner::Apiextensions,
        custom: Some(Arc::new(info)),
        proxy: None,
        routes: Default::default(),
    })
}

/// The field-management schema of a resource, as `Registry::with_scope`
/// (private) picks it.
fn schema_of(r: &Resource) -> Schema<'_> {
    let builtin = r
        .schema
        .and_then(crate::registry::patch::strategic::type_name_of)
        .and_then(|n| Schema::builtin(&n));
    match (builtin, r.custom.as_ref().and_then(|c| c.schema.as_ref())) {
        (Some(s), _) => s,
        (None, Some(crd_schema)) => Schema::structural(crd_schema),
        (None, None) => Schema::untyped(),
    }
}

/// The objects patches start from (index = first input byte % count).
fn base_manifests() -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "annotations": {"note": "base"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{
                            "name": "nginx", "image": "nginx:1.25",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}]
                        }],
                        "volumes": [{"name": "data", "emptyDir": {}}],
                        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
                    }
                }
            }
        }),
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pod", "namespace": "default", "labels": {"app": "web"}, "finalizers": ["example.com/keep"]},
            "spec": {
                "containers": [{
                    "name": "c", "image": "busybox", "command": ["sh", "-c", "sleep 1"],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    "securityContext": {"runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}}
                }],
                "initContainers": [{"name": "init", "image": "busybox"}],
                "nodeSelector": {"disk": "ssd"}
            }
        }),
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "default", "labels": {"a": "b"}},
            "data": {"a": "1", "b": "two", "key.with.dots": "x"},
            "binaryData": {"bin": "AAEC/w=="}
        }),
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "svc", "namespace": "default"},
            "spec": {
                "type": "ClusterIP", "clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"],
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}]
            }
        }),
        json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default"},
            "spec": {
                "color": "red", "replicas": 3, "minReplicas": 1, "tags": ["a", "b"],
                "ports": [{"name": "http", "port": 80}], "labels": {"x": "y"},
                "schedule": "2024-01-01T00:00:00Z", "timeout": "1h", "quota": "10%",
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"}},
                "extra": {"anything": [1, 2, {"k": "v"}]}
            },
            "status": {"replicas": 3}
        }),
        json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "ns1", "labels": {"team": "a"}},
            "spec": {"finalizers": ["kubernetes"]}
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]},
                {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}
            ]
        }),
        widget_crd(widget_schema()),
    ]
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    env().rt.block_on(f)
}

fn dry_run(manager: &str, validation: FieldValidation) -> WriteOptions {
    WriteOptions {
        dry_run: true,
        field_manager: Some(manager.to_string()),
        field_validation: validation,
        user_agent: Some("kubectl/v1.34.0 (linux/amd64) kubernetes/abcdef".into()),
        ..Default::default()
    }
}

fn env() -> &'static Env {
    static ENV: LazyLock<Env> = LazyLock::new(build_env);
    &ENV
}

fn build_env() -> Env {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let catalog = crate::app::builtin_catalog();
    let crd = widget_crd(widget_schema());
    catalog.add(custom_resource(&crd).expect("widget resource"));
    let backend = Arc::new(FuzzBackend::default());
    let cachers = CacherSet::new(
        Store::new(backend.clone()),
        tokio_util::sync::CancellationToken::new(),
    );
    let registries = Registries::new(catalog.clone(), cachers.clone(), PREFIX.into());
    let by_gvk = catalog
        .all()
        .into_iter()
        .map(|r| ((r.group.clone(), r.version.clone(), r.kind.clone()), r))
        .collect::<HashMap<_, _>>();
    let widget = by_gvk
        .get(&("example.com".into(), "v1".into(), "Widget".into()))
        .cloned()
        .expect("widget in catalog");
    // Each base is created by a server-side apply of `kubectl` (a dry run:
    // the backend has nothing yet), so it is stored as a real one would be.
    let mut bases = Vec::new();
    for m in base_manifests() {
        let gvk = split_gvk(&m);
        let resource = by_gvk.get(&gvk).cloned().expect("base kind served");
        let registry = registries
            .get(&resource.group, &resource.version, &resource.plural)
            .expect("registry");
        let ns = if resource.namespaced { "default" } else { "" };
        let name = meta::name(&m).to_string();
        let body = serde_json::to_vec(&m).expect("json");
        let opts = dry_run("kubectl", FieldValidation::Strict);
        let written = rt
            .block_on(registry.patch(ns, &name, PatchType::Apply, &body, None, &opts))
            .unwrap_or_else(|e| panic!("base {}/{name}: {e:?}", resource.kind));
        let mut object: Value = serde_json::from_slice(&written.object).expect("written json");
        let mm = meta::meta_mut(&mut object);
        mm.remove("resourceVersion");
        mm.insert("uid".into(), json!("00000000-0000-4000-8000-000000000001"));
        if let Some(st) = m.get("status") {
            object["status"] = st.clone();
        }
        bases.push(Base {
            resource,
            name,
            object,
        });
    }
    let stored = bases
        .iter()
        .map(|b| {
            (
                format!("{PREFIX}/{}/", b.resource.storage_path),
                b.resource.namespaced,
                b.object.clone(),
            )
        })
        .collect();
    let _ = backend.objects.set(stored);
    let routes = crate::routes::all(&catalog, &crate::app::route_tables(&catalog));
    Env {
        rt,
        registries,
        cachers,
        by_gvk,
        widget,
        bases,
        catalog,
        routes,
    }
}

fn split_gvk(v: &Value) -> (String, String, String) {
    let api_version = v["apiVersion"].as_str().unwrap_or("");
    let (g, ver) = api_version.split_once('/').unwrap_or(("", api_version));
    (
        g.to_string(),
        ver.to_string(),
        v["kind"].as_str().unwrap_or("").to_string(),
    )
}

/// Sources whose panics kapi catches on purpose (`apiextensions::cel::env`
/// runs the `cel` crate's parser and interpreter under `catch_unwind`).
const CAUGHT_PANICS: &[&str] = &["/cel-0.", "/kube-cel-"];

/// Call from the target's `init`: builds everything the targets share (the
/// catalog, schemas, base objects) ahead of the first input, and lets
/// panics that kapi catches itself pass (libfuzzer-sys aborts on every
/// panic, caught or not); each such place is printed once.
pub fn init() {
    let abort = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let caught = info
            .location()
            .is_some_and(|l| CAUGHT_PANICS.iter().any(|c| l.file().contains(c)));
        if !caught {
            return abort(info);
        }
        static SEEN: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
            std::sync::Mutex::new(None);
        let at = info.location().map(|l| l.to_string()).unwrap_or_default();
        if let Ok(mut seen) = SEEN.lock() {
            if seen.get_or_insert_with(Default::default).insert(at.clone()) {
                eprintln!("kapi-fuzz: panic caught by kapi (not a crash) at {at}: {info}");
            }
        }
    }));
    let _ = env();
}

// -------------------------------------------------------------- decoding

/// A request body as `endpoints::decode_body` (private) decodes it.
fn decode_body(bytes: &[u8], format: BodyFormat) -> Option<Value> {
    match format {
        BodyFormat::Json => serde_json::from_slice::<Value>(bytes).ok(),
        BodyFormat::Yaml => serde_saphyr::from_slice::<Value>(bytes).ok(),
        BodyFormat::Protobuf => {
            let opts = crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            };
            crate::api::protobuf::decode_with(bytes, opts).ok()
        }
    }
}

/// A create, then an update, of the body (JSON, YAML or Kubernetes
/// protobuf) on the resource its apiVersion and kind name (a Widget when
/// none is served), as dry runs; reviews and other kinds that are not
/// stored only decode.
pub fn decode_object(bytes: &[u8], format: BodyFormat) {
    let e = env();
    let Some(body) = decode_body(bytes, format) else {
        return;
    };
    let r = e
        .by_gvk
        .get(&split_gvk(&body))
        .cloned()
        .unwrap_or_else(|| e.widget.clone());
    let Some(registry) = e.registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let ns = if r.namespaced { "default" } else { "" };
    let validation = match bytes.len() % 3 {
        0 => FieldValidation::Strict,
        1 => FieldValidation::Warn,
        _ => FieldValidation::Ignore,
    };
    let opts = dry_run("fuzz", validation);
    if !r.is_stored() {
        let _ = registry.decode(body, ns, &opts);
        return;
    }
    block_on(async {
        let _ = registry.create(ns, body.clone(), &opts).await;
        let name = meta::name(&body).to_string();
        if !name.is_empty() {
            let _ = registry.update(ns, &name, body, None, &opts).await;
        }
    });
}

/// One message of the protobuf schema, by index, from its bytes (no
/// envelope), and the envelope decoder on the same bytes; what decodes is
/// encoded back.
pub fn decode_protobuf_message(input: &[u8]) {
    let [a, b, rest @ ..] = input else {
        return;
    };
    let messages = crate::api::protobuf::MESSAGES;
    let i = u16::from_le_bytes([*a, *b]) as usize % messages.len();
    // Whatever decodes must encode again without a panic.
    if let Ok(v) = crate::api::protobuf::decode_message(messages[i].name, rest) {
        let _ = crate::api::protobuf::encode_message(messages[i].name, &v);
    }
    if let Ok(v) = crate::api::protobuf::decode(rest) {
        let _ = crate::api::protobuf::encode(&v);
    }
}

// --------------------------------------------------------------- patches

/// The first byte picks the live object and options:
/// bits 0-2 the base object (Deployment, Pod, ConfigMap, Service, Widget,
/// Namespace, ClusterRole, the Widget CRD), bit 3 the status subresource,
/// bit 4 strict field validation, bit 5 `force` (apply), bit 6 the field
/// manager (`kubectl`, who owns the base's fields, or `fuzz`). The rest
/// is the patch body, sent as `patch_type`.
pub fn patch_object(input: &[u8], patch_type: PatchType) {
    let Some((&sel, patch)) = input.split_first() else {
        return;
    };
    let e = env();
    let base = &e.bases[sel as usize % e.bases.len()];
    let r = &base.resource;
    let Some(registry) = e.registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let ns = if r.namespaced { "default" } else { "" };
    let sub = (sel & 0x08 != 0 && r.subresource("status").is_some()).then_some("status");
    let validation = if sel & 0x10 != 0 {
        FieldValidation::Strict
    } else {
        FieldValidation::Warn
    };
    let manager = if sel & 0x40 != 0 { "kubectl" } else { "fuzz" };
    let mut opts = dry_run(manager, validation);
    opts.force = patch_type == PatchType::Apply && sel & 0x20 != 0;
    let _ = block_on(registry.patch(ns, &base.name, patch_type, patch, sub, &opts));
}

// ------------------------------------------------------------- selectors

fn labels() -> BTreeMap<String, String> {
    [
        ("app", "web"),
        ("tier", "front"),
        ("n", "5"),
        ("example.com/x", "a.b-c_d"),
        ("empty", ""),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// `labelSelector`: parsed, matched, and used to filter a list; a JSON
/// `metav1.LabelSelector` (as in a Deployment's spec) goes through `from_api`.
pub fn label_selector(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(sel) = LabelSelector::parse(text) {
        let _ = sel.is_empty();
        let _ = sel.matches(&labels());
        let _ = sel.matches(&BTreeMap::new());
    }
    if let Ok(api) =
        serde_json::from_str::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(text)
    {
        if let Ok(sel) = LabelSelector::from_api(&api) {
            let _ = sel.matches(&labels());
        }
    }
    list_with(ListParams {
        label_selector: Some(text.to_string()),
        ..continued()
    });
}

/// `fieldSelector`: parsed, matched, and used to filter a list.
pub fn field_selector(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(sel) = FieldSelector::parse(text) {
        let _ = sel.is_empty();
        let _ = sel.keys().count();
        let _ = sel.required("metadata.name");
        let mut fields = BTreeMap::new();
        fields.insert("metadata.name".to_string(), "a,b".to_string());
        fields.insert("metadata.namespace".to_string(), "default".to_string());
        fields.insert("status.phase".to_string(), "Running".to_string());
        let _ = sel.matches(&fields);
    }
    list_with(ListParams {
        field_selector: Some(text.to_string()),
        ..continued()
    });
}

/// List parameters that send a list to storage (not the watch cache,
/// which needs a running backend watch).
fn continued() -> ListParams {
    ListParams {
        limit: 5,
        continue_token: Some(encode_continue(REV, "default/a\u{0}")),
        ..Default::default()
    }
}

fn list_with(params: ListParams) {
    let e = env();
    for (g, v, p) in [("", "v1", "pods"), ("example.com", "v1", "widgets")] {
        if let Some(reg) = e.registries.get(g, v, p) {
            let _ = block_on(reg.list("default", &params));
        }
    }
}

// --------------------------------------------------------- request info

/// `METHOD target` on the first line (target: path and query), then
/// optionally the Accept and the Content-Type header values on the next
/// two lines: request-info parsing, the `kapi routes` matcher, content
/// negotiation, and the list parameters of the query.
pub fn request_info(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let e = env();
    let mut lines = text.splitn(3, '\n');
    let first = lines.next().unwrap_or("");
    let (m, target) = first.split_once(' ').unwrap_or(("GET", first));
    let method = Method::from_bytes(m.as_bytes()).unwrap_or(Method::GET);
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    use crate::api::request_info::{percent_decode, query_value, RequestInfo};
    let info = RequestInfo::parse(&method, path, query);
    let _ = (info.is_long_running(), info.is_mutating(), info.scope());
    let _ = percent_decode(path);
    let _ = crate::routes::match_request(&e.catalog, &e.routes, &method, target);
    let accept = lines.next();
    let content_type = lines.next();
    for serializers in [
        negotiation::Serializers::ALL,
        negotiation::Serializers::JSON_YAML,
    ] {
        let include = query_value(query, "includeObject").is_some();
        let _ = negotiation::output(accept, include, serializers, info.verb == "watch");
    }
    let _ = negotiation::error_encoding(accept);
    let _ = negotiation::body_format(content_type);
    if info.verb == "list" {
        let params = ListParams {
            label_selector: query_value(query, "labelSelector"),
            field_selector: query_value(query, "fieldSelector"),
            limit: query_value(query, "limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0),
            continue_token: query_value(query, "continue"),
            resource_version: query_value(query, "resourceVersion"),
            resource_version_match: query_value(query, "resourceVersionMatch"),
        };
        // Only lists that storage answers (see `continued`).
        if params
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty())
            || params.resource_version_match.as_deref() == Some("Exact")
        {
            if let Some(reg) = e
                .registries
                .get(&info.api_group, &info.api_version, &info.resource)
            {
                let _ = block_on(reg.list(&info.namespace, &params));
            }
        }
    }
}

// ------------------------------------------- resourceVersion and continue

/// A `continue` token: decoded, and when valid (and not "latest"), encoded
/// again to the same position; then used to page a list. Also `resourceVersion` parsing and
/// the stored-bytes resourceVersion splice on the token's bytes as JSON.
pub fn continue_token(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    // rv 0 is the decoder's "the latest revision" (a token of rv -1, as
    // upstream writes after an expired one); storage never encodes it.
    match decode_continue(text) {
        Ok((rv, start)) if rv > 0 => match decode_continue(&encode_continue(rv, &start)) {
            Ok(round) => assert_eq!(round, (rv, start), "continue token round trip"),
            Err(e) => panic!("a re-encoded valid continue token does not decode: {e:?}"),
        },
        _ => {}
    }
    list_with(ListParams {
        continue_token: Some(text.to_string()),
        limit: 3,
        ..Default::default()
    });
    list_with(ListParams {
        resource_version: Some(text.to_string()),
        resource_version_match: Some("Exact".into()),
        ..Default::default()
    });
}

/// `storage::rv::with_resource_version` on the bytes storage holds for an
/// object (serde_json's rendering of a JSON object without a
/// resourceVersion): the result must be that object with
/// `metadata.resourceVersion` set.
pub fn resource_version(input: &[u8]) {
    let Ok(mut v) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    let stored = serde_json::to_vec(&v).expect("serialize");
    let rv = 1 + (input.len() as i64) * 7919;
    let out = crate::storage::rv::with_resource_version(&stored, rv);
    let got: Value = serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "with_resource_version made invalid JSON ({e}): {}",
            String::from_utf8_lossy(&out)
        )
    });
    // Floats must come back bit for bit: kapi builds serde_json with
    // `float_roundtrip` because its default float parsing is off by an ulp
    // at times (fuzz/regressions/resource_version), which Go's is not.
    let mut want: Value = serde_json::from_slice(&stored).expect("stored bytes parse");
    let o = want.as_object_mut().expect("object");
    match o.get_mut("metadata") {
        Some(Value::Object(m)) => {
            m.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        Some(_) => {}
        None => {
            o.insert(
                "metadata".into(),
                json!({"resourceVersion": rv.to_string()}),
            );
        }
    }
    assert_eq!(
        got, want,
        "with_resource_version changed more than the resourceVersion"
    );
}

// --------------------------------------------------------------------- CEL

/// A CEL expression (`rule`, then optionally NUL and a `messageExpression`)
/// compiled as an `x-kubernetes-validations` rule of a CRD schema and,
/// when it compiles, evaluated against a custom resource (create and
/// update); and evaluated as a ValidatingAdmissionPolicy expression.
pub fn cel_expression(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (rule, message_expression) = text.split_once('\0').unwrap_or((text, ""));
    let mut r = json!({"rule": rule});
    if !message_expression.is_empty() {
        r["messageExpression"] = json!(message_expression);
    }
    let mut schema = widget_schema();
    schema["properties"]["spec"]["x-kubernetes-validations"] = json!([r]);
    let e = env();
    let widget = &e.bases[4].object;
    let errs = crate::cel::compile_schema_rules(&schema, "spec.versions[0].schema.openAPIV3Schema");
    if errs.is_empty() {
        let mut changed = widget.clone();
        changed["spec"]["replicas"] = json!(7);
        changed["spec"]["tags"] = json!(["a", "c"]);
        changed["spec"]["ports"] =
            json!([{"name": "http", "port": 8080}, {"name": "https", "port": 443}]);
        let _ = crate::cel::validate(&schema, widget, None);
        let _ = crate::cel::validate(&schema, &changed, Some(widget));
    }
    let request = json!({
        "uid": "u", "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "operation": "UPDATE", "name": "w1", "namespace": "default",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "dryRun": false
    });
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"env": "prod"}}});
    let mut act = crate::cel::admission::Activation::new(&[
        ("object", Some(widget)),
        ("oldObject", Some(widget)),
        ("request", Some(&request)),
        ("params", None),
        ("namespaceObject", Some(&namespace)),
    ]);
    act.define_variable("v", rule);
    let _ = act.eval(rule);
    if !message_expression.is_empty() {
        let _ = act.eval(message_expression);
    }
}

// ------------------------------------------------------------ CRD schema

/// A value for a structural schema: its default, first enum value, or a
/// plausible value of its type, nested `depth` levels at most.
fn sample(schema: &Value, depth: usize) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return first.clone();
    }
    if depth == 0 {
        return Value::Null;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        return json!(1);
    }
    match schema["type"].as_str().unwrap_or("") {
        "object" => {
            let mut m = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props.iter().take(32) {
                    m.insert(k.clone(), sample(s, depth - 1));
                }
            } else if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                m.insert("key".into(), sample(add, depth - 1));
            }
            if schema["x-kubernetes-embedded-resource"] == true {
                m.insert("apiVersion".into(), json!("v1"));
                m.insert("kind".into(), json!("ConfigMap"));
                m.insert("metadata".into(), json!({"name": "embedded"}));
            }
            Value::Object(m)
        }
        "array" => match schema.get("items") {
            Some(items) => json!([sample(items, depth - 1)]),
            None => json!([]),
        },
        "integer" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "number" => schema.get("minimum").cloned().unwrap_or(json!(1.5)),
        "boolean" => json!(true),
        "string" => match schema["format"].as_str().unwrap_or("") {
            "date-time" => json!("2024-01-01T00:00:00Z"),
            "date" => json!("2024-01-01"),
            "duration" => json!("1h30m"),
            "byte" => json!("aGVsbG8="),
            "int-or-string" => json!("10%"),
            "quantity" => json!("500m"),
            "uuid" => json!("00000000-0000-4000-8000-000000000001"),
            "ipv4" => json!("10.0.0.1"),
            "ipv6" => json!("::1"),
            "cidr" => json!("10.0.0.0/8"),
            "email" => json!("a@example.com"),
            "hostname" => json!("example.com"),
            "uri" => json!("https://example.com/x"),
            _ => json!("x"),
        },
        _ => Value::Null,
    }
}

/// A CRD's `openAPIV3Schema` (JSON): the CRD is created (a dry run, so the
/// whole CRD validation: structural rules, CEL compilation, defaults);
/// when it is accepted, custom resources are created, updated and applied
/// against it as the served resource the apiextensions controller makes.
pub fn crd_schema(input: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let e = env();
    let Some(crds) = e
        .registries
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return;
    };
    let opts = dry_run("fuzz", FieldValidation::Strict);
    let crd = widget_crd(schema.clone());
    let Ok(written) = block_on(crds.create("", crd, &opts)) else {
        return;
    };
    let _ = crate::schema::to_openapi(&schema);
    let Ok(crd) = serde_json::from_slice::<Value>(&written.object) else {
        return;
    };
    let Some(r) = custom_resource(&crd) else {
        return;
    };
    let served_schema = r
        .custom
        .as_ref()
        .and_then(|c| c.schema.clone())
        .unwrap_or(Value::Null);
    let catalog = Catalog::default();
    catalog.add(r.clone());
    let registries = Registries::new(catalog, e.cachers.clone(), PREFIX.into());
    let Some(reg) = registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let mut obj = sample(&served_schema, 8);
    if !obj.is_object() {
        obj = json!({});
    }
    obj["apiVersion"] = json!("example.com/v1");
    obj["kind"] = json!("Widget");
    obj["metadata"] = json!({"name": "w1", "namespace": "default", "labels": {"a": "b"}});
    let minimal =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}});
    let warn = dry_run("fuzz", FieldValidation::Warn);
    block_on(async {
        let _ = reg.create("default", obj.clone(), &warn).await;
        let _ = reg.create("default", minimal, &warn).await;
        let _ = reg
            .create("default", e.bases[4].object.clone(), &warn)
            .await;
        // The backend answers the base Widget as the live w1: ratcheting
        // and transition rules see an old object.
        let _ = reg.update("default", "w1", obj.clone(), None, &warn).await;
        let _ = reg
            .update("default", "w1", obj.clone(), Some("status"), &warn)
            .await;
        let body = serde_json::to_vec(&obj).unwrap_or_default();
        let _ = reg
            .patch("default", "w1", PatchType::Apply, &body, None, &warn)
            .await;
    });
    // A Registry holds its Registries, which hold it: forgetting it breaks
    // the cycle (the server's Registries live as long as the process).
    drop(reg);
    registries.forget(&r.group, &r.version, &r.plural);
    let scope = Scope::new(Schema::structural(&served_schema), "");
    let _ = fieldmanager::apply_in(&scope, None, &obj, "fuzz", false);
    let _ = schema_of(&r);
}

// ------------------------------------------------------- local files

fn scratch_dir() -> &'static PathBuf {
    static DIR: LazyLock<PathBuf> = LazyLock::new(|| {
        let d = std::env::temp_dir().join(format!("kapi-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    });
    &DIR
}

/// A kubeconfig, read by `clientcmd::Remote::connect` from a file in a scratch directory. Inputs that could name
/// device, proc or sys files (unbounded or blocking reads, which the
/// fuzzer would report as hangs of the harness) are skipped.
pub fn kubeconfig(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let lower = text.to_ascii_lowercase();
    if ["dev", "proc", "sys", "\\", "fd"]
        .iter()
        .any(|bad| lower.contains(bad))
    {
        return;
    }
    let path = scratch_dir().join("kubeconfig");
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().build() else {
        return;
    };
    let mut sel = crate::clientcmd::Selection::file(&path);
    let _ = rt.block_on(crate::clientcmd::Remote::connect(&sel));
    sel.server = Some("https://127.0.0.1:6443/".into());
    let _ = rt.block_on(crate::clientcmd::Remote::connect(&sel));
}

/// `--token-auth-file`: parsed, and every token of it looked up.
pub fn token_file(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let Ok(tokens) = crate::auth::tokenfile::TokenFile::parse(text) else {
        return;
    };
    for line in text.lines() {
        if let Some(token) = line.trim().split(',').next() {
            let _ = tokens.lookup(token.trim());
        }
    }
}
