//! Reading a raw `?watch=true` answer line by line, as a client does:
//! one JSON event per line, with a bound on every wait.

use std::time::Duration;

pub struct WatchLines {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

/// What the next read of a watch stream gave.
#[derive(Debug)]
pub enum Next {
    Event(serde_json::Value),
    /// The server ended the stream.
    End,
    /// Nothing arrived within the wait.
    Idle,
    /// A transport error, or a line that is not JSON.
    Failed(String),
}

impl WatchLines {
    pub fn new(resp: reqwest::Response) -> WatchLines {
        WatchLines {
            resp,
            buf: Vec::new(),
        }
    }

    fn take_line(&mut self) -> Option<Vec<u8>> {
        let pos = self.buf.iter().position(|b| *b == b'\n')?;
        let line: Vec<u8> = self.buf.drain(..=pos).collect();
        Some(line)
    }

    fn parse(line: &[u8]) -> Next {
        match serde_json::from_slice(line) {
            Ok(v) => Next::Event(v),
            Err(e) => Next::Failed(format!(
                "watch line is not JSON ({e}): {}",
                String::from_utf8_lossy(&line[..line.len().min(300)])
            )),
        }
    }

    /// The next event, waiting at most `wait` for more bytes.
    pub async fn next(&mut self, wait: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(line) = self.take_line() {
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                return Self::parse(&line);
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Err(_) => return Next::Idle,
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Ok(None)) => {
                    if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
                        return Next::End;
                    }
                    let rest = std::mem::take(&mut self.buf);
                    return Self::parse(&rest);
                }
                Ok(Err(e)) => return Next::Failed(format!("watch stream broke: {e}")),
            }
        }
    }
}

/// `metadata.resourceVersion` of an object (or of a list) as a number.
pub fn rv_of(v: &serde_json::Value) -> Option<i64> {
    v["metadata"]["resourceVersion"].as_str()?.parse().ok()
}

/// Event lines (`...}\n`) ending in `bytes`, given the byte before them.
/// The search runs in the regex crate, built optimized even in a debug
/// build: a byte-by-byte loop in a test would make the test the
/// bottleneck when hundreds of MiB are read.
pub fn count_event_ends(prev: u8, bytes: &[u8]) -> usize {
    static END: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    let re = END.get_or_init(|| regex::bytes::Regex::new(r"\}\n").expect("regex"));
    usize::from(prev == b'}' && bytes.first() == Some(&b'\n')) + re.find_iter(bytes).count()
}
