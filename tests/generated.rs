//! Generated code in the tree is what its generator makes today: moving to
//! a new Kubernetes version (new k8s-pb and k8s-openapi) is one command, and
//! forgetting it fails here rather than on the wire.

use std::path::Path;
use std::process::Command;

#[test]
fn protobuf_schema_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().expect("tmp");
    let fresh = tmp.path().join("schema.rs");
    let out = Command::new("python3")
        .arg(root.join("scripts/gen-protobuf-schema.py"))
        .arg("--out")
        .arg(&fresh)
        .current_dir(root)
        .env("CARGO", env!("CARGO"))
        .output()
        .expect("python3 runs the generator");
    assert!(
        out.status.success(),
        "scripts/gen-protobuf-schema.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(&fresh).expect("generated schema");
    let have = std::fs::read_to_string(root.join("src/api/protobuf/schema.rs"))
        .expect("checked-in schema");
    if want != have {
        let line = want
            .lines()
            .zip(have.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the length".to_string(), |i| format!("line {}", i + 1));
        panic!(
            "src/api/protobuf/schema.rs is stale (first difference at {line}); \
             regenerate it: python3 scripts/gen-protobuf-schema.py"
        );
    }
}
