//! Admission plugins as kube-apiserver v1.34 runs them (issue 21, point
//! 9): the default-on ones that act without any flag (TaintNodesByCondition,
//! StorageObjectInUseProtection with its pvc- and pv-protection
//! controllers, PersistentVolumeClaimResize, RuntimeClass,
//! DefaultIngressClass), the opt-in ones a flag names, and the ones kapi
//! does not run, refused at start rather than skipped. (AlwaysDeny is
//! tested in process: a server running it cannot bootstrap.)

mod common;

use common::http::{merge_patch, send};

use std::time::{Duration, Instant};

use common::{runtime, Kapi};
use serde_json::{json, Value};

fn pod(name: &str, spec: Value) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    if let (Some(s), Some(extra)) = (p["spec"].as_object_mut(), spec.as_object()) {
        for (k, v) in extra {
            s.insert(k.clone(), v.clone());
        }
    }
    p
}

async fn eventually_gone(c: &reqwest::Client, url: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (code, body) = send(c, "GET", url, None).await;
        if code == 404 {
            return;
        }
        assert!(Instant::now() < deadline, "{url} is still there: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn default_plugins_act_without_flags() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        let api = format!("{}/api/v1", k.url);

        // TaintNodesByCondition: a new node is not ready yet.
        let (code, node) = send(&c, "POST", &format!("{api}/nodes"),
            Some(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))).await;
        assert_eq!(code, 201, "{node}");
        assert_eq!(node["spec"]["taints"], json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]));

        // StorageObjectInUseProtection and the pvc-protection controller:
        // a claim a pod mounts stays until the pod is gone.
        let pvcs = format!("{api}/namespaces/default/persistentvolumeclaims");
        let (code, pvc) = send(&c, "POST", &pvcs, Some(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))).await;
        assert_eq!(code, 201, "{pvc}");
        assert_eq!(pvc["metadata"]["finalizers"], json!(["kubernetes.io/pvc-protection"]));
        let pods = format!("{api}/namespaces/default/pods");
        let (code, p) = send(&c, "POST", &pods, Some(pod("user", json!({"nodeName": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]})))).await;
        assert_eq!(code, 201, "{p}");
        let (code, _) = send(&c, "DELETE", &format!("{pvcs}/data"), None).await;
        assert_eq!(code, 200);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (code, held) = send(&c, "GET", &format!("{pvcs}/data"), None).await;
        assert_eq!(code, 200, "a claim in use stays");
        assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
        send(&c, "DELETE", &format!("{pods}/user?gracePeriodSeconds=0"), None).await;
        eventually_gone(&c, &format!("{pvcs}/data")).await;

        // pv-protection: an unbound volume goes once deleted.
        let (code, pv) = send(&c, "POST", &format!("{api}/persistentvolumes"), Some(json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv1"}}}))).await;
        assert_eq!(code, 201, "{pv}");
        assert_eq!(pv["metadata"]["finalizers"], json!(["kubernetes.io/pv-protection"]));
        send(&c, "DELETE", &format!("{api}/persistentvolumes/pv1"), None).await;
        eventually_gone(&c, &format!("{api}/persistentvolumes/pv1")).await;

        // PersistentVolumeClaimResize: a bound claim grows only when its
        // class allows expansion.
        let (code, _) = send(&c, "POST", &pvcs, Some(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "grow"}, "spec": {"storageClassName": "fixed", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))).await;
        assert_eq!(code, 201);
        let (code, _) = merge_patch(&c, &format!("{pvcs}/grow/status"), json!({"status": {"phase": "Bound"}})).await;
        assert_eq!(code, 200);
        let bigger = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}});
        let (code, refused) = merge_patch(&c, &format!("{pvcs}/grow"), bigger.clone()).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "persistentvolumeclaims \"grow\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize");
        let (code, _) = send(&c, "POST", &format!("{}/apis/storage.k8s.io/v1/storageclasses", k.url), Some(json!({"apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass", "metadata": {"name": "fixed"}, "provisioner": "example.com/disk", "allowVolumeExpansion": true}))).await;
        assert_eq!(code, 201);
        let (code, grown) = merge_patch(&c, &format!("{pvcs}/grow"), bigger).await;
        assert_eq!(code, 200, "{grown}");

        // RuntimeClass: a missing class is refused; an existing one brings
        // its overhead and scheduling constraints.
        let (code, refused) = send(&c, "POST", &pods, Some(pod("sandboxed", json!({"runtimeClassName": "gvisor"})))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "pods \"sandboxed\" is forbidden: pod rejected: RuntimeClass \"gvisor\" not found");
        let (code, rc) = send(&c, "POST", &format!("{}/apis/node.k8s.io/v1/runtimeclasses", k.url), Some(json!({"apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass", "metadata": {"name": "gvisor"}, "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m"}},
            "scheduling": {"nodeSelector": {"sandbox": "gvisor"}, "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}))).await;
        assert_eq!(code, 201, "{rc}");
        let (code, p) = send(&c, "POST", &pods, Some(pod("sandboxed", json!({"runtimeClassName": "gvisor"})))).await;
        assert_eq!(code, 201, "{p}");
        assert_eq!(p["spec"]["overhead"], json!({"cpu": "250m"}));
        assert_eq!(p["spec"]["nodeSelector"], json!({"sandbox": "gvisor"}));
        assert!(p["spec"]["tolerations"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == "sandbox")), "{p}");
        let (code, refused) = send(&c, "POST", &pods, Some(pod("wrong-overhead", json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}})))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "pods \"wrong-overhead\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");

        // DefaultIngressClass: an Ingress without a class gets the default.
        let net = format!("{}/apis/networking.k8s.io/v1", k.url);
        let (code, _) = send(&c, "POST", &format!("{net}/ingressclasses"), Some(json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}}, "spec": {"controller": "k8s.io/ingress-nginx"}}))).await;
        assert_eq!(code, 201);
        let (code, ing) = send(&c, "POST", &format!("{net}/namespaces/default/ingresses"), Some(json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web"}, "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}}))).await;
        assert_eq!(code, 201, "{ing}");
        assert_eq!(ing["spec"]["ingressClassName"], "nginx");
    });
}

#[test]
fn opt_in_plugins_act_when_named() {
    let k = Kapi::start(&["--enable-admission-plugins=AlwaysPullImages,PodNodeSelector,PodTolerationRestriction,ExtendedResourceToleration,LimitPodHardAntiAffinityTopology,DenyServiceExternalIPs"]);
    runtime().block_on(async {
        let c = k.admin_client();
        let api = format!("{}/api/v1", k.url);
        let (code, ns) = send(&c, "POST", &format!("{api}/namespaces"), Some(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "team", "annotations": {
                "scheduler.alpha.kubernetes.io/node-selector": "env=prod",
                "scheduler.alpha.kubernetes.io/defaultTolerations": "[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"team\",\"effect\":\"NoSchedule\"}]",
                "scheduler.alpha.kubernetes.io/tolerationsWhitelist": "[{\"key\":\"dedicated\",\"operator\":\"Exists\"},{\"key\":\"example.com/gpu\",\"operator\":\"Exists\"},{\"key\":\"node.kubernetes.io/memory-pressure\",\"operator\":\"Exists\"},{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\"},{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\"}]"}}}))).await;
        // The whitelist must cover what every mutating plugin adds, as
        // upstream's does: DefaultTolerationSeconds' not-ready and
        // unreachable tolerations, and the memory-pressure one.
        assert_eq!(code, 201, "{ns}");
        let pods = format!("{api}/namespaces/team/pods");

        let (code, p) = send(&c, "POST", &pods, Some(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu"},
            "spec": {"containers": [{"name": "c", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": {"cpu": "100m", "example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}]}}))).await;
        assert_eq!(code, 201, "{p}");
        // AlwaysPullImages
        assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], "Always");
        // PodNodeSelector
        assert_eq!(p["spec"]["nodeSelector"], json!({"env": "prod"}));
        // PodTolerationRestriction (defaults; not BestEffort, so memory
        // pressure too) and ExtendedResourceToleration.
        let keys: Vec<&str> = p["spec"]["tolerations"].as_array().expect("tolerations").iter()
            .filter_map(|t| t["key"].as_str()).collect();
        for want in ["dedicated", "node.kubernetes.io/memory-pressure", "example.com/gpu"] {
            assert!(keys.contains(&want), "{want} missing from {keys:?}");
        }

        let (code, refused) = send(&c, "POST", &pods, Some(pod("dev", json!({"nodeSelector": {"env": "dev"}})))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "pods \"dev\" is forbidden: pod node label selector conflicts with its namespace node label selector");

        // A plain error upstream (not Forbidden): 500 without a reason.
        let (code, refused) = send(&c, "POST", &pods, Some(pod("outsider", json!({"tolerations": [{"key": "other", "operator": "Exists"}]})))).await;
        assert_eq!(code, 500, "{refused}");
        assert!(refused.get("reason").is_none(), "{refused}");
        assert_eq!(refused["message"], "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist");

        let anti = json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}});
        let (code, refused) = send(&c, "POST", &pods, Some(pod("spread", anti))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "pods \"spread\" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed");

        let (code, refused) = send(&c, "POST", &format!("{api}/namespaces/team/services"), Some(json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "ext"}, "spec": {"ports": [{"port": 80}], "externalIPs": ["192.0.2.10"]}}))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "services \"ext\" is forbidden: Use of external IPs is denied by admission control");
    });
}

#[test]
fn namespace_auto_provision_creates_the_namespace() {
    let k = Kapi::start(&["--enable-admission-plugins=NamespaceAutoProvision"]);
    runtime().block_on(async {
        let c = k.admin_client();
        let (code, cm) = send(
            &c,
            "POST",
            &format!("{}/api/v1/namespaces/made-on-demand/configmaps", k.url),
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})),
        )
        .await;
        assert_eq!(code, 201, "{cm}");
        let (code, _) = send(
            &c,
            "GET",
            &format!("{}/api/v1/namespaces/made-on-demand", k.url),
            None,
        )
        .await;
        assert_eq!(code, 200);
    });
}

/// Runs `kapi serve` on `data_dir` with `args`, which must stop the
/// start: its standard error.
fn refused_start(data_dir: &std::path::Path, args: &[String]) -> String {
    let out = std::process::Command::new(common::kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(data_dir)
        .args(args)
        .output()
        .expect("run kapi");
    assert!(!out.status.success(), "kapi started with {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Plugins that need a configuration are refused at start without one,
/// never accepted and skipped.
#[test]
fn plugins_kapi_cannot_run_are_refused_at_start() {
    for (plugin, want) in [
        ("ImagePolicyWebhook", "failed to initialize admission: couldn't init admission plugin \"ImagePolicyWebhook\": no config specified"),
        ("EventRateLimit", "failed to initialize admission: EventRateLimit: no config file specified"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = refused_start(dir.path(), &[format!("--enable-admission-plugins={plugin}")]);
        assert!(err.contains(want), "{plugin}: {err}");
    }
}

/// EventRateLimit with its configuration from
/// `--admission-control-config-file`: a namespace's burst of events, then 429.
#[test]
fn event_rate_limit_refuses_events_over_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let erl = dir.path().join("eventratelimit.yaml");
    std::fs::write(&erl, "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Namespace\n  qps: 1\n  burst: 3\n").expect("write");
    let admission = dir.path().join("admission.yaml");
    std::fs::write(&admission, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: eventratelimit.yaml\n").expect("write");
    let config = format!("--admission-control-config-file={}", admission.display());
    let k = Kapi::start(&["--enable-admission-plugins=EventRateLimit", &config]);
    runtime().block_on(async {
        let c = k.admin_client();
        let events = format!("{}/api/v1/namespaces/default/events", k.url);
        let event = |i: usize| json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": format!("e{i}")},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "Test", "message": "m"});
        let mut codes = Vec::new();
        let mut refused = Value::Null;
        for i in 0..6 {
            let (code, body) = send(&c, "POST", &events, Some(event(i))).await;
            if code == 429 && refused.is_null() {
                refused = body;
            }
            codes.push(code);
        }
        // Three from the burst; a busy machine may refill one or two more
        // (one token a second), never all.
        assert_eq!(&codes[..3], &[201, 201, 201], "{codes:?}");
        assert!(codes.contains(&429), "{codes:?}");
        assert_eq!(refused["reason"], "TooManyRequests");
        assert_eq!(
            refused["message"],
            "Too many requests: limit reached on type Namespace for key default"
        );
        // Other kinds are not limited.
        for i in 0..5 {
            let (code, _) = send(&c, "POST", &format!("{}/api/v1/namespaces/default/configmaps", k.url),
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm{i}")}}))).await;
            assert_eq!(code, 201);
        }
    });
}

fn namespace(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations}})
}

/// PodNodeSelector and PodTolerationRestriction with their configuration
/// files (`--admission-control-config-file`): the cluster default node
/// selector where a namespace has no annotation (an empty one overrides
/// it), a namespace's whitelist of node labels, and cluster-wide default
/// and whitelisted tolerations, as upstream reads them.
#[test]
fn pod_node_selector_and_toleration_restriction_read_their_configuration() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("tolerations.yaml"),
        "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n\
         default:\n- {key: team, operator: Equal, value: blue, effect: NoSchedule}\n\
         whitelist:\n- {key: team, operator: Exists}\n- {key: node.kubernetes.io, operator: Exists}\n\
         - {key: node.kubernetes.io/memory-pressure, operator: Exists}\n\
         - {key: node.kubernetes.io/not-ready, operator: Exists}\n\
         - {key: node.kubernetes.io/unreachable, operator: Exists}\n",
    )
    .expect("write");
    let admission = dir.path().join("admission.yaml");
    std::fs::write(
        &admission,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
         - name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig:\n\
         \x20     clusterDefaultNodeSelector: env=dev\n      restricted: env=prod,tier=web\n\
         - name: PodTolerationRestriction\n  path: tolerations.yaml\n",
    )
    .expect("write");
    let config = format!("--admission-control-config-file={}", admission.display());
    let k = Kapi::start(&[
        "--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction",
        &config,
    ]);
    let c = k.admin_client();
    let api = format!("{}/api/v1", k.url);
    let namespaces = [
        ("plain", json!({})),
        (
            "unpinned",
            json!({"scheduler.alpha.kubernetes.io/node-selector": ""}),
        ),
        (
            "restricted",
            json!({"scheduler.alpha.kubernetes.io/node-selector": "env=prod"}),
        ),
        (
            "open",
            json!({"scheduler.alpha.kubernetes.io/tolerationsWhitelist": "",
            "scheduler.alpha.kubernetes.io/defaultTolerations": "[{\"Key\":\"lab\",\"Operator\":\"Exists\"}]"}),
        ),
    ];
    for (name, annotations) in &namespaces {
        let (code, body) = runtime().block_on(send(
            &c,
            "POST",
            &format!("{api}/namespaces"),
            Some(namespace(name, annotations.clone())),
        ));
        assert_eq!(code, 201, "{body}");
        k.wait_for_default_service_account(name);
    }
    runtime().block_on(async {
        let post = |ns: &str, p: Value| {
            let (c, url) = (c.clone(), format!("{api}/namespaces/{ns}/pods"));
            async move { send(&c, "POST", &url, Some(p)).await }
        };

        // The cluster default selector and tolerations.
        let (code, p) = post("plain", pod("a", json!({}))).await;
        assert_eq!(code, 201, "{p}");
        assert_eq!(p["spec"]["nodeSelector"], json!({"env": "dev"}));
        assert!(
            p["spec"]["tolerations"].as_array().into_iter().flatten().any(|t| t["key"] == "team" && t["value"] == "blue"),
            "{}", p["spec"]["tolerations"]
        );
        // An empty annotation overrides the cluster default with nothing.
        let (code, p) = post("unpinned", pod("a", json!({}))).await;
        assert_eq!(code, 201, "{p}");
        assert!(p["spec"]["nodeSelector"].is_null() || p["spec"]["nodeSelector"] == json!({}), "{p}");
        // The namespace's whitelist from the configuration.
        let (code, p) = post("restricted", pod("web", json!({"nodeSelector": {"tier": "web"}}))).await;
        assert_eq!(code, 201, "{p}");
        assert_eq!(p["spec"]["nodeSelector"], json!({"env": "prod", "tier": "web"}));
        let (code, refused) = post("restricted", pod("db", json!({"nodeSelector": {"tier": "db"}}))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["reason"], "Forbidden");
        assert_eq!(refused["message"], "pods \"db\" is forbidden: pod node label selector labels conflict with its namespace whitelist");
        // The cluster whitelist: 500 without a reason, naming its scope.
        let (code, refused) = post("plain", pod("odd", json!({"tolerations": [{"key": "other", "operator": "Exists"}]}))).await;
        assert_eq!(code, 500, "{refused}");
        assert!(refused.get("reason").is_none(), "{refused}");
        assert_eq!(refused["message"], "pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist");
        // An empty namespace whitelist lifts the cluster's; the namespace's
        // defaults (keys in any case, as Go decodes them) replace the cluster's.
        let (code, p) = post("open", pod("odd", json!({"tolerations": [{"key": "other", "operator": "Exists"}]}))).await;
        assert_eq!(code, 201, "{p}");
        let keys: Vec<&str> = p["spec"]["tolerations"].as_array().into_iter().flatten().filter_map(|t| t["key"].as_str()).collect();
        assert!(keys.contains(&"lab") && !keys.contains(&"team"), "{keys:?}");
    });
}

/// Configurations upstream refuses stop the start with its words; the
/// unversioned PodNodeSelector file may stand alone as upstream's legacy
/// `--admission-control-config-file`.
#[test]
fn admission_configurations_refused_or_taken_as_upstream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
         - name: PodTolerationRestriction\n  configuration:\n\
         \x20   apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\n    kind: Configuration\n\
         \x20   default:\n    - {operator: Equal, value: x}\n",
    )
    .expect("write");
    let err = refused_start(
        &dir.path().join("data"),
        &[
            "--enable-admission-plugins=PodTolerationRestriction".into(),
            format!("--admission-control-config-file={}", bad.display()),
        ],
    );
    assert!(
        err.contains("couldn't init admission plugin \"PodTolerationRestriction\": invalid config: [podtolerationrestriction.default[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty"),
        "{err}"
    );
    common::assert_no_debug_shapes("a refused admission configuration", &err);

    let legacy = dir.path().join("legacy.yaml");
    std::fs::write(
        &legacy,
        "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: zone=a\n",
    )
    .expect("write");
    let config = format!("--admission-control-config-file={}", legacy.display());
    let k = Kapi::start(&["--enable-admission-plugins=PodNodeSelector", &config]);
    let (code, p) = create_default_pod(&k, pod("z", json!({})));
    assert_eq!(code, 201, "{p}");
    assert_eq!(p["spec"]["nodeSelector"], json!({"zone": "a"}));
}

/// Creates `p` in `default` once its ServiceAccount is there: code and body.
fn create_default_pod(k: &Kapi, p: Value) -> (u16, Value) {
    k.wait_for_default_service_account("default");
    let c = k.admin_client();
    let url = format!("{}/api/v1/namespaces/default/pods", k.url);
    runtime().block_on(send(&c, "POST", &url, Some(p)))
}

/// An image review backend: it answers ImageReviews (denying images that
/// contain "bad", without a reason those that contain "quiet"), keeps
/// every review it got, and stops when `stop` fires.
async fn image_review_backend(
    stop: tokio::sync::oneshot::Receiver<()>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::{routing::post, Json, Router};
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = got.clone();
    let app = Router::new().route(
        "/review",
        post(move |Json(review): Json<Value>| {
            let seen = seen.clone();
            async move {
                let images: Vec<String> = review["spec"]["containers"].as_array().into_iter().flatten()
                    .filter_map(|c| c["image"].as_str().map(String::from)).collect();
                seen.lock().expect("lock").push(review);
                let status = if images.iter().any(|i| i.contains("bad")) {
                    json!({"allowed": false, "reason": "images from repo bad are not allowed"})
                } else if images.iter().any(|i| i.contains("quiet")) {
                    json!({"allowed": false})
                } else {
                    json!({"allowed": true})
                };
                Json(json!({"apiVersion": "imagepolicy.k8s.io/v1alpha1", "kind": "ImageReview", "status": status}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/review", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.await;
            })
            .await;
    });
    (url, got)
}

fn image_policy_config(dir: &std::path::Path, server: &str, policy: &str) -> String {
    let kubeconfig =
        common::http::webhook_kubeconfig(dir, "imagereview.kubeconfig", server, Some("secret"));
    let admission = dir.join("admission.yaml");
    std::fs::write(
        &admission,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
             - name: ImagePolicyWebhook\n  configuration:\n    imagePolicy:\n      kubeConfigFile: {}\n{policy}",
            kubeconfig
        ),
    )
    .expect("write");
    format!("--admission-control-config-file={}", admission.display())
}

/// ImagePolicyWebhook against a real backend: the ImageReview upstream
/// sends (images of containers then init containers, the image-policy
/// annotations only, the namespace), a denial with and without a reason
/// (403), answers cached for their TTL, and with the backend gone a
/// refusal (defaultAllow false); bad settings stop the start in upstream's
/// words.
#[test]
fn image_policy_webhook_asks_its_backend() {
    let dir = tempfile::tempdir().expect("tempdir");
    let backend_rt = runtime();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (url, got) = backend_rt.block_on(image_review_backend(stopped));
    let config = image_policy_config(
        dir.path(),
        &url,
        "      allowTTL: 60\n      denyTTL: 60\n      retryBackoff: 10\n      defaultAllow: false\n",
    );
    let k = Kapi::start(&["--enable-admission-plugins=ImagePolicyWebhook", &config]);
    k.wait_for_default_service_account("default");
    let c = k.admin_client();
    let pods = format!("{}/api/v1/namespaces/default/pods", k.url);
    let with = |name: &str, image: &str| {
        let mut p = pod(
            name,
            json!({"initContainers": [{"name": "init", "image": "registry.example/init:1"}]}),
        );
        p["spec"]["containers"][0]["image"] = json!(image);
        p["metadata"]["annotations"] =
            json!({"mycluster.image-policy.k8s.io/ticket-1234": "break-glass", "other": "x"});
        p
    };
    backend_rt.block_on(async {
        let (code, p) = send(&c, "POST", &pods, Some(with("good", "registry.example/app:1"))).await;
        assert_eq!(code, 201, "{p}");
        let reviews = got.lock().expect("lock").clone();
        assert_eq!(reviews.len(), 1, "{reviews:?}");
        let r = &reviews[0];
        assert_eq!(r["kind"], "ImageReview");
        assert_eq!(r["apiVersion"], "imagepolicy.k8s.io/v1alpha1");
        assert_eq!(
            r["spec"],
            json!({"containers": [{"image": "registry.example/app:1"}, {"image": "registry.example/init:1"}],
                "annotations": {"mycluster.image-policy.k8s.io/ticket-1234": "break-glass"},
                "namespace": "default"})
        );

        let (code, refused) = send(&c, "POST", &pods, Some(with("b", "bad/app:1"))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["reason"], "Forbidden");
        assert_eq!(refused["message"], "pods \"b\" is forbidden: image policy webhook backend denied one or more images: images from repo bad are not allowed");
        let (code, refused) = send(&c, "POST", &pods, Some(with("q", "quiet/app:1"))).await;
        assert_eq!(code, 403, "{refused}");
        assert_eq!(refused["message"], "pods \"q\" is forbidden: one or more images rejected by webhook backend");

        // The same review again is answered from the cache.
        let asked = got.lock().expect("lock").len();
        let (code, p) = send(&c, "POST", &pods, Some(with("good-again", "registry.example/app:1"))).await;
        assert_eq!(code, 201, "{p}");
        let (code, _) = send(&c, "POST", &pods, Some(with("b2", "bad/app:1"))).await;
        assert_eq!(code, 403);
        assert_eq!(got.lock().expect("lock").len(), asked, "cached answers");

        // The backend gone: refused, naming what failed (defaultAllow false).
        let _ = stop.send(());
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let (code, refused) = send(&c, "POST", &pods, Some(with("late", "registry.example/new:1"))).await;
        assert_eq!(code, 403, "{refused}");
        let message = refused["message"].as_str().unwrap_or("");
        assert!(message.starts_with("pods \"late\" is forbidden: Post \"http://"), "{message}");
        common::assert_no_debug_shapes("an image policy backend failure", message);
    });

    // Out-of-range settings stop the start in upstream's words.
    let err = refused_start(
        &dir.path().join("data2"),
        &[
            "--enable-admission-plugins=ImagePolicyWebhook".into(),
            image_policy_config(dir.path(), &url, "      allowTTL: 1801\n"),
        ],
    );
    assert!(
        err.contains("couldn't init admission plugin \"ImagePolicyWebhook\": valid value is between 1s and 30m0s, got 30m1s"),
        "{err}"
    );
}

/// With `defaultAllow: true` a backend that cannot be reached lets pods in.
#[test]
fn image_policy_webhook_fails_open_when_told_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let config = image_policy_config(
        dir.path(),
        &format!("http://127.0.0.1:{port}/review"),
        "      retryBackoff: 1\n      defaultAllow: true\n",
    );
    let k = Kapi::start(&["--enable-admission-plugins=ImagePolicyWebhook", &config]);
    let (code, p) = create_default_pod(&k, pod("open", json!({})));
    assert_eq!(code, 201, "{p}");
}
