//! Logs as kube-apiserver writes them: `-v` sets how much, text for a
//! person (colour only on a terminal) or JSON lines (`--logging-format=json`,
//! component-base's keys: `ts`, `caller`, `msg`, `v`), and the request log
//! of upstream's httplog at `-v 3`. A warning that repeats (every watch
//! cache during an etcd outage) is written once per window with a count of
//! the ones held back, so an outage is a few lines, not hundreds.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The target of the request log; on from `-v 3`, as upstream's httplog.
pub const HTTPLOG: &str = "httplog";

/// `--logging-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;

    /// component-base's words for a format it does not know.
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "format: Unsupported value: {}: supported values: \"json\", \"text\"",
                crate::api::go_quote(other)
            )),
        }
    }
}

/// What `-v N` turns on. `RUST_LOG` still wins, for kapi's own developers.
pub fn filter_for(verbosity: u8) -> &'static str {
    match verbosity {
        0 | 1 => "info,httplog=off",
        2 => "info,kapi=debug,httplog=off",
        3 => "info,kapi=debug,httplog=info",
        // The HTTP and TLS libraries' frame-by-frame logs are not kapi's story.
        _ => "debug,kapi=trace,httplog=info,rustls=info,h2=info,hyper=info,hyper_util=info,tower=info,tonic=info",
    }
}

type FilterHandle =
    tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, tracing_subscriber::Registry>;

/// The installed logger's filter, swapped by `PUT /debug/flags/v`.
static FILTER: std::sync::OnceLock<FilterHandle> = std::sync::OnceLock::new();

/// Installs the process's logger on standard error. A second call (a test
/// that starts several servers) keeps the first.
pub fn init(verbosity: u8, format: Format) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(filter_for(verbosity)));
    let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
    let registry = tracing_subscriber::registry().with(filter);
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let installed = match format {
        Format::Text => registry
            .with(
                layer
                    .with_target(false)
                    // Colour only for a person at a terminal, never into a log file.
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
            )
            .try_init(),
        Format::Json => registry.with(layer.event_format(Json)).try_init(),
    };
    if installed.is_ok() {
        let _ = FILTER.set(handle);
    }
}

/// `PUT /debug/flags/v` with `value` as its body: klog's `Level.Set`
/// (a base-10 uint32, nothing around it), then the filter `-v N` picks.
/// The answers are component-base's `GlogSetter`'s.
pub fn set_verbosity(value: &str) -> Result<String, String> {
    let level = parse_uint32(value)
        .map_err(|e| format!("failed set klog.logging.verbosity {value}: {e}"))?;
    if let Some(handle) = FILTER.get() {
        let filter = tracing_subscriber::EnvFilter::new(filter_for(level.min(255) as u8));
        handle
            .reload(filter)
            .map_err(|e| format!("failed set klog.logging.verbosity {value}: {e}"))?;
    }
    Ok(format!(
        "successfully set klog.logging.verbosity to {value}"
    ))
}

/// Go's `strconv.ParseUint(s, 10, 32)`, with its error text.
fn parse_uint32(s: &str) -> Result<u32, String> {
    let quoted = crate::api::go_quote(s);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseUint: parsing {quoted}: invalid syntax"
        ));
    }
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {quoted}: value out of range"))
}

/// One JSON object per line, with component-base's keys first.
struct Json;

impl<S, N> FormatEvent<S, N> for Json
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        // component-base's keys first, in its order; then the fields.
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        let mut text = format!("{{\"ts\":{ts}");
        let mut put = |k: &str, v: serde_json::Value| {
            let _ = write!(text, ",{}:{v}", serde_json::Value::from(k));
        };
        if let (Some(file), Some(n)) = (meta.file(), meta.line()) {
            let file = file.rsplit('/').next().unwrap_or(file);
            put("caller", format!("{file}:{n}").into());
        }
        put("msg", std::mem::take(&mut fields.message).into());
        // klog's levels: errors carry `err`, everything else a verbosity.
        match *meta.level() {
            Level::ERROR => {}
            Level::WARN | Level::INFO => put("v", 0.into()),
            Level::DEBUG => put("v", 2.into()),
            Level::TRACE => put("v", 5.into()),
        }
        for (k, v) in fields.rest {
            put(if k == "error" { "err" } else { &k }, v);
        }
        text.push('}');
        writeln!(w, "{text}")
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    rest: Vec<(String, serde_json::Value)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.rest.push((field.name().to_string(), value.into()));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.rest.push((field.name().to_string(), value.into()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.rest.push((field.name().to_string(), value.into()));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.rest.push((field.name().to_string(), value.into()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // `%x` fields arrive here too, already in their Display form; a
        // `?string` (quoted for the text format) is unquoted again.
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
            if let Ok(unquoted) = serde_json::from_str::<String>(&text) {
                text = unquoted;
            }
        }
        if field.name() == "message" {
            self.message = text;
        } else {
            self.rest.push((field.name().to_string(), text.into()));
        }
    }
}

/// How long a repeated warning stays quiet after it was written.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(10);

struct Window {
    opened: Instant,
    held_back: u64,
}

static WINDOWS: parking_lot::Mutex<Option<HashMap<&'static str, Window>>> =
    parking_lot::Mutex::new(None);

/// Whether a warning of kind `key` is written now: `Some(n)` with the
/// number held back since the last one written, `None` while its window
/// is open.
pub fn admit(key: &'static str) -> Option<u64> {
    admit_at(key, Instant::now())
}

fn admit_at(key: &'static str, now: Instant) -> Option<u64> {
    let mut windows = WINDOWS.lock();
    let windows = windows.get_or_insert_with(HashMap::new);
    match windows.get_mut(key) {
        Some(w) if now.duration_since(w.opened) < REPEAT_WINDOW => {
            w.held_back += 1;
            None
        }
        Some(w) => {
            let held = std::mem::take(&mut w.held_back);
            w.opened = now;
            Some(held)
        }
        None => {
            windows.insert(
                key,
                Window {
                    opened: now,
                    held_back: 0,
                },
            );
            Some(0)
        }
    }
}

/// `tracing::warn!` for warnings that repeat: at most one line per
/// [`REPEAT_WINDOW`] per key, carrying `repeated` (how many were held back)
/// when any were.
#[macro_export]
macro_rules! warn_limited {
    ($key:expr, $($rest:tt)+) => {
        match $crate::logs::admit($key) {
            Some(0) => ::tracing::warn!($($rest)+),
            Some(n) => ::tracing::warn!(repeated = n, $($rest)+),
            None => {}
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_values_are_parsed_as_klog_parses_them() {
        assert_eq!(parse_uint32("5"), Ok(5));
        assert_eq!(
            parse_uint32("5\n"),
            Err("strconv.ParseUint: parsing \"5\\n\": invalid syntax".into())
        );
        assert_eq!(
            parse_uint32("-1"),
            Err("strconv.ParseUint: parsing \"-1\": invalid syntax".into())
        );
        assert_eq!(
            parse_uint32("4294967296"),
            Err("strconv.ParseUint: parsing \"4294967296\": value out of range".into())
        );
        assert_eq!(
            set_verbosity("x"),
            Err("failed set klog.logging.verbosity x: strconv.ParseUint: parsing \"x\": invalid syntax".into())
        );
    }

    #[test]
    fn a_repeated_warning_is_written_once_per_window_with_a_count() {
        let t0 = Instant::now();
        let key = "logs-test-window";
        assert_eq!(admit_at(key, t0), Some(0));
        for i in 1..=55 {
            assert_eq!(admit_at(key, t0 + Duration::from_millis(i)), None);
        }
        assert_eq!(admit_at(key, t0 + REPEAT_WINDOW), Some(55));
        assert_eq!(admit_at(key, t0 + REPEAT_WINDOW * 2), Some(0));
    }

    #[test]
    fn logging_formats_parse_as_component_base_names_them() {
        assert_eq!("json".parse::<Format>(), Ok(Format::Json));
        assert_eq!(
            "xml".parse::<Format>().unwrap_err(),
            "format: Unsupported value: \"xml\": supported values: \"json\", \"text\""
        );
    }
}
