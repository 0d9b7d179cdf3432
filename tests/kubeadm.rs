//! kapi started with the command line of kubeadm's kube-apiserver static
//! pod manifest (its PKI made by the test, a real etcd): it serves, and the
//! parts that command line switches on work as in a kubeadm cluster:
//! `Node,RBAC` authorization (a kubelet reads only what its pods use),
//! bootstrap tokens (`kubeadm join`'s credential) and front-proxy
//! authentication from the caller's front-proxy CA.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;
use common::pki::Ca;
use serde_json::{json, Value};

/// Kills the server when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).expect("write");
    path.display().to_string()
}

fn client(ca: &str, identity: Option<&(String, String)>) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.as_bytes()).expect("ca")])
        .timeout(Duration::from_secs(10));
    if let Some((cert, key)) = identity {
        b = b.identity(reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).expect("id"));
    }
    b.build().expect("client")
}

async fn status(req: reqwest::RequestBuilder) -> (u16, Value) {
    let r = req.send().await.expect("request");
    let code = r.status().as_u16();
    (code, r.json().await.unwrap_or(Value::Null))
}

#[test]
fn kubeadms_static_pod_command_line_serves_as_a_kubeadm_cluster_does() {
    let etcd = common::etcd::EtcdCluster::start(1);
    let pki = tempfile::tempdir().expect("tmp");
    let d = pki.path();
    let ca = Ca::new("kubernetes");
    let front_proxy_ca = Ca::new("front-proxy-ca");
    let sa = rcgen::KeyPair::generate().expect("sa key");
    let serving = ca.serving("kube-apiserver");
    let proxy_client = front_proxy_ca.client("front-proxy-client", &[]);
    let port = common::etcd::free_port();
    let args = vec![
        "--advertise-address=127.0.0.1".to_string(),
        "--allow-privileged=true".into(),
        "--authorization-mode=Node,RBAC".into(),
        format!("--client-ca-file={}", write(d, "ca.crt", &ca.cert_pem)),
        "--enable-admission-plugins=NodeRestriction".into(),
        "--enable-bootstrap-token-auth=true".into(),
        format!("--etcd-servers={}", etcd.endpoints()[0]),
        "--kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt".into(),
        "--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key".into(),
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname".into(),
        format!(
            "--proxy-client-cert-file={}",
            write(d, "front-proxy-client.crt", &proxy_client.0)
        ),
        format!(
            "--proxy-client-key-file={}",
            write(d, "front-proxy-client.key", &proxy_client.1)
        ),
        "--requestheader-allowed-names=front-proxy-client".into(),
        format!(
            "--requestheader-client-ca-file={}",
            write(d, "front-proxy-ca.crt", &front_proxy_ca.cert_pem)
        ),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
        "--requestheader-group-headers=X-Remote-Group".into(),
        "--requestheader-username-headers=X-Remote-User".into(),
        format!("--secure-port={port}"),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
        format!(
            "--service-account-key-file={}",
            write(d, "sa.pub", &sa.public_key_pem())
        ),
        format!(
            "--service-account-signing-key-file={}",
            write(d, "sa.key", &sa.serialize_pem())
        ),
        "--service-cluster-ip-range=10.96.0.0/12".into(),
        format!("--tls-cert-file={}", write(d, "apiserver.crt", &serving.0)),
        format!(
            "--tls-private-key-file={}",
            write(d, "apiserver.key", &serving.1)
        ),
    ];
    let mut child = Command::new(common::kapi_bin());
    child
        .arg("kube-apiserver")
        .args(&args)
        .env("HOME", d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut server = Child(child.spawn().expect("start"));
    let admin_id = ca.client(
        "kubernetes-admin",
        &["kubeadm:cluster-admins", "system:masters"],
    );
    let admin = client(&ca.cert_pem, Some(&admin_id));
    let base = format!("https://127.0.0.1:{port}");
    let rt = common::runtime();
    rt.block_on(async {
        let mut ready = false;
        for _ in 0..150 {
            if let Ok(r) = admin.get(format!("{base}/readyz")).send().await {
                if r.status() == 200 {
                    ready = true;
                    break;
                }
            }
            if let Ok(Some(exit)) = server.0.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = server.0.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                panic!("kapi stopped ({exit}): {err}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ready, "/readyz never answered 200");

        // A kubelet's pod uses one secret of two.
        let post = |path: &str, body: Value| admin.post(format!("{base}{path}")).json(&body);
        // kube-controller-manager, which a kubeadm cluster runs beside the
        // apiserver, would have made the ServiceAccount pods default to.
        let (code, body) = status(post(
            "/api/v1/namespaces/default/serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}),
        ))
        .await;
        assert_eq!(code, 201, "{body}");
        for name in ["used", "unused"] {
            let (code, body) = status(post(
                "/api/v1/namespaces/default/secrets",
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"k": "v"}}),
            ))
            .await;
            assert_eq!(code, 201, "{body}");
        }
        let (code, body) = status(post(
            "/api/v1/namespaces/default/pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
                "nodeName": "node-1",
                "containers": [{"name": "c", "image": "busybox"}],
                "volumes": [{"name": "s", "secret": {"secretName": "used"}}]}}),
        ))
        .await;
        assert_eq!(code, 201, "{body}");
        let kubelet = client(
            &ca.cert_pem,
            Some(&ca.client("system:node:node-1", &["system:nodes"])),
        );
        let get = |c: &reqwest::Client, path: &str| c.get(format!("{base}{path}"));
        let (code, _) = status(get(&kubelet, "/api/v1/namespaces/default/secrets/used")).await;
        assert_eq!(code, 200, "a secret its pod mounts");
        let (code, body) = status(get(&kubelet, "/api/v1/namespaces/default/secrets/unused")).await;
        assert_eq!(code, 403, "{body}");
        let (code, _) = status(get(&kubelet, "/api/v1/namespaces/default/secrets")).await;
        assert_eq!(code, 403, "no listing of secrets");
        // What the system:node rules allow: reading nodes and services.
        let (code, _) = status(get(&kubelet, "/api/v1/services")).await;
        assert_eq!(code, 200);
        // Another node sees none of node-1's secrets.
        let other = client(
            &ca.cert_pem,
            Some(&ca.client("system:node:node-2", &["system:nodes"])),
        );
        let (code, _) = status(get(&other, "/api/v1/namespaces/default/secrets/used")).await;
        assert_eq!(code, 403);

        // A bootstrap token, as `kubeadm token create` stores it.
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let (code, body) = status(post(
            "/api/v1/namespaces/kube-system/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                "metadata": {"name": "bootstrap-token-abcdef"},
                "data": {"token-id": b64("abcdef"), "token-secret": b64("0123456789abcdef"),
                    "usage-bootstrap-authentication": b64("true"),
                    "auth-extra-groups": b64("system:bootstrappers:kubeadm:default-node-token")}}),
        ))
        .await;
        assert_eq!(code, 201, "{body}");
        let anonymous = client(&ca.cert_pem, None);
        let review = |token: &str| {
            anonymous
                .post(format!("{base}/apis/authentication.k8s.io/v1/selfsubjectreviews"))
                .bearer_auth(token)
                .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        };
        let (code, who) = status(review("abcdef.0123456789abcdef")).await;
        assert_eq!(code, 201, "{who}");
        assert_eq!(who["status"]["userInfo"]["username"], "system:bootstrap:abcdef");
        assert_eq!(
            who["status"]["userInfo"]["groups"],
            json!(["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"])
        );
        let (code, _) = status(review("abcdef.0000000000000000")).await;
        assert_eq!(code, 401, "a wrong token secret");

        // The front proxy of the caller's PKI names users.
        let proxy = client(&ca.cert_pem, Some(&proxy_client));
        let (code, who) = status(
            proxy
                .post(format!("{base}/apis/authentication.k8s.io/v1/selfsubjectreviews"))
                .header("X-Remote-User", "alice")
                .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
        )
        .await;
        assert_eq!(code, 201, "{who}");
        assert_eq!(who["status"]["userInfo"]["username"], "alice");
    });
}
