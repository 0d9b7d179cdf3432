//! `kapi trace-request`: one request, followed stage by stage through the
//! server (authentication -> authorization -> decode -> defaulting ->
//! admission -> validation -> encode -> storage -> response).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use kapi::clientcmd::Remote;
use kapi::trace::client::{self, Verb};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerbArg {
    Create,
    Update,
    Apply,
    Get,
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line per stage, with what defaulting and admission changed.
    Text,
    /// The stages as the server recorded them, and the response.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// With PATH: the HTTP method of a request given by hand.
    #[arg(value_name = "METHOD", requires = "path")]
    method: Option<String>,

    /// The path (and query) of a request given by hand, e.g.
    /// /api/v1/namespaces/default/pods.
    #[arg(value_name = "PATH")]
    path: Option<String>,

    /// The manifest (YAML or JSON): without METHOD PATH, the object to
    /// send as --verb; with them, the request body. "-" reads standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    file: Option<PathBuf>,

    /// With METHOD PATH: a patch to send as the body (see --type).
    #[arg(
        short = 'p',
        long,
        value_name = "PATCH",
        conflicts_with = "file",
        requires = "path"
    )]
    patch: Option<String>,

    /// The patch type of --patch.
    #[arg(long = "type", value_enum, default_value_t = PatchType::Strategic)]
    patch_type: PatchType,

    /// Without METHOD PATH: what to do with the manifest.
    #[arg(long, value_enum, default_value_t = VerbArg::Create)]
    verb: VerbArg,

    /// Really store the change; without it writes are sent with dryRun=All
    /// and run every stage but the write itself.
    #[arg(long)]
    commit: bool,

    /// With --verb apply: take over fields other managers own.
    #[arg(long)]
    force_conflicts: bool,

    #[command(flatten)]
    client: crate::client_args::ClientArgs,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

pub fn run(args: Args) -> ExitCode {
    match trace(&args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("kapi: {msg}");
            ExitCode::from(1)
        }
    }
}

fn read_manifest(path: &PathBuf) -> Result<Value, String> {
    let text = if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
    };
    // One line per error, as kubectl reports YAML errors (no snippet).
    let mut opts = serde_saphyr::Options::default();
    opts.with_snippet = false;
    let mut docs: Vec<Value> = serde_saphyr::from_multiple_with_options(&text, opts)
        .map_err(|e| format!("{}: not a YAML or JSON manifest: {e}", path.display()))?;
    docs.retain(|d| !d.is_null());
    match docs.len() {
        1 => Ok(docs.remove(0)),
        0 => Err(format!("{}: holds no object", path.display())),
        n => Err(format!(
            "{}: holds {n} objects; trace-request follows one request, so give it a file with one",
            path.display()
        )),
    }
}

fn trace(args: &Args) -> Result<ExitCode, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let remote = rt
        .block_on(Remote::connect(&args.client.selection()))
        .map_err(|e| e.0)?;
    let request = match (&args.method, &args.path) {
        (Some(method), Some(path)) => {
            let method = http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                .map_err(|_| format!("{method:?} is not an HTTP method"))?;
            let body = match (&args.file, &args.patch) {
                (Some(file), _) => {
                    let manifest = read_manifest(file)?;
                    let bytes = serde_json::to_vec(&manifest).map_err(|e| e.to_string())?;
                    let content_type = if method == http::Method::PATCH {
                        args.patch_type.content_type()
                    } else {
                        "application/json"
                    };
                    Some((bytes, content_type.to_string()))
                }
                (None, Some(patch)) => Some((
                    patch.clone().into_bytes(),
                    args.patch_type.content_type().to_string(),
                )),
                (None, None) => None,
            };
            client::Request {
                method,
                path: path.clone(),
                body,
            }
        }
        _ => {
            let Some(file) = &args.file else {
                return Err("give a manifest with -f FILE, or a request as METHOD PATH".into());
            };
            let manifest = read_manifest(file)?;
            let verb = match args.verb {
                VerbArg::Create => Verb::Create,
                VerbArg::Update => Verb::Update,
                VerbArg::Apply => Verb::Apply,
                VerbArg::Get => Verb::Get,
                VerbArg::Delete => Verb::Delete,
            };
            rt.block_on(client::manifest_request(
                &remote,
                &manifest,
                verb,
                args.force_conflicts,
            ))?
        }
    };
    let reads = matches!(request.method, http::Method::GET | http::Method::HEAD);
    let traced = rt.block_on(client::trace(&remote, request, args.commit))?;
    match args.output {
        Output::Json => {
            let out = serde_json::json!({
                "method": traced.method,
                "url": traced.url,
                "code": traced.status,
                "stages": traced.report.stages,
                "totalMicros": traced.report.total_micros,
                "response": traced.body,
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
            );
        }
        Output::Text => print_text(&traced, reads || args.commit),
    }
    Ok(if (200..300).contains(&traced.status) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn ms(micros: u64) -> String {
    format!("{:.2}ms", micros as f64 / 1000.0)
}

fn print_text(t: &client::Traced, stored_or_read: bool) {
    let note = if !stored_or_read {
        " (dry run: --commit stores it)"
    } else {
        ""
    };
    println!("{} {} -> {}{note}", t.method, t.url, t.status);
    println!();
    // As wide as the longest stage name, so no row pushes its columns out.
    let w = t
        .report
        .stages
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0)
        .max("STAGE".len());
    println!("{:<w$} {:>9}  {:<8} DETAIL", "STAGE", "TIME", "OUTCOME");
    for s in &t.report.stages {
        let (summary, patch) = describe(&s.detail);
        println!(
            "{:<w$} {:>9}  {:<8} {summary}",
            s.name,
            ms(s.micros),
            s.outcome
        );
        for line in patch {
            println!("{:<w$} {:>9}  {:<8}   {line}", "", "", "");
        }
    }
    println!("{:<w$} {:>9}", "total", ms(t.report.total_micros));
    if !(200..300).contains(&t.status) {
        let msg = t.body.get("message").and_then(Value::as_str).unwrap_or("");
        let reason = t.body.get("reason").and_then(Value::as_str).unwrap_or("");
        println!();
        println!("{reason}: {msg}");
    }
}

/// A one-line summary of a stage's detail and, for stages that changed the
/// object, one line per JSON patch operation.
fn describe(detail: &Value) -> (String, Vec<String>) {
    let Some(obj) = detail.as_object() else {
        return (compact(detail), Vec::new());
    };
    let mut lines = Vec::new();
    let mut rest = serde_json::Map::new();
    for (k, v) in obj {
        if k == "patch" {
            for op in v.as_array().into_iter().flatten() {
                let verb = op.get("op").and_then(Value::as_str).unwrap_or("?");
                let path = op.get("path").and_then(Value::as_str).unwrap_or("");
                let line = match op.get("value") {
                    Some(value) => format!("{verb} {path} = {}", compact(value)),
                    None => format!("{verb} {path}"),
                };
                lines.push(line);
            }
        } else {
            rest.insert(k.clone(), v.clone());
        }
    }
    let mut summary = rest
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={}", compact(other)),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if obj.contains_key("patch") && lines.is_empty() {
        summary = format!("{summary} no change").trim().to_string();
    }
    (summary, lines)
}

fn compact(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    if s.chars().count() > 100 {
        format!("{}...", s.chars().take(100).collect::<String>())
    } else {
        s
    }
}
