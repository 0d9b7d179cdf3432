//! Issue 24: `--tls-min-version` and `--tls-cipher-suites` with Go's names,
//! as kube-apiserver takes them: the handshake offers only what they allow;
//! `--tls-sni-cert-key` serves another certificate for the names it covers.

mod common;

use std::sync::Arc;

use common::rawtls::connect_with;
use common::Kapi;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// A client offering only `versions` and (when given) `suites`.
fn client(
    k: &Kapi,
    versions: &[&'static rustls::SupportedProtocolVersion],
    suites: Option<&[rustls::CipherSuite]>,
) -> Arc<rustls::ClientConfig> {
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    if let Some(suites) = suites {
        provider
            .cipher_suites
            .retain(|s| suites.contains(&s.suite()));
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(k.pki("ca.crt").as_bytes()) {
        roots.add(cert.expect("ca.crt PEM")).expect("add kapi CA");
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(versions)
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

const TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];
const TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

#[test]
fn tls_min_version_13_refuses_tls_12() {
    let k = Kapi::start(&["--tls-min-version=VersionTLS13"]);
    common::runtime().block_on(async {
        assert!(connect_with(&k, client(&k, TLS12, None)).await.is_err());
        let s = connect_with(&k, client(&k, TLS13, None))
            .await
            .expect("TLS 1.3");
        assert_eq!(
            s.get_ref().1.protocol_version(),
            Some(rustls::ProtocolVersion::TLSv1_3)
        );
    });
}

#[test]
fn tls_cipher_suites_limit_what_tls_12_negotiates() {
    // kapi's serving key is ECDSA: its suites are the ECDSA ones.
    let allowed = rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384;
    let other = rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    let k = Kapi::start(&[&format!(
        "--tls-cipher-suites={allowed:?},TLS_AES_128_GCM_SHA256"
    )]);
    common::runtime().block_on(async {
        let s = connect_with(&k, client(&k, TLS12, None))
            .await
            .expect("TLS 1.2");
        let suite = s.get_ref().1.negotiated_cipher_suite().map(|s| s.suite());
        assert_eq!(suite, Some(allowed));
        assert!(connect_with(&k, client(&k, TLS12, Some(&[other])))
            .await
            .is_err());
        // TLS 1.3 suites are not configurable, as in Go.
        assert!(connect_with(&k, client(&k, TLS13, None)).await.is_ok());
    });
}

/// Go's crypto/tls (kube-apiserver's TLS) picks the suite by its own
/// order, AES-128-GCM first where the CPU has AES instructions, whatever
/// the client lists first; rustls's client lists AES-256 first.
#[test]
fn the_server_prefers_aes_128_gcm_as_go_does() {
    use rustls::CipherSuite as S;
    let k = Kapi::start(&[]);
    common::runtime().block_on(async {
        for (versions, suites, want) in [
            (TLS13, None, S::TLS13_AES_128_GCM_SHA256),
            (TLS12, None, S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
            // What the client alone offers is still what it gets.
            (
                TLS13,
                Some(&[S::TLS13_AES_256_GCM_SHA384][..]),
                S::TLS13_AES_256_GCM_SHA384,
            ),
            (
                TLS13,
                Some(&[S::TLS13_CHACHA20_POLY1305_SHA256][..]),
                S::TLS13_CHACHA20_POLY1305_SHA256,
            ),
        ] {
            let offered = client(&k, versions, suites);
            let first = offered.crypto_provider().cipher_suites[0].suite();
            let s = connect_with(&k, offered)
                .await
                .unwrap_or_else(|e| panic!("{want:?}: {e}"));
            let got = s.get_ref().1.negotiated_cipher_suite().map(|s| s.suite());
            assert_eq!(got, Some(want), "client listing {first:?} first");
        }
    });
}

#[test]
fn unknown_versions_and_suites_are_refused_with_upstreams_words() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (flag, want) in [
        (
            "--tls-min-version=VersionTLS99",
            "unknown tls version \"VersionTLS99\"",
        ),
        (
            "--tls-cipher-suites=TLS_NOPE",
            "Cipher suite TLS_NOPE not supported or doesn't exist",
        ),
        (
            "--tls-min-version=VersionTLS10",
            "speaks TLS 1.2 and 1.3 only",
        ),
        (
            "--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA",
            "has only AEAD suites",
        ),
    ] {
        let out = std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(tmp.path())
            .arg(flag)
            .output()
            .expect("run kapi");
        assert!(!out.status.success(), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{flag}: {err}");
    }
    let out = std::process::Command::new(common::kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(tmp.path())
        .args([
            "--tls-min-version=VersionTLS13",
            "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        ])
        .output()
        .expect("run kapi");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cipher suites may not be specified when --tls-min-version is 'VersionTLS13'"),
        "{err}"
    );
}

#[test]
fn sni_picks_the_certificate_of_the_name_asked_for() {
    let dir = tempfile::tempdir().expect("tmp");
    let ca = common::pki::Ca::new("sni-ca");
    let write = |name: &str, pem: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, pem).expect("write");
        p.display().to_string()
    };
    // One pair named on the command line, one by its own names.
    let (api_crt, api_key) = ca.serving_for("api", &["api.example.test"]);
    let (wild_crt, wild_key) = ca.serving_for("wild", &["*.apps.example.test"]);
    let k = Kapi::start(&[
        &format!(
            "--tls-sni-cert-key={},{}:api.example.test",
            write("api.crt", &api_crt),
            write("api.key", &api_key)
        ),
        &format!(
            "--tls-sni-cert-key={},{}",
            write("wild.crt", &wild_crt),
            write("wild.key", &wild_key)
        ),
    ]);
    let port: u16 = k
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let identity = format!("{}{}", k.pki("admin.crt"), k.pki("admin.key"));
    // A client that trusts only the given CA: the handshake fails unless
    // the server presents a certificate of that CA for the name.
    let get = |host: &str, ca_pem: &str| {
        let c = reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("ca")])
            .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("id"))
            .resolve(host, addr)
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .expect("client");
        let url = format!("https://{host}:{port}/version");
        async move { c.get(url).send().await.map(|r| r.status().as_u16()) }
    };
    common::runtime().block_on(async {
        assert_eq!(get("api.example.test", &ca.cert_pem).await.ok(), Some(200));
        assert_eq!(
            get("x.apps.example.test", &ca.cert_pem).await.ok(),
            Some(200)
        );
        // Anything else gets kapi's own serving certificate.
        assert!(get("localhost", &ca.cert_pem).await.is_err());
        assert_eq!(get("localhost", &k.pki("ca.crt")).await.ok(), Some(200));
        assert!(get("api.example.test", &k.pki("ca.crt")).await.is_err());
    });
    let (ok, _, err) = common::run(
        std::process::Command::new(common::kapi_bin())
            .args(["serve", "--secure-port", "0", "--data-dir"])
            .arg(dir.path().join("bad"))
            .arg("--tls-sni-cert-key=only-one-file"),
    );
    assert!(!ok);
    assert!(
        err.contains("invalid value for --tls-sni-cert-key: expected comma separated certificate and key file paths"),
        "{err}"
    );
}
