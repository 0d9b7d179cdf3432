//! Issue 22: watches as upstream serves them.
//! - A watch without `timeoutSeconds` ends between one and two
//!   `--min-request-timeout`s.
//! - Bookmarks come at upstream's cadence: two seconds before the watch's
//!   deadline (and every minute on long watches), only when asked for.
//! - Watch-list (`sendInitialEvents`), as kube-runtime's `watcher` uses it
//!   with `InitialListStrategy::StreamingList`.
//! - 2,000 watchers, 200 of which never read, while 2,000 objects change:
//!   the 1,800 readers see every event, the 200 are closed, RSS stays bounded.
//! - A watcher that never reads does not hold up other connections'
//!   events (kapi gathers a fan-out's writes while watches still have
//!   events to take, but not for one that never takes its own).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::watch::{count_event_ends, rv_of, Next, WatchLines};
use common::{rawtls, rss_kib, Kapi};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

#[test]
fn watches_without_a_timeout_end_between_one_and_two_min_request_timeouts() {
    let k = Kapi::start(&["--min-request-timeout", "2"]);
    let c = k.admin_client();
    let url = format!("{}/api/v1/namespaces/default/configmaps?watch=true", k.url);
    common::runtime().block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let (c, url) = (c.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let t0 = Instant::now();
                let mut r = c.get(&url).send().await.expect("watch");
                assert_eq!(r.status(), 200);
                while r.chunk().await.expect("chunk").is_some() {}
                t0.elapsed()
            }));
        }
        let mut lasted = Vec::new();
        for t in tasks {
            lasted.push(t.await.expect("task"));
        }
        for d in &lasted {
            assert!(
                *d >= Duration::from_millis(1900) && *d < Duration::from_secs(5),
                "a watch lasted {d:?}: {lasted:?}"
            );
        }
        // Spread at random, not all at the same moment.
        let (min, max) = (lasted.iter().min().copied(), lasted.iter().max().copied());
        assert!(
            max.zip(min)
                .is_some_and(|(a, b)| a - b > Duration::from_millis(50)),
            "{lasted:?}"
        );
    });
}

/// The resourceVersion of a list of `collection`.
async fn list_rv(c: &reqwest::Client, collection: &str) -> i64 {
    let list: Value = c
        .get(collection)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("list body");
    rv_of(&list).expect("list resourceVersion")
}

/// Every event of a watch until it ends, with when each arrived.
async fn events_until_end(c: &reqwest::Client, url: &str) -> Vec<(Duration, Value)> {
    let t0 = Instant::now();
    let r = c.get(url).send().await.expect("watch");
    assert_eq!(r.status(), 200, "{url}");
    let mut lines = WatchLines::new(r);
    let mut seen = Vec::new();
    loop {
        match lines.next(Duration::from_secs(20)).await {
            Next::Event(e) => seen.push((t0.elapsed(), e)),
            Next::End => return seen,
            other => panic!("{url}: {other:?} after {seen:?}"),
        }
    }
}

/// upstream's cacher sends a watcher that allows bookmarks one two seconds
/// before its deadline (so a client re-watching on timeout resumes from a
/// recent resourceVersion), and none to a watcher that did not ask.
#[test]
fn a_bookmark_comes_two_seconds_before_the_watch_ends() {
    let k = Kapi::start(&[]);
    let c = k.admin_client();
    common::runtime().block_on(async {
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let listed = list_rv(&c, &base).await;
        let with = format!(
            "{base}?watch=true&resourceVersion={listed}&allowWatchBookmarks=true&timeoutSeconds=5"
        );
        let without = format!("{base}?watch=true&resourceVersion={listed}&timeoutSeconds=5");
        let (with, without) =
            futures::join!(events_until_end(&c, &with), events_until_end(&c, &without));
        assert!(without.is_empty(), "no bookmarks unasked: {without:?}");
        // A timeout beyond any clock is a watch that does not time out.
        let r = c
            .get(format!("{base}?watch=true&timeoutSeconds={}", i64::MAX))
            .send()
            .await
            .expect("watch");
        assert_eq!(r.status(), 200);
        assert_eq!(with.len(), 1, "one bookmark in a 5 s watch: {with:?}");
        let (at, e) = &with[0];
        assert_eq!(e["type"], "BOOKMARK", "{e}");
        assert_eq!(e["object"]["kind"], "ConfigMap", "{e}");
        assert_eq!(e["object"]["apiVersion"], "v1", "{e}");
        assert!(
            rv_of(&e["object"]).is_some_and(|rv| rv >= listed),
            "the bookmark carries the cache's resourceVersion: {e}"
        );
        // Due at 3 s; looked for every second.
        assert!(
            *at >= Duration::from_millis(2500) && *at < Duration::from_millis(4800),
            "bookmark at {at:?}, want about 3 s (2 s before the 5 s deadline)"
        );
    });
}

async fn kube_client(k: &Kapi) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(&k.kubeconfig).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("kube config");
    kube::Client::try_from(cfg).expect("kube client")
}

fn names(cms: &[k8s_openapi::api::core::v1::ConfigMap]) -> Vec<String> {
    let mut v: Vec<String> = cms.iter().filter_map(|c| c.metadata.name.clone()).collect();
    v.sort();
    v
}

type WatcherEvents = futures::stream::BoxStream<
    'static,
    Result<
        kube::runtime::watcher::Event<k8s_openapi::api::core::v1::ConfigMap>,
        kube::runtime::watcher::Error,
    >,
>;

async fn next(
    events: &mut WatcherEvents,
) -> kube::runtime::watcher::Event<k8s_openapi::api::core::v1::ConfigMap> {
    tokio::time::timeout(Duration::from_secs(20), events.try_next())
        .await
        .expect("a watcher event within 20 s")
        .expect("watcher error")
        .expect("watcher stream ended")
}

/// kube-runtime's `watcher` with `InitialListStrategy::StreamingList`: the
/// initial state comes as a watch (`sendInitialEvents=true`,
/// `resourceVersionMatch=NotOlderThan`), ended by the bookmark annotated
/// `k8s.io/initial-events-end`; then changes follow on the same stream,
/// and after a timeout the watcher resumes from the last resourceVersion.
#[test]
fn kube_runtimes_streaming_list_gets_the_initial_state_then_changes() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
    use kube::runtime::watcher::{self, Event};

    let k = Kapi::start(&[]);
    common::runtime().block_on(async {
        let client = kube_client(&k).await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let cm = |name: &str, team: &str| -> ConfigMap {
            serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"team": team}},
                "data": {"k": "v"}
            }))
            .expect("configmap")
        };
        let mut want = Vec::new();
        for i in 0..30 {
            let name = format!("sl-{i:02}");
            cms.create(&PostParams::default(), &cm(&name, "a"))
                .await
                .expect("create");
            want.push(name);
        }
        cms.create(&PostParams::default(), &cm("other-team", "b"))
            .await
            .expect("create");

        // A short timeout, so the stream also ends and is resumed.
        let config = watcher::Config::default()
            .streaming_lists()
            .labels("team=a")
            .timeout(4);
        let mut events: WatcherEvents = watcher::watcher(cms.clone(), config).boxed();
        assert!(matches!(next(&mut events).await, Event::Init), "Init first");
        let mut initial = Vec::new();
        loop {
            match next(&mut events).await {
                Event::InitApply(o) => initial.push(o),
                Event::InitDone => break,
                other => panic!("during the initial list: {other:?}"),
            }
        }
        assert_eq!(names(&initial), want, "the initial events are the state");

        // Changes after the initial state, on the same watch.
        cms.create(&PostParams::default(), &cm("sl-new", "a"))
            .await
            .expect("create");
        match next(&mut events).await {
            Event::Apply(o) => assert_eq!(o.metadata.name.as_deref(), Some("sl-new")),
            other => panic!("want Apply(sl-new), got {other:?}"),
        }
        // Leaving the selector is a deletion for this watcher.
        cms.patch(
            "sl-00",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "b"}}})),
        )
        .await
        .expect("relabel");
        match next(&mut events).await {
            Event::Delete(o) => assert_eq!(o.metadata.name.as_deref(), Some("sl-00")),
            other => panic!("want Delete(sl-00), got {other:?}"),
        }

        // Past the 4 s timeout the watcher re-watches from the last
        // resourceVersion (a bookmark's, at 2 s) without relisting: the
        // next change comes as Apply, with no Init in between.
        tokio::time::sleep(Duration::from_secs(6)).await;
        cms.delete("sl-01", &DeleteParams::default())
            .await
            .expect("delete");
        match next(&mut events).await {
            Event::Delete(o) => assert_eq!(o.metadata.name.as_deref(), Some("sl-01")),
            other => panic!("want Delete(sl-01) after the resume, got {other:?}"),
        }
    });
}

// ---------------------------------------------------------------------------
// 2,000 watchers, 200 of which never read
// ---------------------------------------------------------------------------

const READERS: usize = 1_800;
/// Streams per HTTP/2 connection for the readers (kapi serve allows 1,000).
const READER_CONNECTIONS: usize = 4;
const NON_READERS: usize = 200;
const NON_READER_CONNECTIONS: usize = 2;
const CHANGES: usize = 2_000;
/// Writers never run further ahead of the slowest reader than this: the
/// test checks that kapi delivers everything and cuts off only those that
/// do not read, not how fast a debug build on two busy cores fans out
/// (`./bench/run` measures that). A reader's buffer in kapi holds 1,024.
const MAX_LAG: usize = 400;
/// Bound on kapi's RSS growth from before the watchers connected to its
/// peak while the 2,000 changes reach them. What may legitimately grow:
/// per watcher a task, two small channels and an HTTP/2 stream; for each
/// of the 200 that never read, up to 1,024 queued events (Arcs shared by
/// all), 64 encoded lines and a flow-control window of data; the 2,000
/// objects in the watch cache and storage. Were every event queued for
/// every non-reader as bytes, that alone would be 200 x ~1 MiB. Measured
/// in a debug build: +63 MiB (+181 MiB before each event's JSON line was
/// shared by its watchers rather than copied for each).
const WATCHERS_GROWTH_BOUND_KIB: u64 = 160 * 1024;

type H2Sender = hyper::client::conn::http2::SendRequest<http_body_util::Empty<bytes::Bytes>>;

/// An HTTP/2 connection to kapi as the admin; `window` sets the stream
/// window (a body never polled keeps at most that much in the client).
async fn h2_connection(k: &Kapi, window: u32) -> (H2Sender, tokio::task::JoinHandle<()>) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    let tls = rawtls::connect(k, &[b"h2"]).await.expect("TLS connection");
    assert_eq!(
        tls.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "HTTP/2 negotiated"
    );
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .initial_stream_window_size(window)
        .initial_connection_window_size(8 << 20)
        .handshake::<_, http_body_util::Empty<bytes::Bytes>>(TokioIo::new(tls))
        .await
        .expect("HTTP/2 handshake");
    let conn = tokio::spawn(async move {
        let _ = conn.await;
    });
    (sender, conn)
}

async fn open_watch(sender: &H2Sender, uri: &str) -> hyper::body::Incoming {
    let mut sender = sender.clone();
    let req = http::Request::get(uri)
        .body(http_body_util::Empty::new())
        .expect("request");
    let resp = tokio::time::timeout(Duration::from_secs(60), sender.send_request(req))
        .await
        .expect("watch answered within 60 s")
        .expect("watch");
    assert_eq!(resp.status(), 200, "watch status");
    resp.into_body()
}

/// A watch whose client never reads keeps an event in kapi untaken (its
/// stream's window is shut). Each change still reaches a reader on
/// another connection at once: the reader's connection gathers its writes
/// while some watch has an event to take, but gives that up when none is
/// taken for a millisecond. Without that bound it would hold the
/// reader's events for as long as the other client stalls.
#[test]
fn a_watcher_that_never_reads_does_not_hold_up_other_connections() {
    let k = Kapi::start(&[]);
    let admin = k.admin_client();
    common::runtime().block_on(async {
        let base = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let rv = list_rv(&admin, &base).await;
        let uri = format!("{base}?watch=true&labelSelector=stall%3Dtest&resourceVersion={rv}");
        // Its window takes a few dozen bytes: the first event shuts it,
        // and the next ones stay in kapi.
        let (stalled_conn, _a) = h2_connection(&k, 64).await;
        let _stalled = open_watch(&stalled_conn, &uri).await;
        let (reader_conn, _b) = h2_connection(&k, 1 << 20).await;
        let count = Arc::new(AtomicUsize::new(0));
        let reader = tokio::spawn(read_events(
            open_watch(&reader_conn, &uri).await,
            count.clone(),
        ));
        for i in 1..=5 {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("stall-{i}"), "labels": {"stall": "test"}}});
            let r = admin.post(&base).json(&body).send().await.expect("create");
            assert_eq!(r.status(), 201, "create stall-{i}");
            let t = Instant::now();
            while count.load(Ordering::Relaxed) < i {
                assert!(
                    t.elapsed() < Duration::from_secs(5),
                    "change {i} did not reach the reader in 5 s while another watcher stalled \
                     ({} events arrived)",
                    count.load(Ordering::Relaxed)
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        reader.abort();
    });
}

/// Reads a watch body, counting events into `count`, until it ends.
async fn read_events(mut body: hyper::body::Incoming, count: Arc<AtomicUsize>) -> &'static str {
    use http_body_util::BodyExt;
    let mut prev = 0u8;
    loop {
        match body.frame().await {
            None => return "END_STREAM",
            Some(Err(_)) => return "RST_STREAM",
            Some(Ok(f)) => {
                if let Some(d) = f.data_ref().filter(|d| !d.is_empty()) {
                    count.fetch_add(count_event_ends(prev, d), Ordering::Relaxed);
                    prev = d[d.len() - 1];
                }
            }
        }
    }
}

fn min_count(counts: &[Arc<AtomicUsize>]) -> usize {
    counts
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .min()
        .unwrap_or(0)
}

/// `apiserver_terminated_watchers_total` for core/configmaps.
async fn terminated_watchers(c: &reqwest::Client, url: &str) -> u64 {
    let text = c
        .get(format!("{url}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics body");
    text.lines()
        .find_map(|l| {
            l.strip_prefix(
                "apiserver_terminated_watchers_total{group=\"\",resource=\"configmaps\"} ",
            )
        })
        .map(|n| n.trim().parse().expect("a counter"))
        .unwrap_or(0)
}

/// The test: 2,000 watchers on one resource, 200 of which never
/// read, while 2,000 objects change. The 1,800 readers see every event;
/// the 200 are closed (counted in `apiserver_terminated_watchers_total`,
/// and once they read, their streams end well short of the 2,000 events);
/// kapi's RSS stays under [`WATCHERS_GROWTH_BOUND_KIB`] of growth.
#[test]
fn two_thousand_watchers_of_which_two_hundred_never_read() {
    let k = Kapi::start(&[]);
    let pid = k.child.id();
    let admin = k.admin_client();
    let ns = "fan-out";
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut report = Vec::new();
    let t_test = Instant::now();
    rt.block_on(async {
        let r = admin
            .post(format!("{}/api/v1/namespaces", k.url))
            .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .send()
            .await
            .expect("create namespace");
        assert_eq!(r.status(), 201);
        let base = format!("{}/api/v1/namespaces/{ns}/configmaps", k.url);
        let rv = list_rv(&admin, &base).await;
        // Only this test's objects: the namespace also gets its
        // kube-root-ca.crt ConfigMap from the root-CA publisher.
        let uri = format!(
            "{base}?watch=true&labelSelector=fan%3Dout&resourceVersion={rv}&timeoutSeconds=900"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        let idle = rss_kib(pid);
        report.push(format!("RSS before the watchers {} MiB", idle / 1024));

        // The readers: 1,800 streams over 4 connections, each read as it comes.
        let mut conns = Vec::new();
        let mut counts = Vec::new();
        let mut readers = Vec::new();
        for _ in 0..READER_CONNECTIONS {
            let (sender, conn) = h2_connection(&k, 1 << 20).await;
            conns.push(conn);
            let bodies = futures::future::join_all(
                (0..READERS / READER_CONNECTIONS).map(|_| open_watch(&sender, &uri)),
            )
            .await;
            for body in bodies {
                let count = Arc::new(AtomicUsize::new(0));
                counts.push(count.clone());
                readers.push(tokio::spawn(read_events(body, count)));
            }
        }
        // The 200 that never read: their bodies are held, never polled, so
        // each stream's 64 KiB window closes.
        let mut idle_bodies = Vec::new();
        for _ in 0..NON_READER_CONNECTIONS {
            let (sender, conn) = h2_connection(&k, 65_535).await;
            conns.push(conn);
            idle_bodies.extend(
                futures::future::join_all(
                    (0..NON_READERS / NON_READER_CONNECTIONS).map(|_| open_watch(&sender, &uri)),
                )
                .await,
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let connected = rss_kib(pid);
        report.push(format!(
            "RSS with {} watchers {} MiB (+{} KiB each)",
            READERS + NON_READERS,
            connected / 1024,
            connected.saturating_sub(idle) / (READERS + NON_READERS) as u64
        ));

        // The changes: 2,000 creates from 8 writers, paced by the readers.
        let peak = Arc::new(AtomicUsize::new(connected as usize));
        let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let sampler = {
            let (peak, sampling) = (peak.clone(), sampling.clone());
            std::thread::spawn(move || {
                // Quietly ends if kapi is gone (a failed assertion stops it).
                while sampling.load(Ordering::Relaxed)
                    && std::path::Path::new(&format!("/proc/{pid}/status")).exists()
                {
                    peak.fetch_max(rss_kib(pid) as usize, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        let writers: Vec<reqwest::Client> = (0..4).map(|_| k.admin_client()).collect();
        let t_write = Instant::now();
        for batch in (0..CHANGES).step_by(100) {
            let waited = Instant::now();
            while min_count(&counts) + MAX_LAG < batch {
                assert!(
                    waited.elapsed() < Duration::from_secs(120),
                    "readers stalled at {} of {batch} events",
                    min_count(&counts)
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let failed: Vec<String> = futures::stream::iter(batch..(batch + 100).min(CHANGES))
                .map(|i| {
                    let c = writers[i % writers.len()].clone();
                    let base = base.clone();
                    async move {
                        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": format!("w-{i:05}"), "labels": {"fan": "out"}},
                            "data": {"k": "v"}});
                        match c.post(&base).json(&body).send().await {
                            Ok(r) if r.status() == 201 => None,
                            Ok(r) => Some(format!("w-{i:05}: {}", r.status())),
                            Err(e) => Some(format!("w-{i:05}: {e}")),
                        }
                    }
                })
                .buffer_unordered(8)
                .filter_map(|f| async move { f })
                .collect()
                .await;
            assert!(failed.is_empty(), "creates failed: {failed:?}");
        }
        let wrote = t_write.elapsed();
        // Every reader gets every event.
        let waited = Instant::now();
        while min_count(&counts) < CHANGES && waited.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let delivered = t_write.elapsed();
        let short: Vec<usize> = counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .filter(|n| *n != CHANGES)
            .collect();
        report.push(format!(
            "{CHANGES} creates in {wrote:.1?}, all delivered to the readers after {delivered:.1?}"
        ));
        assert!(
            short.is_empty(),
            "{} of {READERS} readers did not get exactly {CHANGES} events: {:?}\n{}",
            short.len(),
            &short[..short.len().min(20)],
            report.join("\n")
        );
        let ended: Vec<_> = readers.iter().filter(|r| r.is_finished()).collect();
        assert!(
            ended.is_empty(),
            "{} readers' watches ended early",
            ended.len()
        );

        // The 200 are closed: counted by kapi, and their streams end.
        let terminated = terminated_watchers(&admin, &k.url).await;
        report.push(format!("apiserver_terminated_watchers_total {terminated}"));
        assert!(
            terminated >= NON_READERS as u64,
            "kapi closed {terminated} watchers, want the {NON_READERS} that never read\n{}",
            report.join("\n")
        );
        let drained = futures::future::join_all(idle_bodies.into_iter().map(|b| async move {
            let n = Arc::new(AtomicUsize::new(0));
            let how = tokio::time::timeout(Duration::from_secs(60), read_events(b, n.clone()))
                .await
                .unwrap_or("still open after 60 s");
            (how, n.load(Ordering::Relaxed))
        }))
        .await;
        sampling.store(false, Ordering::Relaxed);
        let _ = sampler.join();
        let peak = peak.load(Ordering::Relaxed) as u64;
        let max_got = drained.iter().map(|(_, n)| *n).max().unwrap_or(0);
        report.push(format!(
            "non-readers, read at last: {max_got} events at most, ended {:?}",
            drained
                .iter()
                .map(|(h, _)| *h)
                .collect::<std::collections::BTreeSet<_>>()
        ));
        report.push(format!(
            "peak RSS {} MiB: +{} MiB over the RSS before the watchers (bound +{} MiB)",
            peak / 1024,
            peak.saturating_sub(idle) / 1024,
            WATCHERS_GROWTH_BOUND_KIB / 1024
        ));
        report.push(format!("test took {:.1?}", t_test.elapsed()));
        eprintln!("two_thousand_watchers:\n  {}", report.join("\n  "));
        for (how, n) in &drained {
            assert!(
                matches!(*how, "END_STREAM" | "RST_STREAM") && *n < CHANGES,
                "a watcher that never read ended {how} after {n} of {CHANGES} events\n{}",
                report.join("\n")
            );
        }
        assert!(
            peak.saturating_sub(idle) <= WATCHERS_GROWTH_BOUND_KIB,
            "{}",
            report.join("\n")
        );
        for r in readers {
            r.abort();
        }
        for c in conns {
            c.abort();
        }
    });
}
