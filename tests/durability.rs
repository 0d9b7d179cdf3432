//! Acknowledged writes survive: SIGKILL of the embedded store mid-load, and
//! an etcd member going away under a 3-member cluster.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{runtime, Kapi};
use rand::Rng;

fn cm(name: &str) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"payload": format!("value-of-{name}")}})
}

/// Creates ConfigMaps from several tasks until told to stop or the server
/// goes away; returns every name the server acknowledged with 201.
async fn create_until(
    k_url: String,
    client: reqwest::Client,
    stop: Arc<Mutex<bool>>,
    prefix: String,
    workers: usize,
) -> BTreeSet<String> {
    let acked = Arc::new(Mutex::new(BTreeSet::new()));
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (url, client, stop, acked, prefix) = (
            k_url.clone(),
            client.clone(),
            stop.clone(),
            acked.clone(),
            prefix.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !*stop.lock().expect("lock") {
                let name = format!("{prefix}-{w}-{i}");
                i += 1;
                let resp = client
                    .post(format!("{url}/api/v1/namespaces/default/configmaps"))
                    .json(&cm(&name))
                    .timeout(Duration::from_secs(5))
                    .send()
                    .await;
                match resp {
                    Ok(r) if r.status() == 201 => {
                        acked.lock().expect("lock").insert(name);
                    }
                    Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let out = acked.lock().expect("lock").clone();
    out
}

async fn stored_configmaps(k: &Kapi) -> BTreeSet<String> {
    let resp = k
        .admin_client()
        .get(format!("{}/api/v1/namespaces/default/configmaps", k.url))
        .send()
        .await
        .expect("list");
    assert_eq!(resp.status(), 200, "list failed: {:?}", resp.text().await);
    let list: serde_json::Value = resp.json().await.expect("json");
    let items = list["items"].as_array().cloned().unwrap_or_default();
    for item in &items {
        let name = item["metadata"]["name"].as_str().unwrap_or("");
        // The root CA publisher's ConfigMap is not one of the test's writes.
        if name == "kube-root-ca.crt" {
            continue;
        }
        assert_eq!(
            item["data"]["payload"],
            format!("value-of-{name}"),
            "object {name} is intact"
        );
    }
    items
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(String::from))
        .filter(|n| n != "kube-root-ca.crt")
        .collect()
}

#[test]
fn sigkill_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut all_acked = BTreeSet::new();
    for round in 0..5 {
        let mut k = Kapi::start_in(dir.path(), &[]);
        let rt = runtime();
        let acked = rt.block_on(async {
            let stop = Arc::new(Mutex::new(false));
            let load = tokio::spawn(create_until(
                k.url.clone(),
                k.admin_client(),
                stop.clone(),
                format!("r{round}"),
                8,
            ));
            let wait = rand::rng().random_range(150..600);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            // SIGKILL: no chance to flush anything that was not already durable.
            common::unsafe_kill(k.child.id(), 9);
            let _ = k.child.wait();
            *stop.lock().expect("lock") = true;
            load.await.expect("load")
        });
        assert!(
            !acked.is_empty(),
            "round {round}: the load acknowledged nothing before the kill"
        );
        all_acked.extend(acked);
        drop(k);
        let k = Kapi::start_in(dir.path(), &[]);
        let stored = rt.block_on(stored_configmaps(&k));
        let missing: Vec<_> = all_acked.difference(&stored).collect();
        assert!(
            missing.is_empty(),
            "round {round}: acknowledged but lost: {missing:?}"
        );
    }
}

#[test]
fn etcd_member_failure_loses_no_acknowledged_write() {
    let mut cluster = common::etcd::EtcdCluster::start(3);
    let endpoints = cluster.endpoints().join(",");
    let k = Kapi::start(&["--etcd-servers", &endpoints]);
    let rt = runtime();
    let acked = rt.block_on(async {
        let stop = Arc::new(Mutex::new(false));
        let load = tokio::spawn(create_until(
            k.url.clone(),
            k.admin_client(),
            stop.clone(),
            "fo".into(),
            4,
        ));
        tokio::time::sleep(Duration::from_millis(700)).await;
        let before = Instant::now();
        cluster.members[0].stop();
        // kapi keeps serving through the loss of one member of three.
        let mut ok_after = 0;
        let deadline = Instant::now() + Duration::from_secs(20);
        while ok_after < 20 && Instant::now() < deadline {
            let r = k
                .admin_client()
                .get(format!(
                    "{}/api/v1/namespaces/default/configmaps?limit=1",
                    k.url
                ))
                .send()
                .await;
            if r.is_ok_and(|r| r.status() == 200) {
                ok_after += 1;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            ok_after >= 20,
            "kapi stopped serving after a member went away ({ok_after} good reads in {:?})",
            before.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        *stop.lock().expect("lock") = true;
        load.await.expect("load")
    });
    assert!(
        acked.len() > 10,
        "too few writes acknowledged: {}",
        acked.len()
    );
    let stored = rt.block_on(stored_configmaps(&k));
    let missing: Vec<_> = acked.difference(&stored).collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    // The watch cache (resourceVersion=0 reads) converges on the same set.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let cached: BTreeSet<String> = rt.block_on(async {
            let v: serde_json::Value = k
                .admin_client()
                .get(format!(
                    "{}/api/v1/namespaces/default/configmaps?resourceVersion=0",
                    k.url
                ))
                .send()
                .await
                .expect("list")
                .json()
                .await
                .expect("json");
            v["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(String::from))
                .collect()
        });
        if acked.is_subset(&cached) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watch cache misses {:?}",
            acked.difference(&cached).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn foreign_data_in_the_data_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(dir.path().join("store")).expect("mkdir");
    std::fs::write(
        dir.path().join("store/kapi.redb"),
        b"this is not a database, and must not be overwritten",
    )
    .expect("write");
    let out = std::process::Command::new(common::kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kapi.redb") && err.contains("--data-dir"),
        "{err}"
    );
    let kept = std::fs::read(dir.path().join("store/kapi.redb")).expect("read");
    assert_eq!(kept, b"this is not a database, and must not be overwritten");
}

#[test]
fn readyz_etcd_follows_etcd_reachability() {
    let mut cluster = common::etcd::EtcdCluster::start(1);
    let k = Kapi::start(&["--etcd-servers", &cluster.endpoints().join(",")]);
    let rt = runtime();
    let status = |k: &Kapi| {
        rt.block_on(async {
            k.admin_client()
                .get(format!("{}/readyz/etcd", k.url))
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        })
    };
    assert_eq!(status(&k), 200);
    cluster.members[0].stop();
    let deadline = Instant::now() + Duration::from_secs(20);
    while status(&k) != 500 {
        assert!(
            Instant::now() < deadline,
            "/readyz/etcd stayed ok with etcd gone"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    cluster.members[0].start();
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(&k) != 200 {
        assert!(Instant::now() < deadline, "/readyz/etcd did not recover");
        std::thread::sleep(Duration::from_millis(200));
    }
}
