//! `--feature-gates` toggles what kapi implements both ways: WatchList
//! (sendInitialEvents), InPlacePodVerticalScaling (pods/resize) and
//! RemoteRequestHeaderUID (`--requestheader-uid-headers`); other gates set
//! away from their default are accepted with a warning saying kapi keeps
//! v1.34's default, and a gate upstream refuses stops the start.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{kapi_bin, run, runtime, Kapi};
use serde_json::Value;

/// What a server with the given flags says about pods/resize and a
/// watch-list request: (resize in discovery, resize PATCH status, watch
/// status, watch body).
fn probe(k: &Kapi) -> (bool, u16, u16, String) {
    let c = k.admin_client();
    runtime().block_on(async {
        let v1: Value = c
            .get(format!("{}/api/v1", k.url))
            .send()
            .await
            .expect("discovery")
            .json()
            .await
            .expect("json");
        let listed = v1["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .any(|r| r["name"] == "pods/resize");
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}}}]}
        });
        let created = c
            .post(format!("{}/api/v1/namespaces/default/pods", k.url))
            .json(&pod)
            .send()
            .await
            .expect("create");
        assert_eq!(created.status(), 201);
        let resize = c
            .patch(format!(
                "{}/api/v1/namespaces/default/pods/p/resize",
                k.url
            ))
            .header("Content-Type", "application/strategic-merge-patch+json")
            .body(r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"200m"}}}]}}"#)
            .send()
            .await
            .expect("resize")
            .status()
            .as_u16();
        let watch = c
            .get(format!(
                "{}/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1",
                k.url
            ))
            .send()
            .await
            .expect("watch");
        let code = watch.status().as_u16();
        let body = watch.text().await.unwrap_or_default();
        (listed, resize, code, body)
    })
}

#[test]
fn gates_kapi_implements_switch_their_behaviour_off_and_on() {
    let defaults = Kapi::start(&[]);
    let (listed, resize, watch, body) = probe(&defaults);
    assert!(listed, "pods/resize is in v1.34's discovery");
    assert_eq!(resize, 200);
    assert_eq!(watch, 200, "{body}");
    drop(defaults);

    let off = Kapi::start(&["--feature-gates=InPlacePodVerticalScaling=false,WatchList=false"]);
    let (listed, resize, watch, body) = probe(&off);
    assert!(!listed, "pods/resize leaves discovery");
    assert_eq!(resize, 404);
    assert_eq!(watch, 422, "{body}");
    let status: Value = serde_json::from_str(&body).expect("Status");
    assert_eq!(status["reason"], "Invalid");
    let causes = status["details"]["causes"].as_array().expect("causes");
    assert!(
        causes.iter().any(|c| c["field"] == "sendInitialEvents"
            && c["message"]
                .as_str()
                .unwrap_or("")
                .contains("sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")),
        "{body}"
    );
}

#[test]
fn an_untoggled_gate_is_accepted_with_a_warning() {
    let k = Kapi::start(&["--feature-gates=StorageVersionAPI=true"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut log = String::new();
    while !log.contains("StorageVersionAPI") && Instant::now() < deadline {
        if let Ok(line) = k.stderr_lines.recv_timeout(Duration::from_millis(200)) {
            log.push_str(&line);
            log.push('\n');
        }
    }
    assert!(
        log.contains(
            "feature gate StorageVersionAPI=true: kapi does not implement this gate and keeps v1.34's default (false)"
        ),
        "{log}"
    );
}

#[test]
fn gates_upstream_refuses_stop_the_start() {
    let dir = tempfile::tempdir().expect("tmp");
    let serve = |args: &[&str]| {
        run(Command::new(kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(dir.path())
            .args(args))
    };
    let (ok, _, err) = serve(&["--feature-gates=NoSuchGate=true"]);
    assert!(!ok);
    assert!(
        err.contains("invalid value for --feature-gates: unrecognized feature gate: NoSuchGate"),
        "{err}"
    );
    let (ok, _, err) = serve(&[
        "--feature-gates=RemoteRequestHeaderUID=false",
        "--requestheader-uid-headers=X-Remote-Uid",
    ]);
    assert!(!ok);
    assert!(
        err.contains(
            r#"--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled"#
        ),
        "{err}"
    );
}
