//! Faults under load (issue 17): kapi killed with SIGKILL while 32 clients
//! create, update and delete (on the embedded store and on etcd), a
//! 3-member etcd cluster losing a follower and then its leader, etcd gone
//! for a while, and one of two kapi instances on one etcd killed. Nothing
//! acknowledged may be lost, and clients see what kube-apiserver would
//! show them: 5xx Status answers during outages, never hangs, and watches
//! that are either gap-free or end with 410 Expired.
//!
//! The clients keep a model of every key they write. Each of the 32
//! workers owns its keys, so writes to one key are sequential; a write is
//! acknowledged by its 2xx answer; a write whose outcome is unknown (a 5xx,
//! a broken connection) "may have landed"; a write answered 4xx, or never
//! sent (connection refused), did not. What the server stores for a key
//! must be its last acknowledged state or one of the writes after it that
//! may have landed.
//! `KAPI_FAULT_ROUNDS` (default 3) sets the SIGKILL rounds per store.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::etcd::{etcdctl, EtcdCluster};
use common::watch::{rv_of, Next, WatchLines};
use common::{runtime, unsafe_kill, Kapi};
use rand::Rng;
use serde_json::{json, Value};

const WORKERS: usize = 32;
const KEYS_PER_WORKER: usize = 6;
const NS: &str = "default";
/// Longer than kapi's 60 s --request-timeout: the server answers first.
const WRITE_TIMEOUT: Duration = Duration::from_secs(70);
/// After a 5xx the write may still be applied by etcd (a proposal that
/// commits after its client gave up); its key is left alone this long.
const THAW: Duration = Duration::from_secs(5);
/// Acknowledged writes each round needs before the fault.
const MIN_ACKS: usize = 200;

fn rounds() -> usize {
    std::env::var("KAPI_FAULT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn log(msg: impl AsRef<str>) {
    eprintln!("[faults] {}", msg.as_ref());
}

// ---------------------------------------------------------------- the model

#[derive(Clone, Debug, PartialEq, Eq)]
enum St {
    Absent,
    Present(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create,
    Update,
    Delete,
}

#[derive(Clone, Debug)]
struct Key {
    name: String,
    /// The last acknowledged state (or the one verified after a restart).
    base: St,
    /// Writes after `base` whose outcome is unknown: each may have landed.
    maybe: Vec<St>,
    /// After an unknown outcome the key is left alone: until the instant,
    /// or (None) for the rest of the round.
    frozen: Option<Option<Instant>>,
}

impl Key {
    fn new(name: String) -> Key {
        Key {
            name,
            base: St::Absent,
            maybe: Vec::new(),
            frozen: None,
        }
    }

    fn allows(&self, s: &St) -> bool {
        self.base == *s || self.maybe.contains(s)
    }

    fn describe(&self) -> String {
        format!(
            "acknowledged {:?}, unacknowledged writes that may have landed {:?}",
            self.base, self.maybe
        )
    }
}

fn keyset(prefix: &str) -> Vec<Vec<Key>> {
    (0..WORKERS)
        .map(|w| {
            (0..KEYS_PER_WORKER)
                .map(|j| Key::new(format!("{prefix}-{w}-{j}")))
                .collect()
        })
        .collect()
}

/// One acknowledged write, with the resourceVersion its answer carried.
#[derive(Clone, Debug)]
struct Ack {
    name: String,
    op: Op,
    state: St,
    rv: Option<i64>,
}

#[derive(Default)]
struct WorkerOut {
    keys: Vec<Key>,
    acks: Vec<Ack>,
    violations: Vec<String>,
    ambiguous: Vec<String>,
    refused: usize,
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}})
}

fn state_of(obj: &Value) -> St {
    St::Present(obj["data"]["v"].as_str().unwrap_or("").to_string())
}

fn collection(url: &str) -> String {
    format!("{url}/api/v1/namespaces/{NS}/configmaps")
}

/// One client of the load: writes its own keys until `stop`.
async fn worker(
    url: String,
    client: reqwest::Client,
    mut keys: Vec<Key>,
    tag: String,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> WorkerOut {
    let mut out = WorkerOut::default();
    let base_url = collection(&url);
    let mut seq = 0u64;
    while !stop.load(Ordering::Acquire) {
        let i = rand::rng().random_range(0..keys.len());
        let update_not_delete = rand::rng().random_bool(0.6);
        let now = Instant::now();
        let key = &mut keys[i];
        match key.frozen {
            None => {}
            Some(Some(until)) if now >= until => {
                // Learn the key's state again, by a read.
                let r = client
                    .get(format!("{base_url}/{}", key.name))
                    .timeout(WRITE_TIMEOUT)
                    .send()
                    .await;
                let seen = match r {
                    Ok(r) if r.status() == 200 => {
                        r.json::<Value>().await.ok().map(|v| state_of(&v))
                    }
                    Ok(r) if r.status() == 404 => Some(St::Absent),
                    _ => None,
                };
                match seen {
                    Some(s) => {
                        if !key.allows(&s) {
                            out.violations.push(format!(
                                "GET {} during the load: {s:?}, but {}",
                                key.name,
                                key.describe()
                            ));
                        }
                        key.base = s;
                        key.maybe.clear();
                        key.frozen = None;
                    }
                    None => {
                        key.frozen = Some(Some(Instant::now() + THAW));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
                continue;
            }
            Some(_) => {
                if keys.iter().all(|k| k.frozen.is_some()) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                continue;
            }
        }
        seq += 1;
        let value = format!("{tag}-{seq}");
        let item = format!("{base_url}/{}", key.name);
        let (op, target, req) = match key.base {
            St::Absent => (
                Op::Create,
                St::Present(value.clone()),
                client.post(&base_url).json(&configmap(&key.name, &value)),
            ),
            St::Present(_) if update_not_delete => (
                Op::Update,
                St::Present(value.clone()),
                client.put(&item).json(&configmap(&key.name, &value)),
            ),
            St::Present(_) => (Op::Delete, St::Absent, client.delete(&item)),
        };
        key.maybe.push(target.clone());
        match req.timeout(WRITE_TIMEOUT).send().await {
            Ok(r) => {
                let code = r.status().as_u16();
                // The status line is the acknowledgement; the body may be
                // cut short by a kill.
                let body: Value = r.json().await.unwrap_or_default();
                let acknowledged = matches!(
                    (op, code),
                    (Op::Create, 201) | (Op::Update, 200) | (Op::Delete, 200)
                );
                if acknowledged {
                    key.base = target.clone();
                    key.maybe.clear();
                    out.acks.push(Ack {
                        name: key.name.clone(),
                        op,
                        state: target,
                        rv: if op == Op::Delete { None } else { rv_of(&body) },
                    });
                    acked.fetch_add(1, Ordering::AcqRel);
                } else if (op == Op::Create && code == 409) || (op != Op::Create && code == 404) {
                    // The server contradicts what it acknowledged.
                    key.maybe.pop();
                    out.violations.push(format!(
                        "{op:?} {} answered {code} {}, but {}",
                        key.name,
                        body["message"],
                        key.describe()
                    ));
                    key.frozen = Some(Some(Instant::now()));
                } else if code >= 500 {
                    out.ambiguous
                        .push(format!("{op:?} {}: {code} {}", key.name, body["message"]));
                    key.frozen = Some(Some(Instant::now() + THAW));
                } else {
                    // Refused (429, ...): not applied.
                    key.maybe.pop();
                    out.refused += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            Err(e) if e.is_connect() => {
                // Never sent.
                key.maybe.pop();
                out.refused += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => {
                out.ambiguous.push(format!("{op:?} {}: {e}", key.name));
                key.frozen = Some(None);
            }
        }
    }
    out.keys = keys;
    out
}

struct Load {
    tasks: Vec<tokio::task::JoinHandle<WorkerOut>>,
}

/// Starts one worker per key set, each on its own client (its own HTTP/2
/// connection) to `targets[w % targets.len()]`.
fn start_load(
    targets: &[(&Kapi, Arc<AtomicBool>, Arc<AtomicUsize>)],
    keys: Vec<Vec<Key>>,
    tag: &str,
) -> Load {
    let tasks = keys
        .into_iter()
        .enumerate()
        .map(|(w, ks)| {
            let (k, stop, acked) = &targets[w % targets.len()];
            tokio::spawn(worker(
                k.url.clone(),
                k.admin_client(),
                ks,
                format!("{tag}-{w}"),
                stop.clone(),
                acked.clone(),
            ))
        })
        .collect();
    Load { tasks }
}

struct LoadResult {
    keys: Vec<Vec<Key>>,
    acks: Vec<Ack>,
    violations: Vec<String>,
    ambiguous: Vec<String>,
    refused: usize,
}

impl Load {
    /// Waits (bounded) for the workers, which must have been told to stop.
    async fn join(self) -> LoadResult {
        let mut r = LoadResult {
            keys: Vec::new(),
            acks: Vec::new(),
            violations: Vec::new(),
            ambiguous: Vec::new(),
            refused: 0,
        };
        for t in self.tasks {
            let out = tokio::time::timeout(WRITE_TIMEOUT + Duration::from_secs(15), t)
                .await
                .expect("a client of the load did not finish within 85 s of being stopped")
                .expect("worker");
            r.keys.push(out.keys);
            r.acks.extend(out.acks);
            r.violations.extend(out.violations);
            r.ambiguous.extend(out.ambiguous);
            r.refused += out.refused;
        }
        r
    }
}

/// Waits until `counter` reaches `n`, polling; false after `limit`.
async fn reach(counter: &AtomicUsize, n: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while counter.load(Ordering::Acquire) < n {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The stored state of every key named `prefix-*`, by a consistent list
/// (or from the watch cache with `resourceVersion=0`), retried for up to
/// 20 s while the answer is not 200.
async fn stored(k: &Kapi, prefix: &str, from_cache: bool) -> BTreeMap<String, St> {
    let c = k.admin_client();
    let url = if from_cache {
        format!("{}?resourceVersion=0", collection(&k.url))
    } else {
        collection(&k.url)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let last = match c.get(&url).timeout(WRITE_TIMEOUT).send().await {
            Ok(r) if r.status() == 200 => {
                let v: Value = r.json().await.expect("list json");
                return v["items"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|i| {
                        let name = i["metadata"]["name"].as_str()?;
                        name.starts_with(&format!("{prefix}-"))
                            .then(|| (name.to_string(), state_of(i)))
                    })
                    .collect();
            }
            Ok(r) => format!("{} {}", r.status(), r.text().await.unwrap_or_default()),
            Err(e) => e.to_string(),
        };
        assert!(
            Instant::now() < deadline,
            "GET {url} failed for 20 s: {last}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Compares the stored state with the model, then takes it as the new
/// acknowledged state (whatever landed is now durable).
fn verify(keys: &mut [Vec<Key>], stored: &BTreeMap<String, St>, when: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut known = BTreeSet::new();
    for key in keys.iter_mut().flatten() {
        known.insert(key.name.clone());
        let s = stored.get(&key.name).cloned().unwrap_or(St::Absent);
        if !key.allows(&s) {
            bad.push(format!(
                "{when}: {} is stored as {s:?}, but {}",
                key.name,
                key.describe()
            ));
        }
        key.base = s;
        key.maybe.clear();
        key.frozen = None;
    }
    for name in stored.keys().filter(|n| !known.contains(*n)) {
        bad.push(format!("{when}: {name} is stored but was never written"));
    }
    bad
}

fn fail_if(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s):\n{}",
        problems.len(),
        problems[..problems.len().min(30)].join("\n")
    );
}

// ------------------------------------------------------- a: SIGKILL rounds

fn sigkill_rounds(etcd: Option<&EtcdCluster>, label: &str) {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().expect("tmp");
    let endpoints = etcd.map(|c| c.endpoints().join(","));
    let args: Vec<&str> = match &endpoints {
        Some(e) => vec!["--etcd-servers", e.as_str()],
        None => vec![],
    };
    let prefix = "k9";
    let mut keys = keyset(prefix);
    let rt = runtime();
    let mut k = Kapi::start_in(dir.path(), &args);
    let rounds = rounds();
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicUsize::new(0));
        let result = rt.block_on(async {
            let load = start_load(
                &[(&k, stop.clone(), acked.clone())],
                std::mem::take(&mut keys),
                &format!("r{round}"),
            );
            let enough = reach(&acked, MIN_ACKS, Duration::from_secs(30)).await;
            if enough {
                let extra = rand::rng().random_range(0..400);
                tokio::time::sleep(Duration::from_millis(extra)).await;
            }
            // SIGKILL: nothing gets flushed that was not already durable.
            unsafe_kill(k.child.id(), 9);
            let _ = k.child.wait();
            stop.store(true, Ordering::Release);
            let r = load.join().await;
            assert!(
                enough,
                "{label} round {round}: only {} writes acknowledged in 30 s before the kill; refused {}, unknown outcome {:?}",
                r.acks.len(),
                r.refused,
                &r.ambiguous[..r.ambiguous.len().min(5)]
            );
            r
        });
        keys = result.keys;
        let started = Instant::now();
        k = Kapi::start_in(dir.path(), &args);
        let restart = started.elapsed();
        let state = rt.block_on(stored(&k, prefix, false));
        let mut problems = result.violations.clone();
        let before_verify = keys.clone();
        problems.extend(verify(&mut keys, &state, &format!("after restart {round}")));
        // The restarted instance's watch cache holds the same, soon.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let cached = rt.block_on(stored(&k, prefix, true));
            if cached == state {
                break;
            }
            if Instant::now() > deadline {
                let mut again = before_verify.clone();
                problems.extend(verify(
                    &mut again,
                    &cached,
                    &format!("watch cache 10 s after restart {round}"),
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        log(format!(
            "{label} round {round}: {} acknowledged ({} creates, {} updates, {} deletes), {} unknown outcome, {} refused; restart {:.1} s; {} keys stored",
            result.acks.len(),
            result.acks.iter().filter(|a| a.op == Op::Create).count(),
            result.acks.iter().filter(|a| a.op == Op::Update).count(),
            result.acks.iter().filter(|a| a.op == Op::Delete).count(),
            result.ambiguous.len(),
            result.refused,
            restart.as_secs_f64(),
            state.len()
        ));
        fail_if(
            &problems,
            &format!("{label}, SIGKILL round {round} of {rounds}"),
        );
    }
    log(format!(
        "{label}: {rounds} rounds in {:.1} s",
        t0.elapsed().as_secs_f64()
    ));
}

#[test]
fn sigkill_under_load_embedded_store() {
    sigkill_rounds(None, "embedded store");
}

#[test]
fn sigkill_under_load_etcd() {
    let cluster = EtcdCluster::start(1);
    sigkill_rounds(Some(&cluster), "etcd");
}

// ------------------------------------------- b: etcd member and leader loss

/// What a client-go style reflector saw: a watch resumed from the last
/// resourceVersion when it ends, a re-list when it is 410 Expired.
#[derive(Default, Debug)]
struct Reflected {
    /// name -> (resourceVersion, state) for the test's keys.
    store: BTreeMap<String, St>,
    /// (type, name, resourceVersion, state) of the test's keys, in order.
    events: Vec<(String, String, i64, St)>,
    /// The resourceVersion of every re-list.
    relists: Vec<i64>,
    /// Why watches ended or failed.
    notes: Vec<String>,
    /// Events that did not come in resourceVersion order.
    disorder: Vec<String>,
    rewatches: usize,
}

async fn relist(c: &reqwest::Client, base: &str, prefix: &str, r: &mut Reflected) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match c.get(base).timeout(WRITE_TIMEOUT).send().await {
            Ok(resp) if resp.status() == 200 => {
                let v: Value = resp.json().await.unwrap_or_default();
                if let Some(rv) = rv_of(&v) {
                    r.store = v["items"]
                        .as_array()
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|i| {
                            let name = i["metadata"]["name"].as_str()?;
                            name.starts_with(&format!("{prefix}-"))
                                .then(|| (name.to_string(), state_of(i)))
                        })
                        .collect();
                    r.relists.push(rv);
                    return rv;
                }
            }
            Ok(resp) => r.notes.push(format!("re-list: {}", resp.status())),
            Err(e) => r.notes.push(format!("re-list: {e}")),
        }
        assert!(
            Instant::now() < deadline,
            "the reflector could not re-list for 60 s: {:?}",
            r.notes
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn reflect(
    url: String,
    client: reqwest::Client,
    prefix: String,
    from: i64,
    until: tokio::sync::watch::Receiver<i64>,
) -> Reflected {
    let mut r = Reflected::default();
    let base = collection(&url);
    let mut last = from;
    let mut target_since: Option<Instant> = None;
    let done = |last: i64, target_since: &mut Option<Instant>, r: &mut Reflected| -> bool {
        let target = *until.borrow();
        if target == 0 {
            return false;
        }
        if last >= target {
            return true;
        }
        if target_since.get_or_insert_with(Instant::now).elapsed() > Duration::from_secs(60) {
            r.notes.push(format!(
                "never reached resourceVersion {target} (at {last})"
            ));
            return true;
        }
        false
    };
    'watch: loop {
        if done(last, &mut target_since, &mut r) {
            break;
        }
        let resp = client
            .get(format!(
                "{base}?watch=true&resourceVersion={last}&allowWatchBookmarks=true&timeoutSeconds=60"
            ))
            .timeout(Duration::from_secs(90))
            .send()
            .await;
        let resp = match resp {
            Ok(resp) => resp,
            Err(e) => {
                r.notes.push(format!("watch from {last}: {e}"));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let code = resp.status().as_u16();
        if code == 410 {
            r.notes.push(format!("watch from {last}: 410"));
            last = relist(&client, &base, &prefix, &mut r).await;
            continue;
        }
        if code != 200 {
            let text = resp.text().await.unwrap_or_default();
            r.notes.push(format!("watch from {last}: {code} {text}"));
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        let mut lines = WatchLines::new(resp);
        loop {
            if done(last, &mut target_since, &mut r) {
                break 'watch;
            }
            match lines.next(Duration::from_millis(500)).await {
                Next::Event(ev) => {
                    let ty = ev["type"].as_str().unwrap_or("").to_string();
                    let obj = &ev["object"];
                    match ty.as_str() {
                        "BOOKMARK" => last = last.max(rv_of(obj).unwrap_or(0)),
                        "ERROR" => {
                            r.notes
                                .push(format!("watch from {last} ended with ERROR {obj}"));
                            if obj["code"] == 410 {
                                last = relist(&client, &base, &prefix, &mut r).await;
                            }
                            r.rewatches += 1;
                            continue 'watch;
                        }
                        _ => {
                            let rv = rv_of(obj).unwrap_or(0);
                            let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
                            if rv <= last {
                                r.disorder.push(format!("{ty} {name} at {rv} after {last}"));
                            }
                            last = last.max(rv);
                            if name.starts_with(&format!("{prefix}-")) {
                                let state = if ty == "DELETED" {
                                    St::Absent
                                } else {
                                    state_of(obj)
                                };
                                match &state {
                                    St::Absent => r.store.remove(&name),
                                    s => r.store.insert(name.clone(), s.clone()),
                                };
                                r.events.push((ty, name, rv, state));
                            }
                        }
                    }
                }
                Next::Idle => {}
                Next::End => {
                    r.rewatches += 1;
                    continue 'watch;
                }
                Next::Failed(m) => {
                    r.notes.push(format!("watch from {last}: {m}"));
                    r.rewatches += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue 'watch;
                }
            }
        }
    }
    r
}

/// Every acknowledged write after the last re-list has its event: the
/// keys with a gap, and what is missing.
fn coverage(acks: &[Ack], r: &Reflected) -> (BTreeSet<String>, Vec<String>) {
    let from = r.relists.last().copied().unwrap_or(0);
    let events: BTreeMap<(&str, i64), (&str, &St)> = r
        .events
        .iter()
        .map(|(ty, name, rv, st)| ((name.as_str(), *rv), (ty.as_str(), st)))
        .collect();
    let mut bad = Vec::new();
    let mut previous: BTreeMap<&str, Option<i64>> = BTreeMap::new();
    for a in acks {
        match (a.op, a.rv) {
            (Op::Create | Op::Update, Some(rv)) if rv > from => {
                let want = if a.op == Op::Create {
                    "ADDED"
                } else {
                    "MODIFIED"
                };
                match events.get(&(a.name.as_str(), rv)) {
                    Some((ty, st)) if *ty == want && **st == a.state => {}
                    other => bad.push((
                        a.name.clone(),
                        format!(
                            "acknowledged {:?} of {} at {rv} (last re-list at {from}): the watch shows {other:?}",
                            a.op, a.name
                        ),
                    )),
                }
            }
            (Op::Delete, _) => {
                if let Some(Some(p)) = previous.get(a.name.as_str()) {
                    if *p > from
                        && !r
                            .events
                            .iter()
                            .any(|(ty, n, rv, _)| ty == "DELETED" && *n == a.name && rv > p)
                    {
                        bad.push((
                            a.name.clone(),
                            format!(
                                "acknowledged delete of {} (after its write at {p}, last re-list at {from}): no DELETED event",
                                a.name
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
        previous.insert(a.name.as_str(), a.rv);
    }
    (
        bad.iter().map(|(n, _)| n.clone()).collect(),
        bad.into_iter().map(|(_, m)| m).collect(),
    )
}

/// kapi's log lines without their colours.
fn strip_ansi(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// etcd's own record of `key` since `from`: (PUT|DELETE, mod revision).
fn etcd_history(endpoints: &str, key: &str, from: i64) -> Vec<String> {
    // `etcdctl watch` replays history and then waits: cut it off.
    let out = std::process::Command::new("timeout")
        .args([
            "2",
            "etcdctl",
            "--endpoints",
            endpoints,
            "watch",
            "-w",
            "json",
        ])
        .arg(format!("--rev={from}"))
        .arg(key)
        .env("ETCDCTL_API", "3")
        .output();
    let Ok(out) = out else {
        return vec!["(etcdctl watch failed)".into()];
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|v| v["Events"].as_array().cloned().unwrap_or_default())
        .map(|e| {
            let ty = if e["type"].as_i64() == Some(1) {
                "DELETE"
            } else {
                "PUT"
            };
            format!("{ty} {}", e["kv"]["mod_revision"])
        })
        .collect()
}

/// Another client of the same resource, as informers are around a
/// failover: list (a consistent read, at etcd's current revision), watch
/// from that resourceVersion for a moment, again; returns the rounds made.
async fn restarting_informer(url: String, client: reqwest::Client, stop: Arc<AtomicBool>) -> usize {
    let base = format!("{url}/api/v1/namespaces/kube-system/configmaps");
    let mut rounds = 0;
    while !stop.load(Ordering::Acquire) {
        rounds += 1;
        let Ok(r) = client
            .get(&base)
            .timeout(Duration::from_secs(10))
            .send()
            .await
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Some(rv) = r.json::<Value>().await.ok().as_ref().and_then(rv_of) else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let _ = client
            .get(format!(
                "{base}?watch=true&resourceVersion={rv}&timeoutSeconds=1"
            ))
            .timeout(Duration::from_millis(200))
            .send()
            .await;
    }
    rounds
}

/// Keeps `etcdctl endpoint health` polling one member until it answers.
fn wait_member_healthy(cluster: &EtcdCluster, i: usize, limit: Duration) {
    let start = Instant::now();
    let endpoint = cluster.members[i].client_url.clone();
    loop {
        let (ok, _, _) = etcdctl(&endpoint, &["endpoint", "health"]);
        if ok {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "etcd member {i} not healthy {limit:?} after its restart"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn etcd_follower_then_leader_loss_under_load() {
    let t0 = Instant::now();
    let mut cluster = EtcdCluster::start(3);
    let endpoints = cluster.endpoints().join(",");
    let k = Kapi::start(&["--etcd-servers", &endpoints]);
    // etcdctl calls block: they get a thread of their own (block_in_place).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let prefix = "el";
    rt.block_on(async {
        let c = k.admin_client();
        let list: Value = c
            .get(collection(&k.url))
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let from = rv_of(&list).expect("list resourceVersion");
        let (until_tx, until_rx) = tokio::sync::watch::channel(0i64);
        let reflector = tokio::spawn(reflect(
            k.url.clone(),
            k.admin_client(),
            prefix.to_string(),
            from,
            until_rx,
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicUsize::new(0));
        let informer = tokio::spawn(restarting_informer(k.url.clone(), k.admin_client(), stop.clone()));
        let load = start_load(&[(&k, stop.clone(), acked.clone())], keyset(prefix), "el");
        let mut problems = Vec::new();
        assert!(
            reach(&acked, MIN_ACKS, Duration::from_secs(30)).await,
            "only {} writes acknowledged in 30 s with all of etcd up",
            acked.load(Ordering::Acquire)
        );

        // A follower goes away: a quorum of two remains; writes go on.
        let leader = tokio::task::block_in_place(|| cluster.wait_leader(Duration::from_secs(10)));
        let follower = (0..3).find(|i| *i != leader).expect("a follower");
        cluster.members[follower].stop();
        let lost = Instant::now();
        let before = acked.load(Ordering::Acquire);
        if !reach(&acked, before + 100, Duration::from_secs(15)).await {
            problems.push(format!(
                "follower m{follower} stopped: only {} more writes acknowledged in 15 s",
                acked.load(Ordering::Acquire) - before
            ));
        }
        log(format!(
            "follower m{follower} down: 100 more writes in {:.2} s",
            lost.elapsed().as_secs_f64()
        ));
        cluster.members[follower].start();
        tokio::task::block_in_place(|| wait_member_healthy(&cluster, follower, Duration::from_secs(20)));

        // Then the leader goes away: the other two elect one; writes come back.
        let leader = tokio::task::block_in_place(|| cluster.wait_leader(Duration::from_secs(10)));
        cluster.members[leader].stop();
        let lost = Instant::now();
        let before = acked.load(Ordering::Acquire);
        let back = reach(&acked, before + 100, Duration::from_secs(30)).await;
        let took = lost.elapsed();
        if !back {
            problems.push(format!(
                "leader m{leader} stopped: only {} more writes acknowledged in 30 s",
                acked.load(Ordering::Acquire) - before
            ));
        }
        let new_leader = tokio::task::block_in_place(|| cluster.wait_leader(Duration::from_secs(10)));
        assert_ne!(new_leader, leader);
        log(format!(
            "leader m{leader} down, m{new_leader} leads: 100 more writes in {:.2} s",
            took.as_secs_f64()
        ));
        cluster.members[leader].start();
        tokio::task::block_in_place(|| wait_member_healthy(&cluster, leader, Duration::from_secs(20)));
        let before = acked.load(Ordering::Acquire);
        if !reach(&acked, before + 100, Duration::from_secs(20)).await {
            problems.push("writes did not go on once all members were back".into());
        }
        stop.store(true, Ordering::Release);
        let mut result = load.join().await;
        let informer_rounds = tokio::time::timeout(Duration::from_secs(30), informer)
            .await
            .expect("the restarting informer did not stop")
            .expect("informer");
        problems.extend(result.violations.clone());

        // A write after everything: once the reflector has seen it, it has
        // seen (or re-listed past) every acknowledged write.
        let deadline = Instant::now() + Duration::from_secs(30);
        let sentinel = loop {
            let r = c
                .post(collection(&k.url))
                .json(&configmap("sentinel", "end"))
                .timeout(WRITE_TIMEOUT)
                .send()
                .await;
            if let Ok(r) = r {
                if r.status() == 201 {
                    break rv_of(&r.json::<Value>().await.expect("json")).expect("rv");
                }
            }
            assert!(Instant::now() < deadline, "no write succeeded for 30 s after the faults");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        until_tx.send(sentinel).expect("reflector alive");
        let reflected = tokio::time::timeout(Duration::from_secs(90), reflector)
            .await
            .expect("the reflector did not finish within 90 s")
            .expect("reflector");

        let state = stored(&k, prefix, false).await;
        problems.extend(verify(&mut result.keys, &state, "after the faults"));
        problems.extend(reflected.disorder.iter().map(|d| format!("watch out of order: {d}")));
        let (gaps, missed) = coverage(&result.acks, &reflected);
        problems.extend(missed);
        if reflected.store != state {
            let differ: Vec<String> = state
                .keys()
                .chain(reflected.store.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|n| state.get(*n) != reflected.store.get(*n))
                .take(10)
                .map(|n| format!("{n}: stored {:?}, watched {:?}", state.get(n), reflected.store.get(n)))
                .collect();
            problems.push(format!("the reflector's state is not the stored one: {differ:?}"));
        }
        log(format!(
            "etcd failover: {informer_rounds} informer restarts; {} acknowledged, {} unknown outcome (e.g. {:?}), {} refused; watch: {} events, re-lists at {:?}, {} re-watches, notes {:?}",
            result.acks.len(),
            result.ambiguous.len(),
            &result.ambiguous[..result.ambiguous.len().min(3)],
            result.refused,
            reflected.events.len(),
            reflected.relists,
            reflected.rewatches,
            &reflected.notes[..reflected.notes.len().min(5)]
        ));
        if !gaps.is_empty() {
            // What etcd itself recorded for the first keys with gaps, and
            // what kapi logged about its configmaps watch cache.
            for name in gaps.iter().take(4) {
                let seen: Vec<String> = reflected
                    .events
                    .iter()
                    .filter(|e| e.1 == *name)
                    .map(|e| format!("{} {}", e.0, e.2))
                    .collect();
                problems.push(format!(
                    "  {name}: etcd's history {:?}; watched {seen:?}",
                    etcd_history(&endpoints, &format!("/registry/configmaps/{NS}/{name}"), from)
                ));
            }
            problems.extend(
                k.stderr_lines
                    .try_iter()
                    .filter(|l| l.contains("/registry/configmaps/"))
                    .map(|l| format!("  kapi: {}", strip_ansi(&l))),
            );
        }
        fail_if(&problems, "etcd follower then leader loss");
    });
    log(format!(
        "etcd failover test: {:.1} s",
        t0.elapsed().as_secs_f64()
    ));
}

// -------------------------------------------------------- c: etcd outage

#[derive(Debug)]
struct Probe {
    what: String,
    status: Option<u16>,
    body: String,
    took: Duration,
    answered: Instant,
}

/// A GET of one object, a list and a create, sent at once.
fn probes(k: &Kapi, wave: usize) -> Vec<tokio::task::JoinHandle<Probe>> {
    let base = collection(&k.url);
    let requests = vec![
        (
            "GET configmaps/existing".to_string(),
            reqwest::Method::GET,
            format!("{base}/existing"),
            None,
        ),
        (
            "GET configmaps (list)".to_string(),
            reqwest::Method::GET,
            base.clone(),
            None,
        ),
        (
            format!("POST configmaps (outage-{wave})"),
            reqwest::Method::POST,
            base.clone(),
            Some(configmap(&format!("outage-{wave}"), "x")),
        ),
    ];
    requests
        .into_iter()
        .map(|(what, method, url, body)| {
            let c = k.admin_client();
            tokio::spawn(async move {
                let start = Instant::now();
                let mut req = c.request(method, url).timeout(WRITE_TIMEOUT);
                if let Some(b) = body {
                    req = req.json(&b);
                }
                let (status, body) = match req.send().await {
                    Ok(r) => {
                        let s = r.status().as_u16();
                        (Some(s), r.text().await.unwrap_or_default())
                    }
                    Err(e) => (None, e.to_string()),
                };
                Probe {
                    what: format!("wave {wave}: {what}"),
                    status,
                    body,
                    took: start.elapsed(),
                    answered: Instant::now(),
                }
            })
        })
        .collect()
}

async fn readyz(c: &reqwest::Client, url: &str) -> (u16, String) {
    match c
        .get(format!("{url}/readyz?verbose"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
    {
        Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
        Err(e) => (0, e.to_string()),
    }
}

#[test]
fn etcd_outage_answers_5xx_and_recovers() {
    let t0 = Instant::now();
    let mut cluster = EtcdCluster::start(1);
    let mut k = Kapi::start(&["--etcd-servers", &cluster.endpoints().join(",")]);
    let pid = k.child.id();
    let rt = runtime();
    rt.block_on(async {
        let c = k.admin_client();
        let r = c
            .post(collection(&k.url))
            .json(&configmap("existing", "x"))
            .send()
            .await
            .expect("create");
        assert_eq!(r.status(), 201);
        let deadline = Instant::now() + Duration::from_secs(20);
        while readyz(&c, &k.url).await.0 != 200 {
            assert!(
                Instant::now() < deadline,
                "/readyz not ok before the outage: {:?}",
                readyz(&c, &k.url).await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        cluster.members[0].stop();
        let down = Instant::now();
        let mut waves = probes(&k, 1);
        // /readyz reports etcd failing.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut problems = Vec::new();
        loop {
            let (code, body) = readyz(&c, &k.url).await;
            if code == 500 && body.contains("[-]etcd") {
                log(format!(
                    "/readyz failing {:.1} s into the outage",
                    down.elapsed().as_secs_f64()
                ));
                break;
            }
            if Instant::now() > deadline {
                problems.push(format!(
                    "/readyz?verbose 30 s into the etcd outage: {code} {body}"
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        waves.extend(probes(&k, 2));
        // A third wave once kapi has been without etcd for a while.
        tokio::time::sleep_until((down + Duration::from_secs(12)).into()).await;
        waves.extend(probes(&k, 3));
        // etcd stays away for 15 s, and then until every probe answered,
        // for 30 s at most.
        while down.elapsed() < Duration::from_secs(30)
            && (down.elapsed() < Duration::from_secs(15) || !waves.iter().all(|w| w.is_finished()))
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let outage = down.elapsed();
        cluster.members[0].start();
        let up = Instant::now();
        log(format!("etcd down for {:.1} s", outage.as_secs_f64()));

        // kapi recovers by itself: writes go through, /readyz is ok.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut i = 0;
        loop {
            i += 1;
            let r = c
                .post(collection(&k.url))
                .json(&configmap(&format!("after-{i}"), "x"))
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            let last = match r {
                Ok(r) if r.status() == 201 => break,
                Ok(r) => format!("{} {}", r.status(), r.text().await.unwrap_or_default()),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                problems.push(format!(
                    "no write succeeded within 30 s of etcd's return; the last: {last}"
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        log(format!(
            "writes back {:.1} s after etcd",
            up.elapsed().as_secs_f64()
        ));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (code, body) = readyz(&c, &k.url).await;
            if code == 200 {
                break;
            }
            if Instant::now() > deadline {
                problems.push(format!(
                    "/readyz?verbose 30 s after etcd's return: {code} {body}"
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        log(format!(
            "/readyz ok {:.1} s after etcd",
            up.elapsed().as_secs_f64()
        ));

        for w in waves {
            let p = tokio::time::timeout(WRITE_TIMEOUT + Duration::from_secs(5), w)
                .await
                .expect("a probe outlived its client timeout")
                .expect("probe");
            let during = p.answered < up;
            log(format!(
                "{}: {:?} after {:.1} s ({}) {}",
                p.what,
                p.status,
                p.took.as_secs_f64(),
                if during { "etcd down" } else { "etcd back" },
                &p.body[..p.body.len().min(200)]
            ));
            let Some(code) = p.status else {
                problems.push(format!(
                    "{}: no answer within {WRITE_TIMEOUT:?}: {}",
                    p.what, p.body
                ));
                continue;
            };
            if p.took > Duration::from_secs(65) {
                problems.push(format!(
                    "{}: answered {code} only after {:?}",
                    p.what, p.took
                ));
            }
            let success = (200..300).contains(&code);
            if during || !success {
                let status: Value = serde_json::from_str(&p.body).unwrap_or_default();
                if ![500, 503, 504].contains(&code)
                    || status["kind"] != "Status"
                    || status["code"] != code
                {
                    problems.push(format!(
                        "{} with etcd {}: {code} {} (want a 500/503/504 Status)",
                        p.what,
                        if during { "down" } else { "back" },
                        p.body
                    ));
                }
            }
        }
        fail_if(&problems, "etcd outage");
    });
    assert!(
        k.child.try_wait().expect("try_wait").is_none(),
        "kapi (pid {pid}) exited during the etcd outage"
    );
    log(format!(
        "etcd outage test: {:.1} s",
        t0.elapsed().as_secs_f64()
    ));
}

// ------------------------------------ d: one of two instances killed

#[test]
fn one_of_two_instances_killed_under_load() {
    let t0 = Instant::now();
    let cluster = EtcdCluster::start(1);
    let endpoints = cluster.endpoints().join(",");
    let a = Kapi::start(&["--etcd-servers", &endpoints]);
    let mut b = Kapi::start(&["--etcd-servers", &endpoints]);
    let rt = runtime();
    let prefix = "two";
    rt.block_on(async {
        let (stop_a, stop_b) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (acked_a, acked_b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        // Even workers write through a, odd ones through b.
        let load = start_load(
            &[
                (&a, stop_a.clone(), acked_a.clone()),
                (&b, stop_b.clone(), acked_b.clone()),
            ],
            keyset(prefix),
            "two",
        );
        let half = MIN_ACKS / 2;
        assert!(
            reach(&acked_a, half, Duration::from_secs(30)).await
                && reach(&acked_b, half, Duration::from_secs(30)).await,
            "too few writes acknowledged before the kill: a {}, b {}",
            acked_a.load(Ordering::Acquire),
            acked_b.load(Ordering::Acquire)
        );
        let extra = rand::rng().random_range(0..400);
        tokio::time::sleep(Duration::from_millis(extra)).await;
        unsafe_kill(b.child.id(), 9);
        let _ = b.child.wait();
        stop_b.store(true, Ordering::Release);
        // The survivor goes on serving.
        let at_kill = acked_a.load(Ordering::Acquire);
        let mut problems = Vec::new();
        if !reach(&acked_a, at_kill + 100, Duration::from_secs(20)).await {
            problems.push(format!(
                "the survivor acknowledged only {} writes in 20 s after the other was killed",
                acked_a.load(Ordering::Acquire) - at_kill
            ));
        }
        stop_a.store(true, Ordering::Release);
        let mut result = load.join().await;
        problems.extend(result.violations.clone());
        let state = stored(&a, prefix, false).await;
        let mut check = result.keys.clone();
        problems.extend(verify(&mut check, &state, "on the survivor"));
        // The survivor's watch cache agrees, soon.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let cached = stored(&a, prefix, true).await;
            if cached == state {
                break;
            }
            if Instant::now() > deadline {
                let mut again = result.keys.clone();
                problems.extend(verify(
                    &mut again,
                    &cached,
                    "the survivor's watch cache after 10 s",
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        result.keys = check;
        log(format!(
            "two instances: {} acknowledged (a {}, b {}), {} unknown outcome, {} refused",
            result.acks.len(),
            acked_a.load(Ordering::Acquire),
            acked_b.load(Ordering::Acquire),
            result.ambiguous.len(),
            result.refused
        ));
        fail_if(&problems, "one of two instances killed");
    });
    log(format!(
        "two instances test: {:.1} s",
        t0.elapsed().as_secs_f64()
    ));
}
