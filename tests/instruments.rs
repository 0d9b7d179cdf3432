//! `kapi routes` and `kapi etcd dump`, run as a user runs them: the built
//! binary, against nothing (offline), a running kapi, its data dir, and a
//! real etcd.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{run, runtime, Kapi};
use kapi::storage::Backend;
use serde_json::Value;

fn kapi() -> Command {
    Command::new(common::kapi_bin())
}

/// Runs `kapi ARGS` and returns (exit code, stdout, stderr).
fn kapi_out(args: &[&str]) -> (i32, String, String) {
    output(kapi().args(args))
}

fn output(c: &mut Command) -> (i32, String, String) {
    let out = c.output().expect("run kapi");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `kapi ARGS`, expecting success, and returns stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = kapi_out(args);
    assert_eq!(code, 0, "kapi {args:?} failed:\n{err}");
    out
}

/// A one-line error on stderr, starting with `kapi:`, with this exit code.
fn fails(args: &[&str], code: i32, needle: &str) {
    let (c, out, err) = kapi_out(args);
    assert_eq!(
        c, code,
        "kapi {args:?}: exit code {c}, stdout:\n{out}\nstderr:\n{err}"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "kapi {args:?}: not one line:\n{err}"
    );
    assert!(err.starts_with("kapi: "), "{err}");
    assert!(
        err.contains(needle),
        "kapi {args:?}: {err:?} does not say {needle:?}"
    );
}

/// Rows of a table, split on runs of spaces.
fn rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn has_row(table: &str, prefix: &[&str]) -> bool {
    rows(table)
        .iter()
        .any(|r| r.len() >= prefix.len() && r.iter().zip(prefix).all(|(a, b)| a == b))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

// ------------------------------------------------------------------ routes

#[test]
fn routes_offline_lists_every_server_in_delegation_order() {
    let out = ok(&["routes"]);
    let header = rows(&out)[0].clone();
    assert_eq!(header[..5], ["SERVER", "METHOD", "PATH", "VERB", "HANDLER"]);
    assert!(
        has_row(
            &out,
            &[
                "kube-apiserver",
                "GET",
                "/api/v1/namespaces/{namespace}/pods",
                "list",
                "resource",
                "pods",
                "Pod"
            ]
        ),
        "{out}"
    );
    assert!(has_row(
        &out,
        &["kube-apiserver", "GET", "/api/v1/pods", "list"]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "GET",
            "/api/v1/namespaces/{namespace}/pods?watch=true",
            "watch"
        ]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "GET",
            "/api/v1/watch/namespaces/{namespace}/pods",
            "watch"
        ]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "POST",
            "/api/v1/namespaces/{namespace}/pods",
            "create"
        ]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "DELETE",
            "/api/v1/namespaces/{namespace}/pods",
            "deletecollection"
        ]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "PATCH",
            "/api/v1/namespaces/{namespace}/pods/{name}/status",
            "patch",
            "resource",
            "pods/status"
        ]
    ));
    assert!(has_row(
        &out,
        &[
            "kube-apiserver",
            "GET",
            "/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}",
            "get",
            "proxy"
        ]
    ));
    assert!(has_row(
        &out,
        &["kube-apiserver", "GET", "/healthz", "get", "non-resource"]
    ));
    assert!(has_row(
        &out,
        &["aggregator", "GET", "/apis", "get", "non-resource"]
    ));
    assert!(has_row(
        &out,
        &[
            "apiextensions-apiserver",
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "create"
        ]
    ));
    // Delegation order: every aggregator row, then kube-apiserver, then apiextensions.
    let servers: Vec<String> = rows(&out)[1..].iter().map(|r| r[0].clone()).collect();
    let mut order = servers.clone();
    order.dedup();
    assert_eq!(
        order,
        ["aggregator", "kube-apiserver", "apiextensions-apiserver"]
    );
}

#[test]
fn routes_outputs_and_filters() {
    let all = json(&ok(&["routes", "-o", "json"]));
    let all = all.as_array().expect("a JSON array of routes");
    assert!(all.len() > 500, "{}", all.len());
    assert!(all.iter().any(|r| r["server"] == "kube-apiserver"
        && r["method"] == "GET"
        && r["path"] == "/api/v1/namespaces/{namespace}/pods"
        && r["verb"] == "list"
        && r["resource"] == "pods"
        && r["kind"] == "Pod"
        && r["namespaced"] == true
        && r["handler"] == "resource"));
    let y = yaml(&ok(&[
        "routes",
        "-o",
        "yaml",
        "--resource",
        "deployments.apps",
    ]));
    let y = y.as_array().expect("a YAML sequence");
    assert!(!y.is_empty());
    assert!(y
        .iter()
        .all(|r| r["resource"] == "deployments" && r["group"] == "apps"));
    assert!(y
        .iter()
        .any(|r| r["subresource"] == "scale" && r["kind"] == "Scale"));

    let ext = ok(&["routes", "--server", "apiextensions-apiserver"]);
    assert!(
        rows(&ext)[1..]
            .iter()
            .all(|r| r[0] == "apiextensions-apiserver"),
        "{ext}"
    );
    let apps = ok(&["routes", "--group", "apps", "-o", "wide"]);
    assert!(rows(&apps)[0].contains(&"APIVERSION".to_string()));
    assert!(rows(&apps)[1..].iter().all(|r| r[5] == "apps/v1"), "{apps}");
    let po = ok(&["routes", "--resource", "po"]);
    assert!(
        rows(&po)[1..].iter().all(|r| r[5].starts_with("pods")),
        "{po}"
    );
}

#[test]
fn routes_match_answers_server_and_route() {
    let out = ok(&[
        "routes",
        "--match",
        "GET",
        "/api/v1/namespaces/default/pods",
    ]);
    assert!(has_row(&out, &["server:", "kube-apiserver"]), "{out}");
    assert!(
        has_row(
            &out,
            &["route:", "GET", "/api/v1/namespaces/{namespace}/pods"]
        ),
        "{out}"
    );
    assert!(has_row(&out, &["verb:", "list"]), "{out}");
    let m = json(&ok(&[
        "routes",
        "--match",
        "GET",
        "/api/v1/namespaces/default/pods",
        "-o",
        "json",
    ]));
    assert_eq!(m["server"], "kube-apiserver");
    assert_eq!(m["outcome"], "served");
    assert_eq!(m["passed"], serde_json::json!(["aggregator"]));
    assert_eq!(m["route"]["path"], "/api/v1/namespaces/{namespace}/pods");
    assert_eq!(m["route"]["verb"], "list");
    assert_eq!(m["requestInfo"]["namespace"], "default");

    let w = json(&ok(&[
        "routes",
        "--match",
        "get",
        "/apis/apps/v1/deployments?watch=true",
        "-o",
        "json",
    ]));
    assert_eq!(w["route"]["path"], "/apis/apps/v1/deployments?watch=true");
    assert_eq!(w["route"]["verb"], "watch");
    let d = json(&ok(&[
        "routes",
        "--match",
        "GET",
        "/apis/apps/v1",
        "-o",
        "json",
    ]));
    assert_eq!(
        (d["server"].as_str(), d["route"]["handler"].as_str()),
        (Some("aggregator"), Some("non-resource"))
    );
    let crd = json(&ok(&[
        "routes",
        "--match",
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x",
        "-o",
        "json",
    ]));
    assert_eq!(crd["server"], "apiextensions-apiserver");
    assert_eq!(crd["route"]["verb"], "delete");
}

#[test]
fn routes_match_falls_through_to_404() {
    let out = ok(&["routes", "--match", "GET", "/nope"]);
    assert!(out.contains("404 page not found"), "{out}");
    let m = json(&ok(&["routes", "--match", "GET", "/nope", "-o", "json"]));
    assert_eq!(m["outcome"], "page-not-found");
    assert_eq!(m["status"], 404);
    assert_eq!(m["passed"].as_array().map(Vec::len), Some(3));

    let out = ok(&["routes", "--match", "GET", "/apis/apps/v1/nothings"]);
    assert!(out.contains("404 NotFound Status"), "{out}");
    let m = json(&ok(&[
        "routes",
        "--match",
        "GET",
        "/apis/apps/v1/nothings",
        "-o",
        "json",
    ]));
    assert_eq!(m["outcome"], "not-found-status");
    // An unserved group version is the plain 404.
    let m = json(&ok(&[
        "routes",
        "--match",
        "GET",
        "/apis/apps/v9/nothings",
        "-o",
        "json",
    ]));
    assert_eq!(m["outcome"], "page-not-found");
    let m = json(&ok(&[
        "routes", "--match", "POST", "/healthz", "-o", "json",
    ]));
    assert_eq!(
        (m["outcome"].as_str(), m["status"].as_u64()),
        (Some("method-not-allowed"), Some(405))
    );
}

#[test]
fn routes_errors_are_one_line() {
    fails(&["routes", "-o", "xml"], 2, "--output");
    fails(&["routes", "--server", "nobody"], 2, "--server");
    fails(&["routes", "--match", "GET"], 2, "--match");
    fails(&["routes", "--match", "G/T", "/x"], 2, "HTTP method");
    fails(&["routes", "--match", "GET", "nope"], 2, "starting with /");
    fails(
        &["routes", "--kubeconfig", "/nonexistent/kubeconfig"],
        1,
        "/nonexistent/kubeconfig",
    );
    let (code, out, _) = kapi_out(&["routes", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Examples:") && out.contains("--match"),
        "{out}"
    );
}

const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

fn kubectl_stdin(k: &Kapi, args: &[&str], input: &str) {
    let mut child = k
        .kubectl()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A running kapi serving the Widget CRD.
fn kapi_with_widgets() -> Kapi {
    let k = Kapi::start(&[]);
    kubectl_stdin(&k, &["create", "-f", "-"], WIDGET_CRD);
    wait_until(
        "kubectl get widgets succeeds",
        Duration::from_secs(30),
        || run(k.kubectl().args(["get", "widgets"])).0,
    );
    k
}

#[test]
fn routes_of_a_running_kapi_include_its_crds() {
    let k = kapi_with_widgets();
    let kc = k.kubeconfig.to_string_lossy().into_owned();
    let out = ok(&[
        "routes",
        "--kubeconfig",
        &kc,
        "--server",
        "apiextensions-apiserver",
    ]);
    for (method, path, verb) in [
        (
            "GET",
            "/apis/example.com/v1/namespaces/{namespace}/widgets",
            "list",
        ),
        ("GET", "/apis/example.com/v1/widgets", "list"),
        (
            "POST",
            "/apis/example.com/v1/namespaces/{namespace}/widgets",
            "create",
        ),
        (
            "PUT",
            "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status",
            "update",
        ),
    ] {
        assert!(
            has_row(&out, &["apiextensions-apiserver", method, path, verb]),
            "{method} {path}:\n{out}"
        );
    }
    // The built-in routes are still there, and the CRD's are not offline.
    let all = ok(&["routes", "--kubeconfig", &kc]);
    assert!(has_row(
        &all,
        &[
            "kube-apiserver",
            "GET",
            "/api/v1/namespaces/{namespace}/pods",
            "list"
        ]
    ));
    assert!(!ok(&["routes"]).contains("example.com"));
    let m = json(&ok(&[
        "routes",
        "--kubeconfig",
        &kc,
        "--match",
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets/w/status",
        "-o",
        "json",
    ]));
    assert_eq!(m["server"], "apiextensions-apiserver");
    assert_eq!(m["route"]["subresource"], "status");
    assert_eq!(
        m["passed"],
        serde_json::json!(["aggregator", "kube-apiserver"])
    );
    // Offline, the same request is an unknown group: the plain 404.
    let m = json(&ok(&[
        "routes",
        "--match",
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets",
        "-o",
        "json",
    ]));
    assert_eq!(m["outcome"], "page-not-found");
}

// ---------------------------------------------------------------- etcd dump

fn item<'a>(dump: &'a Value, key: &str) -> &'a Value {
    dump["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["key"] == key))
        .unwrap_or_else(|| panic!("no {key} in {dump:#}"))
}

#[test]
fn dump_data_dir_of_a_serving_kapi() {
    let mut k = Kapi::start(&[]);
    assert!(
        run(k
            .kubectl()
            .args(["create", "configmap", "dumped", "--from-literal=color=blue"]))
        .0
    );
    let dir = k.data_dir.to_string_lossy().into_owned();
    let key = "/registry/configmaps/default/dumped";

    // While kapi serves (it holds the store's lock).
    let out = ok(&["etcd", "dump", "--data-dir", &dir]);
    let d = yaml(&out);
    assert!(d["revision"].as_i64().unwrap_or(0) > 0, "{out}");
    let cm = item(&d, key);
    assert_eq!(cm["resource"], "configmaps");
    assert_eq!(
        (cm["namespace"].as_str(), cm["name"].as_str()),
        (Some("default"), Some("dumped"))
    );
    assert_eq!(cm["encoding"], "json");
    assert_eq!(cm["value"]["kind"], "ConfigMap");
    assert_eq!(cm["value"]["data"]["color"], "blue");
    assert!(cm["createRevision"].as_i64().unwrap_or(0) > 0);
    assert_eq!(cm["version"], 1);
    // Built-in objects of other resources map back too.
    let svc = item(&d, "/registry/services/specs/default/kubernetes");
    assert_eq!(svc["resource"], "services");

    let j = json(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--resource",
        "cm",
        "-n",
        "default",
        "-o",
        "json",
    ]));
    let items = j["items"].as_array().expect("items");
    assert!(
        items
            .iter()
            .all(|i| i["resource"] == "configmaps" && i["namespace"] == "default"),
        "{j:#}"
    );
    assert_eq!(item(&j, key)["value"]["data"]["color"], "blue");

    let t = ok(&["etcd", "dump", "--data-dir", &dir, "-o", "table"]);
    assert_eq!(
        rows(&t)[0],
        [
            "KEY",
            "RESOURCE",
            "NAMESPACE",
            "NAME",
            "CREATE-REVISION",
            "MOD-REVISION",
            "VERSION",
            "SIZE"
        ]
    );
    assert!(
        has_row(&t, &[key, "configmaps", "default", "dumped"]),
        "{t}"
    );

    let keys = ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--keys-only",
        "--prefix",
        "/registry/configmaps/default/d",
    ]);
    assert_eq!(keys.lines().collect::<Vec<_>>(), [key]);
    let none = yaml(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--resource",
        "secrets",
        "--name",
        "nothing",
        "-n",
        "x",
    ]));
    assert_eq!(none["items"], serde_json::json!([]));

    // The serving kapi is unaffected: it still writes.
    assert!(run(k.kubectl().args(["create", "configmap", "after"])).0);

    // Killed (no clean close): the store is read from a recovered copy and
    // left as it is for the next `kapi serve`.
    let _ = k.child.kill();
    let _ = k.child.wait();
    let (code, out, err) = kapi_out(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--resource",
        "configmaps",
        "--keys-only",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .any(|l| l == "/registry/configmaps/default/after"),
        "{out}"
    );
    assert!(err.contains("copy"), "{err}");
}

/// A ConfigMap in upstream's storage encoding: `k8s\0` + runtime.Unknown.
fn protobuf_configmap(name: &str) -> Vec<u8> {
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message as _;
    let cm = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        data: [("from".to_string(), "upstream".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let u = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
        }),
        raw: Some(cm.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\x00".to_vec();
    out.extend(u.encode_to_vec());
    out
}

const JUNK: &[u8] = &[0x00, 0xff, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0x01];

fn check_foreign_values(d: &Value) {
    let pb = item(d, "/registry/configmaps/default/from-upstream");
    assert_eq!(pb["encoding"], "protobuf", "{pb:#}");
    assert_eq!(pb["value"]["kind"], "ConfigMap");
    assert_eq!(pb["value"]["apiVersion"], "v1");
    assert_eq!(pb["value"]["metadata"]["name"], "from-upstream");
    assert_eq!(pb["value"]["data"]["from"], "upstream");
    let junk = item(d, "/registry/configmaps/default/junk");
    assert_eq!(junk["encoding"], "undecodable");
    assert_eq!(junk["size"], JUNK.len());
    assert_eq!(junk["value"], "<undecodable: 9 bytes: 00ff1337deadbeef01>");
}

#[test]
fn dump_etcd_of_a_kapi_and_upstream_values() {
    let cluster = common::etcd::EtcdCluster::start(1);
    let endpoints = cluster.endpoints().join(",");
    let k = Kapi::start(&["--etcd-servers", &endpoints]);
    assert!(
        run(k
            .kubectl()
            .args(["create", "configmap", "in-etcd", "--from-literal=a=b"]))
        .0
    );
    let d = yaml(&ok(&[
        "etcd",
        "dump",
        "--etcd-servers",
        &endpoints,
        "--resource",
        "configmaps",
    ]));
    let cm = item(&d, "/registry/configmaps/default/in-etcd");
    assert_eq!(
        (cm["encoding"].as_str(), cm["value"]["data"]["a"].as_str()),
        (Some("json"), Some("b"))
    );
    drop(k);

    // Values as upstream writes them, and bytes nobody can read.
    let rt = runtime();
    rt.block_on(async {
        let cfg = kapi::storage::etcd::EtcdConfig {
            endpoints: cluster.endpoints(),
            ..Default::default()
        };
        let b = kapi::storage::etcd::Etcd::connect(&cfg, "/registry")
            .await
            .expect("etcd");
        b.create(
            "/registry/configmaps/default/from-upstream",
            protobuf_configmap("from-upstream").into(),
        )
        .await
        .expect("put protobuf");
        b.create("/registry/configmaps/default/junk", JUNK.to_vec().into())
            .await
            .expect("put junk");
    });
    let d = json(&ok(&[
        "etcd",
        "dump",
        "--etcd-servers",
        &endpoints,
        "-o",
        "json",
        "-n",
        "default",
    ]));
    check_foreign_values(&d);
    let t = ok(&[
        "etcd",
        "dump",
        "--etcd-servers",
        &endpoints,
        "-o",
        "table",
        "--resource",
        "configmaps",
    ]);
    assert!(
        has_row(
            &t,
            &[
                "/registry/configmaps/default/junk",
                "configmaps",
                "default",
                "junk"
            ]
        ),
        "{t}"
    );
    fails(
        &[
            "etcd",
            "dump",
            "--etcd-servers",
            &endpoints,
            "--revision",
            "100000",
        ],
        1,
        "--revision 100000",
    );
}

#[test]
fn dump_offline_store_pages_and_decodes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    let n = 1234;
    let rt = runtime();
    let first_rev = rt.block_on(async {
        let b = kapi::storage::embedded::Embedded::open(&store).expect("store");
        for i in 0..n {
            let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i:05}"), "namespace": "bulk"}});
            b.create(&format!("/registry/configmaps/bulk/cm-{i:05}"), cm.to_string().into())
                .await
                .expect("create");
        }
        let rev = b.current_revision().await.expect("rev");
        b.create("/registry/configmaps/default/from-upstream", protobuf_configmap("from-upstream").into())
            .await
            .expect("put protobuf");
        b.create("/registry/configmaps/default/junk", JUNK.to_vec().into())
            .await
            .expect("put junk");
        b.create("/registry/example.com/widgets/default/w1", br#"{"kind":"Widget"}"#.to_vec().into())
            .await
            .expect("put widget");
        b.close().await;
        rev
    });
    let dir = tmp.path().to_string_lossy().into_owned();
    let keys = ok(&["etcd", "dump", "--data-dir", &dir, "--keys-only"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert_eq!(keys.len(), n + 3);
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "keys come in key order across pages");

    let d = json(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "-o",
        "json",
        "-n",
        "default",
    ]));
    check_foreign_values(&d);
    let w = item(&d, "/registry/example.com/widgets/default/w1");
    assert_eq!(
        (w["group"].as_str(), w["resource"].as_str()),
        (Some("example.com"), Some("widgets"))
    );
    let w = yaml(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--resource",
        "widgets",
        "--group",
        "example.com",
    ]));
    assert_eq!(w["items"].as_array().map(Vec::len), Some(1));

    // A past revision, paged: only the bulk configmaps existed then.
    let rev = first_rev.to_string();
    let past = json(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--revision",
        &rev,
        "-o",
        "json",
        "--keys-only",
    ]));
    assert_eq!(past["revision"], first_rev);
    assert_eq!(past["items"].as_array().map(Vec::len), Some(n));
    assert!(past["items"][0].get("value").is_none());
    let one = yaml(&ok(&[
        "etcd",
        "dump",
        "--data-dir",
        &dir,
        "--resource",
        "configmaps",
        "-n",
        "bulk",
        "--name",
        "cm-01000",
    ]));
    assert_eq!(one["items"][0]["value"]["metadata"]["name"], "cm-01000");
    assert_eq!(one["items"].as_array().map(Vec::len), Some(1));
}

#[test]
fn dump_errors_are_one_line() {
    fails(
        &["etcd", "dump", "--data-dir", "/nonexistent/kapi"],
        1,
        "--data-dir /nonexistent/kapi",
    );
    let empty = tempfile::tempdir().expect("tmp");
    fails(
        &[
            "etcd",
            "dump",
            "--data-dir",
            &empty.path().to_string_lossy(),
        ],
        1,
        "no kapi store",
    );
    fails(&["etcd", "dump", "--bogus"], 2, "--bogus");
    fails(&["etcd", "dump", "--revision", "0"], 2, "--revision");
    fails(&["etcd", "dump", "-o", "xml"], 2, "--output");
    fails(&["etcd", "dump", "--resource", "widgets"], 2, "--group");
    fails(&["etcd", "dump", "--prefix", "registry"], 2, "--prefix");
    fails(
        &["etcd", "dump", "--etcd-servers", "nope"],
        2,
        "--etcd-servers",
    );
    fails(&["etcd", "dump", "--etcd-certfile", "c.pem"], 2, "--etcd");
    assert!(Path::new(common::kapi_bin()).exists());
}

/// A mistyped subcommand or flag gets clap's "did you mean", and a command
/// whose reader goes away (`kapi routes | head -1`) ends quietly instead of
/// panicking on the closed pipe.
#[test]
fn typos_get_suggestions_and_closed_pipes_end_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let out = Command::new(common::kapi_bin())
        .arg("servee")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tip:") && err.contains("'serve'"), "{err}");
    let out = Command::new(common::kapi_bin())
        .args(["serve", "--secure-prot", "1"])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'--secure-port'"), "{err}");

    let mut child = Command::new(common::kapi_bin())
        .arg("routes")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("read");
    // The reader is dropped here: the rest of the table meets a closed pipe.
    let status = child.wait().expect("wait");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
        .expect("stderr");
    assert!(first.starts_with("SERVER"), "{first}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = status;
}

/// A graceful stop (SIGTERM) closes the embedded store: `etcd dump` reads
/// it as it is, with no recovered copy, and finds the acknowledged write.
#[test]
fn a_graceful_stop_closes_the_store_cleanly() {
    let mut k = Kapi::start(&[]);
    let (ok, _, err) = run(k
        .kubectl()
        .args(["create", "configmap", "kept", "--from-literal=a=b"]));
    assert!(ok, "{err}");
    assert!(k.terminate().success());
    let out = Command::new(common::kapi_bin())
        .args(["etcd", "dump", "--data-dir"])
        .arg(&k.data_dir)
        .output()
        .expect("run kapi etcd dump");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not closed cleanly"), "{stderr}");
    assert!(
        stdout.contains("/registry/configmaps/default/kept"),
        "{stdout}"
    );
}

/// `kapi routes` with a resource or group nobody serves is an error in
/// kubectl's words (exit 1), not an empty table; known names still show.
#[test]
fn routes_of_an_unknown_resource_or_group_is_an_error() {
    for (flag, value, message) in [
        (
            "--resource",
            "nosuch",
            "kapi: the server doesn't have a resource type \"nosuch\"",
        ),
        (
            "--resource",
            "deploy.nosuch.io",
            "kapi: the server doesn't have a resource type \"deploy.nosuch.io\"",
        ),
        (
            "--group",
            "nosuch.io",
            "kapi: the server doesn't have an API group \"nosuch.io\"",
        ),
    ] {
        let out = Command::new(common::kapi_bin())
            .args(["routes", flag, value])
            .output()
            .expect("run kapi routes");
        assert_eq!(out.status.code(), Some(1), "{flag} {value}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), message);
        assert!(out.stdout.is_empty());
    }
    for (flag, value) in [
        ("--resource", "deploy"),
        ("--resource", "pods/log"),
        ("--group", "core"),
    ] {
        let out = Command::new(common::kapi_bin())
            .args(["routes", flag, value])
            .output()
            .expect("run kapi routes");
        assert!(out.status.success(), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&out.stdout).lines().count() > 1,
            "{flag} {value}"
        );
    }
}

/// A kubeconfig user with a client certificate but no key is an error in
/// client-go's words, not a silent anonymous request.
#[test]
fn half_a_client_certificate_is_an_error() {
    let k = Kapi::start(&[]);
    let text = std::fs::read_to_string(&k.kubeconfig).expect("kubeconfig");
    let no_key: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("client-key-data:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(no_key, text, "the admin kubeconfig carries client-key-data");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("no-key.kubeconfig");
    std::fs::write(&path, no_key).expect("write");
    let out = Command::new(common::kapi_bin())
        .args(["routes", "--kubeconfig"])
        .arg(&path)
        .output()
        .expect("run kapi routes");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("client-key-data or client-key must be specified for")
            && err.contains("to use the clientCert authentication method"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Runs kapi in `dir` with only the environment given (no inherited
/// KUBECONFIG or HOME): (exit code, stdout, stderr).
fn kapi_in(dir: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut c = kapi();
    c.current_dir(dir).env_remove("KUBECONFIG").env("HOME", dir);
    for (k, v) in env {
        c.env(k, v);
    }
    output(c.args(args))
}

/// Issue 23 point 8: every client command finds its server as kubectl
/// does: $KUBECONFIG's files merged (first to set a value wins, missing
/// ones skipped), --context, and a hint to start kapi when nothing names one.
#[test]
fn client_commands_find_the_server_as_kubectl_does() {
    let k = kapi_with_widgets();
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing names a server: one line that says how to get one, not an
    // error about a --kubeconfig the user never typed.
    for args in [
        &["trace-request", "GET", "/api"][..],
        &["apiservice", "list"],
        &["routes", "--context", "kapi"],
    ] {
        let (code, _, err) = kapi_in(dir.path(), &[], args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains("kapi serve") && !err.contains("--kubeconfig .kapi"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // Offline routes need no server.
    let (code, out, _) = kapi_in(dir.path(), &[], &["routes", "--resource", "pods"]);
    assert_eq!(code, 0);
    assert!(out.contains("/api/v1/namespaces/{namespace}/pods"));
    // A first file whose current context points at a dead server, then a
    // missing file, then kapi's: merged, the first current-context wins.
    let dead = dir.path().join("dead.kubeconfig");
    std::fs::write(
        &dead,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster: {server: \"https://127.0.0.1:1\"}\ncontexts:\n- name: dead\n  context: {cluster: dead, user: nobody}\nusers:\n- name: nobody\n  user: {token: abc}\ncurrent-context: dead\n",
    )
    .expect("write");
    let list = std::env::join_paths([
        dead.clone(),
        dir.path().join("missing.kubeconfig"),
        k.kubeconfig.clone(),
    ])
    .expect("join");
    let list = list.to_string_lossy().into_owned();
    let env = [("KUBECONFIG", list.as_str())];
    let (code, _, err) = kapi_in(
        dir.path(),
        &env,
        &["routes", "--server", "apiextensions-apiserver"],
    );
    assert_eq!(code, 1, "$KUBECONFIG is honoured by routes: {err}");
    assert!(
        err.contains("https://127.0.0.1:1") && err.contains("cannot connect"),
        "{err}"
    );
    // --context picks kapi's context out of the merged files: the routes
    // are the running server's, with its CRD.
    let context = std::fs::read_to_string(&k.kubeconfig)
        .expect("kubeconfig")
        .lines()
        .find_map(|l| {
            l.strip_prefix("current-context:")
                .map(|c| c.trim().trim_matches('"').to_string())
        })
        .expect("current-context");
    let (code, out, err) = kapi_in(
        dir.path(),
        &env,
        &[
            "routes",
            "--context",
            &context,
            "--server",
            "apiextensions-apiserver",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("/apis/example.com/v1/namespaces/{namespace}/widgets"),
        "{out}"
    );
    let (code, out, err) = kapi_in(
        dir.path(),
        &env,
        &["apiservice", "list", "--context", &context, "-o", "json"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("v1.example.com"), "{out}");
    let (code, out, err) = kapi_in(
        dir.path(),
        &env,
        &[
            "trace-request",
            "GET",
            "/apis/example.com/v1/namespaces/default/widgets",
            "--context",
            &context,
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("-> 200"), "{out}");
    // An unknown context is kubectl's error.
    let (code, _, err) = kapi_in(dir.path(), &env, &["routes", "--context", "nosuch"]);
    assert_eq!(code, 1);
    assert!(err.contains("context \"nosuch\" does not exist"), "{err}");
    // --offline keeps the built-in catalog whatever $KUBECONFIG says.
    let (code, out, _) = kapi_in(
        dir.path(),
        &env,
        &["routes", "--offline", "--server", "apiextensions-apiserver"],
    );
    assert_eq!(code, 0);
    assert!(!out.contains("example.com"), "{out}");
}
