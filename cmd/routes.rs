//! `kapi routes`: the route table of every server in the chain, or which
//! server and route a request would reach.

use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use http::Method;
use kapi::routes::{self, Filter, Match, Route};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Aligned columns.
    Table,
    /// More columns: API version, scope and subresource.
    Wide,
    Json,
    Yaml,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Ask a running kapi (its catalog, with current CRDs, from aggregated
    /// discovery) instead of building the built-in catalog offline. Asked
    /// when --kubeconfig, --context, --server-url or $KUBECONFIG names one.
    #[command(flatten)]
    client: crate::client_args::ClientArgs,

    /// The URL of the kapi to ask, overriding the kubeconfig's server
    /// (credentials still come from the kubeconfig).
    #[arg(long, value_name = "URL")]
    server_url: Option<String>,

    /// Build the built-in catalog offline even when $KUBECONFIG is set.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context", "server_url"])]
    offline: bool,

    /// Only routes of this server of the chain.
    #[arg(long, value_name = "NAME", value_parser = PossibleValuesParser::new(routes::SERVERS))]
    server: Option<String>,

    /// Only routes of resources of this API group ("core" for the legacy group).
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,

    /// Only routes of this resource (plural, singular, short name or kind;
    /// `deployments.apps` and `pods/status` work too).
    #[arg(long, value_name = "RESOURCE")]
    resource: Option<String>,

    /// Which server and route would serve this request, or how it falls
    /// through to a 404; PATH may carry a query (`?watch=true`).
    #[arg(long = "match", num_args = 2, value_names = ["METHOD", "PATH"])]
    match_request: Option<Vec<String>>,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    output: Output,
}

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("kapi: {msg}");
    ExitCode::from(code)
}

pub fn run(args: Args) -> ExitCode {
    let request = match &args.match_request {
        Some(v) => {
            let (method, mut path) = (v[0].to_ascii_uppercase(), v[1].clone());
            // A whole URL, as copied from kubectl -v 6: keep its path and query.
            if let Some(rest) = path
                .strip_prefix("https://")
                .or_else(|| path.strip_prefix("http://"))
            {
                path = rest
                    .find('/')
                    .map_or_else(|| "/".to_string(), |i| rest[i..].to_string());
            }
            let Ok(m) = Method::from_bytes(method.as_bytes()) else {
                return fail(
                    2,
                    &format!(
                        "invalid value for --match: {:?} is not an HTTP method",
                        v[0]
                    ),
                );
            };
            if !path.starts_with('/') {
                return fail(
                    2,
                    &format!("invalid value for --match: {path:?} must be a path starting with /"),
                );
            }
            Some((m, path))
        }
        None => None,
    };
    let mut selection = args.client.selection();
    selection.server = args.server_url.clone();
    let remote = !args.offline
        && (selection.is_explicit() || selection.context.is_some() || selection.server.is_some());
    let catalog = match remote {
        false => kapi::app::builtin_catalog(),
        true => {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return fail(1, &format!("cannot start the runtime: {e}")),
            };
            match rt.block_on(routes::fetch_catalog(&selection)) {
                Ok(c) => c,
                Err(e) => return fail(1, &e.to_string()),
            }
        }
    };
    let table = routes::all(&catalog, &kapi::app::route_tables(&catalog));
    let printed = match request {
        Some((method, path)) => print_match(
            &routes::match_request(&catalog, &table, &method, &path),
            args.output,
        ),
        None => {
            let filter = Filter {
                server: args.server.clone(),
                group: args.group.clone(),
                resource: args.resource.clone(),
            };
            if let Some(e) = filter.unknown(&catalog) {
                return fail(1, &e);
            }
            let shown = filter.apply(&catalog, table);
            if shown.is_empty() && matches!(args.output, Output::Table | Output::Wide) {
                eprintln!("No routes found.");
                return ExitCode::SUCCESS;
            }
            print_routes(&shown, args.output)
        }
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        // `kapi routes | head` closes the pipe early: not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(1, &format!("writing output: {e}")),
    }
}

fn write_out(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

fn to_yaml<T: serde::Serialize>(v: &T) -> std::io::Result<String> {
    serde_saphyr::to_string(v).map_err(std::io::Error::other)
}

fn to_json<T: serde::Serialize>(v: &T) -> std::io::Result<String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(std::io::Error::other)
}

/// Columns padded to their widest cell, three spaces apart, as kubectl.
fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(&format!("{cell:<w$}   ", w = widths[i]));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn print_routes(routes: &[Route], output: Output) -> std::io::Result<()> {
    match output {
        Output::Json => write_out(&to_json(&routes)?),
        Output::Yaml => write_out(&to_yaml(&routes)?),
        Output::Table => {
            let mut rows = vec![[
                "SERVER", "METHOD", "PATH", "VERB", "HANDLER", "RESOURCE", "KIND",
            ]
            .map(String::from)
            .to_vec()];
            rows.extend(routes.iter().map(|r| {
                vec![
                    r.server.clone(),
                    r.method.clone(),
                    r.path.clone(),
                    r.verb.clone(),
                    handler(r),
                    r.resource_name(),
                    r.kind.clone(),
                ]
            }));
            write_out(&align(&rows))
        }
        Output::Wide => {
            let mut rows = vec![[
                "SERVER",
                "METHOD",
                "PATH",
                "VERB",
                "HANDLER",
                "APIVERSION",
                "RESOURCE",
                "KIND",
                "NAMESPACED",
                "SUBRESOURCE",
            ]
            .map(String::from)
            .to_vec()];
            rows.extend(routes.iter().map(|r| {
                vec![
                    r.server.clone(),
                    r.method.clone(),
                    r.path.clone(),
                    r.verb.clone(),
                    handler(r),
                    r.api_version(),
                    r.resource.clone(),
                    r.kind.clone(),
                    r.namespaced.map(|n| n.to_string()).unwrap_or_default(),
                    r.subresource.clone(),
                ]
            }));
            write_out(&align(&rows))
        }
    }
}

fn handler(r: &Route) -> String {
    serde_json::to_value(r.handler)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn print_match(m: &Match, output: Output) -> std::io::Result<()> {
    match output {
        Output::Json => write_out(&to_json(m)?),
        Output::Yaml => write_out(&to_yaml(m)?),
        Output::Table | Output::Wide => {
            let mut rows: Vec<Vec<String>> = Vec::new();
            let mut add = |k: &str, v: String| rows.push(vec![format!("{k}:"), v]);
            add("request", format!("{} {}", m.method, m.path));
            let i = &m.request_info;
            if i.is_resource_request {
                let gv = if i.api_group.is_empty() {
                    i.api_version.clone()
                } else {
                    format!("{}/{}", i.api_group, i.api_version)
                };
                let mut about = format!("{} {} {}", i.verb, gv, i.resource);
                if !i.subresource.is_empty() {
                    about.push_str(&format!("/{}", i.subresource));
                }
                if !i.namespace.is_empty() {
                    about.push_str(&format!(" in namespace {}", i.namespace));
                }
                if !i.name.is_empty() {
                    about.push_str(&format!(" named {}", i.name));
                }
                add("resource request", about);
            } else {
                add("non-resource request", i.verb.clone());
            }
            if !m.passed.is_empty() {
                add("passed", m.passed.join(" -> "));
            }
            let server = if m.route.is_none()
                && m.outcome != routes::Outcome::ResourceNotFound
                && m.outcome != routes::Outcome::MethodNotAllowed
            {
                "none: the chain's not-found handler answers".to_string()
            } else {
                m.server.clone()
            };
            add("server", server);
            if let Some(r) = &m.route {
                add("route", format!("{} {}", r.method, r.path));
                add("verb", r.verb.clone());
                add("handler", handler(r));
                if !r.resource.is_empty() {
                    let scope = if r.namespaced == Some(true) {
                        "namespaced"
                    } else {
                        "cluster-scoped"
                    };
                    add(
                        "resource",
                        format!(
                            "{} ({} {}, {scope})",
                            r.resource_name(),
                            r.api_version(),
                            r.kind
                        ),
                    );
                }
            }
            let status = match m.status {
                0 => "served".to_string(),
                405 => "405 MethodNotAllowed Status".to_string(),
                404 if m.outcome == routes::Outcome::PageNotFound => {
                    "404 page not found".to_string()
                }
                404 => "404 NotFound Status".to_string(),
                n => n.to_string(),
            };
            add("answer", status);
            add("why", m.reason.clone());
            write_out(&align(&rows))
        }
    }
}
