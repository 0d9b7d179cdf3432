//! Bodies as Go clients send them (captured from kubectl): Go writes every
//! non-pointer field, so the zero values its JSON would omit are dropped.

use super::*;

// Request bodies kubectl v1.32 sent for `kubectl create configmap x
// --from-literal=a=b --from-literal=empty=`, `kubectl create deployment
// web --image=nginx --replicas=0 --port=80` and `kubectl create namespace
// team-a` (captured from the wire).
const KUBECTL_CONFIGMAP: &str = concat!(
    "6b3873000a0f0a0276311209436f6e6669674d617012260a110a017812001a00",
    "22002a0032003800420012060a016112016212090a05656d70747912001a0022",
    "00",
);
const KUBECTL_DEPLOYMENT: &str = concat!(
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412b8010a1f",
    "0a0377656212001a0022002a003200380042005a0a0a03617070120377656212",
    "86010800120c0a0a0a0361707012037765621a6c0a1c0a0012001a0022002a00",
    "3200380042005a0a0a036170701203776562124c122e0a056e67696e7812056e",
    "67696e782a00320a0a001000185022002a0042006a0072008001008801009001",
    "00a201001a00320042004a0052005800600068008201008a01009a0100c20100",
    "22020a00280038001a0c0800100018002000280038001a002200",
);
const KUBECTL_NAMESPACE: &str = concat!(
    "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d",
    "6112001a0022002a0032003800420012001a020a001a002200",
);

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn kubectl_bodies_lose_the_zero_values_go_json_omits() {
    let v = decode(&unhex(KUBECTL_CONFIGMAP)).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            "data": {"a": "b", "empty": ""}
        })
    );
    let d = decode(&unhex(KUBECTL_DEPLOYMENT)).unwrap();
    // `replicas` is a pointer in Go: its zero is meaningful and kept.
    assert_eq!(d["spec"]["replicas"], 0);
    // Non-pointer omitempty fields: gone, as upstream prints them.
    for absent in ["paused", "minReadySeconds"] {
        assert!(d["spec"].get(absent).is_none(), "{absent}: {d}");
    }
    let pod = &d["spec"]["template"]["spec"];
    for absent in ["hostNetwork", "hostPID", "hostIPC"] {
        assert!(pod.get(absent).is_none(), "{absent}: {pod}");
    }
    let c = &pod["containers"][0];
    for absent in ["imagePullPolicy", "stdin", "stdinOnce", "tty"] {
        assert!(c.get(absent).is_none(), "{absent}: {c}");
    }
    assert!(d["spec"]["template"]["metadata"]
        .get("generation")
        .is_none());
}

#[test]
fn kubectl_bodies_with_empty_strings_omitted() {
    let opts = DecodeOptions {
        omit_empty_strings: true,
    };
    let v = decode_with(&unhex(KUBECTL_CONFIGMAP), opts).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            // Map values are not fields: kept.
            "data": {"a": "b", "empty": ""}
        })
    );
    let v = decode_with(&unhex(KUBECTL_NAMESPACE), opts).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "team-a"},
            "spec": {},
            "status": {}
        })
    );
    let v = decode_with(&unhex(KUBECTL_DEPLOYMENT), opts).unwrap();
    // What upstream prints for `kubectl create deployment web
    // --image=nginx --port=80 --replicas=0` before defaulting: only
    // pointers (`replicas`), fields without omitempty (`name`,
    // `containerPort`) and structs (`strategy`, `status`) survive.
    assert_eq!(
        v,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{
                            "name": "nginx",
                            "image": "nginx",
                            "ports": [{"containerPort": 80}],
                            "resources": {}
                        }]
                    }
                },
                "strategy": {}
            },
            "status": {}
        })
    );
    let _: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(v).unwrap();
}
