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

pub fn free_port() -> u16 {
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

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

/// What `etcdctl endpoint status` says about one running member.
#[derive(Debug, Clone)]
pub struct MemberStatus {
    /// Index in [`EtcdCluster::members`].
    pub index: usize,
    pub member_id: u64,
    pub leader: u64,
    pub revision: i64,
}

/// Runs `etcdctl` (API v3) against `endpoints`: success, stdout, stderr.
pub fn etcdctl(endpoints: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoints, "--command-timeout=3s"])
        .args(args)
        .output()
        .expect("etcdctl is not installed: run ./scripts/test");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

impl Drop for EtcdMember {
    fn drop(&mut self) {
        self.stop();
    }
}

impl EtcdCluster {
    pub fn start(size: usize) -> EtcdCluster {
        let peers: Vec<(u16, u16)> = (0..size).map(|_| (free_port(), free_port())).collect();
        EtcdCluster::start_on(peers)
    }

    /// One member serving clients on `client_port` (as examples that name
    /// etcd's default, 2379, need).
    pub fn start_with_client_port(client_port: u16) -> EtcdCluster {
        EtcdCluster::start_on(vec![(client_port, free_port())])
    }

    fn start_on(peers: Vec<(u16, u16)>) -> EtcdCluster {
        let size = peers.len();
        let names: Vec<String> = (0..size).map(|i| format!("m{i}")).collect();
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

    /// `etcdctl endpoint status -w json` of the running members (those
    /// that answer).
    pub fn status(&self) -> Vec<MemberStatus> {
        let running: Vec<(usize, &EtcdMember)> = self
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_running())
            .collect();
        let endpoints: Vec<&str> = running.iter().map(|(_, m)| m.client_url.as_str()).collect();
        let (_, out, _) = etcdctl(&endpoints.join(","), &["endpoint", "status", "-w", "json"]);
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        parsed
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                let endpoint = e["Endpoint"].as_str()?;
                let (index, _) = running.iter().find(|(_, m)| m.client_url == endpoint)?;
                Some(MemberStatus {
                    index: *index,
                    member_id: e["Status"]["header"]["member_id"].as_u64()?,
                    leader: e["Status"]["leader"].as_u64()?,
                    revision: e["Status"]["header"]["revision"].as_i64()?,
                })
            })
            .collect()
    }

    /// The index of the member that leads, if a running member knows it.
    pub fn leader(&self) -> Option<usize> {
        let status = self.status();
        let leader = status.iter().find(|s| s.leader != 0)?.leader;
        status
            .iter()
            .find(|s| s.member_id == leader)
            .map(|s| s.index)
    }

    /// Waits (up to `limit`) until the running members agree on a leader.
    pub fn wait_leader(&self, limit: Duration) -> usize {
        let start = Instant::now();
        loop {
            if let Some(l) = self.leader() {
                return l;
            }
            assert!(
                start.elapsed() < limit,
                "etcd has no leader after {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The cluster's current revision.
    pub fn revision(&self) -> i64 {
        self.status()
            .iter()
            .map(|s| s.revision)
            .max()
            .expect("no etcd member answered endpoint status")
    }

    /// `etcdctl compact REV` (with `--physical`: returns once it is applied).
    pub fn compact(&self, revision: i64) {
        let (ok, out, err) = etcdctl(
            &self.endpoints().join(","),
            &["compact", "--physical", &revision.to_string()],
        );
        assert!(ok, "etcdctl compact {revision}: {out}{err}");
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
