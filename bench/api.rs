//! HTTPS API figures beside their targets (issues 4 and 12): creates/s,
//! gets/s and lists of 500 objects/s with p50/p99, at 1 and 32 clients,
//! against a `kapi serve` on the embedded store; RSS idle and with the
//! objects loaded. Run with `./bench/run api` (`--smoke` for a short pass).

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
    pki: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    use std::io::BufRead;
    let dir = tempfile::tempdir().expect("tmp");
    let mut child = Command::new(common::kapi_bin())
        .args([
            "serve",
            "--secure-port",
            "0",
            "--max-requests-inflight",
            "4000",
            "--max-mutating-requests-inflight",
            "2000",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kapi");
    let out = child.stdout.take().expect("stdout");
    let mut url = String::new();
    for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix("kapi listening on ") {
            url = rest.split_whitespace().next().unwrap_or("").to_string();
            break;
        }
    }
    let pki = dir.path().join("pki");
    Server {
        child,
        url,
        _dir: dir,
        pki,
    }
}

fn client(s: &Server) -> reqwest::Client {
    let ca = std::fs::read(s.pki.join("ca.crt")).expect("ca");
    let mut id = std::fs::read(s.pki.join("admin.crt")).expect("crt");
    id.extend(std::fs::read(s.pki.join("admin.key")).expect("key"));
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&ca).expect("ca")])
        .identity(reqwest::Identity::from_pem(&id).expect("id"))
        .http2_prior_knowledge()
        .build()
        .expect("client")
}

fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |k| k / 1024.0)
}

fn cm(ns: &str, name: &str) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"pad": "x".repeat(1024)}})
}

struct Figures {
    rate: f64,
    p50: f64,
    p99: f64,
}

/// Runs `op(i)` `total` times from `clients` tasks; op returns whether it succeeded.
async fn load<F, Fut>(clients: &[reqwest::Client], total: usize, op: F) -> Figures
where
    F: Fn(reqwest::Client, usize) -> Fut + Send + Sync + 'static + Clone,
    Fut: std::future::Future<Output = bool> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in clients {
        let (c, next, op) = (c.clone(), next.clone(), op.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let t = Instant::now();
                assert!(op(c.clone(), i).await, "request {i} failed");
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    let secs = start.elapsed().as_secs_f64();
    all.sort_by(|a, b| a.total_cmp(b));
    let p = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
    Figures {
        rate: total as f64 / secs,
        p50: p(0.5),
        p99: p(0.99),
    }
}

fn row(figure: &str, f: &Figures, target: &str) {
    println!(
        "{figure:<44} {:>10.0} {:>9.2} {:>9.2} {target:>12}",
        f.rate, f.p50, f.p99
    );
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let n_create = if smoke { 500 } else { 10_000 };
    let n_get = if smoke { 1_000 } else { 60_000 };
    let n_list = if smoke { 50 } else { 1_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("rt");
    let s = start();
    let url = s.url.clone();
    rt.block_on(async move {
        let one = vec![client(&s)];
        let many: Vec<reqwest::Client> = (0..32).map(|_| client(&s)).collect();
        for c in &many {
            let _ = c.get(format!("{url}/readyz")).send().await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let idle = rss_mib(s.child.id());
        for ns in ["bench1", "bench32", "list500"] {
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            one[0].post(format!("{url}/api/v1/namespaces")).json(&body).send().await.expect("ns");
        }
        println!("kapi HTTPS API, embedded store, 1 KiB ConfigMaps ({} creates, {} gets, {} lists per run)", n_create, n_get, n_list);
        println!("{:<44} {:>10} {:>9} {:>9} {:>12}", "figure", "per s", "p50 ms", "p99 ms", "target");
        for (label, clients, ns, target_c, target_g) in [("1 client", &one, "bench1", "-", "-"), ("32 clients", &many, "bench32", ">= 10000", ">= 30000")] {
            let u = url.clone();
            let ns = ns.to_string();
            let n = if clients.len() == 1 { n_create / 10 } else { n_create };
            let f = load(clients, n, move |c, i| {
                let (u, ns) = (u.clone(), ns.clone());
                async move {
                    c.post(format!("{u}/api/v1/namespaces/{ns}/configmaps")).json(&cm(&ns, &format!("cm{i}"))).send().await.is_ok_and(|r| r.status() == 201)
                }
            })
            .await;
            row(&format!("creates, {label}"), &f, target_c);
            let (u, nsn) = (url.clone(), if clients.len() == 1 { "bench1" } else { "bench32" }.to_string());
            let g = if clients.len() == 1 { n_get / 10 } else { n_get };
            let f = load(clients, g, move |c, i| {
                let (u, ns) = (u.clone(), nsn.clone());
                async move {
                    c.get(format!("{u}/api/v1/namespaces/{ns}/configmaps/cm{}", i % n)).send().await.is_ok_and(|r| r.status() == 200)
                }
            })
            .await;
            row(&format!("gets, {label}"), &f, target_g);
        }
        let loaded = rss_mib(s.child.id());
        let u = url.clone();
        load(&many, 500, move |c, i| {
            let u = u.clone();
            async move {
                c.post(format!("{u}/api/v1/namespaces/list500/configmaps")).json(&cm("list500", &format!("l{i}"))).send().await.is_ok_and(|r| r.status() == 201)
            }
        })
        .await;
        for (label, clients, target) in [("1 client", &one, "-"), ("32 clients", &many, ">= 600")] {
            let u = url.clone();
            let n = if clients.len() == 1 { n_list / 10 } else { n_list };
            let f = load(clients, n, move |c, _| {
                let u = u.clone();
                async move {
                    let Ok(r) = c.get(format!("{u}/api/v1/namespaces/list500/configmaps")).send().await else { return false };
                    r.status() == 200 && r.bytes().await.is_ok_and(|b| b.len() > 500 * 1024)
                }
            })
            .await;
            row(&format!("lists of 500, {label}"), &f, target);
        }
        println!("{:<44} {:>10.1} {:>31}", "RSS idle (MiB)", idle, "<= 30");
        println!("{:<44} {:>10.1} {:>31}", format!("RSS with {} ConfigMaps (MiB)", n_create + n_create / 10), loaded, "<= 64 (10k)");
        drop(s);
    });
}
