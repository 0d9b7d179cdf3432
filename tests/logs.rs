//! Issue 23 point 7: logs that help. Colour only on a terminal, an etcd
//! outage in a few lines that name the endpoint, upstream's request log at
//! `-v 3`, and `--logging-format=json` as component-base writes it.

mod common;

use std::time::{Duration, Instant};

use common::Kapi;

/// Every stderr line kapi wrote so far (waiting `quiet` for more).
fn drain(k: &Kapi, quiet: Duration) -> Vec<String> {
    let mut lines = Vec::new();
    while let Ok(line) = k.stderr_lines.recv_timeout(quiet) {
        lines.push(line);
    }
    lines
}

fn kubectl_get_namespaces(k: &Kapi) {
    let (ok, out, err) = common::run(k.kubectl().args(["get", "namespaces", "-o", "name"]));
    assert!(ok && out.contains("namespace/default"), "{out} {err}");
}

#[test]
fn logs_into_a_pipe_carry_no_colour_and_no_request_lines_by_default() {
    let k = Kapi::start(&[]);
    kubectl_get_namespaces(&k);
    let lines = drain(&k, Duration::from_millis(500));
    assert!(!lines.is_empty());
    for l in &lines {
        assert!(!l.contains('\u{1b}'), "ANSI escape in a piped log: {l:?}");
        assert!(!l.contains(" HTTP "), "request log at -v 0: {l}");
    }
}

#[test]
fn v3_logs_each_request_as_upstreams_httplog() {
    let k = Kapi::start(&["-v", "3"]);
    kubectl_get_namespaces(&k);
    let lines = drain(&k, Duration::from_millis(500));
    let line = lines
        .iter()
        .find(|l| l.contains("HTTP verb=\"LIST\" URI=\"/api/v1/namespaces?limit=500\""))
        .unwrap_or_else(|| panic!("no request line for kubectl's list:\n{}", lines.join("\n")));
    for key in [
        "latency=",
        "userAgent=\"kubectl",
        "audit-ID=\"",
        "srcIP=\"127.0.0.1:",
        "resp=200",
    ] {
        assert!(line.contains(key), "{key} missing: {line}");
    }
    // The audit ID logged is the one the client was given.
    let id = line
        .split("audit-ID=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("audit id");
    assert_eq!(id.len(), 36, "{line}");
    // Libraries' frame logs are not shown at -v 3.
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("rustls") || l.contains("h2::")),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn logging_format_json_writes_one_object_per_line() {
    let k = Kapi::start(&["--logging-format", "json", "-v", "3"]);
    kubectl_get_namespaces(&k);
    let lines = drain(&k, Duration::from_millis(500));
    let mut saw_request = false;
    for l in &lines {
        let v: serde_json::Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(v["ts"].is_f64() && v["msg"].is_string(), "{l}");
        let after_ts = l.strip_prefix("{\"ts\":").and_then(|r| r.split_once(','));
        assert!(
            after_ts.is_some_and(|(_, r)| r.starts_with("\"caller\":")),
            "component-base's key order (ts, caller, msg): {l}"
        );
        if v["msg"] == "HTTP" && v["verb"] == "LIST" {
            saw_request = true;
            assert_eq!(v["URI"], "/api/v1/namespaces?limit=500", "{l}");
            assert_eq!(v["resp"], 200, "{l}");
            assert!(
                v["userAgent"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("kubectl")),
                "{l}"
            );
        }
    }
    assert!(saw_request, "{}", lines.join("\n"));
    // An unknown format is refused in component-base's words.
    let out = std::process::Command::new(common::kapi_bin())
        .args(["--logging-format", "xml", "serve"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--logging-format"));
    let out = std::process::Command::new(common::kapi_bin())
        .args(["kube-apiserver", "--logging-format=xml"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: format: Unsupported value: \"xml\": supported values: \"json\", \"text\""
    );
}

/// An etcd outage was 500 warning lines in 25 s, one per watch cache per
/// retry, none naming the etcd. Now repeats are held back with a count.
#[test]
fn an_etcd_outage_is_a_few_lines_that_name_the_endpoint() {
    let mut cluster = common::etcd::EtcdCluster::start(1);
    let endpoint = cluster.endpoints()[0].clone();
    let k = Kapi::start(&["--etcd-servers", &endpoint]);
    kubectl_get_namespaces(&k);
    drain(&k, Duration::from_millis(200));
    cluster.members[0].stop();
    let t0 = Instant::now();
    let mut lines = Vec::new();
    while t0.elapsed() < Duration::from_secs(25) {
        lines.extend(drain(&k, Duration::from_millis(500)));
    }
    let warnings: Vec<&String> = lines.iter().filter(|l| l.contains("WARN")).collect();
    assert!(!warnings.is_empty(), "the outage is not logged at all");
    // Each repeating warning at most once per 10 s window (3 windows in
    // 25 s) plus its first line; a handful of kinds of warnings.
    assert!(
        warnings.len() <= 16,
        "{} warning lines in 25 s:\n{}",
        warnings.len(),
        lines.join("\n")
    );
    assert!(
        warnings.iter().any(|l| l.contains("repeated=")),
        "held-back warnings are counted:\n{}",
        lines.join("\n")
    );
    for w in &warnings {
        assert!(
            w.contains(&format!("etcd {endpoint}")),
            "the endpoint is not named: {w}"
        );
        for shape in ["Error(", "Some(", "{ kind:", "tonic::"] {
            assert!(!w.contains(shape), "Debug shape {shape} in {w}");
        }
    }
}

/// `PUT /debug/flags/v` changes the running server's verbosity, with
/// upstream's answers (component-base's GlogSetter behind routes.DebugFlags).
#[test]
fn debug_flags_v_changes_the_verbosity_of_a_running_server() {
    let k = Kapi::start(&[]);
    let admin = k.admin_client();
    let url = format!("{}/debug/flags/v", k.url);
    common::runtime().block_on(async {
        let put = |body: &'static str| admin.put(&url).body(body).send();
        // Nothing is logged per request at -v 0.
        kubectl_get_namespaces(&k);
        let before = drain(&k, Duration::from_millis(300));
        assert!(!before.iter().any(|l| l.contains(" HTTP ")), "{before:?}");

        let r = put("3").await.expect("put");
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "text/plain");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert_eq!(
            r.text().await.expect("body"),
            "successfully set klog.logging.verbosity to 3\n"
        );
        kubectl_get_namespaces(&k);
        let after = drain(&k, Duration::from_millis(500));
        assert!(
            after
                .iter()
                .any(|l| l.contains("HTTP verb=\"LIST\" URI=\"/api/v1/namespaces?limit=500\"")),
            "no request line after PUT 3:\n{}",
            after.join("\n")
        );

        // Back to 0: quiet again.
        assert_eq!(put("0").await.expect("put").status(), 200);
        kubectl_get_namespaces(&k);
        let quiet = drain(&k, Duration::from_millis(300));
        assert!(!quiet.iter().any(|l| l.contains(" HTTP ")), "{quiet:?}");

        // klog's parse errors, word for word; a newline is not trimmed.
        for (body, text) in [
            ("x", "failed set klog.logging.verbosity x: strconv.ParseUint: parsing \"x\": invalid syntax\n"),
            ("3\n", "failed set klog.logging.verbosity 3\n: strconv.ParseUint: parsing \"3\\n\": invalid syntax\n"),
            ("-1", "failed set klog.logging.verbosity -1: strconv.ParseUint: parsing \"-1\": invalid syntax\n"),
        ] {
            let r = put(body).await.expect("put");
            assert_eq!(r.status(), 400, "{body:?}");
            assert_eq!(r.text().await.expect("body"), text);
        }
        // Any other method: 406.
        let r = admin.get(&url).send().await.expect("get");
        assert_eq!(r.status(), 406);
        assert_eq!(r.text().await.expect("body"), "unsupported http method\n");
        // The index lists the flag.
        let r = admin
            .get(format!("{}/debug/flags", k.url))
            .send()
            .await
            .expect("index");
        assert_eq!(r.status(), 200);
        assert!(r.text().await.expect("body").contains("<tr>v<br>"));
        // Not in the / index (upstream's UnlistedHandle).
        let root: serde_json::Value = admin
            .get(format!("{}/", k.url))
            .send()
            .await
            .expect("root")
            .json()
            .await
            .expect("json");
        assert!(
            !root["paths"].to_string().contains("/debug"),
            "{root}"
        );
        // Anonymous requests may not change it.
        let r = k
            .anonymous_client()
            .put(&url)
            .body("9")
            .send()
            .await
            .expect("anonymous put");
        assert_eq!(r.status(), 403);
    });
}

#[test]
fn without_profiling_there_is_no_debug_flags() {
    let k = Kapi::start(&["--profiling=false"]);
    let r = common::runtime().block_on(async {
        k.admin_client()
            .put(format!("{}/debug/flags/v", k.url))
            .body("3")
            .send()
            .await
            .expect("put")
    });
    assert_eq!(r.status(), 404);
}
