//! Request bodies: the size limit, reading, decoding (JSON, YAML,
//! protobuf), strict decoding's duplicate fields, and a patch's type and
//! bytes. Separate from the handler: upstream's `limitedReadBody` and the
//! decoders every write verb shares.

use axum::extract::Request;
use bytes::Bytes;
use http::header;
use serde_json::{json, Value};

use super::negotiation::{self, BodyFormat};
use super::query::{request_write_options, Query};
use super::{ResourceHandler, MAX_BODY_BYTES};
use crate::api::catalog::Resource;
use crate::api::ApiError;
use crate::registry::{FieldValidation, PatchType, WriteOptions};

/// A declared Content-Length over the limit is refused before any of the
/// body is read, as upstream's `limitedReadBody` does: a client that
/// announces 100 MB and sends nothing gets its 413 at once.
pub fn declared_too_large(headers: &http::HeaderMap) -> Option<ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    (declared > MAX_BODY_BYTES as u64).then(|| ApiError::too_large(MAX_BODY_BYTES))
}

pub(super) async fn read_body(req: Request) -> Result<Bytes, ApiError> {
    if let Some(e) = declared_too_large(req.headers()) {
        return Err(e);
    }
    axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("length limit")
                || std::error::Error::source(&e)
                    .is_some_and(|s| s.to_string().contains("length limit"))
            {
                ApiError::too_large(MAX_BODY_BYTES)
            } else {
                ApiError::bad_request(format!("unable to read the request body: {text}"))
            }
        })
}

pub(super) fn decode_body(
    bytes: &[u8],
    format: BodyFormat,
    expected_kind: &str,
) -> Result<Value, ApiError> {
    let parsed = match format {
        BodyFormat::Json => serde_json::from_slice::<Value>(bytes)
            .or_else(|e| match std::str::from_utf8(bytes) {
                // Go's decoder turns bytes that are not UTF-8 inside strings
                // into U+FFFD rather than refusing the body.
                Err(_) => serde_json::from_str::<Value>(&String::from_utf8_lossy(bytes)),
                Ok(_) => Err(e),
            })
            .map_err(|e| {
                crate::api::json_syntax::first_error(bytes).unwrap_or_else(|| e.to_string())
            }),
        BodyFormat::Yaml => serde_saphyr::from_slice::<Value>(bytes).map_err(|e| e.to_string()),
        BodyFormat::Protobuf => {
            let opts = crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            };
            crate::api::protobuf::decode_with(bytes, opts).map_err(|e| e.to_string())
        }
    };
    parsed.map_err(|e| {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(64).collect();
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected_kind}): couldn't get version/kind; json parse error: {e} ({shown})"
        ))
    })
}

/// The request's Content-Type, when it is text.
fn content_type(req: &Request) -> Option<&str> {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

impl ResourceHandler {
    pub(super) async fn body(&self, req: Request, kind: &str) -> Result<Value, ApiError> {
        let format = negotiation::body_format(content_type(&req))?;
        let began = crate::trace::start();
        // Kept for the trace only.
        let content_type = began.and(content_type(&req)).map(String::from);
        let bytes = read_body(req).await?;
        let decoded = decode_body(&bytes, format, kind);
        crate::trace::result(
            began,
            "read body",
            &decoded,
            || json!({"contentType": content_type.unwrap_or_default(), "bytes": bytes.len()}),
        );
        decoded
    }

    /// A create or update body with strict decoding's duplicate-field check:
    /// refused under `Strict`, the duplicates as warnings under `Warn`.
    pub(super) async fn strict_body(
        &self,
        req: Request,
        r: &Resource,
        opts: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let is_json = matches!(
            negotiation::body_format(content_type(&req)),
            Ok(BodyFormat::Json)
        );
        if !is_json || opts.field_validation == FieldValidation::Ignore {
            return Ok((self.body(req, &r.kind).await?, Vec::new()));
        }
        let began = crate::trace::start();
        // Kept for the trace only.
        let content_type = began.and(content_type(&req)).map(String::from);
        let bytes = read_body(req).await?;
        let detail = || json!({"contentType": content_type.clone().unwrap_or_default(), "bytes": bytes.len()});
        // Decoded and checked for duplicates in one pass; a body that does
        // not decode gets decode_body's answer (and its lenience for bytes
        // that are not UTF-8).
        let (value, dups) = match crate::api::strict::decode_noting_duplicates(&bytes) {
            Ok(decoded) => decoded,
            Err(_) => {
                let decoded = decode_body(&bytes, BodyFormat::Json, &r.kind);
                crate::trace::result(began, "read body", &decoded, detail);
                return Ok((decoded?, Vec::new()));
            }
        };
        let dups: Vec<String> = dups
            .into_iter()
            .map(|f| format!("json: duplicate field {f:?}"))
            .collect();
        let outcome = if !dups.is_empty() && opts.field_validation == FieldValidation::Strict {
            Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: strict decoding error: {}",
                r.kind,
                r.version,
                r.kind,
                dups.join(", ")
            )))
        } else {
            Ok((value, dups))
        };
        crate::trace::result(began, "read body", &outcome, detail);
        outcome
    }

    pub(super) async fn patch_parts(
        &self,
        req: Request,
        q: &Query,
    ) -> Result<(PatchType, Bytes, WriteOptions), ApiError> {
        let ct = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let pt = match ct.as_str() {
            "application/json-patch+json" => PatchType::Json,
            "application/merge-patch+json" => PatchType::Merge,
            "application/strategic-merge-patch+json" => PatchType::StrategicMerge,
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => PatchType::Apply,
            _ => {
                return Err(ApiError::new(
                    415,
                    crate::api::Reason::UnsupportedMediaType,
                    format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {ct:?})"),
                ))
            }
        };
        let opts = request_write_options(&req, q, "PatchOptions")?;
        let began = crate::trace::start();
        let body = read_body(req).await?;
        crate::trace::stage(
            began,
            "read body",
            "ok",
            || json!({"contentType": ct, "patchType": format!("{pt:?}"), "bytes": body.len()}),
        );
        Ok((pt, body, opts))
    }
}
