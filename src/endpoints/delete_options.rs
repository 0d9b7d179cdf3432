//! `DeleteOptions` of a delete or delete-collection: from the body when
//! there is one, else from the query, validated as upstream's
//! `ValidateDeleteOptions`. Its own file because it is its own options
//! kind, with its own decoding and validation rules.

use axum::extract::Request;
use http::header;
use serde_json::{json, Value};

use super::body::read_body;
use super::negotiation::{self, BodyFormat};
use super::query::{parse_bool_param, parse_int_param, request_user, Query};
use super::ResourceHandler;
use crate::api::ApiError;
use crate::registry::DeleteOptions;
use crate::storage::store::Preconditions;

type MetaDeleteOptions = k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions;

/// Query parameters decoded as upstream's parameter codec does: a value that
/// does not parse as the field's type is a 400 naming it.
fn delete_options_from_query(q: &Query) -> Result<MetaDeleteOptions, ApiError> {
    let mut o = MetaDeleteOptions::default();
    if let Some(v) = q.get("gracePeriodSeconds") {
        o.grace_period_seconds = Some(parse_int_param(v)?);
    }
    if let Some(v) = q.get("orphanDependents") {
        o.orphan_dependents = Some(parse_bool_param(v)?);
    }
    if let Some(v) = q.get("propagationPolicy") {
        o.propagation_policy = Some(v.to_string());
    }
    let dry: Vec<String> = q.all("dryRun").into_iter().map(String::from).collect();
    if !dry.is_empty() {
        o.dry_run = Some(dry);
    }
    if let Some(v) = q.get("ignoreStoreReadErrorWithClusterBreakingPotential") {
        o.ignore_store_read_error_with_cluster_breaking_potential = Some(parse_bool_param(v)?);
    }
    Ok(o)
}
/// A DeleteOptions body (JSON, YAML or protobuf). Its kind, when given,
/// must be DeleteOptions: anything else is not registered for meta.k8s.io.
fn delete_options_from_body(
    bytes: &[u8],
    format: BodyFormat,
) -> Result<MetaDeleteOptions, ApiError> {
    let v: Value = match format {
        BodyFormat::Json => serde_json::from_slice(bytes).map_err(|e| {
            crate::api::json_syntax::first_error(bytes).unwrap_or_else(|| e.to_string())
        }),
        BodyFormat::Yaml => serde_saphyr::from_slice(bytes).map_err(|e| e.to_string()),
        BodyFormat::Protobuf => crate::api::protobuf::decode_with(
            bytes,
            crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            },
        )
        .map_err(|e| e.to_string()),
    }
    .map_err(|e| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
    })?;
    let Value::Object(map) = &v else {
        return Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            crate::api::json_type_name(&v)
        )));
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != "DeleteOptions" {
        let version = map
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("meta.k8s.io/v1");
        return Err(ApiError::bad_request(format!(
            "no kind {kind:?} is registered for version {version:?} in scheme \"pkg/runtime/scheme.go:100\""
        )));
    }
    serde_json::from_value::<MetaDeleteOptions>(v)
        .map_err(|e| ApiError::bad_request(format!("unable to decode DeleteOptions: {e}")))
}

/// upstream's `ValidateDeleteOptions` (apimachinery meta/v1/validation).
fn validate_delete_options(o: &MetaDeleteOptions) -> Result<(), ApiError> {
    use crate::registry::validation::FieldError;
    let mut errs = Vec::new();
    if let (Some(_), Some(p)) = (o.orphan_dependents, o.propagation_policy.as_ref()) {
        errs.push(FieldError::invalid(
            "propagationPolicy",
            json!(p),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(p) = o.propagation_policy.as_deref() {
        if !matches!(p, "Foreground" | "Background" | "Orphan") {
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    let dry = o.dry_run.as_deref().unwrap_or(&[]);
    if dry.len() > 1 || dry.iter().any(|d| d != "All") {
        errs.push(FieldError::not_supported("dryRun", json!(dry), &["All"]));
    }
    if o.ignore_store_read_error_with_cluster_breaking_potential == Some(true) {
        let why = "cannot be set together with ignoreStoreReadErrorWithClusterBreakingPotential";
        if !dry.is_empty() {
            errs.push(FieldError::invalid("dryRun", json!(dry), why));
        }
        if let Some(p) = &o.propagation_policy {
            errs.push(FieldError::invalid("propagationPolicy", json!(p), why));
        }
        if let Some(g) = o.grace_period_seconds.filter(|g| *g != 0) {
            errs.push(FieldError::invalid("gracePeriodSeconds", json!(g), why));
        }
        if o.preconditions.is_some() {
            errs.push(FieldError::invalid(
                "preconditions",
                json!(o.preconditions),
                why,
            ));
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "meta.k8s.io",
        "DeleteOptions",
        "",
        errs.iter().map(FieldError::to_cause).collect(),
    ))
}
impl ResourceHandler {
    /// `DeleteOptions` as upstream's delete handler reads them: from the body
    /// when there is one (its query is then ignored), else from the query;
    /// an undecodable body or parameter is 400, an invalid option 422, and
    /// either way nothing is deleted.
    pub(super) async fn delete_options(
        &self,
        req: Request,
        q: &Query,
    ) -> Result<DeleteOptions, ApiError> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().map(String::from))
            .transpose()
            .map_err(|_| ApiError::unsupported_media_type())?;
        let user = request_user(&req);
        let bytes = read_body(req).await?;
        let given = if bytes.is_empty() {
            delete_options_from_query(q)?
        } else {
            let format = negotiation::body_format(content_type.as_deref())?;
            delete_options_from_body(&bytes, format)?
        };
        validate_delete_options(&given)?;
        let preconditions = given.preconditions.clone().unwrap_or_default();
        Ok(DeleteOptions {
            preconditions: Preconditions {
                uid: preconditions.uid,
                resource_version: preconditions.resource_version,
            },
            propagation_policy: given.propagation_policy.clone().or_else(|| {
                given
                    .orphan_dependents
                    .map(|o| if o { "Orphan" } else { "Background" }.to_string())
            }),
            dry_run: given.dry_run.as_ref().is_some_and(|d| !d.is_empty()),
            grace_period_seconds: given.grace_period_seconds,
            user,
        })
    }
}
