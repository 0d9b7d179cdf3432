//! Discovery (legacy and aggregated) and OpenAPI, as kubectl, the kube
//! crate and raw HTTP read them.

mod common;

use common::{run, runtime, Kapi};

const AGG_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
const AGG_V2BETA1: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

#[test]
fn aggregated_discovery_shapes() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        for (accept, version) in [(AGG_V2, "v2"), (AGG_V2BETA1, "v2beta1")] {
            let r = c
                .get(format!("{}/apis", k.url))
                .header("Accept", accept)
                .send()
                .await
                .expect("apis");
            assert_eq!(r.status(), 200);
            assert_eq!(
                r.headers()["content-type"],
                format!(
                    "application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
                )
            );
            assert_eq!(r.headers()["vary"], "Accept");
            let etag = r.headers()["etag"].to_str().expect("etag").to_string();
            let v: serde_json::Value = r.json().await.expect("json");
            assert_eq!(v["kind"], "APIGroupDiscoveryList");
            assert_eq!(v["apiVersion"], format!("apidiscovery.k8s.io/{version}"));
            let items = v["items"].as_array().expect("items");
            let names: Vec<&str> = items
                .iter()
                .filter_map(|g| g["metadata"]["name"].as_str())
                .collect();
            assert_eq!(
                names.first(),
                Some(&"apiregistration.k8s.io"),
                "upstream's priority order: {names:?}"
            );
            let apps = items
                .iter()
                .find(|g| g["metadata"]["name"] == "apps")
                .expect("apps");
            assert_eq!(apps["versions"][0]["version"], "v1");
            assert_eq!(apps["versions"][0]["freshness"], "Current");
            let deploy = apps["versions"][0]["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .find(|r| r["resource"] == "deployments")
                .expect("deployments");
            assert_eq!(
                deploy["responseKind"],
                serde_json::json!({"group": "", "version": "", "kind": "Deployment"})
            );
            assert_eq!(deploy["scope"], "Namespaced");
            assert_eq!(deploy["singularResource"], "deployment");
            assert_eq!(deploy["shortNames"], serde_json::json!(["deploy"]));
            assert_eq!(deploy["categories"], serde_json::json!(["all"]));
            let scale = deploy["subresources"]
                .as_array()
                .expect("subs")
                .iter()
                .find(|s| s["subresource"] == "scale")
                .expect("scale");
            assert_eq!(
                scale["responseKind"],
                serde_json::json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
            );
            let autoscaling = items
                .iter()
                .find(|g| g["metadata"]["name"] == "autoscaling")
                .expect("autoscaling");
            let versions: Vec<&str> = autoscaling["versions"]
                .as_array()
                .expect("v")
                .iter()
                .filter_map(|x| x["version"].as_str())
                .collect();
            assert_eq!(versions, vec!["v2", "v1"]);
            // Unchanged documents answer 304 to their ETag.
            let r = c
                .get(format!("{}/apis", k.url))
                .header("Accept", accept)
                .header("If-None-Match", &etag)
                .send()
                .await
                .expect("again");
            assert_eq!(r.status(), 304);
            let r = c
                .get(format!("{}/api", k.url))
                .header("Accept", accept)
                .send()
                .await
                .expect("api");
            let v: serde_json::Value = r.json().await.expect("json");
            assert_eq!(v["items"].as_array().map(Vec::len), Some(1));
            assert!(v["items"][0]["metadata"].get("name").is_none());
            assert_eq!(v["items"][0]["versions"][0]["version"], "v1");
        }
        // Without the aggregated media type: the legacy documents.
        let v: serde_json::Value = c
            .get(format!("{}/apis", k.url))
            .send()
            .await
            .expect("apis")
            .json()
            .await
            .expect("json");
        assert_eq!(v["kind"], "APIGroupList");
        let v: serde_json::Value = c
            .get(format!("{}/api", k.url))
            .send()
            .await
            .expect("api")
            .json()
            .await
            .expect("json");
        assert_eq!(v["kind"], "APIVersions");
        assert_eq!(v["versions"], serde_json::json!(["v1"]));
        assert_eq!(
            v["serverAddressByClientCIDRs"][0]["clientCIDR"],
            "0.0.0.0/0"
        );
        let v: serde_json::Value = c
            .get(format!("{}/apis/apps", k.url))
            .send()
            .await
            .expect("group")
            .json()
            .await
            .expect("json");
        assert_eq!(v["kind"], "APIGroup");
        assert_eq!(
            v["preferredVersion"],
            serde_json::json!({"groupVersion": "apps/v1", "version": "v1"})
        );
        let v: serde_json::Value = c
            .get(format!("{}/api/v1", k.url))
            .send()
            .await
            .expect("v1")
            .json()
            .await
            .expect("json");
        let pods = v["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["name"] == "pods")
            .expect("pods");
        assert_eq!(pods["storageVersionHash"].as_str().map(str::len), Some(12));
        assert_eq!(pods["categories"], serde_json::json!(["all"]));
    });
}

#[test]
fn openapi_v2_and_v3_documents() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let index: serde_json::Value = c
            .get(format!("{}/openapi/v3", k.url))
            .send()
            .await
            .expect("index")
            .json()
            .await
            .expect("json");
        let apps = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .expect("apps/v1 entry");
        assert!(apps.starts_with("/openapi/v3/apis/apps/v1?hash="), "{apps}");
        let r = c.get(format!("{}{apps}", k.url)).send().await.expect("doc");
        assert_eq!(r.headers()["cache-control"], "public, immutable");
        let doc: serde_json::Value = r.json().await.expect("json");
        assert_eq!(doc["openapi"], "3.0.0");
        let deploy = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deploy["x-kubernetes-group-version-kind"],
            serde_json::json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
        );
        let containers =
            &doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(
            containers["x-kubernetes-list-map-keys"],
            serde_json::json!(["name"])
        );
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
        assert_eq!(patch["x-kubernetes-action"], "patch");
        assert!(patch["parameters"]
            .as_array()
            .expect("params")
            .iter()
            .any(|p| p["name"] == "fieldValidation"));
        let v2: serde_json::Value = c
            .get(format!("{}/openapi/v2", k.url))
            .send()
            .await
            .expect("v2")
            .json()
            .await
            .expect("json");
        assert_eq!(v2["swagger"], "2.0");
        assert!(
            v2["definitions"]["io.k8s.api.core.v1.ConfigMap"]["properties"]["data"].is_object()
        );
        assert!(v2["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"].is_object());
    });
}

#[test]
fn kubectl_explores_the_api() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = run(k.kubectl().args(["api-versions"]));
    assert!(ok, "{err}");
    for gv in [
        "v1",
        "apps/v1",
        "autoscaling/v2",
        "resource.k8s.io/v1",
        "rbac.authorization.k8s.io/v1",
    ] {
        assert!(out.lines().any(|l| l == gv), "{gv} missing: {out}");
    }
    let (ok, out, err) = run(k
        .kubectl()
        .args(["api-resources", "--api-group=apps", "-o", "wide"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("deployments")
            && out.contains("deploy")
            && out.contains("apps/v1")
            && out.contains("all"),
        "{out}"
    );
    let (ok, out, err) =
        run(k
            .kubectl()
            .args(["api-resources", "--namespaced=false", "-o", "name"]));
    assert!(ok, "{err}");
    assert!(
        out.lines().any(|l| l == "namespaces") && !out.lines().any(|l| l == "pods"),
        "{out}"
    );
    let (ok, out, err) = run(k
        .kubectl()
        .args(["explain", "deployment.spec.template.spec.containers"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("FIELD: containers <[]Container>") && out.contains("image\t<string>"),
        "{out}"
    );
    let (ok, out, err) = run(k.kubectl().args(["explain", "configmap", "--recursive"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("binaryData") && out.contains("managedFields"),
        "{out}"
    );
    let (ok, out, err) = run(k.kubectl().args(["get", "all", "-n", "default"]));
    assert!(ok, "{err}");
    assert!(out.contains("service/kubernetes"), "{out}");
}

#[test]
fn kube_discovery_lists_every_group() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        let client = kube::Client::try_from(cfg).expect("client");
        let d = kube::Discovery::new(client).run().await.expect("discovery");
        let groups: Vec<String> = d.groups().map(|g| g.name().to_string()).collect();
        for g in [
            "",
            "apps",
            "batch",
            "apiextensions.k8s.io",
            "apiregistration.k8s.io",
            "resource.k8s.io",
        ] {
            assert!(groups.iter().any(|x| x == g), "{g} missing from {groups:?}");
        }
        let apps = d.get("apps").expect("apps");
        let (ar, caps) = apps.recommended_kind("Deployment").expect("deployment");
        assert_eq!(ar.plural, "deployments");
        assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
        assert!(
            caps.subresources
                .iter()
                .any(|(s, _)| s.plural == "deployments/scale" || s.plural == "scale"),
            "{:?}",
            caps.subresources
                .iter()
                .map(|(s, _)| s.plural.clone())
                .collect::<Vec<_>>()
        );
        let core = d.get("").expect("core");
        let (_, caps) = core.recommended_kind("Namespace").expect("namespace");
        assert_eq!(caps.scope, kube::discovery::Scope::Cluster);
    });
}

/// Polls `f` every 20 ms; the time it took for `f` to hold, or a panic
/// naming `what` after `limit`.
fn within(
    limit: std::time::Duration,
    what: &str,
    mut f: impl FnMut() -> bool,
) -> std::time::Duration {
    let start = std::time::Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    start.elapsed()
}

#[test]
fn a_crd_shows_in_discovery_and_openapi_within_a_second_and_leaves_again() {
    let k = Kapi::start(&[]);
    let client = k.admin_client();
    let rt = runtime();
    let get = |path: &str, accept: &str| -> (u16, serde_json::Value) {
        rt.block_on(async {
            let r = client
                .get(format!("{}{path}", k.url))
                .header("Accept", accept)
                .send()
                .await
                .expect("get");
            let code = r.status().as_u16();
            (code, r.json().await.unwrap_or(serde_json::Value::Null))
        })
    };
    const AGG: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let in_discovery = |get: &dyn Fn(&str, &str) -> (u16, serde_json::Value)| {
        let (_, doc) = get("/apis", AGG);
        doc["items"].as_array().into_iter().flatten().any(|g| {
            g["metadata"]["name"] == "example.com"
                && g["versions"][0]["resources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["resource"] == "gadgets" && r["responseKind"]["kind"] == "Gadget")
        })
    };
    let in_openapi = |get: &dyn Fn(&str, &str) -> (u16, serde_json::Value)| {
        let (_, index) = get("/openapi/v3", "application/json");
        index["paths"].get("apis/example.com/v1").is_some()
    };
    assert!(!in_discovery(&get) && !in_openapi(&get));
    let (ok, crd, err) = run(std::process::Command::new(common::kapi_bin()).args([
        "scaffold",
        "crd",
        "--group",
        "example.com",
        "--kind",
        "Gadget",
    ]));
    assert!(ok, "{err}");
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], &crd);
    assert!(ok, "{err}");
    let second = std::time::Duration::from_secs(1);
    within(second, "the CRD in aggregated discovery", || {
        in_discovery(&get)
    });
    within(second, "the CRD in the OpenAPI v3 index", || {
        in_openapi(&get)
    });
    let (code, doc) = get("/openapi/v3/apis/example.com/v1", "application/json");
    assert_eq!(code, 200);
    let schema = &doc["components"]["schemas"]["com.example.v1.Gadget"];
    assert_eq!(
        schema["x-kubernetes-group-version-kind"][0]["kind"], "Gadget",
        "{schema:#}"
    );
    assert_eq!(
        schema["properties"]["spec"]["properties"]["replicas"]["type"],
        "integer"
    );
    let (_, v2) = get("/openapi/v2", "application/json");
    assert!(v2["definitions"].get("com.example.v1.Gadget").is_some());
    // kubectl learns the new kind from both.
    let (ok, out, err) =
        run(k
            .kubectl()
            .args(["api-resources", "--api-group=example.com", "-o", "name"]));
    assert!(ok && out.trim() == "gadgets.example.com", "{out}{err}");
    let (ok, out, err) = run(k.kubectl().args(["explain", "gadget.spec.replicas"]));
    assert!(ok && out.contains("<integer>"), "{out}{err}");
    let gadget = "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: default\nspec:\n  replicas: 2\n  bogus: 1\n";
    let (ok, _, err) = k.kubectl_stdin(&["apply", "-f", "-"], gadget);
    assert!(!ok, "an unknown field was accepted");
    assert!(
        err.contains("unknown field") && err.contains("bogus"),
        "{err}"
    );
    // Removed, it leaves both within a second.
    let (ok, _, err) =
        run(k
            .kubectl()
            .args(["delete", "crd", "gadgets.example.com", "--wait=false"]));
    assert!(ok, "{err}");
    within(second * 5, "the CRD gone from aggregated discovery", || {
        !in_discovery(&get)
    });
    within(second, "the CRD gone from the OpenAPI v3 index", || {
        !in_openapi(&get)
    });
    let (code, _) = get("/openapi/v3/apis/example.com/v1", "application/json");
    assert_eq!(code, 404);
    let (ok, out, _) =
        run(k
            .kubectl()
            .args(["api-resources", "--api-group=example.com", "-o", "name"]));
    assert!(ok && out.trim().is_empty(), "{out}");
}

/// Go writes discovery documents in its structs' field order (kubectl's
/// own tests grep the raw text), /api/v1 without an apiVersion; groups of
/// equal priority (custom resources') come by name, not by age.
#[test]
fn discovery_documents_keep_gos_field_order_and_groups_tie_by_name() {
    let k = Kapi::start(&[]);
    let c = k.admin_client();
    common::runtime().block_on(async {
        let raw = |path: &'static str| {
            let (c, url) = (c.clone(), format!("{}{path}", k.url));
            async move { c.get(url).send().await.expect("get").text().await.expect("text") }
        };
        let v1 = raw("/api/v1").await;
        assert!(
            v1.starts_with(r#"{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":["create"]}"#),
            "{}",
            &v1[..200.min(v1.len())]
        );
        let apps = raw("/apis/apps/v1").await;
        assert!(apps.starts_with(r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"controllerrevisions","singularName":"controllerrevision","namespaced":true,"kind":"ControllerRevision","verbs":"#), "{apps}");
        assert!(apps.contains(r#"{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":"#), "{apps}");
        let group = raw("/apis/apps").await;
        assert_eq!(group, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"apps\",\"versions\":[{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}],\"preferredVersion\":{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}}\n");
        let versions = raw("/api").await;
        assert!(versions.starts_with(r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"#), "{versions}");

        // Two CRD groups, the later one first by name.
        for group in ["zzz.example.com", "aaa.example.com"] {
            let crd = serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("things.{group}")},
                "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
            let r = c
                .post(format!("{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions", k.url))
                .json(&crd)
                .send()
                .await
                .expect("crd");
            assert_eq!(r.status().as_u16(), 201);
        }
        let mut order = Vec::new();
        for _ in 0..100 {
            let list: serde_json::Value = serde_json::from_str(&raw("/apis").await).expect("json");
            order = list["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g["name"].as_str())
                .filter(|n| n.ends_with(".example.com"))
                .map(String::from)
                .collect();
            if order.len() == 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(order, ["aaa.example.com", "zzz.example.com"]);
        let list = raw("/apis").await;
        assert!(list.starts_with(r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apiregistration.k8s.io","versions":[{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}],"preferredVersion":"#), "{list}");
    });
}
