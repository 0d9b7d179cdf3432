//! `kapi scaffold`: manifests to start from, rendered from `templates/`.

use std::process::ExitCode;

use kapi::templates::CrdNames;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// A CustomResourceDefinition with a schema, status subresource,
    /// printer columns and a CEL validation rule.
    #[command(
        after_help = "Examples:\n  kapi scaffold crd --group example.com --kind Widget > widget-crd.yaml\n  kapi scaffold crd --group example.com --kind Policy --scope Cluster | kubectl apply -f -"
    )]
    Crd(CrdArgs),
}

/// `spec.scope`, spelled as in the manifest; the lowercase forms work too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Scope {
    #[value(name = "Namespaced", alias = "namespaced")]
    Namespaced,
    #[value(name = "Cluster", alias = "cluster")]
    Cluster,
}

#[derive(Debug, clap::Args)]
struct CrdArgs {
    /// The API group, a domain such as example.com.
    #[arg(long)]
    group: String,
    /// The kind, in CamelCase (Widget).
    #[arg(long)]
    kind: String,
    /// The plural resource name (default: the lowercased kind, pluralised).
    #[arg(long)]
    plural: Option<String>,
    /// The version to serve and store.
    #[arg(long, default_value = "v1")]
    version: String,
    /// Namespaced or Cluster, as the CRD's `spec.scope`.
    #[arg(long, value_enum, default_value_t = Scope::Namespaced)]
    scope: Scope,
}

pub fn run(args: Args) -> ExitCode {
    let What::Crd(a) = args.what;
    let rendered = CrdNames::new(
        &a.group,
        &a.kind,
        a.plural.as_deref(),
        &a.version,
        a.scope == Scope::Namespaced,
    )
    .and_then(|n| n.render());
    match rendered {
        Ok(yaml) => {
            print!("{yaml}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kapi: {e}");
            ExitCode::from(2)
        }
    }
}
