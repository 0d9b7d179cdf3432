//! `--authentication-token-webhook-config-file`: bearer tokens no other
//! authenticator knows are sent to a remote service as a TokenReview
//! (`authentication.k8s.io`, `--authentication-token-webhook-version`,
//! v1beta1 by default as upstream), which answers who the token stands
//! for. Answers, good and bad, are cached for
//! `--authentication-token-webhook-cache-ttl` (2m), as upstream caches them,
//! so a busy client does not post one review per request.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::UserInfo;
use crate::clientcmd::{Remote, Selection};

/// upstream's webhook retry backoff: 500 ms, then half as long again.
const BACKOFF: Duration = Duration::from_millis(500);

/// Most answers kept; the oldest go first.
const CACHE_ENTRIES: usize = 4096;

/// The `authentication.k8s.io` version reviews are sent in.
pub type Version = super::ReviewVersion;

/// upstream's check of `--authentication-token-webhook-version`.
pub fn parse_version(s: &str) -> Result<Version, String> {
    Version::parse(s, "unsupported authentication webhook version")
}

type Answer = Option<UserInfo>;

pub struct TokenWebhook {
    backend: Remote,
    version: Version,
    ttl: Duration,
    /// The API server's audiences, sent with each review and required of
    /// the answer when it names audiences.
    audiences: Vec<String>,
    cache: parking_lot::Mutex<HashMap<[u8; 32], (Instant, Answer)>>,
}

impl TokenWebhook {
    pub async fn connect(
        kubeconfig: &Path,
        version: Version,
        ttl: Duration,
        audiences: Vec<String>,
    ) -> Result<Arc<TokenWebhook>, String> {
        let backend = Remote::connect(&Selection::file(kubeconfig))
            .await
            .map_err(|e| format!("--authentication-token-webhook-config-file: {}", e.0))?;
        Ok(Arc::new(TokenWebhook {
            backend,
            version,
            ttl,
            audiences,
            cache: parking_lot::Mutex::new(HashMap::new()),
        }))
    }

    /// Who `token` stands for; `None` when the webhook says it is not
    /// valid or cannot be reached (the request is then unauthorized).
    pub async fn authenticate(&self, token: &str) -> Option<UserInfo> {
        // Tokens are kept hashed: the cache holds no credential.
        let key: [u8; 32] = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes())
            .as_ref()
            .try_into()
            .ok()?;
        let now = Instant::now();
        if let Some((expires, answer)) = self.cache.lock().get(&key) {
            if *expires > now {
                return answer.clone();
            }
        }
        let review = json!({
            "apiVersion": format!("authentication.k8s.io/{}", self.version.as_str()),
            "kind": "TokenReview",
            "metadata": {"creationTimestamp": null},
            "spec": {"token": token, "audiences": self.audiences},
            "status": {"user": {}},
        });
        let answer = match self.backend.post_review(&review, BACKOFF).await {
            Ok(status) => self.user_of(&status),
            Err(e) => {
                // Not cached: the next request asks again.
                crate::warn_limited!("token-webhook", error = %e, "token webhook failed");
                return None;
            }
        };
        let mut cache = self.cache.lock();
        if cache.len() >= CACHE_ENTRIES {
            cache.retain(|_, (expires, _)| *expires > now);
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
        }
        cache.insert(key, (now + self.ttl, answer.clone()));
        answer
    }

    fn user_of(&self, status: &Value) -> Answer {
        if status["authenticated"] != true {
            if let Some(e) = status["error"].as_str().filter(|e| !e.is_empty()) {
                tracing::debug!(error = e, "token webhook refused a token");
            }
            return None;
        }
        // An answer for other audiences is no answer for this server.
        let answered: Vec<&str> = status["audiences"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !answered.is_empty()
            && !self.audiences.is_empty()
            && !answered
                .iter()
                .any(|a| self.audiences.iter().any(|b| b == a))
        {
            return None;
        }
        let user = &status["user"];
        let strings = crate::registry::helpers::strings;
        Some(UserInfo {
            name: user["username"].as_str().unwrap_or_default().to_string(),
            uid: user["uid"].as_str().unwrap_or_default().to_string(),
            groups: strings(&user["groups"]),
            extra: user["extra"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
                .unwrap_or_default(),
        })
    }
}
