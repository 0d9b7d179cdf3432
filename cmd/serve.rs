//! `kapi serve`: start, show progress, wait for SIGTERM or SIGINT, stop cleanly.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use kapi::app::{self, StartObserver};
use kapi::config::ServeOptions;

/// A spinner on a terminal, plain log lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(80));
            bar
        });
        Progress { bar }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl StartObserver for Progress {
    fn step(&self, name: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(format!("{name}...")),
            None => tracing::debug!(step = name, "starting"),
        }
    }

    fn done(&self, name: &str, detail: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("  \u{2713} {name}: {detail}")),
            None => tracing::info!(step = name, "{detail}"),
        }
    }
}

pub fn run(opts: ServeOptions) -> ExitCode {
    run_with(opts, || {})
}

/// Task polls between two looks at the I/O driver (see `run_with`).
const EVENT_INTERVAL: u32 = 11;

/// [`run`], calling `started` once kapi serves (before it prints its address).
pub fn run_with(opts: ServeOptions, started: impl FnOnce()) -> ExitCode {
    let cfg = match opts.complete() {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("kapi: {e}");
            return ExitCode::from(2);
        }
    };
    // One server per process here: its gates are the process's.
    kapi::config::feature_gates::install(cfg.feature_gates.clone());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        // Look for new I/O more often than tokio's default (every 61 task
        // polls): under a flood of big lists each poll can be long, and a
        // small request arriving meanwhile (a health probe, an exempt
        // get) should not wait behind dozens of them.
        .event_interval(EVENT_INTERVAL)
        .worker_threads(kapi::server::serve::worker_threads())
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kapi: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        // Handlers first: a SIGTERM that arrives as soon as the address is
        // printed must still shut down cleanly.
        let mut signals = Signals::install();
        let progress = Progress::new();
        // A signal during the start (a slow etcd, say) stops kapi there.
        let starting = tokio::select! {
            r = app::start(cfg, &progress) => Some(r),
            _ = signals.wait() => None,
        };
        let serving = match starting {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                progress.finish();
                eprintln!("kapi: {e:#}");
                return ExitCode::FAILURE;
            }
            None => {
                progress.finish();
                eprintln!("kapi: stopped by a signal before it was serving");
                return ExitCode::FAILURE;
            }
        };
        progress.finish();
        started();
        notify_systemd_ready();
        println!(
            "kapi listening on https://{} (started in {} ms)",
            serving.addr,
            serving.started_in.as_millis()
        );
        if let Some(path) = &serving.kubeconfig {
            let kubeconfig = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            println!("export KUBECONFIG={}", kubeconfig.display());
        }
        signals.wait().await;
        let delay = serving.shutdown_delay();
        if !delay.is_zero() {
            // As kube-apiserver: /readyz fails at once, everything else is
            // served for the delay (a second signal cuts it short).
            serving.not_ready();
            tracing::info!(delay = ?delay, "shutting down: /readyz fails, still serving for --shutdown-delay-duration");
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = signals.wait() => {}
            }
        }
        tracing::info!("shutting down: no new connections, letting in-flight requests finish");
        serving.shutdown().await;
        tracing::info!("stopped");
        ExitCode::SUCCESS
    })
}

/// `READY=1` to systemd (`Type=notify` units) once serving, as
/// kube-apiserver sends it; nothing when `NOTIFY_SOCKET` is unset.
fn notify_systemd_ready() {
    use std::os::unix::net::UnixDatagram;
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let sent = UnixDatagram::unbound().and_then(|sock| {
        let bytes = path.as_encoded_bytes();
        match bytes.strip_prefix(b"@") {
            // An abstract socket (Linux): `@name`.
            Some(name) => {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
                sock.send_to_addr(b"READY=1\n", &addr)
            }
            None => sock.send_to(b"READY=1\n", &path),
        }
    });
    if let Err(e) = sent {
        tracing::warn!(error = %e, "could not tell systemd kapi is ready (NOTIFY_SOCKET)");
    }
}

/// SIGTERM and SIGINT, caught from the start so either stops kapi cleanly.
pub(crate) struct Signals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl Signals {
    pub(crate) fn install() -> Signals {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => Signals(Some((term, int))),
            // Without handlers the process still stops on the default action.
            _ => Signals(None),
        }
    }

    pub(crate) async fn wait(&mut self) {
        let Some((term, int)) = self.0.as_mut() else {
            std::future::pending::<()>().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
    }
}
