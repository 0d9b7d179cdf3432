//! Several kapi instances on one etcd: allocations never collide, the
//! `kubernetes` endpoints list the live instances, one leads the controllers.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{runtime, Kapi};

fn svc(name: &str) -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"type": "NodePort", "ports": [{"port": 80}], "selector": {"app": name}}})
}

#[test]
fn two_instances_share_one_etcd_without_collisions() {
    let cluster = common::etcd::EtcdCluster::start(1);
    let endpoints = cluster.endpoints().join(",");
    let a = Kapi::start(&["--etcd-servers", &endpoints]);
    let b = Kapi::start(&["--etcd-servers", &endpoints]);
    let rt = runtime();
    rt.block_on(async {
        let (ca, cb) = (a.admin_client(), b.admin_client());
        let mut tasks = Vec::new();
        for i in 0..100 {
            for (c, url, side) in [(ca.clone(), a.url.clone(), "a"), (cb.clone(), b.url.clone(), "b")] {
                tasks.push(tokio::spawn(async move {
                    let r = c.post(format!("{url}/api/v1/namespaces/default/services")).json(&svc(&format!("{side}{i}"))).send().await.expect("create");
                    let code = r.status().as_u16();
                    (code, r.text().await.unwrap_or_default())
                }));
            }
        }
        for t in tasks {
            let (code, body) = t.await.expect("task");
            assert_eq!(code, 201, "{body}");
        }
        let list: serde_json::Value = ca.get(format!("{}/api/v1/namespaces/default/services", a.url)).send().await.expect("list").json().await.expect("json");
        let items = list["items"].as_array().expect("items");
        assert_eq!(items.len(), 201, "200 services and kubernetes");
        let ips: BTreeSet<&str> = items.iter().filter_map(|s| s["spec"]["clusterIP"].as_str()).collect();
        assert_eq!(ips.len(), 201, "every ClusterIP is unique");
        let ports: Vec<i64> = items.iter().filter_map(|s| s["spec"]["ports"][0]["nodePort"].as_i64()).collect();
        let unique: BTreeSet<i64> = ports.iter().copied().collect();
        assert_eq!((ports.len(), unique.len()), (200, 200), "every NodePort is unique");
        // One instance holds the controller-manager lease.
        let lease: serde_json::Value = ca.get(format!("{}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager", a.url)).send().await.expect("lease").json().await.expect("json");
        assert!(lease["spec"]["holderIdentity"].as_str().is_some_and(|h| h.starts_with("kapi-")), "{lease}");
    });
    // The kubernetes endpoints list both instances, then only the live one.
    let port_of = |k: &Kapi| {
        k.url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u64>().ok())
            .expect("port")
    };
    let endpoint_ports = |k: &Kapi| -> BTreeSet<u64> {
        rt.block_on(async {
            let v: serde_json::Value = k
                .admin_client()
                .get(format!(
                    "{}/api/v1/namespaces/default/endpoints/kubernetes",
                    k.url
                ))
                .send()
                .await
                .expect("ep")
                .json()
                .await
                .expect("json");
            v["subsets"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .filter_map(|s| s["ports"][0]["port"].as_u64())
                .collect()
        })
    };
    let both: BTreeSet<u64> = [port_of(&a), port_of(&b)].into_iter().collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while endpoint_ports(&a) != both {
        assert!(
            Instant::now() < deadline,
            "endpoints never listed both instances: {:?}",
            endpoint_ports(&a)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut b = b;
    assert!(b.terminate().success());
    let only_a: BTreeSet<u64> = [port_of(&a)].into_iter().collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while endpoint_ports(&a) != only_a {
        assert!(
            Instant::now() < deadline,
            "a stopped instance stayed in the endpoints: {:?}",
            endpoint_ports(&a)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Issue 23 point 5: one data dir, one server, whatever the backend. The
/// second `kapi serve` on a held dir stops with the holder's pid and URL and
/// leaves the first one's kubeconfig alone.
#[test]
fn a_second_server_on_one_data_dir_is_refused_whatever_the_backend() {
    let cluster = common::etcd::EtcdCluster::start(1);
    let endpoints = cluster.endpoints().join(",");
    for backend in [vec![], vec!["--etcd-servers", endpoints.as_str()]] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut first = Kapi::start_in(tmp.path(), &backend);
        let kubeconfig_before = std::fs::read(&first.kubeconfig).expect("kubeconfig");
        let mut second = std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(tmp.path())
            .args(&backend)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let status = common::wait_timeout(&mut second, Duration::from_secs(30))
            .expect("the second server stops on its own");
        let mut err = String::new();
        std::io::Read::read_to_string(&mut second.stderr.take().expect("stderr"), &mut err)
            .expect("stderr");
        assert_eq!(status.code(), Some(1), "{backend:?}: {err}");
        let pid = first.child.id().to_string();
        assert!(
            err.contains("--data-dir")
                && err.contains("in use by another kapi")
                && err.contains(&format!("pid {pid}, serving {}", first.url)),
            "{backend:?}: {err}"
        );
        assert_eq!(
            std::fs::read(&first.kubeconfig).expect("kubeconfig"),
            kubeconfig_before,
            "{backend:?}: the holder's kubeconfig is untouched"
        );
        // The first still serves, through the kubeconfig it wrote.
        let (ok, out, err) =
            common::run(
                first
                    .kubectl()
                    .args(["get", "namespaces", "default", "-o", "name"]),
            );
        assert!(
            ok && out.trim() == "namespace/default",
            "{backend:?}: {out} {err}"
        );
        // Once it stops, the dir is free again.
        assert!(first.terminate().success());
        let mut again = Kapi::start_in(tmp.path(), &backend);
        assert!(again.terminate().success());
    }
}
