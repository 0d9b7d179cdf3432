//! `kapi::testing`: many in-process servers in one test binary, each with
//! its own CRD and a kube-runtime controller, isolated from each other and
//! gone without a trace when dropped; clients for other users and
//! ServiceAccounts see what RBAC lets them see.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kapi::testing::Server;
use kube::api::{DynamicObject, GroupVersionKind, PostParams};
use kube::discovery::ApiResource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::Api;
use serde_json::json;

/// A CRD of its own for server `i`: group `s<i>.example.com`, kind `Thing`.
fn crd(i: usize) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.s{i}.example.com")},
        "spec": {"group": format!("s{i}.example.com"), "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"n": {"type": "integer"}}}}}}}]}
    }))
    .expect("crd")
}

fn resource(i: usize) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&format!("s{i}.example.com"), "v1", "Thing"),
        "things",
    )
}

/// Reconciles a Thing into a ConfigMap `thing-<name>` holding its `n`.
async fn reconcile(
    thing: Arc<DynamicObject>,
    client: Arc<kube::Client>,
) -> Result<Action, kube::Error> {
    let name = thing.metadata.name.clone().unwrap_or_default();
    let n = thing.data["spec"]["n"].to_string();
    let cm: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("thing-{name}")}, "data": {"n": n}
    }))
    .map_err(kube::Error::SerdeError)?;
    let api: Api<ConfigMap> = Api::namespaced((*client).clone(), "default");
    api.patch(
        &format!("thing-{name}"),
        &kube::api::PatchParams::apply("things").force(),
        &kube::api::Patch::Apply(&cm),
    )
    .await?;
    Ok(Action::await_change())
}

async fn one_server(i: usize) -> (Server, std::path::PathBuf, u16) {
    let server = Server::builder().crd(crd(i)).start().await.expect("start");
    let client = server.client();
    let ar = resource(i);
    let things: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn({
        let client = client.clone();
        let things = Api::<DynamicObject>::all_with(client.clone(), &ar);
        async move {
            Controller::new_with(things, watcher::Config::default(), ar)
                .graceful_shutdown_on(async move {
                    let _ = stop_rx.await;
                })
                .run(
                    reconcile,
                    |_, _, _| Action::requeue(Duration::from_millis(100)),
                    Arc::new(client),
                )
                .for_each(|_| async {})
                .await;
        }
    });
    let mut thing = DynamicObject::new("t", &resource(i));
    thing.data = json!({"spec": {"n": i}});
    things
        .create(&PostParams::default(), &thing)
        .await
        .expect("create thing");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut seen = None;
    for _ in 0..400 {
        if let Some(cm) = configmaps.get_opt("thing-t").await.expect("get") {
            seen = cm.data.and_then(|d| d.get("n").cloned());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        seen,
        Some(i.to_string()),
        "server {i}: the controller never reconciled"
    );
    let _ = stop_tx.send(());
    controller.await.expect("controller");
    let dir = server
        .kubeconfig_path()
        .parent()
        .expect("data dir")
        .to_path_buf();
    let port: u16 = server
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    (server, dir, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_servers_run_side_by_side_and_leave_nothing_behind() {
    const N: usize = 16;
    let started = futures::future::join_all((0..N).map(one_server)).await;
    // Isolation: each server has its own group only, and its own objects.
    for (i, (server, _, _)) in started.iter().enumerate() {
        let groups = server.client().list_api_groups().await.expect("groups");
        let mine: Vec<String> = groups
            .groups
            .iter()
            .map(|g| g.name.clone())
            .filter(|g| g.ends_with(".example.com"))
            .collect();
        assert_eq!(mine, [format!("s{i}.example.com")], "server {i}");
        let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        let names: Vec<String> = cms
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .filter(|n| n.starts_with("thing-"))
            .collect();
        assert_eq!(names, ["thing-t"], "server {i}");
    }
    let alive_before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let mut gone = Vec::new();
    for (server, dir, port) in started {
        server.shutdown().await;
        gone.push((dir, port));
    }
    for (dir, port) in gone {
        assert!(!dir.exists(), "{} was left behind", dir.display());
        let refused = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err();
        assert!(refused, "port {port} still accepts connections");
    }
    // Every server's tasks end with it. A connection still draining may
    // take up to kapi's drain timeout (20 s) on a loaded machine; past that
    // a task is a leak.
    let mut alive = usize::MAX;
    let settling = std::time::Instant::now();
    for _ in 0..600 {
        alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        if alive == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        alive,
        0,
        "tasks left running {} ms after shutdown (of {alive_before} while serving)",
        settling.elapsed().as_millis()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_for_users_and_service_accounts_are_held_to_rbac() {
    let server = Server::start().await.expect("start");
    let jane = server
        .client_for_user("jane", &["developers"])
        .await
        .expect("jane");
    let cms: Api<ConfigMap> = Api::namespaced(jane.clone(), "default");
    let err = cms
        .list(&Default::default())
        .await
        .expect_err("jane may not list");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err}"
    );
    let admins = server
        .client_for_user("root", &["system:masters"])
        .await
        .expect("root");
    Api::<ConfigMap>::namespaced(admins, "default")
        .list(&Default::default())
        .await
        .expect("system:masters may list");
    let robot = server
        .client_for_service_account("default", "robot")
        .await
        .expect("robot");
    let err = Api::<ConfigMap>::namespaced(robot, "default")
        .list(&Default::default())
        .await
        .expect_err("a fresh ServiceAccount may not list");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403);
            assert!(
                s.message.contains("system:serviceaccount:default:robot"),
                "{}",
                s.message
            );
        }
        other => panic!("{other}"),
    }
    // A dropped server stops serving too.
    let url = server.url().to_string();
    drop(server);
    let port: u16 = url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "a dropped server still accepts connections");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_from_a_yaml_file_are_served_before_the_client_is_handed_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("crds.yaml");
    let crd_yaml = |plural: &str, kind: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.yaml.example.com\nspec:\n  group: yaml.example.com\n  scope: Namespaced\n  names: {{plural: {plural}, singular: {}, kind: {kind}}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
            plural.trim_end_matches('s')
        )
    };
    std::fs::write(
        &path,
        format!(
            "{}---\n{}",
            crd_yaml("gadgets", "Gadget"),
            crd_yaml("gizmos", "Gizmo")
        ),
    )
    .expect("write");
    let server = Server::builder()
        .crd_yaml(&path)
        .start()
        .await
        .expect("start");
    // Served at once: no waiting in the test.
    for (plural, kind) in [("gadgets", "Gadget"), ("gizmos", "Gizmo")] {
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("yaml.example.com", "v1", kind),
            plural,
        );
        let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &ar);
        api.create(&PostParams::default(), &DynamicObject::new("one", &ar))
            .await
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    server.shutdown().await;

    // A file that is not CRDs is an error naming it, before anything starts.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "kind: [unclosed").expect("write");
    let err = Server::builder()
        .crd_yaml(&bad)
        .start()
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("bad.yaml"), "{err}");
}

/// A namespace holding a pod bound to a node no kubelet runs, deleted: on
/// a cluster the pod stays Terminating until podgc's quarantine (40 s) has
/// passed, and the namespace with it. With short clocks both are gone
/// within a few seconds; with upstream's the namespace is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_clocks_let_a_namespace_with_an_unkubeleted_pod_go_at_once() {
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    async fn namespace_with_bound_pod(server: &Server) -> Api<Namespace> {
        let namespaces: Api<Namespace> = Api::all(server.client());
        let ns: Namespace =
            serde_json::from_value(json!({"metadata": {"name": "doomed"}})).expect("ns");
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("namespace");
        let pods: Api<Pod> = Api::namespaced(server.client(), "doomed");
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": "ghost", "containers": [{"name": "c", "image": "busybox"}]}
        }))
        .expect("pod");
        // The namespace's default ServiceAccount, which admission wants,
        // comes from a controller.
        let t0 = std::time::Instant::now();
        loop {
            match pods.create(&PostParams::default(), &pod).await {
                Ok(_) => break,
                Err(_) if t0.elapsed() < Duration::from_secs(10) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("pod: {e}"),
            }
        }
        namespaces
            .delete("doomed", &Default::default())
            .await
            .expect("delete namespace");
        namespaces
    }

    let short = Server::builder()
        .short_clocks()
        .start()
        .await
        .expect("start");
    let namespaces = namespace_with_bound_pod(&short).await;
    let t0 = std::time::Instant::now();
    while namespaces.get_opt("doomed").await.expect("get").is_some() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the namespace is still there after 5 s with short clocks"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    short.shutdown().await;

    let upstream = Server::start().await.expect("start");
    let namespaces = namespace_with_bound_pod(&upstream).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ns = namespaces.get("doomed").await.expect("still there");
    assert!(
        ns.metadata.deletion_timestamp.is_some(),
        "Terminating, waiting for the pod"
    );
    upstream.shutdown().await;
}

/// Webhook configurations written for a cluster (a `service` reference)
/// call a webhook served in the test, which answers with kube-rs's own
/// admission types: its JSONPatch mutates, its denial refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_written_for_a_cluster_call_the_tests_own_server() {
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    use kapi::testing::{Webhook, WebhookCertificates};
    use kube::core::admission::AdmissionResponse;
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let webhook = Webhook::serve(move |path, request| {
        let counted = counted.clone();
        async move {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let name = request.name.clone();
            let response = AdmissionResponse::from(&request);
            match path.as_str() {
                "/mutate-configmaps" => {
                    let patch: json_patch_4::Patch = serde_json::from_value(json!([
                        {"op": "add", "path": "/metadata/labels/webhooked", "value": "yes"}
                    ]))
                    .expect("patch");
                    response.with_patch(patch).expect("patch")
                }
                "/validate-configmaps" if name.starts_with("bad") => {
                    response.deny(format!("{name} is a bad name"))
                }
                _ => response,
            }
        }
    })
    .await
    .expect("webhook");
    // As a project's config/webhook/manifests.yaml has them.
    let rules = json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
        "resources": ["configmaps"]}]);
    let hook = |name: &str, path: &str| {
        json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "objectSelector": {"matchLabels": {"test": "yes"}}, "rules": rules,
            "clientConfig": {"service": {"namespace": "system", "name": "webhook-service", "path": path}}})
    };
    let mutating: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "mutating"},
        "webhooks": [hook("mconfigmap.example.com", "/mutate-configmaps")]
    }))
    .expect("mutating");
    let validating: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "validating"},
        "webhooks": [hook("vconfigmap.example.com", "/validate-configmaps")]
    }))
    .expect("validating");
    let server = Server::builder()
        .mutating_webhooks(mutating, &webhook)
        .validating_webhooks(validating, &webhook)
        .start()
        .await
        .expect("start");
    let installed: MutatingWebhookConfiguration = Api::all(server.client())
        .get("mutating")
        .await
        .expect("installed");
    let config = &installed.webhooks.unwrap_or_default()[0].client_config;
    assert_eq!(
        config.url.as_deref(),
        Some(webhook.url("/mutate-configmaps").as_str())
    );
    assert!(config.service.is_none());

    let configmaps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"test": "yes"}}}))
            .expect("cm")
    };
    // The first request after the client is handed out is already called out.
    let made = configmaps
        .create(&PostParams::default(), &cm("good"))
        .await
        .expect("create");
    assert_eq!(
        made.metadata.labels.unwrap_or_default().get("webhooked"),
        Some(&"yes".to_string())
    );
    match configmaps
        .create(&PostParams::default(), &cm("bad-one"))
        .await
    {
        Err(kube::Error::Api(s)) => assert!(
            s.message
                .contains("admission webhook \"vconfigmap.example.com\" denied the request")
                && s.message.contains("bad-one is a bad name"),
            "{s:?}"
        ),
        other => panic!("the validating webhook let it through: {other:?}"),
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);

    // Certificates for a webhook server the test runs itself.
    let certs = WebhookCertificates::generate().expect("certificates");
    for f in ["ca.crt", "tls.crt", "tls.key"] {
        assert!(certs.dir().join(f).is_file(), "{f}");
    }
    let dir = certs.dir().to_path_buf();
    let theirs = Webhook::running_at("127.0.0.1:9443".parse().expect("addr"), certs);
    assert_eq!(theirs.url("/x"), "https://127.0.0.1:9443/x");
    drop(theirs);
    assert!(!dir.exists(), "the certificate directory goes with it");
    server.shutdown().await;
}

/// A later server of the process starts from the first one's bootstrap
/// objects: it holds the same RBAC policy, APF configuration, system
/// PriorityClasses, namespaces and local APIServices, and its own
/// `kubernetes` Service pointing at its own port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_server_holds_the_same_bootstrap_objects_as_the_first() {
    use k8s_openapi::api::core::v1::{Endpoints, Namespace};
    use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use k8s_openapi::api::scheduling::v1::PriorityClass;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    async fn names<K>(client: kube::Client) -> Vec<String>
    where
        K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
        K::Scope: Sized,
    {
        let api: Api<K> = Api::all(client);
        let mut n: Vec<String> = api
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    o.meta().namespace.clone().unwrap_or_default(),
                    o.meta().name.clone().unwrap_or_default()
                )
            })
            .collect();
        n.sort();
        n
    }
    async fn bootstrap(client: kube::Client) -> Vec<Vec<String>> {
        vec![
            names::<ClusterRole>(client.clone()).await,
            names::<ClusterRoleBinding>(client.clone()).await,
            names::<Role>(client.clone()).await,
            names::<RoleBinding>(client.clone()).await,
            names::<FlowSchema>(client.clone()).await,
            names::<PriorityLevelConfiguration>(client.clone()).await,
            names::<PriorityClass>(client.clone()).await,
            names::<Namespace>(client.clone()).await,
            names::<APIService>(client).await,
        ]
    }
    let first = Server::start().await.expect("first");
    let second = Server::start().await.expect("second");
    let (a, b) = (
        bootstrap(first.client()).await,
        bootstrap(second.client()).await,
    );
    assert!(a[0].len() > 20 && a[4].len() > 5, "{a:?}");
    assert_eq!(a, b);
    for server in [&first, &second] {
        let port = server.url().rsplit(':').next().expect("port").to_string();
        let eps: Endpoints = Api::namespaced(server.client(), "default")
            .get("kubernetes")
            .await
            .expect("kubernetes endpoints");
        let got = eps.subsets.unwrap_or_default()[0]
            .ports
            .clone()
            .unwrap_or_default()[0]
            .port;
        assert_eq!(got.to_string(), port);
    }
    // RBAC on the later server works from what it was given: the seeded
    // `view` role (aggregated) grants what it grants upstream.
    let viewer = second
        .client_for_user("vera", &["system:authenticated"])
        .await
        .expect("client");
    let configmaps = Api::<ConfigMap>::namespaced(viewer, "default");
    let denied = configmaps.list(&Default::default()).await;
    assert!(
        matches!(denied, Err(kube::Error::Api(ref s)) if s.code == 403),
        "{denied:?}"
    );
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "vera-views"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "vera"}]
    }))
    .expect("binding");
    Api::<RoleBinding>::namespaced(second.client(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .expect("bind");
    configmaps
        .list(&Default::default())
        .await
        .expect("view lets vera list configmaps");
    second.shutdown().await;
    first.shutdown().await;
}
