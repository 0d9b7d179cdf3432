//! RBAC as clients see it: the authorization matrix driven by
//! `kubectl --as`/`--as-group` and `kubectl auth can-i`, the bootstrap
//! policy objects, ClusterRole aggregation, escalation prevention and
//! `--authorization-mode`. Every wait has a deadline.

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{runtime, Kapi};
use serde_json::{json, Value};

/// No command here may run longer than this.
const CMD_LIMIT: Duration = Duration::from_secs(60);
/// How long a policy change may take to show (the index refreshes every ~150 ms).
const POLICY_LIMIT: Duration = Duration::from_secs(15);

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs a command (with `stdin` fed when given), killing it past [`CMD_LIMIT`].
fn run_with(cmd: &mut Command, stdin: Option<&str>) -> Out {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().expect("spawn");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input.as_bytes()).expect("write stdin");
    }
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let to = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let te = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = common::wait_timeout(&mut child, CMD_LIMIT);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{shown} did not finish within {CMD_LIMIT:?}");
    }
    Out {
        ok: status.is_some_and(|s| s.success()),
        stdout: to.join().unwrap_or_default(),
        stderr: te.join().unwrap_or_default(),
    }
}

fn kubectl(k: &Kapi, args: &[&str]) -> Out {
    run_with(k.kubectl().args(args), None)
}

fn kubectl_ok(k: &Kapi, args: &[&str]) -> String {
    let out = kubectl(k, args);
    assert!(out.ok, "kubectl {args:?} failed: {}", out.stderr);
    out.stdout
}

fn apply(k: &Kapi, yaml: &str) {
    let out = run_with(k.kubectl().args(["apply", "-f", "-"]), Some(yaml));
    assert!(out.ok, "apply failed: {}\n{yaml}", out.stderr);
}

/// `kubectl auth can-i` with `args`: "yes" or "no".
fn can_i(k: &Kapi, args: &[&str]) -> String {
    let mut full = vec!["auth", "can-i"];
    full.extend_from_slice(args);
    kubectl(k, &full).stdout.trim().to_string()
}

/// Polls `check` until it holds, failing the test at the deadline.
fn eventually(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not true within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_can_i(k: &Kapi, args: &[&str], want: &str) {
    eventually(&format!("can-i {args:?} == {want}"), POLICY_LIMIT, || {
        can_i(k, args) == want
    });
}

fn token_file(dir: &std::path::Path, lines: &str) -> String {
    let path = dir.join("tokens.csv");
    std::fs::write(&path, lines).expect("write tokens");
    path.to_str().expect("path").to_string()
}

#[test]
fn authorization_matrix() {
    let k = Kapi::start(&[]);
    kubectl_ok(&k, &["create", "namespace", "ns1"]);
    kubectl_ok(&k, &["create", "namespace", "ns2"]);
    apply(
        &k,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: ns1}
rules:
- {apiGroups: [""], resources: [pods, pods/log], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-pods, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewers, namespace: ns2}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: Group, name: viewers}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vera-view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: User, name: vera}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm1-reader, namespace: ns1}
rules:
- {apiGroups: [""], resources: [configmaps], resourceNames: [cm1], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dora-cm1, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm1-reader}
subjects: [{kind: User, name: dora}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics-reader}
rules:
- {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: erin-metrics}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-reader}
subjects: [{kind: User, name: erin}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: frank-metrics, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-reader}
subjects: [{kind: User, name: frank}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bot-view, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: bot, namespace: ns1}]
"#,
    );
    kubectl_ok(&k, &["create", "configmap", "cm1", "-n", "ns1"]);
    kubectl_ok(&k, &["create", "configmap", "cm2", "-n", "ns1"]);
    wait_can_i(&k, &["list", "pods", "-n", "ns1", "--as", "alice"], "yes");

    // A Role + RoleBinding: get/list pods in ns1 only, and nothing else.
    assert_eq!(
        can_i(&k, &["get", "pods", "-n", "ns1", "--as", "alice"]),
        "yes"
    );
    assert_eq!(
        can_i(&k, &["list", "pods", "-n", "ns2", "--as", "alice"]),
        "no"
    );
    assert_eq!(
        can_i(&k, &["delete", "pods", "-n", "ns1", "--as", "alice"]),
        "no"
    );
    assert_eq!(can_i(&k, &["list", "pods", "-A", "--as", "alice"]), "no");
    // Subresources are named by the rule: pods/log yes, pods/exec no.
    assert_eq!(
        can_i(
            &k,
            &[
                "get",
                "pods",
                "--subresource=log",
                "-n",
                "ns1",
                "--as",
                "alice"
            ]
        ),
        "yes"
    );
    assert_eq!(
        can_i(
            &k,
            &[
                "get",
                "pods",
                "--subresource=exec",
                "-n",
                "ns1",
                "--as",
                "alice"
            ]
        ),
        "no"
    );
    let out = kubectl(&k, &["get", "pods", "-n", "ns1", "--as", "alice"]);
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(&k, &["get", "pods", "-n", "ns2", "--as", "alice"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns2\""),
        "{}",
        out.stderr
    );
    let list = kubectl_ok(
        &k,
        &["auth", "can-i", "--list", "-n", "ns1", "--as", "alice"],
    );
    let row = |name: &str| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row in:\n{list}"))
            .trim_end()
            .to_string()
    };
    assert!(row("pods").ends_with("[get list]"), "{list}");
    assert!(row("pods/log").ends_with("[get list]"), "{list}");
    assert!(
        row("selfsubjectaccessreviews.authorization.k8s.io").contains("[create]"),
        "{list}"
    );
    assert!(list.contains("[/healthz]"), "{list}");
    let list2 = kubectl_ok(
        &k,
        &["auth", "can-i", "--list", "-n", "ns2", "--as", "alice"],
    );
    assert!(!list2.lines().any(|l| l.starts_with("pods ")), "{list2}");

    // The `view` ClusterRole through a RoleBinding to a group, and cluster-wide.
    let carl = ["--as", "carl", "--as-group", "viewers"];
    let with = |args: &[&'static str], who: &[&'static str]| {
        let mut v = args.to_vec();
        v.extend_from_slice(who);
        v
    };
    assert_eq!(
        can_i(&k, &with(&["list", "deployments.apps", "-n", "ns2"], &carl)),
        "yes"
    );
    assert_eq!(
        can_i(&k, &with(&["list", "deployments.apps", "-n", "ns1"], &carl)),
        "no"
    );
    assert_eq!(
        can_i(&k, &with(&["get", "secrets", "-n", "ns2"], &carl)),
        "no"
    );
    assert_eq!(
        can_i(
            &k,
            &with(&["create", "deployments.apps", "-n", "ns2"], &carl)
        ),
        "no"
    );
    assert_eq!(can_i(&k, &["list", "pods", "-A", "--as", "vera"]), "yes");
    assert_eq!(
        can_i(
            &k,
            &["watch", "jobs.batch", "-n", "kube-system", "--as", "vera"]
        ),
        "yes"
    );
    assert_eq!(
        can_i(&k, &["delete", "pods", "-n", "ns1", "--as", "vera"]),
        "no"
    );

    // resourceNames: the named object only, and never a list.
    let out = kubectl(
        &k,
        &["get", "configmap", "cm1", "-n", "ns1", "--as", "dora"],
    );
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(
        &k,
        &["get", "configmap", "cm2", "-n", "ns1", "--as", "dora"],
    );
    assert!(
        !out.ok && out.stderr.contains("configmaps \"cm2\" is forbidden: User \"dora\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"ns1\""),
        "{}",
        out.stderr
    );
    let out = kubectl(&k, &["get", "configmaps", "-n", "ns1", "--as", "dora"]);
    assert!(
        !out.ok && out.stderr.contains("cannot list resource \"configmaps\""),
        "{}",
        out.stderr
    );

    // nonResourceURLs: from a ClusterRoleBinding, not from a RoleBinding.
    let out = kubectl(&k, &["get", "--raw", "/metrics", "--as", "erin"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(can_i(&k, &["get", "/metrics", "--as", "erin"]), "yes");
    assert_eq!(can_i(&k, &["get", "/metrics", "--as", "frank"]), "no");
    let out = kubectl(&k, &["get", "--raw", "/metrics", "--as", "frank"]);
    assert!(
        !out.ok
            && out
                .stderr
                .contains("User \"frank\" cannot get path \"/metrics\""),
        "{}",
        out.stderr
    );

    // A ServiceAccount subject is its `system:serviceaccount:` user.
    let bot = "system:serviceaccount:ns1:bot";
    assert_eq!(
        can_i(&k, &["list", "pods", "-n", "ns1", "--as", bot]),
        "yes"
    );
    assert_eq!(can_i(&k, &["list", "pods", "-n", "ns2", "--as", bot]), "no");
    assert_eq!(
        can_i(
            &k,
            &[
                "list",
                "pods",
                "-n",
                "ns1",
                "--as",
                "system:serviceaccount:ns2:bot"
            ]
        ),
        "no"
    );

    // SubjectAccessReview names the binding that allowed it, as upstream.
    runtime().block_on(async {
        let sar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "alice", "groups": ["system:authenticated"],
                     "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "ns1"}}});
        let v: Value = k
            .admin_client()
            .post(format!("{}/apis/authorization.k8s.io/v1/subjectaccessreviews", k.url))
            .json(&sar)
            .send()
            .await
            .expect("sar")
            .json()
            .await
            .expect("json");
        assert_eq!(v["status"]["allowed"], true, "{v}");
        assert_eq!(
            v["status"]["reason"],
            "RBAC: allowed by RoleBinding \"alice-pods/ns1\" of Role \"pod-reader\" to User \"alice\""
        );
    });

    // Removing the binding takes the permission away again.
    kubectl_ok(&k, &["delete", "rolebinding", "alice-pods", "-n", "ns1"]);
    wait_can_i(&k, &["list", "pods", "-n", "ns1", "--as", "alice"], "no");
}

fn rules_of(k: &Kapi, name: &str) -> Vec<Value> {
    let out = kubectl_ok(k, &["get", "clusterrole", name, "-o", "json"]);
    let v: Value = serde_json::from_str(&out).expect("json");
    v["rules"].as_array().cloned().unwrap_or_default()
}

fn grants(rules: &[Value], group: &str, resource: &str, verb: &str) -> bool {
    let has = |v: &Value, x: &str| {
        v.as_array()
            .is_some_and(|a| a.iter().any(|s| s == x || s == "*"))
    };
    rules.iter().any(|r| {
        has(&r["apiGroups"], group) && has(&r["resources"], resource) && has(&r["verbs"], verb)
    })
}

#[test]
fn bootstrap_policy_and_aggregation() {
    let dir = tempfile::tempdir().expect("tmp");
    let tokens = token_file(dir.path(), "t-bob,bob,2\n");
    let k = Kapi::start(&["--token-auth-file", &tokens]);
    kubectl_ok(
        &k,
        &[
            "get",
            "clusterroles",
            "cluster-admin",
            "admin",
            "edit",
            "view",
            "system:discovery",
            "system:basic-user",
            "system:public-info-viewer",
            "system:monitoring",
            "system:node",
            "system:kube-scheduler",
            "system:aggregate-to-view",
        ],
    );
    kubectl_ok(
        &k,
        &[
            "get",
            "clusterrolebindings",
            "cluster-admin",
            "system:discovery",
            "system:basic-user",
            "system:public-info-viewer",
            "system:monitoring",
            "system:kube-scheduler",
        ],
    );
    kubectl_ok(
        &k,
        &[
            "get",
            "role",
            "extension-apiserver-authentication-reader",
            "-n",
            "kube-system",
        ],
    );
    kubectl_ok(
        &k,
        &[
            "get",
            "rolebinding",
            "system:controller:bootstrap-signer",
            "-n",
            "kube-public",
        ],
    );
    let v: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &["get", "clusterrole", "cluster-admin", "-o", "json"],
    ))
    .expect("json");
    assert_eq!(
        v["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
    assert_eq!(
        v["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
        "true"
    );
    let v: Value = serde_json::from_str(&kubectl_ok(
        &k,
        &[
            "get",
            "clusterrolebinding",
            "system:public-info-viewer",
            "-o",
            "json",
        ],
    ))
    .expect("json");
    assert_eq!(
        v["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"},
               {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"}])
    );

    // admin ⊇ edit ⊇ view, each aggregated from the system:aggregate-to-* roles.
    let view = rules_of(&k, "view");
    assert!(grants(&view, "", "pods", "list"), "{view:?}");
    assert!(!grants(&view, "", "secrets", "get"), "{view:?}");
    let edit = rules_of(&k, "edit");
    assert!(grants(&edit, "", "secrets", "create") && grants(&edit, "", "pods", "list"));
    let admin = rules_of(&k, "admin");
    assert!(grants(
        &admin,
        "rbac.authorization.k8s.io",
        "rolebindings",
        "create"
    ));
    assert!(grants(&admin, "apps", "deployments", "watch"));

    // A new role labelled aggregate-to-view reaches view, then edit and admin.
    let start = Instant::now();
    apply(
        &k,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widget-viewer
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- {apiGroups: [example.com], resources: [widgets], verbs: [get, list, watch]}
"#,
    );
    eventually(
        "widgets aggregated into view",
        Duration::from_secs(10),
        || grants(&rules_of(&k, "view"), "example.com", "widgets", "list"),
    );
    let took = start.elapsed();
    eventually(
        "widgets aggregated into admin",
        Duration::from_secs(10),
        || {
            grants(&rules_of(&k, "edit"), "example.com", "widgets", "list")
                && grants(&rules_of(&k, "admin"), "example.com", "widgets", "list")
        },
    );
    assert!(took < Duration::from_secs(3), "aggregation took {took:?}");
    kubectl_ok(&k, &["delete", "clusterrole", "widget-viewer"]);
    eventually("widgets gone from view", Duration::from_secs(10), || {
        !grants(&rules_of(&k, "view"), "example.com", "widgets", "list")
    });

    // Anonymous: health and version only; authenticated users also discovery.
    runtime().block_on(async {
        let c = k.anonymous_client();
        for path in ["/healthz", "/livez", "/readyz", "/version"] {
            let r = c.get(format!("{}{path}", k.url)).send().await.expect(path);
            assert_eq!(r.status(), 200, "{path}");
        }
        for path in ["/api", "/apis", "/metrics", "/api/v1/namespaces"] {
            let r = c.get(format!("{}{path}", k.url)).send().await.expect(path);
            assert_eq!(r.status(), 403, "{path}");
        }
        let r = c.get(format!("{}/api", k.url)).send().await.expect("api");
        let s: Value = r.json().await.expect("status");
        assert_eq!(s["message"], "forbidden: User \"system:anonymous\" cannot get path \"/api\"");
        let bob = |path: &str| c.get(format!("{}{path}", k.url)).bearer_auth("t-bob").send();
        assert_eq!(bob("/api").await.expect("api").status(), 200);
        assert_eq!(bob("/apis/apps/v1").await.expect("apis").status(), 200);
        assert_eq!(bob("/metrics").await.expect("metrics").status(), 403);
        let r = bob("/api/v1/namespaces/default/pods").await.expect("pods");
        assert_eq!(r.status(), 403);
        let s: Value = r.json().await.expect("status");
        assert_eq!(
            s["message"],
            "pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
        );
    });
}

#[test]
fn escalation_needs_held_permissions_escalate_or_bind() {
    let dir = tempfile::tempdir().expect("tmp");
    let tokens = token_file(dir.path(), "t-carol,carol,3\n");
    let k = Kapi::start(&["--token-auth-file", &tokens]);
    kubectl_ok(&k, &["create", "namespace", "ns1"]);
    apply(
        &k,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rbac-writer}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings], verbs: [create, get, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-rbac, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rbac-writer}
subjects: [{kind: User, name: carol}]
"#,
    );
    wait_can_i(
        &k,
        &["create", "roles", "-n", "ns1", "--as", "carol"],
        "yes",
    );
    let role = |name: &str, resource: &str, verb: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name},
               "rules": [{"apiGroups": [""], "resources": [resource], "verbs": [verb]}]})
    };
    let binding = |name: &str, kind: &str, role: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]})
    };
    let rbac = format!("{}/apis/rbac.authorization.k8s.io/v1/namespaces/ns1", k.url);
    let client = k.anonymous_client();
    let post = |what: &str, body: Value| {
        client
            .post(format!("{rbac}/{what}"))
            .bearer_auth("t-carol")
            .json(&body)
            .send()
    };
    runtime().block_on(async {
        // A role granting what carol does not hold: refused, as upstream words it.
        let r = post("roles", role("secret-deleter", "secrets", "delete")).await.expect("post");
        assert_eq!(r.status(), 403);
        let s: Value = r.json().await.expect("status");
        assert_eq!(
            s["message"],
            "roles.rbac.authorization.k8s.io \"secret-deleter\" is forbidden: user \"carol\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}"
        );
        assert_eq!(s["reason"], "Forbidden");
        assert_eq!(
            s["details"],
            json!({"name": "secret-deleter", "group": "rbac.authorization.k8s.io", "kind": "roles"})
        );
        // What she holds she may grant.
        let r = post("roles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "role-getter"},
            "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["get"]}]}))
            .await
            .expect("post");
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
        // Binding a role whose permissions she lacks: refused too.
        let r = post("rolebindings", binding("carol-edit", "ClusterRole", "edit")).await.expect("post");
        assert_eq!(r.status(), 403);
        let s: Value = r.json().await.expect("status");
        let msg = s["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with("rolebindings.rbac.authorization.k8s.io \"carol-edit\" is forbidden: user \"carol\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:["),
            "{msg}"
        );
        // Binding a role she holds entirely is fine.
        let r = post("rolebindings", binding("carol-getter", "Role", "role-getter")).await.expect("post");
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    });
    // kubectl shows the same refusal.
    let out = kubectl(
        &k,
        &[
            "create",
            "role",
            "secret-deleter",
            "--verb=delete",
            "--resource=secrets",
            "-n",
            "ns1",
            "--as",
            "carol",
        ],
    );
    assert!(
        !out.ok && out.stderr.contains("is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}"),
        "{}",
        out.stderr
    );

    // `escalate` on roles lifts the check; `bind` on one ClusterRole allows binding it only.
    apply(
        &k,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rbac-writer}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings], verbs: [create, get, update]}
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}
- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], resourceNames: [view], verbs: [bind]}
"#,
    );
    wait_can_i(
        &k,
        &[
            "escalate",
            "roles.rbac.authorization.k8s.io",
            "-n",
            "ns1",
            "--as",
            "carol",
        ],
        "yes",
    );
    runtime().block_on(async {
        let r = post("roles", role("secret-deleter", "secrets", "delete"))
            .await
            .expect("post");
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
        let r = post("rolebindings", binding("carol-view", "ClusterRole", "view"))
            .await
            .expect("post");
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
        let r = post("rolebindings", binding("carol-edit", "ClusterRole", "edit"))
            .await
            .expect("post");
        assert_eq!(r.status(), 403);
        // She now holds view in ns1 through the binding she made.
    });
    wait_can_i(&k, &["list", "pods", "-n", "ns1", "--as", "carol"], "yes");
    assert_eq!(
        can_i(&k, &["delete", "secrets", "-n", "ns1", "--as", "carol"]),
        "no"
    );
}

#[test]
fn authorization_modes() {
    // Unknown modes are a one-line flag error, exit 2.
    let dir = tempfile::tempdir().expect("tmp");
    let out = run_with(
        Command::new(common::kapi_bin())
            .args([
                "serve",
                "--secure-port",
                "0",
                "--authorization-mode",
                "ABAC,RBAC",
                "--data-dir",
            ])
            .arg(dir.path()),
        None,
    );
    assert!(!out.ok);
    assert_eq!(
        out.stderr.trim(),
        "kapi: invalid value for --authorization-mode: authorization-mode \"ABAC\" is not a valid mode (supported: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook)"
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);

    // AlwaysAllow lets even anonymous requests through.
    let k = Kapi::start(&["--authorization-mode", "AlwaysAllow"]);
    runtime().block_on(async {
        let r = k
            .anonymous_client()
            .get(format!("{}/api/v1/namespaces", k.url))
            .send()
            .await
            .expect("list");
        assert_eq!(r.status(), 200);
    });
    drop(k);

    // AlwaysDeny: system:masters still may, everyone else may not, even health.
    let tokens = token_file(dir.path(), "t-bob,bob,2\n");
    let k = Kapi::start(&[
        "--authorization-mode",
        "AlwaysDeny",
        "--token-auth-file",
        &tokens,
    ]);
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!("{}/api/v1/namespaces", k.url))
            .send()
            .await
            .expect("admin");
        assert_eq!(r.status(), 200);
        for path in ["/api/v1/namespaces", "/version"] {
            let r = k
                .anonymous_client()
                .get(format!("{}{path}", k.url))
                .bearer_auth("t-bob")
                .send()
                .await
                .expect("bob");
            assert_eq!(r.status(), 403, "{path}");
        }
    });
}

fn get_json(k: &Kapi, args: &[&str]) -> Value {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&kubectl_ok(k, &full)).expect("json")
}

fn replace(k: &Kapi, obj: &Value) {
    let out = run_with(
        k.kubectl().args(["replace", "-f", "-"]),
        Some(&obj.to_string()),
    );
    assert!(out.ok, "replace failed: {}", out.stderr);
}

#[test]
fn bootstrap_policy_is_reconciled_on_restart() {
    let mut k = Kapi::start(&[]);
    let admin_rv =
        get_json(&k, &["clusterrole", "cluster-admin"])["metadata"]["resourceVersion"].clone();
    let view_rv = get_json(&k, &["clusterrole", "view"])["metadata"]["resourceVersion"].clone();
    // Protected: a role its owner marked autoupdate=false keeps its changes.
    let mut basic = get_json(&k, &["clusterrole", "system:basic-user"]);
    basic["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] =
        json!("false");
    basic["rules"] = json!([{"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"], "verbs": ["create"]}]);
    replace(&k, &basic);
    // Not protected: lost rules and subjects come back.
    let mut monitoring = get_json(&k, &["clusterrole", "system:monitoring"]);
    monitoring["rules"] = json!([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]);
    replace(&k, &monitoring);
    let mut discovery = get_json(&k, &["clusterrolebinding", "system:discovery"]);
    discovery["subjects"] =
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "someone"}]);
    replace(&k, &discovery);
    let status = k.terminate();
    assert!(status.success(), "{status:?}");

    let dir = k.data_dir.clone();
    let k2 = Kapi::start_in(&dir, &[]);
    assert_eq!(
        get_json(&k2, &["clusterrole", "cluster-admin"])["metadata"]["resourceVersion"],
        admin_rv
    );
    assert_eq!(
        get_json(&k2, &["clusterrole", "view"])["metadata"]["resourceVersion"],
        view_rv
    );
    let basic = get_json(&k2, &["clusterrole", "system:basic-user"]);
    assert_eq!(basic["rules"].as_array().map(Vec::len), Some(1), "{basic}");
    let monitoring = get_json(&k2, &["clusterrole", "system:monitoring"]);
    let urls: Vec<&str> = monitoring["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["nonResourceURLs"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    for u in ["/metrics", "/healthz", "/livez/*", "/readyz"] {
        assert!(urls.contains(&u), "{u} missing: {monitoring}");
    }
    let discovery = get_json(&k2, &["clusterrolebinding", "system:discovery"]);
    let names: Vec<&str> = discovery["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["someone", "system:authenticated"], "{discovery}");
    // And the restarted server decides from the stored policy at once.
    assert_eq!(
        can_i(&k2, &["create", "selfsubjectrulesreviews", "--as", "bob"]),
        "no"
    );
    assert_eq!(
        can_i(&k2, &["create", "selfsubjectaccessreviews", "--as", "bob"]),
        "yes"
    );
}

/// Upstream v1.34's default ClusterRoles other than the controllers' (its
/// bootstrappolicy testdata/cluster-roles.yaml with the default feature gates).
const V134_CLUSTER_ROLES: &[&str] = &[
    "admin",
    "cluster-admin",
    "edit",
    "system:aggregate-to-admin",
    "system:aggregate-to-edit",
    "system:aggregate-to-view",
    "system:auth-delegator",
    "system:basic-user",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:certificates.k8s.io:kube-apiserver-client-approver",
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "system:certificates.k8s.io:kubelet-serving-approver",
    "system:certificates.k8s.io:legacy-unknown-approver",
    "system:discovery",
    "system:heapster",
    "system:kube-aggregator",
    "system:kube-controller-manager",
    "system:kube-dns",
    "system:kube-scheduler",
    "system:kubelet-api-admin",
    "system:monitoring",
    "system:node",
    "system:node-bootstrapper",
    "system:node-problem-detector",
    "system:node-proxier",
    "system:persistent-volume-provisioner",
    "system:public-info-viewer",
    "system:service-account-issuer-discovery",
    "system:volume-scheduler",
    "view",
];

/// Upstream v1.34's default ClusterRoleBindings other than the controllers'.
const V134_CLUSTER_ROLE_BINDINGS: &[&str] = &[
    "cluster-admin",
    "system:basic-user",
    "system:discovery",
    "system:kube-controller-manager",
    "system:kube-dns",
    "system:kube-scheduler",
    "system:monitoring",
    "system:node",
    "system:node-proxier",
    "system:public-info-viewer",
    "system:service-account-issuer-discovery",
    "system:volume-scheduler",
];

/// Upstream v1.34's controllers with a default `system:controller:<name>`
/// ClusterRole and ClusterRoleBinding (testdata/controller-roles.yaml).
const V134_CONTROLLERS: &[&str] = &[
    "attachdetach-controller",
    "certificate-controller",
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "daemon-set-controller",
    "deployment-controller",
    "disruption-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "endpointslicemirroring-controller",
    "ephemeral-volume-controller",
    "expand-controller",
    "generic-garbage-collector",
    "horizontal-pod-autoscaler",
    "job-controller",
    "legacy-service-account-token-cleaner",
    "namespace-controller",
    "node-controller",
    "persistent-volume-binder",
    "pod-garbage-collector",
    "pv-protection-controller",
    "pvc-protection-controller",
    "replicaset-controller",
    "replication-controller",
    "resource-claim-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "route-controller",
    "selinux-warning-controller",
    "service-account-controller",
    "service-cidrs-controller",
    "service-controller",
    "statefulset-controller",
    "ttl-after-finished-controller",
    "ttl-controller",
    "validatingadmissionpolicy-status-controller",
    "volumeattributesclass-protection-controller",
];

#[test]
fn bootstrap_policy_matches_upstream_v1_34() {
    let k = Kapi::start(&[]);
    let rbac = format!("{}/apis/rbac.authorization.k8s.io/v1", k.url);
    runtime().block_on(async {
        let c = k.admin_client();
        // The policy is written by a post-start hook; /readyz waits for it.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = c.get(format!("{}/readyz", k.url)).send().await;
            if r.is_ok_and(|r| r.status() == 200) {
                break;
            }
            assert!(Instant::now() < deadline, "/readyz never became ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let list = |path: String| {
            let c = c.clone();
            async move {
                let r = c.get(&path).send().await.expect(&path);
                assert_eq!(r.status(), 200, "{path}");
                let v: Value = r.json().await.expect("list");
                v["items"].as_array().cloned().unwrap_or_default()
            }
        };
        let names = |items: &[Value]| {
            let mut n: Vec<String> = items
                .iter()
                .filter_map(|o| o["metadata"]["name"].as_str().map(String::from))
                .collect();
            n.sort();
            n
        };
        let with_controllers = |base: &[&str]| {
            let mut n: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            n.extend(
                V134_CONTROLLERS
                    .iter()
                    .map(|c| format!("system:controller:{c}")),
            );
            n.sort();
            n
        };

        let roles = list(format!("{rbac}/clusterroles")).await;
        assert_eq!(names(&roles), with_controllers(V134_CLUSTER_ROLES));
        let bindings = list(format!("{rbac}/clusterrolebindings")).await;
        assert_eq!(
            names(&bindings),
            with_controllers(V134_CLUSTER_ROLE_BINDINGS)
        );
        let system_roles = list(format!("{rbac}/namespaces/kube-system/roles")).await;
        assert_eq!(
            names(&system_roles),
            [
                "extension-apiserver-authentication-reader",
                "system::leader-locking-kube-controller-manager",
                "system::leader-locking-kube-scheduler",
                "system:controller:bootstrap-signer",
                "system:controller:cloud-provider",
                "system:controller:token-cleaner",
            ]
        );
        let system_bindings = list(format!("{rbac}/namespaces/kube-system/rolebindings")).await;
        assert_eq!(
            names(&system_bindings),
            [
                "system::extension-apiserver-authentication-reader",
                "system::leader-locking-kube-controller-manager",
                "system::leader-locking-kube-scheduler",
                "system:controller:bootstrap-signer",
                "system:controller:cloud-provider",
                "system:controller:token-cleaner",
            ]
        );
        let public_roles = list(format!("{rbac}/namespaces/kube-public/roles")).await;
        assert_eq!(names(&public_roles), ["system:controller:bootstrap-signer"]);
        let public_bindings = list(format!("{rbac}/namespaces/kube-public/rolebindings")).await;
        assert_eq!(
            names(&public_bindings),
            ["system:controller:bootstrap-signer"]
        );

        let role = |name: &str| {
            roles
                .iter()
                .find(|o| o["metadata"]["name"] == name)
                .cloned()
                .unwrap_or_else(|| panic!("{name} missing"))
        };
        let events = json!({"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]});
        // The rules as upstream's testdata has them, in its order.
        let deployment = role("system:controller:deployment-controller");
        assert_eq!(
            deployment["rules"],
            json!([
                {"apiGroups": ["apps", "extensions"], "resources": ["deployments"], "verbs": ["get", "list", "update", "watch"]},
                {"apiGroups": ["apps", "extensions"], "resources": ["deployments/status"], "verbs": ["update"]},
                {"apiGroups": ["apps", "extensions"], "resources": ["deployments/finalizers"], "verbs": ["update"]},
                {"apiGroups": ["apps", "extensions"], "resources": ["replicasets"], "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "watch"]},
                events,
            ])
        );
        assert_eq!(
            deployment["metadata"]["labels"]["kubernetes.io/bootstrapping"],
            "rbac-defaults"
        );
        assert_eq!(
            deployment["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
            "true"
        );
        assert_eq!(
            role("system:controller:namespace-controller")["rules"],
            json!([
                {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["delete", "get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["namespaces/finalize", "namespaces/status"], "verbs": ["update"]},
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["delete", "deletecollection", "get", "list", "watch"]},
            ])
        );
        // v1.34 still has StatefulSetAutoDeletePVC's rules after the events rule.
        assert_eq!(
            role("system:controller:statefulset-controller")["rules"],
            json!([
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
                {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["apps"], "resources": ["statefulsets/status"], "verbs": ["update"]},
                {"apiGroups": ["apps"], "resources": ["statefulsets/finalizers"], "verbs": ["update"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete", "get", "patch", "update"]},
                {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["create", "get", "list", "watch"]},
                events,
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["delete", "update"]},
                {"apiGroups": [""], "resources": ["pods/finalizers"], "verbs": ["update"]},
            ])
        );
        let binding = bindings
            .iter()
            .find(|o| o["metadata"]["name"] == "system:controller:deployment-controller")
            .expect("deployment-controller binding");
        assert_eq!(
            binding["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:controller:deployment-controller"})
        );
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "deployment-controller", "namespace": "kube-system"}])
        );
    });
}
