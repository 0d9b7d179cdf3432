//! kubectl run as the kinds tests run it: with a time limit, failing the
//! test with kubectl's output when it fails.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::Kapi;

/// How long one kubectl call may take on a busy machine.
pub const CMD_LIMIT: Duration = Duration::from_secs(60);

pub struct Out {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a command to completion, killing it if it outlives `limit`.
pub fn run_limited(cmd: &mut Command, limit: Duration) -> Out {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().expect("spawn");
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let to = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let te = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = super::wait_timeout(&mut child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = to.join().unwrap_or_default();
    let stderr = te.join().unwrap_or_default();
    // kubectl's errors carry kapi's Status messages.
    super::assert_no_debug_shapes(&format!("{shown}'s standard error"), &stderr);
    match status {
        Some(s) => Out {
            ok: s.success(),
            stdout,
            stderr,
        },
        None => {
            panic!("{shown} did not finish within {limit:?}\nstdout:\n{stdout}\nstderr:\n{stderr}")
        }
    }
}

pub fn kubectl_ok(k: &Kapi, args: &[&str]) -> String {
    let o = run_limited(k.kubectl().args(args), CMD_LIMIT);
    assert!(
        o.ok,
        "kubectl {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        o.stdout, o.stderr
    );
    o.stdout
}

pub fn kubectl_create(k: &Kapi, yaml: &str) -> String {
    let mut f = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("tempfile");
    f.write_all(yaml.as_bytes()).expect("write yaml");
    f.flush().expect("flush");
    kubectl_ok(k, &["create", "-f", f.path().to_str().expect("path")])
}
