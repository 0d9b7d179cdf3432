//! networking.k8s.io's IPAddress and ServiceCIDR and resource.k8s.io's
//! DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice end
//! to end: created with `kubectl create -f`, upstream's defaults read back
//! with `kubectl get -o json`, upstream's printer columns in `kubectl get`,
//! one 422 per kind over raw HTTPS with upstream's causes, and the update
//! rules (immutable specs, a ServiceCIDR going dual-stack).

mod common;

use common::kubectl::{kubectl_create, kubectl_ok, run_limited, CMD_LIMIT};

use common::{runtime, Kapi};
use serde_json::{json, Value};

const NS: &str = "netres";

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
  name: netres
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: netres
spec:
  ports:
  - port: 80
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: extra
spec:
  cidrs:
  - 10.200.0.0/24
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 10.200.0.7
spec:
  parentRef:
    group: ""
    resource: services
    namespace: netres
    name: web
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu-claim
  namespace: netres
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-template
  namespace: netres
spec:
  metadata:
    labels:
      app: gpu
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - name: big
          deviceClassName: gpu.example.com
          allocationMode: All
        - name: small
          deviceClassName: gpu.example.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool:
    name: node-1
    generation: 0
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    attributes:
      model:
        string: a100
      gpu.example.com/driverVersion:
        version: 1.2.3
    capacity:
      memory:
        value: 40Gi
"#;

#[test]
fn network_and_resource_kinds_create_default_print_and_validate() {
    let k = Kapi::start(&[]);
    let out = kubectl_create(&k, OBJECTS);
    for made in [
        "servicecidr.networking.k8s.io/extra created",
        "ipaddress.networking.k8s.io/10.200.0.7 created",
        "deviceclass.resource.k8s.io/gpu.example.com created",
        "resourceclaim.resource.k8s.io/gpu-claim created",
        "resourceclaimtemplate.resource.k8s.io/gpu-template created",
        "resourceslice.resource.k8s.io/node-1-gpu created",
    ] {
        assert!(out.contains(made), "{made}: {out}");
    }

    // ---- defaults and what create sets ----
    let ip = get_json(&k, "ipaddresses", "10.200.0.7");
    assert_eq!(ip["spec"]["parentRef"]["resource"], "services");
    assert!(ip["metadata"].get("generation").is_none(), "{ip}");
    let cidr = get_json(&k, "servicecidrs", "extra");
    assert_eq!(cidr["spec"]["cidrs"], json!(["10.200.0.0/24"]));
    assert!(cidr["metadata"].get("generation").is_none(), "{cidr}");
    // The Service's cluster IP is allocated as an IPAddress through the same strategy.
    let svc = get_json(&k, "services", "web");
    let cluster_ip = svc["spec"]["clusterIP"]
        .as_str()
        .expect("clusterIP")
        .to_string();
    let svc_ip = get_json(&k, "ipaddresses", &cluster_ip);
    assert_eq!(
        svc_ip["spec"]["parentRef"],
        json!({"group": "", "resource": "services", "namespace": NS, "name": "web"})
    );
    let class = get_json(&k, "deviceclasses", "gpu.example.com");
    assert_eq!(class["metadata"]["generation"], 1);
    let claim = get_json(&k, "resourceclaims", "gpu-claim");
    let exactly = &claim["spec"]["devices"]["requests"][0]["exactly"];
    assert_eq!(exactly["allocationMode"], "ExactCount");
    assert_eq!(exactly["count"], 1);
    assert!(claim["metadata"].get("generation").is_none(), "{claim}");
    let tmpl = get_json(&k, "resourceclaimtemplates", "gpu-template");
    let subs = &tmpl["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"];
    assert_eq!(subs[0]["allocationMode"], "All");
    assert!(subs[0].get("count").is_none(), "{tmpl}");
    assert_eq!(subs[1]["allocationMode"], "ExactCount");
    assert_eq!(subs[1]["count"], 1);
    let slice = get_json(&k, "resourceslices", "node-1-gpu");
    assert_eq!(slice["metadata"]["generation"], 1);

    // ---- columns as kubectl prints them ----
    let expect: &[(&str, &str, &[&str])] = &[
        ("ipaddresses", "10.200.0.7", &["NAME", "PARENTREF"]),
        ("servicecidrs", "extra", &["NAME", "CIDRS", "AGE"]),
        ("deviceclasses", "gpu.example.com", &["NAME", "AGE"]),
        ("resourceclaims", "gpu-claim", &["NAME", "STATE", "AGE"]),
        ("resourceclaimtemplates", "gpu-template", &["NAME", "AGE"]),
        (
            "resourceslices",
            "node-1-gpu",
            &["NAME", "NODE", "DRIVER", "POOL", "AGE"],
        ),
    ];
    for (resource, name, want) in expect {
        assert_eq!(&headers(&k, resource, name), want, "kubectl get {resource}");
    }
    let row = kubectl_ok(&k, &["get", "ipaddresses", &cluster_ip, "--no-headers"]);
    assert!(row.contains("services/netres/web"), "{row}");
    let row = kubectl_ok(
        &k,
        &[
            "get",
            "resourceclaims",
            "gpu-claim",
            "-n",
            NS,
            "--no-headers",
        ],
    );
    assert!(row.contains("pending"), "{row}");
    let row = kubectl_ok(&k, &["get", "resourceslices", "node-1-gpu", "--no-headers"]);
    assert!(
        row.contains("node-1") && row.contains("gpu.example.com"),
        "{row}"
    );
    let row = kubectl_ok(&k, &["get", "servicecidrs", "extra", "--no-headers"]);
    assert!(row.contains("10.200.0.0/24"), "{row}");

    // ---- one 422 per kind, with upstream's causes ----
    let c = k.admin_client();
    let ns = |gv: &str, p: &str| format!("{}/apis/{gv}/namespaces/{NS}/{p}", k.url);
    let cluster = |gv: &str, p: &str| format!("{}/apis/{gv}/{p}", k.url);
    let cases: Vec<(String, Value, &str, &str)> = vec![
        (
            cluster("networking.k8s.io/v1", "ipaddresses"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": "10.200.0.08"},
            "spec": {"parentRef": {"resource": "services", "name": "web"}}}),
            "metadata.name",
            "Invalid value: \"10.200.0.08\": must not have leading 0s",
        ),
        (
            cluster("networking.k8s.io/v1", "ipaddresses"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": "10.200.0.9"}, "spec": {}}),
            "spec.parentRef",
            "Required value",
        ),
        (
            cluster("networking.k8s.io/v1", "servicecidrs"),
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": "bad"},
            "spec": {"cidrs": ["10.0.0.1/24"]}}),
            "spec.cidrs[0]",
            "Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length",
        ),
        (
            cluster("resource.k8s.io/v1", "deviceclasses"),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "bad"},
            "spec": {"selectors": [{}]}}),
            "spec.selectors[0].cel",
            "Required value",
        ),
        (
            ns("resource.k8s.io/v1", "resourceclaims"),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "bad"},
            "spec": {"devices": {"requests": [{"name": "gpu"}]}}}),
            "spec.devices.requests[0]",
            "Required value: exactly one of `exactly` or `firstAvailable` is required",
        ),
        (
            ns("resource.k8s.io/v1", "resourceclaimtemplates"),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "bad"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": ""}}]}}}}),
            "spec.spec.devices.requests[0].exactly.deviceClassName",
            "Required value",
        ),
        (
            cluster("resource.k8s.io/v1", "resourceslices"),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "bad"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1}}}),
            "spec",
            "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        ),
    ];
    runtime().block_on(async {
        for (url, body, field, message) in &cases {
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
            let causes = v["details"]["causes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(
                causes
                    .iter()
                    .any(|c| c["field"] == *field && c["message"] == *message),
                "POST {url}: no cause {field}: {message}: {text}"
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
        "resourceclaims",
        "gpu-claim",
        r#"{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other"}}]}}}"#,
    );
    assert!(
        !o.ok
            && o.stderr.contains("spec: Invalid value")
            && o.stderr.contains("field is immutable"),
        "{}",
        o.stderr
    );
    let o = patch(
        "ipaddresses",
        "10.200.0.7",
        r#"{"spec":{"parentRef":{"name":"other"}}}"#,
    );
    assert!(
        !o.ok
            && o.stderr.contains("spec.parentRef: Invalid value")
            && o.stderr.contains("field is immutable"),
        "{}",
        o.stderr
    );
    let o = patch(
        "servicecidrs",
        "extra",
        r#"{"spec":{"cidrs":["10.201.0.0/24"]}}"#,
    );
    assert!(
        !o.ok
            && o.stderr
                .contains("spec.cidrs[0]: Invalid value: \"10.201.0.0/24\": field is immutable"),
        "{}",
        o.stderr
    );
    // Adding the other family is the one change a ServiceCIDR allows.
    let o = patch(
        "servicecidrs",
        "extra",
        r#"{"spec":{"cidrs":["10.200.0.0/24","fd00:200::/112"]}}"#,
    );
    assert!(o.ok, "{}", o.stderr);
    let cidr = get_json(&k, "servicecidrs", "extra");
    assert_eq!(
        cidr["spec"]["cidrs"],
        json!(["10.200.0.0/24", "fd00:200::/112"])
    );
    // A DeviceClass's spec may change, bumping its generation.
    let o = patch(
        "deviceclasses",
        "gpu.example.com",
        r#"{"spec":{"selectors":[{"cel":{"expression":"device.driver == \"other.example.com\""}}]}}"#,
    );
    assert!(o.ok, "{}", o.stderr);
    let class = get_json(&k, "deviceclasses", "gpu.example.com");
    assert_eq!(class["metadata"]["generation"], 2);
}
