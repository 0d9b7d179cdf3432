//! Response writers: an answer (kept as JSON bytes through the handlers)
//! in the encoding content negotiation chose, as upstream's
//! `responsewriters` package writes them.

use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::negotiation::{Encoding, PROTOBUF};
use crate::api::protobuf;
use crate::api::{ApiError, Negotiable};

fn with_type(code: StatusCode, body: impl Into<axum::body::Body>, ct: &'static str) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = code;
    // Room for what the filters and hyper add (audit ID, cache control,
    // the flow-control UIDs, date, length): a map filled to capacity
    // rehashes into a new one for the next header, on every response.
    *r.headers_mut() = http::HeaderMap::with_capacity(12);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

/// JSON as upstream's serializer writes it: Go's `json.Encoder` ends
/// each document with a newline (clients that compare bodies as text see
/// it; `?pretty` output, indented by the filter, has none).
pub fn json(code: StatusCode, body: Bytes) -> Response {
    with_type(code, crate::api::with_newline(body), "application/json")
}

pub fn yaml(code: StatusCode, json_body: &[u8]) -> Response {
    match serde_json::from_slice::<Value>(json_body)
        .ok()
        .and_then(|v| serde_saphyr::to_string(&v).ok())
    {
        Some(y) => with_type(code, y, "application/yaml"),
        None => ApiError::internal("could not encode YAML").into_response(),
    }
}

pub fn protobuf_bytes(code: StatusCode, body: Vec<u8>) -> Response {
    with_type(code, body, PROTOBUF)
}

/// The 500 upstream answers when an object has no protobuf form.
pub fn unencodable(e: protobuf::EncodeError) -> ApiError {
    tracing::warn!(error = %e, "an object could not be encoded as protobuf");
    ApiError::internal(format!("unable to encode the object as protobuf: {e}"))
}

/// An object (JSON with apiVersion and kind) as a whole response.
pub fn object(code: StatusCode, obj: Bytes, encoding: Encoding) -> Response {
    match encoding {
        Encoding::Json => json(code, obj),
        Encoding::Yaml => yaml(code, &obj),
        Encoding::Protobuf => {
            let encoded = serde_json::from_slice::<Value>(&obj)
                .map_err(|e| ApiError::internal(format!("stored object is not JSON: {e}")))
                .and_then(|v| protobuf::encode(&v).map_err(unencodable));
            match encoded {
                Ok(b) => protobuf_bytes(code, b),
                Err(e) => e.into_response(),
            }
        }
    }
}

/// An object given as a value.
pub fn value(code: StatusCode, v: &Value, encoding: Encoding) -> Response {
    match encoding {
        Encoding::Protobuf => match protobuf::encode(v) {
            Ok(b) => protobuf_bytes(code, b),
            Err(e) => unencodable(e).into_response(),
        },
        _ => object(code, Bytes::from(crate::api::go_json::to_vec(v)), encoding),
    }
}

/// A list in protobuf: each item's message (JSON bytes with its own
/// apiVersion and kind) under the list's ListMeta. `cached`, when it holds
/// the objects behind `items`, keeps each message for the next list.
pub fn protobuf_list(
    api_version: &str,
    item_kind: &str,
    list_kind: &str,
    metadata: &Value,
    items: &[Bytes],
    cached: &[std::sync::Arc<crate::storage::cacher::CachedObject>],
) -> Response {
    let encode = |b: &Bytes| {
        let v: Value = serde_json::from_slice(b).unwrap_or(Value::Null);
        protobuf::encode_kind_body(api_version, item_kind, &v).map(Bytes::from)
    };
    let encoded: Result<Vec<Bytes>, protobuf::EncodeError> = if cached.len() == items.len() {
        cached
            .iter()
            .map(|o| {
                match o.protobuf.get_or_init(|| encode(&o.json).ok()) {
                    Some(b) => Ok(b.clone()),
                    // Not kept: encode again for the error.
                    None => encode(&o.json),
                }
            })
            .collect()
    } else {
        items.iter().map(encode).collect()
    };
    match encoded.and_then(|items| protobuf::encode_list(api_version, list_kind, metadata, &items))
    {
        Ok(b) => protobuf_bytes(StatusCode::OK, b),
        Err(e) => unencodable(e).into_response(),
    }
}

/// An error in the endpoint's negotiated encoding; the filters' own
/// negotiation (see [`negotiate_error`]) leaves it alone.
pub fn error(e: ApiError, encoding: Encoding) -> Response {
    let mut r = e.into_response();
    r.extensions_mut().remove::<Negotiable>();
    match encoding {
        Encoding::Json => r,
        _ => {
            let code = r.status();
            let json = e_json(&r);
            match transcode_status(&json, encoding) {
                Some((body, ct)) => {
                    let mut out = with_type(code, body, ct);
                    for (k, v) in r.headers() {
                        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
                            out.headers_mut().insert(k.clone(), v.clone());
                        }
                    }
                    out
                }
                None => r,
            }
        }
    }
}

/// The Status JSON of a response built by `ApiError::into_response`.
fn e_json(r: &Response) -> Bytes {
    r.extensions()
        .get::<crate::api::StatusBody>()
        .map(|b| b.0.clone())
        .unwrap_or_default()
}

/// A Status (JSON) in another encoding, with its content type.
pub fn transcode_status(json: &[u8], encoding: Encoding) -> Option<(Vec<u8>, &'static str)> {
    let v: Value = serde_json::from_slice(json).ok()?;
    if v.get("kind").and_then(Value::as_str) != Some("Status") {
        return None;
    }
    match encoding {
        Encoding::Json => None,
        Encoding::Yaml => serde_saphyr::to_string(&v)
            .ok()
            .map(|y| (y.into_bytes(), "application/yaml")),
        Encoding::Protobuf => protobuf::encode(&v).ok().map(|b| (b, PROTOBUF)),
    }
}

/// A Status error answered before any endpoint negotiated (401, 403, 429,
/// 404 of an unknown resource) is written in the encoding the request's
/// Accept header prefers, as upstream's `ErrorNegotiated` writes it. The
/// server's filter chain keeps the Accept header (a reference count) and
/// calls this with the response; it is parsed only for such an error.
pub fn negotiate_error(accept: Option<HeaderValue>, resp: Response) -> Response {
    if resp.extensions().get::<Negotiable>().is_none() {
        return resp;
    }
    let encoding =
        super::negotiation::error_encoding(accept.as_ref().and_then(|v| v.to_str().ok()));
    if encoding == Encoding::Json {
        return resp;
    }
    let json = e_json(&resp);
    let Some((body, ct)) = transcode_status(&json, encoding) else {
        return resp;
    };
    let (mut parts, _) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    parts.extensions.remove::<Negotiable>();
    Response::from_parts(parts, axum::body::Body::from(body))
}
