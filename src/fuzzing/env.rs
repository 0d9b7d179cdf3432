//! What every target shares, built once: the runtime, the catalog (with
//! the Widget), the registries, and the base objects patches start from.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use serde_json::{json, Value};

use super::backend::FuzzBackend;
use super::widget::{custom_resource, widget_crd, widget_schema};
use super::PREFIX;
use crate::api::catalog::{Catalog, Resource};
use crate::registry::fieldmanager::Schema;
use crate::registry::{meta, FieldValidation, PatchType, Registries, WriteOptions};
use crate::storage::cacher_set::CacherSet;
use crate::storage::store::Store;

/// A live object patches and updates start from.
pub(super) struct Base {
    pub(super) resource: Arc<Resource>,
    pub(super) name: String,
    /// As stored: defaulted, with managedFields (an Apply by `kubectl`).
    pub(super) object: Value,
}

pub(super) struct Env {
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) registries: Registries,
    pub(super) cachers: CacherSet,
    pub(super) by_gvk: HashMap<(String, String, String), Arc<Resource>>,
    pub(super) widget: Arc<Resource>,
    pub(super) bases: Vec<Base>,
    pub(super) catalog: Catalog,
    pub(super) routes: Vec<crate::routes::Route>,
}

/// The field-management schema of a resource, as `Registry::with_scope`
/// (private) picks it.
pub(super) fn schema_of(r: &Resource) -> Schema<'_> {
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

pub(super) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    env().rt.block_on(f)
}

pub(super) fn dry_run(manager: &str, validation: FieldValidation) -> WriteOptions {
    WriteOptions {
        dry_run: true,
        field_manager: Some(manager.to_string()),
        field_validation: validation,
        user_agent: Some("kubectl/v1.34.0 (linux/amd64) kubernetes/abcdef".into()),
        ..Default::default()
    }
}

pub(super) fn env() -> &'static Env {
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

pub(super) fn split_gvk(v: &Value) -> (String, String, String) {
    let api_version = v["apiVersion"].as_str().unwrap_or("");
    let (g, ver) = api_version.split_once('/').unwrap_or(("", api_version));
    (
        g.to_string(),
        ver.to_string(),
        v["kind"].as_str().unwrap_or("").to_string(),
    )
}
