//! Subresources discovery advertises are served as upstream serves them:
//! pods/ephemeralcontainers (what `kubectl debug` writes),
//! certificatesigningrequests/approval (`kubectl certificate approve`) and
//! the componentstatuses list (`kubectl get cs`) and pods/resize
//! (`kubectl patch --subresource resize`).

mod common;

use base64::Engine;
use common::{run, runtime, Kapi};
use serde_json::{json, Value};

fn kubectl(k: &Kapi, args: &[&str]) -> (bool, String, String) {
    run(k.kubectl().args(args))
}

async fn send(
    k: &Kapi,
    method: reqwest::Method,
    path: &str,
    ct: &str,
    body: Value,
) -> (u16, Value) {
    let r = k
        .admin_client()
        .request(method, format!("{}{path}", k.url))
        .header("Content-Type", ct)
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[test]
fn ephemeral_containers_are_added_through_their_subresource_only() {
    let k = Kapi::start(&[]);
    k.wait_for_default_service_account("default");
    let (ok, _, err) = kubectl(&k, &["run", "p1", "--image=nginx"]);
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(
        &k,
        &["debug", "p1", "--image=busybox", "--target=p1", "-c", "dbg"],
    );
    assert!(ok, "kubectl debug: {err}");
    let (_, out, _) = kubectl(&k, &["get", "pod", "p1", "-o", "json"]);
    let pod: Value = serde_json::from_str(&out).expect("json");
    let ec = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(ec["name"], "dbg");
    assert_eq!(ec["targetContainerName"], "p1");
    assert_eq!(
        ec["terminationMessagePolicy"], "File",
        "defaulted as containers are"
    );
    let path = "/api/v1/namespaces/default/pods/p1/ephemeralcontainers";
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!("{}{path}", k.url))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.expect("json");
        assert_eq!(v["kind"], "Pod");
        // Removing one is refused, as upstream refuses it.
        let (code, v) = send(
            &k,
            reqwest::Method::PATCH,
            path,
            "application/json-patch+json",
            json!([{"op": "remove", "path": "/spec/ephemeralContainers/0"}]),
        )
        .await;
        assert_eq!(code, 422, "{v}");
        assert!(
            v["message"]
                .as_str()
                .unwrap_or("")
                .contains("existing ephemeral containers \"dbg\" may not be removed"),
            "{v}"
        );
        // Other fields of the update are not taken; bad containers are refused
        // (a strategic merge puts the new container first, as upstream).
        let (code, v) = send(
            &k,
            reqwest::Method::PATCH,
            path,
            "application/strategic-merge-patch+json",
            json!({"metadata": {"labels": {"x": "y"}}, "spec": {"ephemeralContainers": [
                {"name": "two", "image": "busybox", "ports": [{"containerPort": 80}]}]}}),
        )
        .await;
        assert_eq!(code, 422, "{v}");
        assert_eq!(
            v["details"]["causes"][0]["field"], "spec.ephemeralContainers[0].ports",
            "{v}"
        );
        let (code, v) = send(
            &k,
            reqwest::Method::PATCH,
            path,
            "application/strategic-merge-patch+json",
            json!({"metadata": {"labels": {"x": "y"}}, "spec": {"ephemeralContainers": [
                {"name": "two", "image": "busybox"}]}}),
        )
        .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(
            v["spec"]["ephemeralContainers"].as_array().map(Vec::len),
            Some(2)
        );
        assert!(
            v["metadata"]["labels"].get("x").is_none(),
            "labels are not taken: {v}"
        );
    });
}

fn csr_pem() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "alice");
    params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem")
}

#[test]
fn certificate_requests_are_approved_through_their_subresource() {
    let k = Kapi::start(&[]);
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice"},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode(csr_pem()),
                 "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}});
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], &csr.to_string());
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(&k, &["certificate", "approve", "alice"]);
    assert!(ok, "kubectl certificate approve: {err}");
    let (_, out, _) = kubectl(&k, &["get", "csr", "alice", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).expect("json");
    let c = &v["status"]["conditions"][0];
    assert_eq!(c["type"], "Approved");
    assert_eq!(c["reason"], "KubectlApprove");
    assert!(
        c["lastUpdateTime"].is_string() && c["lastTransitionTime"].is_string(),
        "{c}"
    );
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval";
    runtime().block_on(async {
        // Only the conditions change; Approved and Denied exclude each other.
        let (code, v) = send(
            &k,
            reqwest::Method::PATCH,
            path,
            "application/merge-patch+json",
            json!({"spec": {"signerName": "example.com/other"}, "status": {"conditions": [
                {"type": "Approved", "status": "True", "reason": "R"},
                {"type": "Denied", "status": "True", "reason": "R"}]}}),
        )
        .await;
        assert_eq!(code, 422, "{v}");
        let (code, v) = send(
            &k,
            reqwest::Method::PATCH,
            path,
            "application/merge-patch+json",
            json!({"spec": {"signerName": "example.com/other"}, "status": {"conditions": [
                {"type": "Approved", "status": "True", "reason": "R"},
                {"type": "ApprovedFake", "status": "True", "reason": "R"}]}}),
        )
        .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(
            v["spec"]["signerName"],
            "kubernetes.io/kube-apiserver-client"
        );
        assert_eq!(v["status"]["conditions"][1]["type"], "ApprovedFake");
        let r = k
            .admin_client()
            .get(format!("{}{path}", k.url))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
    });
}

#[test]
fn componentstatuses_are_probed_on_request() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = kubectl(&k, &["get", "componentstatuses"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("v1 ComponentStatus is deprecated in v1.19+"),
        "{err}"
    );
    let rows: Vec<&str> = out.lines().collect();
    assert!(
        rows[0].starts_with("NAME") && rows[0].contains("STATUS") && rows[0].contains("MESSAGE"),
        "{out}"
    );
    let etcd = rows
        .iter()
        .find(|r| r.starts_with("etcd-0"))
        .expect("etcd-0 row");
    assert!(etcd.contains("Healthy"), "{out}");
    assert!(rows.iter().any(|r| r.starts_with("scheduler")), "{out}");
    let (ok, out, _) = kubectl(&k, &["get", "cs", "etcd-0", "-o", "json"]);
    assert!(ok);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["conditions"][0]["status"], "True");
    let (ok, _, err) = kubectl(&k, &["get", "cs", "nope"]);
    assert!(
        !ok && err.contains("componentstatus \"nope\" not found"),
        "{err}"
    );
}

/// `kubectl patch pod web --subresource resize` with a patch of `kind`.
fn resize(k: &Kapi, kind: &str, patch: &str) -> (bool, String, String) {
    kubectl(
        k,
        &[
            "patch",
            "pod",
            "web",
            "--subresource",
            "resize",
            "--type",
            kind,
            "-p",
            patch,
        ],
    )
}

#[test]
fn pods_are_resized_in_place_through_their_subresource_only() {
    let k = Kapi::start(&[]);
    k.wait_for_default_service_account("default");
    let pod = r#"
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 200m, memory: 128Mi}
"#;
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], pod);
    assert!(ok, "{out}{err}");
    // CPU up, and an image change the subresource does not take.
    let (ok, out, err) = resize(
        &k,
        "merge",
        r#"{"spec":{"containers":[{"name":"app","image":"busybox","resources":{"requests":{"cpu":"150m","memory":"64Mi"},"limits":{"cpu":"300m","memory":"128Mi"}}}]}}"#,
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("pod/web patched"), "{out}");
    let (ok, out, err) = kubectl(&k, &["get", "pod", "web", "-o", "json"]);
    assert!(ok, "{err}");
    let p: Value = serde_json::from_str(&out).expect("json");
    let c = &p["spec"]["containers"][0];
    assert_eq!(c["resources"]["limits"]["cpu"], "300m");
    assert_eq!(c["resources"]["requests"]["cpu"], "150m");
    assert_eq!(c["image"], "nginx", "only resources are taken");
    assert_eq!(
        p["metadata"]["generation"], 2,
        "a spec change bumps the generation"
    );
    assert_eq!(p["status"]["qosClass"], "Burstable");
    // Guaranteed would be another QoS class: refused as upstream refuses it.
    let (ok, _, err) = resize(
        &k,
        "strategic",
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m","memory":"128Mi"}}}]}}"#,
    );
    assert!(!ok);
    assert!(
        err.contains(r#"The Pod "web" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing"#),
        "{err}"
    );
    // Removing a limit is refused, naming it.
    let (ok, _, err) = resize(
        &k,
        "json",
        r#"[{"op":"remove","path":"/spec/containers/0/resources/limits/memory"}]"#,
    );
    assert!(!ok);
    assert!(
        err.contains("spec.containers[0].resources.limits[memory]: Forbidden: resource limits cannot be removed"),
        "{err}"
    );
    // Resources stay immutable through the pod itself.
    let (ok, _, err) = kubectl(
        &k,
        &[
            "patch",
            "pod",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"400m","memory":"128Mi"}}}]}}"#,
        ],
    );
    assert!(!ok);
    assert!(err.contains("pod updates may not change fields"), "{err}");
}

/// The proxy subresources answer as upstream's ResourceLocation decides
/// before it dials anything: a Service's Endpoints must exist and hold an
/// address, a numbered port must be the Service's, a pod's IP must be one a
/// proxy may dial.
#[test]
fn proxy_subresources_refuse_as_upstream_does_before_dialing() {
    let k = Kapi::start(&[]);
    let rt = runtime();
    rt.block_on(async {
        let get = |path: String| {
            let c = k.admin_client();
            let url = format!("{}{path}", k.url);
            async move {
                let r = c.get(url).send().await.expect("request");
                (
                    r.status().as_u16(),
                    r.json::<Value>().await.unwrap_or(Value::Null),
                )
            }
        };
        let json_ct = "application/json";
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}});
        let (code, body) = send(
            &k,
            reqwest::Method::POST,
            "/api/v1/namespaces/default/services",
            json_ct,
            svc,
        )
        .await;
        assert_eq!(code, 201, "{body}");
        let proxy = "/api/v1/namespaces/default/services/web/proxy/";

        // No Endpoints object: its NotFound.
        let (code, body) = get(proxy.to_string()).await;
        assert_eq!(code, 404, "{body}");
        assert_eq!(body["message"], "endpoints \"web\" not found", "{body}");

        // Endpoints without subsets, as the endpoints controller writes them
        // for a Service that selects no pod.
        let eps = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"}});
        let (code, body) = send(
            &k,
            reqwest::Method::POST,
            "/api/v1/namespaces/default/endpoints",
            json_ct,
            eps,
        )
        .await;
        assert_eq!(code, 201, "{body}");
        let (code, body) = get(proxy.to_string()).await;
        assert_eq!(code, 503, "{body}");
        assert_eq!(body["reason"], "ServiceUnavailable", "{body}");
        assert_eq!(
            body["message"], "no endpoints available for service \"web\"",
            "{body}"
        );

        // A port number the Service does not declare.
        let (code, body) = get("/api/v1/namespaces/default/services/web:81/proxy/".into()).await;
        assert_eq!(code, 503, "{body}");
        assert_eq!(
            body["message"], "no service port 81 found for service \"web\"",
            "{body}"
        );
        let (code, body) = get("/api/v1/namespaces/default/services/web:80/proxy/".into()).await;
        assert_eq!(code, 503, "{body}");
        assert_eq!(
            body["message"], "no endpoints available for service \"web\"",
            "{body}"
        );

        // A pod without an IP: nothing a proxy may dial.
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let (code, body) = send(
            &k,
            reqwest::Method::POST,
            "/api/v1/namespaces/default/pods",
            json_ct,
            pod,
        )
        .await;
        assert_eq!(code, 201, "{body}");
        for path in [
            "/api/v1/namespaces/default/pods/p/proxy",
            "/api/v1/namespaces/default/pods/p:80/proxy/x",
        ] {
            let (code, body) = get(path.to_string()).await;
            assert_eq!(code, 400, "{path}: {body}");
            assert_eq!(body["message"], "address not allowed", "{path}: {body}");
        }
        let (code, body) = get("/api/v1/namespaces/default/pods/nope/proxy".into()).await;
        assert_eq!(code, 404, "{body}");
        assert_eq!(body["message"], "pods \"nope\" not found", "{body}");
    });
}
