//! ServiceAccount tokens: signed JWTs issued through TokenRequest
//! (`serviceaccounts/<name>/token`) and accepted by the authenticator, with
//! upstream's claims, issuer and audience checks, expiry, and the bound
//! object (the ServiceAccount, and a Pod or Secret when bound) still
//! existing with the same uid.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::UserInfo;
use crate::registry::Registries;

pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// TokenRequest's default lifetime, as upstream (1h).
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// Shortest lifetime a TokenRequest may ask for.
pub const MIN_EXPIRATION_SECONDS: i64 = 600;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ref {
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KubernetesClaims {
    pub namespace: String,
    pub serviceaccount: Ref,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pod: Option<Ref>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub secret: Option<Ref>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    pub aud: Vec<String>,
    pub exp: i64,
    pub iat: i64,
    pub nbf: i64,
    pub jti: String,
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
}

/// Issues ServiceAccount tokens with one private key (`sa.key`, or
/// `--service-account-signing-key-file`) and verifies them with any of the
/// public keys (`--service-account-key-file`), as upstream does.
pub struct TokenIssuer {
    encoding: EncodingKey,
    algorithm: Algorithm,
    decoding: Vec<(Algorithm, DecodingKey)>,
    pub issuer: String,
    /// Audiences the API server accepts (`--api-audiences`, default: the issuer).
    pub api_audiences: Vec<String>,
    key_id: String,
}

impl std::fmt::Debug for TokenIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenIssuer")
            .field("issuer", &self.issuer)
            .finish()
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// What a bound token is bound to.
#[derive(Debug, Clone)]
pub struct Binding {
    pub kind: String,
    pub name: String,
    pub uid: String,
}

impl TokenIssuer {
    /// `private_pem` signs; each PEM in `verify_pems` (public keys,
    /// certificates or private keys; RSA or ECDSA P-256) verifies.
    pub fn new(
        private_pem: &str,
        verify_pems: &[String],
        issuer: String,
        api_audiences: Vec<String>,
    ) -> Result<Self, String> {
        let (algorithm, encoding) =
            signing_key(private_pem).map_err(|e| format!("service account signing key: {e}"))?;
        let mut decoding = Vec::new();
        for pem in verify_pems {
            decoding
                .extend(verification_keys(pem).map_err(|e| format!("service account key: {e}"))?);
        }
        if decoding.is_empty() {
            return Err("service account key: no public key to verify tokens with".into());
        }
        // As upstream: the kid is the SHA-256 of the public key's DER.
        use sha2::Digest;
        let key_id = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            sha2::Sha256::digest(public_der_of(private_pem).unwrap_or_default()),
        );
        let api_audiences = if api_audiences.is_empty() {
            vec![issuer.clone()]
        } else {
            api_audiences
        };
        Ok(TokenIssuer {
            encoding,
            algorithm,
            decoding,
            issuer,
            api_audiences,
            key_id,
        })
    }

    /// A token for `namespace/name` (uid `uid`), valid for `seconds`.
    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: &[String],
        seconds: i64,
        bound: Option<&Binding>,
    ) -> Result<(String, i64), String> {
        let iat = now();
        let exp = iat + seconds;
        let aud = if audiences.is_empty() {
            self.api_audiences.clone()
        } else {
            audiences.to_vec()
        };
        let mut k = KubernetesClaims {
            namespace: namespace.to_string(),
            serviceaccount: Ref {
                name: name.to_string(),
                uid: uid.to_string(),
            },
            pod: None,
            secret: None,
        };
        match bound {
            Some(b) if b.kind == "Pod" => {
                k.pod = Some(Ref {
                    name: b.name.clone(),
                    uid: b.uid.clone(),
                })
            }
            Some(b) if b.kind == "Secret" => {
                k.secret = Some(Ref {
                    name: b.name.clone(),
                    uid: b.uid.clone(),
                })
            }
            _ => {}
        }
        let claims = Claims {
            iss: self.issuer.clone(),
            sub: format!("system:serviceaccount:{namespace}:{name}"),
            aud,
            exp,
            iat,
            nbf: iat,
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes: k,
        };
        let mut header = Header::new(self.algorithm);
        header.kid = Some(self.key_id.clone());
        let token =
            jsonwebtoken::encode(&header, &claims, &self.encoding).map_err(|e| e.to_string())?;
        Ok((token, exp))
    }

    /// Verifies signature, issuer, audience and expiry; None when the token is not ours.
    pub fn verify(&self, token: &str) -> Option<Result<Claims, String>> {
        self.verify_for(token, &self.api_audiences)
    }

    /// [`Self::verify`] for other target audiences (a TokenReview's).
    pub fn verify_for(&self, token: &str, audiences: &[String]) -> Option<Result<Claims, String>> {
        // Only JWTs with our issuer are ours to judge.
        let payload = token.split('.').nth(1)?;
        let raw = base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            payload.trim_end_matches('='),
        )
        .ok()?;
        let peek: Value = serde_json::from_slice(&raw).ok()?;
        if peek["iss"].as_str() != Some(self.issuer.as_str()) {
            return None;
        }
        let alg = jsonwebtoken::decode_header(token).map(|h| h.alg);
        let mut last =
            Err("token signed with an algorithm no service account key verifies".to_string());
        for (key_alg, key) in &self.decoding {
            if alg.as_ref().is_ok_and(|a| a != key_alg) {
                continue;
            }
            let mut v = Validation::new(*key_alg);
            v.set_issuer(&[self.issuer.as_str()]);
            v.set_audience(audiences);
            v.leeway = 0;
            match jsonwebtoken::decode::<Claims>(token, key, &v) {
                Ok(d) => return Some(Ok(d.claims)),
                Err(e) => last = Err(e.to_string()),
            }
        }
        Some(last)
    }
}

/// The PEM blocks of a file: (label, DER).
fn pem_blocks(pem: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut rest = pem;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let label_end = after.find("-----").ok_or("a PEM header is not closed")?;
        let label = after[..label_end].to_string();
        let body_start = &after[label_end + 5..];
        let end_marker = format!("-----END {label}-----");
        let end = body_start
            .find(&end_marker)
            .ok_or_else(|| format!("no END line for {label}"))?;
        let b64: String = body_start[..end].split_whitespace().collect();
        let der = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64)
            .map_err(|e| format!("{label}: {e}"))?;
        out.push((label, der));
        rest = &body_start[end + end_marker.len()..];
    }
    Ok(out)
}

fn pem_of(label: &str, der: &[u8]) -> String {
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// The signing algorithm and key of a private key PEM: ES256 for ECDSA
/// P-256, RS256 for RSA (PKCS#1 or PKCS#8), as upstream signs with them.
fn signing_key(pem: &str) -> Result<(Algorithm, EncodingKey), String> {
    let label = pem_blocks(pem)?
        .into_iter()
        .map(|(l, _)| l)
        .find(|l| l.ends_with("PRIVATE KEY"))
        .ok_or("no PRIVATE KEY block")?;
    if label == "RSA PRIVATE KEY" {
        return EncodingKey::from_rsa_pem(pem.as_bytes())
            .map(|k| (Algorithm::RS256, k))
            .map_err(|e| e.to_string());
    }
    EncodingKey::from_ec_pem(pem.as_bytes())
        .map(|k| (Algorithm::ES256, k))
        .or_else(|_| EncodingKey::from_rsa_pem(pem.as_bytes()).map(|k| (Algorithm::RS256, k)))
        .map_err(|e| format!("{label} is neither ECDSA P-256 nor RSA: {e}"))
}

/// The public half of a private key PEM, as DER.
fn public_der_of(private_pem: &str) -> Option<Vec<u8>> {
    let (label, der) = pem_blocks(private_pem)
        .ok()?
        .into_iter()
        .find(|(l, _)| l.ends_with("PRIVATE KEY"))?;
    if label == "RSA PRIVATE KEY" {
        return rsa_public_of_pkcs1(&der).ok().map(|p| spki_of_pkcs1(&p));
    }
    let public = rcgen::KeyPair::from_pem(private_pem).ok()?.public_key_pem();
    pem_blocks(&public)
        .ok()?
        .into_iter()
        .next()
        .map(|(_, der)| der)
}

/// A public key as SubjectPublicKeyInfo PEM: either kind of key verifies.
fn public_key(spki_pem: &str) -> Result<(Algorithm, DecodingKey), String> {
    DecodingKey::from_ec_pem(spki_pem.as_bytes())
        .map(|k| (Algorithm::ES256, k))
        .or_else(|_| DecodingKey::from_rsa_pem(spki_pem.as_bytes()).map(|k| (Algorithm::RS256, k)))
        .map_err(|e| format!("not an ECDSA P-256 or RSA public key: {e}"))
}

/// Every key in a PEM file that can verify tokens: public keys,
/// certificates' keys, and the public halves of private keys.
pub fn verification_keys(pem: &str) -> Result<Vec<(Algorithm, DecodingKey)>, String> {
    let mut out = Vec::new();
    for (label, der) in pem_blocks(pem)? {
        match label.as_str() {
            "PUBLIC KEY" | "RSA PUBLIC KEY" => out.push(public_key(&pem_of(&label, &der))?),
            "CERTIFICATE" => {
                let (_, cert) = x509_parser::parse_x509_certificate(&der)
                    .map_err(|e| format!("CERTIFICATE: {e}"))?;
                out.push(public_key(&pem_of("PUBLIC KEY", cert.public_key().raw))?);
            }
            "RSA PRIVATE KEY" => {
                // PKCS#1: the public key is (n, e), the private key's first two integers.
                let spki = rsa_public_of_pkcs1(&der)?;
                out.push(public_key(&pem_of("RSA PUBLIC KEY", &spki))?);
            }
            "PRIVATE KEY" | "EC PRIVATE KEY" => {
                let kp = rcgen::KeyPair::from_pem(&pem_of(&label, &der))
                    .map_err(|e| format!("{label}: {e}"))?;
                out.push(public_key(&kp.public_key_pem())?);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Each key of a PEM file that verifies tokens, as PKIX
/// (SubjectPublicKeyInfo) DER: what upstream hashes into key ids and
/// publishes in the issuer's key set.
pub fn public_keys_spki(pem: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    for (label, der) in pem_blocks(pem)? {
        match label.as_str() {
            "PUBLIC KEY" => out.push(der),
            "RSA PUBLIC KEY" => out.push(spki_of_pkcs1(&der)),
            "CERTIFICATE" => {
                let (_, cert) = x509_parser::parse_x509_certificate(&der)
                    .map_err(|e| format!("CERTIFICATE: {e}"))?;
                out.push(cert.public_key().raw.to_vec());
            }
            "RSA PRIVATE KEY" => out.push(spki_of_pkcs1(&rsa_public_of_pkcs1(&der)?)),
            "PRIVATE KEY" | "EC PRIVATE KEY" => {
                let kp = rcgen::KeyPair::from_pem(&pem_of(&label, &der))
                    .map_err(|e| format!("{label}: {e}"))?;
                let public = pem_blocks(&kp.public_key_pem())?;
                out.extend(public.into_iter().map(|(_, der)| der));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A PKCS#1 RSAPublicKey wrapped as PKIX: the rsaEncryption algorithm and
/// the key in a BIT STRING (Go's MarshalPKIXPublicKey).
fn spki_of_pkcs1(pkcs1: &[u8]) -> Vec<u8> {
    const RSA_ALGORITHM: [u8; 15] = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    let mut bits = vec![0x03];
    push_len(&mut bits, pkcs1.len() + 1);
    bits.push(0);
    bits.extend_from_slice(pkcs1);
    let mut out = vec![0x30];
    push_len(&mut out, RSA_ALGORITHM.len() + bits.len());
    out.extend_from_slice(&RSA_ALGORITHM);
    out.extend(bits);
    out
}

/// One DER element: (tag, contents, what follows).
fn der_tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize);
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The `RSAPublicKey` (PKCS#1) inside an `RSAPrivateKey`: a SEQUENCE of
/// the modulus and public exponent, read from the private key's fields.
fn rsa_public_of_pkcs1(der: &[u8]) -> Result<Vec<u8>, String> {
    let bad = || "RSA PRIVATE KEY is not PKCS#1".to_string();
    let (_, seq, _) = der_tlv(der)
        .filter(|(t, _, _)| *t == 0x30)
        .ok_or_else(bad)?;
    let (_, _version, rest) = der_tlv(seq).ok_or_else(bad)?;
    let (_, n, rest) = der_tlv(rest)
        .filter(|(t, _, _)| *t == 0x02)
        .ok_or_else(bad)?;
    let (_, e, _) = der_tlv(rest)
        .filter(|(t, _, _)| *t == 0x02)
        .ok_or_else(bad)?;
    let mut body = Vec::new();
    for int in [n, e] {
        body.push(0x02);
        push_len(&mut body, int.len());
        body.extend_from_slice(int);
    }
    let mut out = vec![0x30];
    push_len(&mut out, body.len());
    out.extend(body);
    Ok(out)
}

fn push_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
}

/// The `aud` claim of a token, read without verifying it: only for telling
/// a client which audiences its (otherwise valid) token was made for.
pub fn unverified_audiences(token: &str) -> Vec<String> {
    token
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::Engine::decode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                p.trim_end_matches('='),
            )
            .ok()
        })
        .and_then(|raw| serde_json::from_slice::<Value>(&raw).ok())
        .map(|v| match &v["aud"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        })
        .unwrap_or_default()
}

/// Checks that the objects a token names still exist with the same uid,
/// and returns the user it stands for.
pub async fn authenticate(registries: &Registries, claims: &Claims) -> Result<UserInfo, String> {
    let k = &claims.kubernetes;
    let lookup = |plural: &'static str, name: String| async move {
        let reg = registries
            .get("", "v1", plural)
            .ok_or_else(|| format!("{plural} are not served"))?;
        let bytes = reg
            .get_object(&k.namespace, &name, None)
            .await
            .map_err(|_| format!("{plural} \"{name}\" not found"))?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        Ok::<String, String>(v["metadata"]["uid"].as_str().unwrap_or("").to_string())
    };
    let sa_uid = lookup("serviceaccounts", k.serviceaccount.name.clone()).await?;
    if sa_uid != k.serviceaccount.uid {
        return Err(format!(
            "service account UID ({}) does not match claim ({})",
            sa_uid, k.serviceaccount.uid
        ));
    }
    if let Some(p) = &k.pod {
        let uid = lookup("pods", p.name.clone()).await?;
        if uid != p.uid {
            return Err(format!("pod UID ({uid}) does not match claim ({})", p.uid));
        }
    }
    if let Some(s) = &k.secret {
        let uid = lookup("secrets", s.name.clone()).await?;
        if uid != s.uid {
            return Err(format!(
                "secret UID ({uid}) does not match claim ({})",
                s.uid
            ));
        }
    }
    let mut extra = BTreeMap::new();
    extra.insert(
        "authentication.kubernetes.io/credential-id".to_string(),
        vec![format!("JTI={}", claims.jti)],
    );
    if let Some(p) = &k.pod {
        extra.insert(
            "authentication.kubernetes.io/pod-name".to_string(),
            vec![p.name.clone()],
        );
        extra.insert(
            "authentication.kubernetes.io/pod-uid".to_string(),
            vec![p.uid.clone()],
        );
    }
    Ok(UserInfo {
        name: claims.sub.clone(),
        uid: k.serviceaccount.uid.clone(),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{}", k.namespace),
        ],
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue_and_verify(private: &str, verify: &[String]) -> Result<Claims, String> {
        let issuer = TokenIssuer::new(private, verify, "https://issuer".into(), vec![])?;
        let (token, _) = issuer.issue("ns", "sa", "uid-1", &[], 600, None)?;
        issuer.verify(&token).ok_or("not ours")?
    }

    #[test]
    fn ecdsa_and_rsa_keys_sign_and_verify_in_every_pem_form() {
        for alg in [&rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_RSA_SHA256] {
            let key = rcgen::KeyPair::generate_for(alg).expect("key");
            let private = key.serialize_pem();
            let cert = rcgen::CertificateParams::new(vec!["sa".into()])
                .expect("params")
                .self_signed(&key)
                .expect("cert")
                .pem();
            for verify in [key.public_key_pem(), cert, private.clone()] {
                let claims = issue_and_verify(&private, std::slice::from_ref(&verify))
                    .unwrap_or_else(|e| panic!("{alg:?} with {verify}: {e}"));
                assert_eq!(claims.sub, "system:serviceaccount:ns:sa");
            }
        }
    }

    #[test]
    fn pkcs1_rsa_private_keys_sign_and_verify() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).expect("key");
        // PKCS#8 wraps the PKCS#1 key in its last OCTET STRING.
        let pkcs8 = key.serialize_der();
        let (_, info, _) = der_tlv(&pkcs8).expect("PrivateKeyInfo");
        let (_, _, rest) = der_tlv(info).expect("version");
        let (_, _, rest) = der_tlv(rest).expect("algorithm");
        let (tag, pkcs1, _) = der_tlv(rest).expect("privateKey");
        assert_eq!(tag, 0x04);
        let private = pem_of("RSA PRIVATE KEY", pkcs1);
        for verify in [private.clone(), key.public_key_pem()] {
            issue_and_verify(&private, &[verify]).expect("PKCS#1 key");
        }
    }

    #[test]
    fn a_token_from_another_key_is_refused() {
        let ours = rcgen::KeyPair::generate().expect("key");
        let theirs = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).expect("key");
        let signer = TokenIssuer::new(
            &theirs.serialize_pem(),
            &[theirs.public_key_pem()],
            "https://issuer".into(),
            vec![],
        )
        .expect("issuer");
        let (token, _) = signer
            .issue("ns", "sa", "u", &[], 600, None)
            .expect("token");
        let verifier = TokenIssuer::new(
            &ours.serialize_pem(),
            &[ours.public_key_pem()],
            "https://issuer".into(),
            vec![],
        )
        .expect("issuer");
        assert!(matches!(verifier.verify(&token), Some(Err(_))));
    }
}
