//! EventRateLimit (plugin/pkg/admission/eventratelimit): token buckets on
//! Event writes, per server, namespace, user or source and object, as the
//! plugin's configuration (eventratelimit.admission.k8s.io/v1alpha1)
//! says; an Event over the limit gets 429.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{json, Value};

use super::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::status::Reason;
use crate::api::ApiError;
use crate::registry::validation::FieldError;

const TYPES: [&str; 4] = ["Server", "Namespace", "User", "SourceAndObject"];
/// upstream's cache size when the configuration names none.
const DEFAULT_CACHE_SIZE: usize = 4096;

/// client-go's token bucket: `burst` tokens, refilled at `qps` a second.
#[derive(Debug, Clone)]
struct Bucket {
    tokens: f64,
    last: Instant,
    used: u64,
}

struct Limit {
    kind: &'static str,
    qps: f64,
    burst: f64,
    cache_size: usize,
    buckets: Mutex<(HashMap<String, Bucket>, u64)>,
}

impl Limit {
    fn key(&self, a: &Attributes<'_>) -> String {
        match self.kind {
            "Namespace" => a.namespace.to_string(),
            "User" => a.user.name.clone(),
            "SourceAndObject" => {
                let Some(e) = a.object.as_ref() else {
                    return String::new();
                };
                let s = |v: &Value| v.as_str().unwrap_or("").to_string();
                let io = &e["involvedObject"];
                [
                    s(&e["source"]["component"]),
                    s(&e["source"]["host"]),
                    s(&io["kind"]),
                    s(&io["namespace"]),
                    s(&io["name"]),
                    s(&io["uid"]),
                    s(&io["apiVersion"]),
                ]
                .concat()
            }
            _ => String::new(),
        }
    }

    /// TryAccept on the key's bucket; the least recently used bucket goes
    /// when the cache is full.
    fn accept(&self, key: String) -> bool {
        let now = Instant::now();
        let mut guard = self.buckets.lock();
        let (buckets, tick) = &mut *guard;
        *tick += 1;
        if !buckets.contains_key(&key) && buckets.len() >= self.cache_size {
            if let Some(oldest) = buckets
                .iter()
                .min_by_key(|(_, b)| b.used)
                .map(|(k, _)| k.clone())
            {
                buckets.remove(&oldest);
            }
        }
        let b = buckets.entry(key).or_insert(Bucket {
            tokens: self.burst,
            last: now,
            used: 0,
        });
        b.tokens = (b.tokens + now.duration_since(b.last).as_secs_f64() * self.qps).min(self.burst);
        b.last = now;
        b.used = *tick;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

pub struct EventRateLimit {
    limits: Vec<Limit>,
}

impl EventRateLimit {
    /// From the plugin's configuration, checked as upstream's
    /// ValidateConfiguration checks it.
    pub fn from_config(config: &Value) -> Result<EventRateLimit, String> {
        let limits = config["limits"].as_array().cloned().unwrap_or_default();
        let mut errs = Vec::new();
        if limits.is_empty() {
            errs.push(FieldError::invalid(
                "limits",
                json!(limits),
                "must not be empty",
            ));
        }
        let mut out = Vec::new();
        for (i, l) in limits.iter().enumerate() {
            let ty = l["type"].as_str().unwrap_or("");
            let kind = TYPES.iter().find(|t| **t == ty).copied();
            if kind.is_none() {
                errs.push(FieldError::not_supported(
                    format!("limits[{i}].type"),
                    json!(ty),
                    &TYPES,
                ));
            }
            let burst = l["burst"].as_i64().unwrap_or(0);
            let qps = l["qps"].as_i64().unwrap_or(0);
            if burst <= 0 {
                errs.push(FieldError::invalid(
                    format!("limits[{i}].burst"),
                    json!(burst),
                    "must be positive",
                ));
            }
            if qps <= 0 {
                errs.push(FieldError::invalid(
                    format!("limits[{i}].qps"),
                    json!(qps),
                    "must be positive",
                ));
            }
            let cache = l["cacheSize"].as_i64().unwrap_or(0);
            if ty != "Server" && cache < 0 {
                errs.push(FieldError::invalid(
                    format!("limits[{i}].cacheSize"),
                    json!(cache),
                    "must not be negative",
                ));
            }
            if let Some(kind) = kind {
                out.push(Limit {
                    kind,
                    qps: qps as f64,
                    burst: burst as f64,
                    cache_size: if kind == "Server" {
                        1
                    } else if cache > 0 {
                        cache as usize
                    } else {
                        DEFAULT_CACHE_SIZE
                    },
                    buckets: Mutex::new((HashMap::new(), 0)),
                });
            }
        }
        if !errs.is_empty() {
            let all: Vec<String> = errs
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message()))
                .collect();
            return Err(if all.len() == 1 {
                all[0].clone()
            } else {
                format!("[{}]", all.join(", "))
            });
        }
        Ok(EventRateLimit { limits: out })
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for EventRateLimit {
    fn name(&self) -> &'static str {
        "EventRateLimit"
    }

    async fn validate(&self, a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        // Core Events only (events.k8s.io's are another group), on
        // create and update, as upstream's handler.
        let event = a.resource.group.is_empty() && a.resource.kind == "Event";
        if !event || !matches!(a.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        // Every limit takes its token; the last refusal is answered.
        let mut refused = None;
        for l in &self.limits {
            let key = l.key(a);
            if !l.accept(key.clone()) {
                refused = Some(ApiError::new(
                    429,
                    Reason::TooManyRequests,
                    format!(
                        "Too many requests: limit reached on type {} for key {key}",
                        l.kind
                    ),
                ));
            }
        }
        match refused {
            Some(e) => Err(e),
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_are_checked_as_upstream() {
        assert_eq!(
            EventRateLimit::from_config(&json!({"limits": []}))
                .err()
                .as_deref(),
            Some("limits: Invalid value: []: must not be empty")
        );
        let e = EventRateLimit::from_config(
            &json!({"limits": [{"type": "Pod", "qps": 0, "burst": 1}]}),
        )
        .err()
        .unwrap_or_default();
        assert!(
            e.contains("limits[0].type: Unsupported value: \"Pod\""),
            "{e}"
        );
        assert!(
            e.contains("limits[0].qps: Invalid value: 0: must be positive"),
            "{e}"
        );
        assert!(EventRateLimit::from_config(
            &json!({"limits": [{"type": "Server", "qps": 1, "burst": 2}]})
        )
        .is_ok());
    }

    #[test]
    fn buckets_allow_the_burst_then_refuse() {
        let erl = EventRateLimit::from_config(
            &json!({"limits": [{"type": "Namespace", "qps": 1, "burst": 2, "cacheSize": 1}]}),
        )
        .expect("config");
        let l = &erl.limits[0];
        assert!(l.accept("a".into()));
        assert!(l.accept("a".into()));
        assert!(!l.accept("a".into()));
        // Another key has its own bucket (and pushes "a" out of a cache of one).
        assert!(l.accept("b".into()));
        assert!(l.accept("a".into()));
    }
}
