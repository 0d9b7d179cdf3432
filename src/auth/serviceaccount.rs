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

/// Issues and verifies ServiceAccount tokens with the `sa.key` pair.
pub struct TokenIssuer {
    encoding: EncodingKey,
    decoding: DecodingKey,
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
    pub fn new(
        private_pem: &str,
        public_pem: &str,
        issuer: String,
        api_audiences: Vec<String>,
    ) -> Result<Self, String> {
        let encoding = EncodingKey::from_ec_pem(private_pem.as_bytes())
            .map_err(|e| format!("service account signing key: {e}"))?;
        let decoding = DecodingKey::from_ec_pem(public_pem.as_bytes())
            .map_err(|e| format!("service account public key: {e}"))?;
        use sha2::Digest;
        let key_id = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            sha2::Sha256::digest(public_pem.as_bytes()),
        );
        let api_audiences = if api_audiences.is_empty() {
            vec![issuer.clone()]
        } else {
            api_audiences
        };
        Ok(TokenIssuer {
            encoding,
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
        let mut header = Header::new(Algorithm::ES256);
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
        let mut v = Validation::new(Algorithm::ES256);
        v.set_issuer(&[self.issuer.as_str()]);
        v.set_audience(audiences);
        v.leeway = 0;
        Some(
            jsonwebtoken::decode::<Claims>(token, &self.decoding, &v)
                .map(|d| d.claims)
                .map_err(|e| e.to_string()),
        )
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
