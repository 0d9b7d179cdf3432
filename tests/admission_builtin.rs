//! The built-in admission plugins (PodSecurity, ServiceAccount,
//! LimitRanger, ResourceQuota, DefaultStorageClass,
//! DefaultTolerationSeconds) and the flags that choose them, through
//! kubectl and raw HTTP against a real `kapi serve`.

mod common;

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{run, runtime, Kapi};
use serde_json::{json, Value};

/// `kubectl create -f -`: (success, stdout, stderr).
fn create(k: &Kapi, yaml: &str) -> (bool, String, String) {
    let mut child = k
        .kubectl()
        .args(["create", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn create_ok(k: &Kapi, yaml: &str) -> String {
    let (ok, out, err) = create(k, yaml);
    assert!(ok, "create failed: {err}\n{yaml}");
    format!("{out}{err}")
}

fn get_json(k: &Kapi, args: &[&str]) -> Value {
    let mut a = vec!["get"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", "json"]);
    let (ok, out, err) = run(k.kubectl().args(&a));
    assert!(ok, "get {args:?}: {err}");
    serde_json::from_str(&out).expect("json")
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Creates a namespace and waits for its `default` ServiceAccount (the
/// ServiceAccount plugin refuses pods until the controller made it).
fn namespace_ready(k: &Kapi, name: &str, labels: &str) {
    create_ok(k, &namespace(name, labels));
    wait_until(
        "the default service account",
        Duration::from_secs(20),
        || {
            run(k
                .kubectl()
                .args(["get", "serviceaccount", "default", "-n", name]))
            .0
        },
    );
}

fn namespace(name: &str, labels: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\n")
}

fn pod(ns: &str, name: &str, container_extra: &str, spec_extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n{spec_extra}  containers:\n  - name: c\n    image: nginx:1.27\n{container_extra}"
    )
}

const PRIVILEGED: &str = "    securityContext:\n      privileged: true\n";

#[test]
fn pod_security_enforces_warns_and_checks_labels() {
    let k = Kapi::start(&["--allow-privileged=true"]);
    namespace_ready(
        &k,
        "strict",
        "pod-security.kubernetes.io/enforce: restricted",
    );
    let (ok, _, err) = create(&k, &pod("strict", "p", PRIVILEGED, ""));
    assert!(!ok);
    let want = "pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": \
        privileged (container \"c\" must not set securityContext.privileged=true), \
        allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
        unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
        runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
        seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";
    assert!(
        err.contains(&format!(
            "Error from server (Forbidden): error when creating \"STDIN\": {want}"
        )),
        "{err}"
    );

    // A pod that meets the standard is admitted.
    let good = pod(
        "strict",
        "good",
        "    securityContext:\n      allowPrivilegeEscalation: false\n      capabilities: {drop: [ALL]}\n",
        "  securityContext:\n    runAsNonRoot: true\n    seccompProfile: {type: RuntimeDefault}\n",
    );
    create_ok(&k, &good);

    // The same refusal over raw HTTP: 403 with upstream's details.
    runtime().block_on(async {
        let body = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "raw"},
            "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "nginx"}]}});
        let r = k
            .admin_client()
            .post(format!("{}/api/v1/namespaces/strict/pods", k.url))
            .json(&body)
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), 403);
        let v: Value = r.json().await.expect("status");
        assert_eq!(v["reason"], "Forbidden");
        assert_eq!(v["details"], json!({"name": "raw", "kind": "pods"}));
        let msg = v["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("pods \"raw\" is forbidden: violates PodSecurity \"restricted:latest\": host namespaces (hostNetwork), allowPrivilegeEscalation != false"),
            "{msg}"
        );
    });

    // warn: admitted, with a Warning header kubectl prints.
    namespace_ready(&k, "lax", "pod-security.kubernetes.io/warn: baseline");
    let out = create_ok(&k, &pod("lax", "w", PRIVILEGED, ""));
    assert!(
        out.contains("Warning: would violate PodSecurity \"baseline:latest\": privileged (container \"c\" must not set securityContext.privileged=true)"),
        "{out}"
    );
    runtime().block_on(async {
        let body = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w2"},
            "spec": {"hostPID": true, "containers": [{"name": "c", "image": "nginx"}]}});
        let r = k
            .admin_client()
            .post(format!("{}/api/v1/namespaces/lax/pods", k.url))
            .json(&body)
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), 201);
        let warning = r
            .headers()
            .get("warning")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("")
            .to_string();
        assert_eq!(
            warning,
            "299 - \"would violate PodSecurity \\\"baseline:latest\\\": host namespaces (hostPID)\""
        );
    });

    // Workload templates are warned about, never refused.
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: strict\nspec:\n  selector:\n    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n    spec:\n      hostIPC: true\n      containers:\n      - name: c\n        image: nginx\n";
    let out = create_ok(&k, deploy);
    assert!(
        out.contains("Warning: would violate PodSecurity \"restricted:latest\": host namespaces (hostIPC), allowPrivilegeEscalation != false"),
        "{out}"
    );

    // Bad label values are refused on create.
    let (ok, _, err) = create(
        &k,
        &namespace("bad", "pod-security.kubernetes.io/enforce: strict"),
    );
    assert!(!ok);
    assert!(
        err.contains("Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"),
        "{err}"
    );

    // Tightening enforce on a namespace names the pods that would be refused.
    let (ok, out, err) = run(k.kubectl().args([
        "label",
        "namespace",
        "lax",
        "pod-security.kubernetes.io/enforce=baseline",
    ]));
    assert!(ok, "{err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("Warning: existing pods in namespace \"lax\" violate the new PodSecurity enforce level \"baseline:latest\""),
        "{all}"
    );
    assert!(all.contains("Warning: w: privileged"), "{all}");
    assert!(all.contains("Warning: w2: host namespaces"), "{all}");
}

#[test]
fn service_account_limit_ranger_tolerations_storage_class_and_quota() {
    let k = Kapi::start(&[]);

    // Without --allow-privileged, validation refuses privileged containers.
    namespace_ready(&k, "sa", "");
    let (ok, _, err) = create(&k, &pod("sa", "priv", PRIVILEGED, ""));
    assert!(!ok);
    assert!(
        err.contains("Pod \"priv\" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"),
        "{err}"
    );

    // ServiceAccount: `default`, and the projected token in every container.
    create_ok(&k, &pod("sa", "p", "", ""));
    let p = get_json(&k, &["pod", "p", "-n", "sa"]);
    let spec = &p["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    let vol = &spec["volumes"][0];
    let vname = vol["name"].as_str().unwrap_or("");
    assert!(
        vname.starts_with("kube-api-access-") && vname.len() == 21,
        "{vname}"
    );
    assert_eq!(
        vol["projected"],
        json!({"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]})
    );
    assert_eq!(
        spec["containers"][0]["volumeMounts"],
        json!([{"name": vname, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
    // DefaultTolerationSeconds.
    assert_eq!(
        spec["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );
    // Opting out, and an account that does not exist.
    create_ok(
        &k,
        &pod("sa", "quiet", "", "  automountServiceAccountToken: false\n"),
    );
    let q = get_json(&k, &["pod", "quiet", "-n", "sa"]);
    assert!(q["spec"].get("volumes").is_none(), "{q}");
    let (ok, _, err) = create(&k, &pod("sa", "robot", "", "  serviceAccountName: robot\n"));
    assert!(!ok);
    assert!(
        err.contains("pods \"robot\" is forbidden: error looking up service account sa/robot: serviceaccount \"robot\" not found"),
        "{err}"
    );

    // LimitRanger: defaults, then the maximum.
    create_ok(
        &k,
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: lr\n  namespace: sa\nspec:\n  limits:\n  - type: Container\n    max: {cpu: \"1\"}\n    defaultRequest: {cpu: 100m}\n",
    );
    create_ok(&k, &pod("sa", "defaulted", "", ""));
    let d = get_json(&k, &["pod", "defaulted", "-n", "sa"]);
    assert_eq!(
        d["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}})
    );
    assert_eq!(
        d["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c"
    );
    let (ok, _, err) = create(
        &k,
        &pod(
            "sa",
            "big",
            "    resources:\n      limits: {cpu: \"2\"}\n",
            "",
        ),
    );
    assert!(!ok);
    assert!(
        err.contains(
            "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
        ),
        "{err}"
    );

    // DefaultStorageClass.
    create_ok(&k, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: example.com/p\n");
    create_ok(&k, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: sa\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests: {storage: 1Gi}\n");
    let c = get_json(&k, &["pvc", "data", "-n", "sa"]);
    assert_eq!(c["spec"]["storageClassName"], "standard");

    // ResourceQuota: status filled by the controller, over-quota refused,
    // usage given back on delete.
    namespace_ready(&k, "q", "");
    create_ok(
        &k,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: q\nspec:\n  hard:\n    pods: \"2\"\n    count/configmaps: \"10\"\n",
    );
    let used = |k: &Kapi| get_json(k, &["resourcequota", "q", "-n", "q"])["status"].clone();
    wait_until("quota status", Duration::from_secs(10), || {
        used(&k)["hard"]["pods"] == "2"
    });
    for name in ["p1", "p2"] {
        create_ok(&k, &pod("q", name, "", ""));
    }
    let (ok, _, err) = create(&k, &pod("q", "p3", "", ""));
    assert!(!ok);
    assert!(
        err.contains("Error from server (Forbidden): error when creating \"STDIN\": pods \"p3\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"),
        "{err}"
    );
    let st = used(&k);
    assert_eq!(st["used"]["pods"], "2", "{st}");
    let (ok, _, err) = run(k.kubectl().args(["delete", "pod", "p1", "-n", "q"]));
    assert!(ok, "{err}");
    wait_until("quota usage given back", Duration::from_secs(10), || {
        used(&k)["used"]["pods"] == "1"
    });
    create_ok(&k, &pod("q", "p3", "", ""));
}

#[test]
fn disabled_plugins_do_not_run() {
    let k = Kapi::start(&["--disable-admission-plugins=ResourceQuota,DefaultTolerationSeconds"]);
    namespace_ready(&k, "noquota", "");
    create_ok(
        &k,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: noquota\nspec:\n  hard:\n    pods: \"1\"\n",
    );
    let status = |k: &Kapi| get_json(k, &["resourcequota", "q", "-n", "noquota"])["status"].clone();
    wait_until("quota status", Duration::from_secs(10), || {
        status(&k)["hard"]["pods"] == "1"
    });
    for name in ["a", "b", "c"] {
        create_ok(&k, &pod("noquota", name, "", ""));
    }
    // Admission no longer refuses or charges. The controller, as
    // upstream's, recalculates when usage may have dropped (a deletion),
    // not on creates, so the figure is right after one.
    assert_eq!(status(&k)["used"]["pods"], "0");
    let (ok, _, err) = run(k.kubectl().args(["delete", "pod", "c", "-n", "noquota"]));
    assert!(ok, "{err}");
    wait_until("quota usage", Duration::from_secs(10), || {
        status(&k)["used"]["pods"] == "2"
    });
    let a = get_json(&k, &["pod", "a", "-n", "noquota"]);
    assert!(a["spec"].get("tolerations").is_none(), "{a}");
    assert_eq!(a["spec"]["serviceAccountName"], "default");
}

#[test]
fn unknown_admission_plugins_are_flag_errors() {
    for (flag, name) in [
        ("--enable-admission-plugins", "NoSuchPlugin"),
        ("--disable-admission-plugins", "Bogus"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(dir.path())
            .arg(format!("{flag}=LimitRanger,{name}"))
            .output()
            .expect("run kapi");
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        let flag_name = flag.trim_start_matches('-');
        assert_eq!(
            err.trim(),
            format!("kapi: invalid value for --{flag_name}: plugin \"{name}\" is unknown")
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
