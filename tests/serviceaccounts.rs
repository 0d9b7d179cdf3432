//! ServiceAccounts: the `default` account and `kube-root-ca.crt` in every
//! namespace, TokenRequest tokens that authenticate, and the audit log.

mod common;

use std::time::{Duration, Instant};

use common::{run, runtime, Kapi};

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn create(k: &Kapi, yaml: &str) {
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], yaml);
    assert!(ok, "{err}");
}

#[test]
fn new_namespaces_get_a_default_service_account_and_the_root_ca() {
    let k = Kapi::start(&[]);
    create(
        &k,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
    );
    wait_until(Duration::from_secs(5), || {
        run(k
            .kubectl()
            .args(["-n", "team", "get", "serviceaccount", "default"]))
        .0
    });
    wait_until(Duration::from_secs(5), || {
        run(k
            .kubectl()
            .args(["-n", "team", "get", "configmap", "kube-root-ca.crt"]))
        .0
    });
    let (_, out, _) = run(k.kubectl().args([
        "-n",
        "team",
        "get",
        "configmap",
        "kube-root-ca.crt",
        "-o",
        "jsonpath={.data.ca\\.crt}",
    ]));
    assert_eq!(out, k.pki("ca.crt"));
    // The system namespaces have them too.
    wait_until(Duration::from_secs(5), || {
        run(k
            .kubectl()
            .args(["-n", "kube-system", "get", "serviceaccount", "default"]))
        .0
    });
}

#[test]
fn create_token_gives_a_token_that_authenticates() {
    let k = Kapi::start(&[]);
    wait_until(Duration::from_secs(5), || {
        run(k.kubectl().args(["get", "serviceaccount", "default"])).0
    });
    let (ok, token, err) = run(k
        .kubectl()
        .args(["create", "token", "default", "--duration=20m"]));
    assert!(ok, "{err}");
    let token = token.trim().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let ca = k.data_dir.join("pki/ca.crt");
    let whoami = |t: &str| {
        let mut c = std::process::Command::new(common::kubectl_path());
        c.env("KUBECONFIG", "/dev/null")
            .args(["--server", &k.url, "--certificate-authority"])
            .arg(&ca)
            .args(["--token", t, "auth", "whoami", "-o", "json"]);
        run(&mut c)
    };
    let (ok, out, err) = whoami(&token);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["status"]["userInfo"]["username"],
        "system:serviceaccount:default:default"
    );
    let groups = v["status"]["userInfo"]["groups"].to_string();
    assert!(
        groups.contains("system:serviceaccounts:default")
            && groups.contains("system:authenticated"),
        "{groups}"
    );
    // TokenReview agrees; the token expires when asked.
    runtime().block_on(async {
        let r = k.admin_client().post(format!("{}/apis/authentication.k8s.io/v1/tokenreviews", k.url))
            .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}))
            .send().await.expect("review");
        let v: serde_json::Value = r.json().await.expect("json");
        assert_eq!(v["status"]["authenticated"], true, "{v}");
        let short = k.admin_client().post(format!("{}/api/v1/namespaces/default/serviceaccounts/default/token", k.url))
            .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 60}}))
            .send().await.expect("short");
        assert_eq!(short.status(), 422);
    });
    // Deleting the ServiceAccount invalidates its tokens.
    let (ok, _, err) = run(k.kubectl().args(["delete", "serviceaccount", "default"]));
    assert!(ok, "{err}");
    let (ok, _, err) = whoami(&token);
    assert!(!ok && err.contains("Unauthorized"), "{err}");
}

#[test]
fn the_audit_log_holds_the_expected_events() {
    let dir = tempfile::tempdir().expect("tmp");
    let policy = dir.path().join("policy.yaml");
    let log = dir.path().join("audit.log");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: None\n  nonResourceURLs: ['/healthz*', '/readyz*', '/livez*']\n- level: RequestResponse\n  resources:\n  - group: ''\n    resources: [configmaps]\n- level: Metadata\n",
    )
    .expect("policy");
    let k = Kapi::start(&[
        "--audit-policy-file",
        policy.to_str().expect("p"),
        "--audit-log-path",
        log.to_str().expect("l"),
    ]);
    create(
        &k,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audited\ndata:\n  k: v\n",
    );
    let (ok, _, err) = run(k.kubectl().args(["get", "pods"]));
    assert!(ok, "{err}");
    let mut events: Vec<serde_json::Value> = Vec::new();
    wait_until(Duration::from_secs(5), || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        events = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        events.iter().any(|e| e["objectRef"]["resource"] == "pods")
    });
    let create = events
        .iter()
        .find(|e| e["verb"] == "create" && e["objectRef"]["resource"] == "configmaps")
        .expect("configmap create event");
    assert_eq!(create["kind"], "Event");
    assert_eq!(create["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(create["level"], "RequestResponse");
    assert_eq!(create["stage"], "ResponseComplete");
    assert_eq!(create["user"]["username"], "kubernetes-admin");
    assert_eq!(create["responseStatus"]["code"], 201);
    assert_eq!(create["requestObject"]["data"]["k"], "v");
    assert_eq!(create["responseObject"]["metadata"]["name"], "audited");
    assert_eq!(
        create["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    let pods = events
        .iter()
        .find(|e| e["objectRef"]["resource"] == "pods")
        .expect("pods event");
    assert_eq!(pods["level"], "Metadata");
    assert!(pods.get("responseObject").is_none());
    assert!(
        events.iter().all(|e| e["stage"] != "RequestReceived"),
        "omitStages honoured"
    );
    assert!(
        events.iter().all(|e| !e["requestURI"]
            .as_str()
            .unwrap_or("")
            .starts_with("/readyz")),
        "health is not audited"
    );
}
