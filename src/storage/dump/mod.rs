//! `kapi etcd dump`: the keys under a prefix with their revisions and
//! decoded values, from the embedded store or etcd, read page by page at
//! one revision and written out as they come (constant memory).
//!
//! Keys follow upstream's layout below the prefix (`/registry`):
//! `<path>/<namespace>/<name>` or `<path>/<name>`, where `<path>` is the
//! catalog's storage path of a resource (`pods`, `services/specs`,
//! `apiextensions.k8s.io/customresourcedefinitions`) or `<group>/<plural>`
//! for custom resources. Values are kapi's JSON, upstream's protobuf
//! envelope (`k8s\0`), or shown as undecodable.
//!
//! `source` opens the store, `layout` maps keys to resources and a filter
//! to key ranges (the `Plan`), `decode` turns each value into what is
//! shown (an `Entry`), and `print` writes entries out (the `Sink`s); the
//! read loop itself, [`dump`], is here.

mod decode;
mod layout;
mod print;
mod source;

#[cfg(test)]
mod tests;

use std::io;

use super::backend::{Backend, BackendError, RangeRequest};

pub use decode::{decode_value, Decoded, Entry};
pub use layout::{Filter, KeyInfo, KeyLayout, Plan};
pub use print::{JsonSink, KeysSink, Sink, TableSink, YamlSink};
pub use source::{open_data_dir, open_etcd, Source};

/// Keys read per request.
pub const PAGE_SIZE: i64 = 500;

/// Why a dump failed.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The flags do not make sense together (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The store could not be opened or read (exit code 1).
    #[error("{0}")]
    Storage(String),
    /// Writing the output failed (a closed pipe among others).
    #[error("writing output: {0}")]
    Output(#[from] io::Error),
}
/// What a dump did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub revision: i64,
    /// Keys written out (after the namespace and name checks).
    pub written: u64,
    /// Keys read.
    pub read: u64,
}

fn storage_error(e: BackendError, revision: i64) -> DumpError {
    DumpError::Storage(match e {
        BackendError::Compacted { compacted, .. } if compacted > 0 => {
            format!("--revision {revision}: compacted (the oldest revision kept is {compacted})")
        }
        BackendError::Compacted { .. } => format!("--revision {revision}: compacted"),
        BackendError::FutureRevision { current, .. } if current > 0 => {
            format!("--revision {revision}: the store is only at revision {current}")
        }
        BackendError::FutureRevision { .. } => {
            format!("--revision {revision}: a future revision")
        }
        other => other.to_string(),
    })
}

/// Reads the plan's ranges page by page (at most [`PAGE_SIZE`] keys held
/// at once), all at one revision (`revision`, or the latest when 0), and
/// hands each key that passes the filter to `sink`. With `want_total`,
/// [`Sink::progress`] learns how many keys each range holds (one extra
/// pass over the range on the embedded store); without, its total is 0.
pub async fn dump(
    backend: &dyn Backend,
    plan: &Plan,
    revision: i64,
    keys_only: bool,
    want_total: bool,
    sink: &mut dyn Sink,
) -> Result<Summary, DumpError> {
    let mut at = revision;
    let mut summary = Summary::default();
    let mut total = 0u64;
    let mut begun = false;
    for (start, end) in &plan.ranges {
        let mut from = start.clone();
        let mut first_page = true;
        loop {
            let resp = backend
                .range(RangeRequest {
                    start: from.clone(),
                    end: end.clone(),
                    revision: at,
                    limit: PAGE_SIZE,
                    // Counting the rest of the range on every page is
                    // quadratic on the embedded store: only the first page
                    // counts, and only when a total is wanted.
                    skip_count: !(first_page && want_total),
                })
                .await
                .map_err(|e| storage_error(e, revision))?;
            if !begun {
                // Later pages read at the same revision: one consistent view.
                at = resp.revision;
                summary.revision = at;
                sink.begin(at)?;
                begun = true;
            }
            if first_page {
                if want_total {
                    total += resp.count.max(0) as u64;
                }
                first_page = false;
            }
            for kv in &resp.kvs {
                summary.read += 1;
                let info = plan.layout.parse(&kv.key);
                if plan.accepts(&info) {
                    sink.entry(&Entry::new(kv, info, keys_only, plan.encryption.as_ref()))?;
                    summary.written += 1;
                }
            }
            sink.progress(summary.read, total);
            match resp.kvs.last() {
                Some(last) if resp.more => from = format!("{}\0", last.key),
                _ => break,
            }
        }
    }
    if !begun {
        let rev = if revision > 0 {
            revision
        } else {
            backend
                .current_revision()
                .await
                .map_err(|e| storage_error(e, revision))?
        };
        summary.revision = rev;
        sink.begin(rev)?;
    }
    sink.end()?;
    Ok(summary)
}
