//! Gives freed heap back to the operating system once the server goes
//! quiet. glibc keeps what a busy spell freed (request buffers, a large
//! list, start-up's bootstrap writes) in its arenas for reuse, so resident
//! memory stays at the spell's high-water mark; `malloc_trim` returns the
//! free pages. It runs only after a spell has ended (little CPU over the
//! last tick): trimming walks every arena under that arena's lock, which a
//! request in flight would wait for.
//!
//! The `kapi` binary allocates through mimalloc (cmd/allocator.rs), which
//! purges freed pages itself; there this trims what glibc still holds for
//! C code (aws-lc). Programs that use the library on the system allocator
//! (`kapi::testing`) get the whole effect.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often the process's CPU time is read.
const TICK: Duration = Duration::from_millis(500);

/// When to trim, from the CPU time the process used in each tick.
#[derive(Debug, Default)]
struct Quiet {
    /// CPU used since the last trim.
    since_trim: Duration,
}

impl Quiet {
    /// Less than this over a tick (2% of a core) is quiet.
    const QUIET: Duration = Duration::from_millis(10);
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

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release() {
    // SAFETY: malloc_trim takes no pointers; 0 keeps no extra pad.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release() {}

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
        // Background work of 5 ms a tick: quiet, and 50 ms after ten ticks.
        let trims: Vec<bool> = (0..10).map(|_| q.tick(5 * MS)).collect();
        assert_eq!(trims.iter().filter(|t| **t).count(), 1);
        assert!(trims[9]);
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
