//! Client certificates, as upstream treats them: TLS asks for a certificate
//! but does not demand a trusted one; the x509 authenticator then checks
//! the chain against the client CA, so a foreign certificate gets a 401
//! Status instead of a failed handshake.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use super::UserInfo;

/// The outcome of checking a connection's client certificate, decided once
/// per connection and consulted by every request on it.
#[derive(Debug, Clone)]
pub enum ClientCertIdentity {
    Verified(UserInfo),
    Rejected(String),
}

/// Asks for a client certificate, accepts any that proves key possession,
/// and leaves trust to [`ClientCertAuthority::identify`].
#[derive(Debug)]
pub struct RequestClientCert {
    inner: Arc<dyn ClientCertVerifier>,
}

/// Verifies client certificates against a CA pool.
#[derive(Debug, Clone)]
pub struct ClientCertAuthority {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl ClientCertAuthority {
    pub fn new(ca_pems: &[&str]) -> Result<Self, String> {
        let mut roots = RootCertStore::empty();
        for pem in ca_pems {
            for der in parse_pem_certs(pem)? {
                roots.add(der).map_err(|e| format!("CA certificate: {e}"))?;
            }
        }
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), crate::crypto_provider())
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("client CA: {e}"))?;
        Ok(ClientCertAuthority { verifier })
    }

    /// The TLS-side verifier that requests but does not require trust.
    pub fn tls_verifier(&self) -> Arc<dyn ClientCertVerifier> {
        Arc::new(RequestClientCert {
            inner: self.verifier.clone(),
        })
    }

    /// CN is the user, each O a group, as upstream's x509 authenticator maps them.
    pub fn identify(&self, chain: &[CertificateDer<'_>]) -> Option<ClientCertIdentity> {
        let (end, intermediates) = chain.split_first()?;
        if let Err(e) = self
            .verifier
            .verify_client_cert(end, intermediates, UnixTime::now())
        {
            return Some(ClientCertIdentity::Rejected(format!(
                "certificate signed by unknown authority or invalid: {e}"
            )));
        }
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(end.as_ref()) else {
            return Some(ClientCertIdentity::Rejected(
                "unparseable certificate".into(),
            ));
        };
        let subject = cert.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .unwrap_or("")
            .to_string();
        if name.is_empty() {
            return Some(ClientCertIdentity::Rejected(
                "certificate has no common name".into(),
            ));
        }
        let groups = subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .map(String::from)
            .collect();
        Some(ClientCertIdentity::Verified(UserInfo {
            name,
            groups,
            ..Default::default()
        }))
    }
}

pub fn parse_pem_certs(pem: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem.as_bytes()).collect();
    let certs = certs.map_err(|e| format!("bad PEM certificate: {e}"))?;
    if certs.is_empty() {
        return Err("no certificate in PEM data".into());
    }
    Ok(certs)
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
