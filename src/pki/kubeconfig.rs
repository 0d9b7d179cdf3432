//! The admin kubeconfig, rendered from `templates/kubeconfig.yaml`.

use std::net::IpAddr;
use std::path::Path;

use base64::Engine;

use super::{write_file, Pki, PkiError};
use crate::templates;

/// The URL clients use: the advertise address and the port actually bound.
pub fn server_url(host: IpAddr, port: u16) -> String {
    match host {
        IpAddr::V6(v6) => format!("https://[{v6}]:{port}"),
        IpAddr::V4(v4) => format!("https://{v4}:{port}"),
    }
}

/// Writes a kubeconfig that authenticates as `kubernetes-admin` in `system:masters`.
pub fn write_admin_kubeconfig(path: &Path, pki: &Pki, server: &str) -> Result<(), PkiError> {
    write_client_kubeconfig(
        path,
        &pki.ca.cert_pem,
        server,
        "kapi-admin",
        &pki.admin.cert_pem,
        &pki.admin.key_pem,
    )
}

/// Writes a kubeconfig for `server` (trusting `ca_pem`) that authenticates
/// with a client certificate; private to its owner, as it holds the key.
pub fn write_client_kubeconfig(
    path: &Path,
    ca_pem: &str,
    server: &str,
    user: &str,
    cert_pem: &str,
    key_pem: &str,
) -> Result<(), PkiError> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let text = templates::render(
        templates::KUBECONFIG,
        &[
            ("cluster", "kapi"),
            ("user", user),
            ("server", server),
            ("ca_data", &b64(ca_pem)),
            ("client_cert_data", &b64(cert_pem)),
            ("client_key_data", &b64(key_pem)),
        ],
    )
    .map_err(|message| PkiError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    write_file(path, &text, true)
}
