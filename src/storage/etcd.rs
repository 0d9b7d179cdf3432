//! The etcd v3 backend, through `etcd-client`: transactions comparing mod
//! revision, ranges at a revision, watches with previous values. Several
//! endpoints form one balanced channel, so a member that goes away is
//! routed around.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, ConnectOptions, EventType, GetOptions, Txn,
    TxnOp, TxnOpResponse, WatchOptions,
};
use tokio::sync::{mpsc, oneshot};

use super::backend::{
    prefix_end, Backend, BackendError, Event, EventKind, KeyValue, RangeRequest, RangeResponse,
    TxnOutcome, WatchItem, WatchReceiver,
};

/// How to reach etcd.
#[derive(Debug, Clone, Default)]
pub struct EtcdConfig {
    pub endpoints: Vec<String>,
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

/// The largest answer kapi takes from etcd: upstream's client allows
/// `math.MaxInt32`, so an unpaged list of many MiB is served, not refused
/// by gRPC's 4 MiB default.
const MAX_RECEIVE_BYTES: usize = i32::MAX as usize;
/// upstream's etcd dial timeout, for connecting and the first answer.
const DIAL_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Etcd {
    client: Client,
    /// Single-key reads, gathered into one read-only transaction
    /// ([`gather_reads`]).
    reads: mpsc::UnboundedSender<PendingGet>,
    /// Reads and transactions, with the receive limit raised.
    kv: etcd_client::KvClient,
    watch: etcd_client::WatchClient,
    /// A key read to learn the current revision cheaply.
    probe_key: String,
    compacted: AtomicI64,
    /// `--etcd-servers`, named in every unavailability.
    endpoints: std::sync::Arc<str>,
}

/// The error as a backend error; unavailability names the endpoints, as
/// the line a user reads must say which etcd did not answer.
fn classify(endpoints: &str, e: etcd_client::Error) -> BackendError {
    let text = e.to_string();
    if text.contains("required revision has been compacted") {
        BackendError::Compacted {
            requested: 0,
            compacted: 0,
        }
    } else if text.contains("request is too large") {
        BackendError::RequestTooLarge
    } else if text.contains("required revision is a future revision") {
        BackendError::FutureRevision {
            requested: 0,
            current: 0,
        }
    } else {
        BackendError::Unavailable(format!("etcd {endpoints}: {}", plain(&e)))
    }
}

/// The error in words: gRPC's message and the causes beneath it
/// (`tcp connect error: Connection refused (os error 111)`), not the
/// transport's debug dump.
fn plain(e: &etcd_client::Error) -> String {
    let etcd_client::Error::GRpcStatus(status) = e else {
        return e.to_string();
    };
    let mut parts: Vec<String> = Vec::new();
    if !status.message().is_empty() {
        parts.push(status.message().to_string());
    }
    let mut cause = std::error::Error::source(status);
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cause = c.source();
    }
    if parts.is_empty() {
        parts.push(status.code().description().to_string());
    }
    parts.join(": ")
}

fn convert(kv: &etcd_client::KeyValue) -> KeyValue {
    KeyValue {
        key: String::from_utf8_lossy(kv.key()).into_owned(),
        value: Bytes::copy_from_slice(kv.value()),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
        version: kv.version(),
        stale: false,
    }
}

/// etcd's default `--max-txn-ops`: the most reads one transaction carries.
const MAX_TXN_OPS: usize = 128;

type GetResult = Result<(Option<KeyValue>, i64), BackendError>;

/// A get waiting for the next gathered read.
struct PendingGet {
    key: String,
    done: oneshot::Sender<GetResult>,
}

/// Sends the gets that wait, together: each transaction carries every get
/// queued when it goes out (up to `MAX_TXN_OPS`), as `Range` operations
/// of one read-only `Txn`. etcd answers such a transaction as one
/// linearizable read at one revision, without a raft proposal, so 32
/// concurrent GETs cost etcd one read instead of 32. A get only ever joins
/// a transaction sent after it was queued, so it still sees every write
/// acknowledged before it began, as a `Range` of its own would.
async fn gather_reads(
    mut kv: etcd_client::KvClient,
    endpoints: std::sync::Arc<str>,
    mut queued: mpsc::UnboundedReceiver<PendingGet>,
) {
    while let Some(first) = queued.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_TXN_OPS {
            match queued.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        // A get whose caller went away (a cancelled request) is not sent.
        batch.retain(|p| !p.done.is_closed());
        if batch.is_empty() {
            continue;
        }
        let ops: Vec<TxnOp> = batch
            .iter()
            .map(|p| TxnOp::get(p.key.as_str(), None))
            .collect();
        match kv.txn(Txn::new().and_then(ops)).await {
            Ok(resp) => {
                let revision = resp.header().map_or(0, |h| h.revision());
                let mut found = resp.op_responses().into_iter();
                for p in batch {
                    let kv = match found.next() {
                        Some(TxnOpResponse::Get(g)) => g.kvs().first().map(convert),
                        _ => None,
                    };
                    let _ = p.done.send(Ok((kv, revision)));
                }
            }
            Err(e) => {
                let err = classify(&endpoints, e);
                for p in batch {
                    let _ = p.done.send(Err(err.clone()));
                }
            }
        }
    }
}

/// Reads are idempotent: when the member a read went to is gone, the
/// balanced channel sends the next try to another one.
const READ_ATTEMPTS: usize = 5;

async fn retry_read<T, F, Fut>(mut f: F) -> Result<T, BackendError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, BackendError>>,
{
    let mut last = None;
    for attempt in 0..READ_ATTEMPTS {
        match f().await {
            Err(BackendError::Unavailable(m)) => {
                last = Some(BackendError::Unavailable(m));
                tokio::time::sleep(Duration::from_millis(50 * (attempt as u64 + 1))).await;
            }
            other => return other,
        }
    }
    Err(last.unwrap_or_else(|| BackendError::Unavailable("etcd read failed".into())))
}

impl Etcd {
    pub async fn connect(cfg: &EtcdConfig, prefix: &str) -> Result<Etcd, BackendError> {
        let mut opts = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_keep_alive(Duration::from_secs(10), Duration::from_secs(5))
            .with_keep_alive_while_idle(true)
            .with_require_leader(true);
        if cfg.ca_file.is_some() || cfg.cert_file.is_some() {
            let mut tls = etcd_client::TlsOptions::new();
            if let Some(ca) = &cfg.ca_file {
                let pem = std::fs::read(ca).map_err(|e| {
                    BackendError::Unavailable(format!("--etcd-cafile {}: {e}", ca.display()))
                })?;
                tls = tls.ca_certificate(etcd_client::Certificate::from_pem(pem));
            }
            if let (Some(c), Some(k)) = (&cfg.cert_file, &cfg.key_file) {
                let cert = std::fs::read(c).map_err(|e| {
                    BackendError::Unavailable(format!("--etcd-certfile {}: {e}", c.display()))
                })?;
                let key = std::fs::read(k).map_err(|e| {
                    BackendError::Unavailable(format!("--etcd-keyfile {}: {e}", k.display()))
                })?;
                tls = tls.identity(etcd_client::Identity::from_pem(cert, key));
            }
            opts = opts.with_tls(tls);
        }
        let endpoints = cfg.endpoints.join(",");
        // An endpoint that accepts connections and never answers (not an
        // etcd, or a hung one) must not hold the start forever: upstream's
        // dial timeout.
        let connecting = async {
            let client = Client::connect(&cfg.endpoints, Some(opts))
                .await
                .map_err(|e| {
                    BackendError::Unavailable(format!("etcd {}: {e}", cfg.endpoints.join(",")))
                })?;
            let kv = client
                .kv_client()
                .max_decoding_message_size(MAX_RECEIVE_BYTES);
            let endpoints: std::sync::Arc<str> = endpoints.clone().into();
            let (reads, queued) = mpsc::unbounded_channel();
            tokio::spawn(gather_reads(kv.clone(), endpoints.clone(), queued));
            let etcd = Etcd {
                reads,
                kv,
                watch: client
                    .watch_client()
                    .max_decoding_message_size(MAX_RECEIVE_BYTES),
                client,
                probe_key: format!("{prefix}/"),
                compacted: AtomicI64::new(0),
                endpoints,
            };
            // Fail at start, with the endpoints named, rather than on the first request.
            etcd.current_revision().await?;
            Ok::<Etcd, BackendError>(etcd)
        };
        match tokio::time::timeout(DIAL_TIMEOUT, connecting).await {
            Ok(r) => r,
            Err(_) => Err(BackendError::Unavailable(format!(
                "etcd {endpoints}: no answer within {}s (is an etcd listening there?)",
                DIAL_TIMEOUT.as_secs()
            ))),
        }
    }

    fn outcome(resp: etcd_client::TxnResponse) -> TxnOutcome {
        let revision = resp.header().map_or(0, |h| h.revision());
        if resp.succeeded() {
            return TxnOutcome::Applied { revision };
        }
        let current = resp.op_responses().into_iter().find_map(|op| match op {
            TxnOpResponse::Get(g) => g.kvs().first().map(convert),
            _ => None,
        });
        TxnOutcome::Failed { current }
    }

    async fn cas(&self, key: &str, expected: i64, op: TxnOp) -> Result<TxnOutcome, BackendError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(key, CompareOp::Equal, expected)])
            .and_then([op])
            .or_else([TxnOp::get(key, None)]);
        let resp = self
            .kv
            .clone()
            .txn(txn)
            .await
            .map_err(|e| classify(&self.endpoints, e))?;
        Ok(Self::outcome(resp))
    }
}

#[async_trait::async_trait]
impl Backend for Etcd {
    fn name(&self) -> &'static str {
        "etcd"
    }

    fn progress_is_reliable(&self) -> bool {
        false
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        retry_read(|| async {
            let (done, answer) = oneshot::channel();
            let gone =
                || BackendError::Unavailable(format!("etcd {}: client closed", self.endpoints));
            self.reads
                .send(PendingGet {
                    key: key.to_string(),
                    done,
                })
                .map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
        .await
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError> {
        let mut opts = GetOptions::new().with_range(req.end.as_bytes().to_vec());
        if req.revision > 0 {
            opts = opts.with_revision(req.revision);
        }
        if req.limit > 0 {
            opts = opts.with_limit(req.limit);
        }
        let resp = retry_read(|| {
            let (mut c, opts) = (self.kv.clone(), opts.clone());
            let start = req.start.as_bytes().to_vec();
            async move {
                c.get(start, Some(opts))
                    .await
                    .map_err(|e| classify(&self.endpoints, e))
            }
        })
        .await
        .map_err(|e| match e {
            BackendError::Compacted { .. } => BackendError::Compacted {
                requested: req.revision,
                compacted: self.compacted.load(Ordering::Acquire),
            },
            BackendError::FutureRevision { .. } => BackendError::FutureRevision {
                requested: req.revision,
                current: 0,
            },
            other => other,
        })?;
        let header_rev = resp.header().map_or(0, |h| h.revision());
        Ok(RangeResponse {
            kvs: resp.kvs().iter().map(convert).collect(),
            more: resp.more(),
            count: resp.count(),
            revision: if req.revision > 0 {
                req.revision
            } else {
                header_rev
            },
        })
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError> {
        self.cas(key, 0, TxnOp::put(key, value.to_vec(), None))
            .await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.cas(
            key,
            expected_mod_revision,
            TxnOp::put(key, value.to_vec(), None),
        )
        .await
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.cas(key, expected_mod_revision, TxnOp::delete(key, None))
            .await
    }

    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError> {
        let mut opts = WatchOptions::new()
            .with_range(prefix_end(prefix).into_bytes())
            .with_prev_key();
        if from_revision > 0 {
            opts = opts.with_start_revision(from_revision);
        }
        let mut stream = self
            .watch
            .clone()
            .watch(prefix.as_bytes().to_vec(), Some(opts))
            .await
            .map_err(|e| classify(&self.endpoints, e))?;
        let (tx, rx) = mpsc::channel(1024);
        let (progress, mut progress_requests) = mpsc::channel::<()>(1);
        let endpoints = self.endpoints.clone();
        tokio::spawn(async move {
            loop {
                let msg = tokio::select! {
                    m = stream.message() => m,
                    _ = tx.closed() => return,
                    Some(()) = progress_requests.recv() => {
                        if let Err(e) = stream.request_progress().await {
                            let _ = tx.send(Err(classify(&endpoints, e))).await;
                            return;
                        }
                        continue;
                    }
                };
                match msg {
                    Ok(Some(resp)) => {
                        if resp.canceled() {
                            let err = if resp.compact_revision() > 0 {
                                BackendError::Compacted {
                                    requested: from_revision,
                                    compacted: resp.compact_revision(),
                                }
                            } else {
                                BackendError::Unavailable(format!(
                                    "etcd {endpoints} cancelled the watch: {}",
                                    resp.cancel_reason()
                                ))
                            };
                            let _ = tx.send(Err(err)).await;
                            return;
                        }
                        if resp.events().is_empty() && !resp.created() {
                            // A progress notification: everything up to this revision was sent.
                            let rev = resp.header().map_or(0, |h| h.revision());
                            if tx.send(Ok(WatchItem::Progress(rev))).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        for ev in resp.events() {
                            let Some(kv) = ev.kv() else { continue };
                            let event = Event {
                                kind: match ev.event_type() {
                                    EventType::Put => EventKind::Put,
                                    EventType::Delete => EventKind::Delete,
                                },
                                kv: convert(kv),
                                prev: ev.prev_kv().map(convert),
                            };
                            if tx.send(Ok(WatchItem::Event(event))).await.is_err() {
                                return;
                            }
                        }
                    }
                    Ok(None) => {
                        let _ = tx
                            .send(Err(BackendError::Unavailable(format!(
                                "etcd {endpoints} closed the watch"
                            ))))
                            .await;
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(classify(&endpoints, e))).await;
                        return;
                    }
                }
            }
        });
        Ok(WatchReceiver::new(rx, progress))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        let resp = retry_read(|| {
            let mut c = self.client.clone();
            async move {
                c.get(
                    self.probe_key.as_str(),
                    Some(GetOptions::new().with_count_only()),
                )
                .await
                .map_err(|e| classify(&self.endpoints, e))
            }
        })
        .await?;
        Ok(resp.header().map_or(0, |h| h.revision()))
    }

    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        match self
            .client
            .clone()
            .compact(revision, Some(CompactionOptions::new().with_physical()))
            .await
        {
            Ok(_) => {
                self.compacted.fetch_max(revision, Ordering::AcqRel);
                Ok(())
            }
            Err(e) => match classify(&self.endpoints, e) {
                BackendError::Compacted { .. } => Err(BackendError::Compacted {
                    requested: revision,
                    compacted: self.compacted.load(Ordering::Acquire),
                }),
                other => Err(other),
            },
        }
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        Ok(self.compacted.load(Ordering::Acquire))
    }
}
