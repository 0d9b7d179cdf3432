//! Generated names under load (issue 21, KEP-4420 RetryGenerateName):
//! 50,000 ConfigMap creates with `generateName` from 32 clients against a
//! release `kapi serve` on the embedded store. Five random characters
//! give 27^5 names, so 50,000 collide about 90 times; every create must
//! still answer 201 (target: 0 errors). `tests/generate_name.rs` checks
//! the same with 20,000 on each test run.
//! Run with `./bench/run generate_name` (`--smoke` for 2,000).

mod common;

use anyhow::{bail, Result};
use bytes::Bytes;
use common::{KapiProc, Op, Target};
use http::{Method, StatusCode};
use serde_json::json;

const CLIENTS: usize = 32;

async fn run(bin: &str, creates: usize) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let kapi = KapiProc::spawn(bin, &dir.path().join("data"), &[])?;
    let t = Target::from_kubeconfig(&kapi.kubeconfig)?;
    let conns = t.connect_many(CLIENTS).await?;
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"generateName": "g-"}, "data": {"k": "v"}});
    let op = Op {
        method: Method::POST,
        uris: vec![t.uri("/api/v1/namespaces/default/configmaps")],
        bodies: vec![Bytes::from(body.to_string())],
        expect: StatusCode::CREATED,
        min_len: 0,
    };
    let st = common::load(&conns, creates, op, Some(kapi.pid()), None).await;
    println!(
        "{:<58} {:>12}   target {:<14} {}",
        format!("generateName creates at {CLIENTS} clients: errors of {creates}"),
        st.errors,
        "0",
        if st.errors == 0 { "met" } else { "MISSED" }
    );
    println!("{:<58} {:>12.0}", "  (creates/s)", st.rate());
    if let Some(e) = &st.first_error {
        println!("  first error: {e}");
    }
    drop(kapi);
    if st.errors > 0 {
        bail!("{} of {creates} generated creates failed", st.errors);
    }
    Ok(())
}

fn main() {
    common::bench_main("generated names (issue 21)", |bin, smoke| {
        run(bin, if smoke { 2_000 } else { 50_000 })
    });
}
