//! The watch verb: a stream of events (JSON lines or protobuf frames)
//! until the timeout, the server's stop or the client's leaving; as Tables
//! when asked. Its own file because a watch is a long-running stream, not a
//! request and an answer.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{header, HeaderValue};
use serde_json::{json, Value};

use super::negotiation::{Encoding, Output, Transform};
use super::query::{parse_int_param, Query};
use super::{table, ResourceHandler};
use crate::api::request_info::RequestInfo;
use crate::api::ApiError;
use crate::registry::Registry;
use crate::storage::cacher::{json_watch_line, WatchMessage};

/// One watch event as the stream carries it: a JSON line, or a
/// length-prefixed protobuf `WatchEvent` frame.
fn watch_event(
    encoding: Encoding,
    event_type: &str,
    object: &Bytes,
) -> Result<Bytes, crate::api::protobuf::EncodeError> {
    if encoding != Encoding::Protobuf {
        return Ok(json_watch_line(event_type, object));
    }
    let v: Value = serde_json::from_slice(object).unwrap_or(Value::Null);
    let encoded = crate::api::protobuf::encode(&v)?;
    Ok(Bytes::from(crate::api::protobuf::watch_frame(
        event_type, &encoded,
    )))
}
/// A watch being served: its cache watcher, what ends it, and how its
/// events are written.
struct Watching<F> {
    rx: crate::storage::cacher::CacheWatch,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    stop: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    terminated: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    encode: F,
}

impl<F> Watching<F>
where
    F: FnMut(&WatchMessage) -> Option<Result<Bytes, crate::api::protobuf::EncodeError>>,
{
    /// The next event's bytes; `None` once the watch is over (its timeout,
    /// the server's stop, the cache cutting it off, or an event that
    /// cannot be written).
    async fn next_line(&mut self) -> Option<Bytes> {
        let msg = tokio::select! {
            _ = &mut self.deadline => return None,
            _ = &mut self.stop => return None,
            _ = &mut self.terminated => return None,
            m = self.rx.recv() => m?,
        };
        match (self.encode)(&msg)? {
            Ok(line) => Some(line),
            Err(e) => {
                tracing::warn!(error = %e, "a watch event could not be encoded; the watch ends");
                None
            }
        }
    }
}

impl ResourceHandler {
    pub(super) async fn watch(
        &self,
        registry: &Registry,
        info: &RequestInfo,
        q: &Query,
        output: Output,
    ) -> Result<Response, ApiError> {
        let params = q.list_params(true)?;
        let name = (!info.name.is_empty()).then_some(info.name.as_str());
        // A name from the path narrows the watch; one from a field selector is already in `params`.
        let path_name = if info.depth >= 2 { name } else { None };
        // upstream's ListResource: a watch of one named object takes no
        // field selector but one that requires that very name.
        if let (Some(n), Some(sel)) = (path_name, params.field_selector.as_deref()) {
            let selected = sel.split(',').find_map(|t| {
                t.trim()
                    .strip_prefix("metadata.name=")
                    .map(|v| v.trim_start_matches('='))
            });
            if !sel.trim().is_empty() && selected != Some(n) {
                return Err(ApiError::bad_request(
                    "fieldSelector metadata.name doesn't match requested name",
                ));
            }
        }
        // As upstream: 0 or absent means the default; a negative timeout has
        // already passed, so the watch ends at once.
        let timeout = match q.get("timeoutSeconds").map(parse_int_param).transpose()? {
            None | Some(0) => {
                let base = self.min_request_timeout.as_secs_f64();
                (base * (1.0 + rand::random::<f64>())) as u64
            }
            Some(t) if t < 0 => 0,
            Some(t) => t as u64,
        };
        // A timeout past what the clock can hold (a client may send
        // i64::MAX) is as good as never.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(Duration::from_secs(timeout))
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
        let rx = registry
            .watch(
                &info.namespace,
                path_name,
                &params,
                q.bool_param("sendInitialEvents"),
                q.bool_param("allowWatchBookmarks"),
                Some(deadline),
            )
            .await;
        let r = registry.resource.clone();
        let table_registry =
            (output.transform != Transform::None).then(|| registry.resource.clone());
        let encoding = output.encoding;
        let (api_version, item_kind) = (
            registry.resource.api_version(),
            registry.resource.kind.clone(),
        );
        let registries = self.registries.clone();
        let converting = crate::registry::conversion::needed(&registry.resource)
            .then(|| {
                registries.get(
                    &registry.resource.group,
                    &registry.resource.version,
                    &registry.resource.plural,
                )
            })
            .flatten();
        let bookmark = move |rv: i64, initial_end: bool| -> Bytes {
            // No `creationTimestamp: null` since v1.34 (omitzero).
            let mut meta = json!({"resourceVersion": rv.to_string()});
            if initial_end {
                meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            Bytes::from(crate::api::go_json::to_vec(
                &json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta}),
            ))
        };
        // The response body is the watch itself, polled by the HTTP
        // server as the client takes data: each event is encoded by the
        // task that writes the stream, with no task or channel of our own
        // between the cache and it. A client that stops reading is not
        // polled; its cache watcher fills and is cut off (see the cacher),
        // so a stalled watch holds no more than that watcher's buffer.
        let encode =
            move |msg: &WatchMessage| -> Option<Result<Bytes, crate::api::protobuf::EncodeError>> {
                Some(match (&table_registry, msg) {
                    (Some(res), WatchMessage::Event { kind, object, .. }) => {
                        let Some(reg) = registries.get(&res.group, &res.version, &res.plural)
                        else {
                            // The resource is gone (its CRD deleted): the watch ends.
                            return None;
                        };
                        let v: Value = serde_json::from_slice(&object.json).unwrap_or(json!({}));
                        let obj = match output.transform {
                            Transform::PartialObjectMetadata => {
                                Bytes::from(crate::api::go_json::to_vec(&table::partial(&v)))
                            }
                            _ => table::table(
                                &reg,
                                &[v],
                                &object.resource_version.to_string(),
                                None,
                                None,
                                true,
                            ),
                        };
                        watch_event(encoding, kind.as_str(), &obj)
                    }
                    // The message kept on the cached object serves
                    // every protobuf watcher and list.
                    (None, WatchMessage::Event { kind, object, .. })
                        if converting.is_none() && encoding == Encoding::Protobuf =>
                    {
                        let kept = object.protobuf.get_or_init(|| {
                            let v: Value =
                                serde_json::from_slice(&object.json).unwrap_or(Value::Null);
                            crate::api::protobuf::encode_kind_body(&api_version, &item_kind, &v)
                                .ok()
                                .map(Bytes::from)
                        });
                        match kept {
                            Some(body) => {
                                let enveloped =
                                    crate::api::protobuf::envelope(&api_version, &item_kind, body);
                                Ok(Bytes::from(crate::api::protobuf::watch_frame(
                                    kind.as_str(),
                                    &enveloped,
                                )))
                            }
                            None => watch_event(encoding, kind.as_str(), &object.json),
                        }
                    }
                    // One JSON line per event, shared by every
                    // watcher that gets it as this type: a thousand
                    // watchers hold one copy, not a thousand.
                    (
                        None,
                        WatchMessage::Event {
                            kind,
                            object,
                            lines,
                        },
                    ) if converting.is_none() => {
                        let encode = || json_watch_line(kind.as_str(), &object.json);
                        Ok(match lines {
                            Some(lines) => lines.get_or_encode(*kind, encode),
                            None => encode(),
                        })
                    }
                    (None, WatchMessage::Event { kind, object, .. }) => {
                        let served = converting.as_ref().map_or_else(
                            || object.json.clone(),
                            |reg| reg.served(object.json.clone()),
                        );
                        watch_event(encoding, kind.as_str(), &served)
                    }
                    (_, WatchMessage::Bookmark(rv)) => {
                        watch_event(encoding, "BOOKMARK", &bookmark(*rv, false))
                    }
                    (_, WatchMessage::InitialEventsEnd(rv)) => {
                        watch_event(encoding, "BOOKMARK", &bookmark(*rv, true))
                    }
                })
            };
        let stream: futures::stream::BoxStream<'static, Result<Bytes, std::io::Error>> = match rx {
            Err(e) if e.code == 410 => {
                // upstream answers an expired watch with one ERROR event, not an HTTP error.
                let frame = watch_event(encoding, "ERROR", &Bytes::from(e.status_json())).ok();
                Box::pin(futures::stream::iter(frame.map(Ok)))
            }
            Err(e) => return Err(e),
            Ok(rx) => {
                let state = Watching {
                    deadline: Box::pin(tokio::time::sleep_until(deadline)),
                    stop: Box::pin(self.stop.clone().cancelled_owned()),
                    // Cut off by the cache for falling behind: end now, so
                    // its stale backlog is neither sent nor kept.
                    terminated: Box::pin(rx.terminated().cancelled_owned()),
                    rx,
                    encode,
                };
                Box::pin(futures::stream::unfold(state, |mut st| async move {
                    let line = st.next_line().await?;
                    Some((Ok(line), st))
                }))
            }
        };
        let mut resp = Response::new(Body::from_stream(stream));
        let content_type = match encoding {
            Encoding::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
            _ => "application/json",
        };
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        resp.headers_mut().insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        Ok(resp)
    }
}
