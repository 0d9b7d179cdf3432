//! Replays, in the ordinary test run, every input the fuzz targets keep:
//! the minimized crashes under fuzz/regressions (each once broke a target
//! and must keep passing) and the seed corpora under fuzz/seeds. The
//! targets' entry points live in `kapi::fuzzing`; each assertion a target
//! makes is made here too, without needing a nightly toolchain.

use std::path::{Path, PathBuf};

use kapi::fuzzing::{self, Format, Patch};

/// Target name -> the entry point its fuzz_targets/<name>.rs calls.
fn entry(target: &str) -> Option<fn(&[u8])> {
    Some(match target {
        "decode_json" => |d| fuzzing::decode_object(d, Format::Json),
        "decode_yaml" => |d| fuzzing::decode_object(d, Format::Yaml),
        "decode_protobuf" => |d| fuzzing::decode_object(d, Format::Protobuf),
        "protobuf_message" => fuzzing::decode_protobuf_message,
        "json_patch" => |d| fuzzing::patch_object(d, Patch::Json),
        "merge_patch" => |d| fuzzing::patch_object(d, Patch::Merge),
        "strategic_merge_patch" => |d| fuzzing::patch_object(d, Patch::StrategicMerge),
        "server_side_apply" => |d| fuzzing::patch_object(d, Patch::Apply),
        "label_selector" => fuzzing::label_selector,
        "field_selector" => fuzzing::field_selector,
        "request_info" => fuzzing::request_info,
        "continue_token" => fuzzing::continue_token,
        "resource_version" => fuzzing::resource_version,
        "cel_expression" => fuzzing::cel_expression,
        "crd_schema" => fuzzing::crd_schema,
        "kubeconfig" => fuzzing::kubeconfig,
        "token_file" => fuzzing::token_file,
        _ => return None,
    })
}

fn fuzz_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(sub)
}

/// Runs every file under fuzz/<sub>/<target>/ through its target; returns
/// how many inputs ran. A directory without a known target fails the test,
/// so a renamed target cannot silently drop its inputs.
fn replay(sub: &str) -> usize {
    fuzzing::init();
    let mut ran = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(fuzz_dir(sub))
        .unwrap_or_else(|e| panic!("fuzz/{sub}: {e}"))
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    dirs.sort_by_key(|e| e.file_name());
    for dir in dirs {
        let target = dir.file_name().to_string_lossy().into_owned();
        let run =
            entry(&target).unwrap_or_else(|| panic!("fuzz/{sub}/{target}: no such fuzz target"));
        let mut files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("fuzz/{sub}/{target}: {e}"))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let outcome = std::panic::catch_unwind(|| run(&bytes));
            assert!(outcome.is_ok(), "{target} failed on {}", file.display());
            ran += 1;
        }
    }
    ran
}

#[test]
fn every_kept_crash_stays_fixed() {
    let ran = replay("regressions");
    assert!(
        ran >= 4,
        "only {ran} regression inputs found under fuzz/regressions"
    );
}

#[test]
fn every_seed_passes_its_target() {
    let ran = replay("seeds");
    assert!(ran >= 300, "only {ran} seed inputs found under fuzz/seeds");
}
