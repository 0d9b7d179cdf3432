//! Real etcd for tests: members on free loopback ports with temporary
//! data dirs, stopped when dropped. Needs Debian's etcd-server
//! (`./scripts/test` installs it).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct EtcdMember {
    pub name: String,
    pub client_url: String,
    pub peer_url: String,
    child: Option<Child>,
    args: Vec<String>,
    _dir: tempfile::TempDir,
}

pub struct EtcdCluster {
    pub members: Vec<EtcdMember>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn etcd_bin() -> String {
    std::env::var("KAPI_TEST_ETCD").unwrap_or_else(|_| "etcd".into())
}

impl EtcdMember {
    fn spawn(&mut self) {
        let child = Command::new(etcd_bin())
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "etcd is not installed: run ./scripts/test, which installs Debian's etcd-server",
            );
        self.child = Some(child);
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The running member's process id (for its RSS).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    pub fn start(&mut self) {
        if self.child.is_none() {
            self.spawn();
        }
    }
}

impl Drop for EtcdMember {
    fn drop(&mut self) {
        self.stop();
    }
}

impl EtcdCluster {
    pub fn start(size: usize) -> EtcdCluster {
        let names: Vec<String> = (0..size).map(|i| format!("m{i}")).collect();
        let peers: Vec<(u16, u16)> = (0..size).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> = names
            .iter()
            .zip(&peers)
            .map(|(n, (_, p))| format!("{n}=http://127.0.0.1:{p}"))
            .collect();
        let token = format!("kapi-test-{}-{}", std::process::id(), free_port());
        let mut members = Vec::new();
        for (name, (client, peer)) in names.iter().zip(&peers) {
            let dir = tempfile::tempdir().expect("tmp");
            let client_url = format!("http://127.0.0.1:{client}");
            let peer_url = format!("http://127.0.0.1:{peer}");
            let args = vec![
                "--name".into(),
                name.clone(),
                "--data-dir".into(),
                dir.path().join("data").to_string_lossy().into_owned(),
                "--listen-client-urls".into(),
                client_url.clone(),
                "--advertise-client-urls".into(),
                client_url.clone(),
                "--listen-peer-urls".into(),
                peer_url.clone(),
                "--initial-advertise-peer-urls".into(),
                peer_url.clone(),
                "--initial-cluster".into(),
                initial.join(","),
                "--initial-cluster-token".into(),
                token.clone(),
                "--initial-cluster-state".into(),
                "new".into(),
                "--heartbeat-interval".into(),
                "50".into(),
                "--election-timeout".into(),
                "500".into(),
            ];
            let mut m = EtcdMember {
                name: name.clone(),
                client_url,
                peer_url,
                child: None,
                args,
                _dir: dir,
            };
            m.spawn();
            members.push(m);
        }
        let cluster = EtcdCluster { members };
        cluster.wait_healthy(Duration::from_secs(30));
        cluster
    }

    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| m.client_url.clone()).collect()
    }

    /// Waits until a write goes through (a leader exists).
    pub fn wait_healthy(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let ok = Command::new("etcdctl")
                .env("ETCDCTL_API", "3")
                .args([
                    "--endpoints",
                    &self.endpoints().join(","),
                    "--command-timeout=2s",
                    "put",
                    "/kapi-test-health",
                    "ok",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return;
            }
            if start.elapsed() > limit {
                panic!("etcd did not become healthy within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
