//! Query parameters, as upstream's parameter codec decodes them: list and
//! watch options (`ValidateListOptions`) and the write options of a create,
//! update or patch (`dryRun`, `fieldManager`, `fieldValidation`, `force`).
//! Separate from the handler because every verb reads them the same way.

use axum::extract::Request;
use http::header;
use serde_json::json;

use crate::api::request_info::percent_decode;
use crate::api::ApiError;
use crate::registry::{FieldValidation, ListParams, WriteOptions};

/// All values of each query parameter.
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(q: Option<&str>) -> Query {
        Query(
            q.unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    pub(super) fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn all(&self, k: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub(super) fn flag(&self, k: &str) -> bool {
        self.get(k).is_some_and(|v| v == "true" || v == "1")
    }

    /// The parameters of a list, watch or delete-collection as upstream's
    /// parameter codec decodes them (400 for a value of the wrong type) and
    /// `ValidateListOptions` checks them (422).
    pub(super) fn list_params(&self, watch: bool) -> Result<ListParams, ApiError> {
        let limit = match self.get("limit") {
            Some(v) => parse_int_param(v)?,
            None => 0,
        };
        for b in ["watch", "allowWatchBookmarks", "sendInitialEvents"] {
            if let Some(v) = self.get(b) {
                parse_bool_param(v)?;
            }
        }
        if let Some(v) = self.get("timeoutSeconds") {
            parse_int_param(v)?;
        }
        let p = ListParams {
            label_selector: self.get("labelSelector").map(String::from),
            field_selector: self.get("fieldSelector").map(String::from),
            limit,
            continue_token: self.get("continue").map(String::from),
            resource_version: self.get("resourceVersion").map(String::from),
            resource_version_match: self.get("resourceVersionMatch").map(String::from),
        };
        let send_initial_events = self
            .get("sendInitialEvents")
            .map(|v| parse_bool_param(v).unwrap_or(false));
        validate_list_options(&p, watch, send_initial_events)?;
        Ok(p)
    }

    /// A boolean parameter; absent is false, a malformed one was refused by
    /// `list_params` already.
    pub(super) fn bool_param(&self, k: &str) -> bool {
        self.get(k)
            .is_some_and(|v| parse_bool_param(v).unwrap_or(false))
    }
}

/// upstream's `ValidateListOptions` (apimachinery meta/internalversion/validation).
fn validate_list_options(
    p: &ListParams,
    watch: bool,
    send_initial_events: Option<bool>,
) -> Result<(), ApiError> {
    use crate::registry::validation::FieldError;
    let mut errs = Vec::new();
    let rv = p.resource_version.as_deref().unwrap_or("");
    let cont = p.continue_token.as_deref().unwrap_or("");
    let m = p.resource_version_match.as_deref().unwrap_or("");
    if watch {
        if send_initial_events.is_some() && m != "NotOlderThan" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if send_initial_events.is_some()
            && !crate::component_base::feature_gates::enabled("WatchList")
        {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            ));
        }
        if !m.is_empty() {
            if send_initial_events.is_none() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(m),
                    &["NotOlderThan"],
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !m.is_empty() {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if m != "Exact" && m != "NotOlderThan" {
                errs.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    json!(m),
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if m == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial_events.is_some() {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "meta.k8s.io",
        "ListOptions",
        "",
        errs.iter()
            .map(crate::registry::validation::FieldError::to_cause)
            .collect(),
    ))
}
/// Validates `dryRun`: only `All` is known.
pub(super) fn dry_run(q: &Query, options_kind: &str) -> Result<bool, ApiError> {
    let values = q.all("dryRun");
    for v in &values {
        if *v != "All" {
            let shown = crate::registry::validation::go_value(&serde_json::json!(values));
            let cause = k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause {
                reason: Some("FieldValueNotSupported".into()),
                message: Some(format!(
                    "Unsupported value: {shown}: supported values: \"All\""
                )),
                field: Some("dryRun".into()),
            };
            return Err(ApiError::invalid(
                "meta.k8s.io",
                options_kind,
                "",
                vec![cause],
            ));
        }
    }
    Ok(!values.is_empty())
}

/// upstream's `ValidateFieldValidation`: an unknown value makes the
/// options object invalid (422).
pub(super) fn field_validation(q: &Query, options_kind: &str) -> Result<FieldValidation, ApiError> {
    match q.get("fieldValidation").unwrap_or("") {
        "" | "Warn" => Ok(FieldValidation::Warn),
        "Strict" => Ok(FieldValidation::Strict),
        "Ignore" => Ok(FieldValidation::Ignore),
        other => Err(ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![crate::registry::validation::FieldError::not_supported(
                "fieldValidation",
                json!(other),
                &["Ignore", "Strict", "Warn"],
            )
            .to_cause()],
        )),
    }
}

pub(super) fn write_options(q: &Query, options_kind: &str) -> Result<WriteOptions, ApiError> {
    let field_manager = q.get("fieldManager").map(String::from);
    if let Some(m) = field_manager.as_deref() {
        if let Err(why) = crate::registry::fieldmanager::validate_field_manager(m) {
            let cause =
                crate::registry::validation::FieldError::invalid("fieldManager", json!(m), why)
                    .to_cause();
            return Err(ApiError::invalid(
                "meta.k8s.io",
                options_kind,
                "",
                vec![cause],
            ));
        }
    }
    let force = q.flag("force");
    if force && options_kind != "PatchOptions" {
        let cause = crate::registry::validation::FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )
        .to_cause();
        return Err(ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![cause],
        ));
    }
    Ok(WriteOptions {
        dry_run: dry_run(q, options_kind)?,
        field_manager,
        field_validation: field_validation(q, options_kind)?,
        user_agent: None,
        force,
        force_applied: false,
        user: Default::default(),
    })
}

/// Who sent the request, for admission.
pub(super) fn request_user(req: &Request) -> crate::auth::UserInfo {
    req.extensions()
        .get::<crate::auth::authenticator::Authenticated>()
        .map(|a| (*a.user).clone())
        .unwrap_or_default()
}

/// The write options of a request, with its User-Agent.
pub(super) fn request_write_options(
    req: &Request,
    q: &Query,
    options_kind: &str,
) -> Result<WriteOptions, ApiError> {
    let mut o = write_options(q, options_kind)?;
    o.user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    o.user = request_user(req);
    Ok(o)
}
/// Go's `strconv.ParseInt(v, 10, 64)`, with its error text.
pub(crate) fn parse_int_param(v: &str) -> Result<i64, ApiError> {
    v.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: {why}"))
    })
}

/// Go's `strconv.ParseBool`, with its error text.
pub(crate) fn parse_bool_param(v: &str) -> Result<bool, ApiError> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "strconv.ParseBool: parsing {v:?}: invalid syntax"
        ))),
    }
}
