//! `kapi sample-apiserver`: a small aggregated API server
//! (wardle.example.com/v1alpha1 Flunders and Fischers) to register behind
//! kapi with `kapi apiservice register`.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use kapi::aggregator::sample::{self, Options};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The address to listen on.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    bind_address: IpAddr,

    /// The HTTPS port (0 picks a free one; the one taken is printed).
    #[arg(long, value_name = "PORT", default_value_t = 8443)]
    secure_port: u16,

    /// Serving certificate (PEM); without it a CA and a certificate are made in --cert-dir.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,

    /// Key of --tls-cert-file (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,

    /// Where the self-made CA (wardle-ca.crt, the caBundle to register with)
    /// and serving certificate are kept and reused.
    #[arg(long, value_name = "DIR", default_value = ".kapi-sample")]
    cert_dir: PathBuf,

    /// More DNS names for the self-made serving certificate (kapi verifies
    /// <service>.<namespace>.svc; wardle-example-com.kube-system.svc and
    /// api.wardle.svc are always included).
    #[arg(long = "tls-san", value_name = "NAME")]
    tls_sans: Vec<String>,

    /// The CA that signs the front proxy's client certificate (kapi's
    /// <data-dir>/pki/front-proxy-ca.crt): only its holder may name users.
    #[arg(long, value_name = "FILE")]
    requestheader_client_ca_file: PathBuf,

    /// Common names the front proxy may present (empty: any the CA signed).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        default_value = "front-proxy-client"
    )]
    requestheader_allowed_names: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kapi: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut service_names = sample::default_service_names();
    service_names.extend(args.tls_sans.iter().cloned());
    let opts = Options {
        bind_address: args.bind_address,
        secure_port: args.secure_port,
        tls_cert_file: args.tls_cert_file,
        tls_private_key_file: args.tls_private_key_file,
        cert_dir: args.cert_dir,
        service_names,
        requestheader_client_ca_file: args.requestheader_client_ca_file,
        requestheader_allowed_names: args
            .requestheader_allowed_names
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect(),
    };
    runtime.block_on(async move {
        // Before anything is printed: a SIGTERM sent as soon as the
        // serving line appears must stop the server cleanly, not kill it.
        let mut signals = crate::serve::Signals::install();
        let log: sample::Log = Arc::new(|line: &str| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        });
        let started = match sample::start(opts, log).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("kapi: {e:#}");
                return ExitCode::FAILURE;
            }
        };
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "sample-apiserver serving {}/{} on https://{}",
                sample::GROUP,
                sample::VERSION,
                started.addr
            );
            if let Some(ca) = &started.ca_file {
                let ca = std::fs::canonicalize(ca).unwrap_or_else(|_| ca.clone());
                let _ = writeln!(out, "serving CA (caBundle): {}", ca.display());
            }
            let _ = out.flush();
        }
        signals.wait().await;
        started.shutdown().await;
        ExitCode::SUCCESS
    })
}
