//! `kapi scaffold crd`: the rendered CRD is accepted by a real server and
//! its resources behave as the scaffold promises (defaults, CEL rule,
//! printer columns).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::Kapi;

fn kubectl_stdin(k: &Kapi, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = k
        .kubectl()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kubectl output");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scaffolded_crd_is_served_with_its_defaults_and_rules() {
    let (ok, crd, err) = common::run(Command::new(common::kapi_bin()).args([
        "scaffold",
        "crd",
        "--group",
        "example.com",
        "--kind",
        "Gadget",
    ]));
    assert!(ok, "{err}");
    assert!(crd.contains("name: gadgets.example.com"), "{crd}");
    let k = Kapi::start(&[]);
    let (ok, out, err) = kubectl_stdin(&k, &["apply", "-f", "-"], &crd);
    assert!(ok, "{out}{err}");
    let (ok, _, err) = common::run(k.kubectl().args([
        "wait",
        "--for=condition=Established",
        "crd/gadgets.example.com",
        "--timeout=20s",
    ]));
    assert!(ok, "{err}");
    let g =
        "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  message: hi\n";
    let (ok, out, err) = kubectl_stdin(&k, &["create", "-f", "-"], g);
    assert!(ok, "{out}{err}");
    let (ok, out, err) =
        common::run(
            k.kubectl()
                .args(["get", "gadgets", "g1", "-o", "jsonpath={.spec.replicas}"]),
        );
    assert!(ok, "{err}");
    assert_eq!(out, "1", "the schema default");
    let (ok, out, _) = common::run(k.kubectl().args(["get", "gadgets"]));
    assert!(ok);
    assert!(
        out.lines().next().unwrap_or("").contains("REPLICAS"),
        "{out}"
    );
    let too_many = g.replace("message: hi", "replicas: 101");
    let (ok, _, err) = kubectl_stdin(&k, &["create", "-f", "-"], &too_many);
    assert!(!ok);
    assert!(err.contains("replicas must be at most 100"), "{err}");
}

#[test]
fn bad_names_are_one_line_usage_errors() {
    let out = Command::new(common::kapi_bin())
        .args(["scaffold", "crd", "--group", "example", "--kind", "Gadget"])
        .output()
        .expect("kapi");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--group"), "{err}");
}
