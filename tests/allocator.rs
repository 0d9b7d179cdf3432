//! The kapi binary runs on mimalloc with the options cmd/allocator.rs sets
//! at load: mimalloc's own report (`MIMALLOC_VERBOSE=1`, on stderr) names
//! each option with its value, so this checks that the numeric indices the
//! binary uses name the options they are meant to.

mod common;

use std::process::Command;

#[test]
fn the_binary_commits_on_demand_and_purges_at_once() {
    let out = Command::new(common::kapi_bin())
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .env_remove("MIMALLOC_ARENA_EAGER_COMMIT")
        .env_remove("MIMALLOC_PURGE_DELAY")
        .output()
        .expect("run kapi --version");
    assert!(out.status.success(), "kapi --version: {out:?}");
    let report = String::from_utf8_lossy(&out.stderr);
    let option = |name: &str| {
        report
            .lines()
            .find_map(|l| l.strip_prefix(&format!("option '{name}': ")))
            .map(str::trim)
            .unwrap_or_else(|| panic!("mimalloc reports no option {name}:\n{report}"))
            .to_string()
    };
    assert_eq!(option("arena_eager_commit"), "0");
    assert_eq!(option("purge_delay"), "0");
    // The options next to them keep their defaults: the indices are not
    // off by one.
    assert_eq!(option("purge_decommits"), "1");
    assert_eq!(option("use_numa_nodes"), "0");
    assert_eq!(option("deprecated_eager_commit_delay"), "1");
}

/// mimalloc's own variables still choose, for whoever wants to measure
/// another setting: kapi sets an option only when the environment does not.
#[test]
fn mimallocs_own_variables_override_kapis_choice() {
    let out = Command::new(common::kapi_bin())
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .env("MIMALLOC_ARENA_EAGER_COMMIT", "1")
        .env("MIMALLOC_PURGE_DELAY", "7")
        .output()
        .expect("run kapi --version");
    assert!(out.status.success(), "kapi --version: {out:?}");
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(
        report
            .lines()
            .any(|l| l.trim() == "option 'purge_delay': 7"),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.trim() == "option 'arena_eager_commit': 1"),
        "{report}"
    );
}
