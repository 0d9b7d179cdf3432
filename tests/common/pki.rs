//! Certificates a test makes for itself, as a caller's own PKI would be:
//! a self-signed CA (as envtest's TinyCA makes it) and leaves it signs.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};

/// A CA: its certificate PEM and key.
pub struct Ca {
    pub cert_pem: String,
    key: KeyPair,
}

impl Ca {
    pub fn new(common_name: &str) -> Ca {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::new(vec![common_name.to_string()]).expect("params");
        p.distinguished_name.push(DnType::CommonName, common_name);
        p.distinguished_name
            .push(DnType::OrganizationName, "envtest");
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = p.self_signed(&key).expect("ca");
        Ca {
            cert_pem: cert.pem(),
            key,
        }
    }

    pub fn key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    /// A client certificate (CN the user, each O a group): PEM cert and key.
    pub fn client(&self, cn: &str, orgs: &[&str]) -> (String, String) {
        self.leaf(cn, orgs, None)
    }

    /// A serving certificate for localhost and 127.0.0.1: PEM cert and key.
    pub fn serving(&self, cn: &str) -> (String, String) {
        self.leaf(cn, &["envtest"], Some(&["localhost"]))
    }

    /// A serving certificate for `dns_names` (and 127.0.0.1).
    pub fn serving_for(&self, cn: &str, dns_names: &[&str]) -> (String, String) {
        self.leaf(cn, &[], Some(dns_names))
    }

    fn leaf(&self, cn: &str, orgs: &[&str], server: Option<&[&str]>) -> (String, String) {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
        p.distinguished_name.push(DnType::CommonName, cn);
        for o in orgs {
            p.distinguished_name.push(DnType::OrganizationName, *o);
        }
        if let Some(names) = server {
            p.subject_alt_names = names
                .iter()
                .map(|n| SanType::DnsName((*n).try_into().expect("dns")))
                .chain([SanType::IpAddress("127.0.0.1".parse().expect("ip"))])
                .collect();
            p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        } else {
            p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        }
        let issuer = Issuer::from_ca_cert_pem(
            &self.cert_pem,
            KeyPair::from_pem(&self.key.serialize_pem()).expect("ca key"),
        )
        .expect("issuer");
        let cert = p.signed_by(&key, &issuer).expect("leaf");
        (cert.pem(), key.serialize_pem())
    }
}
