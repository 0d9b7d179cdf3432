//! storage.k8s.io's CSI kinds (CSIDriver, CSINode, CSIStorageCapacity,
//! VolumeAttachment, VolumeAttributesClass) and discovery.k8s.io's
//! EndpointSlice end to end: one object of each created with `kubectl
//! create -f`, upstream's defaults read back with `kubectl get -o json`,
//! upstream's printer columns in `kubectl get`, one 422 per kind over raw
//! HTTPS with upstream's `details.causes`, and the update rules.

mod common;

use common::kubectl::{kubectl_create, kubectl_ok, run_limited, CMD_LIMIT};

use common::{runtime, Kapi};
use serde_json::{json, Value};

const NS: &str = "sd";

/// `kubectl get -o json` of one object.
fn get_json(k: &Kapi, resource: &str, name: &str) -> Value {
    let out = kubectl_ok(k, &["get", resource, name, "-n", NS, "-o", "json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{resource}/{name}: {e}: {out}"))
}

/// The column headers and the one row `kubectl get` prints for an object.
fn table(k: &Kapi, resource: &str, name: &str) -> (Vec<String>, Vec<String>) {
    let out = kubectl_ok(k, &["get", resource, name, "-n", NS]);
    let mut lines = out.lines();
    let split = |l: &str| -> Vec<String> {
        l.split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let head = split(lines.next().unwrap_or(""));
    let row = split(lines.next().unwrap_or(""));
    (head, row)
}

/// `kubectl patch --type=merge`, expected to fail with `want` in its error.
fn patch_refused(k: &Kapi, resource: &str, name: &str, p: &str, want: &str) {
    let o = run_limited(
        k.kubectl()
            .args(["patch", resource, name, "-n", NS, "--type=merge", "-p", p]),
        CMD_LIMIT,
    );
    assert!(
        !o.ok && o.stderr.contains(want),
        "patch {resource}/{name} {p}: want {want:?}\nstdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
}

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: sd
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: csi.sd.example.com
spec:
  podInfoOnMount: true
  tokenRequests:
  - audience: vault
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: sd-node-1
spec:
  drivers:
  - name: csi.sd.example.com
    nodeID: node-1
    topologyKeys: ["topology.sd.example.com/zone"]
    allocatable:
      count: 5
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: cap
  namespace: sd
storageClassName: fast
capacity: 10Gi
nodeTopology:
  matchLabels:
    topology.sd.example.com/zone: a
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  name: sd-va
spec:
  attacher: csi.sd.example.com
  nodeName: sd-node-1
  source:
    persistentVolumeName: pv-1
status:
  attached: true
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: sd-gold
driverName: csi.sd.example.com
parameters:
  iops: "100"
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: sd
  labels:
    kubernetes.io/service-name: web
addressType: IPv4
endpoints:
- addresses: ["10.0.0.1"]
  deprecatedTopology:
    kubernetes.io/hostname: sd-node-1
- addresses: ["10.0.0.2", "10.0.0.3", "10.0.0.4"]
ports:
- port: 80
- name: https
  port: 443
"#;

#[test]
fn csi_kinds_and_endpoint_slices_default_print_and_validate() {
    let k = Kapi::start(&[]);
    let out = kubectl_create(&k, OBJECTS);
    assert!(
        out.contains("csidriver.storage.k8s.io/csi.sd.example.com created"),
        "{out}"
    );
    assert!(
        out.contains("endpointslice.discovery.k8s.io/web-abc created"),
        "{out}"
    );

    // ---- defaults and what create resets ----
    let d = get_json(&k, "csidrivers", "csi.sd.example.com");
    assert_eq!(
        d["spec"],
        json!({"attachRequired": true, "podInfoOnMount": true, "volumeLifecycleModes": ["Persistent"],
            "storageCapacity": false, "fsGroupPolicy": "ReadWriteOnceWithFSType",
            "tokenRequests": [{"audience": "vault"}], "requiresRepublish": false, "seLinuxMount": false})
    );
    assert!(d["metadata"].get("generation").is_none(), "{d}");
    let n = get_json(&k, "csinodes", "sd-node-1");
    assert_eq!(n["spec"]["drivers"][0]["allocatable"]["count"], 5);
    assert!(n["metadata"].get("generation").is_none(), "{n}");
    let va = get_json(&k, "volumeattachments", "sd-va");
    assert_eq!(va["status"]["attached"], false, "{va}");
    assert!(va["metadata"].get("generation").is_none(), "{va}");
    let eps = get_json(&k, "endpointslices", "web-abc");
    assert_eq!(eps["ports"][0]["name"], "");
    assert_eq!(eps["ports"][0]["protocol"], "TCP");
    assert_eq!(eps["ports"][1]["protocol"], "TCP");
    assert_eq!(eps["metadata"]["generation"], 1);
    assert!(
        eps["endpoints"][0].get("deprecatedTopology").is_none(),
        "{eps}"
    );

    // ---- printer columns ----
    let cases: [(&str, &str, &[&str], &[&str]); 6] = [
        (
            "csidrivers",
            "csi.sd.example.com",
            &[
                "NAME",
                "ATTACHREQUIRED",
                "PODINFOONMOUNT",
                "STORAGECAPACITY",
                "TOKENREQUESTS",
                "REQUIRESREPUBLISH",
                "MODES",
                "AGE",
            ],
            &[
                "csi.sd.example.com",
                "true",
                "true",
                "false",
                "vault",
                "false",
                "Persistent",
            ],
        ),
        (
            "csinodes",
            "sd-node-1",
            &["NAME", "DRIVERS", "AGE"],
            &["sd-node-1", "1"],
        ),
        (
            "csistoragecapacities",
            "cap",
            &["NAME", "STORAGECLASSNAME", "CAPACITY"],
            &["cap", "fast", "10Gi"],
        ),
        (
            "volumeattachments",
            "sd-va",
            &["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"],
            &["sd-va", "csi.sd.example.com", "pv-1", "sd-node-1", "false"],
        ),
        (
            "volumeattributesclasses",
            "sd-gold",
            &["NAME", "DRIVERNAME", "AGE"],
            &["sd-gold", "csi.sd.example.com"],
        ),
        (
            "endpointslices",
            "web-abc",
            &["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
            &[
                "web-abc",
                "IPv4",
                "80,443",
                "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
            ],
        ),
    ];
    for (resource, name, want_head, want_row) in cases {
        let (head, row) = table(&k, resource, name);
        assert_eq!(head, want_head, "{resource}");
        assert_eq!(row[..want_row.len()], *want_row, "{resource}: {row:?}");
    }

    // ---- one 422 per kind, with upstream's causes ----
    let c = k.admin_client();
    let cluster = |p: &str| format!("{}/apis/storage.k8s.io/v1/{p}", k.url);
    let cases: Vec<(String, Value, &str, &str)> = vec![
        (
            cluster("csidrivers"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "bad.example.com"},
                "spec": {"fsGroupPolicy": "Sometimes"}}),
            "spec.fsGroupPolicy",
            "Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"",
        ),
        (
            cluster("csinodes"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "bad-node"},
                "spec": {"drivers": [{"name": "csi.sd.example.com", "nodeID": "", "topologyKeys": []}]}}),
            "spec.drivers[0].nodeID",
            "Required value",
        ),
        (
            format!("{}/apis/storage.k8s.io/v1/namespaces/{NS}/csistoragecapacities", k.url),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "bad"},
                "storageClassName": "fast", "capacity": "-1Gi"}),
            "capacity",
            "Invalid value: \"-1Gi\": must be greater than or equal to 0",
        ),
        (
            cluster("volumeattachments"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "bad"},
                "spec": {"attacher": "csi.sd.example.com", "nodeName": "sd-node-1", "source": {}}}),
            "spec.source",
            "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        ),
        (
            cluster("volumeattributesclasses"),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": "bad"},
                "driverName": "csi.sd.example.com"}),
            "parameters",
            "Required value: must contain at least one key/value pair",
        ),
        (
            format!("{}/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices", k.url),
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "bad"},
                "addressType": "IPv4", "endpoints": [{"addresses": ["::1"]}], "ports": []}),
            "endpoints[0].addresses[0]",
            "Invalid value: \"::1\": must be a valid IPv4 address",
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
                "POST {url}: no cause {field}: {message}\n{text}"
            );
        }
    });

    // ---- update rules ----
    patch_refused(
        &k,
        "csidrivers",
        "csi.sd.example.com",
        r#"{"spec":{"attachRequired":false}}"#,
        "spec.attachedRequired: Invalid value: false: field is immutable",
    );
    patch_refused(
        &k,
        "volumeattachments",
        "sd-va",
        r#"{"spec":{"nodeName":"other"}}"#,
        "field is immutable",
    );
    patch_refused(
        &k,
        "volumeattributesclasses",
        "sd-gold",
        r#"{"parameters":{"iops":"200"}}"#,
        "parameters: Forbidden: updates to parameters are forbidden.",
    );
    patch_refused(
        &k,
        "csistoragecapacities",
        "cap",
        r#"{"storageClassName":"slow"}"#,
        "storageClassName: Invalid value: \"slow\": field is immutable",
    );
    patch_refused(
        &k,
        "endpointslices",
        "web-abc",
        r#"{"addressType":"IPv6","endpoints":[]}"#,
        "addressType: Invalid value: \"IPv6\": field is immutable",
    );
    // Allowed changes go through; a label change bumps an EndpointSlice's generation.
    kubectl_ok(
        &k,
        &["label", "endpointslices", "web-abc", "-n", NS, "tier=front"],
    );
    assert_eq!(
        get_json(&k, "endpointslices", "web-abc")["metadata"]["generation"],
        2
    );
    kubectl_ok(
        &k,
        &[
            "patch",
            "csidrivers",
            "csi.sd.example.com",
            "--type=merge",
            "-p",
            r#"{"spec":{"podInfoOnMount":false}}"#,
        ],
    );
    let d = get_json(&k, "csidrivers", "csi.sd.example.com");
    assert_eq!(d["spec"]["podInfoOnMount"], false);
}
