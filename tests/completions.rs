//! The files in `completions/` must match what the binary generates.
//! Refresh them with `./scripts/completions`.

mod common;

#[test]
fn completions_are_current() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = std::process::Command::new(common::kapi_bin())
            .args(["completions", shell])
            .output()
            .expect("run");
        assert!(out.status.success(), "{shell}");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("completions")
            .join(format!("kapi.{shell}"));
        let stored = std::fs::read(&path).unwrap_or_default();
        assert!(
            stored == out.stdout,
            "{} is stale or missing: run ./scripts/completions and commit the result",
            path.display()
        );
    }
}
