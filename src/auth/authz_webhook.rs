//! `--authorization-mode=...,Webhook` with `--authorization-webhook-config-file`:
//! each request a mode before it had no opinion on is sent to a remote
//! service as a SubjectAccessReview (`authorization.k8s.io`,
//! `--authorization-webhook-version`, v1beta1 by default as upstream).
//! `allowed` allows, `denied` forbids at once, neither leaves it to the
//! next mode. Answers are cached: allowed ones for
//! `--authorization-webhook-cache-authorized-ttl` (5m), the others for
//! `--authorization-webhook-cache-unauthorized-ttl` (30s). A webhook that
//! cannot be reached has no opinion.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::authorizer::{Attributes, Authorizer, Decision};
use crate::clientcmd::{Remote, Selection};

const BACKOFF: Duration = Duration::from_millis(500);
const CACHE_ENTRIES: usize = 8192;

/// The `authorization.k8s.io` version reviews are sent in.
pub type Version = super::ReviewVersion;

/// upstream's check of `--authorization-webhook-version`.
pub fn parse_version(s: &str) -> Result<Version, String> {
    Version::parse(s, "unsupported authorization version")
}

/// The webhook's settings, as the flags give them.
#[derive(Debug, Clone)]
pub struct Settings {
    pub kubeconfig: std::path::PathBuf,
    pub version: Version,
    pub authorized_ttl: Duration,
    pub unauthorized_ttl: Duration,
}

pub struct WebhookAuthorizer {
    backend: Remote,
    settings: Settings,
    cache: parking_lot::Mutex<HashMap<String, (Instant, Decision)>>,
}

impl std::fmt::Debug for WebhookAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookAuthorizer")
            .field("server", &self.backend.server)
            .finish()
    }
}

impl WebhookAuthorizer {
    pub async fn connect(settings: Settings) -> Result<WebhookAuthorizer, String> {
        let backend = Remote::connect(&Selection::file(Path::new(&settings.kubeconfig)))
            .await
            .map_err(|e| format!("--authorization-webhook-config-file: {}", e.0))?;
        Ok(WebhookAuthorizer {
            backend,
            settings,
            cache: parking_lot::Mutex::new(HashMap::new()),
        })
    }

    /// The review upstream's webhook authorizer sends.
    fn review(&self, a: &Attributes<'_>) -> Value {
        let user = a.user.cloned().unwrap_or_default();
        let api_version = format!("authorization.k8s.io/{}", self.settings.version.as_str());
        // v1beta1 names the groups `group`.
        let groups_key = match self.settings.version {
            Version::V1 => "groups",
            Version::V1beta1 => "group",
        };
        let mut spec = serde_json::Map::new();
        if a.resource_request {
            spec.insert(
                "resourceAttributes".into(),
                json!({"namespace": a.namespace, "verb": a.verb, "group": a.api_group,
                    "version": a.api_version, "resource": a.resource,
                    "subresource": a.subresource, "name": a.name}),
            );
        } else {
            spec.insert(
                "nonResourceAttributes".into(),
                json!({"path": a.path, "verb": a.verb}),
            );
        }
        spec.insert("user".into(), json!(user.name));
        spec.insert(groups_key.into(), json!(user.groups));
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
        json!({"apiVersion": api_version, "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": null}, "spec": spec, "status": {"allowed": false}})
    }

    async fn decide(&self, a: &Attributes<'_>) -> Decision {
        let review = self.review(a);
        let key = review["spec"].to_string();
        let now = Instant::now();
        if let Some((expires, d)) = self.cache.lock().get(&key) {
            if *expires > now {
                return d.clone();
            }
        }
        let status = match self.backend.post_review(&review, BACKOFF).await {
            Ok(s) => s,
            Err(e) => {
                crate::warn_limited!("authorization-webhook", error = %e, "authorization webhook failed");
                return Decision::NoOpinion;
            }
        };
        let reason = status["reason"].as_str().unwrap_or_default().to_string();
        let decision = if status["allowed"] == true {
            Decision::Allow(reason)
        } else if status["denied"] == true {
            Decision::Deny(reason)
        } else {
            Decision::NoOpinion
        };
        let ttl = if matches!(decision, Decision::Allow(_)) {
            self.settings.authorized_ttl
        } else {
            self.settings.unauthorized_ttl
        };
        let mut cache = self.cache.lock();
        if cache.len() >= CACHE_ENTRIES {
            cache.retain(|_, (expires, _)| *expires > now);
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
        }
        cache.insert(key, (now + ttl, decision.clone()));
        decision
    }
}

impl Authorizer for WebhookAuthorizer {
    /// Deciding needs the remote service: no opinion without it.
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::NoOpinion
    }

    fn authorize_now(&self, _: &Attributes<'_>) -> Option<Decision> {
        None
    }

    fn authorize_async<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
    ) -> futures::future::BoxFuture<'a, Decision> {
        Box::pin(self.decide(attrs))
    }
}
