//! kube-apiserver's own command line, for when kapi runs in its place
//! (envtest, scripts, unit files): every flag kube-apiserver v1.34 has is
//! parsed with pflag's syntax and errors, and each one is honoured, accepted
//! as a no-op that cannot matter on one machine, or refused when it would
//! change behaviour kapi does not have.
//!
//! `flags` holds the table and each flag's handling, `command_line` parses
//! as pflag, `personality` turns the flags into kapi's options, and `help`
//! prints them.

mod command_line;
mod flags;
mod help;
mod personality;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use command_line::{CommandLine, ParseError};
pub use flags::{flags, Flag, Handling, NO_OPS};
pub use help::help;
pub use personality::{Personality, Refused};

pub(crate) use crate::component_base::parse_bool;

/// The serving pair kapi made, written where kube-apiserver would have
/// written its self-signed one.
pub fn write_serving_pair(
    cert: &Path,
    key: &Path,
    cert_pem: &str,
    key_pem: &str,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = cert.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(cert, cert_pem)?;
    let mut f = std::fs::OpenOptions::new();
    f.write(true).create(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut f, 0o600);
    f.open(key)?.write_all(key_pem.as_bytes())
}
