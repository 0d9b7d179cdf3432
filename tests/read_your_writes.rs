//! A write is honoured by the very next request (issue 18): the caches
//! that authorization reads follow events and each request waits until
//! they reflect every write acknowledged before it. No retries, no sleeps:
//! one miss fails the test.

mod common;

use common::{runtime, Kapi};
use serde_json::{json, Value};

async fn send(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    user: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = c.request(method, url);
    if let Some(u) = user {
        req = req.header("Impersonate-User", u);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let code = resp.status().as_u16();
    let v = resp.json::<Value>().await.unwrap_or(Value::Null);
    (code, v)
}

/// Role + RoleBinding over raw HTTP, then the granted list as that user
/// at once, 200 times with a new user each time; then the binding is
/// deleted and the next request is refused.
#[test]
fn a_rolebinding_is_honoured_by_the_next_request() {
    let k = Kapi::start(&[]);
    let c = k.admin_client();
    let base = k.url.clone();
    runtime().block_on(async {
        let (code, _) = send(
            &c,
            reqwest::Method::POST,
            &format!("{base}/api/v1/namespaces"),
            None,
            Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ryw"}})),
        )
        .await;
        assert_eq!(code, 201);
        let rbac = format!("{base}/apis/rbac.authorization.k8s.io/v1/namespaces/ryw");
        let (code, _) = send(
            &c,
            reqwest::Method::POST,
            &format!("{rbac}/roles"),
            None,
            Some(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "cm-reader"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "get"]}]
            })),
        )
        .await;
        assert_eq!(code, 201);
        let list = format!("{base}/api/v1/namespaces/ryw/configmaps");
        for i in 0..200 {
            let user = format!("user-{i}");
            let (code, body) =
                send(&c, reqwest::Method::GET, &list, Some(&user), None).await;
            assert_eq!(code, 403, "{user} before the binding: {body}");
            let (code, body) = send(
                &c,
                reqwest::Method::POST,
                &format!("{rbac}/rolebindings"),
                None,
                Some(json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": format!("read-{i}")},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
                })),
            )
            .await;
            assert_eq!(code, 201, "{body}");
            let (code, body) =
                send(&c, reqwest::Method::GET, &list, Some(&user), None).await;
            assert_eq!(code, 200, "try {i}: the binding was not honoured at once: {body}");
        }
        // Revocation takes effect as the caches follow (as upstream's
        // informers): soon, not necessarily by the next request.
        let (code, _) = send(
            &c,
            reqwest::Method::DELETE,
            &format!("{rbac}/rolebindings/read-7"),
            None,
            None,
        )
        .await;
        assert_eq!(code, 200);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let (code, _) = send(&c, reqwest::Method::GET, &list, Some("user-7"), None).await;
            if code == 403 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "a deleted binding still grants");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
}

/// A ClusterRole and ClusterRoleBinding made with kubectl, then
/// `kubectl auth can-i` and a get as that user, each the very next command.
#[test]
fn kubectl_grant_then_use() {
    let k = Kapi::start(&[]);
    for i in 0..10 {
        let user = format!("dev-{i}");
        let role = format!("ns-reader-{i}");
        let (ok, _, err) = common::run(k.kubectl().args([
            "create",
            "clusterrole",
            &role,
            "--verb=get,list",
            "--resource=namespaces",
        ]));
        assert!(ok, "{err}");
        let (ok, _, err) = common::run(k.kubectl().args([
            "create",
            "clusterrolebinding",
            &role,
            &format!("--clusterrole={role}"),
            &format!("--user={user}"),
        ]));
        assert!(ok, "{err}");
        let (_, out, _) =
            common::run(
                k.kubectl()
                    .args(["auth", "can-i", "list", "namespaces", "--as", &user]),
            );
        assert_eq!(out.trim(), "yes", "try {i}");
        let (ok, out, err) = common::run(k.kubectl().args([
            "get",
            "namespace",
            "default",
            "-o",
            "name",
            "--as",
            &user,
        ]));
        assert!(ok, "try {i}: {err}");
        assert_eq!(out.trim(), "namespace/default");
    }
}

/// Admission reads its configuration from caches too: a ResourceQuota and
/// a ValidatingAdmissionPolicy with its binding apply to the very next
/// request.
#[test]
fn admission_configuration_applies_to_the_next_request() {
    admission_applies_at_once(&Kapi::start(&[]));
}

/// The same on etcd, where the watch cache trails storage by a network
/// round trip, so a reader that does not wait for it misses writes.
#[test]
fn admission_configuration_applies_to_the_next_request_on_etcd() {
    let cluster = common::etcd::EtcdCluster::start(1);
    admission_applies_at_once(&Kapi::start(&[
        "--etcd-servers",
        &cluster.endpoints().join(","),
    ]));
}

fn admission_applies_at_once(k: &Kapi) {
    let c = k.admin_client();
    let base = k.url.clone();
    runtime().block_on(async {
        let post = |url: String, body: Value| {
            let c = c.clone();
            async move { send(&c, reqwest::Method::POST, &url, None, Some(body)).await }
        };
        for i in 0..30 {
            let ns = format!("quota-{i}");
            let (code, _) = post(
                format!("{base}/api/v1/namespaces"),
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            )
            .await;
            assert_eq!(code, 201);
            let (code, body) = post(
                format!("{base}/api/v1/namespaces/{ns}/resourcequotas"),
                json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "none"},
                       "spec": {"hard": {"count/configmaps": "0"}}}),
            )
            .await;
            assert_eq!(code, 201, "{body}");
            // As upstream, a quota binds once its controller has filled
            // status.hard; from the write that does so on, it must apply.
            let quota = format!("{base}/api/v1/namespaces/{ns}/resourcequotas/none");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            loop {
                let (_, q) = send(&c, reqwest::Method::GET, &quota, None, None).await;
                if q["status"]["hard"].is_object() {
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "quota status never filled: {q}");
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            let (code, body) = post(
                format!("{base}/api/v1/namespaces/{ns}/configmaps"),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            )
            .await;
            assert_eq!(code, 403, "try {i}: the quota did not apply at once: {body}");
        }
        let adm = format!("{base}/apis/admissionregistration.k8s.io/v1");
        for i in 0..30 {
            let (code, body) = post(
                format!("{adm}/validatingadmissionpolicies"),
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                       "metadata": {"name": format!("no-{i}")},
                       "spec": {"failurePolicy": "Fail",
                                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                                "validations": [{"expression": format!("object.metadata.name != 'no-{i}'")}]}}),
            )
            .await;
            assert_eq!(code, 201, "{body}");
            let (code, body) = post(
                format!("{adm}/validatingadmissionpolicybindings"),
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                       "metadata": {"name": format!("no-{i}")},
                       "spec": {"policyName": format!("no-{i}"), "validationActions": ["Deny"]}}),
            )
            .await;
            assert_eq!(code, 201, "{body}");
            let (code, body) = post(
                format!("{base}/api/v1/namespaces/default/configmaps"),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("no-{i}")}}),
            )
            .await;
            assert!(
                code == 403 || code == 422,
                "try {i}: the policy did not apply at once ({code}): {body}"
            );
        }
    });
}
