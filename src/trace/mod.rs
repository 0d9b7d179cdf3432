//! Request tracing for `kapi trace-request`: one request's walk through the
//! chain (authentication, authorization, decode, defaulting, admission per
//! plugin, validation, storage, encode), recorded stage by stage.
//!
//! A request asks for a trace with the [`REQUEST_HEADER`]; the trace filter
//! then runs the rest of the chain inside a task-local [`Trace`] and returns
//! the stages, as base64 JSON, in the [`RESPONSE_HEADER`]. Code on the path
//! records a stage with [`start`] and [`stage`]; without a trace both cost
//! one task-local lookup and build nothing.

pub mod client;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

/// Set (to anything) on a request to have it traced.
pub const REQUEST_HEADER: &str = "x-kapi-trace";
/// The recorded stages, base64 of a JSON [`Report`].
pub const RESPONSE_HEADER: &str = "kapi-trace";

/// A stage's detail is cut to this many bytes of JSON so the response
/// header stays well under what HTTP clients accept.
const MAX_DETAIL_BYTES: usize = 8 * 1024;

/// One step of a request's path through the server.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Stage {
    pub name: String,
    /// Time spent in the stage, counted from the end of the one before.
    pub micros: u64,
    /// "ok", "error" or "skipped".
    pub outcome: String,
    pub detail: Value,
}

/// What the server returns in the response header.
#[derive(Debug, Clone, Serialize, serde::Deserialize, Default)]
pub struct Report {
    pub stages: Vec<Stage>,
    pub total_micros: u64,
}

/// The stages of the request being served.
#[derive(Debug)]
pub struct Trace {
    started: Instant,
    stages: Mutex<Vec<Stage>>,
    /// When the last stage ended: a stage's time runs from there, so the
    /// stages add up to the total (work between two traced steps counts
    /// for the later one).
    last_end: Mutex<Instant>,
}

tokio::task_local! {
    static CURRENT: Arc<Trace>;
    /// Set around the read a GET or LIST asks for, so the reads admission
    /// and the strategies make on the way are not shown as the request's.
    static REQUEST_READ: ();
}

impl Trace {
    pub fn new() -> Arc<Trace> {
        let now = Instant::now();
        Arc::new(Trace {
            started: now,
            stages: Mutex::new(Vec::new()),
            last_end: Mutex::new(now),
        })
    }

    /// Runs `fut` with this trace as the current one.
    pub async fn scope<F: std::future::Future>(self: &Arc<Self>, fut: F) -> F::Output {
        CURRENT.scope(self.clone(), fut).await
    }

    /// The stages so far; the total runs to the end of the last one, so
    /// the stages add up to it.
    pub fn report(&self) -> Report {
        let end = self.last_end.lock().map(|l| *l).unwrap_or(self.started);
        Report {
            stages: self.stages.lock().map(|s| s.clone()).unwrap_or_default(),
            total_micros: end.saturating_duration_since(self.started).as_micros() as u64,
        }
    }

    /// The report as the response header carries it.
    pub fn header_value(&self) -> String {
        use base64::Engine as _;
        let json = serde_json::to_vec(&self.report()).unwrap_or_default();
        base64::engine::general_purpose::STANDARD.encode(json)
    }
}

/// Whether the current request is traced.
pub fn active() -> bool {
    CURRENT.try_with(|_| ()).is_ok()
}

/// When a stage began, if the request is traced.
pub fn start() -> Option<Instant> {
    active().then(Instant::now)
}

/// Runs `fut`, the read the request asked for; its storage and encode
/// stages are recorded ([`start_read`]).
pub async fn request_read<F: std::future::Future>(fut: F) -> F::Output {
    if active() {
        REQUEST_READ.scope((), fut).await
    } else {
        fut.await
    }
}

/// [`start`] for the stages of a read: only inside [`request_read`].
pub fn start_read() -> Option<Instant> {
    (active() && REQUEST_READ.try_with(|_| ()).is_ok()).then(Instant::now)
}

/// Records a stage that ends now (`began`, from [`start`], only says the
/// request is traced); `detail` runs only when it is.
pub fn stage(began: Option<Instant>, name: &str, outcome: &str, detail: impl FnOnce() -> Value) {
    if began.is_none() {
        return;
    }
    let _ = CURRENT.try_with(|t| {
        let now = Instant::now();
        let micros = match t.last_end.lock() {
            Ok(mut last) => {
                let since = now.saturating_duration_since(*last);
                *last = now;
                since.as_micros() as u64
            }
            Err(_) => 0,
        };
        let mut detail = detail();
        if let Ok(s) = serde_json::to_string(&detail) {
            if s.len() > MAX_DETAIL_BYTES {
                let cut: String = s.chars().take(MAX_DETAIL_BYTES).collect();
                detail = Value::String(format!("{cut}... (cut at {MAX_DETAIL_BYTES} bytes)"));
            }
        }
        if let Ok(mut stages) = t.stages.lock() {
            stages.push(Stage {
                name: name.to_string(),
                micros,
                outcome: outcome.to_string(),
                detail,
            });
        }
    });
}

/// Records a stage whose result is `r`: "ok", or "error" with the message.
pub fn result<T, E: std::fmt::Display>(
    began: Option<Instant>,
    name: &str,
    r: &Result<T, E>,
    detail: impl FnOnce() -> Value,
) {
    match r {
        Ok(_) => stage(began, name, "ok", detail),
        Err(e) => {
            let msg = e.to_string();
            stage(
                began,
                name,
                "error",
                move || serde_json::json!({"error": msg}),
            )
        }
    }
}

/// The JSON patch from `before` to `after`: what a stage changed.
pub fn diff(before: &Value, after: &Value) -> Value {
    serde_json::to_value(json_patch::diff(before, after)).unwrap_or(Value::Null)
}

/// Decodes a [`RESPONSE_HEADER`] value.
pub fn parse_header(value: &str) -> Result<Report, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .map_err(|e| format!("the {RESPONSE_HEADER} header is not base64: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("the {RESPONSE_HEADER} header: {e}"))
}
