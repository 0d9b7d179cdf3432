//! Client certificates, as upstream treats them: TLS asks for a certificate
//! but does not demand a trusted one; the x509 authenticator then checks
//! the chain against the client CA, so a foreign certificate gets a 401
//! Status instead of a failed handshake. A certificate signed by the
//! request-header (front-proxy) CA with an allowed common name identifies
//! an authenticating proxy instead: the user it vouches for travels in the
//! `X-Remote-*` headers (see [`super::request_header`]).

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
    /// The certificate's user, in `system:authenticated` as every
    /// authenticated user is: made once, shared by the connection's requests.
    Verified(std::sync::Arc<UserInfo>),
    /// An authenticating front proxy: the request's headers name the user.
    FrontProxy {
        /// The proxy certificate's common name.
        proxy: String,
        /// Who the certificate names when the client CA signed it too
        /// (upstream falls back to that when no user header came).
        x509: Option<UserInfo>,
    },
    Rejected(String),
}

/// Asks for a client certificate, accepts any that proves key possession,
/// and leaves trust to [`ClientCertAuthority::identify`].
#[derive(Debug)]
pub struct RequestClientCert {
    inner: Arc<dyn ClientCertVerifier>,
    /// The subjects of every CA a client certificate may come from (clients
    /// such as Go's pick their certificate by them).
    hints: Vec<DistinguishedName>,
}

/// Verifies client certificates against a CA pool.
#[derive(Debug, Clone)]
pub struct ClientCertAuthority {
    verifier: Arc<dyn ClientCertVerifier>,
    front_proxy: Option<FrontProxyAuthority>,
}

/// upstream's `--requestheader-client-ca-file` and `--requestheader-allowed-names`.
#[derive(Debug, Clone)]
struct FrontProxyAuthority {
    verifier: Arc<dyn ClientCertVerifier>,
    /// Common names a front proxy may present; empty accepts any.
    allowed_names: Vec<String>,
}

fn verifier_for(ca_pems: &[&str]) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let mut roots = RootCertStore::empty();
    for pem in ca_pems {
        for der in parse_pem_certs(pem)? {
            roots.add(der).map_err(|e| format!("CA certificate: {e}"))?;
        }
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), crate::crypto_provider())
        .allow_unauthenticated()
        .build()
        .map_err(|e| format!("client CA: {e}"))
}

fn common_name(cert: &x509_parser::certificate::X509Certificate<'_>) -> String {
    cert.subject()
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or("")
        .to_string()
}

impl ClientCertAuthority {
    pub fn new(ca_pems: &[&str]) -> Result<Self, String> {
        Ok(ClientCertAuthority {
            verifier: verifier_for(ca_pems)?,
            front_proxy: None,
        })
    }

    /// Also accept authenticating front proxies: certificates signed by
    /// `ca_pem` whose common name is one of `allowed_names` (any when empty).
    pub fn with_front_proxy(
        mut self,
        ca_pem: &str,
        allowed_names: Vec<String>,
    ) -> Result<Self, String> {
        self.front_proxy = Some(FrontProxyAuthority {
            verifier: verifier_for(&[ca_pem]).map_err(|e| format!("requestheader {e}"))?,
            allowed_names,
        });
        Ok(self)
    }

    /// The TLS-side verifier that requests but does not require trust.
    pub fn tls_verifier(&self) -> Arc<dyn ClientCertVerifier> {
        let mut hints = self.verifier.root_hint_subjects().to_vec();
        if let Some(fp) = &self.front_proxy {
            hints.extend(fp.verifier.root_hint_subjects().iter().cloned());
        }
        Arc::new(RequestClientCert {
            inner: self.verifier.clone(),
            hints,
        })
    }

    /// What the request-header and x509 authenticators make of a
    /// connection's certificate chain, in upstream's order: a front proxy
    /// (signed by the request-header CA, an allowed name) first, else the
    /// user the client CA vouches for (CN the name, each O a group).
    pub fn identify(&self, chain: &[CertificateDer<'_>]) -> Option<ClientCertIdentity> {
        let (end, intermediates) = chain.split_first()?;
        let x509 = self.client_cert_user(end, intermediates);
        let mut not_allowed = None;
        if let Some(fp) = &self.front_proxy {
            if fp
                .verifier
                .verify_client_cert(end, intermediates, UnixTime::now())
                .is_ok()
            {
                if let Ok((_, cert)) = x509_parser::parse_x509_certificate(end.as_ref()) {
                    let cn = common_name(&cert);
                    if fp.allowed_names.is_empty() || fp.allowed_names.contains(&cn) {
                        return Some(ClientCertIdentity::FrontProxy {
                            proxy: cn,
                            x509: x509.ok(),
                        });
                    }
                    not_allowed = Some(format!(
                        "x509: subject with cn={cn} is not in the allowed list"
                    ));
                }
            }
        }
        Some(match x509 {
            Ok(user) => ClientCertIdentity::Verified(user.with_authenticated_group().into()),
            Err(e) => ClientCertIdentity::Rejected(not_allowed.unwrap_or(e)),
        })
    }

    fn client_cert_user(
        &self,
        end: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
    ) -> Result<UserInfo, String> {
        self.verifier
            .verify_client_cert(end, intermediates, UnixTime::now())
            .map_err(|e| format!("certificate signed by unknown authority or invalid: {e}"))?;
        let (_, cert) = x509_parser::parse_x509_certificate(end.as_ref())
            .map_err(|_| "unparseable certificate".to_string())?;
        let name = common_name(&cert);
        if name.is_empty() {
            return Err("certificate has no common name".into());
        }
        let groups = cert
            .subject()
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .map(String::from)
            .collect();
        Ok(UserInfo {
            name,
            groups,
            ..Default::default()
        })
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
        &self.hints
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
