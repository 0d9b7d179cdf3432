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
//! glibc. Committing on demand and purging at once costs no throughput
//! measurable here and keeps RSS within 2–4 MiB of glibc's.

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

/// Sets the options above.
fn configure() {
    // SAFETY: mi_option_set takes plain values and is thread-safe.
    unsafe {
        mi_option_set(ARENA_EAGER_COMMIT, 0);
        mi_option_set(PURGE_DELAY, 0);
    }
}
