//! `kapi serve`: the chain over HTTPS, checked with kubectl and raw HTTPS.

mod common;

use std::process::Command;

use common::{run, runtime, Kapi};

#[test]
fn kubectl_reads_readyz_and_version() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = run(k.kubectl().args(["get", "--raw", "/readyz"]));
    assert!(ok, "{err}");
    assert_eq!(out, "ok");
    let (ok, out, err) = run(k.kubectl().args(["get", "--raw", "/readyz?verbose"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("[+]ping ok")
            && out.contains("[+]shutdown ok")
            && out.ends_with("readyz check passed\n"),
        "{out}"
    );
    let (ok, out, err) = run(k.kubectl().args(["version", "-o", "json"]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["serverVersion"]["major"], "1");
    assert_eq!(v["serverVersion"]["minor"], "34");
    assert!(v["serverVersion"]["gitVersion"]
        .as_str()
        .unwrap_or("")
        .starts_with("v1.34."));
}

#[test]
fn health_endpoints_as_upstream() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        for path in [
            "/healthz",
            "/livez",
            "/readyz",
            "/livez/ping",
            "/readyz/shutdown",
        ] {
            let r = c.get(format!("{}{path}", k.url)).send().await.expect(path);
            if r.status() != 200 {
                let verbose = c
                    .get(format!("{}{path}?verbose", k.url))
                    .send()
                    .await
                    .expect(path);
                panic!(
                    "{path}: {}\n{}",
                    r.status(),
                    verbose.text().await.unwrap_or_default()
                );
            }
            assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
            assert_eq!(r.headers()["cache-control"], "no-cache, private");
            assert_eq!(r.text().await.expect("body"), "ok", "{path}");
        }
        let r = c
            .get(format!("{}/readyz?verbose&exclude=ping", k.url))
            .send()
            .await
            .expect("exclude");
        assert_eq!(
            r.text().await.expect("body").lines().next(),
            Some("[+]ping excluded: ok")
        );
        let r = c
            .get(format!("{}/readyz/nope", k.url))
            .send()
            .await
            .expect("unknown check");
        assert_eq!(r.status(), 404);
    });
}

#[test]
fn serves_http2_and_http1() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!("{}/version", k.url))
            .send()
            .await
            .expect("h2");
        assert_eq!(r.version(), reqwest::Version::HTTP_2);
        let ca = reqwest::Certificate::from_pem(k.pki("ca.crt").as_bytes()).expect("ca");
        let h1 = reqwest::Client::builder()
            .tls_certs_only([ca])
            .http1_only()
            .build()
            .expect("client");
        let r = h1
            .get(format!("{}/version", k.url))
            .send()
            .await
            .expect("h1");
        assert_eq!(r.version(), reqwest::Version::HTTP_11);
        assert_eq!(r.status(), 200);
    });
}

#[test]
fn metrics_count_requests() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.admin_client();
        for _ in 0..7 {
            let r = c
                .get(format!("{}/version", k.url))
                .send()
                .await
                .expect("version");
            assert_eq!(r.status(), 200);
        }
        let r = c.get(format!("{}/nope", k.url)).send().await.expect("nope");
        assert_eq!(r.status(), 404);
        let text = c
            .get(format!("{}/metrics", k.url))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        let line = text
            .lines()
            .find(|l| {
                l.starts_with("apiserver_request_total{code=\"200\"")
                    && l.contains("subresource=\"/version\"")
            })
            .unwrap_or_else(|| panic!("no /version counter in:\n{text}"));
        assert!(line.contains("verb=\"GET\""), "{line}");
        assert!(line.ends_with(" 7"), "{line}");
        assert!(
            text.contains("apiserver_request_total{code=\"404\""),
            "{text}"
        );
        assert!(text.contains("# TYPE apiserver_request_duration_seconds histogram"));
        assert!(
            text.contains("apiserver_request_duration_seconds_count{")
                && text.contains("subresource=\"/version\",verb=\"GET\",version=\"\"} 7")
        );
    });
}

#[test]
fn unknown_path_is_plain_404() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!("{}/no/such/path", k.url))
            .send()
            .await
            .expect("req");
        assert_eq!(r.status(), 404);
        assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(r.text().await.expect("body"), "404 page not found\n");
    });
}

#[test]
fn anonymous_requests_see_only_health_and_version() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let c = k.anonymous_client();
        for path in ["/readyz", "/livez", "/healthz", "/version"] {
            let r = c.get(format!("{}{path}", k.url)).send().await.expect(path);
            assert_eq!(r.status(), 200, "{path}");
        }
        let r = c
            .get(format!("{}/metrics", k.url))
            .send()
            .await
            .expect("metrics");
        assert_eq!(r.status(), 403);
        let s: serde_json::Value = r.json().await.expect("status");
        assert_eq!(s["kind"], "Status");
        assert_eq!(s["reason"], "Forbidden");
        assert_eq!(s["code"], 403);
        assert_eq!(
            s["message"],
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
        );
    });
}

#[test]
fn without_anonymous_auth_no_credentials_is_401() {
    let k = Kapi::start(&["--anonymous-auth=false"]);
    runtime().block_on(async {
        let r = k
            .anonymous_client()
            .get(format!("{}/readyz", k.url))
            .send()
            .await
            .expect("req");
        assert_eq!(r.status(), 401);
        let s: serde_json::Value = r.json().await.expect("status");
        assert_eq!(
            s,
            serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401
            })
        );
    });
}

#[test]
fn client_certificate_from_another_ca_is_refused() {
    let k = Kapi::start(&[]);
    // A CA and client certificate kapi has never seen, with a powerful group.
    let other = tempfile::tempdir().expect("tmp");
    let foreign = Kapi::start_in(other.path(), &[]);
    let identity = format!("{}{}", foreign.pki("admin.crt"), foreign.pki("admin.key"));
    runtime().block_on(async {
        let c = k.client_with(Some(identity.as_bytes()));
        let r = c
            .get(format!("{}/readyz", k.url))
            .send()
            .await
            .expect("req");
        assert_eq!(r.status(), 401);
        let s: serde_json::Value = r.json().await.expect("status");
        assert_eq!(s["reason"], "Unauthorized");
        // The real admin certificate is accepted on the same server.
        let r = k
            .admin_client()
            .get(format!("{}/metrics", k.url))
            .send()
            .await
            .expect("req");
        assert_eq!(r.status(), 200);
    });
}

#[test]
fn tokens_from_the_token_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "s3cret-admin,alice,1001,\"system:masters,dev\"\ns3cret-bob,bob,1002\n",
    )
    .expect("write");
    let k = Kapi::start(&["--token-auth-file", tokens.to_str().expect("path")]);
    runtime().block_on(async {
        let c = k.anonymous_client();
        let get = |token: &'static str| {
            c.get(format!("{}/metrics", k.url))
                .bearer_auth(token)
                .send()
        };
        assert_eq!(get("s3cret-admin").await.expect("alice").status(), 200);
        let bob = get("s3cret-bob").await.expect("bob");
        assert_eq!(bob.status(), 403);
        let s: serde_json::Value = bob.json().await.expect("status");
        assert_eq!(
            s["message"],
            "forbidden: User \"bob\" cannot get path \"/metrics\""
        );
        // A wrong token is a 401 even though anonymous access is on.
        assert_eq!(get("wrong").await.expect("wrong").status(), 401);
    });
    // kubectl with only the token (no kubeconfig credentials at all).
    let ca = k.data_dir.join("pki/ca.crt");
    let mut kc = Command::new(common::kubectl_path());
    kc.env("KUBECONFIG", "/dev/null")
        .args(["--server", &k.url, "--certificate-authority"])
        .arg(&ca);
    let (ok, out, err) = run(kc.args(["--token", "s3cret-admin", "get", "--raw", "/metrics"]));
    assert!(ok, "{err}");
    assert!(out.contains("apiserver_request_total"));
    let mut kc = Command::new(common::kubectl_path());
    kc.env("KUBECONFIG", "/dev/null")
        .args(["--server", &k.url, "--certificate-authority"])
        .arg(&ca);
    let (ok, _, err) = run(kc.args(["--token", "s3cret-bob", "get", "--raw", "/metrics"]));
    assert!(!ok && err.contains("Forbidden"), "{err}");
}

#[test]
fn certificates_are_reused_and_regenerated_when_names_change() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut k = Kapi::start_in(dir.path(), &[]);
    let (ca, serving, admin) = (k.pki("ca.crt"), k.pki("apiserver.crt"), k.pki("admin.crt"));
    assert!(k.terminate().success());
    drop(k);
    let mut k = Kapi::start_in(dir.path(), &[]);
    assert_eq!(k.pki("ca.crt"), ca);
    assert_eq!(
        k.pki("apiserver.crt"),
        serving,
        "serving certificate must be reused"
    );
    assert_eq!(k.pki("admin.crt"), admin);
    assert!(k.terminate().success());
    drop(k);
    let k = Kapi::start_in(dir.path(), &["--advertise-address", "127.0.0.2"]);
    assert_eq!(k.pki("ca.crt"), ca, "CA stays");
    assert_ne!(
        k.pki("apiserver.crt"),
        serving,
        "a new serving name means a new certificate"
    );
    // The new certificate still serves: kubectl verifies it against the same CA.
    let (ok, out, err) = run(k.kubectl().args(["get", "--raw", "/readyz"]));
    assert!(ok && out == "ok", "{err}");
    use std::os::unix::fs::PermissionsExt;
    for key in [
        "ca.key",
        "apiserver.key",
        "admin.key",
        "sa.key",
        "front-proxy-client.key",
    ] {
        let mode = std::fs::metadata(dir.path().join("pki").join(key))
            .expect(key)
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{key}");
    }
}

#[test]
fn sigterm_exits_cleanly() {
    let mut k = Kapi::start(&[]);
    let start = std::time::Instant::now();
    let status = k.terminate();
    assert!(status.success(), "exit status {status:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    for (args, needle) in [
        (&["serve", "--secure-port", "notaport"][..], "--secure-port"),
        (
            &["serve", "--service-cluster-ip-range", "10.0.0.1/24"][..],
            "--service-cluster-ip-range",
        ),
        (
            &["serve", "--request-timeout", "5x"][..],
            "--request-timeout",
        ),
        (
            &["serve", "--etcd-servers", "localhost:2379"][..],
            "--etcd-servers",
        ),
        (
            &["serve", "--token-auth-file", "/nonexistent/tokens.csv"][..],
            "--token-auth-file",
        ),
    ] {
        let out = Command::new(common::kapi_bin())
            .args(args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// An `--etcd-servers` endpoint that accepts connections and never answers
/// must not hold `kapi serve` forever: a signal stops it at once, and
/// without one it gives up after upstream's 20 s dial timeout, naming the
/// endpoint; `kapi etcd dump` too. Log files get no colour codes.
#[test]
fn a_silent_etcd_endpoint_neither_hangs_the_start_nor_ignores_signals() {
    use std::time::{Duration, Instant};
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", silent.local_addr().expect("addr"));
    // Accept and hold every connection, answering nothing.
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let held = held.clone();
        let silent = silent.try_clone().expect("clone");
        std::thread::spawn(move || {
            for c in silent.incoming().map_while(Result::ok) {
                held.lock().expect("lock").push(c);
            }
        });
    }
    let start = |dir: &std::path::Path| {
        Command::new(common::kapi_bin())
            .args([
                "serve",
                "--secure-port",
                "0",
                "--etcd-servers",
                &endpoint,
                "--data-dir",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let dir = tempfile::tempdir().expect("tmp");
    let mut child = start(dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    common::unsafe_kill(child.id(), libc::SIGTERM);
    let t = Instant::now();
    let status = common::wait_timeout(&mut child, Duration::from_secs(5))
        .expect("SIGTERM stops a start waiting for etcd");
    assert!(!status.success());
    assert!(t.elapsed() < Duration::from_secs(5));

    let mut child = start(dir.path());
    // `kapi etcd dump` gives up the same way, alongside.
    let mut dump = Command::new(common::kapi_bin())
        .args(["etcd", "dump", "--etcd-servers", &endpoint])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn etcd dump");
    let status = common::wait_timeout(&mut child, Duration::from_secs(40))
        .expect("gives up on a silent etcd");
    assert!(!status.success());
    let dumped = common::wait_timeout(&mut dump, Duration::from_secs(40))
        .expect("etcd dump gives up on a silent etcd");
    assert!(!dumped.success());
    let mut dump_err = String::new();
    std::io::Read::read_to_string(&mut dump.stderr.take().expect("stderr"), &mut dump_err)
        .expect("read");
    assert!(
        dump_err.contains(&format!("etcd {endpoint}: no answer within 20s")),
        "{dump_err}"
    );
    common::assert_no_debug_shapes("etcd dump on a silent etcd", &dump_err);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
        .expect("read");
    assert!(
        err.contains(&format!("etcd {endpoint}: no answer within 20s")),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "colour codes in a log that is not a terminal: {err}"
    );
}

/// A data or certificate directory kapi cannot make is one line naming
/// the flag, with the system's reason once.
#[test]
fn an_unusable_directory_names_its_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").expect("write");
    for (flag, extra) in [
        ("--data-dir", vec![]),
        (
            "--cert-dir",
            vec![
                "--data-dir".to_string(),
                dir.path().join("data").display().to_string(),
            ],
        ),
    ] {
        let target = file.join("x");
        let out = Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0"])
            .args(&extra)
            .arg(flag)
            .arg(&target)
            .output()
            .expect("run kapi");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim().lines().last().unwrap_or("");
        assert!(
            last.starts_with(&format!("kapi: {flag} {}: ", target.display())),
            "{err}"
        );
        assert_eq!(last.matches("Not a directory").count(), 1, "{err}");
    }
}

/// The server's HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS, read off the wire.
fn advertised_max_streams(k: &Kapi) -> Option<u32> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    runtime().block_on(async {
        let mut tls = common::rawtls::connect(k, &[b"h2"]).await.expect("tls");
        tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            .await
            .expect("preface");
        // The server's first frame is its SETTINGS.
        let mut head = [0u8; 9];
        tls.read_exact(&mut head).await.expect("frame header");
        assert_eq!(head[3], 4, "the first frame is SETTINGS");
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let mut payload = vec![0u8; len];
        tls.read_exact(&mut payload).await.expect("settings");
        payload.chunks(6).find_map(|e| {
            (u16::from_be_bytes([e[0], e[1]]) == 3)
                .then(|| u32::from_be_bytes([e[2], e[3], e[4], e[5]]))
        })
    })
}

/// `--http2-max-streams-per-connection`, as upstream: the limit a client
/// is told; 0 means 100.
#[test]
fn http2_max_streams_per_connection_is_advertised() {
    let k = Kapi::start(&["--http2-max-streams-per-connection", "7"]);
    assert_eq!(advertised_max_streams(&k), Some(7));
    let k = Kapi::start(&["--http2-max-streams-per-connection", "0"]);
    assert_eq!(advertised_max_streams(&k), Some(100));
    let k = Kapi::start(&[]);
    assert_eq!(
        advertised_max_streams(&k),
        Some(1000),
        "kapi serve's default"
    );
}
