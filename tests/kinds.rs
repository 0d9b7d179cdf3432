//! The kinds with their own strategies beyond pods, services and the apps
//! group, checked end to end: one object of each created with `kubectl
//! create -f`, upstream's defaults read back with `kubectl get -o json`,
//! upstream's printer columns in `kubectl get`, and one 422 per kind over
//! raw HTTPS with upstream's `details.causes[].field`.

mod common;

use common::kubectl::{kubectl_create, kubectl_ok, run_limited, CMD_LIMIT};

use common::{runtime, Kapi};
use serde_json::{json, Value};

const NS: &str = "kinds";

/// `kubectl get -o json` of one object.
fn get_json(k: &Kapi, resource: &str, name: &str) -> Value {
    let out = kubectl_ok(k, &["get", resource, name, "-n", NS, "-o", "json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{resource}/{name}: {e}: {out}"))
}

/// The column headers `kubectl get` prints (headers may contain single spaces).
fn headers(k: &Kapi, resource: &str, name: &str) -> Vec<String> {
    let out = kubectl_ok(k, &["get", resource, name, "-n", NS]);
    let first = out.lines().next().unwrap_or("").to_string();
    first
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: kinds
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: kinds
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl:5.34
        command: ["perl", "-e", "print 1"]
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
  namespace: kinds
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox:1.36
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: kinds
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: kinds-nginx
spec:
  controller: k8s.io/ingress-nginx
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: db
  namespace: kinds
spec:
  podSelector:
    matchLabels:
      app: db
  egress:
  - ports:
    - port: 5432
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: kinds
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: kinds-pv
spec:
  capacity:
    storage: 5Gi
  accessModes: ["ReadWriteOnce"]
  hostPath:
    path: /tmp/kinds-pv
---
apiVersion: v1
kind: Node
metadata:
  name: kinds-node
  labels:
    node-role.kubernetes.io/control-plane: ""
status:
  conditions:
  - type: Ready
    status: "True"
  nodeInfo:
    kubeletVersion: v1.34.0
    machineID: ""
    systemUUID: ""
    bootID: ""
    kernelVersion: "6.1"
    osImage: Debian
    containerRuntimeVersion: containerd://2.0
    kubeProxyVersion: ""
    operatingSystem: linux
    architecture: amd64
---
apiVersion: v1
kind: Event
metadata:
  name: pi.1
  namespace: kinds
involvedObject:
  kind: Job
  name: pi
  namespace: kinds
reason: Created
message: Created the job
type: Normal
source:
  component: kinds-test
---
apiVersion: v1
kind: LimitRange
metadata:
  name: limits
  namespace: kinds
spec:
  limits:
  - type: Container
    max:
      cpu: "2"
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: kinds
spec:
  hard:
    pods: "10"
---
apiVersion: v1
kind: Endpoints
metadata:
  name: web
  namespace: kinds
subsets:
- addresses:
  - ip: 10.0.0.1
  ports:
  - port: 80
---
apiVersion: v1
kind: ReplicationController
metadata:
  name: rc
  namespace: kinds
spec:
  template:
    metadata:
      labels:
        app: rc
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: tmpl
  namespace: kinds
template:
  metadata:
    labels:
      app: tmpl
  spec:
    containers:
    - name: c
      image: busybox:1.36
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: leader
  namespace: kinds
spec:
  holderIdentity: me
  leaseDurationSeconds: 15
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: kinds
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: "kinds:health"
rules:
- nonResourceURLs: ["/healthz"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read-pods
  namespace: kinds
roleRef:
  kind: Role
  name: reader
subjects:
- kind: User
  name: alice
- kind: ServiceAccount
  name: bot
  namespace: kinds
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: "kinds:health"
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: "kinds:health"
subjects:
- kind: Group
  name: devs
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: pdb
  namespace: kinds
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: rc
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: kinds
spec:
  scaleTargetRef:
    apiVersion: v1
    kind: ReplicationController
    name: rc
  maxReplicas: 5
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: web-v1
  namespace: kinds
spec:
  scaleTargetRef:
    kind: ReplicationController
    name: rc
  maxReplicas: 3
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: kinds-fast
provisioner: example.com/fast
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: kinds-high
value: 1000
"#;

#[test]
fn kinds_create_default_print_and_validate() {
    let k = Kapi::start(&[]);
    let out = kubectl_create(&k, OBJECTS);
    assert!(out.contains("job.batch/pi created"), "{out}");
    assert!(
        out.contains("priorityclass.scheduling.k8s.io/kinds-high created"),
        "{out}"
    );

    // ---- defaults ----
    let job = get_json(&k, "jobs", "pi");
    let spec = &job["spec"];
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    let uid = job["metadata"]["uid"].as_str().expect("uid");
    assert_eq!(
        spec["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    let labels = &spec["template"]["metadata"]["labels"];
    assert_eq!(labels["batch.kubernetes.io/controller-uid"], uid);
    assert_eq!(labels["controller-uid"], uid);
    assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
    assert_eq!(labels["job-name"], "pi");

    let cj = get_json(&k, "cronjobs", "hello");
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["suspend"], false);
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], 1);

    let np = get_json(&k, "networkpolicies", "db");
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");

    let ic = get_json(&k, "ingressclasses", "kinds-nginx");
    assert_eq!(ic["spec"]["parameters"]["scope"], "Cluster");

    let pvc = get_json(&k, "pvc", "data");
    assert_eq!(pvc["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pvc["status"]["phase"], "Pending");

    let pv = get_json(&k, "pv", "kinds-pv");
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["status"]["phase"], "Pending");

    let node = get_json(&k, "nodes", "kinds-node");
    assert_eq!(node["status"]["conditions"][0]["type"], "Ready");

    let lr = get_json(&k, "limitranges", "limits");
    assert_eq!(lr["spec"]["limits"][0]["default"]["cpu"], "2");
    assert_eq!(lr["spec"]["limits"][0]["defaultRequest"]["cpu"], "2");

    let ep = get_json(&k, "endpoints", "web");
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");

    let rc = get_json(&k, "rc", "rc");
    assert_eq!(rc["spec"]["replicas"], 1);
    assert_eq!(rc["spec"]["selector"], json!({"app": "rc"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "rc"}));

    let tmpl = get_json(&k, "podtemplates", "tmpl");
    assert_eq!(tmpl["template"]["spec"]["restartPolicy"], "Always");

    let rb = get_json(&k, "rolebindings", "read-pods");
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");

    let pdb = get_json(&k, "pdb", "pdb");
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);

    let hpa = get_json(&k, "horizontalpodautoscalers.v2.autoscaling", "web");
    assert_eq!(hpa["spec"]["minReplicas"], 1);
    assert_eq!(
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
    let hpa1 = get_json(&k, "horizontalpodautoscalers.v1.autoscaling", "web-v1");
    assert_eq!(hpa1["spec"]["minReplicas"], 1);
    assert_eq!(hpa1["spec"]["targetCPUUtilizationPercentage"], 80);

    let sc = get_json(&k, "storageclasses", "kinds-fast");
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");

    let pc = get_json(&k, "priorityclasses", "kinds-high");
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");

    // ---- columns as kubectl prints them ----
    let expect: &[(&str, &str, &[&str])] = &[
        (
            "jobs",
            "pi",
            &["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
        ),
        (
            "cronjobs",
            "hello",
            &[
                "NAME",
                "SCHEDULE",
                "TIMEZONE",
                "SUSPEND",
                "ACTIVE",
                "LAST SCHEDULE",
                "AGE",
            ],
        ),
        (
            "ingresses",
            "web",
            &["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
        ),
        (
            "ingressclasses",
            "kinds-nginx",
            &["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
        ),
        ("networkpolicies", "db", &["NAME", "POD-SELECTOR", "AGE"]),
        (
            "pvc",
            "data",
            &[
                "NAME",
                "STATUS",
                "VOLUME",
                "CAPACITY",
                "ACCESS MODES",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "AGE",
            ],
        ),
        (
            "pv",
            "kinds-pv",
            &[
                "NAME",
                "CAPACITY",
                "ACCESS MODES",
                "RECLAIM POLICY",
                "STATUS",
                "CLAIM",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "REASON",
                "AGE",
            ],
        ),
        (
            "nodes",
            "kinds-node",
            &["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
        ),
        (
            "events",
            "pi.1",
            &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        ),
        ("limitranges", "limits", &["NAME", "CREATED AT"]),
        (
            "resourcequotas",
            "quota",
            &["NAME", "REQUEST", "LIMIT", "AGE"],
        ),
        ("endpoints", "web", &["NAME", "ENDPOINTS", "AGE"]),
        ("rc", "rc", &["NAME", "DESIRED", "CURRENT", "READY", "AGE"]),
        (
            "podtemplates",
            "tmpl",
            &["NAME", "CONTAINERS", "IMAGES", "POD LABELS"],
        ),
        ("leases", "leader", &["NAME", "HOLDER", "AGE"]),
        ("roles", "reader", &["NAME", "CREATED AT"]),
        ("clusterroles", "kinds:health", &["NAME", "CREATED AT"]),
        ("rolebindings", "read-pods", &["NAME", "ROLE", "AGE"]),
        (
            "clusterrolebindings",
            "kinds:health",
            &["NAME", "ROLE", "AGE"],
        ),
        (
            "pdb",
            "pdb",
            &[
                "NAME",
                "MIN AVAILABLE",
                "MAX UNAVAILABLE",
                "ALLOWED DISRUPTIONS",
                "AGE",
            ],
        ),
        (
            "hpa",
            "web",
            &[
                "NAME",
                "REFERENCE",
                "TARGETS",
                "MINPODS",
                "MAXPODS",
                "REPLICAS",
                "AGE",
            ],
        ),
        (
            "storageclasses",
            "kinds-fast",
            &[
                "NAME",
                "PROVISIONER",
                "RECLAIMPOLICY",
                "VOLUMEBINDINGMODE",
                "ALLOWVOLUMEEXPANSION",
                "AGE",
            ],
        ),
        (
            "priorityclasses",
            "kinds-high",
            &["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
        ),
    ];
    for (resource, name, want) in expect {
        assert_eq!(&headers(&k, resource, name), want, "kubectl get {resource}");
    }
    // A few cells.
    let row = kubectl_ok(&k, &["get", "nodes", "kinds-node", "--no-headers"]);
    assert!(
        row.contains("Ready") && row.contains("control-plane") && row.contains("v1.34.0"),
        "{row}"
    );
    let row = kubectl_ok(&k, &["get", "jobs", "pi", "-n", NS, "--no-headers"]);
    assert!(row.contains("Running") && row.contains("0/1"), "{row}");
    let row = kubectl_ok(&k, &["get", "hpa", "web", "-n", NS, "--no-headers"]);
    assert!(
        row.contains("ReplicationController/rc") && row.contains("cpu: <unknown>/80%"),
        "{row}"
    );
    let row = kubectl_ok(
        &k,
        &[
            "get",
            "rolebindings",
            "read-pods",
            "-n",
            NS,
            "-o",
            "wide",
            "--no-headers",
        ],
    );
    assert!(
        row.contains("Role/reader") && row.contains("alice") && row.contains("kinds/bot"),
        "{row}"
    );

    // ---- one 422 per kind, with upstream's field ----
    let c = k.admin_client();
    let api = |p: &str| format!("{}/api/v1/namespaces/{NS}/{p}", k.url);
    let apis = |gv: &str, p: &str| format!("{}/apis/{gv}/namespaces/{NS}/{p}", k.url);
    let cluster = |gv: &str, p: &str| format!("{}/apis/{gv}/{p}", k.url);
    let container = json!([{"name": "c", "image": "busybox"}]);
    let cases: Vec<(String, Value, &str)> = vec![
        (
            apis("batch/v1", "jobs"),
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad"},
            "spec": {"template": {"spec": {"containers": container}}}}),
            "spec.template.spec.restartPolicy",
        ),
        (
            apis("batch/v1", "cronjobs"),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "bad"},
            "spec": {"schedule": "every minute", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": container}}}}}}),
            "spec.schedule",
        ),
        (
            apis("networking.k8s.io/v1", "ingresses"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "bad"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
            "spec.rules[0].http.paths[0].pathType",
        ),
        (
            cluster("networking.k8s.io/v1", "ingressclasses"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "bad"},
            "spec": {"controller": "nginx"}}),
            "spec.controller",
        ),
        (
            apis("networking.k8s.io/v1", "networkpolicies"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "bad"},
            "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 70000}]}]}}),
            "spec.ingress[0].ports[0].port",
        ),
        (
            api("persistentvolumeclaims"),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "bad"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {}}}),
            "spec.resources[storage]",
        ),
        (
            format!("{}/api/v1/persistentvolumes", k.url),
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bad"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}),
            "spec",
        ),
        (
            format!("{}/api/v1/nodes", k.url),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bad"},
            "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}),
            "metadata.taints[0].effect",
        ),
        (
            api("events"),
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bad"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "elsewhere"}}),
            "involvedObject.namespace",
        ),
        (
            api("limitranges"),
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "bad"},
            "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}}),
            "spec.limits[0].min[cpu]",
        ),
        (
            api("resourcequotas"),
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "bad"},
            "spec": {"hard": {"pods": "-1"}}}),
            "spec.hard[pods]",
        ),
        (
            api("endpoints"),
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "bad"},
            "subsets": [{"addresses": [{"ip": "not-an-ip"}]}]}),
            "subsets[0].addresses[0].ip",
        ),
        (
            api("replicationcontrollers"),
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "bad"},
            "spec": {"selector": {"app": "x"}, "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": container}}}}),
            "spec.template.metadata.labels",
        ),
        (
            api("podtemplates"),
            json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "bad"},
            "template": {"spec": {"containers": []}}}),
            "template.spec.containers",
        ),
        (
            apis("coordination.k8s.io/v1", "leases"),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "bad"},
            "spec": {"leaseDurationSeconds": 0}}),
            "spec.leaseDurationSeconds",
        ),
        (
            apis("rbac.authorization.k8s.io/v1", "roles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "bad"},
            "rules": [{"apiGroups": [""], "resources": ["pods"]}]}),
            "rules[0].verbs",
        ),
        (
            cluster("rbac.authorization.k8s.io/v1", "clusterroles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "bad"},
            "rules": [{"verbs": ["get"]}]}),
            "rules[0].apiGroups",
        ),
        (
            apis("rbac.authorization.k8s.io/v1", "rolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "bad"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}, "subjects": [{"kind": "Robot", "name": "r"}]}),
            "subjects[0].kind",
        ),
        (
            cluster("rbac.authorization.k8s.io/v1", "clusterrolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "bad"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}}),
            "roleRef.kind",
        ),
        (
            apis("policy/v1", "poddisruptionbudgets"),
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "bad"},
            "spec": {"minAvailable": 1, "maxUnavailable": 1}}),
            "spec",
        ),
        (
            apis("autoscaling/v2", "horizontalpodautoscalers"),
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "bad"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 3, "maxReplicas": 2}}),
            "spec.maxReplicas",
        ),
        (
            apis("autoscaling/v1", "horizontalpodautoscalers"),
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "bad"},
            "spec": {"scaleTargetRef": {"kind": "Deployment"}, "maxReplicas": 2}}),
            "spec.scaleTargetRef.name",
        ),
        (
            cluster("storage.k8s.io/v1", "storageclasses"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "bad"},
            "provisioner": "example.com/x", "reclaimPolicy": "Recycle"}),
            "reclaimPolicy",
        ),
        (
            cluster("scheduling.k8s.io/v1", "priorityclasses"),
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "bad"},
            "value": 2000000000}),
            "value",
        ),
    ];
    runtime().block_on(async {
        for (url, body, field) in &cases {
            let r = c
                .post(url)
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(body).expect("json"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("POST {url}: {e}"));
            let code = r.status().as_u16();
            let text = r.text().await.expect("body");
            assert_eq!(code, 422, "POST {url}: {text}");
            let v: Value = serde_json::from_str(&text).expect("status json");
            assert_eq!(v["reason"], "Invalid", "{text}");
            let fields: Vec<&str> = v["details"]["causes"]
                .as_array()
                .map(|a| a.iter().filter_map(|c| c["field"].as_str()).collect())
                .unwrap_or_default();
            assert!(
                fields.contains(field),
                "POST {url}: no cause for {field}: {text}"
            );
        }
    });

    // ---- update rules ----
    let patch = |resource: &str, name: &str, p: &str| {
        run_limited(
            k.kubectl()
                .args(["patch", resource, name, "-n", NS, "--type=merge", "-p", p]),
            CMD_LIMIT,
        )
    };
    let o = patch(
        "rolebindings",
        "read-pods",
        r#"{"roleRef":{"name":"other"}}"#,
    );
    assert!(
        !o.ok && o.stderr.contains("cannot change roleRef"),
        "{}",
        o.stderr
    );
    let o = patch(
        "jobs",
        "pi",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"perl:5.36"}]}}}}"#,
    );
    assert!(
        !o.ok && o.stderr.contains("spec.template: Invalid value"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("field is immutable"), "{}", o.stderr);
    let o = patch(
        "storageclasses",
        "kinds-fast",
        r#"{"provisioner":"example.com/other"}"#,
    );
    assert!(
        !o.ok && o.stderr.contains("updates to provisioner are forbidden."),
        "{}",
        o.stderr
    );
    let o = patch("priorityclasses", "kinds-high", r#"{"value":5}"#);
    assert!(
        !o.ok && o.stderr.contains("may not be changed in an update."),
        "{}",
        o.stderr
    );
    // Allowed changes still work.
    let o = patch("jobs", "pi", r#"{"spec":{"suspend":true}}"#);
    assert!(o.ok, "{}", o.stderr);
}
