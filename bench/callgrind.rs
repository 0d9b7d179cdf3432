//! Server CPU per GET as instructions counted by `valgrind --tool=callgrind`
//! (issue 26): wall-clock CPU on a busy 2-core machine moves by tens of
//! percent between runs; the instruction count of the same binary serving
//! the same requests does not.
//!
//! The server runs under callgrind with instrumentation off while it
//! starts. Then instrumentation is switched on and the counters zeroed;
//! `n` GETs are sent and the counters dumped; the same is done over an
//! idle interval as long as the GETs took, so the server's own background
//! work (leases, controllers) is subtracted. The figure is
//! (busy - idle) / n.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use http::{Method, StatusCode};

use crate::common::{self, Conn, Op, Target};

/// True when `valgrind` and `callgrind_control` can be run.
pub fn available() -> bool {
    ["valgrind", "callgrind_control"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The wrapper a server is started under; dumps go to `dir`.
pub fn wrapper(dir: &Path) -> Vec<String> {
    vec![
        "valgrind".into(),
        "--tool=callgrind".into(),
        "--instr-atstart=no".into(),
        format!("--callgrind-out-file={}/cg.out", dir.display()),
    ]
}

fn control(pid: u32, args: &[&str]) -> Result<()> {
    let out = Command::new("callgrind_control")
        .args(args)
        .arg(pid.to_string())
        .output()
        .context("callgrind_control")?;
    if !out.status.success() {
        bail!(
            "callgrind_control {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// The total instruction count of the newest dump in `dir`.
fn last_dump_total(dir: &Path, before: &[std::path::PathBuf]) -> Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut fresh: Vec<_> = std::fs::read_dir(dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("cg.out"))
                    && !before.contains(p)
            })
            .collect();
        fresh.sort();
        if let Some(p) = fresh.last() {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let total = text
                .lines()
                .find_map(|l| l.strip_prefix("totals:").or(l.strip_prefix("summary:")))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
            if let Some(t) = total {
                return Ok(t);
            }
        }
        if Instant::now() > deadline {
            bail!("no callgrind dump appeared in {}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn dumps(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    Ok(std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .collect())
}

/// Instructions one counted interval executed in `pid`.
async fn counted<F, Fut>(pid: u32, dir: &Path, work: F) -> Result<(u64, Duration)>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    control(pid, &["-z"])?;
    let t = Instant::now();
    work().await?;
    let took = t.elapsed();
    let before = dumps(dir)?;
    control(pid, &["-d"])?;
    let total = last_dump_total(dir, &before)?;
    // KAPI_BENCH_CALLGRIND_KEEP=<dir> keeps each dump for callgrind_annotate.
    if let Some(keep) = std::env::var_os("KAPI_BENCH_CALLGRIND_KEEP") {
        let keep = std::path::PathBuf::from(keep);
        std::fs::create_dir_all(&keep)?;
        for p in dumps(dir)?.into_iter().filter(|p| !before.contains(p)) {
            if let Some(name) = p.file_name() {
                std::fs::copy(&p, keep.join(format!("{pid}-{}", name.to_string_lossy())))?;
            }
        }
    }
    Ok((total, took))
}

/// Instructions per GET of `paths` on a server already running under
/// [`wrapper`] as `pid`, with `conns` connected to it.
pub async fn per_get(
    pid: u32,
    dir: &Path,
    target: &Target,
    conns: &[Conn],
    paths: &[String],
    n: usize,
) -> Result<f64> {
    let op = || Op {
        method: Method::GET,
        uris: paths.iter().map(|p| target.uri(p)).collect(),
        bodies: vec![],
        expect: StatusCode::OK,
        min_len: 0,
    };
    per_request(pid, dir, conns, op, n).await
}

/// Instructions per request of `op` (each call of `op` gives the same
/// kind of request; a create's call gives bodies with fresh names).
pub async fn per_request<F>(pid: u32, dir: &Path, conns: &[Conn], op: F, n: usize) -> Result<f64>
where
    F: Fn() -> Op,
{
    control(pid, &["-i", "on"])?;
    // Warm: caches, lazily built tables, connection windows.
    let st = common::load(conns, n / 10 + 1, op(), None, None).await;
    if st.errors > 0 {
        bail!("warm-up requests failed: {:?}", st.first_error);
    }
    let (busy, took) = counted(pid, dir, || async {
        let st = common::load(conns, n, op(), None, None).await;
        if st.errors > 0 {
            bail!("{} of {n} requests failed: {:?}", st.errors, st.first_error);
        }
        Ok(())
    })
    .await?;
    let (idle, _) = counted(pid, dir, || async {
        tokio::time::sleep(took).await;
        Ok(())
    })
    .await?;
    Ok(busy.saturating_sub(idle) as f64 / n as f64)
}
