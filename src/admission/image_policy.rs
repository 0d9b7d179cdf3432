//! ImagePolicyWebhook (plugin/pkg/admission/imagepolicy): every pod
//! created or updated (and every ephemeral container added) is sent to an
//! image review backend as an `imagepolicy.k8s.io/v1alpha1` ImageReview;
//! a denial refuses the request. Answers are cached for `allowTTL` or
//! `denyTTL`; when the backend cannot be reached, `defaultAllow` decides.
//! (Upstream also records the review's `auditAnnotations` in the audit
//! log; kapi's audit log does not carry admission annotations yet.)

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::common::{self, forbidden};
use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::clientcmd::{Remote, Selection};

/// upstream's LRU size for reviews.
const CACHE_SIZE: usize = 1024;

const NS: i128 = 1;
const MS: i128 = 1_000_000;
const SEC: i128 = 1_000_000_000;
const MIN: i128 = 60 * SEC;

pub struct ImagePolicyWebhook {
    backend: Remote,
    allow_ttl: Duration,
    deny_ttl: Duration,
    backoff: Duration,
    default_allow: bool,
    /// Review status by the review's spec, with when it expires.
    cache: Mutex<HashMap<String, (Instant, Value)>>,
}

/// What the `imagePolicy` stanza holds, durations as integers in their
/// units (seconds for the TTLs, milliseconds for the backoff).
#[derive(Debug, Default, PartialEq)]
struct Settings {
    kube_config_file: String,
    allow_ttl: i64,
    deny_ttl: i64,
    retry_backoff: i64,
    default_allow: bool,
}

/// A field of a JSON object matched as Go's decoder matches it: exactly,
/// else without regard to case.
fn field<'v>(obj: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    obj.get(name).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

fn settings(doc: &Value) -> Result<Settings, String> {
    let Some(policy) = doc
        .as_object()
        .and_then(|d| field(d, "imagePolicy"))
        .filter(|p| !p.is_null())
    else {
        return Ok(Settings::default());
    };
    let policy = policy.as_object().ok_or_else(|| {
        "json: cannot unmarshal non-object into Go struct field AdmissionConfig.imagePolicy of type imagepolicy.imagePolicyWebhookConfig".to_string()
    })?;
    let duration = |name: &str| -> Result<i64, String> {
        match field(policy, name) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64().unwrap_or(0)),
            Some(other) => Err(format!(
                "json: cannot unmarshal {} into Go struct field imagePolicyWebhookConfig.imagePolicy.{name} of type time.Duration",
                match other {
                    Value::Number(n) => format!("number {n}"),
                    Value::String(_) => "string".into(),
                    Value::Bool(_) => "bool".into(),
                    Value::Array(_) => "array".into(),
                    _ => "object".into(),
                }
            )),
        }
    };
    Ok(Settings {
        kube_config_file: field(policy, "kubeConfigFile")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        allow_ttl: duration("allowTTL")?,
        deny_ttl: duration("denyTTL")?,
        retry_backoff: duration("retryBackoff")?,
        default_allow: field(policy, "defaultAllow")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// upstream's normalizeConfigDuration: -1 disables, 0 takes the default,
/// anything else is scaled and must lie within [min, max].
fn normalize(
    value: i64,
    scale: i128,
    min: i128,
    max: i128,
    default: i128,
) -> Result<Duration, String> {
    let ns = match value {
        -1 => 0,
        0 => default,
        v => {
            let ns = v as i128 * scale;
            if ns < min || ns > max {
                return Err(format!(
                    "valid value is between {} and {}, got {}",
                    go_duration(min),
                    go_duration(max),
                    go_duration(ns)
                ));
            }
            ns
        }
    };
    Ok(Duration::from_nanos(ns.max(0) as u64))
}

/// Go's `time.Duration.String()`.
fn go_duration(ns: i128) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let u = ns.unsigned_abs();
    let frac = |v: u128, div: u128, digits: usize| {
        let (int, rest) = (v / div, v % div);
        if rest == 0 {
            int.to_string()
        } else {
            let f = format!("{rest:0digits$}");
            format!("{int}.{}", f.trim_end_matches('0'))
        }
    };
    let text = if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        format!("{}µs", frac(u, 1_000, 3))
    } else if u < 1_000_000_000 {
        format!("{}ms", frac(u, 1_000_000, 6))
    } else {
        let (h, rest) = (u / 3_600_000_000_000, u % 3_600_000_000_000);
        let (m, s) = (rest / 60_000_000_000, rest % 60_000_000_000);
        let secs = frac(s, 1_000_000_000, 9);
        match (h, m) {
            (0, 0) => format!("{secs}s"),
            (0, m) => format!("{m}m{secs}s"),
            (h, m) => format!("{h}h{m}m{secs}s"),
        }
    };
    if ns < 0 {
        format!("-{text}")
    } else {
        text
    }
}

impl ImagePolicyWebhook {
    /// From the plugin's configuration; an error stops the start, as
    /// upstream's `couldn't init admission plugin "ImagePolicyWebhook"`.
    pub async fn from_config(config: Option<&Value>) -> Result<ImagePolicyWebhook, String> {
        let doc = config.ok_or("no config specified")?;
        let s = settings(doc)?;
        let backoff = normalize(s.retry_backoff, MS, NS, 5 * MIN, 500 * MS)?;
        let allow_ttl = normalize(s.allow_ttl, SEC, SEC, 30 * MIN, 5 * MIN)?;
        let deny_ttl = normalize(s.deny_ttl, SEC, SEC, 30 * MIN, 30 * SEC)?;
        let selection = if s.kube_config_file.is_empty() {
            Selection::default()
        } else {
            Selection::file(std::path::Path::new(&s.kube_config_file))
        };
        let backend = Remote::connect(&selection).await.map_err(|e| e.0)?;
        Ok(ImagePolicyWebhook {
            backend,
            allow_ttl,
            deny_ttl,
            backoff,
            default_allow: s.default_allow,
            cache: Mutex::new(HashMap::new()),
        })
    }

    fn cached(&self, key: &str) -> Option<Value> {
        let mut cache = self.cache.lock();
        match cache.get(key) {
            Some((expires, status)) if *expires > Instant::now() => Some(status.clone()),
            Some(_) => {
                cache.remove(key);
                None
            }
            None => None,
        }
    }

    fn remember(&self, key: String, status: &Value) {
        let allowed = status["allowed"].as_bool().unwrap_or(false);
        let ttl = if allowed {
            self.allow_ttl
        } else {
            self.deny_ttl
        };
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut cache = self.cache.lock();
        if cache.len() >= CACHE_SIZE {
            cache.retain(|_, (expires, _)| *expires > now);
        }
        if cache.len() >= CACHE_SIZE {
            // Still full of live answers: the one closest to expiring goes.
            if let Some(k) = cache
                .iter()
                .min_by_key(|(_, (e, _))| *e)
                .map(|(k, _)| k.clone())
            {
                cache.remove(&k);
            }
        }
        cache.insert(key, (now + ttl, status.clone()));
    }
}

/// The ImageReview upstream builds for a pod: its containers' and init
/// containers' images (or, for the ephemeralcontainers subresource, those
/// of its ephemeral containers), the annotations meant for image policy,
/// and the namespace.
fn review_of(a: &Attributes<'_>, pod: &Value) -> Value {
    let lists: &[&str] = if a.subresource == "ephemeralcontainers" {
        &["ephemeralContainers"]
    } else {
        &["containers", "initContainers"]
    };
    let containers: Vec<Value> = lists
        .iter()
        .flat_map(|l| pod["spec"][*l].as_array().into_iter().flatten())
        .map(|c| match c["image"].as_str().filter(|i| !i.is_empty()) {
            Some(image) => json!({"image": image}),
            None => json!({}),
        })
        .collect();
    let annotations: serde_json::Map<String, Value> = pod["metadata"]["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.contains(".image-policy.k8s.io/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut spec = serde_json::Map::new();
    if !containers.is_empty() {
        spec.insert("containers".into(), Value::Array(containers));
    }
    if !annotations.is_empty() {
        spec.insert("annotations".into(), Value::Object(annotations));
    }
    if !a.namespace.is_empty() {
        spec.insert("namespace".into(), json!(a.namespace));
    }
    json!({
        "kind": "ImageReview",
        "apiVersion": "imagepolicy.k8s.io/v1alpha1",
        "metadata": {},
        "spec": spec,
        "status": {"allowed": false},
    })
}

#[async_trait::async_trait]
impl ValidatingPlugin for ImagePolicyWebhook {
    fn name(&self) -> &'static str {
        "ImagePolicyWebhook"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        let applies = matches!(a.operation, Operation::Create | Operation::Update)
            && common::is_core(a, "pods")
            && (a.subresource.is_empty() || a.subresource == "ephemeralcontainers");
        let Some(pod) = a.object.as_ref().filter(|_| applies) else {
            return Ok(Vec::new());
        };
        let review = review_of(a, pod);
        let key = crate::api::go_json::to_vec(&review["spec"]);
        let key = String::from_utf8_lossy(&key).into_owned();
        let status = match self.cached(&key) {
            Some(status) => status,
            None => match self.backend.post_review(&review, self.backoff).await {
                Ok(status) => {
                    self.remember(key, &status);
                    status
                }
                Err(e) if self.default_allow => {
                    tracing::info!(error = %e, "image policy webhook backend failed; the pod is allowed (defaultAllow)");
                    return Ok(Vec::new());
                }
                Err(e) => return Err(forbidden(a, e)),
            },
        };
        if status["allowed"].as_bool().unwrap_or(false) {
            return Ok(Vec::new());
        }
        match status["reason"].as_str().filter(|r| !r.is_empty()) {
            Some(reason) => Err(forbidden(
                a,
                format!("image policy webhook backend denied one or more images: {reason}"),
            )),
            None => Err(forbidden(
                a,
                "one or more images rejected by webhook backend",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_prints_them() {
        assert_eq!(go_duration(SEC), "1s");
        assert_eq!(go_duration(30 * MIN), "30m0s");
        assert_eq!(go_duration(1801 * SEC), "30m1s");
        assert_eq!(go_duration(5 * MIN + MS), "5m0.001s");
        assert_eq!(go_duration(-5 * SEC), "-5s");
        assert_eq!(go_duration(1), "1ns");
        assert_eq!(go_duration(500 * MS), "500ms");
        assert_eq!(go_duration(90 * MIN), "1h30m0s");
    }

    #[test]
    fn settings_are_normalized_as_upstream_does() {
        let s = settings(&json!({"imagePolicy": {"allowTTL": 1801}})).expect("settings");
        assert_eq!(
            normalize(s.allow_ttl, SEC, SEC, 30 * MIN, 5 * MIN),
            Err("valid value is between 1s and 30m0s, got 30m1s".to_string())
        );
        assert_eq!(
            normalize(300_001, MS, NS, 5 * MIN, 500 * MS),
            Err("valid value is between 1ns and 5m0s, got 5m0.001s".to_string())
        );
        assert_eq!(
            normalize(0, SEC, SEC, 30 * MIN, 5 * MIN),
            Ok(Duration::from_secs(300))
        );
        assert_eq!(
            normalize(-1, SEC, SEC, 30 * MIN, 5 * MIN),
            Ok(Duration::ZERO)
        );
        // Keys in any case; a string where Go wants an integer is refused.
        let s = settings(&json!({"ImagePolicy": {"DENYTTL": 7, "defaultAllow": true}}))
            .expect("settings");
        assert_eq!((s.deny_ttl, s.default_allow), (7, true));
        assert!(settings(&json!({"imagePolicy": {"allowTTL": "30s"}}))
            .expect_err("a string")
            .contains("of type time.Duration"));
    }
}
