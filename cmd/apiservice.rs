//! `kapi apiservice`: register an aggregated API server with a running
//! kapi (the APIService and the Service it points at), list APIServices,
//! and unregister one with what `register` created for it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use kapi::aggregator::register::{self, Backend, Manifest, Registration};
use kapi::clientcmd::Remote;
use serde_json::{json, Value};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Register an aggregated API server and wait until its APIService is Available.
    #[command(after_help = REGISTER_HELP)]
    Register(RegisterArgs),
    /// List APIServices: NAME, SERVICE, AVAILABLE, REASON, AGE.
    #[command(after_help = "Examples:\n  kapi apiservice list\n  kapi apiservice list -o json")]
    List(ListArgs),
    /// Delete an APIService and the Service and Endpoints `register` created for it.
    #[command(
        after_help = "Examples:\n  kapi apiservice unregister v1alpha1.wardle.example.com --kubeconfig .kapi/admin.kubeconfig"
    )]
    Unregister(UnregisterArgs),
}

const REGISTER_HELP: &str = "\
With --url, kapi creates a Service named after the group in kube-system: an
ExternalName Service for a server on loopback or at a DNS name (Endpoints may
not hold loopback addresses), or a Service without selector plus Endpoints for
a server at another IP address. kapi verifies the server's certificate for the
name <service>.<namespace>.svc (wardle-example-com.kube-system.svc), as
upstream's aggregator does, and presents its front-proxy client certificate;
the server should trust kapi's front-proxy CA (<data-dir>/pki/front-proxy-ca.crt,
also in kube-system/extension-apiserver-authentication).

Examples:
  kapi sample-apiserver --secure-port 8443 \\
      --requestheader-client-ca-file .kapi/pki/front-proxy-ca.crt
  kapi apiservice register --group wardle.example.com --version v1alpha1 \\
      --url https://127.0.0.1:8443 --ca-file .kapi-sample/wardle-ca.crt
  kapi apiservice register --group metrics.k8s.io --version v1beta1 \\
      --service kube-system/metrics-server --insecure-skip-tls-verify
  kapi apiservice register --group wardle.example.com --version v1alpha1 \\
      --url https://127.0.0.1:8443 --ca-file ca.crt --dry-run -o yaml";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Yaml,
    Json,
}

#[derive(Debug, clap::Args)]
struct RegisterArgs {
    /// The API group the server serves.
    #[arg(long, value_name = "GROUP")]
    group: String,

    /// The version of the group the server serves.
    #[arg(long = "version", value_name = "VERSION")]
    version: String,

    /// Where the server listens (https://HOST:PORT); kapi creates the Service.
    #[arg(
        long,
        value_name = "URL",
        required_unless_present = "service",
        conflicts_with = "service"
    )]
    url: Option<String>,

    /// An existing Service in front of the server.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    service: Option<String>,

    /// The port of --service.
    #[arg(long, value_name = "PORT", default_value_t = 443, requires = "service")]
    service_port: u16,

    /// PEM CA bundle verifying the server's serving certificate (spec.caBundle).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure_skip_tls_verify")]
    ca_file: Option<PathBuf>,

    /// Do not verify the server's certificate (strongly discouraged).
    #[arg(long)]
    insecure_skip_tls_verify: bool,

    /// spec.groupPriorityMinimum (upstream recommends 18000 for *.k8s.io, 2000s for PaaSes).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    group_priority_minimum: i64,

    /// spec.versionPriority.
    #[arg(long, value_name = "N", default_value_t = 15)]
    version_priority: i64,

    /// How long to wait for the APIService to become Available (0: do not wait).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = kapi::config::duration::parse)]
    timeout: Duration,

    /// Print the objects instead of creating them.
    #[arg(long)]
    dry_run: bool,

    /// Print the objects (--dry-run) or the registered APIService in this format.
    #[arg(short = 'o', long, value_enum)]
    output: Option<Output>,

    #[command(flatten)]
    conn: crate::client_args::ClientArgs,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Print the APIServices in this format instead of a table.
    #[arg(short = 'o', long, value_enum)]
    output: Option<Output>,

    #[command(flatten)]
    conn: crate::client_args::ClientArgs,
}

#[derive(Debug, clap::Args)]
struct UnregisterArgs {
    /// The APIService (<version>.<group>).
    #[arg(value_name = "NAME")]
    name: String,

    #[command(flatten)]
    conn: crate::client_args::ClientArgs,
}

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("kapi: {msg}");
    ExitCode::from(code)
}

pub fn run(args: Args) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(1, &format!("cannot start the runtime: {e}")),
    };
    let result = rt.block_on(async move {
        match args.command {
            Command::Register(a) => register(a).await,
            Command::List(a) => list(a).await,
            Command::Unregister(a) => unregister(a).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => fail(1, &e),
    }
}

/// One call to kapi: (status, JSON body or Null).
async fn call(
    remote: &Remote,
    method: reqwest::Method,
    path: &str,
    body: Option<(&str, &Value)>,
) -> Result<(u16, Value), String> {
    let url = format!("{}{path}", remote.server);
    let mut req = remote
        .client
        .request(method.clone(), &url)
        .header(reqwest::header::ACCEPT, "application/json");
    if let Some(t) = &remote.token {
        req = req.bearer_auth(t);
    }
    if let Some((content_type, b)) = body {
        req = req
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(serde_json::to_vec(b).unwrap_or_default());
    }
    let resp = req
        .send()
        .await
        .map_err(|e| kapi::clientcmd::request_error(&method, &url, &e))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| kapi::clientcmd::request_error(&method, &url, &e))?;
    Ok((
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    ))
}

fn message(v: &Value, status: u16) -> String {
    v["message"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| format!("HTTP {status}"))
}

fn qualified(m: &Manifest) -> String {
    match m.resource {
        "apiservices" => format!("apiservice.apiregistration.k8s.io/{}", m.name),
        "services" => format!("service/{}", m.name),
        other => format!("{other}/{}", m.name),
    }
}

/// Creates an object, or brings an existing one to what it should be.
/// An APIService pointed somewhere else keeps the Available condition of
/// its old backend until the availability controller checks the new one:
/// it is set to Unknown so that waiting for Available means the new
/// backend answered.
async fn forget_availability(remote: &Remote, m: &Manifest, mut obj: Value) -> Result<(), String> {
    let unknown = json!({"type": "Available", "status": "Unknown", "reason": "Reregistered",
        "message": "the backend changed; waiting for its availability check",
        "lastTransitionTime": kapi::registry::meta::now_rfc3339()});
    let mut conditions: Vec<Value> = obj["status"]["conditions"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|c| c["type"] != "Available")
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    conditions.push(unknown);
    obj["status"]["conditions"] = json!(conditions);
    let (status, body) = call(
        remote,
        reqwest::Method::PUT,
        &format!("{}/status", m.path()),
        Some(("application/json", &obj)),
    )
    .await?;
    match status {
        200 => Ok(()),
        // The controller wrote first: its condition is about the new backend.
        409 => Ok(()),
        _ => Err(format!(
            "updating {} status: {}",
            qualified(m),
            message(&body, status)
        )),
    }
}

async fn apply(remote: &Remote, m: &Manifest) -> Result<&'static str, String> {
    let (status, body) = call(
        remote,
        reqwest::Method::POST,
        &m.collection_path(),
        Some(("application/json", &m.object)),
    )
    .await?;
    match status {
        200 | 201 => return Ok("created"),
        409 => {}
        _ => {
            return Err(format!(
                "creating {}: {}",
                qualified(m),
                message(&body, status)
            ))
        }
    }
    if m.resource == "apiservices" {
        let (status, mut current) = call(remote, reqwest::Method::GET, &m.path(), None).await?;
        if status != 200 {
            return Err(format!(
                "reading {}: {}",
                qualified(m),
                message(&current, status)
            ));
        }
        let repointed = current["spec"] != m.object["spec"];
        current["spec"] = m.object["spec"].clone();
        current["metadata"]["labels"] = m.object["metadata"]["labels"].clone();
        current["metadata"]["annotations"] = m.object["metadata"]["annotations"].clone();
        let (status, body) = call(
            remote,
            reqwest::Method::PUT,
            &m.path(),
            Some(("application/json", &current)),
        )
        .await?;
        if status != 200 {
            return Err(format!(
                "updating {}: {}",
                qualified(m),
                message(&body, status)
            ));
        }
        if repointed {
            forget_availability(remote, m, body).await?;
        }
    } else {
        let (status, body) = call(
            remote,
            reqwest::Method::PATCH,
            &m.path(),
            Some(("application/merge-patch+json", &m.object)),
        )
        .await?;
        if status != 200 {
            return Err(format!(
                "updating {}: {}",
                qualified(m),
                message(&body, status)
            ));
        }
    }
    Ok("configured")
}

fn available_condition(api_service: &Value) -> Option<Value> {
    api_service["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Available")
        .cloned()
}

fn describe(cond: &Option<Value>) -> String {
    match cond {
        None => "Available: Unknown (no condition yet)".to_string(),
        Some(c) => format!(
            "Available: {} ({}: {})",
            c["status"].as_str().unwrap_or("Unknown"),
            c["reason"].as_str().unwrap_or(""),
            c["message"].as_str().unwrap_or("")
        ),
    }
}

fn print_objects(objects: &[&Value], output: Output) -> Result<(), String> {
    match output {
        Output::Json => {
            let doc = if objects.len() == 1 {
                objects[0].clone()
            } else {
                json!({"apiVersion": "v1", "kind": "List", "items": objects})
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
            );
        }
        Output::Yaml => {
            let docs: Result<Vec<String>, String> = objects
                .iter()
                .map(|o| serde_saphyr::to_string(o).map_err(|e| e.to_string()))
                .collect();
            print!("{}", docs?.join("---\n"));
        }
    }
    Ok(())
}

async fn register(a: RegisterArgs) -> Result<ExitCode, String> {
    let backend = match (&a.url, &a.service) {
        (Some(url), _) => {
            let (host, port) = register::parse_url(url)?;
            Backend::Url { host, port }
        }
        (None, Some(s)) => {
            let (namespace, name) = s
                .split_once('/')
                .filter(|(n, m)| !n.is_empty() && !m.is_empty())
                .ok_or_else(|| format!("--service {s:?}: want NAMESPACE/NAME"))?;
            Backend::Service {
                namespace: namespace.into(),
                name: name.into(),
                port: a.service_port,
            }
        }
        (None, None) => return Err("one of --url and --service is required".into()),
    };
    let ca_bundle = match &a.ca_file {
        Some(f) => Some(std::fs::read(f).map_err(|e| format!("--ca-file {}: {e}", f.display()))?),
        None => None,
    };
    let reg = Registration {
        group: a.group.clone(),
        version: a.version.clone(),
        backend,
        ca_bundle,
        insecure_skip_tls_verify: a.insecure_skip_tls_verify,
        group_priority_minimum: a.group_priority_minimum,
        version_priority: a.version_priority,
    };
    let manifests = reg.manifests()?;
    if a.dry_run {
        match a.output {
            Some(Output::Yaml) | None => {
                let docs: Vec<&str> = manifests.iter().map(|m| m.yaml.as_str()).collect();
                print!("{}", docs.join("---\n"));
            }
            Some(Output::Json) => {
                let objects: Vec<&Value> = manifests.iter().map(|m| &m.object).collect();
                print_objects(&objects, Output::Json)?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let remote = Remote::connect(&a.conn.selection())
        .await
        .map_err(|e| e.0)?;
    for m in &manifests {
        let what = apply(&remote, m).await?;
        if a.output.is_none() {
            println!("{} {what}", qualified(m));
        }
    }
    let name = reg.name();
    let path = format!("/apis/apiregistration.k8s.io/v1/apiservices/{name}");
    let spinner = (std::io::stderr().is_terminal() && !a.timeout.is_zero()).then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(80));
        bar
    });
    let deadline = Instant::now() + a.timeout;
    let (available, last) = loop {
        let (status, obj) = call(&remote, reqwest::Method::GET, &path, None).await?;
        if status != 200 {
            return Err(format!(
                "reading apiservice {name}: {}",
                message(&obj, status)
            ));
        }
        let cond = available_condition(&obj);
        let ok = cond.as_ref().is_some_and(|c| c["status"] == "True");
        if ok || Instant::now() >= deadline {
            break (ok, obj);
        }
        if let Some(bar) = &spinner {
            bar.set_message(format!("waiting for {name}: {}", describe(&cond)));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    if let Some(bar) = &spinner {
        bar.finish_and_clear();
    }
    let cond = available_condition(&last);
    if let Some(o) = a.output {
        print_objects(&[&last], o)?;
    } else {
        println!("{}", describe(&cond));
    }
    if available || a.timeout.is_zero() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "kapi: apiservice {name} is not Available after {}s",
        a.timeout.as_secs()
    );
    Ok(ExitCode::FAILURE)
}

async fn list(a: ListArgs) -> Result<ExitCode, String> {
    let remote = Remote::connect(&a.conn.selection())
        .await
        .map_err(|e| e.0)?;
    let (status, body) = call(
        &remote,
        reqwest::Method::GET,
        "/apis/apiregistration.k8s.io/v1/apiservices",
        None,
    )
    .await?;
    if status != 200 {
        return Err(format!("listing APIServices: {}", message(&body, status)));
    }
    if let Some(output) = a.output {
        // As `kubectl get -o`: items carry their kind, several make a List.
        let items: Vec<Value> = body["items"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .map(|i| {
                let mut i = i.clone();
                i["apiVersion"] = json!("apiregistration.k8s.io/v1");
                i["kind"] = json!("APIService");
                i
            })
            .collect();
        print_objects(&items.iter().collect::<Vec<_>>(), output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![[
        "NAME".to_string(),
        "SERVICE".to_string(),
        "AVAILABLE".to_string(),
        "REASON".to_string(),
        "AGE".to_string(),
    ]];
    for item in body["items"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let cond = available_condition(item);
        let service = kapi::registry::apiregistration::service_cell(item);
        rows.push([
            item["metadata"]["name"].as_str().unwrap_or("").to_string(),
            service.as_str().unwrap_or("").to_string(),
            cond.as_ref()
                .and_then(|c| c["status"].as_str())
                .unwrap_or("Unknown")
                .to_string(),
            cond.as_ref()
                .and_then(|c| c["reason"].as_str())
                .unwrap_or("")
                .to_string(),
            kapi::registry::strategy::human_age(
                item["metadata"]["creationTimestamp"].as_str().unwrap_or(""),
            ),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        println!("{}", line.join("   ").trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

async fn unregister(a: UnregisterArgs) -> Result<ExitCode, String> {
    let remote = Remote::connect(&a.conn.selection())
        .await
        .map_err(|e| e.0)?;
    let path = format!("/apis/apiregistration.k8s.io/v1/apiservices/{}", a.name);
    let (status, obj) = call(&remote, reqwest::Method::GET, &path, None).await?;
    if status == 404 {
        return Err(format!(
            "apiservice {} not found",
            kapi::api::go_quote(&a.name)
        ));
    }
    if status != 200 {
        return Err(format!(
            "reading apiservice {}: {}",
            a.name,
            message(&obj, status)
        ));
    }
    if obj["spec"]["service"].is_null() {
        // A local APIService: kapi serves that group itself (built in, or
        // a CRD's), and deleting it would only hide the group.
        return Err(format!(
            "apiservice {} is served by kapi itself (a built-in group or a CRD's), not by an aggregated server: there is nothing to unregister",
            kapi::api::go_quote(&a.name)
        ));
    }
    let (status, body) = call(&remote, reqwest::Method::DELETE, &path, None).await?;
    if status != 200 && status != 404 {
        return Err(format!(
            "deleting apiservice {}: {}",
            a.name,
            message(&body, status)
        ));
    }
    println!(
        "apiservice.apiregistration.k8s.io {} deleted",
        kapi::api::go_quote(&a.name)
    );
    for (ns, resource, name) in register::created_objects(&obj) {
        let p = format!("/api/v1/namespaces/{ns}/{resource}/{name}");
        let (status, body) = call(&remote, reqwest::Method::DELETE, &p, None).await?;
        match status {
            200 | 202 => {
                let kind = if resource == "services" {
                    "service"
                } else {
                    "endpoints"
                };
                println!(
                    "{kind} {} deleted from {ns} namespace",
                    kapi::api::go_quote(&name)
                );
            }
            404 => {}
            _ => {
                return Err(format!(
                    "deleting {resource} {ns}/{name}: {}",
                    message(&body, status)
                ))
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
