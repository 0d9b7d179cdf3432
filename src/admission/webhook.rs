//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook, as upstream's
//! `admission/plugin/webhook`: the webhooks of every
//! admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration (read from the watch cache on each
//! request, parsed again only when they change) are matched against the
//! request (rules, matchPolicy, namespaceSelector, objectSelector,
//! matchConditions) and called with an AdmissionReview over TLS.
//!
//! Failures to call a webhook follow its failurePolicy (`Fail`: an
//! InternalError `failed calling webhook "name": ...`; `Ignore`: skipped);
//! a refusal is the webhook's status (`admission webhook "name" denied the
//! request: ...`, 403 unless it says otherwise). Mutating webhooks patch
//! with JSONPatch, and those with `reinvocationPolicy: IfNeeded` are called
//! once more when a later webhook changed the object. Validating webhooks
//! are called one after the other (upstream calls them in parallel).
//! matchPolicy Equivalent matches the other served versions of the
//! request's resource but sends the request's own version (upstream
//! converts the object to the version the rule names).

use std::collections::HashSet;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use super::matching::{
    self, exempt, namespace_matches, object_matches, request_json, str_of, strings, Cached, Rule,
};
use super::{Attributes, Context, MutatingPlugin, ValidatingPlugin};
use crate::api::selector::LabelSelector;
use crate::api::{ApiError, Reason};
use crate::webhook::{self as client, ClientConfig};

/// One webhook of a configuration, with its defaults applied.
struct Hook {
    /// Identifies the webhook for reinvocation: configuration, name, index.
    uid: String,
    name: String,
    client_config: ClientConfig,
    client: Result<reqwest::Client, String>,
    rules: Vec<Rule>,
    equivalent: bool,
    namespace_selector: Result<LabelSelector, String>,
    object_selector: Result<LabelSelector, String>,
    match_conditions: Vec<(String, String)>,
    fail_open: bool,
    timeout: Duration,
    side_effects: Option<String>,
    review_versions: Vec<String>,
    reinvoke: bool,
}

fn parse_configuration(cfg: &Value) -> Vec<Hook> {
    let config_name = cfg["metadata"]["name"].as_str().unwrap_or("");
    let Some(hooks) = cfg["webhooks"].as_array() else {
        return Vec::new();
    };
    hooks
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let name = str_of(w, "name").to_string();
            let timeout = Duration::from_secs(w["timeoutSeconds"].as_u64().unwrap_or(10).max(1));
            let client_config = ClientConfig::from_json(&w["clientConfig"]);
            let client = client::client(client_config.ca_bundle.as_deref(), false, None, timeout);
            Hook {
                uid: format!("{config_name}/{name}/{i}"),
                client_config,
                client,
                rules: Rule::list(&w["rules"]),
                equivalent: str_of(w, "matchPolicy") != "Exact",
                namespace_selector: matching::selector(&w["namespaceSelector"]),
                object_selector: matching::selector(&w["objectSelector"]),
                match_conditions: conditions(&w["matchConditions"]),
                fail_open: str_of(w, "failurePolicy") == "Ignore",
                timeout,
                side_effects: w["sideEffects"].as_str().map(String::from),
                review_versions: strings(&w["admissionReviewVersions"]),
                reinvoke: str_of(w, "reinvocationPolicy") == "IfNeeded",
                name,
            }
        })
        .collect()
}

/// `matchConditions` as (name, expression).
pub(super) fn conditions(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        str_of(c, "name").to_string(),
                        str_of(c, "expression").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn not_ready(a: &Attributes<'_>) -> ApiError {
    matching::forbidden(a, "not yet ready to handle request")
}

/// Upstream's ShouldCallHook: rules (and their equivalents), then the
/// selectors, then the match conditions (whose errors follow the
/// failurePolicy and otherwise refuse the request).
async fn should_call(h: &Hook, a: &Attributes<'_>, ctx: &Context) -> Result<bool, ApiError> {
    let exact = h.rules.iter().any(|r| r.matches(a, None));
    let equivalent = || h.rules.iter().any(|r| r.matches(a, Some(&ctx.registries)));
    if !(exact || (h.equivalent && equivalent())) {
        return Ok(false);
    }
    if !namespace_matches(&h.namespace_selector, a, ctx).await? {
        return Ok(false);
    }
    if !object_matches(&h.object_selector, a)? {
        return Ok(false);
    }
    if h.match_conditions.is_empty() {
        return Ok(true);
    }
    match conditions_hold(h, a) {
        Ok(m) => Ok(m),
        Err(why) => {
            crate::warn_limited!("webhook-match-conditions", webhook = %h.name, error = %why, "failed evaluating match conditions, failing closed");
            let r = a.resource;
            let qualified = crate::api::status::qualified_resource(&r.group, &r.plural);
            let message = if a.name.is_empty() {
                format!("{qualified} is forbidden: {why}")
            } else {
                format!("{qualified} {:?} is forbidden: {why}", a.name)
            };
            Err(ApiError::forbidden(message).with_details(Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
                    name: (!a.name.is_empty()).then(|| a.name.to_string()),
                    group: (!r.group.is_empty()).then(|| r.group.clone()),
                    kind: Some(r.plural.clone()),
                    ..Default::default()
                },
            )))
        }
    }
}

/// The match conditions over `object`, `oldObject` and `request`.
fn conditions_hold(h: &Hook, a: &Attributes<'_>) -> Result<bool, String> {
    let request = request_json(a, None);
    let mut act = crate::cel::admission::Activation::new(&[
        ("object", a.object.as_ref()),
        ("oldObject", a.old_object),
        ("request", Some(&request)),
    ]);
    matching::match_conditions(&h.match_conditions, &mut act, h.fail_open)
}

/// Why a call did not give an answer.
enum Failure {
    /// upstream's ErrCallingWebhook: subject to the failurePolicy.
    Calling(String),
    /// Returned as is.
    Status(ApiError),
}

/// A webhook's verified answer.
struct Answer {
    allowed: bool,
    status: Value,
    patch: Option<Vec<u8>>,
    patch_type: String,
    warnings: Vec<String>,
}

/// `response.patch` is a Go `[]byte`: base64 text, or (as Go's decoder also
/// takes, and kube-rs's `AdmissionResponse` sends) an array of byte values.
fn response_patch(v: &Value) -> Result<Option<Vec<u8>>, Failure> {
    let decode_error = |what: String| Failure::Calling(format!("failed to call webhook: {what}"));
    let bytes = match v {
        Value::String(p) => base64::engine::general_purpose::STANDARD
            .decode(p)
            .map_err(|e| decode_error(format!("illegal base64 data in response.patch: {e}")))?,
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_u64()
                    .and_then(|n| u8::try_from(n).ok())
                    .ok_or_else(|| {
                        let what = match i {
                            Value::Number(n) => format!("number {n}"),
                            Value::String(_) => "string".into(),
                            Value::Bool(_) => "bool".into(),
                            Value::Array(_) => "array".into(),
                            Value::Object(_) => "object".into(),
                            Value::Null => "null".into(),
                        };
                        decode_error(format!(
                            "json: cannot unmarshal {what} into Go struct field AdmissionResponse.response.patch of type uint8"
                        ))
                    })
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    Ok((!bytes.is_empty()).then_some(bytes))
}

/// Go's `schema.GroupVersionKind.String()` of an apiVersion and kind.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (g, v) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{g}/{v}, Kind={kind}")
}

/// How Go's HTTP client words a failed POST.
fn post_error(url: &str, e: &reqwest::Error) -> String {
    let mut refused = false;
    let mut last = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        last = s.to_string();
        src = s.source();
    }
    let why = if e.is_timeout() {
        "context deadline exceeded".to_string()
    } else if refused {
        let hostport = reqwest::Url::parse(url)
            .ok()
            .map(|u| {
                let host = u.host_str().unwrap_or("").to_string();
                format!("{host}:{}", u.port_or_known_default().unwrap_or(443))
            })
            .unwrap_or_default();
        format!("dial tcp {hostport}: connect: connection refused")
    } else {
        last
    };
    format!("Post {url:?}: {why}")
}

/// Sends the AdmissionReview and verifies the answer, as upstream's
/// callHook and VerifyAdmissionResponse.
async fn call(
    h: &Hook,
    a: &Attributes<'_>,
    ctx: &Context,
    mutating: bool,
) -> Result<Answer, Failure> {
    if a.dry_run {
        match h.side_effects.as_deref() {
            None => return Err(Failure::Calling("Webhook SideEffects is nil".into())),
            Some("None" | "NoneOnDryRun") => {}
            Some(_) => {
                return Err(Failure::Status(ApiError::bad_request(format!(
                    "admission webhook {:?} does not support dry run",
                    h.name
                ))))
            }
        }
    }
    let api_version = match h
        .review_versions
        .iter()
        .find(|v| *v == "v1" || *v == "v1beta1")
    {
        Some(v) => format!("admission.k8s.io/{v}"),
        None => {
            return Err(Failure::Calling(
                "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)".into(),
            ))
        }
    };
    let uid = uuid::Uuid::new_v4().to_string();
    let review = json!({
        "kind": "AdmissionReview",
        "apiVersion": api_version,
        "request": request_json(a, Some(&uid)),
    });
    let http = h
        .client
        .as_ref()
        .map_err(|e| Failure::Calling(format!("could not get REST client: {e}")))?;
    let base = client::url(&ctx.registries, &h.client_config)
        .await
        .map_err(|e| Failure::Calling(format!("failed to call webhook: {e}")))?;
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}timeout={}s", h.timeout.as_secs());
    let resp = http
        .post(&url)
        .timeout(h.timeout)
        .json(&review)
        .send()
        .await
        .map_err(|e| {
            Failure::Calling(format!("failed to call webhook: {}", post_error(&url, &e)))
        })?;
    let status = resp.status();
    let body = tokio::time::timeout(h.timeout, resp.bytes())
        .await
        .map_err(|_| {
            Failure::Calling(format!(
                "failed to call webhook: Post {url:?}: context deadline exceeded"
            ))
        })?
        .map_err(|e| {
            Failure::Calling(format!("failed to call webhook: {}", post_error(&url, &e)))
        })?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body).into_owned();
        let why = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(|v| v["kind"] == "Status")
            .and_then(|v| v["message"].as_str().map(String::from))
            .unwrap_or_else(|| {
                format!(
                    "an error on the server ({text:?}) has prevented the request from succeeding"
                )
            });
        return Err(Failure::Calling(format!("failed to call webhook: {why}")));
    }
    let answer: Value = serde_json::from_slice(&body)
        .map_err(|e| Failure::Calling(format!("failed to call webhook: {e}")))?;
    let invalid =
        |why: String| Failure::Calling(format!("received invalid webhook response: {why}"));
    let r = answer
        .get("response")
        .filter(|r| r.is_object())
        .ok_or_else(|| invalid("webhook response was absent".into()))?;
    if api_version.ends_with("/v1") {
        let got = str_of(r, "uid");
        if got != uid {
            return Err(invalid(format!(
                "expected response.uid={uid:?}, got {got:?}"
            )));
        }
        let gvk = gvk_string(str_of(&answer, "apiVersion"), str_of(&answer, "kind"));
        if gvk != "admission.k8s.io/v1, Kind=AdmissionReview" {
            return Err(invalid(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {gvk}"
            )));
        }
    }
    let patch_type = str_of(r, "patchType").to_string();
    let patch = response_patch(&r["patch"])?;
    if patch.is_some() && patch_type.is_empty() {
        return Err(invalid(
            "webhook returned response.patch but not response.patchType".into(),
        ));
    }
    if !patch_type.is_empty() && patch.is_none() {
        return Err(invalid(
            "webhook returned response.patchType but not response.patch".into(),
        ));
    }
    if !patch_type.is_empty() && !mutating {
        return Err(invalid(
            "validating webhook may not return response.patch or response.patchType".into(),
        ));
    }
    Ok(Answer {
        allowed: r["allowed"].as_bool().unwrap_or(false),
        status: r["status"].clone(),
        patch,
        patch_type,
        warnings: strings(&r["warnings"]),
    })
}

/// Upstream's ToStatusErr: a refusal as the webhook worded it.
fn refusal(name: &str, status: &Value) -> ApiError {
    let code = status["code"]
        .as_i64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..=599).contains(c))
        .unwrap_or(403);
    let denied = format!("admission webhook {name:?} denied the request");
    let message = str_of(status, "message");
    let reason = str_of(status, "reason");
    let message = if !message.is_empty() {
        format!("{denied}: {message}")
    } else if !reason.is_empty() {
        format!("{denied}: {reason}")
    } else {
        format!("{denied} without explanation")
    };
    let details = status
        .get("details")
        .filter(|d| d.is_object())
        .and_then(|d| serde_json::from_value(d.clone()).ok());
    ApiError {
        code,
        reason: Reason::parse(reason),
        message,
        details,
        continue_token: None,
    }
}

/// A failure as the request sees it, after the failurePolicy.
fn failed(h: &Hook, f: Failure) -> Option<ApiError> {
    match f {
        Failure::Calling(reason) if h.fail_open => {
            crate::warn_limited!("webhook-fail-open", webhook = %h.name, error = %reason, "failed calling webhook, failing open");
            None
        }
        Failure::Calling(reason) => Some(ApiError::internal(format!(
            "failed calling webhook {:?}: {reason}",
            h.name
        ))),
        Failure::Status(e) => Some(e),
    }
}

/// A patched object as the registry would have decoded it: pruned for
/// custom resources, through the kind's typed form, defaulted.
fn normalize(obj: &mut Value, a: &Attributes<'_>, ctx: &Context) -> Result<(), ApiError> {
    let r = a.resource;
    if let Some(schema) = r.custom.as_ref().and_then(|c| c.schema.as_ref()) {
        crate::schema::prune(obj, schema);
    }
    if let Some(codec) = r.codec {
        crate::api::quantity::canonicalize_fields(&r.api_version(), &r.kind, obj)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        *obj = codec(obj).map_err(ApiError::internal)?;
    }
    if let Some(reg) = ctx.registries.get(&r.group, &r.version, &r.plural) {
        reg.strategy.default(obj);
    }
    Ok(())
}

pub struct MutatingAdmissionWebhook {
    configs: Cached<Vec<Hook>>,
}

impl Default for MutatingAdmissionWebhook {
    fn default() -> Self {
        MutatingAdmissionWebhook {
            configs: Cached::new("mutatingwebhookconfigurations", parse_configuration),
        }
    }
}

impl MutatingAdmissionWebhook {
    /// Calls one webhook if it applies (in the second round, only if it
    /// is one to reinvoke); `None` when it was not called, else whether it
    /// changed the object.
    async fn run(
        &self,
        h: &Hook,
        a: &mut Attributes<'_>,
        ctx: &Context,
        only: Option<&HashSet<String>>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<bool>, ApiError> {
        if !should_call(h, a, ctx).await? {
            return Ok(None);
        }
        if only.is_some_and(|set| !set.contains(&h.uid)) {
            return Ok(None);
        }
        match self.call_and_patch(h, a, ctx, warnings).await {
            Ok(changed) => Ok(Some(changed)),
            Err(f) => match failed(h, f) {
                Some(e) => Err(e),
                None => Ok(Some(false)),
            },
        }
    }

    async fn call_and_patch(
        &self,
        h: &Hook,
        a: &mut Attributes<'_>,
        ctx: &Context,
        warnings: &mut Vec<String>,
    ) -> Result<bool, Failure> {
        let answer = call(h, a, ctx, true).await?;
        warnings.extend(answer.warnings);
        if !answer.allowed {
            return Err(Failure::Status(refusal(&h.name, &answer.status)));
        }
        let Some(patch) = answer.patch else {
            return Ok(false);
        };
        let ops: json_patch::Patch = serde_json::from_slice(&patch).map_err(|e| {
            Failure::Calling(format!(
                "received undecodable patch in webhook response: {e}"
            ))
        })?;
        if ops.0.is_empty() {
            return Ok(false);
        }
        let Some(obj) = a.object.as_ref() else {
            return Err(Failure::Status(ApiError::internal(format!(
                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                h.name
            ))));
        };
        if answer.patch_type != "JSONPatch" {
            return Err(Failure::Calling(format!(
                "unsupported patch type {:?}",
                answer.patch_type
            )));
        }
        let mut new = obj.clone();
        crate::registry::patch::json::apply(&mut new, &ops)
            .map_err(|e| Failure::Status(ApiError::internal(e.to_string())))?;
        normalize(&mut new, a, ctx).map_err(Failure::Status)?;
        let changed = a.object.as_ref() != Some(&new);
        a.object = Some(new);
        Ok(changed)
    }
}

#[async_trait::async_trait]
impl MutatingPlugin for MutatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "MutatingAdmissionWebhook"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if exempt(a) {
            return Ok(Vec::new());
        }
        let configs = self
            .configs
            .get(&ctx.registries)
            .await
            .map_err(|_| not_ready(a))?;
        if configs.is_empty() {
            return Ok(Vec::new());
        }
        let hooks: Vec<&Hook> = configs.iter().flatten().collect();
        let mut warnings = Vec::new();
        // upstream's webhookReinvokeContext: a change by a webhook makes
        // the earlier IfNeeded webhooks due for one more call.
        let mut invoked: HashSet<String> = HashSet::new();
        let mut reinvoke: HashSet<String> = HashSet::new();
        for h in &hooks {
            let Some(changed) = self.run(h, a, ctx, None, &mut warnings).await? else {
                continue;
            };
            if changed {
                reinvoke.extend(invoked.drain());
            }
            if h.reinvoke {
                invoked.insert(h.uid.clone());
            }
        }
        if !reinvoke.is_empty() {
            for h in &hooks {
                self.run(h, a, ctx, Some(&reinvoke), &mut warnings).await?;
            }
        }
        Ok(warnings)
    }
}

pub struct ValidatingAdmissionWebhook {
    configs: Cached<Vec<Hook>>,
}

impl Default for ValidatingAdmissionWebhook {
    fn default() -> Self {
        ValidatingAdmissionWebhook {
            configs: Cached::new("validatingwebhookconfigurations", parse_configuration),
        }
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for ValidatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if exempt(a) {
            return Ok(Vec::new());
        }
        let configs = self
            .configs
            .get(&ctx.registries)
            .await
            .map_err(|_| not_ready(a))?;
        let mut warnings = Vec::new();
        for h in configs.iter().flatten() {
            if !should_call(h, a, ctx).await? {
                continue;
            }
            match call(h, a, ctx, false).await {
                Ok(answer) => {
                    warnings.extend(answer.warnings);
                    if !answer.allowed {
                        return Err(refusal(&h.name, &answer.status));
                    }
                }
                Err(f) => {
                    if let Some(e) = failed(h, f) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go decodes a `[]byte` from base64 text or from an array of numbers;
    /// kube-rs's AdmissionResponse sends the array.
    #[test]
    fn a_patch_is_base64_or_an_array_of_bytes() {
        let ok = |v: Value| response_patch(&v).ok().flatten();
        assert_eq!(ok(json!("W10=")), Some(b"[]".to_vec()));
        assert_eq!(ok(json!([91, 93])), Some(b"[]".to_vec()));
        assert_eq!(ok(json!([])), None);
        assert_eq!(ok(json!(null)), None);
        let err = |v: Value| match response_patch(&v) {
            Err(Failure::Calling(m)) => m,
            _ => String::from("no error"),
        };
        assert!(err(json!([256])).contains("cannot unmarshal number 256"));
        assert!(err(json!(["a"])).contains("cannot unmarshal string"));
        assert!(err(json!("%%%")).contains("illegal base64 data"));
    }

    #[test]
    fn refusals_as_upstream() {
        let e = refusal(
            "v.example.com",
            &json!({"code": 400, "message": "no", "reason": "BadRequest"}),
        );
        assert_eq!(e.code, 400);
        assert_eq!(e.reason, Reason::BadRequest);
        assert_eq!(
            e.message,
            "admission webhook \"v.example.com\" denied the request: no"
        );
        let e = refusal("v.example.com", &Value::Null);
        assert_eq!(e.code, 403);
        assert_eq!(e.reason, Reason::Unspecified);
        assert_eq!(
            e.message,
            "admission webhook \"v.example.com\" denied the request without explanation"
        );
        let e = refusal("v", &json!({"code": 200, "reason": "Why"}));
        assert_eq!(
            (e.code, e.message.as_str()),
            (403, "admission webhook \"v\" denied the request: Why")
        );
        assert!(e.to_status().reason.is_none());
    }

    #[test]
    fn configurations_default_as_the_api() {
        let hooks = parse_configuration(&json!({"metadata": {"name": "c"}, "webhooks": [
            {"name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:1/x"}, "sideEffects": "None", "admissionReviewVersions": ["v1"]},
            {"name": "b.example.com", "clientConfig": {"url": "https://127.0.0.1:1/x"}, "failurePolicy": "Ignore", "matchPolicy": "Exact", "timeoutSeconds": 3, "reinvocationPolicy": "IfNeeded"},
        ]}));
        assert_eq!(hooks.len(), 2);
        assert!(!hooks[0].fail_open && hooks[0].equivalent && !hooks[0].reinvoke);
        assert_eq!(hooks[0].timeout, Duration::from_secs(10));
        assert_eq!(hooks[0].uid, "c/a.example.com/0");
        assert!(hooks[1].fail_open && !hooks[1].equivalent && hooks[1].reinvoke);
        assert_eq!(hooks[1].timeout, Duration::from_secs(3));
        assert_eq!(
            gvk_string("admission.k8s.io/v1", "AdmissionReview"),
            "admission.k8s.io/v1, Kind=AdmissionReview"
        );
        assert_eq!(gvk_string("v1", "Status"), "/v1, Kind=Status");
    }
}
