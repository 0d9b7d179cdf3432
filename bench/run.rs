//! The benchmark runner (issue 12): `./bench/run` builds kapi in release
//! mode and measures, with one load generator over HTTPS (HTTP/2, one
//! connection per client), kapi on its embedded store, kapi on a real etcd
//! started on loopback, and with `--against KUBECONFIG` that API server too:
//! start-up, RSS, creates/gets/lists per second at 1 and 32 clients, watch
//! fan-out to 1,000 watchers and a `kubectl apply` of 50 objects. Prints a
//! table per figure (each server, ratios, target) and writes
//! `bench/results/<timestamp>.json` and `bench/results/latest.json`.
//! `--smoke` runs everything with small counts in seconds.

#[path = "../tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

mod baseline;
mod callgrind;
mod chart;
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};
use bytes::Bytes;
use common::{Conn, Fanout, KapiProc, Op, Stats, Target};
use http::{Method, StatusCode};
use serde_json::{json, Value};

/// The namespace every server is loaded in (made and deleted by the run).
const NS: &str = "kapi-bench";
const CLIENTS: usize = 32;
const WATCH_CONNS: usize = 32;

/// Upstream kube-apiserver (v1.34, on etcd) measured on this kind of machine.
mod upstream_ref {
    pub const START_MS: f64 = 3000.0;
    pub const RSS_IDLE_MIB: f64 = 229.0;
    pub const RSS_LOADED_MIB: f64 = 391.0;
    pub const CREATES_32: f64 = 1800.0;
    pub const GETS_32: f64 = 3800.0;
    pub const LISTS_32: f64 = 200.0;
    pub const WATCH_P99_MS: f64 = 40.0;
}

struct Sizes {
    smoke: bool,
    startup_runs: usize,
    /// Creates at 1 client; also the objects each list returns.
    list_objects: usize,
    /// Creates at 32 clients (list_objects + this = the "10,000 ConfigMaps").
    creates_32: usize,
    gets_1: usize,
    gets_32: usize,
    lists_1: usize,
    lists_32: usize,
    watchers: usize,
    changes: usize,
    burst: usize,
}

impl Sizes {
    fn new(smoke: bool) -> Sizes {
        if smoke {
            Sizes {
                smoke,
                startup_runs: 2,
                list_objects: 50,
                creates_32: 450,
                gets_1: 200,
                gets_32: 2_000,
                lists_1: 20,
                lists_32: 100,
                watchers: 100,
                changes: 10,
                burst: 10,
            }
        } else {
            Sizes {
                smoke,
                startup_runs: 20,
                list_objects: 500,
                creates_32: 9_500,
                gets_1: 5_000,
                gets_32: 60_000,
                lists_1: 200,
                lists_32: 1_000,
                watchers: 1_000,
                changes: 100,
                burst: 100,
            }
        }
    }
    fn objects(&self) -> usize {
        self.list_objects + self.creates_32
    }
}

use common::configmap_json as configmap;

// ---------------------------------------------------------------- one server

/// Everything measured on one server.
#[derive(Default)]
struct Suite {
    idle_rss: Option<f64>,
    loaded_rss: Option<f64>,
    etcd_idle_rss: Option<f64>,
    etcd_loaded_rss: Option<f64>,
    creates_1: Option<Stats>,
    creates_32: Option<Stats>,
    raw_etcd_32: Option<Stats>,
    gets_1: Option<Stats>,
    gets_32: Option<Stats>,
    lists_1: Option<Stats>,
    lists_32: Option<Stats>,
    fanout: Option<Fanout>,
    apply_ms: Option<f64>,
    /// 4 KiB `fdatasync`s per second on the disk under the data dir,
    /// measured just before the creates at 32 clients.
    fsync_rate: Option<f64>,
    /// The minimal server's gets at 32 clients, measured by the embedded
    /// suite right after kapi's (`measure_minimal`).
    minimal: Option<Baseline>,
    notes: Vec<String>,
}

/// The embedded suite's name (it also measures the minimal server).
const EMBEDDED: &str = "kapi-embedded";

/// The load's knobs for one server: its process (for RSS) and etcd's.
struct Ctx<'a> {
    name: &'a str,
    target: &'a Target,
    sizes: &'a Sizes,
    kapi_pid: Option<u32>,
    etcd: Option<(Vec<String>, Option<u32>)>,
    /// A server we do not own: its namespace is removed at the end and waited for.
    foreign: bool,
}

fn progress(name: &str, what: &str) {
    eprintln!("[{name}] {what}");
}

/// Makes `NS` fresh: deletes a leftover one (waiting for it to go), creates it.
async fn fresh_namespace(t: &Target, c: &Conn) -> Result<()> {
    let uri = t.uri(&format!("/api/v1/namespaces/{NS}"));
    let (s, _) = c
        .clone()
        .call(Method::GET, uri.clone(), Bytes::new())
        .await?;
    if s == StatusCode::OK {
        c.clone()
            .call(Method::DELETE, uri.clone(), Bytes::new())
            .await?;
        wait_gone(t, c, Duration::from_secs(300)).await?;
    }
    let body = Bytes::from(format!(
        r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{NS}"}}}}"#
    ));
    let (s, b) = c
        .clone()
        .call(Method::POST, t.uri("/api/v1/namespaces"), body)
        .await?;
    if s != StatusCode::CREATED {
        bail!("create namespace {NS}: {s} {}", String::from_utf8_lossy(&b));
    }
    Ok(())
}

async fn wait_gone(t: &Target, c: &Conn, limit: Duration) -> Result<()> {
    let uri = t.uri(&format!("/api/v1/namespaces/{NS}"));
    let deadline = Instant::now() + limit;
    loop {
        let (s, _) = c
            .clone()
            .call(Method::GET, uri.clone(), Bytes::new())
            .await?;
        if s == StatusCode::NOT_FOUND {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("namespace {NS} still there after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn note_errors(s: &mut Suite, what: &str, st: &Stats) {
    if st.errors > 0 {
        s.notes.push(format!(
            "{what}: {} of {} requests failed (first: {})",
            st.errors,
            st.requests,
            st.first_error.clone().unwrap_or_default()
        ));
    }
}

async fn run_suite(cx: Ctx<'_>) -> Suite {
    let mut s = Suite::default();
    if let Err(e) = run_suite_inner(&cx, &mut s).await {
        s.notes.push(format!("stopped early: {e:#}"));
    }
    for n in &s.notes {
        progress(cx.name, &format!("note: {n}"));
    }
    s
}

async fn run_suite_inner(cx: &Ctx<'_>, s: &mut Suite) -> Result<()> {
    let (t, z, name) = (cx.target, cx.sizes, cx.name);
    let rss = |pid: Option<u32>| pid.and_then(common::rss_mib);
    let etcd_pid = cx.etcd.as_ref().and_then(|e| e.1);
    s.idle_rss = rss(cx.kapi_pid);
    s.etcd_idle_rss = rss(cx.etcd.as_ref().and_then(|e| e.1));

    progress(name, &format!("connecting 1 + {CLIENTS} clients"));
    let one = t.connect_many(1).await?;
    let many = t.connect_many(CLIENTS).await?;
    fresh_namespace(t, &one[0]).await?;
    let coll = format!("/api/v1/namespaces/{NS}/configmaps");

    progress(name, &format!("creates, 1 client ({})", z.list_objects));
    let bodies: Vec<Bytes> = (0..z.list_objects)
        .map(|i| configmap(&format!("l-{i}")))
        .collect();
    let st = common::load(
        &one,
        z.list_objects,
        Op {
            method: Method::POST,
            uris: vec![t.uri(&coll)],
            bodies,
            expect: StatusCode::CREATED,
            min_len: 0,
        },
        cx.kapi_pid,
        etcd_pid,
    )
    .await;
    note_errors(s, "creates, 1 client", &st);
    s.creates_1 = Some(st);

    let list_op = || Op {
        method: Method::GET,
        uris: vec![t.uri(&coll)],
        bodies: vec![],
        expect: StatusCode::OK,
        min_len: z.list_objects * 1024,
    };
    progress(
        name,
        &format!("lists of {}, 1 client ({})", z.list_objects, z.lists_1),
    );
    let st = common::load(&one, z.lists_1, list_op(), cx.kapi_pid, etcd_pid).await;
    note_errors(s, "lists, 1 client", &st);
    s.lists_1 = Some(st);
    progress(
        name,
        &format!(
            "lists of {}, {CLIENTS} clients ({})",
            z.list_objects, z.lists_32
        ),
    );
    let st = common::load(&many, z.lists_32, list_op(), cx.kapi_pid, etcd_pid).await;
    note_errors(s, "lists, 32 clients", &st);
    s.lists_32 = Some(st);

    if let Some((endpoints, _)) = &cx.etcd {
        progress(
            name,
            &format!(
                "raw etcd transactional puts, {CLIENTS} clients ({})",
                z.creates_32
            ),
        );
        match common::raw_etcd(
            endpoints,
            z.creates_32,
            CLIENTS,
            cx.etcd.as_ref().and_then(|e| e.1),
        )
        .await
        {
            Ok(st) => {
                note_errors(s, "raw etcd puts", &st);
                s.raw_etcd_32 = Some(st);
            }
            Err(e) => s.notes.push(format!("raw etcd puts: {e:#}")),
        }
    }

    if cx.etcd.is_none() && cx.kapi_pid.is_some() {
        progress(name, "fdatasync rate of 4 KiB writes (2 s)");
        let dir = tempfile::tempdir()?;
        match baseline::fsync_rate(dir.path(), if z.smoke { 0.3 } else { 2.0 }) {
            Ok(r) => s.fsync_rate = Some(r),
            Err(e) => s.notes.push(format!("fsync rate: {e:#}")),
        }
    }
    progress(
        name,
        &format!("creates, {CLIENTS} clients ({})", z.creates_32),
    );
    let bodies: Vec<Bytes> = (0..z.creates_32)
        .map(|i| configmap(&format!("c-{i}")))
        .collect();
    let st = common::load(
        &many,
        z.creates_32,
        Op {
            method: Method::POST,
            uris: vec![t.uri(&coll)],
            bodies,
            expect: StatusCode::CREATED,
            min_len: 0,
        },
        cx.kapi_pid,
        etcd_pid,
    )
    .await;
    note_errors(s, "creates, 32 clients", &st);
    s.creates_32 = Some(st);
    tokio::time::sleep(Duration::from_secs(1)).await;
    s.loaded_rss = rss(cx.kapi_pid);
    s.etcd_loaded_rss = rss(cx.etcd.as_ref().and_then(|e| e.1));

    let get_op = || Op {
        method: Method::GET,
        uris: (0..z.creates_32)
            .map(|i| t.uri(&format!("{coll}/c-{i}")))
            .collect(),
        bodies: vec![],
        expect: StatusCode::OK,
        min_len: 1024,
    };
    progress(name, &format!("gets, 1 client ({})", z.gets_1));
    let st = common::load(&one, z.gets_1, get_op(), cx.kapi_pid, etcd_pid).await;
    note_errors(s, "gets, 1 client", &st);
    s.gets_1 = Some(st);
    progress(name, &format!("gets, {CLIENTS} clients ({})", z.gets_32));
    let st = common::load(&many, z.gets_32, get_op(), cx.kapi_pid, etcd_pid).await;
    note_errors(s, "gets, 32 clients", &st);
    s.gets_32 = Some(st);
    drop(many);
    if name == EMBEDDED {
        // Measured now, not after the suite: the machine's speed drifts by
        // a fifth over a run, and the ratio should compare two servers
        // measured within the same minute (kapi idles meanwhile).
        s.minimal = Some(measure_minimal(z).await);
    }

    progress(
        name,
        &format!(
            "watch fan-out: {} watchers on {WATCH_CONNS} connections, {} + {} changes",
            z.watchers, z.changes, z.burst
        ),
    );
    match async {
        let conns = t.connect_many(WATCH_CONNS).await?;
        common::fanout(
            t,
            &conns,
            &one[0],
            NS,
            z.watchers,
            z.changes,
            z.burst,
            |k| configmap(&format!("fan-{k}")),
        )
        .await
    }
    .await
    {
        Ok(f) => {
            if f.missing > 0 {
                s.notes.push(format!(
                    "watch fan-out: {} of {} deliveries missing",
                    f.missing,
                    f.watchers * (1 + f.changes + f.burst)
                ));
            }
            s.fanout = Some(f);
        }
        Err(e) => s.notes.push(format!("watch fan-out: {e:#}")),
    }

    progress(name, "kubectl apply -f (50 objects)");
    match kubectl_apply(&t.kubeconfig).await {
        Ok(ms) => s.apply_ms = Some(ms),
        Err(e) => s.notes.push(format!("kubectl apply: {e:#}")),
    }

    if cx.foreign {
        progress(name, &format!("deleting namespace {NS}"));
        one[0]
            .clone()
            .call(
                Method::DELETE,
                t.uri(&format!("/api/v1/namespaces/{NS}")),
                Bytes::new(),
            )
            .await?;
        if let Err(e) = wait_gone(t, &one[0], Duration::from_secs(300)).await {
            s.notes.push(format!("cleanup: {e:#}"));
        }
    }
    Ok(())
}

/// 20 ConfigMaps, 10 Secrets, 10 Services and 10 Deployments in `NS`.
fn manifest() -> String {
    let mut docs = Vec::new();
    for i in 0..20 {
        docs.push(format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-cm-{i}\n  namespace: {NS}\n  labels:\n    app: apply-{i}\ndata:\n  key: value-{i}\n  config.yaml: |\n    replicas: {i}\n    name: apply-{i}\n"
        ));
    }
    for i in 0..10 {
        docs.push(format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: apply-secret-{i}\n  namespace: {NS}\ntype: Opaque\nstringData:\n  username: user-{i}\n  password: not-a-secret-{i}\n"
        ));
    }
    for i in 0..10 {
        docs.push(format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: apply-svc-{i}\n  namespace: {NS}\nspec:\n  selector:\n    app: apply-{i}\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n"
        ));
    }
    for i in 0..10 {
        docs.push(format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: apply-deploy-{i}\n  namespace: {NS}\n  labels:\n    app: apply-{i}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: apply-{i}\n  template:\n    metadata:\n      labels:\n        app: apply-{i}\n    spec:\n      containers:\n      - name: app\n        image: registry.k8s.io/pause:3.10\n        ports:\n        - containerPort: 8080\n        resources:\n          requests:\n            cpu: 1m\n            memory: 8Mi\n"
        ));
    }
    docs.join("---\n")
}

/// Wall time of `kubectl apply -f` of the 50-object manifest, with an empty
/// discovery cache (so every server pays for its discovery).
async fn kubectl_apply(kubeconfig: &Path) -> Result<f64> {
    let kubectl = common::kubectl_path().ok_or_else(|| anyhow!("kubectl is not on PATH"))?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("manifest.yaml");
    std::fs::write(&file, manifest())?;
    let t0 = Instant::now();
    let out = tokio::process::Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("apply")
        .arg("-f")
        .arg(&file)
        .output()
        .await
        .with_context(|| format!("run {}", kubectl.display()))?;
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            kubectl.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let applied = String::from_utf8_lossy(&out.stdout).lines().count();
    if applied != 50 {
        bail!("kubectl reported {applied} objects, not 50");
    }
    Ok(ms)
}

/// Polls `/readyz` over HTTPS until it answers `ok`.
async fn wait_ready(t: &Target, limit: Duration) -> Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(mut c) = t.connect().await {
            if let Ok((StatusCode::OK, b)) =
                c.call(Method::GET, t.uri("/readyz"), Bytes::new()).await
            {
                if &b[..] == b"ok" {
                    return Ok(());
                }
            }
        }
        if Instant::now() > deadline {
            bail!("{} not ready after {limit:?}", t.server);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn kapi_embedded(bin: &str, sizes: &Sizes) -> Result<Suite> {
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(bin, &dir.path().join("data"), &[])?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    wait_ready(&t, Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let s = run_suite(Ctx {
        name: EMBEDDED,
        target: &t,
        sizes,
        kapi_pid: Some(kapi.pid()),
        etcd: None,
        foreign: false,
    })
    .await;
    kapi.stop();
    Ok(s)
}

async fn kapi_on_etcd(bin: &str, sizes: &Sizes) -> Result<Suite> {
    let which = std::process::Command::new("sh")
        .args(["-c", "command -v etcd && command -v etcdctl"])
        .output()?;
    if !which.status.success() {
        bail!("etcd is not installed (./scripts/test installs Debian's etcd-server)");
    }
    let cluster = tokio::task::spawn_blocking(|| etcd::EtcdCluster::start(1))
        .await
        .map_err(|_| anyhow!("etcd did not start"))?;
    let endpoints = cluster.endpoints();
    let etcd_pid = cluster.members[0].pid();
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(
        bin,
        &dir.path().join("data"),
        &["--etcd-servers", &endpoints.join(",")],
    )?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    wait_ready(&t, Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let s = run_suite(Ctx {
        name: "kapi-etcd",
        target: &t,
        sizes,
        kapi_pid: Some(kapi.pid()),
        etcd: Some((endpoints, etcd_pid)),
        foreign: false,
    })
    .await;
    kapi.stop();
    drop(cluster);
    Ok(s)
}

async fn against(kubeconfig: &Path, sizes: &Sizes) -> Result<(String, Suite)> {
    let t = Target::from_kubeconfig(kubeconfig)?;
    let mut c = t.connect().await?;
    let (s, b) = c.call(Method::GET, t.uri("/version"), Bytes::new()).await?;
    if s != StatusCode::OK {
        bail!("GET {}/version: {s}", t.server);
    }
    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
    let version = v["gitVersion"].as_str().unwrap_or("?").to_string();
    progress("against", &format!("{} ({version})", t.server));
    let s = run_suite(Ctx {
        name: "against",
        target: &t,
        sizes,
        kapi_pid: None,
        etcd: None,
        foreign: true,
    })
    .await;
    Ok((format!("{} {version}", t.server), s))
}

// ---------------------------------------------------------------- baselines

/// What the machine allows, measured in the same run (issue 26).
#[derive(Default)]
struct Baseline {
    /// The minimal axum+rustls server's GETs at 32 clients.
    minimal_gets_32: Option<Stats>,
    minimal_rss: Option<f64>,
    /// Instructions per GET under callgrind: kapi serving a 1 KiB
    /// ConfigMap, and the minimal server its 300 bytes.
    kapi_instr: Option<f64>,
    minimal_instr: Option<f64>,
    /// ... and kapi creating a 1 KiB ConfigMap.
    kapi_create_instr: Option<f64>,
    notes: Vec<String>,
}

async fn baseline_gets(sizes: &Sizes, b: &mut Baseline) -> Result<()> {
    progress("minimal", "minimal axum+rustls HTTPS server");
    let m = baseline::Minimal::start()?;
    let t = Target::from_kubeconfig(&m.kubeconfig)?;
    let many = t.connect_many(CLIENTS).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    b.minimal_rss = common::rss_mib(m.pid());
    progress(
        "minimal",
        &format!("gets, {CLIENTS} clients ({})", sizes.gets_32),
    );
    let st = common::load(
        &many,
        sizes.gets_32,
        Op {
            method: Method::GET,
            uris: (0..sizes.creates_32)
                .map(|i| t.uri(&format!("/api/v1/namespaces/{NS}/configmaps/c-{i}")))
                .collect(),
            bodies: vec![],
            expect: StatusCode::OK,
            min_len: 300,
        },
        Some(m.pid()),
        None,
    )
    .await;
    if st.errors > 0 {
        b.notes.push(format!(
            "minimal server gets: {} of {} failed ({})",
            st.errors,
            st.requests,
            st.first_error.clone().unwrap_or_default()
        ));
    }
    b.minimal_gets_32 = Some(st);
    Ok(())
}

/// Instructions per GET, kapi and the minimal server, each under callgrind.
async fn baseline_instructions(bin: &str, sizes: &Sizes, b: &mut Baseline) -> Result<()> {
    if !callgrind::available() {
        bail!("valgrind (callgrind) is not installed");
    }
    let n = if sizes.smoke { 100 } else { 2_000 };
    progress(
        "callgrind",
        &format!("kapi under callgrind: {n} GETs at {CLIENTS} clients"),
    );
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn_under(
        &callgrind::wrapper(dir.path()),
        bin,
        &dir.path().join("data"),
        &[],
    )?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    wait_ready(&t, Duration::from_secs(300)).await?;
    let one = t.connect_many(1).await?;
    fresh_namespace(&t, &one[0]).await?;
    let coll = format!("/api/v1/namespaces/{NS}/configmaps");
    let (status, body) = one[0]
        .clone()
        .call(Method::POST, t.uri(&coll), configmap("c-0"))
        .await?;
    if status != StatusCode::CREATED {
        bail!(
            "create under callgrind: {status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    let conns = t.connect_many(CLIENTS).await?;
    b.kapi_instr = Some(
        callgrind::per_get(
            kapi.pid(),
            dir.path(),
            &t,
            &conns,
            &[format!("{coll}/c-0")],
            n,
        )
        .await?,
    );
    // Creates too (fresh names each pass: warm-up, then the counted run).
    let pass = std::sync::atomic::AtomicUsize::new(0);
    let creates = n / 4;
    let create_op = || {
        let p = pass.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Op {
            method: Method::POST,
            uris: vec![t.uri(&coll)],
            bodies: (0..creates)
                .map(|i| configmap(&format!("cg-{p}-{i}")))
                .collect(),
            expect: StatusCode::CREATED,
            min_len: 0,
        }
    };
    b.kapi_create_instr =
        Some(callgrind::per_request(kapi.pid(), dir.path(), &conns, create_op, creates).await?);
    drop(conns);
    kapi.stop();

    progress(
        "callgrind",
        &format!("minimal server under callgrind: {n} GETs"),
    );
    let dir = tempfile::tempdir()?;
    let m = baseline::Minimal::start_with(Some(&callgrind::wrapper(dir.path())))?;
    let t = Target::from_kubeconfig(&m.kubeconfig)?;
    let conns = t.connect_many(CLIENTS).await?;
    b.minimal_instr =
        Some(callgrind::per_get(m.pid(), dir.path(), &t, &conns, &["/x".to_string()], n).await?);
    Ok(())
}

/// The minimal server's gets.
async fn measure_minimal(sizes: &Sizes) -> Baseline {
    let mut b = Baseline::default();
    if let Err(e) = baseline_gets(sizes, &mut b).await {
        b.notes.push(format!("minimal server: {e:#}"));
    }
    b
}

/// Instructions per GET, and the minimal server's gets unless the
/// embedded suite has measured them (`minimal`).
async fn measure_baseline(bin: &str, sizes: &Sizes, minimal: Option<Baseline>) -> Baseline {
    let mut b = match minimal {
        Some(b) => b,
        None => measure_minimal(sizes).await,
    };
    if let Err(e) = baseline_instructions(bin, sizes, &mut b).await {
        b.notes.push(format!("instructions per GET: {e:#}"));
    }
    b
}

// ---------------------------------------------------------------- start-up

struct Startup {
    warm_ms: Vec<f64>,
    cold_ms: Vec<f64>,
}

/// Time from spawning kapi to `/readyz` answering `ok`: with the
/// certificates (and store) of an earlier start present, and from an empty
/// data dir. Blocking; runs before the async work.
fn startup(bin: &str, runs: usize) -> Result<Startup> {
    let client = reqwest::blocking::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(2))
        .build()?;
    let once = |dir: &Path| -> Result<(f64, std::process::Child)> {
        let port = common::free_port();
        let t0 = Instant::now();
        let mut child = std::process::Command::new(bin)
            .args(["serve", "--secure-port", &port.to_string(), "--data-dir"])
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let url = format!("https://127.0.0.1:{port}/readyz");
        loop {
            if let Ok(r) = client.get(&url).send() {
                if r.status() == 200 && r.text().is_ok_and(|t| t == "ok") {
                    return Ok((t0.elapsed().as_secs_f64() * 1000.0, child));
                }
            }
            if t0.elapsed() > Duration::from_secs(30) {
                common::terminate(&mut child);
                bail!("kapi not ready within 30 s");
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    };
    let dir = tempfile::tempdir()?;
    let (_, mut first) = once(dir.path())?;
    common::terminate(&mut first);
    let mut st = Startup {
        warm_ms: vec![],
        cold_ms: vec![],
    };
    for _ in 0..runs {
        let (ms, mut child) = once(dir.path())?;
        st.warm_ms.push(ms);
        common::terminate(&mut child);
        let empty = tempfile::tempdir()?;
        let (ms, mut child) = once(empty.path())?;
        st.cold_ms.push(ms);
        common::terminate(&mut child);
    }
    st.warm_ms.sort_by(|a, b| a.total_cmp(b));
    st.cold_ms.sort_by(|a, b| a.total_cmp(b));
    Ok(st)
}

// ---------------------------------------------------------------- report

struct Row {
    key: &'static str,
    label: String,
    value: Option<f64>,
    p50: Option<f64>,
    p99: Option<f64>,
    /// CPU use during the run, % of one core: load generator, server, its etcd.
    cpu: Option<(Option<f64>, Option<f64>, Option<f64>)>,
}

struct Goal {
    who: &'static str,
    text: String,
    met: Option<bool>,
}

struct Figure {
    key: &'static str,
    title: String,
    unit: &'static str,
    rows: Vec<Row>,
    ratios: Vec<(String, f64)>,
    goals: Vec<Goal>,
}

struct Results {
    sizes: Sizes,
    startup: Result<Startup>,
    embedded: Result<Suite>,
    etcd: Result<Suite>,
    against: Option<Result<(String, Suite)>>,
    baseline: Baseline,
}

fn stats_row(key: &'static str, label: &str, st: Option<&Stats>) -> Row {
    Row {
        key,
        label: label.to_string(),
        value: st.map(|s| s.rate()),
        p50: st.map(|s| s.p_ms(0.5)),
        p99: st.map(|s| s.p_ms(0.99)),
        cpu: st.map(|s| {
            let pct = |c: Option<f64>| c.map(|c| c / s.secs * 100.0);
            (pct(s.gen_cpu_s), pct(s.server_cpu_s), pct(s.store_cpu_s))
        }),
    }
}

fn plain(key: &'static str, label: &str, v: Option<f64>) -> Row {
    Row {
        key,
        label: label.to_string(),
        value: v,
        p50: None,
        p99: None,
        cpu: None,
    }
}

fn fmt_num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.is_nan() => "-".into(),
        Some(v) if v.abs() >= 1000.0 => {
            let s = format!("{:.0}", v);
            let (neg, digits) = s
                .strip_prefix('-')
                .map_or((false, s.as_str()), |d| (true, d));
            let mut out = String::new();
            for (i, ch) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(ch);
            }
            if neg {
                format!("-{out}")
            } else {
                out
            }
        }
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

fn figures(r: &Results) -> Vec<Figure> {
    let emb = r.embedded.as_ref().ok();
    let etc = r.etcd.as_ref().ok();
    let ag = r.against.as_ref().and_then(|a| a.as_ref().ok());
    let ag_label = ag.map(|_| "upstream (--against)".to_string());
    let z = &r.sizes;
    let mut out = Vec::new();

    // The other side of a ratio: the measured server when there is one,
    // else the reference figure.
    let other = |measured: Option<f64>, reference: Option<f64>| -> (Option<f64>, &'static str) {
        if ag.is_some() {
            (measured, "upstream")
        } else {
            (reference, "upstream (ref)")
        }
    };
    let add_ratios = |f: &mut Figure, measured: Option<f64>, reference: Option<f64>| {
        let (o, name) = other(measured, reference);
        let e = f
            .rows
            .iter()
            .find(|r| r.key == "kapi-embedded")
            .and_then(|r| r.value);
        let k = f
            .rows
            .iter()
            .find(|r| r.key == "kapi-etcd")
            .and_then(|r| r.value);
        if let Some(x) = ratio(e, o) {
            f.ratios.push((format!("kapi-embedded / {name}"), x));
        }
        if let Some(x) = ratio(k, o) {
            f.ratios.push((format!("kapi-etcd / {name}"), x));
        }
        if let Some(x) = ratio(k, e) {
            f.ratios.push(("kapi-etcd / kapi-embedded".into(), x));
        }
    };
    let ref_row = |v: Option<f64>| -> Option<Row> {
        v?;
        Some(plain("upstream-ref", "upstream (reference)", v))
    };

    // Start-up.
    let st = r.startup.as_ref().ok();
    for (key, title, pick) in [
        (
            "start_certs_present",
            "start to /readyz ok, certificates present",
            (|s: &Startup| &s.warm_ms) as fn(&Startup) -> &Vec<f64>,
        ),
        (
            "start_empty_dir",
            "start to /readyz ok, from an empty data dir",
            |s: &Startup| &s.cold_ms,
        ),
    ] {
        let v = st.map(pick);
        let mut f = Figure {
            key,
            title: format!("{title} (ms; {} runs)", v.map_or(0, |v| v.len())),
            unit: "ms",
            rows: vec![Row {
                key: "kapi-embedded",
                label: "kapi (embedded store)".into(),
                value: None,
                p50: v.map(|v| common::pct(v, 0.5)),
                p99: v.map(|v| common::pct(v, 0.99)),
                cpu: None,
            }],
            ratios: vec![],
            goals: vec![],
        };
        f.rows.push(Row {
            key: "upstream-ref",
            label: "upstream (reference)".into(),
            value: None,
            p50: Some(upstream_ref::START_MS),
            p99: None,
            cpu: None,
        });
        let e = f.rows[0].p50;
        if let Some(x) = ratio(e, Some(upstream_ref::START_MS)) {
            f.ratios.push(("kapi-embedded / upstream (ref)".into(), x));
        }
        if key == "start_certs_present" {
            f.goals.push(Goal {
                who: "kapi-embedded",
                text: "p50 <= 100 ms".into(),
                met: e.map(|v| v <= 100.0),
            });
        } else {
            let p99 = f.rows[0].p99;
            f.goals.push(Goal {
                who: "kapi-embedded",
                text: "p99 <= 150 ms".into(),
                met: p99.map(|v| v <= 150.0),
            });
        }
        out.push(f);
    }

    // RSS.
    for (key, title, pick, epick, reference, limit) in [
        (
            "rss_idle",
            "RSS idle (MiB)".to_string(),
            (|s: &Suite| s.idle_rss) as fn(&Suite) -> Option<f64>,
            (|s: &Suite| s.etcd_idle_rss) as fn(&Suite) -> Option<f64>,
            upstream_ref::RSS_IDLE_MIB,
            25.0,
        ),
        (
            "rss_loaded",
            format!(
                "RSS with {} ConfigMaps of 1 KiB (MiB)",
                fmt_num(Some(z.objects() as f64))
            ),
            |s: &Suite| s.loaded_rss,
            |s: &Suite| s.etcd_loaded_rss,
            upstream_ref::RSS_LOADED_MIB,
            60.0,
        ),
    ] {
        let mut f = Figure {
            key,
            title,
            unit: "MiB",
            rows: vec![
                plain("kapi-embedded", "kapi (embedded store)", emb.and_then(pick)),
                plain(
                    "kapi-etcd",
                    "kapi (on etcd), kapi process",
                    etc.and_then(pick),
                ),
                plain(
                    "etcd",
                    "etcd process (kapi-etcd's store)",
                    etc.and_then(epick),
                ),
                plain("upstream-ref", "upstream (reference)", Some(reference)),
            ],
            ratios: vec![],
            goals: vec![],
        };
        add_ratios(&mut f, None, Some(reference));
        // With --against, RSS is not measured there: ratios against the reference.
        if ag.is_some() {
            f.ratios.clear();
            let e = f.rows[0].value;
            let k = f.rows[1].value;
            if let Some(x) = ratio(e, Some(reference)) {
                f.ratios.push(("kapi-embedded / upstream (ref)".into(), x));
            }
            if let Some(x) = ratio(k, Some(reference)) {
                f.ratios.push(("kapi-etcd / upstream (ref)".into(), x));
            }
        }
        for (who, v) in [
            ("kapi-embedded", f.rows[0].value),
            ("kapi-etcd", f.rows[1].value),
        ] {
            f.goals.push(Goal {
                who,
                text: format!("<= {limit} MiB"),
                met: v.map(|v| v <= limit),
            });
        }
        out.push(f);
    }

    // Request rates.
    type Pick = fn(&Suite) -> Option<&Stats>;
    let rates: [(&'static str, String, Pick, Option<f64>); 6] = [
        (
            "creates_1",
            format!(
                "creates/s, 1 client ({} ConfigMaps of 1 KiB)",
                z.list_objects
            ),
            |s| s.creates_1.as_ref(),
            None,
        ),
        (
            "creates_32",
            format!(
                "creates/s, {CLIENTS} clients ({} ConfigMaps of 1 KiB)",
                fmt_num(Some(z.creates_32 as f64))
            ),
            |s| s.creates_32.as_ref(),
            Some(upstream_ref::CREATES_32),
        ),
        (
            "gets_1",
            format!("gets/s, 1 client ({} gets)", fmt_num(Some(z.gets_1 as f64))),
            |s| s.gets_1.as_ref(),
            None,
        ),
        (
            "gets_32",
            format!(
                "gets/s, {CLIENTS} clients ({} gets)",
                fmt_num(Some(z.gets_32 as f64))
            ),
            |s| s.gets_32.as_ref(),
            Some(upstream_ref::GETS_32),
        ),
        (
            "lists_1",
            format!(
                "lists of {} objects/s, 1 client ({} lists)",
                z.list_objects, z.lists_1
            ),
            |s| s.lists_1.as_ref(),
            None,
        ),
        (
            "lists_32",
            format!(
                "lists of {} objects/s, {CLIENTS} clients ({} lists)",
                z.list_objects,
                fmt_num(Some(z.lists_32 as f64))
            ),
            |s| s.lists_32.as_ref(),
            Some(upstream_ref::LISTS_32),
        ),
    ];
    for (key, title, pick, reference) in rates {
        let mut f = Figure {
            key,
            title,
            unit: "per s",
            rows: vec![
                stats_row("kapi-embedded", "kapi (embedded store)", emb.and_then(pick)),
                stats_row("kapi-etcd", "kapi (on etcd)", etc.and_then(pick)),
            ],
            ratios: vec![],
            goals: vec![],
        };
        if key == "creates_32" {
            f.rows.push(stats_row(
                "etcd-raw",
                "raw etcd txn puts (etcd-client)",
                etc.and_then(|s| s.raw_etcd_32.as_ref()),
            ));
            f.rows.push(plain(
                "fsync",
                "disk: 4 KiB fdatasyncs, one writer",
                emb.and_then(|s| s.fsync_rate),
            ));
        }
        if key == "gets_32" {
            f.rows.push(stats_row(
                "minimal",
                "minimal axum+rustls server (300 B JSON)",
                r.baseline.minimal_gets_32.as_ref(),
            ));
        }
        let measured = ag.and_then(|(_, s)| pick(s)).map(|s| s.rate());
        if let (Some(label), Some((_, s))) = (&ag_label, ag) {
            f.rows.push(stats_row("upstream", label, pick(s)));
        } else if let Some(row) = ref_row(reference) {
            f.rows.push(row);
        }
        add_ratios(&mut f, measured, reference);
        let e = f.rows[0].value;
        let k = f.rows[1].value;
        match key {
            "creates_32" => {
                let raw = etc.and_then(|s| s.raw_etcd_32.as_ref()).map(|s| s.rate());
                if let Some(x) = ratio(k, raw) {
                    f.ratios.push(("kapi-etcd / raw etcd".into(), x));
                }
                f.goals.push(Goal {
                    who: "kapi-embedded",
                    text: ">= 10,000/s".into(),
                    met: e.map(|v| v >= 10_000.0),
                });
                let fsync = emb.and_then(|s| s.fsync_rate);
                if let Some(x) = ratio(e, fsync) {
                    f.ratios.push(("kapi-embedded / disk fdatasyncs".into(), x));
                }
                f.goals.push(Goal {
                    who: "kapi-embedded",
                    text: format!(
                        ">= 1.4x the disk's fdatasyncs ({}) with 0 errors",
                        fmt_num(fsync.map(|r| r * 1.4))
                    ),
                    met: e.zip(fsync).map(|(e, r)| {
                        e >= 1.4 * r
                            && emb
                                .and_then(|s| s.creates_32.as_ref())
                                .is_some_and(|s| s.errors == 0)
                    }),
                });
                f.goals.push(Goal {
                    who: "kapi-etcd",
                    text: format!(">= 80% of raw etcd ({})", fmt_num(raw.map(|r| r * 0.8))),
                    met: k.zip(raw).map(|(k, raw)| k >= 0.8 * raw),
                });
            }
            "gets_32" => {
                f.goals.push(Goal {
                    who: "kapi-embedded",
                    text: ">= 30,000/s".into(),
                    met: e.map(|v| v >= 30_000.0),
                });
                let minimal = r.baseline.minimal_gets_32.as_ref().map(|s| s.rate());
                if let Some(x) = ratio(e, minimal) {
                    f.ratios.push(("kapi-embedded / minimal server".into(), x));
                }
                f.goals.push(Goal {
                    who: "kapi-embedded",
                    text: format!(
                        ">= 65% of the minimal server ({})",
                        fmt_num(minimal.map(|m| m * 0.65))
                    ),
                    met: e.zip(minimal).map(|(e, m)| e >= 0.65 * m),
                });
                f.goals.push(Goal {
                    who: "kapi-etcd",
                    text: ">= 2x 6,200/s (12,400)".into(),
                    met: k.map(|v| v >= 12_400.0),
                });
            }
            "lists_32" => {
                let base = if ag.is_some() { measured } else { reference };
                for (who, v) in [("kapi-embedded", e), ("kapi-etcd", k)] {
                    f.goals.push(Goal {
                        who,
                        text: format!(">= 3x upstream ({})", fmt_num(base.map(|b| 3.0 * b))),
                        met: v.zip(base).map(|(v, b)| v >= 3.0 * b),
                    });
                }
            }
            _ => {}
        }
        out.push(f);
    }

    // Watch fan-out.
    let fan_rows = |all: bool| {
        let row = |key: &'static str, label: &str, f: Option<&Fanout>| {
            let v = f.map(|f| if all { &f.all_ms } else { &f.lat_ms });
            Row {
                key,
                label: label.to_string(),
                value: None,
                p50: v.map(|v| common::pct(v, 0.5)),
                p99: v.map(|v| common::pct(v, 0.99)),
                cpu: None,
            }
        };
        let mut rows = vec![
            row(
                "kapi-embedded",
                "kapi (embedded store)",
                emb.and_then(|s| s.fanout.as_ref()),
            ),
            row(
                "kapi-etcd",
                "kapi (on etcd)",
                etc.and_then(|s| s.fanout.as_ref()),
            ),
        ];
        if let (Some(label), Some((_, s))) = (&ag_label, ag) {
            rows.push(row("upstream", label, s.fanout.as_ref()));
        } else if all {
            rows.push(Row {
                key: "upstream-ref",
                label: "upstream (reference)".into(),
                value: None,
                p50: None,
                p99: Some(upstream_ref::WATCH_P99_MS),
                cpu: None,
            });
        }
        rows
    };
    let watchers = fmt_num(Some(z.watchers as f64));
    // The first change, made before the measured ones (`common::fanout`).
    let first = [("embedded", emb), ("etcd", etc)]
        .iter()
        .filter_map(|(who, s)| {
            let f = s.and_then(|s| s.fanout.as_ref())?;
            Some(format!("{who} {:.2}", f.first_ms))
        })
        .collect::<Vec<_>>()
        .join(", ");
    for all in [true, false] {
        let mut f = Figure {
            key: if all {
                "watch_fanout_to_all"
            } else {
                "watch_fanout_per_delivery"
            },
            title: if all {
                format!(
                    "watch fan-out: time for one change to reach all {watchers} watchers ({WATCH_CONNS} HTTP/2 connections; ms over {} changes after a first one, not counted: {first} ms)",
                    z.changes
                )
            } else {
                format!(
                    "watch fan-out: latency of each delivery to {watchers} watchers (ms over {} deliveries)",
                    fmt_num(Some((z.changes * z.watchers) as f64))
                )
            },
            unit: "ms",
            rows: fan_rows(all),
            ratios: vec![],
            goals: vec![],
        };
        let p99 = |key: &str| f.rows.iter().find(|r| r.key == key).and_then(|r| r.p99);
        let (e, k) = (p99("kapi-embedded"), p99("kapi-etcd"));
        let (o, name) = if ag.is_some() {
            (p99("upstream"), "upstream")
        } else if all {
            (Some(upstream_ref::WATCH_P99_MS), "upstream (ref)")
        } else {
            (None, "")
        };
        let mut ratios = Vec::new();
        if let Some(x) = ratio(e, o) {
            ratios.push((format!("p99 kapi-embedded / {name}"), x));
        }
        if let Some(x) = ratio(k, o) {
            ratios.push((format!("p99 kapi-etcd / {name}"), x));
        }
        if let Some(x) = ratio(k, e) {
            ratios.push(("p99 kapi-etcd / kapi-embedded".into(), x));
        }
        f.ratios = ratios;
        if all {
            for (who, v) in [("kapi-embedded", e), ("kapi-etcd", k)] {
                f.goals.push(Goal {
                    who,
                    text: "p99 <= 8 ms".into(),
                    met: v.map(|v| v <= 8.0),
                });
            }
        }
        out.push(f);
    }
    let ev = |s: Option<&Suite>| s.and_then(|s| s.fanout.as_ref()).map(|f| f.events_per_s);
    let mut f = Figure {
        key: "watch_events_per_s",
        title: format!(
            "watch events delivered/s ({} changes at once to {} watchers)",
            z.burst,
            fmt_num(Some(z.watchers as f64))
        ),
        unit: "per s",
        rows: vec![
            plain("kapi-embedded", "kapi (embedded store)", ev(emb)),
            plain("kapi-etcd", "kapi (on etcd)", ev(etc)),
        ],
        ratios: vec![],
        goals: vec![],
    };
    if let (Some(label), Some((_, s))) = (&ag_label, ag) {
        f.rows.push(plain("upstream", label, ev(Some(s))));
    }
    add_ratios(&mut f, ag.and_then(|(_, s)| ev(Some(s))), None);
    out.push(f);

    // kubectl apply.
    let ap = |s: Option<&Suite>| s.and_then(|s| s.apply_ms);
    let mut f = Figure {
        key: "kubectl_apply_50",
        title: "kubectl apply -f of 50 objects (20 ConfigMaps, 10 Secrets, 10 Services, 10 Deployments), empty discovery cache (ms)".into(),
        unit: "ms",
        rows: vec![
            plain("kapi-embedded", "kapi (embedded store)", ap(emb)),
            plain("kapi-etcd", "kapi (on etcd)", ap(etc)),
        ],
        ratios: vec![],
        goals: vec![],
    };
    if let (Some(label), Some((_, s))) = (&ag_label, ag) {
        f.rows.push(plain("upstream", label, ap(Some(s))));
    }
    add_ratios(&mut f, ag.and_then(|(_, s)| ap(Some(s))), None);
    out.push(f);

    // Server instructions per GET (callgrind).
    let b = &r.baseline;
    let mut f = Figure {
        key: "instructions_per_get",
        title: "server instructions per GET at 32 clients (valgrind --tool=callgrind; idle work subtracted)".into(),
        unit: "instr",
        rows: vec![
            plain("kapi-embedded", "kapi (embedded store), 1 KiB ConfigMap", b.kapi_instr),
            plain("minimal", "minimal axum+rustls server (300 B JSON)", b.minimal_instr),
            plain(
                "kapi-embedded-create",
                "kapi (embedded store), per create of one",
                b.kapi_create_instr,
            ),
        ],
        ratios: vec![],
        goals: vec![],
    };
    if let Some(x) = ratio(b.kapi_instr, b.minimal_instr) {
        f.ratios.push(("kapi-embedded / minimal server".into(), x));
    }
    out.push(f);
    out
}

fn print_figure(f: &Figure) {
    println!();
    println!("{}", f.title);
    let lat = f.rows.iter().any(|r| r.p50.is_some() || r.p99.is_some());
    let val = !lat || f.rows.iter().any(|r| r.value.is_some());
    let cpu = f.rows.iter().any(|r| r.cpu.is_some());
    let cpu_col = |r: &Row| match r.cpu {
        Some((g, s, e)) => format!(
            "{}/{}{}",
            g.map_or("-".into(), |g| format!("{g:.0}")),
            s.map_or("-".into(), |s| format!("{s:.0}")),
            e.map_or(String::new(), |e| format!("+{e:.0}"))
        ),
        None => String::new(),
    };
    let line = |label: &str, value: String, p50: String, p99: String, cpu_s: String| {
        let mut l = format!("  {label:<44}");
        if val {
            l += &format!(" {value:>12}");
        }
        if lat {
            l += &format!(" {p50:>10} {p99:>10}");
        }
        if cpu {
            l += &format!(" {cpu_s:>16}");
        }
        println!("{l}");
    };
    let unit = |p: &str| format!("{p} ms");
    line(
        "server",
        f.unit.to_string(),
        unit("p50"),
        unit("p99"),
        "CPU% gen/server".into(),
    );
    for r in &f.rows {
        line(
            &r.label,
            fmt_num(r.value),
            fmt_num(r.p50),
            fmt_num(r.p99),
            cpu_col(r),
        );
    }
    if !f.ratios.is_empty() {
        let parts: Vec<String> = f
            .ratios
            .iter()
            .map(|(n, x)| {
                if n.contains("raw etcd") {
                    format!("{n} {:.0}%", x * 100.0)
                } else {
                    format!("{n} {x:.2}x")
                }
            })
            .collect();
        println!("  ratio: {}", parts.join("; "));
    }
    if !f.goals.is_empty() {
        let parts: Vec<String> = f
            .goals
            .iter()
            .map(|g| {
                let m = match g.met {
                    Some(true) => "met",
                    Some(false) => "NOT met",
                    None => "not measured",
                };
                format!("{} {} ({m})", g.who, g.text)
            })
            .collect();
        println!("  target: {}", parts.join("; "));
    }
}

fn figure_json(f: &Figure) -> Value {
    let rows: serde_json::Map<String, Value> = f
        .rows
        .iter()
        .map(|r| {
            let mut v = json!({"label": r.label, "value": r.value.filter(|v| v.is_finite())});
            if r.p50.is_some() || r.p99.is_some() {
                v["p50_ms"] = json!(r.p50.filter(|v| v.is_finite()));
                v["p99_ms"] = json!(r.p99.filter(|v| v.is_finite()));
            }
            if let Some((g, s, e)) = r.cpu {
                v["load_generator_cpu_pct"] = json!(g);
                v["server_cpu_pct"] = json!(s);
                if e.is_some() {
                    v["etcd_cpu_pct"] = json!(e);
                }
            }
            (r.key.to_string(), v)
        })
        .collect();
    json!({
        "key": f.key,
        "title": f.title,
        "unit": f.unit,
        "servers": rows,
        "ratios": f.ratios.iter().map(|(n, x)| (n.clone(), json!(x))).collect::<serde_json::Map<_, _>>(),
        "targets": f.goals.iter().map(|g| json!({"server": g.who, "target": g.text, "met": g.met})).collect::<Vec<_>>(),
    })
}

fn git_rev() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn cpu_model() -> Option<String> {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
}

fn report(r: &Results, smoke: bool, elapsed: Duration) -> Result<PathBuf> {
    let figs = figures(r);
    let mut notes: Vec<String> = Vec::new();
    if let Err(e) = &r.startup {
        notes.push(format!("start-up: {e:#}"));
    }
    for (name, s) in [("kapi-embedded", &r.embedded), ("kapi-etcd", &r.etcd)] {
        match s {
            Ok(s) => notes.extend(s.notes.iter().map(|n| format!("{name}: {n}"))),
            Err(e) => notes.push(format!("{name}: not measured: {e:#}")),
        }
    }
    notes.extend(r.baseline.notes.iter().cloned());
    match &r.against {
        Some(Ok((_, s))) => notes.extend(s.notes.iter().map(|n| format!("upstream: {n}"))),
        Some(Err(e)) => notes.push(format!("upstream (--against): not measured: {e:#}")),
        None => {}
    }

    println!();
    println!(
        "kapi benchmarks{} ({} CPUs{}; kapi {}; {:.0} s)",
        if smoke {
            " --smoke (small counts: figures are not meaningful)"
        } else {
            ""
        },
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model().map(|m| format!(", {m}")).unwrap_or_default(),
        git_rev().unwrap_or_else(|| "?".into()),
        elapsed.as_secs_f64()
    );
    println!("CPU% gen/server: % of one core used during the run by the load generator / the server (+ its etcd)");
    if let Some(Ok((l, _))) = &r.against {
        println!("upstream (--against): {l}");
    }
    if r.against.is_none() {
        println!("upstream rows are reference figures for kube-apiserver v1.34 on this kind of machine (give --against KUBECONFIG to measure one)");
    }
    for f in &figs {
        print_figure(f);
    }
    if !notes.is_empty() {
        println!();
        println!("notes:");
        for n in &notes {
            println!("  - {n}");
        }
    }

    let now = chrono::Utc::now();
    let doc = json!({
        "timestamp": now.to_rfc3339(),
        "smoke": smoke,
        "kapi": git_rev(),
        "machine": {"cpus": std::thread::available_parallelism().map_or(0, |n| n.get()), "cpu": cpu_model()},
        "against": r.against.as_ref().and_then(|a| a.as_ref().ok()).map(|(l, _)| l.clone()),
        "elapsed_s": elapsed.as_secs_f64(),
        "load_generator_threads": gen_threads(),
        "sizes": {
            "clients": CLIENTS,
            "startup_runs": r.sizes.startup_runs,
            "creates_1": r.sizes.list_objects,
            "list_objects": r.sizes.list_objects,
            "creates_32": r.sizes.creates_32,
            "gets_1": r.sizes.gets_1,
            "gets_32": r.sizes.gets_32,
            "lists_1": r.sizes.lists_1,
            "lists_32": r.sizes.lists_32,
            "watchers": r.sizes.watchers,
            "watch_connections": WATCH_CONNS,
            "watch_changes": r.sizes.changes,
            "watch_burst": r.sizes.burst,
            "configmap_bytes": configmap("c-0").len(),
        },
        "figures": figs.iter().map(figure_json).collect::<Vec<_>>(),
        "notes": notes,
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/results");
    std::fs::create_dir_all(&dir)?;
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    let file = dir.join(format!("{}.json", now.format("%Y-%m-%dT%H-%M-%SZ")));
    std::fs::write(&file, &text)?;
    std::fs::write(dir.join("latest.json"), &text)?;
    let svg = file.with_extension("svg");
    match chart::draw(&doc, &svg) {
        Ok(()) => {
            std::fs::copy(&svg, dir.join("latest.svg"))?;
        }
        Err(e) => eprintln!("chart: {e:#}"),
    }
    Ok(file)
}

// ---------------------------------------------------------------- main

/// Worker threads of the load generator (`KAPI_BENCH_GEN_THREADS`, default 1).
fn gen_threads() -> usize {
    std::env::var("KAPI_BENCH_GEN_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

const USAGE: &str = "usage: ./bench/run [--smoke] [--against KUBECONFIG]
       ./bench/run --instructions        (only the callgrind figure; KAPI_BENCH_CALLGRIND_KEEP=DIR keeps the profiles)
       ./bench/run startup|storage|api [--smoke]   (one of the older benchmarks)";

fn main() {
    let mut smoke = std::env::var_os("KAPI_BENCH_SMOKE").is_some();
    let mut instructions_only = false;
    let mut against_cfg: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    if std::env::args().nth(1).as_deref() == Some(baseline::FLAG) {
        let dir = PathBuf::from(std::env::args().nth(2).unwrap_or_default());
        if let Err(e) = baseline::serve(&dir) {
            eprintln!("minimal server: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    while let Some(a) = args.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--instructions" => instructions_only = true,
            "--bench" => {} // cargo bench adds it
            "--against" => match args.next() {
                Some(p) => against_cfg = Some(PathBuf::from(p)),
                None => {
                    eprintln!("--against needs a kubeconfig\n{USAGE}");
                    std::process::exit(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => match other.strip_prefix("--against=") {
                Some(p) => against_cfg = Some(PathBuf::from(p)),
                None => {
                    eprintln!("unknown argument {other:?}\n{USAGE}");
                    std::process::exit(2);
                }
            },
        }
    }
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let bin = common::kapi_bin();
    let bin = bin.as_str();
    let sizes = Sizes::new(smoke);
    let t0 = Instant::now();
    if instructions_only {
        // Only the callgrind figure (with KAPI_BENCH_CALLGRIND_KEEP, for profiles).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut b = Baseline::default();
        match rt.block_on(baseline_instructions(bin, &sizes, &mut b)) {
            Ok(()) => println!(
                "instructions per GET: kapi {} minimal {} ({:.2}x); per create: kapi {}",
                fmt_num(b.kapi_instr),
                fmt_num(b.minimal_instr),
                ratio(b.kapi_instr, b.minimal_instr).unwrap_or(f64::NAN),
                fmt_num(b.kapi_create_instr)
            ),
            Err(e) => eprintln!("instructions per GET: {e:#}"),
        }
        return;
    }

    progress(
        "kapi-embedded",
        &format!("start-up, {} runs each", sizes.startup_runs),
    );
    let startup = startup(bin, sizes.startup_runs);
    let rt = match gen_threads() {
        n if n > 1 => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
        // One thread by default: the leanest load generator (no cross-thread
        // wake-ups), leaving the other core to the server.
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .expect("runtime");
    let mut embedded = rt.block_on(kapi_embedded(bin, &sizes));
    if let Err(e) = &embedded {
        progress("kapi-embedded", &format!("failed: {e:#}"));
    }
    let minimal = embedded.as_mut().ok().and_then(|s| s.minimal.take());
    let baseline = rt.block_on(measure_baseline(bin, &sizes, minimal));
    let etcd = rt.block_on(kapi_on_etcd(bin, &sizes));
    if let Err(e) = &etcd {
        progress("kapi-etcd", &format!("failed: {e:#}"));
    }
    let against = against_cfg.map(|k| {
        let r = rt.block_on(against(&k, &sizes));
        if let Err(e) = &r {
            progress("against", &format!("failed: {e:#}"));
        }
        r
    });
    let results = Results {
        sizes,
        startup,
        embedded,
        etcd,
        against,
        baseline,
    };
    match report(&results, smoke, t0.elapsed()) {
        Ok(file) => {
            println!();
            println!(
                "written: {} and {} (and latest.json, latest.svg)",
                file.display(),
                file.with_extension("svg").display()
            );
        }
        Err(e) => eprintln!("could not write the results: {e:#}"),
    }
}
