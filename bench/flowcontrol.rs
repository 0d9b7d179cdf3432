//! API Priority and Fairness under a flood (issue 22), against a release
//! `kapi serve` on the embedded store: 64 clients of one ordinary user list
//! 5,000 ConfigMaps back to back while system:masters gets one object; the
//! p99 of those gets is the figure (target <= 50 ms).
//! Run with `./bench/run flowcontrol` (`--smoke` for a seconds-long pass).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use bytes::Bytes;
use common::{KapiProc, Op, Target};
use http::{Method, StatusCode};
use serde_json::json;

const FLOOD_CLIENTS: usize = 64;

async fn run(bin: &str, objects: usize, secs: u64) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(bin, &dir.path().join("data"), &[])?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    let conns = t.connect_many(32).await?;
    let bodies: Vec<Bytes> = (0..objects)
        .map(|i| {
            Bytes::from(
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}})
                .to_string(),
            )
        })
        .collect();
    let op = Op {
        method: Method::POST,
        uris: vec![t.uri("/api/v1/namespaces/default/configmaps")],
        bodies,
        expect: StatusCode::CREATED,
        min_len: 0,
    };
    let st = common::load(&conns, objects, op, None, None).await;
    if st.errors > 0 {
        bail!("filling: {} errors, first: {:?}", st.errors, st.first_error);
    }
    // The flooder may list (an ordinary user with the view role).
    let (status, body) = conns[0]
        .clone()
        .call(
            Method::POST,
            t.uri("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"),
            Bytes::from(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": "flooder-view"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "flooder"}]})
                .to_string(),
            ),
        )
        .await?;
    if status != StatusCode::CREATED {
        bail!(
            "binding the flooder: {status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    // The object count the width estimator reads is refreshed every 10 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let flood_conns = t.connect_many(FLOOD_CLIENTS).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let (served, shed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut flood = Vec::new();
    for c in flood_conns {
        // An ordinary user (global-default), by impersonation.
        let mut c = c.impersonating("flooder");
        let (stop, served, shed) = (stop.clone(), served.clone(), shed.clone());
        let uri = t.uri("/api/v1/namespaces/default/configmaps");
        flood.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match c.call_len(Method::GET, uri.clone(), Bytes::new()).await {
                    Ok((s, _)) if s == StatusCode::TOO_MANY_REQUESTS => {
                        shed.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Ok((s, _)) if s == StatusCode::OK => {
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => break,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The measuring client has its own thread and runtime, as a separate
    // kubectl would: the flood's client work must not queue it.
    let measure_target = Target::from_kubeconfig(&kapi.kubeconfig)?;
    let samples = std::thread::spawn(move || -> Result<Vec<f64>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            let mut admin = measure_target.connect().await?;
            let uri = measure_target.uri("/api/v1/namespaces/default/configmaps/cm-1");
            let mut samples = Vec::new();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(secs) {
                let s = Instant::now();
                let (status, _) = admin.call(Method::GET, uri.clone(), Bytes::new()).await?;
                if status != StatusCode::OK {
                    bail!("system:masters get: {status}");
                }
                samples.push(s.elapsed().as_secs_f64() * 1000.0);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(samples)
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the measuring thread panicked"))??;
    let mut samples = samples;
    stop.store(true, Ordering::Relaxed);
    for f in flood {
        let _ = f.await;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let p99 = common::pct(&samples, 0.99);
    let p50 = common::pct(&samples, 0.50);
    println!(
        "flood: {FLOOD_CLIENTS} clients listing {objects} objects: {} lists served, {} shed (429), over {secs} s",
        served.load(Ordering::Relaxed),
        shed.load(Ordering::Relaxed)
    );
    println!(
        "{:<58} {:>12}   target {:<22} {}",
        format!(
            "system:masters get during the flood, p99 of {}",
            samples.len()
        ),
        format!("{p99:.2} ms"),
        "<= 50 ms",
        if p99 <= 50.0 { "met" } else { "MISSED" }
    );
    println!("{:<58} {:>12}", "  (p50)", format!("{p50:.2} ms"));
    drop(kapi);
    Ok(())
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let (objects, secs) = if smoke { (500, 3) } else { (5_000, 20) };
    let bin = common::kapi_bin();
    let bin = bin.as_str();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "API Priority and Fairness (issue 22){}",
        if smoke { ", smoke sizes" } else { "" }
    );
    if let Err(e) = rt.block_on(run(bin, objects, secs)) {
        eprintln!("flowcontrol bench failed: {e:#}");
        std::process::exit(1);
    }
}
