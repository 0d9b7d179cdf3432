//! Memory per watcher (issue 22), against a release `kapi serve` on the
//! embedded store: 10,000 watches of one namespace's ConfigMaps over 10
//! HTTP/2 connections (1,000 streams each, kapi serve's limit). Prints
//! kapi's RSS with them open (target <= 150 MiB) and the growth per
//! watcher over the idle server (target <= 10 KiB), after checking that
//! every watcher is live: each of a few changes reaches all of them.
//! Run with `./bench/run watchers` (`--smoke` for 1,000 watchers).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use bytes::Bytes;
use common::{KapiProc, Target};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::json;

const CONNECTIONS: usize = 10;
const CHANGES: usize = 5;

/// Lowest RSS over a few samples: what the process holds, not a moment's peak.
fn settled_rss(pid: u32) -> Result<f64> {
    let mut low = f64::MAX;
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(500));
        low = low.min(common::rss_mib(pid).ok_or_else(|| anyhow::anyhow!("no VmRSS"))?);
    }
    Ok(low)
}

async fn run(bin: &str, watchers: usize) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(bin, &dir.path().join("data"), &[])?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    let mut writer = t.connect().await?;
    let coll = "/api/v1/namespaces/default/configmaps";
    let (status, list) = writer.call(Method::GET, t.uri(coll), Bytes::new()).await?;
    if status != StatusCode::OK {
        bail!("list: {status}");
    }
    let list: serde_json::Value = serde_json::from_slice(&list)?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    // Let the start-up work (bootstrap objects, controllers) settle.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let idle = settled_rss(kapi.pid())?;

    let conns = t.connect_many(CONNECTIONS).await?;
    let uri = t.uri(&format!(
        "{coll}?watch=true&resourceVersion={rv}&timeoutSeconds=3600"
    ));
    let opened = Arc::new(AtomicUsize::new(0));
    let events = Arc::new(AtomicUsize::new(0));
    let t_open = Instant::now();
    let mut tasks = Vec::with_capacity(watchers);
    for w in 0..watchers {
        let mut c = conns[w % CONNECTIONS].clone();
        let (uri, opened, events) = (uri.clone(), opened.clone(), events.clone());
        tasks.push(tokio::spawn(async move {
            let resp = c.send(Method::GET, uri, Bytes::new()).await?;
            if resp.status() != StatusCode::OK {
                bail!("watch: {}", resp.status());
            }
            opened.fetch_add(1, Ordering::Relaxed);
            let mut body = resp.into_body();
            while let Some(f) = body.frame().await {
                if let Some(d) = f?.data_ref() {
                    let n = d.iter().filter(|b| **b == b'\n').count();
                    events.fetch_add(n, Ordering::Relaxed);
                }
            }
            Ok(())
        }));
    }
    while opened.load(Ordering::Relaxed) < watchers {
        if t_open.elapsed() > Duration::from_secs(120) {
            bail!(
                "only {} of {watchers} watches opened in 120 s",
                opened.load(Ordering::Relaxed)
            );
        }
        if let Some(done) = tasks.iter().position(|t| t.is_finished()) {
            let r = tasks.swap_remove(done).await?;
            bail!("a watch ended while opening: {r:?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let opened_in = t_open.elapsed();
    let with_watchers = settled_rss(kapi.pid())?;

    // Every watcher is live: each change reaches all of them.
    for i in 0..CHANGES {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("watched-{i}")}, "data": {"k": "v"}});
        let (status, _) = writer
            .call(Method::POST, t.uri(coll), Bytes::from(body.to_string()))
            .await?;
        if status != StatusCode::CREATED {
            bail!("create: {status}");
        }
        let want = watchers * (i + 1);
        let t0 = Instant::now();
        while events.load(Ordering::Relaxed) < want {
            if t0.elapsed() > Duration::from_secs(60) {
                bail!(
                    "change {i} reached {} of {watchers} watchers in 60 s",
                    events.load(Ordering::Relaxed) - watchers * i
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let after_changes = settled_rss(kapi.pid())?;
    for t in &tasks {
        t.abort();
    }

    let per_watcher_kib = (with_watchers - idle) * 1024.0 / watchers as f64;
    let row = |what: String, value: String, target: &str, met: Option<bool>| {
        println!(
            "{what:<58} {value:>12}   {}{}",
            if target.is_empty() {
                String::new()
            } else {
                format!("target {target:<14}")
            },
            match met {
                Some(true) => " met",
                Some(false) => " MISSED",
                None => "",
            }
        )
    };
    row("RSS idle (MiB)".into(), format!("{idle:.1}"), "", None);
    row(
        format!("RSS with {watchers} watchers over {CONNECTIONS} HTTP/2 connections (MiB)"),
        format!("{with_watchers:.1}"),
        "<= 150",
        (watchers >= 10_000).then_some(with_watchers <= 150.0),
    );
    row(
        "memory per watcher (KiB, growth over idle / watchers)".into(),
        format!("{per_watcher_kib:.1}"),
        "<= 10",
        Some(per_watcher_kib <= 10.0),
    );
    row(
        format!("RSS after {CHANGES} changes reached every watcher (MiB)"),
        format!("{after_changes:.1}"),
        "",
        None,
    );
    row(
        format!("time to open {watchers} watches (s)"),
        format!("{:.2}", opened_in.as_secs_f64()),
        "",
        None,
    );
    drop(kapi);
    Ok(())
}

fn main() {
    common::bench_main("watch memory (issue 22)", |bin, smoke| {
        run(bin, if smoke { 1_000 } else { 10_000 })
    });
}
