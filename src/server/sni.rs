//! `--tls-sni-cert-key`: more serving certificates, each chosen by the
//! name a client asks for (TLS SNI), as upstream picks them: a name given
//! with the flag wins over one read from a certificate, an exact name over
//! a wildcard (`*.example.com` covers one label), earlier flags over
//! later ones, and the `--tls-cert-file` pair answers everything else.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// One `--tls-sni-cert-key` value: `cert,key[:name,name...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedCertKey {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// Empty: the certificate's own names.
    pub names: Vec<String>,
}

impl NamedCertKey {
    /// Parsed as upstream's flag type parses it, with its errors.
    pub fn parse(value: &str) -> Result<NamedCertKey, String> {
        let (pair, names) = match value.split_once(':') {
            Some((pair, names)) => {
                let names = names.trim();
                if names.is_empty() {
                    return Err("empty names list is not allowed".into());
                }
                (
                    pair,
                    names.split(',').map(|n| n.trim().to_string()).collect(),
                )
            }
            None => (value, Vec::new()),
        };
        let parts: Vec<&str> = pair.trim().split(',').collect();
        let [cert, key] = parts[..] else {
            return Err("expected comma separated certificate and key file paths".into());
        };
        Ok(NamedCertKey {
            cert_file: cert.trim().into(),
            key_file: key.trim().into(),
            names,
        })
    }
}

/// A certificate and key, loaded.
pub struct LoadedCert {
    pub cert_pem: String,
    pub key_pem: String,
    pub names: Vec<String>,
}

/// A certificate's DNS names: its subject alternative names, else its
/// common name.
fn names_in(cert: &[u8]) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(cert) else {
        return Vec::new();
    };
    let mut names: Vec<String> = cert
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|g| match g {
                    GeneralName::DNSName(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        names.extend(
            cert.subject()
                .iter_common_name()
                .filter_map(|cn| cn.as_str().ok())
                .map(str::to_string),
        );
    }
    names
}

fn certified(cert_pem: &str, key_pem: &str) -> Result<Arc<CertifiedKey>, String> {
    let certs = crate::auth::x509::parse_pem_certs(cert_pem)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| format!("key: {e}"))?;
    let signer = crate::crypto_provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| format!("key: {e}"))?;
    let ck = CertifiedKey::new(certs, signer);
    ck.keys_match()
        .map_err(|e| format!("certificate and key: {e}"))?;
    Ok(Arc::new(ck))
}

/// Picks the certificate for the name a client asked for.
#[derive(Debug)]
pub struct SniResolver {
    default: Arc<CertifiedKey>,
    by_name: HashMap<String, Arc<CertifiedKey>>,
}

impl SniResolver {
    pub fn new(
        default_cert: &str,
        default_key: &str,
        named: &[LoadedCert],
    ) -> Result<SniResolver, String> {
        let mut explicit = HashMap::new();
        let mut extracted = HashMap::new();
        for (i, n) in named.iter().enumerate() {
            let ck = certified(&n.cert_pem, &n.key_pem)
                .map_err(|e| format!("--tls-sni-cert-key #{}: {e}", i + 1))?;
            let (names, into) = if n.names.is_empty() {
                let leaf = ck.cert.first().map(|c| c.to_vec()).unwrap_or_default();
                (names_in(&leaf), &mut extracted)
            } else {
                (n.names.clone(), &mut explicit)
            };
            for name in names {
                into.entry(name.to_ascii_lowercase())
                    .or_insert_with(|| ck.clone());
            }
        }
        for (name, ck) in extracted {
            explicit.entry(name).or_insert(ck);
        }
        Ok(SniResolver {
            default: certified(default_cert, default_key)
                .map_err(|e| format!("serving certificate: {e}"))?,
            by_name: explicit,
        })
    }

    fn pick(&self, name: Option<&str>) -> Arc<CertifiedKey> {
        let Some(name) = name.map(str::to_ascii_lowercase) else {
            return self.default.clone();
        };
        if let Some(ck) = self.by_name.get(&name) {
            return ck.clone();
        }
        let wildcard = name.split_once('.').map(|(_, rest)| format!("*.{rest}"));
        wildcard
            .and_then(|w| self.by_name.get(&w).cloned())
            .unwrap_or_else(|| self.default.clone())
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.pick(hello.server_name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_parse_as_upstreams() {
        assert_eq!(
            NamedCertKey::parse("a.crt,a.key:*.example.com, foo.com"),
            Ok(NamedCertKey {
                cert_file: "a.crt".into(),
                key_file: "a.key".into(),
                names: vec!["*.example.com".into(), "foo.com".into()],
            })
        );
        assert_eq!(
            NamedCertKey::parse("a.crt,a.key").map(|n| n.names.len()),
            Ok(0)
        );
        assert_eq!(
            NamedCertKey::parse("a.crt,a.key:"),
            Err("empty names list is not allowed".into())
        );
        assert_eq!(
            NamedCertKey::parse("a.crt"),
            Err("expected comma separated certificate and key file paths".into())
        );
    }
}
