//! One route table: what aggregated discovery advertises, what `kapi routes
//! -o json` prints (asked of the running server), and the route the server
//! itself takes for a request (the trace's routing stage) are the same.
//!
//! The routes a resource should have are derived here, independently of
//! kapi's code, from discovery's scope and verbs with upstream's URL layout
//! (k8s.io/apiserver/pkg/endpoints/installer.go). Then every printed route
//! is sent once, traced, in a form that changes nothing (dry run, a name
//! that does not exist, a selector that matches nothing), and the route the
//! server records must be the printed one.

mod common;

use std::collections::BTreeSet;

use base64::Engine as _;
use common::{run, runtime, Kapi};
use serde_json::Value;

const DISCOVERY: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.walk.example.com}
spec:
  group: walk.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
"#;

/// (method, path template, verb) as `kapi routes` prints a route.
type Row = (String, String, String);

fn method_of(verb: &str) -> Option<&'static str> {
    Some(match verb {
        "get" | "list" | "watch" => "GET",
        "create" => "POST",
        "update" => "PUT",
        "patch" => "PATCH",
        "delete" | "deletecollection" => "DELETE",
        _ => return None,
    })
}

/// upstream's installer layout for one resource of aggregated discovery.
fn expected_rows(base: &str, r: &Value) -> BTreeSet<Row> {
    let plural = r["resource"].as_str().unwrap_or_default();
    let namespaced = r["scope"] == "Namespaced";
    let verbs: Vec<&str> = r["verbs"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let has = |v: &str| verbs.contains(&v);
    let (collection, watch_collection) = if namespaced {
        (
            format!("{base}/namespaces/{{namespace}}/{plural}"),
            format!("{base}/watch/namespaces/{{namespace}}/{plural}"),
        )
    } else {
        (format!("{base}/{plural}"), format!("{base}/watch/{plural}"))
    };
    let item = format!("{collection}/{{name}}");
    let mut out = BTreeSet::new();
    let mut add = |m: &str, p: String, v: &str| {
        out.insert((m.to_string(), p, v.to_string()));
    };
    for v in ["list", "create", "deletecollection"] {
        if has(v) {
            add(method_of(v).unwrap_or_default(), collection.clone(), v);
        }
    }
    if has("watch") {
        add("GET", format!("{collection}?watch=true"), "watch");
        add("GET", watch_collection.clone(), "watch");
        add("GET", format!("{watch_collection}/{{name}}"), "watch");
    }
    if namespaced {
        if has("list") {
            add("GET", format!("{base}/{plural}"), "list");
        }
        if has("watch") {
            add("GET", format!("{base}/{plural}?watch=true"), "watch");
            add("GET", format!("{base}/watch/{plural}"), "watch");
        }
    }
    for v in ["get", "update", "patch", "delete"] {
        if has(v) {
            add(method_of(v).unwrap_or_default(), item.clone(), v);
        }
    }
    for s in r["subresources"].as_array().into_iter().flatten() {
        let name = s["subresource"].as_str().unwrap_or_default();
        let path = format!("{item}/{name}");
        let mut paths = vec![path.clone()];
        if name == "proxy" {
            paths.push(format!("{path}/{{path}}"));
        }
        for p in paths {
            for v in s["verbs"].as_array().into_iter().flatten() {
                let v = v.as_str().unwrap_or_default();
                if let Some(m) = method_of(v) {
                    add(m, p.clone(), v);
                }
            }
        }
    }
    out
}

/// Every resource route aggregated discovery implies, keyed by resource.
async fn from_discovery(c: &reqwest::Client, url: &str) -> BTreeSet<Row> {
    let mut out = BTreeSet::new();
    for root in ["/api", "/apis"] {
        let doc: Value = c
            .get(format!("{url}{root}"))
            .header("Accept", DISCOVERY)
            .send()
            .await
            .expect("discovery")
            .json()
            .await
            .expect("discovery json");
        for g in doc["items"].as_array().into_iter().flatten() {
            let group = g["metadata"]["name"].as_str().unwrap_or_default();
            for v in g["versions"].as_array().into_iter().flatten() {
                let version = v["version"].as_str().unwrap_or_default();
                let base = if group.is_empty() {
                    format!("/api/{version}")
                } else {
                    format!("/apis/{group}/{version}")
                };
                for r in v["resources"].as_array().into_iter().flatten() {
                    out.extend(expected_rows(&base, r));
                }
            }
        }
    }
    out
}

/// A concrete request for a route template that changes nothing.
fn concrete(route: &Value) -> (reqwest::Method, String) {
    let method = route["method"].as_str().unwrap_or_default();
    let verb = route["verb"].as_str().unwrap_or_default();
    let mut path = route["path"]
        .as_str()
        .unwrap_or_default()
        .replace("{namespace}", "default")
        .replace("{name}", "walk-none")
        .replace("{path}", "x");
    let sep = |p: &str| if p.contains('?') { '&' } else { '?' };
    match verb {
        "watch" => path.push_str(&format!("{}timeoutSeconds=1", sep(&path))),
        "deletecollection" => path.push_str(&format!(
            "{}dryRun=All&labelSelector=walk%3Dnothing",
            sep(&path)
        )),
        "create" | "update" | "patch" | "delete" => {
            path.push_str(&format!("{}dryRun=All", sep(&path)))
        }
        _ => {}
    }
    (
        reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
        path,
    )
}

#[test]
fn discovery_kapi_routes_and_the_served_route_are_one_table() {
    let k = Kapi::start(&[]);
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], CRD);
    assert!(ok, "{err}");
    let (ok, _, err) = run(k.kubectl().args([
        "wait",
        "--for=condition=Established",
        "crd/crontabs.walk.example.com",
        "--timeout=20s",
    ]));
    assert!(ok, "{err}");

    // `kapi routes` asks the running server (its discovery, with the CRD).
    let kubeconfig = k.kubeconfig.to_string_lossy().to_string();
    let (ok, out, err) = run(std::process::Command::new(common::kapi_bin()).args([
        "routes",
        "--kubeconfig",
        &kubeconfig,
        "-o",
        "json",
    ]));
    assert!(ok, "{err}");
    let printed: Vec<Value> = serde_json::from_str(&out).expect("routes json");
    let resource_routes: Vec<&Value> = printed
        .iter()
        .filter(|r| r["handler"] != "non-resource")
        .collect();
    let printed_rows: BTreeSet<Row> = resource_routes
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap_or_default().to_string(),
                r["path"].as_str().unwrap_or_default().to_string(),
                r["verb"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        printed_rows
            .iter()
            .any(|r| r.1.contains("walk.example.com")),
        "the CRD's routes are printed"
    );

    let rt = runtime();
    let c = k.admin_client();
    let advertised = rt.block_on(from_discovery(&c, &k.url));
    let missing: Vec<&Row> = advertised.difference(&printed_rows).collect();
    let extra: Vec<&Row> = printed_rows.difference(&advertised).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "discovery implies routes kapi routes does not print: {missing:#?}\n\
         kapi routes prints routes discovery does not imply: {extra:#?}"
    );

    // Every printed route, sent: the server takes that very route.
    let mut wrong = Vec::new();
    rt.block_on(async {
        for route in &resource_routes {
            let (method, path) = concrete(route);
            let mut req = c
                .request(method.clone(), format!("{}{path}", k.url))
                .header("x-kapi-trace", "1");
            if matches!(method.as_str(), "POST" | "PUT" | "PATCH") {
                let ct = if method == reqwest::Method::PATCH {
                    "application/merge-patch+json"
                } else {
                    "application/json"
                };
                req = req.header("Content-Type", ct).body("{}");
            }
            let resp = req.send().await.expect("send");
            let status = resp.status().as_u16();
            let header = resp
                .headers()
                .get("kapi-trace")
                .and_then(|v| v.to_str().ok())
                .map(String::from);
            drop(resp);
            let report: Value = header
                .and_then(|h| base64::engine::general_purpose::STANDARD.decode(h).ok())
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            let routing = report["stages"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == "routing")
                .cloned()
                .unwrap_or(Value::Null);
            let d = &routing["detail"];
            let same = routing["outcome"] == "ok"
                && d["route"] == route["path"]
                && d["verb"] == route["verb"]
                && d["method"] == route["method"]
                && d["server"] == route["server"];
            if !same {
                wrong.push(format!(
                    "{method} {path} -> {status}: printed {} {} {} on {}, traced {routing}",
                    route["method"], route["path"], route["verb"], route["server"]
                ));
            }
        }
    });
    assert!(
        resource_routes.len() > 500,
        "only {} resource routes printed",
        resource_routes.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} routes were taken differently than printed:\n{}",
        wrong.len(),
        resource_routes.len(),
        wrong.join("\n")
    );
}
