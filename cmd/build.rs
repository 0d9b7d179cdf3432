//! Link settings for the `kapi` binary in release builds: where its code
//! goes in the file, and how its relocations are stored. Both are about
//! memory: the kernel maps a binary's code 64 KiB at a time around each
//! page that runs (fault-around), so code that runs lying next to code
//! that does not costs resident memory for both.

use std::env;
use std::path::Path;

/// Functions that start-up and a developer's first requests run, most
/// run first; made by `scripts/symbol-order`.
const ORDER: &str = "cmd/symbol-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=cmd/build.rs");
    println!("cargo:rerun-if-changed={ORDER}");
    println!("cargo:rerun-if-env-changed=KAPI_NO_LINK_LAYOUT");
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("PROFILE") != "release" || env::var_os("KAPI_NO_LINK_LAYOUT").is_some() {
        return;
    }
    // rustc links x86_64 Linux with its own lld; a linker chosen by hand
    // may not know these options.
    let (target, host) = (var("TARGET"), var("HOST"));
    let chosen_linker =
        env::var_os("RUSTC_LINKER").is_some() || var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if target != "x86_64-unknown-linux-gnu" || chosen_linker {
        return;
    }
    // Everything that ran together, laid out together: idle, kapi's code
    // pages are those functions and little else (the rest of the binary
    // is never mapped). Names the build no longer has are skipped.
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(ORDER);
    if order.exists() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (DT_RELR): 2 MB of `.rela.dyn`, which
    // the loader reads once at start and which stayed mapped, become a
    // few KiB. The loader must know them (glibc 2.36); a binary built
    // here runs here, so the builder's glibc decides.
    if target == host && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The glibc this build script runs on (the host's), at least `major.minor`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_at_least(major: u32, minor: u32) -> bool {
    extern "C" {
        fn gnu_get_libc_version() -> *const std::os::raw::c_char;
    }
    // SAFETY: returns a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    let mut parts = v.to_str().unwrap_or("0.0").split('.');
    let mut num = || {
        parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0)
    };
    (num(), num()) >= (major, minor)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_at_least(_major: u32, _minor: u32) -> bool {
    false
}
