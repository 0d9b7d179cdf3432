//! Certificates kapi makes for itself on first start, like kubeadm's `certs`
//! phase, and reuses after: regenerated only when missing, expired, not
//! issued by the current CA, or (for the serving certificate) when the names
//! it must carry changed.

mod kubeconfig;

pub use kubeconfig::{server_url, write_admin_kubeconfig, write_client_kubeconfig};

use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use time::{Duration, OffsetDateTime};

const CA_VALIDITY_DAYS: i64 = 3650;
const LEAF_VALIDITY_DAYS: i64 = 365;
/// A leaf this close to expiry is renewed at start.
const RENEW_BEFORE_DAYS: i64 = 7;

/// The cause is part of each message (and so not a `source`, which
/// error chains would print a second time).
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("generating {what}: {error}")]
    Generate {
        what: &'static str,
        error: rcgen::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PkiError + '_ {
    move |error| PkiError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// A certificate and key as PEM, with the files they live in.
#[derive(Debug, Clone)]
pub struct CertKey {
    pub cert_pem: String,
    pub key_pem: String,
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
}

/// What happened to each file at start, for the start-up log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Reused,
    Generated,
}

/// The whole set of credentials a kapi serves with.
#[derive(Debug, Clone)]
pub struct Pki {
    pub ca: CertKey,
    pub serving: CertKey,
    pub admin: CertKey,
    pub front_proxy_ca: CertKey,
    pub front_proxy_client: CertKey,
    /// ServiceAccount token signing key (PKCS#8 PEM) and its public key.
    pub service_account_key_pem: String,
    pub service_account_pub_pem: String,
    pub generated: Vec<&'static str>,
}

/// Names the serving certificate must carry.
#[derive(Debug, Clone)]
pub struct ServingNames {
    pub dns: Vec<String>,
    pub ips: Vec<IpAddr>,
}

impl ServingNames {
    /// kube-apiserver's set: loopback names, the advertise address, the first
    /// service IP and the in-cluster names of the `kubernetes` Service.
    pub fn standard(advertise: IpAddr, first_service_ip: IpAddr) -> Self {
        let dns = [
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut ips = vec![
            IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            advertise,
            first_service_ip,
        ];
        ips.sort();
        ips.dedup();
        ServingNames { dns, ips }
    }

    fn san_strings(&self) -> Vec<String> {
        let mut all: Vec<String> = self.dns.clone();
        all.extend(self.ips.iter().map(|ip| ip.to_string()));
        all.sort();
        all.dedup();
        all
    }
}

fn dn(cn: &str, orgs: &[&str]) -> DistinguishedName {
    let mut d = DistinguishedName::new();
    for o in orgs {
        d.push(DnType::OrganizationName, *o);
    }
    d.push(DnType::CommonName, cn);
    d
}

fn validity(params: &mut CertificateParams, days: i64) {
    let now = OffsetDateTime::now_utc();
    // Tolerate clocks a little behind ours.
    params.not_before = now - Duration::minutes(5);
    params.not_after = now + Duration::days(days);
}

fn ca_params(cn: &str) -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name = dn(cn, &[]);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut p, CA_VALIDITY_DAYS);
    p
}

fn client_params(cn: &str, orgs: &[&str]) -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name = dn(cn, orgs);
    p.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    validity(&mut p, LEAF_VALIDITY_DAYS);
    p
}

fn serving_params(names: &ServingNames) -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name = dn("kube-apiserver", &[]);
    p.subject_alt_names = names
        .dns
        .iter()
        .filter_map(|d| d.clone().try_into().ok().map(SanType::DnsName))
        .chain(names.ips.iter().map(|ip| SanType::IpAddress(*ip)))
        .collect();
    p.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    validity(&mut p, LEAF_VALIDITY_DAYS);
    p
}

/// Writes `data` atomically; keys get mode 0600 from the moment they exist.
fn write_file(path: &Path, data: &str, private: bool) -> Result<(), PkiError> {
    write_file_with(path, data, private, true)
}

/// [`write_file`]; without `durable` the data is not flushed to disk
/// before the rename (files thrown away with their process).
fn write_file_with(path: &Path, data: &str, private: bool, durable: bool) -> Result<(), PkiError> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let tmp = path.with_extension("tmp");
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(if private { 0o600 } else { 0o644 })
        .open(&tmp)
        .map_err(io_err(&tmp))?;
    f.write_all(data.as_bytes()).map_err(io_err(&tmp))?;
    if durable {
        f.sync_all().map_err(io_err(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(io_err(path))
}

fn read_pair(dir: &Path, name: &str) -> Option<(String, String)> {
    let cert = fs::read_to_string(dir.join(format!("{name}.crt"))).ok()?;
    let key = fs::read_to_string(dir.join(format!("{name}.key"))).ok()?;
    Some((cert, key))
}

/// The parsed facts about a stored certificate that decide reuse.
struct Parsed {
    not_after: i64,
    sans: Vec<String>,
    der: Vec<u8>,
}

fn parse_cert(pem_text: &str) -> Option<Parsed> {
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem_text.as_bytes()).ok()?;
    let (_, cert) = x509_parser::parse_x509_certificate(&pem.contents).ok()?;
    let mut sans = Vec::new();
    if let Ok(Some(ext)) = cert.subject_alternative_name() {
        for name in &ext.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(d) => sans.push(d.to_string()),
                x509_parser::extensions::GeneralName::IPAddress(b) => {
                    let ip = match b.len() {
                        4 => <[u8; 4]>::try_from(*b).ok().map(IpAddr::from),
                        16 => <[u8; 16]>::try_from(*b).ok().map(IpAddr::from),
                        _ => None,
                    };
                    if let Some(ip) = ip {
                        sans.push(ip.to_string());
                    }
                }
                _ => {}
            }
        }
    }
    sans.sort();
    sans.dedup();
    Some(Parsed {
        not_after: cert.validity().not_after.timestamp(),
        sans,
        der: pem.contents.clone(),
    })
}

fn signed_by(leaf_der: &[u8], ca_pem: &str) -> bool {
    let Ok((_, ca_pem)) = x509_parser::pem::parse_x509_pem(ca_pem.as_bytes()) else {
        return false;
    };
    let Ok((_, ca)) = x509_parser::parse_x509_certificate(&ca_pem.contents) else {
        return false;
    };
    let Ok((_, leaf)) = x509_parser::parse_x509_certificate(leaf_der) else {
        return false;
    };
    leaf.verify_signature(Some(ca.public_key())).is_ok()
}

fn still_valid(p: &Parsed, margin_days: i64) -> bool {
    p.not_after > (OffsetDateTime::now_utc() + Duration::days(margin_days)).unix_timestamp()
}

struct Store<'a> {
    dir: &'a Path,
    generated: Vec<&'static str>,
    durable: bool,
}

impl Store<'_> {
    fn paths(&self, name: &str) -> (PathBuf, PathBuf) {
        (
            self.dir.join(format!("{name}.crt")),
            self.dir.join(format!("{name}.key")),
        )
    }

    fn save(
        &mut self,
        name: &'static str,
        cert_pem: String,
        key_pem: String,
    ) -> Result<CertKey, PkiError> {
        let (cert_path, key_path) = self.paths(name);
        write_file_with(&key_path, &key_pem, true, self.durable)?;
        write_file_with(&cert_path, &cert_pem, false, self.durable)?;
        self.generated.push(name);
        Ok(CertKey {
            cert_pem,
            key_pem,
            cert_path,
            key_path,
        })
    }

    fn ca(&mut self, name: &'static str, cn: &str) -> Result<(CertKey, Outcome), PkiError> {
        if let Some((cert, key)) = read_pair(self.dir, name) {
            if let Some(p) = parse_cert(&cert) {
                if still_valid(&p, RENEW_BEFORE_DAYS) && KeyPair::from_pem(&key).is_ok() {
                    let (cert_path, key_path) = self.paths(name);
                    return Ok((
                        CertKey {
                            cert_pem: cert,
                            key_pem: key,
                            cert_path,
                            key_path,
                        },
                        Outcome::Reused,
                    ));
                }
            }
        }
        let key = KeyPair::generate().map_err(|error| PkiError::Generate { what: name, error })?;
        let cert = ca_params(cn)
            .self_signed(&key)
            .map_err(|error| PkiError::Generate { what: name, error })?;
        Ok((
            self.save(name, cert.pem(), key.serialize_pem())?,
            Outcome::Generated,
        ))
    }

    fn leaf(
        &mut self,
        name: &'static str,
        ca: &CertKey,
        params: CertificateParams,
        want_sans: Option<Vec<String>>,
    ) -> Result<CertKey, PkiError> {
        if let Some((cert, key)) = read_pair(self.dir, name) {
            if let Some(p) = parse_cert(&cert) {
                let names_ok = want_sans.as_ref().is_none_or(|w| *w == p.sans);
                if names_ok
                    && still_valid(&p, RENEW_BEFORE_DAYS)
                    && signed_by(&p.der, &ca.cert_pem)
                    && KeyPair::from_pem(&key).is_ok()
                {
                    let (cert_path, key_path) = self.paths(name);
                    return Ok(CertKey {
                        cert_pem: cert,
                        key_pem: key,
                        cert_path,
                        key_path,
                    });
                }
            }
        }
        let gen = |error| PkiError::Generate { what: name, error };
        let ca_key = KeyPair::from_pem(&ca.key_pem).map_err(gen)?;
        let issuer = Issuer::from_ca_cert_pem(&ca.cert_pem, ca_key).map_err(gen)?;
        let key = KeyPair::generate().map_err(gen)?;
        let cert = params.signed_by(&key, &issuer).map_err(gen)?;
        self.save(name, cert.pem(), key.serialize_pem())
    }
}

/// A client certificate for user `cn` in groups `orgs`, signed by the CA
/// given as PEM: (certificate, key).
pub fn client_certificate(
    ca_cert_pem: &str,
    ca_key_pem: &str,
    cn: &str,
    orgs: &[&str],
) -> Result<(String, String), PkiError> {
    let gen = |error| PkiError::Generate {
        what: "client certificate",
        error,
    };
    let ca_key = KeyPair::from_pem(ca_key_pem).map_err(gen)?;
    let issuer = Issuer::from_ca_cert_pem(ca_cert_pem, ca_key).map_err(gen)?;
    let key = KeyPair::generate().map_err(gen)?;
    let cert = client_params(cn, orgs)
        .signed_by(&key, &issuer)
        .map_err(gen)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// A CA and a serving certificate it signs for `names`, kept in `dir` as
/// `<ca>.crt/.key` and `<name>.crt/.key` and reused while valid (for
/// servers other than kapi: the sample aggregated API server).
pub fn ensure_ca_and_serving(
    dir: &Path,
    ca: &'static str,
    ca_cn: &str,
    name: &'static str,
    names: &ServingNames,
) -> Result<(CertKey, CertKey), PkiError> {
    let mut store = Store {
        dir,
        generated: Vec::new(),
        durable: true,
    };
    let (ca, _) = store.ca(ca, ca_cn)?;
    let mut params = serving_params(names);
    params.distinguished_name = dn(name, &[]);
    let serving = store.leaf(name, &ca, params, Some(names.san_strings()))?;
    Ok((ca, serving))
}

impl Pki {
    /// Loads what is in `dir` and makes whatever is missing or stale.
    pub fn ensure(dir: &Path, names: &ServingNames) -> Result<Pki, PkiError> {
        Pki::ensure_with(dir, names, true)
    }

    /// [`Pki::ensure`]; without `durable` new files are not flushed to disk
    /// (a `kapi::testing` server's, removed with it).
    pub fn ensure_with(dir: &Path, names: &ServingNames, durable: bool) -> Result<Pki, PkiError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut store = Store {
            dir,
            generated: Vec::new(),
            durable,
        };
        let (ca, _) = store.ca("ca", "kapi-ca")?;
        let serving = store.leaf(
            "apiserver",
            &ca,
            serving_params(names),
            Some(names.san_strings()),
        )?;
        let admin = store.leaf(
            "admin",
            &ca,
            client_params("kubernetes-admin", &["system:masters"]),
            None,
        )?;
        let (front_proxy_ca, _) = store.ca("front-proxy-ca", "kapi-front-proxy-ca")?;
        let front_proxy_client = store.leaf(
            "front-proxy-client",
            &front_proxy_ca,
            client_params("front-proxy-client", &[]),
            None,
        )?;
        let (sa_key, sa_pub) = service_account_key(&mut store)?;
        Ok(Pki {
            ca,
            serving,
            admin,
            front_proxy_ca,
            front_proxy_client,
            service_account_key_pem: sa_key,
            service_account_pub_pem: sa_pub,
            generated: store.generated,
        })
    }
}

/// The ServiceAccount token signing key, `sa.key` and `sa.pub` as kubeadm names them.
fn service_account_key(store: &mut Store<'_>) -> Result<(String, String), PkiError> {
    let key_path = store.dir.join("sa.key");
    let pub_path = store.dir.join("sa.pub");
    if let Ok(pem) = fs::read_to_string(&key_path) {
        match KeyPair::from_pem(&pem) {
            Ok(kp) => {
                let public = kp.public_key_pem();
                if fs::read_to_string(&pub_path).ok().as_deref() != Some(public.as_str()) {
                    write_file_with(&pub_path, &public, false, store.durable)?;
                }
                return Ok((pem, public));
            }
            Err(e) => {
                return Err(PkiError::Invalid {
                    path: key_path,
                    message: format!(
                        "not a usable private key ({e}); remove it to let kapi make a new one"
                    ),
                })
            }
        }
    }
    let key = KeyPair::generate().map_err(|error| PkiError::Generate { what: "sa", error })?;
    let (private, public) = (key.serialize_pem(), key.public_key_pem());
    write_file_with(&key_path, &private, true, store.durable)?;
    write_file_with(&pub_path, &public, false, store.durable)?;
    store.generated.push("sa");
    Ok((private, public))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn names(ip: [u8; 4]) -> ServingNames {
        ServingNames::standard(
            IpAddr::V4(Ipv4Addr::from(ip)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        )
    }

    #[test]
    fn reuses_then_regenerates_on_name_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Pki::ensure(dir.path(), &names([127, 0, 0, 1])).expect("first");
        assert!(first.generated.contains(&"apiserver"));
        let again = Pki::ensure(dir.path(), &names([127, 0, 0, 1])).expect("again");
        assert!(
            again.generated.is_empty(),
            "nothing to regenerate: {:?}",
            again.generated
        );
        assert_eq!(again.serving.cert_pem, first.serving.cert_pem);
        let changed = Pki::ensure(dir.path(), &names([192, 0, 2, 7])).expect("changed");
        assert_eq!(changed.generated, vec!["apiserver"]);
        assert_eq!(changed.ca.cert_pem, first.ca.cert_pem);
        let sans = parse_cert(&changed.serving.cert_pem).expect("parse").sans;
        assert!(sans.contains(&"192.0.2.7".to_string()), "{sans:?}");
        assert!(sans.contains(&"kubernetes.default.svc.cluster.local".to_string()));
    }

    #[test]
    fn keys_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        Pki::ensure(dir.path(), &names([127, 0, 0, 1])).expect("ensure");
        for key in [
            "ca.key",
            "apiserver.key",
            "admin.key",
            "front-proxy-ca.key",
            "front-proxy-client.key",
            "sa.key",
        ] {
            let mode = fs::metadata(dir.path().join(key))
                .expect(key)
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, 0o600, "{key}");
        }
    }

    #[test]
    fn new_ca_reissues_leaves() {
        let dir = tempfile::tempdir().expect("tempdir");
        Pki::ensure(dir.path(), &names([127, 0, 0, 1])).expect("first");
        fs::remove_file(dir.path().join("ca.crt")).expect("rm");
        let again = Pki::ensure(dir.path(), &names([127, 0, 0, 1])).expect("again");
        assert!(
            again.generated.contains(&"ca")
                && again.generated.contains(&"apiserver")
                && again.generated.contains(&"admin")
        );
    }
}
