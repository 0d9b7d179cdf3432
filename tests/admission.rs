//! Dynamic admission end to end: mutating and validating webhooks served by
//! the test over TLS (by URL and through a Service's Endpoints), their
//! failure policies, timeouts, selectors, match conditions, dry runs and
//! warnings; ValidatingAdmissionPolicies with bindings, params and actions.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use common::{run, runtime, Kapi};
use serde_json::{json, Value};

fn apply(k: &Kapi, yaml: &str) {
    let (ok, _, err) = k.kubectl_stdin(&["apply", "-f", "-"], yaml);
    assert!(ok, "{err}\n{yaml}");
}

struct Reply {
    code: u16,
    warnings: Vec<String>,
    body: Value,
}

fn post(k: &Kapi, path: &str, body: &Value) -> Reply {
    runtime().block_on(async {
        let r = k
            .admin_client()
            .post(format!("{}{path}", k.url))
            .json(body)
            .send()
            .await
            .expect("post");
        let code = r.status().as_u16();
        let warnings = r
            .headers()
            .get_all("warning")
            .iter()
            .map(|v| v.to_str().unwrap_or("").to_string())
            .collect();
        Reply {
            code,
            warnings,
            body: r.json().await.unwrap_or_default(),
        }
    })
}

/// Retries `f` until it holds (configuration reaches admission through the
/// watch cache, so it takes effect a moment after it is written).
fn eventually<T>(what: &str, mut f: impl FnMut() -> Result<T, String>) -> T {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return v,
            Err(last) => {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "{what}: not within 10s; last: {last}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn configmap(name: &str, labels: Value, annotations: Value, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels, "annotations": annotations}, "data": data})
}

/// A webhook server over TLS: `/mutate` labels objects through a
/// JSONPatch, `/validate` refuses ConfigMaps with a `forbidden` data key,
/// `/slow` answers after 3s. Every request it gets is kept.
struct Webhook {
    port: u16,
    ca_bundle: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    _rt: tokio::runtime::Runtime,
}

fn review(uid: &Value, response: Value) -> axum::Json<Value> {
    let mut response = response;
    response["uid"] = uid.clone();
    axum::Json(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    )
}

fn webhook_server() -> Webhook {
    webhook_server_on(std::net::Ipv4Addr::LOCALHOST)
}

/// This machine's address other than loopback (Endpoints may not hold
/// loopback addresses), found by routing a UDP socket (which sends nothing).
fn local_ipv4() -> Option<std::net::Ipv4Addr> {
    ["8.8.8.8:53", "10.255.255.255:9", "192.168.255.255:9"]
        .iter()
        .find_map(|target| {
            let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
            s.connect(target).ok()?;
            match s.local_addr().ok()? {
                std::net::SocketAddr::V4(a)
                    if !a.ip().is_loopback() && !a.ip().is_unspecified() =>
                {
                    Some(*a.ip())
                }
                _ => None,
            }
        })
}

fn webhook_server_on(ip: std::net::Ipv4Addr) -> Webhook {
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
    let params = rcgen::CertificateParams::new(vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        ip.to_string(),
    ])
    .expect("params");
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let cert = params.signed_by(&key, &issuer).expect("cert");
    let ca_pem = ca.pem();
    let authority =
        kapi::auth::x509::ClientCertAuthority::new(&[ca_pem.as_str()]).expect("authority");
    let tls = kapi::server::serve::TlsServing::new(&cert.pem(), &key.serialize_pem(), authority)
        .expect("tls");
    let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    // `/mutate/x` names the label added (`/mutate`: `mutated`); upstream
    // refuses query parameters in a webhook's URL.
    let mutate = move |label: String, r: Value| {
        let s1 = s1.clone();
        async move {
            let req = r["request"].clone();
            s1.lock()
                .expect("seen")
                .push((format!("mutate:{label}"), req.clone()));
            let patch = if req["object"]["metadata"]["labels"].is_object() {
                json!([{"op": "add", "path": format!("/metadata/labels/{label}"), "value": "yes"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {label.as_str(): "yes"}}])
            };
            let patch = base64::engine::general_purpose::STANDARD
                .encode(serde_json::to_vec(&patch).expect("patch"));
            review(
                &req["uid"],
                json!({"allowed": true, "patchType": "JSONPatch", "patch": patch,
                    "warnings": [format!("{label} by the test webhook")]}),
            )
        }
    };
    let mutate_named = mutate.clone();
    let app = axum::Router::new()
        .route(
            "/mutate",
            post(move |axum::Json(r): axum::Json<Value>| mutate("mutated".into(), r)),
        )
        .route(
            "/mutate/{label}",
            post(
                move |axum::extract::Path(label): axum::extract::Path<String>,
                      axum::Json(r): axum::Json<Value>| mutate_named(label, r),
            ),
        )
        .route(
            "/validate",
            post(move |axum::Json(r): axum::Json<Value>| async move {
                let req = r["request"].clone();
                s2.lock()
                    .expect("seen")
                    .push(("validate".into(), req.clone()));
                if req["object"]["data"].get("forbidden").is_some() {
                    review(
                        &req["uid"],
                        json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden",
                            "message": "the data key \"forbidden\" is not allowed"}}),
                    )
                } else {
                    review(
                        &req["uid"],
                        json!({"allowed": true, "warnings": ["validated by the test webhook"]}),
                    )
                }
            }),
        )
        .route(
            "/slow",
            post(move |axum::Json(r): axum::Json<Value>| async move {
                let req = r["request"].clone();
                s3.lock().expect("seen").push(("slow".into(), req.clone()));
                tokio::time::sleep(Duration::from_secs(3)).await;
                review(&req["uid"], json!({"allowed": true}))
            }),
        );
    let port = rt.block_on(async {
        let (listener, addr) = kapi::server::serve::bind(std::net::SocketAddr::from((ip, 0)))
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
    Webhook {
        port,
        ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem),
        seen,
        _rt: rt,
    }
}

#[test]
fn webhooks_mutate_validate_and_warn() {
    let w = webhook_server();
    let k = Kapi::start(&[]);
    let (port, ca) = (w.port, &w.ca_bundle);
    apply(
        &k,
        &format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: label-adder}}
webhooks:
- name: mutate.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/mutate", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector:
    matchExpressions: [{{key: skip-mutation, operator: DoesNotExist}}]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: forbidden-keys}}
webhooks:
- name: validate.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/validate", caBundle: {ca}}}
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: ["*"], resources: [configmaps]}}]
  namespaceSelector:
    matchExpressions: [{{key: webhooks, operator: NotIn, values: ["off"]}}]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.annotations) || !('exempt' in object.metadata.annotations)"
  sideEffects: None
  admissionReviewVersions: [v1]
"#
        ),
    );
    let path = "/api/v1/namespaces/default/configmaps";

    // A dry run calls webhooks whose sideEffects are None; both warn.
    let r = eventually("both webhooks called", || {
        let r = post(
            &k,
            &format!("{path}?dryRun=All"),
            &configmap("cm1", json!({}), json!({}), json!({"a": "1"})),
        );
        if r.code == 201 && r.warnings.len() == 2 {
            Ok(r)
        } else {
            Err(format!("{} {:?} {}", r.code, r.warnings, r.body))
        }
    });
    assert_eq!(r.body["metadata"]["labels"]["mutated"], "yes", "{}", r.body);
    assert_eq!(
        r.warnings,
        vec![
            "299 - \"mutated by the test webhook\"",
            "299 - \"validated by the test webhook\""
        ]
    );
    {
        let seen = w.seen.lock().expect("seen");
        let (_, req) = seen
            .iter()
            .find(|(p, _)| p == "mutate:mutated")
            .expect("mutate called");
        assert_eq!(req["dryRun"], true);
        assert_eq!(req["operation"], "CREATE");
        assert_eq!(
            req["kind"],
            json!({"group": "", "version": "v1", "kind": "ConfigMap"})
        );
        assert_eq!(
            req["resource"],
            json!({"group": "", "version": "v1", "resource": "configmaps"})
        );
        assert_eq!(req["namespace"], "default");
        assert_eq!(req["name"], "cm1");
        assert_eq!(req["object"]["data"]["a"], "1");
        assert_eq!(req["oldObject"], Value::Null);
        assert_eq!(req["options"]["kind"], "CreateOptions");
        assert!(
            req["userInfo"]["groups"]
                .as_array()
                .is_some_and(|g| g.iter().any(|x| x == "system:masters")),
            "{req}"
        );
        let (_, vreq) = seen
            .iter()
            .rev()
            .find(|(p, _)| p == "validate")
            .expect("validate called");
        assert_eq!(
            vreq["object"]["metadata"]["labels"]["mutated"], "yes",
            "validation sees the patched object"
        );
    }
    let (ok, _, _) = run(k.kubectl().args(["get", "configmap", "cm1"]));
    assert!(!ok, "a dry run stores nothing");

    // The mutation is stored; kubectl shows the warnings.
    let (ok, _, err) = run(k
        .kubectl()
        .args(["create", "configmap", "cm1", "--from-literal=a=1"]));
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: mutated by the test webhook"),
        "{err}"
    );
    let (ok, out, err) = run(k.kubectl().args([
        "get",
        "configmap",
        "cm1",
        "-o",
        "jsonpath={.metadata.labels.mutated}",
    ]));
    assert!(ok, "{err}");
    assert_eq!(out, "yes");

    // The validating webhook refuses as it words it.
    let r = post(
        &k,
        path,
        &configmap("cm2", json!({}), json!({}), json!({"forbidden": "x"})),
    );
    assert_eq!(r.code, 403, "{}", r.body);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        "admission webhook \"validate.example.com\" denied the request: the data key \"forbidden\" is not allowed"
    );
    let (ok, _, err) =
        run(k
            .kubectl()
            .args(["create", "configmap", "cm2", "--from-literal=forbidden=x"]));
    assert!(!ok);
    assert!(err.contains("admission webhook \"validate.example.com\" denied the request: the data key \"forbidden\" is not allowed"), "{err}");
    // Updates are validated too.
    let (ok, _, err) = run(k.kubectl().args([
        "patch",
        "configmap",
        "cm1",
        "-p",
        r#"{"data":{"forbidden":"y"}}"#,
    ]));
    assert!(!ok);
    assert!(err.contains("denied the request"), "{err}");

    // objectSelector: a labelled object is not mutated.
    let r = post(
        &k,
        path,
        &configmap(
            "cm3",
            json!({"skip-mutation": "true"}),
            json!({}),
            json!({}),
        ),
    );
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(
        r.body["metadata"]["labels"].get("mutated").is_none(),
        "{}",
        r.body
    );

    // matchConditions: an exempt object is not validated.
    let r = post(
        &k,
        path,
        &configmap(
            "cm4",
            json!({}),
            json!({"exempt": "yes"}),
            json!({"forbidden": "x"}),
        ),
    );
    assert_eq!(r.code, 201, "{}", r.body);

    // namespaceSelector: a namespace labelled off is not validated.
    let (ok, _, err) = run(k.kubectl().args(["create", "namespace", "quiet"]));
    assert!(ok, "{err}");
    let (ok, _, err) = run(k
        .kubectl()
        .args(["label", "namespace", "quiet", "webhooks=off"]));
    assert!(ok, "{err}");
    let r = eventually("the namespace's label is seen", || {
        let r = post(
            &k,
            "/api/v1/namespaces/quiet/configmaps",
            &configmap("cm5", json!({}), json!({}), json!({"forbidden": "x"})),
        );
        if r.code == 201 {
            Ok(r)
        } else {
            Err(r.body.to_string())
        }
    });
    assert_eq!(r.body["metadata"]["labels"]["mutated"], "yes");

    // reinvocationPolicy IfNeeded: a later webhook's change calls an
    // earlier IfNeeded webhook once more, with the changed object.
    apply(
        &k,
        &format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: reinvoke}}
webhooks:
- name: first.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/mutate/first", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{reinvoke: "yes"}}}}
  reinvocationPolicy: IfNeeded
  sideEffects: None
  admissionReviewVersions: [v1]
- name: second.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/mutate/second", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{reinvoke: "yes"}}}}
  sideEffects: None
  admissionReviewVersions: [v1]
"#
        ),
    );
    eventually("both reinvocation webhooks called", || {
        let r = post(
            &k,
            &format!("{path}?dryRun=All"),
            &configmap("re", json!({"reinvoke": "yes"}), json!({}), json!({})),
        );
        if r.code == 201 && r.body["metadata"]["labels"]["second"] == "yes" {
            Ok(())
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    let r = post(
        &k,
        path,
        &configmap("re", json!({"reinvoke": "yes"}), json!({}), json!({})),
    );
    assert_eq!(r.code, 201, "{}", r.body);
    let labels = &r.body["metadata"]["labels"];
    assert_eq!(
        (&labels["first"], &labels["second"], &labels["mutated"]),
        (&json!("yes"), &json!("yes"), &json!("yes")),
        "{labels}"
    );
    {
        let seen = w.seen.lock().expect("seen");
        let firsts: Vec<&Value> = seen
            .iter()
            .filter(|(p, req)| p == "mutate:first" && req["name"] == "re" && req["dryRun"] == false)
            .map(|(_, req)| req)
            .collect();
        assert_eq!(firsts.len(), 2, "{firsts:?}");
        assert!(firsts[0]["object"]["metadata"]["labels"]
            .get("second")
            .is_none());
        assert_eq!(firsts[1]["object"]["metadata"]["labels"]["second"], "yes");
        let seconds = seen
            .iter()
            .filter(|(p, req)| {
                p == "mutate:second" && req["name"] == "re" && req["dryRun"] == false
            })
            .count();
        assert_eq!(seconds, 1, "second.example.com is Never: called once");
    }

    // Deleting the configuration takes the webhook out.
    let (ok, _, err) =
        run(k
            .kubectl()
            .args(["delete", "validatingwebhookconfiguration", "forbidden-keys"]));
    assert!(ok, "{err}");
    eventually("the webhook is gone", || {
        let r = post(
            &k,
            &format!("{path}?dryRun=All"),
            &configmap("cm6", json!({}), json!({}), json!({"forbidden": "x"})),
        );
        if r.code == 201 {
            Ok(())
        } else {
            Err(r.body.to_string())
        }
    });
}

#[test]
fn a_webhook_behind_a_service_is_reached_through_its_endpoints() {
    // Endpoints refuse loopback addresses (as upstream's do), so the webhook
    // listens on this machine's own address; without one, an ExternalName
    // Service naming localhost stands in.
    let local = local_ipv4();
    let w = webhook_server_on(local.unwrap_or(std::net::Ipv4Addr::LOCALHOST));
    let k = Kapi::start(&[]);
    let (port, ca) = (w.port, &w.ca_bundle);
    let (service, service_port) = match local {
        Some(ip) => (
            format!(
                r#"
apiVersion: v1
kind: Service
metadata: {{name: hooks, namespace: default}}
spec:
  ports: [{{name: https, port: 443, targetPort: {port}}}]
---
apiVersion: v1
kind: Endpoints
metadata: {{name: hooks, namespace: default}}
subsets:
- addresses: [{{ip: "{ip}"}}]
  ports: [{{name: https, port: {port}}}]
"#
            ),
            443,
        ),
        None => {
            eprintln!("no address other than loopback: an ExternalName Service stands in");
            (
                format!(
                    r#"
apiVersion: v1
kind: Service
metadata: {{name: hooks, namespace: default}}
spec:
  type: ExternalName
  externalName: localhost
  ports: [{{name: https, port: {port}}}]
"#
                ),
                port,
            )
        }
    };
    apply(&k, &service);
    apply(
        &k,
        &format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: by-service}}
webhooks:
- name: service.example.com
  clientConfig:
    service: {{namespace: default, name: hooks, path: /validate, port: {service_port}}}
    caBundle: {ca}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1beta1, v1]
"#
        ),
    );
    let r = eventually("the webhook refuses", || {
        let r = post(
            &k,
            "/api/v1/namespaces/default/configmaps",
            &configmap("bad", json!({}), json!({}), json!({"forbidden": "x"})),
        );
        if r.code == 403 {
            Ok(r)
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    assert_eq!(
        r.body["message"],
        "admission webhook \"service.example.com\" denied the request: the data key \"forbidden\" is not allowed"
    );
    let r = post(
        &k,
        "/api/v1/namespaces/default/configmaps",
        &configmap("good", json!({}), json!({}), json!({"a": "b"})),
    );
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.warnings, vec!["299 - \"validated by the test webhook\""]);
    let seen = w.seen.lock().expect("seen");
    assert!(seen
        .iter()
        .any(|(p, req)| p == "validate" && req["name"] == "good"));
}

#[test]
fn webhook_failures_follow_the_failure_policy() {
    let w = webhook_server();
    let k = Kapi::start(&[]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let (port, ca) = (w.port, &w.ca_bundle);
    apply(
        &k,
        &format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: failing}}
webhooks:
- name: closed-fail.example.com
  clientConfig: {{url: "https://127.0.0.1:{closed}/validate", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{target: closed-fail}}}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
- name: closed-ignore.example.com
  clientConfig: {{url: "https://127.0.0.1:{closed}/validate", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{target: closed-ignore}}}}
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
- name: slow.example.com
  clientConfig: {{url: "https://127.0.0.1:{port}/slow", caBundle: {ca}}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  objectSelector: {{matchLabels: {{target: slow}}}}
  timeoutSeconds: 1
  sideEffects: None
  admissionReviewVersions: [v1]
"#
        ),
    );
    let path = "/api/v1/namespaces/default/configmaps";
    eventually("the failing webhook refuses", || {
        let r = post(
            &k,
            &format!("{path}?dryRun=All"),
            &configmap("a", json!({"target": "closed-fail"}), json!({}), json!({})),
        );
        if r.code == 500 {
            Ok(())
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    let r = post(
        &k,
        path,
        &configmap("a", json!({"target": "closed-fail"}), json!({}), json!({})),
    );
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        format!("Internal error occurred: failed calling webhook \"closed-fail.example.com\": failed to call webhook: Post \"https://127.0.0.1:{closed}/validate?timeout=10s\": dial tcp 127.0.0.1:{closed}: connect: connection refused")
    );
    let r = post(
        &k,
        path,
        &configmap(
            "b",
            json!({"target": "closed-ignore"}),
            json!({}),
            json!({}),
        ),
    );
    assert_eq!(r.code, 201, "{}", r.body);

    let t0 = Instant::now();
    let r = post(
        &k,
        path,
        &configmap("c", json!({"target": "slow"}), json!({}), json!({})),
    );
    assert!(
        t0.elapsed() < Duration::from_millis(2900),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        format!("Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/slow?timeout=1s\": context deadline exceeded")
    );
    let (ok, _, _) = run(k.kubectl().args(["get", "configmap", "c"]));
    assert!(!ok, "a refused create stores nothing");

    // A webhook with side effects (`sideEffects: Some`, which only
    // configurations stored through the old v1beta1 API can carry) is
    // refused by v1's validation: such dry runs are not reachable here.
    let r = post(
        &k,
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "side-effects"},
            "webhooks": [{"name": "side-effects.example.com", "sideEffects": "Some",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": format!("https://127.0.0.1:{port}/validate")}}]}),
    );
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "webhooks[0].sideEffects"
    );
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

#[test]
fn validating_admission_policies_deny_warn_and_use_params() {
    let k = Kapi::start(&[]);
    apply(
        &k,
        r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-binding}
spec:
  policyName: max-replicas
  validationActions: [Deny]
"#,
    );
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let r = eventually("the policy refuses", || {
        let r = post(&k, &format!("{path}?dryRun=All"), &deployment("web", 6));
        if r.code == 422 {
            Ok(r)
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    let message = "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5";
    assert_eq!(r.body["reason"], "Invalid");
    assert_eq!(r.body["message"], message);
    assert_eq!(
        r.body["details"]["causes"][0]["message"],
        message
            .split_once("is forbidden: ")
            .map(|x| x.1)
            .unwrap_or("")
    );
    let (ok, _, err) = run(k.kubectl().args([
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=6",
    ]));
    assert!(!ok);
    assert!(err.contains(message), "{err}");
    let r = post(&k, path, &deployment("web", 3));
    assert_eq!(r.code, 201, "{}", r.body);
    let (ok, _, err) = run(k.kubectl().args([
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"replicas":8}}"#,
    ]));
    assert!(!ok);
    assert!(
        err.contains("denied request: failed expression: object.spec.replicas <= 5"),
        "{err}"
    );

    // Params: a ConfigMap named by the binding, for namespaces labelled limits=on.
    apply(
        &k,
        r#"
apiVersion: v1
kind: Namespace
metadata: {name: limited, labels: {limits: "on"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default}
data: {maxReplicas: "2"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  variables:
  - name: limit
    expression: "int(params.data.maxReplicas)"
  validations:
  - expression: "object.spec.replicas <= variables.limit"
    messageExpression: "'replicas must be at most ' + string(variables.limit) + ' in ' + namespaceObject.metadata.name"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit-binding}
spec:
  policyName: replica-limit
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {limits: "on"}}
  validationActions: [Deny]
"#,
    );
    let limited = "/apis/apps/v1/namespaces/limited/deployments";
    let r = eventually("the param policy refuses", || {
        let r = post(&k, &format!("{limited}?dryRun=All"), &deployment("api", 3));
        if r.code == 403 {
            Ok(r)
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        "deployments.apps \"api\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas must be at most 2 in limited"
    );
    let r = post(&k, limited, &deployment("api", 2));
    assert_eq!(r.code, 201, "{}", r.body);
    // Other namespaces are not bound.
    let r = post(&k, &format!("{path}?dryRun=All"), &deployment("other", 3));
    assert_eq!(r.code, 201, "{}", r.body);
    // Without the param, parameterNotFoundAction Deny refuses.
    let (ok, _, err) = run(k.kubectl().args(["delete", "configmap", "limits"]));
    assert!(ok, "{err}");
    let r = eventually("a missing param refuses", || {
        let r = post(&k, &format!("{limited}?dryRun=All"), &deployment("api2", 1));
        if r.code == 422 {
            Ok(r)
        } else {
            Err(format!("{} {}", r.code, r.body))
        }
    });
    assert_eq!(
        r.body["message"],
        "deployments.apps \"api2\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );

    // Warn: allowed, with a warning.
    apply(
        &k,
        r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: min-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  matchConditions:
  - name: not-system
    expression: "!object.metadata.name.startsWith('system-')"
  validations:
  - expression: "object.spec.replicas >= 2"
    message: "use at least 2 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: min-replicas-binding}
spec:
  policyName: min-replicas
  validationActions: [Warn, Audit]
"#,
    );
    let r = eventually("the policy warns", || {
        let r = post(&k, &format!("{path}?dryRun=All"), &deployment("solo", 1));
        if r.code == 201 && !r.warnings.is_empty() {
            Ok(r)
        } else {
            Err(format!("{} {:?} {}", r.code, r.warnings, r.body))
        }
    });
    assert_eq!(
        r.warnings,
        vec!["299 - \"Validation failed for ValidatingAdmissionPolicy 'min-replicas' with binding 'min-replicas-binding': use at least 2 replicas\""]
    );
    let (ok, _, err) = run(k.kubectl().args([
        "create",
        "deployment",
        "solo",
        "--image=nginx",
        "--replicas=1",
    ]));
    assert!(ok, "{err}");
    assert!(err.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'min-replicas' with binding 'min-replicas-binding': use at least 2 replicas"), "{err}");
    // matchConditions false: the policy does not apply.
    let r = post(&k, path, &deployment("system-solo", 1));
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}
