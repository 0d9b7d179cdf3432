//! `kapi::testing` as a test suite feels it: the time from
//! `Server::start()` to a client that has had its first answer, and the
//! memory each additional in-process server costs, beside `kapi serve`
//! started as a process. Run with `./bench/run testing`.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 40;
const SIDE_BY_SIDE: usize = 16;
const TARGET_P50_MS: f64 = 30.0;
const TARGET_P99_MS: f64 = 100.0;
const TARGET_MIB_PER_SERVER: f64 = 8.0;

fn rss_mib(pid: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    sorted[(((sorted.len() - 1) as f64) * q).round() as usize]
}

async fn start_to_first_answer() -> (f64, kapi::testing::Server) {
    let t0 = Instant::now();
    let server = kapi::testing::Server::start().await.expect("start");
    server
        .client()
        .apiserver_version()
        .await
        .expect("first answer");
    (t0.elapsed().as_secs_f64() * 1000.0, server)
}

fn kapi_serve_start() -> (f64, f64) {
    let dir = tempfile::tempdir().expect("tmp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let client = reqwest::blocking::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client");
    let t0 = Instant::now();
    let mut child = Command::new(common::kapi_bin())
        .args(["serve", "--secure-port", &port.to_string(), "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let url = format!("https://127.0.0.1:{port}/readyz");
    let ms = loop {
        if client.get(&url).send().is_ok_and(|r| r.status() == 200) {
            break t0.elapsed().as_secs_f64() * 1000.0;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "kapi serve never ready"
        );
        std::thread::sleep(Duration::from_micros(500));
    };
    std::thread::sleep(Duration::from_millis(500));
    let rss = rss_mib(&child.id().to_string());
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    (ms, rss)
}

fn main() {
    let smoke =
        std::env::args().any(|a| a == "--smoke") || std::env::var_os("KAPI_BENCH_SMOKE").is_some();
    let runs = if smoke { 3 } else { RUNS };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut starts = Vec::new();
    rt.block_on(async {
        // One warm-up: the process's one-time tables (protobuf, OpenAPI),
        // and the bootstrap objects later servers start from (their seed).
        let (_, s) = start_to_first_answer().await;
        s.shutdown().await;
        for _ in 0..runs {
            let (ms, s) = start_to_first_answer().await;
            starts.push(ms);
            s.shutdown().await;
        }
    });
    starts.sort_by(|a, b| a.total_cmp(b));
    let side_by_side = if smoke { 4 } else { SIDE_BY_SIDE };
    let (before, after) = rt.block_on(async {
        let (_, first) = start_to_first_answer().await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let before = rss_mib("self");
        let mut servers = Vec::new();
        for _ in 0..side_by_side {
            servers.push(start_to_first_answer().await.1);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = rss_mib("self");
        for s in servers {
            s.shutdown().await;
        }
        first.shutdown().await;
        (before, after)
    });
    let per_server = (after - before) / side_by_side as f64;
    let (serve_ms, serve_rss) = kapi_serve_start();
    println!("kapi::testing::Server ({runs} starts; {side_by_side} more servers side by side)");
    println!("{:<52} {:>10} {:>16}", "figure", "value", "target");
    println!(
        "{:<52} {:>10.1} {:>16}",
        "Server::start() to first answer, p50 (ms)",
        pct(&starts, 0.5),
        format!("<= {TARGET_P50_MS}")
    );
    println!(
        "{:<52} {:>10.1} {:>16}",
        "Server::start() to first answer, p99 (ms)",
        pct(&starts, 0.99),
        format!("<= {TARGET_P99_MS}")
    );
    println!(
        "{:<52} {:>10.1} {:>16}",
        "memory per additional server (MiB RSS)",
        per_server,
        format!("<= {TARGET_MIB_PER_SERVER}")
    );
    println!(
        "{:<52} {:>10.1} {:>16}",
        "kapi serve, process start to /readyz (ms)", serve_ms, "-"
    );
    println!(
        "{:<52} {:>10.1} {:>16}",
        "kapi serve, idle RSS (MiB)", serve_rss, "-"
    );
}
