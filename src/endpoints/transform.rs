//! What a verb answers with: the object or list as stored, or transformed
//! as content negotiation asked (Table, PartialObjectMetadata), with its
//! warnings; upstream's `transformResponseObject` (handlers/response.go).
//! `responses` then writes the bytes in the negotiated encoding.

use axum::response::Response;
use bytes::Bytes;
use http::{header, HeaderValue, StatusCode};
use serde_json::{json, Value};

use super::negotiation::{Encoding, Output, Transform};
use super::{responses, table, ResourceHandler};
use crate::api::catalog::Resource;
use crate::registry::{meta, Registry, Written};

pub(super) fn json_response(code: StatusCode, body: Bytes) -> Response {
    responses::json(code, body)
}
/// A list's ListMeta as JSON, in Go's order.
pub(super) fn list_meta(rv: i64, cont: Option<&str>, remaining: Option<i64>) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    if let Some(c) = cont {
        meta.insert("continue".into(), json!(c));
    }
    if let Some(n) = remaining {
        meta.insert("remainingItemCount".into(), json!(n));
    }
    Value::Object(meta)
}

pub(super) fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(&format!("299 - {w:?}")) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}
/// `{"kind":"<X>List","apiVersion":..,"metadata":{..},"items":[..]}` written from stored bytes.
pub(super) fn list_body(
    r: &Resource,
    items: &[Bytes],
    rv: i64,
    cont: Option<&str>,
    remaining: Option<i64>,
) -> Bytes {
    // ListMeta in Go's order: resourceVersion, continue, remainingItemCount.
    let mut meta = format!("{{\"resourceVersion\":{}", json!(rv.to_string()));
    if let Some(c) = cont {
        meta.push_str(&format!(",\"continue\":{}", json!(c)));
    }
    if let Some(n) = remaining {
        meta.push_str(&format!(",\"remainingItemCount\":{n}"));
    }
    meta.push('}');
    let head = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{meta},\"items\":[",
        json!(r.list_kind),
        json!(r.api_version()),
    );
    let size = head.len() + items.iter().map(|i| i.len() + 1).sum::<usize>() + 2;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(head.as_bytes());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Upstream's items of a built-in list carry no kind or apiVersion
        // (the list's TypeMeta says it); custom resources keep theirs.
        match without_type_meta(item).filter(|_| r.custom.is_none()) {
            Some(rest) => {
                out.push(b'{');
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(item),
        }
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

/// An object's JSON after its leading `{"kind":"..","apiVersion":"..",`
/// (as built-ins are written, Go's field order), or `None` when it does not
/// start that way.
fn without_type_meta(item: &[u8]) -> Option<&[u8]> {
    fn string_field<'a>(b: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
        let rest = b.strip_prefix(name)?;
        // Kind and apiVersion hold no quotes or escapes.
        let end = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
        (rest[end] == b'"').then(|| &rest[end + 1..])
    }
    let rest = string_field(item, b"{\"kind\":\"")?;
    let rest = string_field(rest, b",\"apiVersion\":\"")?;
    rest.strip_prefix(b",")
}

pub(super) fn status_success(r: &Resource, obj: &[u8]) -> Bytes {
    let v: Value = serde_json::from_slice(obj).unwrap_or(json!({}));
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(meta::name(&v)));
    if !r.group.is_empty() {
        details.insert("group".into(), json!(r.group));
    }
    details.insert("kind".into(), json!(r.plural));
    details.insert("uid".into(), json!(meta::str_field(&v, "uid")));
    Bytes::from(crate::api::go_json::to_vec(
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
    ))
}
impl ResourceHandler {
    pub(super) fn written(
        &self,
        registry: &Registry,
        code: StatusCode,
        w: Written,
        output: Output,
    ) -> Response {
        let code = if w.created { StatusCode::CREATED } else { code };
        with_warnings(
            self.object_response(registry, code, w.object, output),
            &w.warnings,
        )
    }

    pub(super) fn object_response(
        &self,
        registry: &Registry,
        code: StatusCode,
        obj: Bytes,
        output: Output,
    ) -> Response {
        match output.transform {
            Transform::None => responses::object(code, obj, output.encoding),
            Transform::Table { include_object } => {
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                let rv = meta::str_field(&v, "resourceVersion").to_string();
                let t = table::table(registry, &[v], &rv, None, None, include_object);
                responses::object(code, t, output.encoding)
            }
            Transform::PartialObjectMetadata => {
                let v: Value = serde_json::from_slice(&obj).unwrap_or(json!({}));
                responses::value(code, &table::partial(&v), output.encoding)
            }
        }
    }

    pub(super) fn list_response(
        &self,
        registry: &Registry,
        list: crate::registry::ListOut,
        output: Output,
    ) -> Response {
        let r = &registry.resource;
        let cont = list.continue_token.as_deref();
        match (output.transform, output.encoding) {
            (Transform::None, Encoding::Protobuf) => responses::protobuf_list(
                &r.api_version(),
                &r.kind,
                &r.list_kind,
                &list_meta(list.resource_version, cont, list.remaining_item_count),
                &list.items,
                &list.cached,
            ),
            (Transform::None, encoding) => responses::object(
                StatusCode::OK,
                list_body(
                    r,
                    &list.items,
                    list.resource_version,
                    cont,
                    list.remaining_item_count,
                ),
                encoding,
            ),
            (Transform::Table { include_object }, encoding) => {
                let objs: Vec<Value> = list
                    .items
                    .iter()
                    .filter_map(|b| serde_json::from_slice(b).ok())
                    .collect();
                let t = table::table(
                    registry,
                    &objs,
                    &list.resource_version.to_string(),
                    cont,
                    list.remaining_item_count,
                    include_object,
                );
                responses::object(StatusCode::OK, t, encoding)
            }
            (Transform::PartialObjectMetadata, encoding) => {
                let items: Vec<Value> = list
                    .items
                    .iter()
                    .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
                    .map(|v| table::partial(&v))
                    .collect();
                let meta = list_meta(list.resource_version, cont, list.remaining_item_count);
                if encoding == Encoding::Protobuf {
                    let items: Vec<Bytes> = items
                        .iter()
                        .map(|v| Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
                        .collect();
                    return responses::protobuf_list(
                        "meta.k8s.io/v1",
                        "PartialObjectMetadata",
                        "PartialObjectMetadataList",
                        &meta,
                        &items,
                        &[],
                    );
                }
                let body = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items});
                responses::value(StatusCode::OK, &body, encoding)
            }
        }
    }
}
