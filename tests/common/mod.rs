//! Test harness: a real `kapi serve` child process on 127.0.0.1 with a free
//! port and a temporary data dir, plus clients nobody here wrote (kubectl,
//! reqwest) pointed at it.
#![allow(dead_code)]

pub mod etcd;
pub mod http;
pub mod kubectl;
pub mod manifests;
pub mod pki;
pub mod rawtls;
pub mod watch;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Kapi {
    pub child: Child,
    pub url: String,
    pub data_dir: PathBuf,
    pub kubeconfig: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    /// kubectl's discovery cache for this server alone: kubectl keys its
    /// cache by host and port, and a port freed by an earlier test's server
    /// (with other CRDs) would otherwise answer from that server's discovery.
    kubectl_cache: tempfile::TempDir,
    pub stderr_lines: mpsc::Receiver<String>,
    /// Started with `-v`: its log may show more than a user's.
    verbose: bool,
}

pub fn kapi_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kapi")
}

impl Kapi {
    /// Starts kapi with a fresh temporary data dir.
    pub fn start(extra: &[&str]) -> Kapi {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        let mut k = Kapi::start_in(&dir, extra);
        k._tmp = Some(tmp);
        k
    }

    /// Starts kapi on an existing data dir (for restarts).
    pub fn start_in(data_dir: &Path, extra: &[&str]) -> Kapi {
        let mut child = Command::new(kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(data_dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kapi");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = etx.send(line);
            }
        });
        let mut url = None;
        let mut kubeconfig = None;
        while url.is_none() || kubeconfig.is_none() {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("kapi listening on ") {
                        url = rest.split_whitespace().next().map(String::from);
                    } else if let Some(rest) = line.strip_prefix("export KUBECONFIG=") {
                        kubeconfig = Some(PathBuf::from(rest));
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let errs: Vec<String> = erx.try_iter().collect();
                    panic!("kapi did not start; stderr:\n{}", errs.join("\n"));
                }
            }
        }
        Kapi {
            child,
            url: url.expect("url"),
            data_dir: data_dir.to_path_buf(),
            kubeconfig: kubeconfig.expect("kubeconfig"),
            _tmp: None,
            kubectl_cache: tempfile::tempdir().expect("kubectl cache dir"),
            stderr_lines: erx,
            verbose: extra
                .iter()
                .any(|a| *a == "-v" || a.starts_with("--v") || a.starts_with("-v=")),
        }
    }

    pub fn pki(&self, file: &str) -> String {
        std::fs::read_to_string(self.data_dir.join("pki").join(file)).expect(file)
    }

    /// A client trusting kapi's CA, authenticating as the admin (system:masters).
    pub fn admin_client(&self) -> reqwest::Client {
        let identity = format!("{}{}", self.pki("admin.crt"), self.pki("admin.key"));
        self.client_with(Some(identity.as_bytes()))
    }

    /// A client trusting kapi's CA with no credentials at all.
    pub fn anonymous_client(&self) -> reqwest::Client {
        self.client_with(None)
    }

    pub fn client_with(&self, identity_pem: Option<&[u8]>) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(self.pki("ca.crt").as_bytes()).expect("ca");
        let mut b = reqwest::Client::builder()
            .tls_certs_only([ca])
            .timeout(Duration::from_secs(30));
        if let Some(pem) = identity_pem {
            b = b.identity(reqwest::Identity::from_pem(pem).expect("identity"));
        }
        b.build().expect("client")
    }

    /// kubectl, pinned to the newest one on the machine, with the admin kubeconfig.
    /// Waits (up to 10 s) for the ServiceAccount controller to create the
    /// `default` ServiceAccount of `namespace`: until it exists the
    /// ServiceAccount admission plugin refuses pods there, as upstream's does.
    pub fn wait_for_default_service_account(&self, namespace: &str) {
        let url = format!(
            "{}/api/v1/namespaces/{namespace}/serviceaccounts/default",
            self.url
        );
        let client = self.admin_client();
        let found = runtime().block_on(async {
            for _ in 0..200 {
                if let Ok(r) = client.get(&url).send().await {
                    if r.status().is_success() {
                        return true;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            false
        });
        assert!(found, "no default ServiceAccount in {namespace} after 10 s");
    }

    /// Runs kubectl with `input` on its standard input (`-f -`):
    /// success, stdout, stderr.
    pub fn kubectl_stdin(&self, args: &[&str], input: &str) -> (bool, String, String) {
        use std::io::Write;
        let mut child = self
            .kubectl()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write kubectl stdin");
        let out = child.wait_with_output().expect("kubectl output");
        assert_no_debug_shapes(
            "kubectl's standard error",
            &String::from_utf8_lossy(&out.stderr),
        );
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub fn kubectl(&self) -> Command {
        let mut c = Command::new(kubectl_path());
        c.env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.kubectl_cache.path());
        c
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        unsafe_kill(self.child.id(), 15);
        wait_timeout(&mut self.child, Duration::from_secs(30))
            .expect("kapi did not exit after SIGTERM")
    }
}

impl Drop for Kapi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The log at default verbosity, as far as the test left it unread.
        if !self.verbose && !std::thread::panicking() {
            let lines: Vec<String> = self.stderr_lines.try_iter().collect();
            assert_no_debug_shapes("kapi's log at default verbosity", &lines.join("\n"));
        }
    }
}

pub fn unsafe_kill(pid: u32, sig: i32) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

pub fn wait_timeout(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The image's kubectl is a dispatcher that picks a build by server version;
/// kapi reports 1.34, newer than any it has, so tests use the newest build.
pub fn kubectl_path() -> PathBuf {
    let dispatcher = which("kubectl").expect("kubectl on PATH");
    let real = std::fs::canonicalize(&dispatcher).unwrap_or(dispatcher.clone());
    let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut best: Option<(u32, PathBuf)> = None;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(minor) = name
                .strip_prefix("kubectl.1.")
                .and_then(|m| m.parse::<u32>().ok())
            {
                if best.as_ref().is_none_or(|(b, _)| minor > *b) {
                    best = Some((minor, e.path()));
                }
            }
        }
    }
    best.map(|(_, p)| p).unwrap_or(dispatcher)
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// `kapi serve` with `args` on a throwaway data dir, expected to refuse
/// to start: its standard error.
pub fn serve_refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ok, _, err) = run(Command::new(kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(dir.path())
        .args(args));
    assert!(!ok, "kapi serve {args:?} started");
    err
}

/// Runs a command and returns (success, stdout, stderr). What kapi writes
/// to standard error is checked for Rust Debug shapes.
pub fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("run command");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if Path::new(cmd.get_program()) == Path::new(kapi_bin()) {
        assert_no_debug_shapes("kapi's standard error", &stderr);
    }
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

/// Shapes of Rust's `Debug` formatting, which no user should read: in a
/// CLI error, a `Status` message or a log line at default verbosity.
pub const DEBUG_SHAPES: &[&str] = &[
    "Error(",
    "Some(",
    "{ kind:",
    "tonic::",
    "Os { code",
    "Custom { kind",
];

/// Fails when `text` carries a Debug shape.
pub fn assert_no_debug_shapes(what: &str, text: &str) {
    if let Some(shape) = DEBUG_SHAPES.iter().find(|s| text.contains(*s)) {
        panic!("{what} shows Rust's Debug formatting ({shape}):\n{text}");
    }
}

/// VmRSS of `pid` in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A namespaced custom resource with any fields (widgets.example.com/v1).
#[allow(dead_code)]
pub const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
";
