//! CustomResourceDefinitions end to end: defined, served within a second,
//! used with kubectl and the kube crate's derive, and deleted with their objects.

mod common;

use std::time::{Duration, Instant};

use common::{run, runtime, Kapi};
use kube::CustomResourceExt;
use serde::{Deserialize, Serialize};

const CRONTAB_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
"#;

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

#[test]
fn a_crd_is_served_within_a_second_and_removed_with_its_objects() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], CRONTAB_CRD);
    assert!(ok, "{err}");
    let took = wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "crontabs"])).0
    });
    assert!(took < Duration::from_secs(1), "served after {took:?}");
    let (ok, out, err) =
        run(k
            .kubectl()
            .args(["get", "crd", "crontabs.stable.example.com", "-o", "json"]));
    assert!(ok, "{err}");
    let crd: serde_json::Value = serde_json::from_str(&out).expect("json");
    let conds = crd["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (ty, reason) in [
        ("NamesAccepted", "NoConflicts"),
        ("Established", "InitialNamesAccepted"),
    ] {
        let c = conds
            .iter()
            .find(|c| c["type"] == ty)
            .unwrap_or_else(|| panic!("{ty} missing: {conds:?}"));
        assert_eq!(
            (c["status"].as_str(), c["reason"].as_str()),
            (Some("True"), Some(reason))
        );
    }
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "CronTab");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"],
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: c1\nspec:\n  cronSpec: '*/5 * * * *'\n  image: busy\n  replicas: 2\n",
    );
    assert!(ok, "{err}");
    let (ok, out, err) = run(k.kubectl().args(["get", "ct"]));
    assert!(ok, "{err}");
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, vec!["NAME", "SPEC", "REPLICAS"]);
    assert!(out.contains("c1") && out.contains("*/5 * * * *"), "{out}");
    let (ok, _, err) = run(k.kubectl().args(["scale", "crontab", "c1", "--replicas=4"]));
    assert!(ok, "{err}");
    let (_, out, _) = run(k
        .kubectl()
        .args(["get", "ct", "c1", "-o", "jsonpath={.spec.replicas}"]));
    assert_eq!(out, "4");
    let (ok, out, _) = run(k.kubectl().args(["get", "all", "-o", "name"]));
    assert!(ok && out.contains("crontab.stable.example.com/c1"), "{out}");
    let (ok, out, err) = run(k.kubectl().args([
        "api-resources",
        "--api-group=stable.example.com",
        "-o",
        "name",
    ]));
    assert!(
        ok && out.trim() == "crontabs.stable.example.com",
        "{out}{err}"
    );
    let (ok, out, err) = run(k.kubectl().args(["explain", "crontab.spec"]));
    assert!(ok && out.contains("cronSpec"), "{out}{err}");
    // The status subresource changes only status; the main resource ignores status.
    let (ok, _, err) = run(k.kubectl().args([
        "patch",
        "ct",
        "c1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":3},"spec":{"image":"ignored"}}"#,
    ]));
    assert!(ok, "{err}");
    let (_, out, _) = run(k.kubectl().args(["get", "ct", "c1", "-o", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (
            v["status"]["replicas"].as_i64(),
            v["spec"]["image"].as_str()
        ),
        (Some(3), Some("busy"))
    );
    // Deleting the CRD deletes every object and the routes.
    let (ok, _, err) = run(k
        .kubectl()
        .args(["delete", "crd", "crontabs.stable.example.com"]));
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        let (ok, _, err) = run(k
            .kubectl()
            .args(["get", "crd", "crontabs.stable.example.com"]));
        !ok && err.contains("NotFound")
    });
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!(
                "{}/apis/stable.example.com/v1/namespaces/default/crontabs",
                k.url
            ))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 404);
        let r = k
            .admin_client()
            .get(format!("{}/apis", k.url))
            .send()
            .await
            .expect("apis");
        let v: serde_json::Value = r.json().await.expect("json");
        assert!(
            !v.to_string().contains("stable.example.com"),
            "group still in discovery"
        );
    });
    // Defined again, no old object comes back.
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], CRONTAB_CRD);
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "crontabs"])).0
    });
    let (_, out, _) = run(k.kubectl().args(["get", "crontabs", "-o", "name"]));
    assert!(out.trim().is_empty(), "objects survived their CRD: {out}");
}

#[derive(kube::CustomResource, Deserialize, Serialize, Clone, Debug, schemars::JsonSchema)]
#[kube(
    group = "kapi.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    size: i64,
    color: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, schemars::JsonSchema)]
pub struct WidgetStatus {
    ready: bool,
}

#[test]
fn kube_derive_defines_and_uses_a_custom_resource() {
    use futures::StreamExt;
    use kube::api::{
        Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
    };
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.expect("config");
        let client = kube::Client::try_from(cfg).expect("client");
        let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = Api::all(client.clone());
        crds.create(&PostParams::default(), &Widget::crd()).await.expect("create crd");
        let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(5);
        while widgets.list(&ListParams::default()).await.is_err() {
            assert!(Instant::now() < deadline, "widgets never served");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut stream = widgets.watch(&WatchParams::default().timeout(10), "0").await.expect("watch").boxed();
        let w = Widget::new("w1", WidgetSpec { size: 3, color: None });
        let created = widgets.create(&PostParams::default(), &w).await.expect("create");
        assert_eq!(created.spec.size, 3);
        let patch = serde_json::json!({"spec": {"color": "blue"}});
        let patched = widgets.patch("w1", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("patch");
        assert_eq!(patched.spec.color.as_deref(), Some("blue"));
        let status = serde_json::json!({"status": {"ready": true}});
        let st = widgets.patch_status("w1", &PatchParams::default(), &Patch::Merge(&status)).await.expect("status");
        assert!(st.status.map(|s| s.ready).unwrap_or(false));
        widgets.delete("w1", &DeleteParams::default()).await.expect("delete");
        let mut seen = Vec::new();
        while seen.len() < 4 {
            match tokio::time::timeout(Duration::from_secs(10), stream.next()).await.expect("event in time") {
                Some(Ok(WatchEvent::Added(_))) => seen.push("ADDED"),
                Some(Ok(WatchEvent::Modified(_))) => seen.push("MODIFIED"),
                Some(Ok(WatchEvent::Deleted(_))) => seen.push("DELETED"),
                Some(Ok(_)) => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seen, vec!["ADDED", "MODIFIED", "MODIFIED", "DELETED"]);
    });
}

const SHIRTS_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shirts.wear.example.com
spec:
  group: wear.example.com
  scope: Namespaced
  names: {plural: shirts, singular: shirt, kind: Shirt}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.minReplicas <= self.replicas"
              message: "replicas must not be below minReplicas"
            - rule: "self.color == oldSelf.color"
              message: "color is immutable"
            properties:
              color: {type: string, enum: [red, blue, green]}
              size: {type: string, default: M, pattern: "^(S|M|L|XL)$"}
              replicas: {type: integer, minimum: 1, maximum: 10}
              minReplicas: {type: integer, default: 1}
"#;

fn post(
    k: &Kapi,
    path: &str,
    body: serde_json::Value,
) -> (u16, reqwest::header::HeaderMap, serde_json::Value) {
    runtime().block_on(async {
        let r = k
            .admin_client()
            .post(format!("{}{path}", k.url))
            .json(&body)
            .send()
            .await
            .expect("post");
        let (code, headers) = (r.status().as_u16(), r.headers().clone());
        (code, headers, r.json().await.unwrap_or_default())
    })
}

#[test]
fn custom_resources_are_defaulted_pruned_and_validated() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], SHIRTS_CRD);
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "shirts"])).0
    });
    let path = "/apis/wear.example.com/v1/namespaces/default/shirts";
    let shirt = |name: &str, spec: serde_json::Value| serde_json::json!({"apiVersion": "wear.example.com/v1", "kind": "Shirt", "metadata": {"name": name}, "spec": spec});
    // Defaults fill in, unknown fields are pruned with a warning.
    let (code, headers, v) = post(
        &k,
        path,
        shirt(
            "s1",
            serde_json::json!({"color": "red", "replicas": 2, "bogus": true}),
        ),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["size"], "M");
    assert_eq!(v["spec"]["minReplicas"], 1);
    assert!(v["spec"].get("bogus").is_none(), "{v}");
    let warning = headers
        .get("warning")
        .and_then(|w| w.to_str().ok())
        .unwrap_or("");
    assert!(
        warning.contains("unknown field \\\"spec.bogus\\\""),
        "{warning}"
    );
    // Schema violations: 422 with the field path.
    let (code, _, v) = post(
        &k,
        path,
        shirt("s2", serde_json::json!({"color": "purple", "replicas": 0})),
    );
    assert_eq!(code, 422, "{v}");
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert!(
        fields.contains(&"spec.color") && fields.contains(&"spec.replicas"),
        "{v}"
    );
    let msg = v["message"].as_str().unwrap_or("");
    assert!(
        msg.starts_with("Shirt.wear.example.com \"s2\" is invalid:"),
        "{msg}"
    );
    assert!(msg.contains("spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"), "{msg}");
    assert!(msg.contains("spec.color: Unsupported value: \"purple\": supported values: \"red\", \"blue\", \"green\""), "{msg}");
    // A CEL rule.
    let (code, _, v) = post(
        &k,
        path,
        shirt(
            "s3",
            serde_json::json!({"color": "blue", "replicas": 2, "minReplicas": 3}),
        ),
    );
    assert_eq!(code, 422, "{v}");
    let cause = &v["details"]["causes"][0];
    assert_eq!(cause["field"], "spec");
    assert!(
        cause["message"]
            .as_str()
            .unwrap_or("")
            .contains("replicas must not be below minReplicas"),
        "{v}"
    );
    // A transition rule: color may not change.
    let (ok, _, err) = run(k.kubectl().args([
        "patch",
        "shirt",
        "s1",
        "--type=merge",
        "-p",
        r#"{"spec":{"color":"green"}}"#,
    ]));
    assert!(!ok && err.contains("color is immutable"), "{err}");
    let (ok, _, err) = run(k.kubectl().args([
        "patch",
        "shirt",
        "s1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]));
    assert!(ok, "{err}");
}

/// A conversion webhook served by the test over TLS: v1 `spec.cronSpec` is v2 `spec.schedule`.
fn conversion_webhook() -> (u16, String, tokio::runtime::Runtime) {
    use axum::routing::post;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("rt");
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca_params = rcgen::CertificateParams::default();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "webhook-ca");
    let ca = ca_params.self_signed(&ca_key).expect("ca");
    let key = rcgen::KeyPair::generate().expect("key");
    let params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .expect("params");
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer).expect("cert");
    let ca_pem = ca.pem();
    let authority =
        kapi::auth::x509::ClientCertAuthority::new(&[ca_pem.as_str()]).expect("authority");
    let tls = kapi::server::serve::TlsServing::new(&cert.pem(), &key.serialize_pem(), authority)
        .expect("tls");
    let app = axum::Router::new().route(
        "/convert",
        post(|axum::Json(review): axum::Json<serde_json::Value>| async move {
            let req = &review["request"];
            let desired = req["desiredAPIVersion"].as_str().unwrap_or("").to_string();
            let converted: Vec<serde_json::Value> = req["objects"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|mut o| {
                    let spec = o["spec"].as_object_mut().map(std::mem::take).unwrap_or_default();
                    let mut spec = spec;
                    if desired.ends_with("/v2") {
                        if let Some(v) = spec.remove("cronSpec") {
                            spec.insert("schedule".into(), v);
                        }
                    } else if let Some(v) = spec.remove("schedule") {
                        spec.insert("cronSpec".into(), v);
                    }
                    o["spec"] = serde_json::Value::Object(spec);
                    o["apiVersion"] = serde_json::json!(desired);
                    o
                })
                .collect();
            axum::Json(serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": req["uid"], "convertedObjects": converted, "result": {"status": "Success"}}}))
        }),
    );
    let port = rt.block_on(async {
        let (listener, addr) = kapi::server::serve::bind("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        tokio::spawn(kapi::server::serve::serve(
            listener,
            tls,
            app,
            tokio_util::sync::CancellationToken::new(),
            Duration::from_secs(1),
        ));
        addr.port()
    });
    use base64::Engine;
    (
        port,
        base64::engine::general_purpose::STANDARD.encode(ca_pem),
        rt,
    )
}

#[test]
fn versions_convert_through_a_webhook() {
    let (port, ca_bundle, _webhook_rt) = conversion_webhook();
    let k = Kapi::start(&[]);
    let crd = format!(
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobs.sched.example.com
spec:
  group: sched.example.com
  scope: Namespaced
  names: {{plural: jobs, singular: job, kind: Job}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: https://127.0.0.1:{port}/convert
        caBundle: {ca_bundle}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {{type: object, properties: {{spec: {{type: object, properties: {{cronSpec: {{type: string}}}}}}}}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema: {{type: object, properties: {{spec: {{type: object, properties: {{schedule: {{type: string}}}}}}}}}}
"#
    );
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], &crd);
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "jobs.v2.sched.example.com"])).0
    });
    // Written in v2, stored in v1 through the webhook, read back in both.
    let (code, _, v) = post(
        &k,
        "/apis/sched.example.com/v2/namespaces/default/jobs",
        serde_json::json!({"apiVersion": "sched.example.com/v2", "kind": "Job", "metadata": {"name": "j1"}, "spec": {"schedule": "@daily"}}),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["apiVersion"], "sched.example.com/v2");
    assert_eq!(v["spec"]["schedule"], "@daily");
    runtime().block_on(async {
        let c = k.admin_client();
        let v1: serde_json::Value = c
            .get(format!(
                "{}/apis/sched.example.com/v1/namespaces/default/jobs/j1",
                k.url
            ))
            .send()
            .await
            .expect("v1")
            .json()
            .await
            .expect("json");
        assert_eq!(v1["apiVersion"], "sched.example.com/v1");
        assert_eq!(v1["spec"], serde_json::json!({"cronSpec": "@daily"}));
        let v2: serde_json::Value = c
            .get(format!(
                "{}/apis/sched.example.com/v2/namespaces/default/jobs",
                k.url
            ))
            .send()
            .await
            .expect("v2")
            .json()
            .await
            .expect("json");
        assert_eq!(v2["items"][0]["apiVersion"], "sched.example.com/v2");
        assert_eq!(
            v2["items"][0]["spec"],
            serde_json::json!({"schedule": "@daily"})
        );
    });
}

/// Two versions, no conversion webhook, each schema knowing a field the
/// other does not (as kube-rs's `crd_derive_multi` example, which its CI
/// runs against a real cluster).
fn multi_version_crd(storage: &str) -> String {
    let version = |name: &str, field: &str, ty: &str| {
        format!(
            "  - name: {name}\n    served: true\n    storage: {}\n    schema:\n      openAPIV3Schema: {{type: object, properties: {{spec: {{type: object, properties: {{name: {{type: string}}, {field}: {{type: {ty}}}}}}}}}}}\n",
            name == storage
        )
    };
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: manys.multi.example.com\nspec:\n  group: multi.example.com\n  scope: Namespaced\n  names: {{plural: manys, singular: many, kind: Many}}\n  versions:\n{}{}",
        version("v1", "oldprop", "integer"),
        version("v2", "extra", "string"),
    )
}

fn get_json(k: &Kapi, path: &str) -> serde_json::Value {
    runtime().block_on(async {
        k.admin_client()
            .get(format!("{}{path}", k.url))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json")
    })
}

/// upstream's storage codec prunes what is converted to a version by that
/// version's schema: written through v2 into v1 storage, `extra` is not
/// stored; read through v2, v1's `oldprop` is not shown. And objects keep
/// the version they were stored in when the CRD's storage version moves:
/// each is still served in the version asked for.
#[test]
fn versions_prune_by_their_own_schema_and_survive_a_storage_version_switch() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(&["apply", "-f", "-"], &multi_version_crd("v1"));
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "manys.v2.multi.example.com"])).0
    });
    let base = "/apis/multi.example.com";
    let (code, _, v) = post(
        &k,
        &format!("{base}/v1/namespaces/default/manys"),
        serde_json::json!({"apiVersion": "multi.example.com/v1", "kind": "Many", "metadata": {"name": "old"}, "spec": {"name": "o", "oldprop": 5}}),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"], serde_json::json!({"name": "o", "oldprop": 5}));
    // Written in v2, stored in v1: `extra` is pruned on the way, and the
    // answer (the stored object, converted back) no longer has it.
    let (code, _, v) = post(
        &k,
        &format!("{base}/v2/namespaces/default/manys"),
        serde_json::json!({"apiVersion": "multi.example.com/v2", "kind": "Many", "metadata": {"name": "new"}, "spec": {"name": "n", "extra": "hi"}}),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["apiVersion"], "multi.example.com/v2");
    assert_eq!(v["spec"], serde_json::json!({"name": "n"}));
    let v = get_json(&k, &format!("{base}/v2/namespaces/default/manys/old"));
    assert_eq!(v["apiVersion"], "multi.example.com/v2");
    assert_eq!(
        v["spec"],
        serde_json::json!({"name": "o"}),
        "v2 does not know oldprop"
    );
    let v = get_json(&k, &format!("{base}/v1/namespaces/default/manys/old"));
    assert_eq!(v["spec"]["oldprop"], 5, "still stored: {v}");

    // The storage version moves to v2; both objects stay stored in v1.
    let (ok, _, err) = k.kubectl_stdin(&["apply", "-f", "-"], &multi_version_crd("v2"));
    assert!(ok, "{err}");
    wait_until(Duration::from_secs(5), || {
        get_json(
            &k,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/manys.multi.example.com",
        )["status"]["storedVersions"]
            .as_array()
            .is_some_and(|v| v.len() == 2)
    });
    // Served from the new storage version once a write through v2 keeps
    // `extra` (probes in another namespace, out of the lists below).
    let mut probe = 0;
    wait_until(Duration::from_secs(5), || {
        probe += 1;
        let (code, _, v) = post(
            &k,
            &format!("{base}/v2/namespaces/kube-system/manys"),
            serde_json::json!({"apiVersion": "multi.example.com/v2", "kind": "Many", "metadata": {"name": format!("probe-{probe}")}, "spec": {"name": "p", "extra": "kept"}}),
        );
        assert_eq!(code, 201, "{v}");
        v["spec"]["extra"] == "kept"
    });
    for (version, want_old) in [
        ("v2", serde_json::json!({"name": "o"})),
        ("v1", serde_json::json!({"name": "o", "oldprop": 5})),
    ] {
        let list = get_json(&k, &format!("{base}/{version}/namespaces/default/manys"));
        let items = list["items"].as_array().cloned().unwrap_or_default();
        assert_eq!(items.len(), 2, "{list}");
        for item in &items {
            assert_eq!(
                item["apiVersion"],
                format!("multi.example.com/{version}"),
                "{item}"
            );
        }
        let old = items
            .iter()
            .find(|i| i["metadata"]["name"] == "old")
            .expect("old");
        assert_eq!(old["spec"], want_old, "{version}");
        // A watch's initial events are served in the version asked for too.
        let text = runtime().block_on(async {
            k.admin_client()
                .get(format!(
                    "{}{base}/{version}/namespaces/default/manys?watch=true&resourceVersion=0&timeoutSeconds=1",
                    k.url
                ))
                .send()
                .await
                .expect("watch")
                .text()
                .await
                .expect("text")
        });
        let events: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("event"))
            .collect();
        assert_eq!(events.len(), 2, "{text}");
        for e in &events {
            assert_eq!(
                e["object"]["apiVersion"],
                format!("multi.example.com/{version}"),
                "{e}"
            );
        }
    }
    // Applied through v1 now that v2 is stored: `oldprop` is not stored,
    // so the answer in v1 lacks it (kube-rs's example expects its v1 type
    // to fail to decode it), while the change itself is kept.
    let (code, _, v) = runtime().block_on(async {
        let r = k
            .admin_client()
            .patch(format!("{}{base}/v1/namespaces/default/manys/old?fieldManager=t&force=true", k.url))
            .header("content-type", "application/apply-patch+yaml")
            .body(r#"{"apiVersion": "multi.example.com/v1", "kind": "Many", "metadata": {"name": "old"}, "spec": {"name": "o2", "oldprop": 6}}"#)
            .send()
            .await
            .expect("apply");
        let code = r.status().as_u16();
        (code, (), r.json::<serde_json::Value>().await.unwrap_or_default())
    });
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["apiVersion"], "multi.example.com/v1");
    assert_eq!(v["spec"], serde_json::json!({"name": "o2"}));
    let v = get_json(&k, &format!("{base}/v2/namespaces/default/manys/old"));
    assert_eq!(v["spec"], serde_json::json!({"name": "o2"}));
}

/// kubectl apply of a custom resource that exists already: kubectl picks
/// its patch type from the OpenAPI v3 PATCH content types (a strategic
/// merge patch, which custom resources refuse, if listed), and validates
/// against v2, where a schema keeping unknown fields is an open object.
#[test]
fn kubectl_applies_custom_resources_again_and_keeps_unknown_fields() {
    let k = Kapi::start(&[]);
    let dir = tempfile::tempdir().expect("tmp");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.to_string_lossy().into_owned()
    };
    let crd = write(
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: foos.company.com}\nspec:\n  group: company.com\n  scope: Namespaced\n  names: {plural: foos, singular: foo, kind: Foo}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n",
    );
    let (ok, _, err) = run(k.kubectl().args(["apply", "-f", &crd]));
    assert!(ok, "{err}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !run(k.kubectl().args(["get", "foos"])).0 {
        assert!(Instant::now() < deadline, "foos never served");
        std::thread::sleep(Duration::from_millis(100));
    }
    for value in ["a", "b"] {
        let cr = write(
            "cr.yaml",
            &format!("apiVersion: v1\nkind: List\nitems:\n- apiVersion: company.com/v1\n  kind: Foo\n  metadata: {{name: f1, namespace: default}}\n  someField: {value}\n"),
        );
        let (ok, out, err) = run(k.kubectl().args(["apply", "-f", &cr]));
        assert!(ok, "apply with someField={value}: {out}{err}");
        assert!(!err.contains("error calculating patch"), "{err}");
        let (_, got, _) =
            run(k
                .kubectl()
                .args(["get", "foo", "f1", "-o", "jsonpath={.someField}"]));
        assert_eq!(got, value);
    }
}
