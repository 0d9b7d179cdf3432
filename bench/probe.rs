//! A load against a server that is already running, for profiling it
//! while it works (perf, etcd's /metrics): ConfigMap creates or gets at
//! 32 clients in namespace `default`, each printed as a rate.
//!   cargo bench --bench probe -- KUBECONFIG creates|gets|lists N [PREFIX]
//!   cargo bench --bench probe -- ETCD-URL raw-etcd N
//!   cargo bench --bench probe -- KUBECONFIG fanout CHANGES [WATCHERS]
//! Gets read the names a creates run with the same PREFIX wrote; lists
//! take `?limit=PREFIX` when PREFIX is a number. `raw-etcd` is bench/run's
//! raw etcd phase: N create-if-absent transactions, then their deletes.
//! `fanout` is its watch fan-out: WATCHERS (1,000) watches on 32
//! connections, CHANGES creates one at a time, each printed as the time
//! until every watcher had it.

mod common;

use anyhow::{bail, Context, Result};
use common::{Op, Target};
use http::{Method, StatusCode};

const CLIENTS: usize = 32;

async fn run(args: &[String]) -> Result<()> {
    let [kubeconfig, what, n, rest @ ..] = args else {
        bail!("usage: cargo bench --bench probe -- KUBECONFIG creates|gets|lists N [PREFIX]");
    };
    let n: usize = n.parse().context("N")?;
    if what == "raw-etcd" {
        let st = common::raw_etcd(std::slice::from_ref(kubeconfig), n, CLIENTS, None).await?;
        return report(what, &st);
    }
    let prefix = rest.first().map_or("p", String::as_str);
    let t = Target::from_kubeconfig(std::path::Path::new(kubeconfig))?;
    let conns = t.connect_many(CLIENTS).await?;
    if what == "fanout" {
        let watchers = rest
            .first()
            .map_or(Ok(1000), |w| w.parse())
            .context("WATCHERS")?;
        let writer = t.connect().await?;
        let f = common::fanout(&t, &conns, &writer, "default", watchers, n, 0, |k| {
            common::configmap_json(&format!("fan-{k}-{}", std::process::id()))
        })
        .await?;
        let p = |q: f64| common::pct(&f.all_ms, q);
        println!(
            "fanout of {n} changes to {watchers} watchers: all had it after p50 {:.2} ms, p99 {:.2} ms (the first, not counted, {:.2} ms); {} missing",
            p(0.5),
            p(0.99),
            f.first_ms,
            f.missing
        );
        return Ok(());
    }
    let coll = "/api/v1/namespaces/default/configmaps";
    let op = match what.as_str() {
        "creates" => Op {
            method: Method::POST,
            uris: vec![t.uri(coll)],
            bodies: (0..n)
                .map(|i| common::configmap_json(&format!("{prefix}-{i}")))
                .collect(),
            expect: StatusCode::CREATED,
            min_len: 0,
        },
        "gets" => Op {
            method: Method::GET,
            uris: (0..n)
                .map(|i| t.uri(&format!("{coll}/{prefix}-{i}")))
                .collect(),
            bodies: vec![],
            expect: StatusCode::OK,
            min_len: 0,
        },
        // Lists of ?limit=PREFIX objects (the whole namespace when not a number).
        "lists" => Op {
            method: Method::GET,
            uris: vec![t.uri(&match prefix.parse::<usize>() {
                Ok(limit) => format!("{coll}?limit={limit}"),
                Err(_) => coll.to_string(),
            })],
            bodies: vec![],
            expect: StatusCode::OK,
            min_len: 0,
        },
        other => bail!("{other}: creates, gets or lists"),
    };
    let st = common::load(&conns, n, op, None, None).await;
    report(what, &st)
}

fn report(what: &str, st: &common::Stats) -> Result<()> {
    println!(
        "{what} at {CLIENTS} clients: {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} errors{}",
        st.rate(),
        st.p_ms(0.5),
        st.p_ms(0.99),
        st.errors,
        st.first_error
            .as_ref()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Err(e) = rt.block_on(run(&args)) {
        eprintln!("probe: {e:#}");
        std::process::exit(1);
    }
}
