//! Storage-level figures beside their targets (issue 3):
//! - embedded store: creates/s with 64 concurrent writers, durable (group commit);
//! - etcd backend: creates/s against the raw transaction rate the same client
//!   reaches on the same etcd;
//! - one event reaching 10,000 watchers of one resource (p50/p99).
//! Run with `./bench/run storage` (`--smoke` for a seconds-long pass).

#[path = "../tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kapi::storage::backend::Backend;
use kapi::storage::cacher::{Cacher, Filter, ObjectAttrs, WatchMessage, WatchOptions, WatchStart};
use kapi::storage::store::{ListOptions, Store};
use tokio_util::sync::CancellationToken;

const WRITERS: usize = 64;

fn value(i: usize) -> Bytes {
    let pad = "x".repeat(1000);
    Bytes::from(format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm{i}","namespace":"b"}},"data":{{"pad":"{pad}"}}}}"#
    ))
}

/// Creates `total` keys from `WRITERS` tasks; returns creates per second.
async fn create_rate(backend: Arc<dyn Backend>, prefix: &str, total: usize) -> f64 {
    let store = Store::new(backend);
    let per = total / WRITERS;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (store, prefix) = (store.clone(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let n = w * per + i;
                store
                    .create(&format!("{prefix}{n}"), value(n))
                    .await
                    .expect("create");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    (per * WRITERS) as f64 / start.elapsed().as_secs_f64()
}

/// The same creates as raw etcd transactions, without kapi's backend.
async fn raw_etcd_rate(endpoints: &[String], prefix: &str, total: usize) -> f64 {
    let client = etcd_client::Client::connect(endpoints, None)
        .await
        .expect("connect");
    let per = total / WRITERS;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (mut c, prefix) = (client.clone(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let txn =
                    common::create_if_absent(format!("{prefix}{}", w * per + i), value(i).to_vec());
                c.txn(txn).await.expect("txn");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    (per * WRITERS) as f64 / start.elapsed().as_secs_f64()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

async fn fan_out(backend: Arc<dyn Backend>, watchers: usize) -> (f64, f64) {
    let store = Store::new(backend);
    store
        .create("/registry/fan/ns/seed", value(0))
        .await
        .expect("seed");
    let stop = CancellationToken::new();
    let attrs: kapi::storage::cacher::AttrsFn = Arc::new(|_: &[u8]| Some(ObjectAttrs::default()));
    let cache = Cacher::new(
        "/registry/fan/".into(),
        (String::new(), "configmaps".into()),
        store.clone(),
        attrs,
        stop.clone(),
    );
    let rv = cache
        .list(&Filter::default(), &ListOptions::default())
        .await
        .expect("list")
        .resource_version;
    let mut rxs = Vec::with_capacity(watchers);
    for _ in 0..watchers {
        let opts = WatchOptions {
            start: WatchStart::After(rv),
            filter: Filter::default(),
            send_initial_events: false,
            bookmarks: false,
            deadline: None,
        };
        rxs.push(cache.watch(opts).await.expect("watch"));
    }
    let (tx, mut done) = tokio::sync::mpsc::unbounded_channel();
    let start = Instant::now();
    for mut rx in rxs {
        let tx = tx.clone();
        tokio::spawn(async move {
            if let Some(WatchMessage::Event { .. }) = rx.recv().await {
                let _ = tx.send(start.elapsed().as_secs_f64() * 1000.0);
            }
        });
    }
    drop(tx);
    let write_at = Instant::now();
    store
        .create("/registry/fan/ns/event", value(1))
        .await
        .expect("event");
    let offset = write_at.duration_since(start).as_secs_f64() * 1000.0;
    let mut lat = Vec::with_capacity(watchers);
    while let Some(ms) = done.recv().await {
        lat.push(ms - offset);
    }
    stop.cancel();
    assert_eq!(lat.len(), watchers, "every watcher sees the event");
    lat.sort_by(|a, b| a.total_cmp(b));
    (pct(&lat, 0.5), pct(&lat, 0.99))
}

fn row(figure: &str, value: String, target: &str) {
    println!("{figure:<58} {value:>16} {target:>14}");
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let total = if smoke { 2_048 } else { 64_000 };
    let watchers = if smoke { 1_000 } else { 10_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        println!(
            "kapi storage ({} creates of 1 KiB, {WRITERS} writers; {watchers} watchers)",
            total
        );
        println!("{:<58} {:>16} {:>14}", "figure", "value", "target");
        let dir = tempfile::tempdir().expect("tmp");
        let embedded: Arc<dyn Backend> =
            Arc::new(kapi::storage::embedded::Embedded::open(dir.path()).expect("open"));
        let rate = create_rate(embedded.clone(), "/registry/configmaps/b/cm", total).await;
        row(
            "embedded: durable creates/s (64 writers)",
            format!("{rate:.0}"),
            ">= 20000",
        );
        let (p50, p99) = fan_out(embedded.clone(), watchers).await;
        row(
            &format!("embedded: one event to {watchers} watchers, p50/p99 (ms)"),
            format!("{p50:.1} / {p99:.1}"),
            "p99 <= 1000",
        );
        embedded.close().await;

        let cluster = tokio::task::spawn_blocking(|| etcd::EtcdCluster::start(1))
            .await
            .expect("etcd");
        let endpoints = cluster.endpoints();
        let raw = raw_etcd_rate(&endpoints, "/raw/configmaps/b/cm", total).await;
        let cfg = kapi::storage::etcd::EtcdConfig {
            endpoints: endpoints.clone(),
            ..Default::default()
        };
        let backend: Arc<dyn Backend> = Arc::new(
            kapi::storage::etcd::Etcd::connect(&cfg, "/registry")
                .await
                .expect("connect"),
        );
        let rate = create_rate(backend.clone(), "/registry/configmaps/b/cm", total).await;
        row(
            "etcd: raw transactional puts/s (same client, 64 writers)",
            format!("{raw:.0}"),
            "-",
        );
        row(
            "etcd backend: creates/s (64 writers)",
            format!("{rate:.0}"),
            "-",
        );
        row(
            "etcd backend / raw",
            format!("{:.0}%", rate / raw * 100.0),
            ">= 80%",
        );
        let (p50, p99) = fan_out(backend, watchers).await;
        row(
            &format!("etcd: one event to {watchers} watchers, p50/p99 (ms)"),
            format!("{p50:.1} / {p99:.1}"),
            "p99 <= 1000",
        );
        drop(cluster);
        let _ = Duration::ZERO;
    });
}
