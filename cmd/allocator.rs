//! kapi's heap allocator: mimalloc, set to give freed memory back at once.
//!
//! glibc's malloc spent about a quarter of the instructions of a create
//! (`_int_free`, `_int_malloc`, `malloc_consolidate`: the JSON trees a
//! request builds and drops). With mimalloc a create cost about 19% fewer
//! instructions (634,000 to 512,000) and a GET about 13% fewer (110,000 to
//! 96,000; `./bench/run --instructions`, measured with mimalloc's default
//! options; a GET measured the same with the options set below).
//!
//! mimalloc's defaults trade memory for speed: arenas committed up front
//! (on Linux, where memory is overcommitted) and freed pages kept for a
//! second before they go back. Idle, that held about 28 MiB more than
//! glibc. Committing on demand and purging at once keeps RSS within 2–4
//! MiB of glibc's.
//!
//! Purging at once has a price: a busy spell faults the same pages back
//! in. On 8,000 creates at 32 clients it took 13,000–14,000 page faults
//! where a delay of 100 ms took 6,000 (the new objects' own), and about
//! 15% more CPU per create; gets and watch fan-out showed no difference.
//! The delay also kept 2–5 MiB more resident after a load, which the
//! memory targets (bench/) cannot spare, so kapi keeps purging at once.
//! `MIMALLOC_PURGE_DELAY` (mimalloc's own variable) chooses otherwise.

use std::os::raw::{c_int, c_long};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// Indices into mimalloc v3's `mi_option_t` (include/mimalloc.h); the
// Rust bindings name only v2's. tests/allocator.rs reads the options back
// by name from mimalloc's own report.
const ARENA_EAGER_COMMIT: c_int = 4;
const PURGE_DELAY: c_int = 15;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
}

/// Runs [`configure`] as the program is loaded, before anything allocates:
/// mimalloc reads `arena_eager_commit` when it reserves its first arena,
/// which the first allocation does (`main` would be too late).
#[used]
#[link_section = ".init_array"]
static CONFIGURE_AT_LOAD: extern "C" fn() = configure_at_load;

extern "C" fn configure_at_load() {
    configure();
}

/// Sets the options above, unless the environment sets them (mimalloc's
/// own `MIMALLOC_*` variables, which it reads when an option is first
/// used and which `mi_option_set` would otherwise override).
fn configure() {
    // SAFETY: getenv reads the environment the loader set up, with
    // NUL-terminated names; mi_option_set takes plain values.
    unsafe {
        if libc::getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() {
            mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
        if libc::getenv(c"MIMALLOC_PURGE_DELAY".as_ptr()).is_null() {
            mi_option_set(PURGE_DELAY, 0);
        }
    }
}
