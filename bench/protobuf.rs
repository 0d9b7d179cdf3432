//! Protobuf figures of issue 19, against a release `kapi serve` on the
//! embedded store with 500 ConfigMaps: get and list(500) throughput from
//! 32 clients with `Accept: application/json` and with client-go's
//! `application/vnd.kubernetes.protobuf, application/json` (target:
//! protobuf list >= 1.5x JSON list, as upstream gains from it).
//! Run with `./bench/run protobuf` (`--smoke` for a seconds-long pass).

mod common;

use anyhow::{bail, Result};
use bytes::Bytes;
use common::{KapiProc, Op, Target};
use http::{Method, StatusCode};
use serde_json::json;

const CLIENTS: usize = 32;
const OBJECTS: usize = 500;
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

async fn run(bin: &str, gets: usize, lists: usize) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(bin, &dir.path().join("data"), &[])?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    let conns = t.connect_many(CLIENTS).await?;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pb"}});
    let (s, b) = conns[0]
        .clone()
        .call(
            Method::POST,
            t.uri("/api/v1/namespaces"),
            Bytes::from(ns.to_string()),
        )
        .await?;
    if s != StatusCode::CREATED {
        bail!("namespace: {s} {}", String::from_utf8_lossy(&b));
    }
    // ConfigMaps of a typical size: labels, annotations and a few keys.
    let bodies: Vec<Bytes> = (0..OBJECTS)
        .map(|i| {
            Bytes::from(
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}"), "labels": {"app": "bench", "tier": "web"},
                        "annotations": {"owner": "team-a", "revision": i.to_string()}},
                    "data": {"a": "x".repeat(64), "b": "y".repeat(128), "c": i.to_string()}})
                .to_string(),
            )
        })
        .collect();
    let fill = Op {
        method: Method::POST,
        uris: vec![t.uri("/api/v1/namespaces/pb/configmaps")],
        bodies,
        expect: StatusCode::CREATED,
        min_len: 0,
    };
    let st = common::load(&conns, OBJECTS, fill, None, None).await;
    if st.errors > 0 {
        bail!("filling: {} errors, first: {:?}", st.errors, st.first_error);
    }
    let pid = Some(kapi.pid());
    let mut rates = Vec::new();
    for (what, total, uris) in [
        (
            "get",
            gets,
            (0..OBJECTS)
                .map(|i| t.uri(&format!("/api/v1/namespaces/pb/configmaps/cm-{i}")))
                .collect::<Vec<_>>(),
        ),
        (
            "list(500)",
            lists,
            vec![t.uri("/api/v1/namespaces/pb/configmaps")],
        ),
    ] {
        for (encoding, accept) in [("JSON", "application/json"), ("protobuf", PROTOBUF)] {
            let cs: Vec<_> = conns.iter().map(|c| c.accepting(accept)).collect();
            let op = Op {
                method: Method::GET,
                uris: uris.clone(),
                bodies: Vec::new(),
                expect: StatusCode::OK,
                min_len: 1,
            };
            // A warm-up pass, then the measured one.
            common::load(&cs, total / 10 + 1, op_clone(&op), pid, None).await;
            let st = common::load(&cs, total, op, pid, None).await;
            if st.errors > 0 {
                bail!(
                    "{what} {encoding}: {} errors, first: {:?}",
                    st.errors,
                    st.first_error
                );
            }
            println!(
                "{what:<10} {encoding:<9} {:>9.0} req/s   p99 {:>7.2} ms",
                st.rate(),
                st.p_ms(0.99)
            );
            rates.push(st.rate());
        }
    }
    let get_ratio = rates[1] / rates[0];
    let list_ratio = rates[3] / rates[2];
    println!("get       protobuf / JSON  {get_ratio:>5.2}x");
    println!(
        "list(500) protobuf / JSON  {list_ratio:>5.2}x   target >= 1.50x   {}",
        if list_ratio >= 1.5 { "met" } else { "MISSED" }
    );
    kapi.stop();
    Ok(())
}

fn op_clone(op: &Op) -> Op {
    Op {
        method: op.method.clone(),
        uris: op.uris.clone(),
        bodies: op.bodies.clone(),
        expect: op.expect,
        min_len: op.min_len,
    }
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let (gets, lists) = if smoke { (2_000, 100) } else { (50_000, 2_000) };
    let bin = common::kapi_bin();
    let bin = bin.as_str();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "protobuf on the wire (issue 19){}",
        if smoke { ", smoke sizes" } else { "" }
    );
    if let Err(e) = rt.block_on(run(bin, gets, lists)) {
        eprintln!("protobuf bench failed: {e:#}");
        std::process::exit(1);
    }
}
