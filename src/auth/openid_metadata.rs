//! ServiceAccount issuer discovery (upstream's pkg/serviceaccount
//! openidmetadata.go and pkg/routes/openidmetadata.go): the OpenID
//! configuration at `/.well-known/openid-configuration` and the keys that
//! verify ServiceAccount tokens, as a JSON Web Key Set, at
//! `/openid/v1/jwks`, so that relying parties outside the cluster can check
//! its tokens.

use sha2::Digest;

/// Where the key set is served.
pub const JWKS_PATH: &str = "/openid/v1/jwks";
/// Where the configuration is served.
pub const CONFIGURATION_PATH: &str = "/.well-known/openid-configuration";

/// The two documents, but for the key set's address in the configuration,
/// which names the server's external address (known once it listens).
#[derive(Debug, Clone)]
pub struct OpenIdMetadata {
    issuer: String,
    /// `--service-account-jwks-uri`, if given.
    jwks_uri: Option<String>,
    /// The signing algorithms of the keys, sorted, without repeats.
    algorithms: Vec<&'static str>,
    jwks: Vec<u8>,
}

impl OpenIdMetadata {
    /// From the PEM files whose keys verify tokens. `None` when the issuer
    /// is not an https URL: upstream serves discovery only for those.
    pub fn new(issuer: &str, jwks_uri: Option<String>, verify_pems: &[String]) -> Option<Self> {
        if !issuer.starts_with("https://") {
            return None;
        }
        let mut keys = Vec::new();
        let mut algorithms = Vec::new();
        for pem in verify_pems {
            for spki in super::serviceaccount::public_keys_spki(pem).unwrap_or_default() {
                if let Some((jwk, alg)) = jwk(&spki) {
                    keys.push(jwk);
                    algorithms.push(alg);
                }
            }
        }
        algorithms.sort_unstable();
        algorithms.dedup();
        let jwks = format!("{{\"keys\":[{}]}}", keys.join(",")).into_bytes();
        Some(OpenIdMetadata {
            issuer: issuer.to_string(),
            jwks_uri,
            algorithms,
            jwks,
        })
    }

    /// The configuration, its key set at `external_address` unless
    /// `--service-account-jwks-uri` names another place.
    pub fn configuration(&self, external_address: &str) -> Vec<u8> {
        let jwks_uri = self
            .jwks_uri
            .clone()
            .unwrap_or_else(|| format!("https://{external_address}{JWKS_PATH}"));
        let doc = serde_json::json!({
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": self.algorithms,
        });
        // Go writes the struct's fields in this order.
        let order = [
            "issuer",
            "jwks_uri",
            "response_types_supported",
            "subject_types_supported",
            "id_token_signing_alg_values_supported",
        ];
        let fields: Vec<String> = order
            .iter()
            .map(|k| format!("{}:{}", serde_json::json!(k), doc[*k]))
            .collect();
        format!("{{{}}}", fields.join(",")).into_bytes()
    }

    pub fn jwks(&self) -> &[u8] {
        &self.jwks
    }
}

fn b64url(b: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, b)
}

/// One key as go-jose writes a JSONWebKey (use, kty, kid, crv, alg, then
/// the key's numbers), with upstream's key id: the SHA-256 of the key's
/// PKIX DER, base64url.
fn jwk(spki: &[u8]) -> Option<(String, &'static str)> {
    use x509_parser::prelude::FromDer;
    use x509_parser::public_key::PublicKey;
    let (_, info) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki).ok()?;
    let kid = b64url(&sha2::Sha256::digest(spki));
    let s = |v: &str| serde_json::json!(v).to_string();
    match info.parsed().ok()? {
        PublicKey::RSA(rsa) => {
            let trim = |b: &[u8]| {
                let first = b.iter().position(|&x| x != 0).unwrap_or(b.len());
                b64url(&b[first..])
            };
            Some((
                format!(
                    "{{\"use\":\"sig\",\"kty\":\"RSA\",\"kid\":{},\"alg\":\"RS256\",\"n\":{},\"e\":{}}}",
                    s(&kid),
                    s(&trim(rsa.modulus)),
                    s(&trim(rsa.exponent))
                ),
                "RS256",
            ))
        }
        PublicKey::EC(point) => {
            let data = point.data();
            // An uncompressed P-256 point: 0x04, then x and y of 32 bytes.
            if data.len() != 65 || data[0] != 4 {
                return None;
            }
            Some((
                format!(
                    "{{\"use\":\"sig\",\"kty\":\"EC\",\"kid\":{},\"crv\":\"P-256\",\"alg\":\"ES256\",\"x\":{},\"y\":{}}}",
                    s(&kid),
                    s(&b64url(&data[1..33])),
                    s(&b64url(&data[33..]))
                ),
                "ES256",
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ec_key_is_listed_with_its_key_id_and_only_https_issuers_are_served() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let pem = key.public_key_pem();
        assert!(OpenIdMetadata::new("kapi", None, std::slice::from_ref(&pem)).is_none());
        let m = OpenIdMetadata::new("https://issuer.example", None, &[pem]).expect("https");
        let jwks: serde_json::Value = serde_json::from_slice(m.jwks()).expect("json");
        let k = &jwks["keys"][0];
        assert_eq!(k["kty"], "EC");
        assert_eq!(k["alg"], "ES256");
        let spki =
            crate::auth::serviceaccount::public_keys_spki(&key.public_key_pem()).expect("spki");
        assert_eq!(k["kid"], b64url(&sha2::Sha256::digest(&spki[0])));
        assert_eq!(k["x"].as_str().map(str::len), Some(43));
        let conf = String::from_utf8(m.configuration("127.0.0.1:6443")).expect("utf8");
        assert_eq!(
            conf,
            r#"{"issuer":"https://issuer.example","jwks_uri":"https://127.0.0.1:6443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}"#
        );
    }
}
