//! The control plane's own controllers, seen through kubectl and raw HTTP.

mod common;

use std::time::{Duration, Instant};

use common::{run, Kapi};

fn apply_stdin(k: &Kapi, yaml: &str) {
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], yaml);
    assert!(ok, "{err}");
}

fn wait_gone(k: &Kapi, args: &[&str], limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let (ok, _, err) = run(k.kubectl().args(args));
        if !ok && err.contains("NotFound") {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "still there after {limit:?}: {args:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn system_namespaces_exist_and_cannot_be_deleted() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = run(k.kubectl().args(["get", "namespaces", "-o", "name"]));
    assert!(ok, "{err}");
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(out.contains(&format!("namespace/{ns}\n")), "{out}");
        let (ok, _, err) = run(k.kubectl().args(["delete", "namespace", ns]));
        assert!(
            !ok && err.contains("this namespace may not be deleted"),
            "{ns}: {err}"
        );
    }
}

#[test]
fn deleting_a_namespace_deletes_everything_in_it() {
    let k = Kapi::start(&[]);
    apply_stdin(
        &k,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: full\n",
    );
    let mut objs = String::new();
    for i in 0..5 {
        objs.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n  namespace: full\n"
        ));
        objs.push_str(&format!("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s{i}\n  namespace: full\nstringData:\n  k: v\n"));
    }
    objs.push_str("---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: full\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n");
    objs.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: full\n  finalizers: [example.com/hold]\n");
    apply_stdin(&k, &objs);
    let (ok, _, err) = run(k
        .kubectl()
        .args(["delete", "namespace", "full", "--wait=false"]));
    assert!(ok, "{err}");
    // A finalizer holds the namespace in Terminating, with upstream's conditions.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, out, _) = run(k.kubectl().args(["get", "namespace", "full", "-o", "json"]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        let conds = v["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let remaining = conds
            .iter()
            .find(|c| c["type"] == "NamespaceFinalizersRemaining");
        if v["status"]["phase"] == "Terminating" && remaining.is_some_and(|c| c["status"] == "True")
        {
            assert!(remaining.is_some_and(|c| c["message"]
                .as_str()
                .unwrap_or("")
                .contains("example.com/hold")));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no Terminating status with conditions: {out}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // New content is refused while it terminates.
    use std::io::Write;
    let mut child = k
        .kubectl()
        .args(["create", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  namespace: full\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("because it is being terminated"),
        "{err}"
    );
    let (ok, _, err) = run(k.kubectl().args([
        "-n",
        "full",
        "patch",
        "configmap",
        "held",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]));
    assert!(ok, "{err}");
    let took = wait_gone(&k, &["get", "namespace", "full"], Duration::from_secs(5));
    assert!(took < Duration::from_secs(5));
    let (_, out, _) = run(k.kubectl().args([
        "get",
        "configmaps,secrets,deployments",
        "-n",
        "full",
        "-o",
        "name",
    ]));
    assert!(out.trim().is_empty(), "left behind: {out}");
}

#[test]
fn controllers_flag_selects_the_built_in_controllers() {
    // Without the namespace controller, a deleted namespace stays Terminating.
    let k = Kapi::start(&["--controllers", "*,-namespace"]);
    apply_stdin(
        &k,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: stays\n",
    );
    let (ok, _, err) = run(k
        .kubectl()
        .args(["delete", "namespace", "stays", "--wait=false"]));
    assert!(ok, "{err}");
    std::thread::sleep(Duration::from_millis(1500));
    let (ok, out, err) = run(k.kubectl().args([
        "get",
        "namespace",
        "stays",
        "-o",
        "jsonpath={.status.phase}",
    ]));
    assert!(ok && out == "Terminating", "{out}{err}");
    let out = std::process::Command::new(common::kapi_bin())
        .args(["serve", "--controllers", "nope"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--controllers") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn the_repair_loop_reallocates_a_missing_cluster_ip_and_reports_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut k = Kapi::start_in(dir.path(), &[]);
    apply_stdin(
        &k,
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
    );
    let (_, ip, _) =
        run(k
            .kubectl()
            .args(["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"]));
    assert!(!ip.is_empty());
    // Lose the allocation record behind the Service's back.
    let (ok, _, err) = run(k.kubectl().args(["delete", "ipaddress", &ip]));
    assert!(ok, "{err}");
    assert!(k.terminate().success());
    drop(k);
    // The repair pass at start finds it, records it again and reports an Event.
    let k = Kapi::start_in(dir.path(), &[]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (back, _, _) = run(k.kubectl().args(["get", "ipaddress", &ip]));
        let (_, events, _) = run(k.kubectl().args([
            "get",
            "events",
            "--field-selector",
            "reason=ClusterIPNotAllocated",
            "-o",
            "jsonpath={.items[*].message}",
        ]));
        if back
            && events.contains(&format!(
                "Cluster IP [IPv4]:{ip} is not allocated; repairing"
            ))
        {
            break;
        }
        assert!(Instant::now() < deadline, "not repaired: {events}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
