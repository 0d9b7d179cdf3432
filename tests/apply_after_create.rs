//! Server-side apply by one manager of objects another created (issue 21):
//! `kubectl create` (manager `kubectl-create`) first, then `kubectl apply
//! --server-side` of the same manifests by manager `team-a`, with a label
//! of its own added. Upstream raises no conflict there: the fields the
//! create owns hold the values the apply sends, and fields the server
//! defaulted are owned by nobody. A conflict would mean kapi stored, and
//! gave the creator, fields upstream leaves out (zero values) or values
//! other than upstream's defaults. The last step changes a value the
//! creator owns and must conflict, as upstream does.

mod common;

use common::Kapi;

const NS: &str = "ssa";

/// Ten common kinds as a user writes them: only what matters, the rest
/// left to the server's defaults.
const MANIFESTS: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ssa}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ssa}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ssa}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: ssa}
stringData: {password: hunter2}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ssa}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres:16}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ssa}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox:1.36, command: [sleep, "3600"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: ssa}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: busybox:1.36}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ssa}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: ssa}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: ssa}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
"#;

fn with_team_label(manifests: &str) -> String {
    manifests.replace(
        "namespace: ssa}",
        "namespace: ssa, labels: {owner: team-a}}",
    )
}

#[test]
fn apply_by_another_manager_after_kubectl_create_does_not_conflict() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(&["create", "namespace", NS], "");
    assert!(ok, "{err}");
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], MANIFESTS);
    assert!(ok, "create: {err}");
    assert_eq!(out.lines().count(), 10, "{out}");

    let (ok, out, err) = k.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=team-a",
            "-f",
            "-",
        ],
        &with_team_label(MANIFESTS),
    );
    assert!(
        ok,
        "server-side apply of the same manifests conflicted: {err}"
    );
    assert_eq!(out.matches("serverside-applied").count(), 10, "{out}");

    // Both managers now share what both set; the label is team-a's alone.
    let (ok, out, err) = k.kubectl_stdin(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            NS,
            "--show-managed-fields",
            "-o",
            "json",
        ],
        "",
    );
    assert!(ok, "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).expect("json");
    let managers: Vec<&str> = d["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"kubectl-create"), "{managers:?}");
    assert!(managers.contains(&"team-a"), "{managers:?}");
    assert_eq!(d["metadata"]["labels"]["owner"], "team-a");

    // A value the creator owns, changed: that conflicts, as upstream.
    let changed = with_team_label(MANIFESTS).replace("replicas: 2", "replicas: 3");
    let (ok, _, err) = k.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=team-a",
            "-f",
            "-",
        ],
        &changed,
    );
    assert!(!ok, "changing kubectl-create's replicas must conflict");
    assert!(
        err.contains("conflict with \"kubectl-create\"") && err.contains(".spec.replicas"),
        "{err}"
    );
}
