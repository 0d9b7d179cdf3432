//! `kapi etcd dump`: what landed in storage, key by key, decoded.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use kapi::storage::dump::{self, DumpError, Entry, Filter, KeyLayout, Plan, Sink};
use kapi::storage::etcd::EtcdConfig;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: EtcdCommand,
}

#[derive(Debug, clap::Subcommand)]
enum EtcdCommand {
    /// Print the keys under a prefix with their revisions and decoded values.
    #[command(after_help = DUMP_HELP)]
    Dump(DumpArgs),
}

const DUMP_HELP: &str = "\
Values stored as JSON (kapi) or in upstream's protobuf envelope (k8s\\0) are
decoded; anything else is shown as <undecodable: N bytes: hex...>. Keys are
read 500 at a time, all at one revision.

The embedded store is read in place when no kapi is serving from it. While
one is (it holds the store's lock), a consistent copy of the store is read
instead, made in the system's temporary directory ($TMPDIR) and removed
afterwards.

Examples:
  kapi etcd dump                                   # the store in ./.kapi
  kapi etcd dump --data-dir .kapi --resource configmaps -n default
  kapi etcd dump --keys-only --prefix /registry/apiextensions.k8s.io/
  kapi etcd dump --etcd-servers http://127.0.0.1:2379 -o table
  kapi etcd dump --resource widgets --group example.com -o json
  kapi etcd dump --revision 42 --resource deployments.apps --name web -n default";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Yaml,
    Json,
    /// Aligned columns: key, resource, namespace, name, revisions, version, size.
    Table,
}

#[derive(Debug, clap::Args)]
struct DumpArgs {
    /// The data dir of a kapi using the embedded store (reads DIR/store/kapi.redb).
    #[arg(
        long,
        default_value = "./.kapi",
        value_name = "DIR",
        conflicts_with = "etcd_servers"
    )]
    data_dir: PathBuf,

    /// Read etcd at these endpoints (comma separated) instead of the embedded store.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    etcd_servers: Vec<String>,

    /// CA bundle to verify etcd's serving certificate.
    #[arg(long, value_name = "FILE", requires = "etcd_servers")]
    etcd_cafile: Option<PathBuf>,

    /// Client certificate for etcd.
    #[arg(long, value_name = "FILE", requires_all = ["etcd_keyfile", "etcd_servers"])]
    etcd_certfile: Option<PathBuf>,

    /// Client key for etcd.
    #[arg(long, value_name = "FILE", requires_all = ["etcd_certfile", "etcd_servers"])]
    etcd_keyfile: Option<PathBuf>,

    /// The key prefix kapi stores under, as given to `kapi serve`.
    #[arg(long, default_value = "/registry", value_name = "PREFIX")]
    etcd_prefix: String,

    /// Only this resource (plural, singular, short name or kind; `deployments.apps` works too).
    #[arg(long, value_name = "RESOURCE")]
    resource: Option<String>,

    /// Only resources of this API group ("core" for the legacy group); with
    /// --resource, names a custom resource.
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,

    /// Only objects in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    namespace: Option<String>,

    /// Only objects with this name.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,

    /// Only keys starting with this (e.g. /registry/configmaps/default/).
    #[arg(long, value_name = "KEY")]
    prefix: Option<String>,

    /// Leave values out (yaml, json), or print one key per line (default output).
    #[arg(long)]
    keys_only: bool,

    /// Read at this revision instead of the latest.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
    revision: Option<i64>,

    /// The EncryptionConfiguration kapi (or kube-apiserver) was given: values encrypted at rest are decrypted with its keys. Without it they are shown as their provider and key.
    #[arg(long, value_name = "FILE")]
    encryption_provider_config: Option<PathBuf>,

    /// Output format (default yaml; one key per line with --keys-only).
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    output: Option<Output>,
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        EtcdCommand::Dump(a) => run_dump(a),
    }
}

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("kapi: {msg}");
    ExitCode::from(code)
}

/// A progress bar over another sink, on stderr, for dumps of more than a
/// page, when stderr is a terminal and stdout is not (so the bar never
/// mixes with what is printed).
struct WithProgress<'a> {
    inner: &'a mut dyn Sink,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl Sink for WithProgress<'_> {
    fn begin(&mut self, revision: i64) -> std::io::Result<()> {
        self.inner.begin(revision)
    }

    fn entry(&mut self, e: &Entry) -> std::io::Result<()> {
        self.inner.entry(e)
    }

    fn progress(&mut self, read: u64, total: u64) {
        if !self.enabled || total <= dump::PAGE_SIZE as u64 {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} keys ({eta} left)")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        bar.set_length(total.max(read));
        bar.set_position(read);
    }

    fn end(&mut self) -> std::io::Result<()> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.inner.end()
    }
}

fn run_dump(a: DumpArgs) -> ExitCode {
    let prefix = a.etcd_prefix.trim_end_matches('/').to_string();
    if !prefix.starts_with('/') {
        return fail(
            2,
            &format!(
                "invalid value for --etcd-prefix: {:?} must start with /",
                a.etcd_prefix
            ),
        );
    }
    let endpoints: Vec<String> = a
        .etcd_servers
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for e in &endpoints {
        if !(e.starts_with("http://") || e.starts_with("https://")) {
            return fail(2, &format!("invalid value for --etcd-servers: {e:?} must be a URL such as http://127.0.0.1:2379"));
        }
    }
    let layout = KeyLayout::new(&kapi::app::builtin_catalog(), &prefix);
    let filter = Filter {
        resource: a.resource.clone(),
        group: a.group.clone(),
        namespace: a.namespace.clone(),
        name: a.name.clone(),
        prefix: a.prefix.clone(),
    };
    let mut plan = match Plan::new(layout, filter) {
        Ok(p) => p,
        Err(e) => return fail(2, &e.to_string()),
    };
    if let Some(path) = &a.encryption_provider_config {
        match kapi::storage::encryption::EncryptionConfig::load(path) {
            Ok(config) => plan = plan.with_encryption(config),
            Err(e) => return fail(2, &format!("--encryption-provider-config: {e}")),
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(1, &format!("cannot start the runtime: {e}")),
    };
    let result = runtime.block_on(async {
        let source = if endpoints.is_empty() {
            let dir = a.data_dir.clone();
            tokio::task::spawn_blocking(move || dump::open_data_dir(&dir))
                .await
                .map_err(|e| DumpError::Storage(e.to_string()))??
        } else {
            let cfg = EtcdConfig {
                endpoints: endpoints.clone(),
                ca_file: a.etcd_cafile.clone(),
                cert_file: a.etcd_certfile.clone(),
                key_file: a.etcd_keyfile.clone(),
            };
            dump::open_etcd(&cfg, &prefix).await?
        };
        if let Some(note) = &source.note {
            eprintln!("kapi: {note}");
        }
        let out = BufWriter::new(std::io::stdout().lock());
        let output = a.output.unwrap_or(Output::Yaml);
        let mut sink: Box<dyn Sink> = match (a.output, a.keys_only) {
            (None, true) => Box::new(dump::KeysSink::new(out)),
            _ => match output {
                Output::Yaml => Box::new(dump::YamlSink::new(out)),
                Output::Json => Box::new(dump::JsonSink::new(out)),
                Output::Table => Box::new(dump::TableSink::new(out)),
            },
        };
        let bar = std::io::stderr().is_terminal() && !std::io::stdout().is_terminal();
        let mut sink = WithProgress {
            inner: sink.as_mut(),
            bar: None,
            enabled: bar,
        };
        let summary = tokio::select! {
            r = dump::dump(
                source.backend.as_ref(),
                &plan,
                a.revision.unwrap_or(0),
                a.keys_only,
                bar,
                &mut sink,
            ) => r,
            // Ctrl-C: stop reading, and let the copy of the store go.
            _ = tokio::signal::ctrl_c() => Err(DumpError::Storage("interrupted".into())),
        };
        source.backend.close().await;
        summary
    });
    let _ = std::io::stdout().flush();
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(DumpError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e @ DumpError::Usage(_)) => fail(2, &e.to_string()),
        Err(e) => fail(1, &e.to_string()),
    }
}
