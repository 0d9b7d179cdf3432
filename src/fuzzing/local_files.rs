//! Targets `kubeconfig` and `token_file`: files kapi reads from disk,
//! written to a scratch directory first.

use std::path::PathBuf;
use std::sync::LazyLock;

fn scratch_dir() -> &'static PathBuf {
    static DIR: LazyLock<PathBuf> = LazyLock::new(|| {
        let d = std::env::temp_dir().join(format!("kapi-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    });
    &DIR
}

/// A kubeconfig, read by `clientcmd::Remote::connect` from a file in a scratch directory. Inputs that could name
/// device, proc or sys files (unbounded or blocking reads, which the
/// fuzzer would report as hangs of the harness) are skipped.
pub fn kubeconfig(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let lower = text.to_ascii_lowercase();
    if ["dev", "proc", "sys", "\\", "fd"]
        .iter()
        .any(|bad| lower.contains(bad))
    {
        return;
    }
    let path = scratch_dir().join("kubeconfig");
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().build() else {
        return;
    };
    let mut sel = crate::clientcmd::Selection::file(&path);
    let _ = rt.block_on(crate::clientcmd::Remote::connect(&sel));
    sel.server = Some("https://127.0.0.1:6443/".into());
    let _ = rt.block_on(crate::clientcmd::Remote::connect(&sel));
}

/// `--token-auth-file`: parsed, and every token of it looked up.
pub fn token_file(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let Ok(tokens) = crate::auth::tokenfile::TokenFile::parse(text) else {
        return;
    };
    for line in text.lines() {
        if let Some(token) = line.trim().split(',').next() {
            let _ = tokens.lookup(token.trim());
        }
    }
}
