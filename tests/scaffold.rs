//! `kapi scaffold crd`: the rendered CRD is accepted by a real server and
//! its resources behave as the scaffold promises (defaults, CEL rule,
//! printer columns).

mod common;

use std::process::Command;

use common::Kapi;

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
    let (ok, out, err) = k.kubectl_stdin(&["apply", "-f", "-"], &crd);
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
    let (ok, out, err) = k.kubectl_stdin(&["create", "-f", "-"], g);
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
    let (ok, _, err) = k.kubectl_stdin(&["create", "-f", "-"], &too_many);
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
