//! kapi in kube-apiserver's place: started as `kube-apiserver` (argv[0], a
//! symlink in envtest's KUBEBUILDER_ASSETS) or as `kapi kube-apiserver`, it
//! reads kube-apiserver's command line and answers as kube-apiserver does.

use std::process::ExitCode;

use kapi::config::kube_apiserver::{self, CommandLine, Personality};
use kapi::config::ServeOptions;

pub fn run(args: Vec<String>) -> ExitCode {
    let cl = match CommandLine::parse(args) {
        Ok(cl) => cl,
        Err(e) => {
            // cobra's form, exit status 1.
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if cl.bool("help") == Some(true) {
        print!("{}", kube_apiserver::help());
        return ExitCode::SUCCESS;
    }
    if cl.bool("version") == Some(true) || cl.get("version") == Some("raw") {
        println!("Kubernetes {}", kapi::version::KUBERNETES_GIT_VERSION);
        return ExitCode::SUCCESS;
    }
    let personality = match Personality::from_command_line(&cl, ServeOptions::defaults()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    crate::init_logging(personality.verbosity, personality.logging_format);
    for name in cl.names() {
        if let Some((_, why)) = kube_apiserver::NO_OPS.iter().find(|(n, _)| *n == name) {
            tracing::info!(flag = name, "accepted without effect: {why}");
        }
    }
    let data_dir = personality.serve.data_dir.clone();
    let write_pair = personality.write_serving_pair_to.clone();
    crate::serve::run_with(personality.serve, move || {
        // kube-apiserver writes the self-signed pair it made into --cert-dir.
        if let Some((cert, key)) = &write_pair {
            let pki = data_dir.join("pki");
            let copied = std::fs::read_to_string(pki.join("apiserver.crt")).and_then(|c| {
                let k = std::fs::read_to_string(pki.join("apiserver.key"))?;
                kube_apiserver::write_serving_pair(cert, key, &c, &k)
            });
            if let Err(e) = copied {
                tracing::warn!(error = %e, path = %cert.display(), "could not write the serving certificate");
            }
        }
    })
}
