//! The aggregator as a user meets it: `kubectl get apiservices` lists the
//! local APIServices of built-in groups and CRDs; `kapi sample-apiserver`
//! registered with `kapi apiservice register` is reached through kapi by
//! kubectl (list, create, get, watch) with the user's identity arriving in
//! the front-proxy headers; a stopped backend makes its APIService
//! unavailable (503s) and a restarted one brings it back.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{kapi_bin, run, runtime, wait_timeout, Kapi};
use serde_json::Value;

const GROUP: &str = "wardle.example.com";
const NAME: &str = "v1alpha1.wardle.example.com";

/// Polls `f` until it gives `Some`, or panics with `what` after `limit`.
fn eventually<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A child process whose stdout lines are collected; killed on drop.
struct Proc {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().expect("lines").push(line);
            }
        });
        Proc { child, lines }
    }

    fn output(&self) -> String {
        self.lines.lock().expect("lines").join("\n")
    }

    fn wait_for_line(&self, what: &str, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        eventually(what, limit, || {
            self.lines
                .lock()
                .expect("lines")
                .iter()
                .find(|l| pred(l))
                .cloned()
        })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = wait_timeout(&mut self.child, Duration::from_secs(10));
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `kapi sample-apiserver` trusting a front-proxy CA.
struct Sample {
    proc: Proc,
    port: u16,
    ca: PathBuf,
}

/// A sample server trusting `k`'s own front-proxy CA.
fn start_sample(k: &Kapi, cert_dir: &Path, port: u16) -> Sample {
    start_sample_trusting(
        &k.data_dir.join("pki").join("front-proxy-ca.crt"),
        "front-proxy-client",
        cert_dir,
        port,
    )
}

fn start_sample_trusting(
    front_proxy_ca: &Path,
    allowed_name: &str,
    cert_dir: &Path,
    port: u16,
) -> Sample {
    let proc = Proc::spawn(
        Command::new(kapi_bin())
            .args([
                "sample-apiserver",
                "--secure-port",
                &port.to_string(),
                "--cert-dir",
            ])
            .arg(cert_dir)
            .arg("--requestheader-client-ca-file")
            .arg(front_proxy_ca)
            .arg(format!("--requestheader-allowed-names={allowed_name}")),
    );
    let serving = proc.wait_for_line(
        "the sample server to listen",
        Duration::from_secs(30),
        |l| l.starts_with("sample-apiserver serving"),
    );
    let port = serving
        .rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .expect("port");
    let ca = proc.wait_for_line("the sample server's CA", Duration::from_secs(5), |l| {
        l.starts_with("serving CA (caBundle): ")
    });
    let ca = PathBuf::from(ca.trim_start_matches("serving CA (caBundle): "));
    Sample { proc, port, ca }
}

fn api_service(k: &Kapi, name: &str) -> Option<Value> {
    let (ok, out, _) = run(k.kubectl().args(["get", "apiservice", name, "-o", "json"]));
    if !ok {
        return None;
    }
    serde_json::from_str(&out).ok()
}

fn available(v: &Value) -> Option<Value> {
    v["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Available")
        .cloned()
}

/// `kapi apiservice register` for a sample server on `port`, waiting for Available.
fn register(k: &Kapi, port: u16, ca: &Path, timeout: &str) -> (bool, String, String) {
    kapi_cli(
        k,
        &[
            "apiservice",
            "register",
            "--group",
            GROUP,
            "--version",
            "v1alpha1",
            "--url",
            &format!("https://127.0.0.1:{port}"),
            "--ca-file",
            ca.to_str().expect("utf-8 path"),
            "--timeout",
            timeout,
        ],
    )
}

fn kapi_cli(k: &Kapi, args: &[&str]) -> (bool, String, String) {
    run(Command::new(kapi_bin())
        .args(args)
        .arg("--kubeconfig")
        .arg(&k.kubeconfig))
}

const FLUNDER: &str = r#"
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: my-flunder
  labels: {sample: "yes"}
spec:
  reference: hello
"#;

#[test]
fn an_aggregated_api_server_behind_kapi() {
    let k = Kapi::start(&[]);
    let certs = tempfile::tempdir().expect("tempdir");
    let sample = start_sample(&k, certs.path(), 0);

    // Registered: a Service for the server, the APIService, Available.
    let (ok, out, err) = register(&k, sample.port, &sample.ca, "30s");
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("apiservice.apiregistration.k8s.io/v1alpha1.wardle.example.com created")
            && out.contains("service/wardle-example-com created")
            && out.contains("Available: True (Passed: all checks passed)"),
        "{out}"
    );
    let (ok, out, err) = run(k.kubectl().args(["get", "apiservice", NAME]));
    assert!(ok, "{err}");
    assert!(out.starts_with("NAME"), "{out}");
    let row = out.lines().nth(1).unwrap_or("");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cells[..3],
        [NAME, "kube-system/wardle-example-com", "True"],
        "{out}"
    );

    // Discovery lists the aggregated resources.
    let (ok, out, err) = run(k.kubectl().args(["api-resources", "--api-group", GROUP]));
    assert!(ok, "{err}");
    assert!(
        out.contains("flunders") && out.contains("fischers"),
        "{out}"
    );

    // kubectl through kapi: list, create, get.
    let (ok, out, err) = run(k.kubectl().args(["get", "flunders"]));
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains("No resources found in default namespace."),
        "{err}"
    );
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], FLUNDER);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("flunder.wardle.example.com/my-flunder created"),
        "{out}"
    );
    let (ok, out, err) = run(k.kubectl().args(["get", "flunders"]));
    assert!(ok, "{err}");
    assert!(
        out.starts_with("NAME") && out.contains("my-flunder"),
        "{out}"
    );
    let (ok, out, err) = run(k
        .kubectl()
        .args(["get", "flunder", "my-flunder", "-o", "json"]));
    assert!(ok, "{err}");
    let f: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(f["metadata"]["namespace"], "default");
    assert_eq!(f["spec"]["reference"], "hello");
    // The user arrived at the server in the front-proxy headers.
    assert_eq!(
        f["metadata"]["annotations"]["wardle.example.com/created-by"],
        "kubernetes-admin"
    );
    assert!(
        sample.proc.output().contains("user=\"kubernetes-admin\""),
        "{}",
        sample.proc.output()
    );
    let (ok, out, err) =
        run(k
            .kubectl()
            .args(["get", "flunders", "-l", "sample=yes", "-o", "name"]));
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "flunder.wardle.example.com/my-flunder");

    // A watch streams through the proxy.
    let watch =
        Proc::spawn(
            k.kubectl()
                .args(["get", "flunders", "-w", "--request-timeout", "60s"]),
        );
    watch.wait_for_line("the watch to list", Duration::from_secs(20), |l| {
        l.contains("my-flunder")
    });
    let (ok, out, err) = k.kubectl_stdin(
        &["create", "-f", "-"],
        &FLUNDER.replace("my-flunder", "second-flunder"),
    );
    assert!(ok, "{out}\n{err}");
    watch.wait_for_line(
        "the watch to see the new flunder",
        Duration::from_secs(20),
        |l| l.contains("second-flunder"),
    );
    drop(watch);

    // The backend goes away: unavailable, and requests get 503.
    let port = sample.port;
    let ca = sample.ca.clone();
    drop(sample);
    let cond = eventually(
        "the APIService to become unavailable",
        Duration::from_secs(20),
        || available(&api_service(&k, NAME)?).filter(|c| c["status"] == "False"),
    );
    assert_eq!(cond["reason"], "FailedDiscoveryCheck", "{cond}");
    let msg = cond["message"].as_str().unwrap_or("");
    assert!(
        msg.starts_with(&format!(
            "failing or missing response from https://127.0.0.1:{port}/apis/wardle.example.com/v1alpha1: "
        )) && msg.contains("connection refused"),
        "{msg}"
    );
    let (ok, out, _) = run(k.kubectl().args(["get", "apiservice", NAME]));
    assert!(ok && out.contains("False (FailedDiscoveryCheck)"), "{out}");
    let (ok, _, err) = run(k.kubectl().args(["get", "flunders"]));
    assert!(!ok);
    assert!(
        err.contains("ServiceUnavailable")
            || err.contains("the server is currently unable to handle the request"),
        "{err}"
    );
    runtime().block_on(async {
        let r = k
            .admin_client()
            .get(format!(
                "{}/apis/{GROUP}/v1alpha1/namespaces/default/flunders",
                k.url
            ))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 503);
        assert_eq!(r.text().await.expect("body"), "service unavailable\n");
    });

    // Back on the same port with the same certificates: available again.
    let sample = start_sample(&k, certs.path(), port);
    assert_eq!(sample.ca, ca);
    eventually("the APIService to recover", Duration::from_secs(20), || {
        available(&api_service(&k, NAME)?).filter(|c| c["status"] == "True")
    });
    let (ok, out, err) = run(k.kubectl().args(["get", "flunders"]));
    assert!(ok, "{out}\n{err}");

    // `kapi apiservice list` and `unregister`.
    let (ok, out, err) = kapi_cli(&k, &["apiservice", "list"]);
    assert!(ok, "{err}");
    let line = out.lines().find(|l| l.starts_with(NAME)).unwrap_or("");
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        &cells[..4],
        [NAME, "kube-system/wardle-example-com", "True", "Passed"],
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("v1.apps ") && l.contains("Local")),
        "{out}"
    );
    // A built-in APIService is not an aggregated server's: nothing to unregister.
    let (ok, out, err) = kapi_cli(&k, &["apiservice", "unregister", "v1.apps"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("apiservice \"v1.apps\" is served by kapi itself"),
        "{err}"
    );
    let (ok, _, err) = run(k.kubectl().args(["get", "apiservice", "v1.apps"]));
    assert!(ok, "{err}");

    // Re-pointed at a dead port: register reports what the new backend
    // does, not the old backend's Available condition.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (ok, out, err) = register(&k, dead, &sample.ca, "5s");
    assert!(!ok, "{out}");
    assert!(!out.contains("Available: True"), "{out}");
    assert!(err.contains("is not Available after 5s"), "{err}");

    let (ok, out, err) = kapi_cli(&k, &["apiservice", "unregister", NAME]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("deleted"), "{out}");
    let (ok, _, _) =
        run(k
            .kubectl()
            .args(["-n", "kube-system", "get", "service", "wardle-example-com"]));
    assert!(!ok, "the Service register created is gone");
    // (kubectl api-resources refreshes kubectl's discovery cache.)
    eventually(
        "the aggregated resources to leave discovery",
        Duration::from_secs(20),
        || {
            let (ok, out, _) = run(k.kubectl().args(["api-resources", "--api-group", GROUP]));
            (ok && !out.contains("flunders")).then_some(())
        },
    );
    let (ok, _, err) = run(k.kubectl().args(["get", "flunders"]));
    assert!(
        !ok && err.contains("the server doesn't have a resource type"),
        "{err}"
    );
}

#[test]
fn local_api_services_follow_built_ins_and_crds() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = run(k.kubectl().args(["get", "apiservices"]));
    assert!(ok, "{err}");
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"], "{out}");
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert_eq!(&row("v1.apps")[1..3], ["Local", "True"], "{out}");
    assert_eq!(&row("v1.")[1..3], ["Local", "True"], "{out}");
    assert_eq!(&row("v2.autoscaling")[1..3], ["Local", "True"], "{out}");
    assert!(row("v1.apiregistration.k8s.io").is_empty(), "{out}");
    let apps = api_service(&k, "v1.apps").expect("v1.apps");
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
    assert_eq!(apps["spec"]["versionPriority"], 15);
    let cond = available(&apps).expect("condition");
    assert_eq!(cond["reason"], "Local");
    assert_eq!(cond["message"], "Local APIServices are always available");
    // The readiness check of auto-registration has passed.
    let (ok, out, err) = run(k.kubectl().args(["get", "--raw", "/readyz?verbose"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("[+]autoregister-completion ok")
            && out.contains("[+]poststarthook/kube-apiserver-autoregistration ok"),
        "{out}"
    );

    // The front-proxy trust is published as upstream publishes it.
    let data = &published_trust(&k);
    assert_eq!(
        data["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        data["requestheader-username-headers"],
        r#"["X-Remote-User"]"#
    );
    assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Remote-Extra-"]"#
    );
    assert_eq!(
        data["requestheader-client-ca-file"],
        k.pki("front-proxy-ca.crt").as_str()
    );
    assert_eq!(data["client-ca-file"], k.pki("ca.crt").as_str());

    // A CRD's group version gets an APIService, which goes with the CRD.
    let crd = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], crd);
    assert!(ok, "{out}\n{err}");
    let crd_api = eventually("the CRD's APIService", Duration::from_secs(20), || {
        api_service(&k, "v1.stable.example.com").filter(|a| available(a).is_some())
    });
    assert_eq!(
        crd_api["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    assert_eq!(crd_api["spec"]["groupPriorityMinimum"], 1000);
    assert_eq!(crd_api["spec"]["versionPriority"], 100);
    assert_eq!(available(&crd_api).expect("condition")["status"], "True");
    let (ok, _, err) = run(k
        .kubectl()
        .args(["delete", "crd", "crontabs.stable.example.com"]));
    assert!(ok, "{err}");
    eventually(
        "the CRD's APIService to go",
        Duration::from_secs(20),
        || {
            api_service(&k, "v1.stable.example.com")
                .is_none()
                .then_some(())
        },
    );
}

/// A SelfSubjectReview sent by `client` with `headers`: the status code
/// and, when it was answered, who the server took the sender for.
async fn self_subject_review(
    k: &Kapi,
    client: &reqwest::Client,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let review =
        serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let mut req = client.post(format!(
        "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        k.url
    ));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let r = req.json(&review).send().await.expect("post");
    let code = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    (code, v["status"]["userInfo"].clone())
}

#[test]
fn kapi_trusts_user_headers_only_from_its_front_proxy() {
    let k = Kapi::start(&[]);
    runtime().block_on(async {
        let front = format!(
            "{}{}",
            k.pki("front-proxy-client.crt"),
            k.pki("front-proxy-client.key")
        );
        let proxy = k.client_with(Some(front.as_bytes()));
        let (code, info) = self_subject_review(
            &k,
            &proxy,
            &[
                ("X-Remote-User", "alice"),
                ("X-Remote-Group", "devs"),
                ("X-Remote-Group", "system:masters"),
                ("X-Remote-Extra-Scopes", "read"),
            ],
        )
        .await;
        assert_eq!(code, 201);
        assert_eq!(info["username"], "alice");
        assert_eq!(
            info["groups"],
            serde_json::json!(["devs", "system:masters", "system:authenticated"])
        );
        assert_eq!(info["extra"]["scopes"], serde_json::json!(["read"]));
        // The proxy's certificate names nobody by itself.
        let (code, _) = self_subject_review(&k, &proxy, &[]).await;
        assert_eq!(code, 401);
        // Anyone else's X-Remote-User is just a header.
        let (_, info) =
            self_subject_review(&k, &k.admin_client(), &[("X-Remote-User", "alice")]).await;
        assert_eq!(info["username"], "kubernetes-admin");
    });
}

#[test]
fn register_dry_run_prints_the_manifests() {
    let (ok, out, err) = run(Command::new(kapi_bin()).args([
        "apiservice",
        "register",
        "--group",
        "metrics.example.com",
        "--version",
        "v1beta1",
        "--url",
        "https://10.1.2.3:9443",
        "--insecure-skip-tls-verify",
        "--dry-run",
        "-o",
        "yaml",
    ]));
    assert!(ok, "{err}");
    let docs: Vec<Value> = out
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).expect("yaml"))
        .collect();
    let kinds: Vec<&str> = docs
        .iter()
        .map(|d| d["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["Service", "Endpoints", "APIService"], "{out}");
    assert_eq!(docs[1]["subsets"][0]["addresses"][0]["ip"], "10.1.2.3");
    assert_eq!(docs[2]["metadata"]["name"], "v1beta1.metrics.example.com");
    assert_eq!(docs[2]["spec"]["insecureSkipTLSVerify"], true);
    assert_eq!(docs[2]["spec"]["service"]["name"], "metrics-example-com");
}

/// The extension-apiserver-authentication ConfigMap's data, once written.
fn published_trust(k: &Kapi) -> Value {
    let cm: Value = eventually(
        "extension-apiserver-authentication",
        Duration::from_secs(20),
        || {
            let (ok, out, _) = run(k.kubectl().args([
                "-n",
                "kube-system",
                "get",
                "configmap",
                "extension-apiserver-authentication",
                "-o",
                "json",
            ]));
            ok.then(|| serde_json::from_str(&out).ok()).flatten()
        },
    );
    cm["data"].clone()
}

#[test]
fn a_callers_requestheader_flags_decide_which_proxies_name_users_and_how() {
    let pki = tempfile::tempdir().expect("tmp");
    let ca = common::pki::Ca::new("my-front-proxy-ca");
    let ca_file = pki.path().join("front-proxy-ca.crt");
    std::fs::write(&ca_file, &ca.cert_pem).expect("write");
    let k = Kapi::start(&[
        "--requestheader-client-ca-file",
        ca_file.to_str().expect("utf-8"),
        "--requestheader-allowed-names=my-proxy",
        "--requestheader-username-headers=X-Proxy-User",
        "--requestheader-uid-headers=X-Proxy-Uid",
        "--requestheader-group-headers=X-Proxy-Group,X-Proxy-Team",
        "--requestheader-extra-headers-prefix=X-Proxy-Extra-",
    ]);
    let identity = |(cert, key): (String, String)| format!("{cert}{key}");
    let mine = identity(ca.client("my-proxy", &[]));
    let other = identity(ca.client("other-proxy", &[]));
    let kapis_own = format!(
        "{}{}",
        k.pki("front-proxy-client.crt"),
        k.pki("front-proxy-client.key")
    );
    runtime().block_on(async {
        let proxy = k.client_with(Some(mine.as_bytes()));
        let (code, info) = self_subject_review(
            &k,
            &proxy,
            &[
                ("X-Proxy-User", "alice"),
                ("X-Proxy-Uid", "42"),
                ("X-Proxy-Group", "devs"),
                ("X-Proxy-Team", "blue"),
                ("X-Proxy-Extra-Scopes.example.com%2Fa", "read"),
            ],
        )
        .await;
        assert_eq!(code, 201);
        assert_eq!(info["username"], "alice");
        assert_eq!(info["uid"], "42");
        assert_eq!(
            info["groups"],
            serde_json::json!(["devs", "blue", "system:authenticated"])
        );
        assert_eq!(
            info["extra"]["scopes.example.com/a"],
            serde_json::json!(["read"])
        );
        // The standard names are not the ones configured: no user.
        let (code, _) = self_subject_review(&k, &proxy, &[("X-Remote-User", "bob")]).await;
        assert_eq!(code, 401);
        // The right CA but a name not allowed, and kapi's own front-proxy
        // pair (its CA replaced by the caller's): neither names anyone.
        for (who, pem, header) in [
            ("other-proxy", &other, "X-Proxy-User"),
            ("kapi's front-proxy-client", &kapis_own, "X-Remote-User"),
        ] {
            let client = k.client_with(Some(pem.as_bytes()));
            let headers = [(header, "mallory"), ("X-Proxy-Group", "system:masters")];
            let (code, _) = self_subject_review(&k, &client, &headers).await;
            assert_eq!(code, 401, "{who}");
        }
    });
    // Published for aggregated servers as given.
    let data = published_trust(&k);
    assert_eq!(data["requestheader-client-ca-file"], ca.cert_pem.as_str());
    assert_eq!(data["requestheader-allowed-names"], r#"["my-proxy"]"#);
    assert_eq!(
        data["requestheader-username-headers"],
        r#"["X-Proxy-User"]"#
    );
    assert_eq!(data["requestheader-uid-headers"], r#"["X-Proxy-Uid"]"#);
    assert_eq!(
        data["requestheader-group-headers"],
        r#"["X-Proxy-Group","X-Proxy-Team"]"#
    );
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Proxy-Extra-"]"#
    );
}

#[test]
fn a_blank_requestheader_name_is_refused_as_upstream_refuses_it() {
    let err = common::serve_refused(&["--requestheader-group-headers=X-Remote-Group, "]);
    assert!(
        err.contains(
            r#"invalid value for --requestheader-group-headers: empty value in "requestheader-group-headers""#
        ),
        "{err}"
    );
}

#[test]
fn the_aggregator_presents_the_proxy_client_certificate_it_is_given() {
    let pki = tempfile::tempdir().expect("tmp");
    let ca = common::pki::Ca::new("my-front-proxy-ca");
    let ca_file = pki.path().join("front-proxy-ca.crt");
    std::fs::write(&ca_file, &ca.cert_pem).expect("write");
    let (cert, key) = ca.client("my-aggregator", &[]);
    let (cert_file, key_file) = (pki.path().join("proxy.crt"), pki.path().join("proxy.key"));
    std::fs::write(&cert_file, cert).expect("write");
    std::fs::write(&key_file, key).expect("write");
    // kubeadm's command line, with the caller's front-proxy PKI.
    let k = Kapi::start(&[
        "--requestheader-client-ca-file",
        ca_file.to_str().expect("utf-8"),
        "--requestheader-allowed-names=my-aggregator",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--proxy-client-cert-file",
        cert_file.to_str().expect("utf-8"),
        "--proxy-client-key-file",
        key_file.to_str().expect("utf-8"),
    ]);
    // The sample server reads the trust as kapi published it.
    let data = published_trust(&k);
    assert_eq!(data["requestheader-client-ca-file"], ca.cert_pem.as_str());
    assert_eq!(data["requestheader-allowed-names"], r#"["my-aggregator"]"#);
    let certs = tempfile::tempdir().expect("tempdir");
    let sample = start_sample_trusting(&ca_file, "my-aggregator", certs.path(), 0);
    let (ok, out, err) = register(&k, sample.port, &sample.ca, "30s");
    assert!(ok, "{out}\n{err}");
    // Through kapi, kubectl's user reaches the server: kapi presented the
    // caller's certificate, the only one the sample server trusts.
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], FLUNDER);
    assert!(ok, "{out}\n{err}\n{}", sample.proc.output());
    let (ok, out, err) = run(k
        .kubectl()
        .args(["get", "flunder", "my-flunder", "-o", "json"]));
    assert!(ok, "{err}");
    let f: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        f["metadata"]["annotations"]["wardle.example.com/created-by"],
        "kubernetes-admin"
    );
}
