//! `--help`, laid out as kube-apiserver's, each flag described by what
//! kapi does with it.

use super::flags::{flags, Handling, NO_OPS};

/// `--help`, laid out as kube-apiserver's (cobra's usage, pflag's named
/// sections), each flag described by what kapi does with it.
pub fn help() -> String {
    let mut out = String::from(
        "The Kubernetes API server validates and configures data\n\
         for the api objects which include pods, services, replicationcontrollers, and\n\
         others. The API Server services REST operations and serves as the frontend to the\n\
         cluster's shared state through which all other components interact.\n\
         \n\
         This is kapi in kube-apiserver's place: every flag of kube-apiserver v1.34 is\n\
         accepted; each says below whether kapi honours it, ignores it (and why), or\n\
         accepts only its default.\n\
         \n\
         Usage:\n  kube-apiserver [flags]\n",
    );
    let mut section = "";
    for f in flags().iter().filter(|f| f.visible) {
        if f.section != section {
            section = f.section;
            out.push_str(&format!("\n{section} flags:\n\n"));
        }
        let head = match (f.shorthand, f.kind) {
            (Some(c), "bool") => format!("  -{c}, --{}", f.name),
            (Some(c), kind) => format!("  -{c}, --{} {kind}", f.name),
            (None, "bool") => format!("      --{}", f.name),
            (None, "version") => format!("      --{} version[=true]", f.name),
            (None, kind) => format!("      --{} {kind}", f.name),
        };
        let what = match f.handling() {
            Handling::Honoured => "Honoured as kube-apiserver honours it.".to_string(),
            Handling::NoOp => {
                let why = NO_OPS
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map_or("", |(_, w)| *w);
                format!("Accepted; no effect in kapi ({why}).")
            }
            Handling::DefaultOnly => {
                "Accepted at its default; other values are refused.".to_string()
            }
        };
        let default = match f.default_value() {
            "" | "0" | "0s" | "false" | "<nil>" | "[]" => String::new(),
            d => format!(" (default {d})"),
        };
        out.push_str(&format!("{head:<48} {what}{default}\n"));
    }
    out
}
