//! Every example in every `--help` of `kapi`, taken from the help text the
//! binary prints: no example line is wrapped in the middle of a command,
//! and each example that needs only a kapi and files runs as written, in a
//! directory where a kapi serves from `./.kapi` (the default), through a
//! shell, as a user would paste it.
//!
//! Examples that start long-running servers or need an etcd or an
//! aggregated server (`kapi serve`, `kapi sample-apiserver`, a real
//! `apiservice register`) are checked for wrapping only: they are named in
//! [`NOT_RUN`], so a new example is run unless it is added there.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{run, Kapi};

/// The examples this test does not run, and why.
const NOT_RUN: &[(&str, &str)] = &[
    ("kapi serve", "a long-running server"),
    ("kapi sample-apiserver", "a long-running server"),
    ("kapi apiservice register --group wardle.example.com --version v1alpha1 --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt", "needs the sample server on port 8443"),
    ("kapi apiservice register --group metrics.k8s.io", "needs a metrics-server"),
    ("kapi apiservice unregister v1alpha1.wardle.example.com", "needs the registration above"),
    ("kapi etcd dump --etcd-servers", "needs an etcd on port 2379"),
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
    let bin = cwd.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(common::kapi_bin(), bin.join("kapi")).expect("symlink");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
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
