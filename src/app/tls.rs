//! TLS serving: the serving certificate (or `--tls-cert-file`), SNI
//! certificates, and the client CAs a client certificate is checked
//! against.

use anyhow::Context;

use crate::auth::x509::ClientCertAuthority;
use crate::config::CompletedConfig;
use crate::pki::Pki;
use crate::server::serve::TlsServing;

use super::auth::ClientTrust;

pub(super) fn tls_serving(
    cfg: &CompletedConfig,
    pki: &Pki,
    trust: &ClientTrust,
) -> anyhow::Result<TlsServing> {
    let client_ca = ClientCertAuthority::new(&[&trust.client_ca_bundle])
        .and_then(|ca| {
            ca.with_front_proxy(
                &trust.front_proxy.ca_pem,
                trust.front_proxy.allowed_names.clone(),
            )
        })
        .map_err(|e| anyhow::anyhow!("client CA: {e}"))?;
    let (cert, key) = match &cfg.tls_cert_file {
        Some((c, k)) => (
            std::fs::read_to_string(c)
                .with_context(|| format!("--tls-cert-file {}", c.display()))?,
            std::fs::read_to_string(k)
                .with_context(|| format!("--tls-private-key-file {}", k.display()))?,
        ),
        None => (pki.serving.cert_pem.clone(), pki.serving.key_pem.clone()),
    };
    let mut sni = Vec::new();
    for n in &cfg.tls_sni_cert_key {
        let read = |f: &std::path::Path| {
            std::fs::read_to_string(f)
                .with_context(|| format!("--tls-sni-cert-key {}", f.display()))
        };
        sni.push(crate::server::sni::LoadedCert {
            cert_pem: read(&n.cert_file)?,
            key_pem: read(&n.key_file)?,
            names: n.names.clone(),
        });
    }
    TlsServing::with_policy(&cert, &key, client_ca, &cfg.tls_policy, &sni)
        .map_err(|e| anyhow::anyhow!(e))
}
