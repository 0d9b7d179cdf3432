//! Start-up as envtest sees it: from process start to the first successful
//! authenticated request (the admin's GET of namespace `default`, which
//! envtest waits for), with etcd already running, for kapi started as
//! `kube-apiserver` with envtest's command line and for `kapi serve` on the
//! same etcd. Run with `./bench/run envtest` (or `cargo bench --bench envtest`).

mod common;

#[path = "../tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};

const RUNS: usize = 15;
/// Issue 24: ready for an authenticated request within 150 ms.
const TARGET_MS: f64 = 150.0;

fn ca(cn: &str) -> (String, KeyPair) {
    let key = KeyPair::generate().expect("key");
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (p.self_signed(&key).expect("ca").pem(), key)
}

fn leaf(ca: &(String, KeyPair), cn: &str, org: Option<&str>, server: bool) -> (String, String) {
    let key = KeyPair::generate().expect("key");
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    if let Some(o) = org {
        p.distinguished_name.push(DnType::OrganizationName, o);
    }
    if server {
        p.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().expect("ip"))];
    }
    let issuer = Issuer::from_ca_cert_pem(
        &ca.0,
        KeyPair::from_pem(&ca.1.serialize_pem()).expect("key"),
    )
    .expect("issuer");
    (
        p.signed_by(&key, &issuer).expect("leaf").pem(),
        key.serialize_pem(),
    )
}

/// envtest's cert dir; returns the admin's certificate and key.
fn cert_dir(dir: &Path) -> String {
    let serving = ca("serving");
    let (c, k) = leaf(&serving, "localhost", None, true);
    std::fs::write(dir.join("apiserver.crt"), c).expect("write");
    std::fs::write(dir.join("apiserver.key"), k).expect("write");
    let sa = ca("sa");
    std::fs::write(dir.join("sa-signer.crt"), &sa.0).expect("write");
    std::fs::write(dir.join("sa-signer.key"), sa.1.serialize_pem()).expect("write");
    let clients = ca("clients");
    std::fs::write(dir.join("client-cert-auth-ca.crt"), &clients.0).expect("write");
    let (c, k) = leaf(&clients, "admin", Some("system:masters"), false);
    format!("{c}{k}")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(16443)
}

/// Polls `GET /api/v1/namespaces/default` as the admin until 200.
fn until_served(
    child: &mut Child,
    port: u16,
    client: &reqwest::blocking::Client,
    t0: Instant,
) -> Duration {
    let url = format!("https://127.0.0.1:{port}/api/v1/namespaces/default");
    loop {
        if let Ok(r) = client.get(&url).send() {
            if r.status() == 200 {
                return t0.elapsed();
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited: {status}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "not served within 30 s"
        );
        std::thread::sleep(Duration::from_micros(500));
    }
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    sorted[(((sorted.len() - 1) as f64) * q).round() as usize]
}

fn main() {
    let smoke =
        std::env::args().any(|a| a == "--smoke") || std::env::var_os("KAPI_BENCH_SMOKE").is_some();
    let runs = if smoke { 2 } else { RUNS };
    let cluster = etcd::EtcdCluster::start(1);
    let endpoint = cluster.endpoints()[0].clone();
    let bin_dir = tempfile::tempdir().expect("tmp");
    let kube_apiserver = bin_dir.path().join("kube-apiserver");
    std::os::unix::fs::symlink(common::kapi_bin(), &kube_apiserver).expect("symlink");

    let mut envtest = Vec::new();
    let mut serve = Vec::new();
    for i in 0..runs {
        // envtest: a fresh cert dir and prefix each time, as each test package gets.
        let dir = tempfile::tempdir().expect("tmp");
        let admin = cert_dir(dir.path());
        let client = reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .identity(reqwest::Identity::from_pem(admin.as_bytes()).expect("identity"))
            .timeout(Duration::from_secs(2))
            .build()
            .expect("client");
        let port = free_port();
        let d = dir.path().display();
        let t0 = Instant::now();
        let mut child = Command::new(&kube_apiserver)
            .args([
                "--allow-privileged=true".to_string(),
                "--authorization-mode=RBAC".into(),
                "--bind-address=127.0.0.1".into(),
                format!("--cert-dir={d}"),
                format!("--client-ca-file={d}/client-cert-auth-ca.crt"),
                "--disable-admission-plugins=ServiceAccount".into(),
                format!("--etcd-servers={endpoint}"),
                format!("--etcd-prefix=/envtest-{i}"),
                format!("--secure-port={port}"),
                format!("--service-account-issuer=https://127.0.0.1:{port}/"),
                format!("--service-account-key-file={d}/sa-signer.crt"),
                format!("--service-account-signing-key-file={d}/sa-signer.key"),
                "--service-cluster-ip-range=10.0.0.0/24".into(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        envtest.push(until_served(&mut child, port, &client, t0).as_secs_f64() * 1000.0);
        stop(child);

        // kapi serve on the same etcd, its own admin certificate.
        let data = tempfile::tempdir().expect("tmp");
        let port = free_port();
        let t0 = Instant::now();
        let mut child = Command::new(common::kapi_bin())
            .args([
                "serve",
                "--secure-port",
                &port.to_string(),
                "--etcd-servers",
                &endpoint,
            ])
            .arg(format!("--etcd-prefix=/serve-{i}"))
            .arg("--data-dir")
            .arg(data.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let pki = data.path().join("pki");
        let admin_pem = loop {
            let c = std::fs::read_to_string(pki.join("admin.crt"));
            let k = std::fs::read_to_string(pki.join("admin.key"));
            if let (Ok(c), Ok(k)) = (c, k) {
                if c.contains("END CERTIFICATE") && k.contains("END PRIVATE KEY") {
                    break format!("{c}{k}");
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        let client = reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .identity(reqwest::Identity::from_pem(admin_pem.as_bytes()).expect("identity"))
            .timeout(Duration::from_secs(2))
            .build()
            .expect("client");
        serve.push(until_served(&mut child, port, &client, t0).as_secs_f64() * 1000.0);
        stop(child);
    }
    envtest.sort_by(|a, b| a.total_cmp(b));
    serve.sort_by(|a, b| a.total_cmp(b));
    println!("start to the first authenticated request, etcd running ({runs} runs each)");
    println!(
        "{:<52} {:>8} {:>8} {:>10}",
        "figure", "p50", "p90", "target"
    );
    println!(
        "{:<52} {:>8.1} {:>8.1} {:>10}",
        "kube-apiserver with envtest's flags (ms)",
        pct(&envtest, 0.5),
        pct(&envtest, 0.9),
        format!("<= {TARGET_MS}")
    );
    println!(
        "{:<52} {:>8.1} {:>8.1} {:>10}",
        "kapi serve --etcd-servers, empty data dir (ms)",
        pct(&serve, 0.5),
        pct(&serve, 0.9),
        "-"
    );
}
