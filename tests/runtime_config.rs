//! Issue 24: `--runtime-config` switches built-in group versions and single
//! resources off (and GA ones back on after `api/all=false`), as upstream's
//! ResourceConfig: what is off is absent from discovery and answers 404.

mod common;

use std::process::Command;

use common::{kapi_bin, run, Kapi};
use serde_json::Value;

async fn get(k: &Kapi, path: &str) -> (u16, String) {
    let r = k
        .admin_client()
        .get(format!("{}{path}", k.url))
        .send()
        .await
        .expect("get");
    (r.status().as_u16(), r.text().await.expect("body"))
}

fn api_resources(k: &Kapi) -> String {
    let (ok, out, err) = run(k.kubectl().args(["api-resources", "-o", "name"]));
    assert!(ok, "{err}");
    out
}

#[test]
fn a_disabled_group_version_and_resource_are_not_served() {
    let k = Kapi::start(&["--runtime-config=batch/v1=false,apps/v1/daemonsets=false"]);
    common::runtime().block_on(async {
        let (status, body) = get(&k, "/apis").await;
        assert_eq!(status, 200);
        let groups: Value = serde_json::from_str(&body).expect("json");
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert!(!names.contains(&"batch"), "{names:?}");
        assert!(names.contains(&"apps"), "{names:?}");
        // The group's paths fall through to the chain's end.
        assert_eq!(
            get(&k, "/apis/batch/v1").await,
            (404, "404 page not found\n".to_string())
        );
        assert_eq!(
            get(&k, "/apis/batch/v1/namespaces/default/jobs").await.0,
            404
        );
        // The resource is gone from its group version, the rest is served.
        let (status, body) = get(&k, "/apis/apps/v1").await;
        assert_eq!(status, 200);
        let list: Value = serde_json::from_str(&body).expect("json");
        let plurals: Vec<&str> = list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(plurals.contains(&"deployments"), "{plurals:?}");
        assert!(
            !plurals.iter().any(|p| p.starts_with("daemonsets")),
            "{plurals:?}"
        );
        assert_eq!(
            get(&k, "/apis/apps/v1/namespaces/default/daemonsets")
                .await
                .0,
            404
        );
        assert_eq!(
            get(&k, "/apis/apps/v1/namespaces/default/deployments")
                .await
                .0,
            200
        );
    });
    let names = api_resources(&k);
    assert!(
        !names
            .lines()
            .any(|l| l == "jobs.batch" || l == "daemonsets.apps"),
        "{names}"
    );
    assert!(names.lines().any(|l| l == "deployments.apps"), "{names}");
}

/// With `api/all=false` only what is named back is served, yet kapi's own
/// bootstrap and controllers, which need RBAC, PriorityClasses, IPAddresses
/// and APIServices in storage, still work: the server gets ready.
#[test]
fn api_all_false_serves_only_what_is_named_back() {
    let k = Kapi::start(&[
        "--runtime-config",
        "api/all=false,v1=true,flowcontrol.apiserver.k8s.io/v1=true",
    ]);
    let names = api_resources(&k);
    assert!(names.lines().any(|l| l == "pods"), "{names}");
    assert!(
        names
            .lines()
            .all(|l| !l.contains('.') || l.ends_with(".flowcontrol.apiserver.k8s.io")),
        "{names}"
    );
    common::runtime().block_on(async {
        let mut ready = (0, String::new());
        for _ in 0..100 {
            ready = get(&k, "/readyz").await;
            if ready.0 == 200 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(ready, (200, "ok".to_string()));
        assert_eq!(
            get(&k, "/apis/scheduling.k8s.io/v1/priorityclasses")
                .await
                .0,
            404
        );
    });
    // The bootstrap controller allocated the kubernetes Service its IP.
    let (ok, out, err) = run(k.kubectl().args([
        "get",
        "service",
        "kubernetes",
        "-o",
        "jsonpath={.spec.clusterIP}",
    ]));
    assert!(ok && out.starts_with("10.0.0."), "{out} {err}");
    let (ok, out, err) = run(k.kubectl().args(["get", "namespaces", "-o", "name"]));
    assert!(ok && out.contains("namespace/default"), "{err}");
}

fn refused(runtime_config: &str) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new(kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(tmp.path())
        .arg(format!("--runtime-config={runtime_config}"))
        .output()
        .expect("run kapi");
    assert!(!out.status.success(), "kapi started with {runtime_config}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn wrong_runtime_configs_are_refused_with_upstreams_words() {
    for (value, want) in [
        ("foo", "runtime-config invalid key foo"),
        ("foo.example.com/v1=true", "unknown api groups foo.example.com"),
        ("apps/v9=true", "group version apps/v9 that has not been registered"),
        (
            "apps/v1=yes",
            "invalid value of apps/v1: yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax",
        ),
        (
            "api/all=false",
            "--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true",
        ),
        ("resource.k8s.io/v1beta1=true", "resource.k8s.io/v1beta1, which kapi does not serve"),
    ] {
        let err = refused(value);
        assert!(err.contains(want), "{value}: {err}");
    }
}
