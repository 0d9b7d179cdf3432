//! Every example in every `--help` of `kapi`, taken from the help text the
//! binary prints: no example line is wrapped in the middle of a command,
//! and each example that needs only a kapi and files runs as written, in a
//! directory where a kapi serves from `./.kapi` (the default), through a
//! shell, as a user would paste it.
//!
//! Examples that start long-running servers or need an etcd or an
//! aggregated server (`kapi serve`, `kapi sample-apiserver`, a real
//! `apiservice register`) are named in [`NOT_RUN`] (so a new example is
//! run unless it is added there) and run by a second test on the ports
//! they name. Only the metrics-server registration is not run.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{run, Kapi};

/// The examples the first test does not run, and why; all but the
/// metrics-server one run in [`examples_that_start_servers_run_as_written`].
const NOT_RUN: &[(&str, &str)] = &[
    ("kapi serve", "a long-running server: run by the second test"),
    ("kapi sample-apiserver", "a long-running server: run by the second test"),
    ("kapi apiservice register --group wardle.example.com --version v1alpha1 --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt", "needs the sample server on port 8443: run by the second test"),
    ("kapi apiservice register --group metrics.k8s.io", "needs a metrics-server, which no test here runs"),
    ("kapi apiservice unregister v1alpha1.wardle.example.com", "needs the registration above: run by the second test"),
    ("kapi etcd dump --etcd-servers", "needs an etcd on port 2379: run by the second test"),
];

fn help(args: &[&str]) -> String {
    let out = Command::new(common::kapi_bin())
        .args(args)
        .arg("--help")
        .output()
        .expect("run kapi --help");
    assert!(out.status.success(), "kapi {args:?} --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The names under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(String::from)
        .collect()
}

/// The examples of one help text, continuation lines joined. Panics on a
/// line that is neither a command, a comment nor the continuation of a
/// line ending in `\`: a wrapped example.
fn examples(help: &str, which: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut continued: Option<String> = None;
    for raw in help
        .lines()
        .skip_while(|l| l.trim() != "Examples:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
    {
        let line = raw.trim();
        let command = match continued.take() {
            Some(mut head) => {
                head.push(' ');
                head.push_str(line);
                head
            }
            None if line.starts_with('#') => continue,
            None => {
                assert!(
                    line.starts_with("kapi "),
                    "{which}: example line {raw:?} is not a command: a wrapped line?"
                );
                line.to_string()
            }
        };
        match command.strip_suffix('\\') {
            Some(head) => continued = Some(head.trim_end().to_string()),
            None => out.push(command),
        }
    }
    assert!(
        continued.is_none(),
        "{which}: the last example ends in a backslash"
    );
    out
}

/// Every example of every help, with the help it came from.
fn all_examples() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = queue.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let which = format!("kapi {} --help", args.join(" "));
        for e in examples(&text, &which) {
            out.push((e, which.clone()));
        }
        for sub in subcommands(&text) {
            let mut p = path.clone();
            p.push(sub);
            queue.push(p);
        }
    }
    out
}

/// A PATH whose `kapi` is the binary under test (linked into `cwd/bin`).
fn kapi_on_path(cwd: &Path) -> String {
    let bin = cwd.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(common::kapi_bin(), bin.join("kapi")).expect("symlink");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write fixture");
}

#[test]
fn every_help_example_is_unwrapped_and_the_runnable_ones_run_as_written() {
    let all = all_examples();
    let commands: BTreeSet<&str> = all.iter().map(|(e, _)| e.as_str()).collect();
    assert!(
        commands.len() >= 25,
        "only {} examples found",
        commands.len()
    );
    for (prefix, _) in NOT_RUN {
        assert!(
            commands.iter().any(|c| c.starts_with(prefix)),
            "NOT_RUN names {prefix:?}, which no help shows any more"
        );
    }

    // A user's directory: kapi serving from ./.kapi, the files the
    // examples name, and a home for the completion files.
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    let k = Kapi::start_in(&cwd.join(".kapi"), &[]);
    let home = cwd.join("home");
    for d in [".local/share/bash-completion/completions", ".zfunc"] {
        std::fs::create_dir_all(home.join(d)).expect("mkdir");
    }
    write(
        cwd,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
    );
    write(
        cwd,
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n",
    );
    std::fs::copy(k.data_dir.join("pki").join("ca.crt"), cwd.join("ca.crt")).expect("ca");
    k.wait_for_default_service_account("default");
    // `kapi` on PATH is the binary under test.
    let path = kapi_on_path(cwd);
    let kubectl_dir = common::kubectl_path()
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let path = format!("{path}:{kubectl_dir}");

    // In an order that makes each one's inputs: the CRDs before the dump of
    // widgets, the Deployment before the PATCH of it.
    let mut runnable: Vec<&str> = commands
        .iter()
        .copied()
        .filter(|c| !NOT_RUN.iter().any(|(p, _)| c.starts_with(p)))
        .collect();
    let rank = |c: &str| {
        if c.starts_with("kapi scaffold") {
            0
        } else if c.contains("--verb apply --commit") {
            1
        } else if c.starts_with("kapi trace-request PATCH") || c.starts_with("kapi etcd") {
            3
        } else {
            2
        }
    };
    runnable.sort_by_key(|c| rank(c));
    let mut ran = 0;
    for example in runnable {
        if example.contains("--kind Widget > widget-crd.yaml") {
            let (ok, out, err) = run(Command::new("bash")
                .arg("-c")
                .arg(example)
                .current_dir(cwd)
                .env("PATH", &path));
            assert!(ok, "{example}\n{out}{err}");
            let (ok, _, err) = run(k
                .kubectl()
                .args(["apply", "-f"])
                .arg(cwd.join("widget-crd.yaml")));
            assert!(ok, "{err}");
            ran += 1;
            continue;
        }
        let (ok, out, err) = run(Command::new("bash")
            .arg("-c")
            .arg(example)
            .current_dir(cwd)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("KUBECONFIG", k.kubeconfig.as_os_str()));
        assert!(
            ok,
            "example failed: {example}\nstdout:\n{out}\nstderr:\n{err}"
        );
        assert!(!err.contains("panicked"), "{example}\n{err}");
        ran += 1;
    }
    assert!(ran >= 20, "only {ran} examples ran");
    // What the completion examples wrote is a completion script.
    let bash = std::fs::read_to_string(home.join(".local/share/bash-completion/completions/kapi"))
        .expect("bash completions written");
    assert!(bash.contains("_kapi"), "{bash}");
}

/// A server an example started, with the lines it printed.
struct Started {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Started {
    /// Runs `example` through bash in `cwd` and waits for a line starting
    /// with `ready` on its standard output.
    fn run(example: &str, cwd: &Path, path: &str, ready: &str) -> Started {
        use std::io::BufRead;
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(format!("exec {example}"))
            .current_dir(cwd)
            .env("PATH", path)
            .env("HOME", cwd.join("home"))
            .env_remove("KUBECONFIG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let (tx, lines) = std::sync::mpsc::channel();
        for out in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                    let _ = tx.send(l);
                }
            });
        }
        let mut seen = Vec::new();
        loop {
            match lines.recv_timeout(std::time::Duration::from_secs(30)) {
                Ok(l) if l.starts_with(ready) => break,
                Ok(l) => seen.push(l),
                Err(_) => {
                    let _ = child.kill();
                    panic!("{example}: no {ready:?} line in 30 s:\n{}", seen.join("\n"));
                }
            }
        }
        Started { child, lines }
    }

    /// SIGTERM; the server must stop cleanly (a failing test kills it on drop).
    fn stop(mut self, example: &str) {
        common::unsafe_kill(self.child.id(), 15);
        let status = common::wait_timeout(&mut self.child, std::time::Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{example}: still running 30 s after SIGTERM"));
        let rest: Vec<String> = self.lines.try_iter().collect();
        assert!(status.success(), "{example}: {status}\n{}", rest.join("\n"));
    }
}

/// The examples that start servers, run as written: each `kapi serve`
/// (on its default port 6443, one with etcd on its default 2379), the
/// sample aggregated server (on 8443), and with them the `apiservice
/// register`/`unregister` and `etcd dump --etcd-servers` examples. The
/// ports are the examples' own, so they must be free on the machine.
#[test]
fn examples_that_start_servers_run_as_written() {
    for port in [6443, 8443, 2379] {
        assert!(
            std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(),
            "port {port}, which the help examples name, is in use on this machine"
        );
    }
    let all = all_examples();
    let commands: BTreeSet<&str> = all.iter().map(|(e, _)| e.as_str()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    std::fs::create_dir_all(cwd.join("home")).expect("home");
    write(
        cwd,
        "tokens.csv",
        "a-secret-token,alice,alice-uid,system:masters\n",
    );
    let path = kapi_on_path(cwd);
    let etcd = common::etcd::EtcdCluster::start_with_client_port(2379);
    let mut ran = 0;

    // Every `kapi serve` example starts, writes a kubeconfig kubectl can
    // use, and stops cleanly on SIGTERM.
    let serves: Vec<&str> = commands
        .iter()
        .copied()
        .filter(|c| *c == "kapi serve" || c.starts_with("kapi serve "))
        .collect();
    assert!(serves.len() >= 4, "{serves:?}");
    for example in serves {
        let s = Started::run(example, cwd, &path, "kapi listening on ");
        // Standard error's log lines come on the same channel.
        let kubeconfig =
            std::iter::from_fn(|| s.lines.recv_timeout(std::time::Duration::from_secs(5)).ok())
                .find_map(|l| l.strip_prefix("export KUBECONFIG=").map(String::from))
                .unwrap_or_else(|| panic!("{example}: no export KUBECONFIG line"));
        let (ok, out, err) = run(Command::new(common::kubectl_path())
            .args(["get", "namespace", "default", "-o", "name"])
            .env("KUBECONFIG", &kubeconfig));
        assert!(
            ok && out.trim() == "namespace/default",
            "{example}: {out}{err}"
        );
        s.stop(example);
        ran += 1;
    }

    // The etcd dump example reads what the etcd-backed example stored.
    let dump = commands
        .iter()
        .find(|c| c.starts_with("kapi etcd dump --etcd-servers"))
        .expect("etcd dump example");
    let (ok, out, err) = run(Command::new("bash")
        .arg("-c")
        .arg(dump)
        .current_dir(cwd)
        .env("PATH", &path));
    assert!(
        ok && out.contains("/registry/namespaces/default"),
        "{dump}\n{out}{err}"
    );
    ran += 1;
    drop(etcd);

    // kapi serving from ./.kapi on 6443; the sample server examples, and
    // registering and unregistering the sample server.
    let kapi = Started::run("kapi serve", cwd, &path, "kapi listening on ");
    let samples: Vec<&str> = commands
        .iter()
        .copied()
        .filter(|c| c.starts_with("kapi sample-apiserver"))
        .collect();
    assert!(samples.len() >= 3, "{samples:?}");
    for example in samples
        .iter()
        .filter(|c| !c.contains("--secure-port 8443") && c.contains("--secure-port"))
    {
        Started::run(example, cwd, &path, "sample-apiserver serving ").stop(example);
        ran += 1;
    }
    for example in samples
        .iter()
        .filter(|c| !c.contains("--secure-port") || c.contains("--secure-port 8443"))
    {
        let sample = Started::run(example, cwd, &path, "sample-apiserver serving ");
        for step in [
            "kapi apiservice register --group wardle.example.com --version v1alpha1 --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt",
            "kapi apiservice unregister v1alpha1.wardle.example.com",
        ] {
            let example = commands
                .iter()
                .find(|c| c.starts_with(step))
                .unwrap_or_else(|| panic!("no example starts with {step}"));
            let (ok, out, err) = run(Command::new("bash")
                .arg("-c")
                .arg(example)
                .current_dir(cwd)
                .env("PATH", &path)
                .env("HOME", cwd.join("home"))
                .env_remove("KUBECONFIG"));
            assert!(ok, "{example}\nstdout:\n{out}\nstderr:\n{err}");
            ran += 1;
        }
        sample.stop(example);
        ran += 1;
    }
    kapi.stop("kapi serve");
    assert!(ran >= 10, "only {ran} server examples ran");
}
