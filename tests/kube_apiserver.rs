//! kapi in kube-apiserver's place, as controller-runtime's envtest starts
//! it (v0.16–v0.21 build the same command line): through a symlink named
//! `kube-apiserver`, with envtest's flags, its certificate directory
//! (serving pair, client CA, ServiceAccount key pair as ECDSA PKCS#8 and a
//! CA certificate) and a real etcd; then kubectl and the kube crate as the
//! `admin` user of `system:masters`.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::pki::Ca;
use serde_json::{json, Value};

/// envtest's certificate directory; returns the serving CA and the admin pair.
fn envtest_cert_dir(dir: &Path) -> (String, (String, String)) {
    let serving_ca = Ca::new("envtest-environment");
    let (crt, key) = serving_ca.serving("localhost");
    std::fs::write(dir.join("apiserver.crt"), crt).expect("write");
    std::fs::write(dir.join("apiserver.key"), key).expect("write");
    let sa = Ca::new("envtest-environment");
    std::fs::write(dir.join("sa-signer.crt"), &sa.cert_pem).expect("write");
    std::fs::write(dir.join("sa-signer.key"), sa.key_pem()).expect("write");
    let client_ca = Ca::new("envtest-environment");
    std::fs::write(dir.join("client-cert-auth-ca.crt"), &client_ca.cert_pem).expect("write");
    let admin = client_ca.client("admin", &["system:masters"]);
    (serving_ca.cert_pem, admin)
}

/// A directory holding kapi as `kube-apiserver`, as KUBEBUILDER_ASSETS would.
fn assets() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let link = dir.path().join("kube-apiserver");
    std::os::unix::fs::symlink(common::kapi_bin(), &link).expect("symlink");
    (dir, link)
}

fn envtest_args(cert_dir: &Path, port: u16, etcd: &str) -> Vec<String> {
    let d = cert_dir.display();
    vec![
        "--allow-privileged=true".into(),
        "--authorization-mode=RBAC".into(),
        "--bind-address=127.0.0.1".into(),
        format!("--cert-dir={d}"),
        format!("--client-ca-file={d}/client-cert-auth-ca.crt"),
        "--disable-admission-plugins=ServiceAccount".into(),
        format!("--etcd-servers={etcd}"),
        format!("--secure-port={port}"),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={d}/sa-signer.crt"),
        format!("--service-account-signing-key-file={d}/sa-signer.key"),
        "--service-cluster-ip-range=10.0.0.0/24".into(),
    ]
}

/// Kills the server when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn envtest_starts_kapi_as_kube_apiserver() {
    let (_assets, bin) = assets();
    // envtest runs `--help` before every start and looks for --insecure-port.
    let help = Command::new(&bin).arg("--help").output().expect("--help");
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.lines()
            .any(|l| l.trim_start().starts_with("--etcd-servers ")),
        "{help}"
    );
    assert!(!help
        .lines()
        .any(|l| l.trim_start().starts_with("--insecure-port")));

    let etcd = common::etcd::EtcdCluster::start(1);
    let cert_dir = tempfile::tempdir().expect("tmp");
    let (serving_ca, admin) = envtest_cert_dir(cert_dir.path());
    let port = common::etcd::free_port();
    let t0 = Instant::now();
    let _server = Child(
        Command::new(&bin)
            .args(envtest_args(cert_dir.path(), port, &etcd.endpoints()[0]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kube-apiserver"),
    );
    let rt = common::runtime();
    // envtest's readiness probe: anonymous GET /healthz, TLS unverified, 200.
    let probe = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client");
    let base = format!("https://127.0.0.1:{port}");
    let ready = rt.block_on(async {
        for _ in 0..200 {
            if let Ok(r) = probe.get(format!("{base}/healthz")).send().await {
                if r.status().as_u16() == 200 {
                    return Some(t0.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        None
    });
    let ready = ready.expect("/healthz never answered 200");
    eprintln!("ready after {} ms", ready.as_millis());

    // The admin client envtest hands to tests: the serving CA, a client
    // certificate of the client CA in system:masters.
    let admin_client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(serving_ca.as_bytes()).expect("ca")])
        .identity(
            reqwest::Identity::from_pem(format!("{}{}", admin.0, admin.1).as_bytes()).expect("id"),
        )
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    rt.block_on(async {
        // envtest (v0.18+) waits for the `default` namespace.
        let mut found = false;
        for _ in 0..100 {
            let r = admin_client
                .get(format!("{base}/api/v1/namespaces/default"))
                .send()
                .await;
            if r.is_ok_and(|r| r.status().as_u16() == 200) {
                found = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(found, "namespace default never appeared");
        let url = format!("{base}/apis/authentication.k8s.io/v1/selfsubjectreviews");
        let who = who_am_i(admin_client.post(url)).await;
        assert_eq!(who["status"]["userInfo"]["username"], "admin", "{who}");
        let groups = who["status"]["userInfo"]["groups"].to_string();
        assert!(groups.contains("system:masters"), "{who}");
    });

    // kubectl with the same credentials.
    let kubeconfig = cert_dir.path().join("admin.kubeconfig");
    let b64 = |s: &str| base64_encode(s.as_bytes());
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {base}\n    certificate-authority-data: {}\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: envtest\n  context: {{cluster: envtest, user: admin}}\ncurrent-context: envtest\n",
            b64(&serving_ca),
            b64(&admin.0),
            b64(&admin.1)
        ),
    )
    .expect("kubeconfig");
    let kubectl = |args: &[&str]| {
        let out = Command::new(common::kubectl_path())
            .env("KUBECONFIG", &kubeconfig)
            .args(args)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    kubectl(&["create", "namespace", "envtest"]);
    kubectl(&[
        "create",
        "configmap",
        "c",
        "-n",
        "envtest",
        "--from-literal=a=b",
    ]);
    // As on kube-apiserver, no kube-controller-manager behind it: the
    // namespace gets no `default` ServiceAccount and no kube-root-ca.crt
    // (those controllers act within milliseconds of the namespace).
    assert_eq!(
        kubectl(&["get", "configmaps", "-n", "envtest", "-o", "name"]),
        "configmap/c\n"
    );
    assert_eq!(
        kubectl(&["get", "serviceaccounts", "-n", "envtest", "-o", "name"]),
        ""
    );

    // The kube crate, as controller-runtime's Rust peers use it.
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        let client = kube::Client::try_from(cfg).expect("client");
        let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
            kube::Api::namespaced(client.clone(), "envtest");
        let cm = api.get("c").await.expect("get");
        assert_eq!(cm.data.and_then(|d| d.get("a").cloned()).as_deref(), Some("b"));

        // ServiceAccount tokens signed with envtest's sa-signer.key and
        // verified with sa-signer.crt: the token names its user.
        let sas: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
            kube::Api::namespaced(client.clone(), "envtest");
        let sa = serde_json::from_value(json!({"metadata": {"name": "robot"}})).expect("sa");
        sas.create(&Default::default(), &sa).await.expect("create sa");
        let token_request = admin_client
            .post(format!(
                "{base}/api/v1/namespaces/envtest/serviceaccounts/robot/token"
            ))
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}))
            .send()
            .await
            .expect("token request")
            .json::<Value>()
            .await
            .expect("json");
        let token = token_request["status"]["token"].as_str().expect("token").to_string();
        let header = token.split('.').next().expect("header");
        let header: Value =
            serde_json::from_slice(&base64_url_decode(header)).expect("header json");
        assert_eq!(header["alg"], "ES256", "signed with the ECDSA key envtest wrote");
        let anon = reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(serving_ca.as_bytes()).expect("ca")])
            .build()
            .expect("client");
        let url = format!("{base}/apis/authentication.k8s.io/v1/selfsubjectreviews");
        let who = who_am_i(anon.post(url).bearer_auth(&token)).await;
        assert_eq!(
            who["status"]["userInfo"]["username"], "system:serviceaccount:envtest:robot",
            "{who}"
        );
    });
    // The caller's serving pair was used, not replaced.
    let crt = std::fs::read_to_string(cert_dir.path().join("apiserver.crt")).expect("crt");
    assert!(crt.contains("BEGIN CERTIFICATE"));
}

/// A SelfSubjectReview sent with the request's credentials: who the server says they are.
async fn who_am_i(request: reqwest::RequestBuilder) -> Value {
    request
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .expect("review")
        .json::<Value>()
        .await
        .expect("json")
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn base64_url_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .expect("base64url")
}

/// The flags `--help` prints, by name.
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = match l.strip_prefix('-').and_then(|r| r.split_once(", ")) {
                Some((_, rest)) if !l.starts_with("--") => rest,
                _ => l,
            };
            let name = l.strip_prefix("--")?.split([' ', '=']).next()?;
            Some(name.to_string())
        })
        .collect()
}

/// kube-apiserver v1.34's flags, from tests/data (sources cited there).
fn upstream_flags() -> Vec<(String, String, String, String)> {
    include_str!("data/kube-apiserver-v1.34-flags.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[1].to_string(),
                f[3].to_string(),
                f[4].to_string(),
                f[5].to_string(),
            )
        })
        .collect()
}

#[test]
fn help_lists_every_kube_apiserver_flag() {
    let out = Command::new(common::kapi_bin())
        .args(["kube-apiserver", "--help"])
        .output()
        .expect("--help");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let printed = help_flags(&help);
    let visible: BTreeSet<String> = upstream_flags()
        .into_iter()
        .filter(|(_, _, _, status)| status == "visible")
        .map(|(name, ..)| name)
        .collect();
    assert_eq!(
        printed, visible,
        "--help differs from kube-apiserver v1.34's"
    );
    for section in [
        "Generic flags:",
        "Etcd flags:",
        "Secure serving flags:",
        "Authentication flags:",
        "Misc flags:",
        "Global flags:",
    ] {
        assert!(help.contains(section), "no {section}");
    }
}

#[test]
fn every_flag_is_honoured_ignored_or_refused_by_name() {
    // Parsing and the refusals happen before anything starts, so each
    // flag set away from its default either passes that stage or names
    // itself; an unknown flag is refused as pflag refuses it.
    let refused = |args: &[String]| -> Option<String> {
        let out = Command::new(common::kapi_bin())
            .arg("kube-apiserver")
            .args(args)
            .output()
            .expect("run");
        (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let unknown = refused(&["--no-such-flag".into()]).expect("refused");
    assert_eq!(unknown.trim(), "Error: unknown flag: --no-such-flag");
    let no_etcd = refused(&[]).expect("refused");
    assert_eq!(no_etcd.trim(), "Error: [--etcd-servers must be specified]");
    use kapi::config::kube_apiserver::{flags, Handling};
    // Honoured flags are exercised by the envtest test above.
    let handled: BTreeSet<&str> = flags()
        .iter()
        .filter(|f| f.handling() == Handling::Honoured)
        .map(|f| f.name)
        .collect();
    assert!(handled.contains("etcd-servers") && handled.contains("cert-dir"));
    let no_ops: BTreeSet<&str> = kapi::config::kube_apiserver::NO_OPS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let scratch = tempfile::tempdir().expect("tmp");
    let cert_dir = format!("--cert-dir={}", scratch.path().display());
    let mut refused_names = Vec::new();
    // Every listed no-op at once, each away from its default: accepted (the
    // start then stops at the unreachable etcd, after parsing).
    let mut all_no_ops = vec![
        "--etcd-servers=http://127.0.0.1:1".to_string(),
        cert_dir.clone(),
    ];
    for (name, kind, default, _) in upstream_flags() {
        if handled.contains(name.as_str()) {
            continue;
        }
        let typical = match kind.as_str() {
            // Checked against v1.34's gates: a real one.
            _ if name == "feature-gates" => "kube:AllAlpha=true".to_string(),
            "bool" => if default == "true" { "false" } else { "true" }.to_string(),
            "int" | "uint" | "Level" => "7".into(),
            "float" | "float32" => "0.5".into(),
            "duration" => "7s".into(),
            "quantity" => "1Mi".into(),
            "mapStringString" | "colonSeparatedMultimapStringString" | "stringToString" => {
                "a=b".into()
            }
            _ => "typical-value".into(),
        };
        let arg = format!("--{name}={typical}");
        if no_ops.contains(name.as_str()) {
            all_no_ops.push(arg);
            continue;
        }
        // Refused by name before anything starts.
        let err = refused(&[
            arg.clone(),
            "--etcd-servers=http://127.0.0.1:1".into(),
            cert_dir.clone(),
        ])
        .unwrap_or_default();
        assert!(
            err.contains(&format!(
                "--{name}: kapi does not implement this setting yet"
            )),
            "{arg} is neither honoured nor a no-op, and was not refused by name: {err}"
        );
        refused_names.push(name);
    }
    let err = refused(&all_no_ops).unwrap_or_default();
    assert!(
        !err.contains("does not implement"),
        "a listed no-op was refused: {err}"
    );
    assert!(
        err.contains("--etcd-servers"),
        "the start went on to etcd: {err}"
    );
    // In plain words, without the transport's debug dump.
    assert!(err.contains("Connection refused"), "{err}");
    assert!(
        !err.contains("tonic::") && !err.contains("ConnectError("),
        "{err}"
    );
    // Still to do (OIDC, structured authentication): refused by name.
    assert!(refused_names.contains(&"oidc-issuer-url".to_string()));
    // Done: honoured (tests/encryption.rs, runtime_config.rs, token_webhook.rs,
    // etcd_overrides.rs).
    for done in [
        "encryption-provider-config",
        "runtime-config",
        "authentication-token-webhook-config-file",
    ] {
        assert!(handled.contains(done), "{done}");
    }
}

/// `--feature-gates` as kube-apiserver v1.34 checks it: gates it does not
/// know, values that are not bools, locked gates set otherwise and mixed
/// prefixes stop the start in upstream's words; GA gates are accepted
/// with upstream's warning.
#[test]
fn feature_gates_are_checked_as_kube_apiserver_checks_them() {
    let run = |gates: &str| {
        let out = Command::new(common::kapi_bin())
            .args(["kube-apiserver", "--etcd-servers=http://127.0.0.1:1"])
            .arg(format!("--feature-gates={gates}"))
            .output()
            .expect("run");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (gates, want) in [
        ("NoSuchGate=true", "Error: unrecognized feature gate: NoSuchGate"),
        ("AllAlpha=maybe", "Error: invalid value of AllAlpha=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"),
        ("AllAlpha", "Error: missing bool value for AllAlpha"),
        ("APIServerTracing=false", "Error: cannot set feature gate APIServerTracing to false, feature is locked to true"),
        ("kube:AllAlpha=true,AllBeta=true", "Error: set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"),
        ("kubelet:AllAlpha=true", "Error: component not registered: kubelet"),
    ] {
        let (ok, err) = run(gates);
        assert!(!ok, "{gates}");
        assert_eq!(err.trim(), want, "{gates}");
    }
    // Known gates pass the check (the start then stops at the absent etcd);
    // a GA gate gets upstream's warning.
    let (ok, err) = run("AllBeta=false,APIServerTracing=true");
    assert!(!ok);
    assert!(
        err.contains("--etcd-servers") || err.contains("etcd"),
        "{err}"
    );
    assert!(
        err.contains("Setting GA feature gate APIServerTracing=true. It will be removed in a future release."),
        "{err}"
    );
}

#[test]
fn shutdown_delay_keeps_serving_while_readyz_fails() {
    let mut k = common::Kapi::start(&["--shutdown-delay-duration=4s"]);
    common::unsafe_kill(k.child.id(), 15);
    let admin = k.admin_client();
    common::runtime().block_on(async {
        let mut failing = None;
        for _ in 0..200 {
            let r = admin
                .get(format!("{}/readyz?verbose", k.url))
                .send()
                .await
                .expect("readyz");
            if r.status().as_u16() != 200 {
                failing = Some(r.text().await.unwrap_or_default());
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let body = failing.expect("/readyz never failed after SIGTERM");
        assert!(body.contains("[-]shutdown failed"), "{body}");
        // Everything else is still served during the delay.
        let r = admin
            .get(format!("{}/api/v1/namespaces/default", k.url))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status().as_u16(), 200);
        let r = admin
            .get(format!("{}/livez", k.url))
            .send()
            .await
            .expect("livez");
        assert_eq!(r.status().as_u16(), 200);
    });
    let status =
        common::wait_timeout(&mut k.child, Duration::from_secs(30)).expect("exits after the delay");
    assert!(status.success());
}

#[test]
fn systemd_is_told_when_kapi_is_ready() {
    let dir = tempfile::tempdir().expect("tmp");
    let socket_path = dir.path().join("notify.sock");
    let socket = std::os::unix::net::UnixDatagram::bind(&socket_path).expect("bind");
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let data = tempfile::tempdir().expect("tmp");
    let _server = Child(
        Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(data.path())
            .env("NOTIFY_SOCKET", &socket_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn"),
    );
    let mut buf = [0u8; 64];
    let n = socket.recv(&mut buf).expect("READY=1 within 30 s");
    assert_eq!(&buf[..n], b"READY=1\n");
}
