//! The watch verb: a stream of events (JSON lines or protobuf frames)
//! until the timeout, the server's stop or the client's leaving; as Tables
//! when asked. Its own file because a watch is a long-running stream, not a
//! request and an answer.

use std::future::Future as _;
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
use crate::registry::{conversion, Registry};
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
/// events are written. A stream of its own rather than a `select!` per
/// event: one change to a thousand watchers is a thousand of these polls,
/// and each looks at its next event first and at what ends it only when
/// there is none (or every [`END_CHECK_EVERY`] events, so a watch flooded
/// with events still stops at its deadline).
struct Watching<F> {
    rx: crate::storage::cacher::CacheWatch,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    stop: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    stopping: tokio_util::sync::CancellationToken,
    encode: F,
    /// Events delivered since the end was last looked at.
    unchecked: u32,
    /// The waker the deadline and the stop were last polled with: they
    /// wake it when they come, so right after an event (the sender polls
    /// again at once for the next) they need only be looked at, not
    /// polled again.
    armed: Option<std::task::Waker>,
    just_delivered: bool,
    done: bool,
}

const END_CHECK_EVERY: u32 = 64;

impl<F> Watching<F> {
    /// Whether the timeout passed or the server is stopping (and if not,
    /// both wake this task when they come).
    fn ended(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        self.unchecked = 0;
        if !self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.armed = Some(cx.waker().clone());
        }
        self.deadline.as_mut().poll(cx).is_ready() || self.stop.as_mut().poll(cx).is_ready()
    }

    /// Whether the end needs polling on a poll that found no event: not
    /// when the last poll delivered one and the end already holds this
    /// task's waker, unless it has come (its wake-up may have gone to a
    /// poll that did not reach this stream, e.g. one waiting for flow
    /// control).
    fn may_have_ended(&mut self, cx: &std::task::Context<'_>) -> bool {
        !(std::mem::take(&mut self.just_delivered)
            && self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
            && !self.deadline.is_elapsed()
            && !self.stopping.is_cancelled())
    }
}

impl<F> futures::Stream for Watching<F>
where
    F: FnMut(&WatchMessage) -> Option<Result<Bytes, crate::api::protobuf::EncodeError>> + Unpin,
{
    type Item = Result<Bytes, std::io::Error>;

    /// The next event's bytes; `None` once the watch is over (its timeout,
    /// the server's stop, the cache cutting it off, or an event that
    /// cannot be written).
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.done || (this.unchecked >= END_CHECK_EVERY && this.ended(cx)) {
            this.done = true;
            return Poll::Ready(None);
        }
        let line = match this.rx.poll_recv(cx) {
            Poll::Pending if this.may_have_ended(cx) && this.ended(cx) => None,
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => None,
            Poll::Ready(Some(msg)) => {
                this.unchecked += 1;
                match (this.encode)(&msg) {
                    Some(Ok(line)) => Some(line),
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "a watch event could not be encoded; the watch ends");
                        None
                    }
                    None => None,
                }
            }
        };
        this.done = line.is_none();
        this.just_delivered = !this.done;
        Poll::Ready(line.map(Ok))
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
        // The default is spread over [min, 2*min) to the nanosecond, as
        // upstream's Duration (whole seconds would bunch watches together).
        let timeout = match q.get("timeoutSeconds").map(parse_int_param).transpose()? {
            None | Some(0) => self
                .min_request_timeout
                .mul_f64(1.0 + rand::random::<f64>()),
            Some(t) if t < 0 => Duration::ZERO,
            Some(t) => Duration::from_secs(t as u64),
        };
        // A timeout past what the clock can hold (a client may send
        // i64::MAX) is as good as never.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(timeout)
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
        // A custom resource's objects may be stored in another version
        // than this one (its CRD's storage version can change): each event
        // is looked at (`conversion::differs`). Defaults on read are not
        // applied to watch events: that would encode each event once per
        // watcher, not once for all of them.
        let converting = (conversion::needed(&registry.resource)
            || registry.resource.custom.is_some())
        .then(|| {
            registries.get(
                &registry.resource.group,
                &registry.resource.version,
                &registry.resource.plural,
            )
        })
        .flatten();
        // Bookmarks go through the transform as every object does: a
        // metadata-only watch gets PartialObjectMetadata ones, which its
        // client can decode.
        let (bookmark_kind, bookmark_version) = match output.transform {
            Transform::PartialObjectMetadata => (
                "PartialObjectMetadata".to_string(),
                "meta.k8s.io/v1".to_string(),
            ),
            _ => (r.kind.clone(), r.api_version()),
        };
        let bookmark = move |rv: i64, initial_end: bool| -> Bytes {
            // No `creationTimestamp: null` since v1.34 (omitzero).
            let mut meta = json!({"resourceVersion": rv.to_string()});
            if initial_end {
                meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            Bytes::from(crate::api::go_json::to_vec(
                &json!({"kind": bookmark_kind, "apiVersion": bookmark_version, "metadata": meta}),
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
                        if encoding == Encoding::Protobuf
                            && converting.as_ref().is_none_or(|reg| {
                                !conversion::differs(&reg.resource, &object.json)
                            }) =>
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
                    ) if converting
                        .as_ref()
                        .is_none_or(|reg| !conversion::differs(&reg.resource, &object.json)) =>
                    {
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
                let stopping = self.stop.child_token();
                Box::pin(Watching {
                    deadline: Box::pin(tokio::time::sleep_until(deadline)),
                    // A child of the server's token: asking whether it was
                    // cancelled locks the token's node, and a thousand watches
                    // asking the server's own would all take one lock.
                    stop: Box::pin(stopping.clone().cancelled_owned()),
                    stopping,
                    rx,
                    encode,
                    unchecked: 0,
                    armed: None,
                    just_delivered: false,
                    done: false,
                })
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use bytes::Bytes;
    use futures::{FutureExt as _, StreamExt as _};
    use tokio_util::sync::CancellationToken;

    use super::{Watching, END_CHECK_EVERY};
    use crate::storage::cache_watch::{channel, WatchSender};
    use crate::storage::cacher::WatchMessage;

    type Encode = fn(&WatchMessage) -> Option<Result<Bytes, crate::api::protobuf::EncodeError>>;

    struct Setup {
        tx: WatchSender,
        stop: CancellationToken,
        terminated: Arc<AtomicBool>,
        watching: Watching<Encode>,
    }

    fn setup(timeout: Duration) -> Setup {
        let stop = CancellationToken::new();
        let terminated = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel(4 * END_CHECK_EVERY as usize, terminated.clone());
        let encode: Encode = |m| match m {
            WatchMessage::Bookmark(rv) => Some(Ok(Bytes::from(rv.to_string()))),
            _ => None,
        };
        let watching = Watching {
            rx,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            stop: Box::pin(stop.clone().cancelled_owned()),
            stopping: stop.clone(),
            encode,
            unchecked: 0,
            armed: None,
            just_delivered: false,
            done: false,
        };
        Setup {
            tx,
            stop,
            terminated,
            watching,
        }
    }

    /// Everything the stream gives without waiting, and whether it ended.
    fn drain(w: &mut Watching<Encode>) -> (Vec<Bytes>, bool) {
        let mut got = Vec::new();
        loop {
            match w.next().now_or_never() {
                Some(Some(Ok(b))) => got.push(b),
                Some(Some(Err(e))) => panic!("{e}"),
                Some(None) => return (got, true),
                None => return (got, false),
            }
        }
    }

    /// A deadline this close has passed once [`past_it`] returns.
    const SOON: Duration = Duration::from_millis(20);

    async fn past_it() {
        tokio::time::sleep(SOON * 5).await;
    }

    #[tokio::test]
    async fn events_flow_until_something_ends_it() {
        let mut s = setup(Duration::from_secs(600));
        for rv in 1..=3 {
            s.tx.send(WatchMessage::Bookmark(rv)).await.unwrap();
        }
        let (got, ended) = drain(&mut s.watching);
        assert_eq!(got, vec!["1", "2", "3"]);
        assert!(!ended, "nothing has ended it yet");
        s.tx.send(WatchMessage::Bookmark(4)).await.unwrap();
        assert_eq!(drain(&mut s.watching), (vec![Bytes::from("4")], false));
    }

    #[tokio::test]
    async fn its_deadline_ends_it() {
        let mut s = setup(SOON);
        assert_eq!(drain(&mut s.watching), (vec![], false));
        past_it().await;
        assert_eq!(drain(&mut s.watching), (vec![], true));
    }

    #[tokio::test]
    async fn a_deadline_that_came_while_the_stream_was_not_polled_ends_it() {
        // The last poll delivered an event (so the next one would skip
        // polling the deadline); the deadline's wake-up then went to a
        // poll that never reached the stream (HTTP/2 flow control).
        let mut s = setup(SOON);
        s.tx.send(WatchMessage::Bookmark(1)).await.unwrap();
        let (got, _) = drain(&mut s.watching);
        assert_eq!(got.len(), 1);
        s.tx.send(WatchMessage::Bookmark(2)).await.unwrap();
        assert!(matches!(
            s.watching.next().now_or_never(),
            Some(Some(Ok(_)))
        ));
        past_it().await;
        assert_eq!(drain(&mut s.watching), (vec![], true));
    }

    #[tokio::test]
    async fn a_flood_of_events_does_not_hold_off_the_deadline() {
        let mut s = setup(SOON);
        assert_eq!(drain(&mut s.watching), (vec![], false));
        for rv in 0..3 * END_CHECK_EVERY as i64 {
            s.tx.send(WatchMessage::Bookmark(rv)).await.unwrap();
        }
        past_it().await;
        let (got, ended) = drain(&mut s.watching);
        assert!(ended);
        assert!(
            got.len() <= END_CHECK_EVERY as usize,
            "{} events after the deadline",
            got.len()
        );
    }

    #[tokio::test]
    async fn the_servers_stop_ends_it() {
        let mut s = setup(Duration::from_secs(600));
        s.tx.send(WatchMessage::Bookmark(1)).await.unwrap();
        assert_eq!(drain(&mut s.watching).0.len(), 1);
        s.stop.cancel();
        assert_eq!(drain(&mut s.watching), (vec![], true));
    }

    #[tokio::test]
    async fn a_watcher_cut_off_by_the_cache_drops_its_backlog() {
        let mut s = setup(Duration::from_secs(600));
        for rv in 1..=5 {
            s.tx.send(WatchMessage::Bookmark(rv)).await.unwrap();
        }
        s.terminated.store(true, Ordering::Release);
        drop(s.tx);
        assert_eq!(drain(&mut s.watching), (vec![], true));
    }

    #[tokio::test]
    async fn an_event_that_cannot_be_written_ends_it() {
        let mut s = setup(Duration::from_secs(600));
        s.tx.send(WatchMessage::Bookmark(1)).await.unwrap();
        s.tx.send(WatchMessage::InitialEventsEnd(2)).await.unwrap();
        s.tx.send(WatchMessage::Bookmark(3)).await.unwrap();
        let (got, ended) = drain(&mut s.watching);
        assert_eq!((got, ended), (vec![Bytes::from("1")], true));
    }
}
