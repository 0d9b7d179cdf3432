//! Gives memory back to the operating system once the server goes quiet.
//!
//! Heap: glibc keeps what a busy spell freed (request buffers, a large
//! list, start-up's bootstrap writes) in its arenas for reuse, so resident
//! memory stays at the spell's high-water mark; `malloc_trim` returns the
//! free pages. The `kapi` binary allocates through mimalloc
//! (cmd/allocator.rs), which purges freed pages itself; there this trims
//! what glibc still holds for C code (aws-lc). Programs that use the
//! library on the system allocator (`kapi::testing`) get the whole effect.
//!
//! Code: start-up runs a few MiB of code that an idle server never runs
//! again (the command line, certificates, bootstrap policy, schemas), and
//! a busy spell maps the code of whatever it served; the kernel maps code
//! 64 KiB around each page that runs. Those pages stay counted in the
//! process's RSS until memory runs short. Once quiet, the binary's
//! read-only mappings are dropped from the process (`MADV_DONTNEED`, which
//! for a clean file mapping only unmaps: the pages stay in the page cache)
//! and what runs next maps back in from the page cache, a minor fault per
//! 64 KiB.
//!
//! Both run only after a spell has ended (little CPU over the last tick):
//! trimming walks every arena under that arena's lock, which a request in
//! flight would wait for, and code unmapped mid-spell would only fault
//! straight back.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often the process's CPU time is read: a spell's memory goes back
/// within about two ticks of its end.
const TICK: Duration = Duration::from_millis(250);

/// When to trim, from the CPU time the process used in each tick.
#[derive(Debug, Default)]
struct Quiet {
    /// CPU used since the last trim.
    since_trim: Duration,
}

impl Quiet {
    /// Less than this over a tick (2% of a core) is quiet.
    const QUIET: Duration = Duration::from_millis(5);
    /// A spell that used less than this since the last trim freed too
    /// little to be worth a trim.
    const WORTH: Duration = Duration::from_millis(50);

    /// Notes one tick's CPU time; true when now is the time to trim.
    fn tick(&mut self, used: Duration) -> bool {
        self.since_trim += used;
        let trim = used < Self::QUIET && self.since_trim >= Self::WORTH;
        if trim {
            self.since_trim = Duration::ZERO;
        }
        trim
    }
}

/// Trims after each busy spell until `stop`.
pub async fn run(stop: CancellationToken) {
    let mut quiet = Quiet::default();
    let mut last = cpu_time();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = stop.cancelled() => return,
        }
        let now = cpu_time();
        if quiet.tick(now.saturating_sub(last)) {
            release();
        }
        // The trim's own CPU is not the next tick's activity.
        last = cpu_time();
    }
}

/// User and system CPU time of the whole process.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn release() {
    trim_heap();
    drop_code_pages();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_heap() {
    // SAFETY: malloc_trim takes no pointers; 0 keeps no extra pad.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() {}

/// Unmaps the pages of the executable's read-only mappings (code, constant
/// data) from the process; see the module's comment.
#[cfg(target_os = "linux")]
fn drop_code_pages() {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
        return;
    };
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return;
    };
    for m in clean_mappings_of(&smaps, &exe.to_string_lossy()) {
        // SAFETY: the range is a whole mapping of the executable that
        // nothing can write (no write permission, no private copies: see
        // `clean_mappings_of`), so dropping its pages loses nothing; the
        // next access reads the file's page again.
        unsafe {
            libc::madvise(m.start as *mut libc::c_void, m.len, libc::MADV_DONTNEED);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn drop_code_pages() {}

/// One address range of the process.
#[derive(Debug, PartialEq)]
struct Mapping {
    start: usize,
    len: usize,
}

/// The mappings of file `path` in a `/proc/PID/smaps` text that are safe
/// to drop: not writable and without private (copied-on-write) pages. The
/// loader relocates `.data.rel.ro` in place and then makes it read-only:
/// that mapping has private pages, and dropping them would bring back the
/// file's unrelocated bytes.
fn clean_mappings_of(smaps: &str, path: &str) -> Vec<Mapping> {
    let mut out = Vec::new();
    let mut current: Option<Mapping> = None;
    let mut private_pages = false;
    let finish = |m: Option<Mapping>, private: bool, out: &mut Vec<Mapping>| {
        if let Some(m) = m {
            if !private {
                out.push(m);
            }
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(first), Some(second)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let Some((lo, hi)) = first.split_once('-') {
            // A mapping's header: range, permissions, offset, device, inode, path.
            let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            else {
                continue;
            };
            finish(current.take(), private_pages, &mut out);
            private_pages = false;
            let file = fields.nth(3).unwrap_or("");
            let read_only = second.starts_with('r') && second.as_bytes().get(1) == Some(&b'-');
            if read_only && file == path && hi > lo {
                current = Some(Mapping {
                    start: lo,
                    len: hi - lo,
                });
            }
        } else if matches!(first, "Anonymous:" | "Swap:") && second != "0" {
            // Private copies are anonymous pages. (`Private_Dirty` also
            // counts file pages not yet written back, as a binary just
            // copied into place has.)
            private_pages = true;
        }
    }
    finish(current, private_pages, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn trims_once_when_a_busy_spell_ends() {
        let mut q = Quiet::default();
        // Busy: no trim while it lasts.
        assert!(!q.tick(400 * MS));
        assert!(!q.tick(300 * MS));
        // It ends: one trim, then none while nothing happens.
        assert!(q.tick(MS));
        assert!(!q.tick(0 * MS));
        assert!(!q.tick(2 * MS));
    }

    #[test]
    fn idle_ticks_add_up_to_a_trim_only_once_they_are_worth_it() {
        let mut q = Quiet::default();
        // Background work of 2 ms a tick: quiet, and 50 ms after 25 ticks.
        let trims: Vec<bool> = (0..25).map(|_| q.tick(2 * MS)).collect();
        assert_eq!(trims.iter().filter(|t| **t).count(), 1);
        assert!(trims[24]);
    }

    #[test]
    fn only_clean_read_only_mappings_of_the_binary_are_dropped() {
        let smaps = "\
55d000000000-55d000100000 r--p 00000000 08:01 42 /usr/bin/kapi
Size:               1024 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
55d000100000-55d000300000 r-xp 00100000 08:01 42 /usr/bin/kapi
Private_Dirty:      2048 kB
Anonymous:             0 kB
55d000300000-55d000310000 r--p 00300000 08:01 42 /usr/bin/kapi
Private_Dirty:        64 kB
Anonymous:            64 kB
55d000310000-55d000320000 rw-p 00310000 08:01 42 /usr/bin/kapi
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 7 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 08:01 43 /usr/bin/kapi-other
Anonymous:             0 kB
7f0000300000-7f0000400000 r--p 00000000 00:00 0
";
        assert_eq!(
            clean_mappings_of(smaps, "/usr/bin/kapi"),
            vec![
                Mapping {
                    start: 0x55d000000000,
                    len: 0x100000
                },
                Mapping {
                    start: 0x55d000100000,
                    len: 0x200000
                },
            ]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn dropped_code_runs_again() {
        // This test binary's own code and constants are dropped, then run.
        drop_code_pages();
        let mut q = Quiet::default();
        assert!(!q.tick(400 * MS));
        assert!(q.tick(MS));
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let exe = std::fs::read_link("/proc/self/exe").expect("exe");
        assert!(!clean_mappings_of(&smaps, &exe.to_string_lossy()).is_empty());
    }

    #[test]
    fn cpu_time_moves_forward_while_the_process_works() {
        let before = cpu_time();
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while cpu_time() <= before {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "CPU time stood still"
            );
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
    }
}
