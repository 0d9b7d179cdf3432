//! `metav1.Status` errors: every failure a client can cause becomes one of
//! these, with upstream's reason, code, message and details.

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};

/// Upstream's `metav1.StatusReason` values kapi emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    NotAcceptable,
    AlreadyExists,
    Conflict,
    Gone,
    Expired,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    Invalid,
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
    Timeout,
    /// Storage did not answer in time (upstream's NewServerTimeout, a 500).
    ServerTimeout,
    /// No reason (or one kapi has no name for), as an admission webhook's
    /// refusal may carry: omitted from the Status.
    Unspecified,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BadRequest => "BadRequest",
            Reason::Unauthorized => "Unauthorized",
            Reason::Forbidden => "Forbidden",
            Reason::NotFound => "NotFound",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::NotAcceptable => "NotAcceptable",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Gone => "Gone",
            Reason::Expired => "Expired",
            Reason::RequestEntityTooLarge => "RequestEntityTooLarge",
            Reason::UnsupportedMediaType => "UnsupportedMediaType",
            Reason::Invalid => "Invalid",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
            Reason::Timeout => "Timeout",
            Reason::ServerTimeout => "ServerTimeout",
            Reason::Unspecified => "",
        }
    }

    /// The reason a Status names (`Unspecified` for "" and unknown ones).
    pub fn parse(s: &str) -> Reason {
        const ALL: &[Reason] = &[
            Reason::BadRequest,
            Reason::Unauthorized,
            Reason::Forbidden,
            Reason::NotFound,
            Reason::MethodNotAllowed,
            Reason::NotAcceptable,
            Reason::AlreadyExists,
            Reason::Conflict,
            Reason::Gone,
            Reason::Expired,
            Reason::RequestEntityTooLarge,
            Reason::UnsupportedMediaType,
            Reason::Invalid,
            Reason::TooManyRequests,
            Reason::InternalError,
            Reason::ServiceUnavailable,
            Reason::Timeout,
        ];
        ALL.iter()
            .copied()
            .find(|r| r.as_str() == s)
            .unwrap_or(Reason::Unspecified)
    }
}

/// A failed request, rendered as upstream's `Status` body.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: Reason,
    pub message: String,
    /// `None` omits `details`; upstream omits it for some errors (413, 415).
    pub details: Option<StatusDetails>,
    /// `metadata.continue` of the Status: the token to go on with after an
    /// expired one (upstream's inconsistent continue).
    pub continue_token: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// A group/resource pair as upstream prints it: `pods`, `deployments.apps`.
pub fn qualified_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(group: &str, kind: &str, name: &str) -> Option<StatusDetails> {
    Some(StatusDetails {
        name: (!name.is_empty()).then(|| name.to_string()),
        group: (!group.is_empty()).then(|| group.to_string()),
        kind: (!kind.is_empty()).then(|| kind.to_string()),
        ..Default::default()
    })
}

fn empty_details() -> Option<StatusDetails> {
    Some(StatusDetails::default())
}

impl ApiError {
    pub fn new(code: u16, reason: Reason, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: empty_details(),
            continue_token: None,
        }
    }

    pub fn with_details(mut self, details: Option<StatusDetails>) -> Self {
        self.details = details;
        self
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            code: 404,
            reason: Reason::NotFound,
            message: format!(
                "{} \"{name}\" not found",
                qualified_resource(group, resource)
            ),
            details: details(group, resource, name),
            continue_token: None,
        }
    }

    /// What upstream answers for an unknown resource inside a served group version.
    pub fn resource_not_found() -> Self {
        Self::new(
            404,
            Reason::NotFound,
            "the server could not find the requested resource",
        )
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            code: 409,
            reason: Reason::AlreadyExists,
            message: format!(
                "{} \"{name}\" already exists",
                qualified_resource(group, resource)
            ),
            details: details(group, resource, name),
            continue_token: None,
        }
    }

    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError {
            code: 409,
            reason: Reason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified_resource(group, resource)
            ),
            details: details(group, resource, name),
            continue_token: None,
        }
    }

    /// 422 with one cause per field error; `kind` is the object's Kind.
    /// The message lists each distinct error once, as upstream's
    /// `ErrorList.ToAggregate` does (the causes keep every one).
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let mut summary: Vec<String> = Vec::new();
        for c in &causes {
            let line = match (&c.field, &c.message) {
                (Some(f), Some(m)) if !f.is_empty() => format!("{f}: {m}"),
                (_, Some(m)) => m.clone(),
                _ => String::new(),
            };
            if !summary.contains(&line) {
                summary.push(line);
            }
        }
        let list = match summary.as_slice() {
            [] => String::new(),
            [one] => format!(": {one}"),
            all => format!(": [{}]", all.join(", ")),
        };
        let mut d = details(group, kind, name).unwrap_or_default();
        d.causes = Some(causes);
        ApiError {
            code: 422,
            reason: Reason::Invalid,
            message: format!(
                "{} \"{name}\" is invalid{list}",
                qualified_kind(group, kind)
            ),
            details: Some(d),
            continue_token: None,
        }
    }

    /// upstream's NewBadRequest, which carries no details.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            details: None,
            ..Self::new(400, Reason::BadRequest, message)
        }
    }

    pub fn unauthorized() -> Self {
        ApiError {
            details: None,
            ..Self::new(401, Reason::Unauthorized, "Unauthorized")
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, Reason::Forbidden, message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            Reason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        )
    }

    /// `available`: the media types the endpoint produces, comma separated.
    pub fn not_acceptable(available: &str) -> Self {
        Self::new(
            406,
            Reason::NotAcceptable,
            format!("406: Not Acceptable\n\nAvailable representations: {available}"),
        )
    }

    pub fn unsupported_media_type() -> Self {
        ApiError {
            details: None,
            ..Self::new(
                415,
                Reason::UnsupportedMediaType,
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            )
        }
    }

    pub fn too_large(limit: usize) -> Self {
        ApiError {
            details: None,
            ..Self::new(
                413,
                Reason::RequestEntityTooLarge,
                format!("Request entity too large: limit is {limit}"),
            )
        }
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, Reason::Gone, message)
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, Reason::Expired, message)
    }

    pub fn too_many_requests(retry_after_seconds: i32) -> Self {
        ApiError {
            details: Some(StatusDetails {
                retry_after_seconds: Some(retry_after_seconds),
                ..Default::default()
            }),
            ..Self::new(
                429,
                Reason::TooManyRequests,
                "Too many requests, please try again later.",
            )
        }
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, Reason::Timeout, format!("Timeout: {}", message.into()))
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            Reason::InternalError,
            format!("Internal error occurred: {}", message.into()),
        )
    }

    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, Reason::ServiceUnavailable, message)
    }

    pub fn to_status(&self) -> Status {
        Status {
            code: Some(i32::from(self.code)),
            details: self.details.clone(),
            message: Some(self.message.clone()),
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta {
                continue_: self.continue_token.clone(),
                ..Default::default()
            },
            reason: (self.reason != Reason::Unspecified).then(|| self.reason.as_str().to_string()),
            status: Some("Failure".to_string()),
        }
    }
}

/// Kind qualified by group as upstream prints it in Invalid messages: `Deployment.apps`.
pub fn qualified_kind(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

/// `metav1.Status` with its fields in Go's declaration order, which is the
/// order upstream writes them in (kind, apiVersion, metadata, status,
/// message, reason, details, code).
#[derive(serde::Serialize)]
struct WireStatus<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: WireListMeta<'a>,
    status: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    message: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<WireDetails<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    code: u16,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

#[derive(serde::Serialize)]
struct WireListMeta<'a> {
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_: Option<&'a str>,
}

/// `metav1.StatusDetails` in Go's order.
#[derive(serde::Serialize)]
struct WireDetails<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    causes: Vec<WireCause<'a>>,
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    retry_after_seconds: Option<i32>,
}

/// `metav1.StatusCause` in Go's order.
#[derive(serde::Serialize)]
struct WireCause<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl ApiError {
    /// The `Status` body as upstream writes it, byte for byte in key order.
    pub fn status_json(&self) -> Vec<u8> {
        let status = self.to_status();
        let details = status.details.as_ref().map(|d| WireDetails {
            name: d.name.as_deref().filter(|s| !s.is_empty()),
            group: d.group.as_deref().filter(|s| !s.is_empty()),
            kind: d.kind.as_deref().filter(|s| !s.is_empty()),
            uid: d.uid.as_deref().filter(|s| !s.is_empty()),
            causes: d
                .causes
                .iter()
                .flatten()
                .map(|c| WireCause {
                    reason: c.reason.as_deref().filter(|s| !s.is_empty()),
                    message: c.message.as_deref().filter(|s| !s.is_empty()),
                    field: c.field.as_deref().filter(|s| !s.is_empty()),
                })
                .collect(),
            retry_after_seconds: d.retry_after_seconds.filter(|n| *n != 0),
        });
        let wire = WireStatus {
            kind: "Status",
            api_version: "v1",
            metadata: WireListMeta {
                continue_: status
                    .metadata
                    .continue_
                    .as_deref()
                    .filter(|s| !s.is_empty()),
            },
            status: "Failure",
            message: status.message.as_deref().unwrap_or(""),
            reason: status.reason.as_deref().unwrap_or(""),
            details,
            code: self.code,
        };
        serde_json::to_vec(&wire).unwrap_or_default()
    }
}

/// Marks a Status error response that a later filter may re-encode for
/// the client's Accept header (see `endpoints::responses::negotiate_error`).
#[derive(Debug, Clone, Copy)]
pub struct Negotiable;

/// The Status JSON of an error response, kept for re-encoding.
#[derive(Debug, Clone)]
pub struct StatusBody(pub Bytes);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Bytes::from(self.status_json());
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // Ended by a newline, as upstream's serializer writes every Status.
        let mut resp = (code, super::with_newline(body.clone())).into_response();
        resp.extensions_mut().insert(StatusBody(body));
        resp.extensions_mut().insert(Negotiable);
        let headers = resp.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(secs) = self.details.as_ref().and_then(|d| d.retry_after_seconds) {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                headers.insert(header::RETRY_AFTER, v);
            }
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_the_resource() {
        let s = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(
            s.message.as_deref(),
            Some("deployments.apps \"web\" not found")
        );
        let d = s.details.unwrap_or_default();
        assert_eq!(d.kind.as_deref(), Some("deployments"));
        assert_eq!(d.group.as_deref(), Some("apps"));
    }

    #[test]
    fn invalid_lists_each_cause() {
        let cause = |f: &str, m: &str| StatusCause {
            field: Some(f.into()),
            message: Some(m.into()),
            reason: Some("FieldValueRequired".into()),
        };
        let one = ApiError::invalid(
            "",
            "Pod",
            "p",
            vec![cause("spec.containers", "Required value")],
        );
        assert_eq!(
            one.message,
            "Pod \"p\" is invalid: spec.containers: Required value"
        );
        let two = ApiError::invalid(
            "apps",
            "Deployment",
            "d",
            vec![cause("a", "x"), cause("b", "y")],
        );
        assert_eq!(
            two.message,
            "Deployment.apps \"d\" is invalid: [a: x, b: y]"
        );
    }
}
