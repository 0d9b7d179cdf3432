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
