//! The `kapi` command line: a thin layer over the `kapi` library.

mod allocator;
mod apiservice;
mod client_args;
mod completions;
mod etcd;
mod kube_apiserver;
mod routes;
mod sample_apiserver;
mod scaffold;
mod serve;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "kapi",
    version = kapi::version::KUBERNETES_GIT_VERSION,
    about = "The Kubernetes API server, as one fast binary for developers",
    after_help = "Examples:\n  kapi serve                      # HTTPS on 127.0.0.1:6443, store in ./.kapi\n  kapi serve --secure-port 0      # pick a free port\n  kapi routes --match GET /api/v1/namespaces/default/pods\n  kapi etcd dump --resource configmaps -n default\n  kapi completions bash > ~/.local/share/bash-completion/completions/kapi"
)]
pub struct Cli {
    /// Log verbosity, as kube-apiserver's -v: 0 info, 2 debug, 4 trace.
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        default_value_t = 0,
        value_name = "LEVEL"
    )]
    verbosity: u8,

    /// Log lines as text (for a person) or JSON (one object per line, as
    /// kube-apiserver's --logging-format=json).
    #[arg(long, global = true, value_enum, default_value_t = kapi::logs::Format::Text, value_name = "FORMAT")]
    logging_format: kapi::logs::Format,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the API server chain over HTTPS and write an admin kubeconfig.
    #[command(
        after_help = "Examples:\n  kapi serve\n  kapi serve --secure-port 0 --data-dir /tmp/kapi\n  kapi serve --etcd-servers http://127.0.0.1:2379\n  kapi serve --anonymous-auth=false --token-auth-file tokens.csv"
    )]
    Serve(Box<kapi::config::ServeOptions>),
    /// List the routes of every server in the chain, or find the one a request reaches.
    #[command(
        after_help = "Servers are listed in delegation order: aggregator -> kube-apiserver ->\napiextensions-apiserver; what none of them serves ends in a 404.\n\nExamples:\n  kapi routes                                       # built-in catalog, offline\n  kapi routes --resource pods -o wide\n  kapi routes --server apiextensions-apiserver --kubeconfig .kapi/admin.kubeconfig\n  kapi routes --match GET /api/v1/namespaces/default/pods\n  kapi routes --match GET '/apis/apps/v1/deployments?watch=true'\n  kapi routes --group apps -o json"
    )]
    Routes(routes::Args),
    /// Follow one request through the server stage by stage: authentication,
    /// authorization, decode, defaulting, admission, validation, storage.
    #[command(
        name = "trace-request",
        after_help = "Examples:\n  kapi trace-request -f pod.yaml                 # dry run: nothing is stored\n  kapi trace-request -f deploy.yaml --verb apply --commit\n  kapi trace-request -f pod.yaml -o json\n  kapi trace-request PATCH /apis/apps/v1/namespaces/default/deployments/web \\\n      -p '{\"spec\":{\"replicas\":3}}' --type merge\n  kapi trace-request GET /api/v1/namespaces/default/pods"
    )]
    TraceRequest(trace::Args),
    /// Manifests to start from: `kapi scaffold crd`.
    #[command(
        after_help = "Examples:\n  kapi scaffold crd --group example.com --kind Widget > widget-crd.yaml"
    )]
    Scaffold(scaffold::Args),
    /// Look at what kapi stored: `kapi etcd dump`.
    #[command(
        after_help = "Examples:\n  kapi etcd dump --resource configmaps -n default\n  kapi etcd dump --etcd-servers http://127.0.0.1:2379 --keys-only"
    )]
    Etcd(etcd::Args),
    /// Register aggregated API servers with a running kapi: `register`, `list`, `unregister`.
    #[command(
        after_help = "Examples:\n  kapi apiservice register --group wardle.example.com --version v1alpha1 \\\n      --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt\n  kapi apiservice list\n  kapi apiservice unregister v1alpha1.wardle.example.com"
    )]
    Apiservice(apiservice::Args),
    /// Run a sample aggregated API server (wardle.example.com: Flunders and Fischers).
    #[command(
        after_help = "Examples:\n  kapi sample-apiserver --requestheader-client-ca-file .kapi/pki/front-proxy-ca.crt\n  kapi sample-apiserver --secure-port 0 --cert-dir /tmp/wardle \\\n      --requestheader-client-ca-file .kapi/pki/front-proxy-ca.crt\n  # then: kapi apiservice register --group wardle.example.com --version v1alpha1 \\\n  #   --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt"
    )]
    SampleApiserver(sample_apiserver::Args),
    /// Print shell completions for bash, zsh, fish, powershell or elvish.
    #[command(
        after_help = "Examples:\n  kapi completions bash > ~/.local/share/bash-completion/completions/kapi\n  kapi completions zsh > ~/.zfunc/_kapi"
    )]
    Completions(completions::Args),
}

fn init_logging(verbosity: u8, format: kapi::logs::Format) {
    kapi::logs::init(verbosity, format);
}

fn main() -> ExitCode {
    // Started as kube-apiserver (a symlink named so), or `kapi kube-apiserver`:
    // kube-apiserver's command line, not kapi's.
    let args: Vec<String> = std::env::args().collect();
    let invoked_as = args
        .first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if invoked_as == "kube-apiserver" {
        return kube_apiserver::run(args[1..].to_vec());
    }
    if args.get(1).map(String::as_str) == Some("kube-apiserver") {
        return kube_apiserver::run(args[2..].to_vec());
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // One clear line naming the flag, as the issue asks, not clap's block.
            let rendered = e.render().to_string();
            let mut lines = rendered.lines();
            let mut first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            // "the following required arguments were not provided:" names
            // them on the lines below.
            let rest: Vec<&str> = lines.collect();
            if first.ends_with(':') {
                let named: Vec<&str> = rest
                    .iter()
                    .map(|l| l.trim())
                    .take_while(|l| !l.is_empty())
                    .collect();
                first = format!("{first} {}", named.join(", "));
            }
            // Still one line, with clap's "did you mean" when it has one.
            let tips: Vec<&str> = rest
                .iter()
                .map(|l| l.trim())
                .filter(|l| l.starts_with("tip:"))
                .collect();
            if tips.is_empty() {
                eprintln!("kapi: {first}");
            } else {
                eprintln!("kapi: {first} ({})", tips.join("; "));
            }
            return ExitCode::from(2);
        }
    };
    if !matches!(cli.command, Command::Serve(_) | Command::SampleApiserver(_)) {
        // The commands that print: `kapi routes | head` ends quietly, as
        // other command-line tools do, instead of panicking on a closed pipe.
        // (The servers keep Rust's default, so a closed log pipe cannot kill them.)
        // SAFETY: restoring the default disposition of one signal at start.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    match cli.command {
        Command::Completions(args) => completions::run(args),
        Command::Routes(args) => routes::run(args),
        Command::TraceRequest(args) => trace::run(args),
        Command::Scaffold(args) => scaffold::run(args),
        Command::Etcd(args) => {
            init_logging(cli.verbosity, cli.logging_format);
            etcd::run(args)
        }
        Command::Apiservice(args) => {
            init_logging(cli.verbosity, cli.logging_format);
            apiservice::run(args)
        }
        Command::SampleApiserver(args) => {
            init_logging(cli.verbosity, cli.logging_format);
            sample_apiserver::run(args)
        }
        Command::Serve(opts) => {
            init_logging(cli.verbosity, cli.logging_format);
            serve::run(*opts)
        }
    }
}
