//! Lists and maps by their schema type: merged by key (containers, ports),
//! sets (finalizers), atomic ones replaced whole.

use super::*;

#[test]
fn containers_merge_by_name() {
    let first = apply(None, &nginx_apply("nginx:1.27"), "alice", false, DEPLOY).unwrap();
    // A controller adds a sidecar before nginx (an update).
    let mut new = first.clone();
    new["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "sidecar", "image": "envoy"},
        {"name": "nginx", "image": "nginx:1.27"}
    ]);
    let updated = update(Some(&first), &new, "injector", "apps/v1", "", DEPLOY);
    assert_eq!(
        fields(&updated, "injector", Operation::Update).unwrap()["f:spec"]["f:template"]["f:spec"],
        json!({"f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}})
    );
    // Alice changes nginx: the sidecar stays, in its place.
    let out = apply(
        Some(&updated),
        &nginx_apply("nginx:2"),
        "alice",
        false,
        DEPLOY,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "sidecar", "image": "envoy"}, {"name": "nginx", "image": "nginx:2"}])
    );
    // Alice adds a container: it follows hers, after the shared one.
    let mut config = nginx_apply("nginx:2");
    config["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "nginx", "image": "nginx:2"}, {"name": "logger", "image": "fluent"}]);
    let out = apply(Some(&out), &config, "alice", false, DEPLOY).unwrap();
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["sidecar", "nginx", "logger"]);
    // Alice drops logger: hers alone, so it goes.
    let out = apply(Some(&out), &nginx_apply("nginx:2"), "alice", false, DEPLOY).unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn ports_merge_by_port_and_protocol() {
    let pod = |ports: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": ports}]}
        })
    };
    let first = apply(
        None,
        &pod(json!([{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}])),
        "m",
        false,
        POD,
    )
    .unwrap();
    // The key of an item without protocol takes its default, TCP.
    let f = fields(&first, "m", Operation::Apply).unwrap();
    let ports = &f["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:ports"];
    assert_eq!(
        ports,
        &json!({
            "k:{\"containerPort\":53,\"protocol\":\"UDP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}},
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}
        })
    );
    // The registry defaults protocol; a later apply naming it merges into
    // the same item, and 53/TCP is another item than 53/UDP.
    let mut live = first.clone();
    live["spec"]["containers"][0]["ports"][0]["protocol"] = json!("TCP");
    let out = apply(
        Some(&live),
        &pod(json!([
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 53, "protocol": "UDP"},
            {"containerPort": 53, "protocol": "TCP"}
        ])),
        "m",
        false,
        POD,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"][0]["ports"],
        json!([
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 53, "protocol": "UDP"},
            {"containerPort": 53, "protocol": "TCP"}
        ])
    );
}

#[test]
fn finalizers_are_a_set() {
    let mut obj = cm(json!({}));
    obj["metadata"]["finalizers"] = json!(["a"]);
    let created = update(None, &obj, "creator", "v1", "", CM);
    let mut config = cm(json!({}));
    config["metadata"]["finalizers"] = json!(["b"]);
    let out = apply(Some(&created), &config, "m", false, CM).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
    assert_eq!(
        fields(&out, "m", Operation::Apply).unwrap()["f:metadata"],
        json!({"f:finalizers": {"v:\"b\"": {}}})
    );
    // Applying without b removes b only.
    let out = apply(Some(&out), &cm(json!({})), "m", false, CM).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a"]));
}

#[test]
fn atomic_lists_and_maps_are_replaced() {
    let pod = |args: Value, node_selector: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {
                "nodeSelector": node_selector,
                "containers": [{"name": "c", "image": "i", "args": args}]
            }
        })
    };
    let first = apply(
        None,
        &pod(json!(["x", "y"]), json!({"zone": "a", "disk": "ssd"})),
        "m",
        false,
        POD,
    )
    .unwrap();
    let f = fields(&first, "m", Operation::Apply).unwrap();
    assert_eq!(
        f["f:spec"]["f:nodeSelector"],
        json!({}),
        "an atomic map is a leaf"
    );
    assert_eq!(
        f["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:args"],
        json!({}),
        "an atomic list is a leaf"
    );
    let out = apply(
        Some(&first),
        &pod(json!(["z"]), json!({"zone": "b"})),
        "m",
        false,
        POD,
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["z"]));
    assert_eq!(out["spec"]["nodeSelector"], json!({"zone": "b"}));
    // Someone else's atomic list conflicts as a whole.
    let err = apply(
        Some(&out),
        &pod(json!(["w"]), json!({"zone": "b"})),
        "n",
        false,
        POD,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"m\": .spec.containers[name=\"c\"].args"
    );
}
