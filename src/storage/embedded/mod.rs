//! The embedded backend: an MVCC key-value store on redb (an ACID B-tree
//! database in pure Rust) with etcd's revision model.
//!
//! Layout: `revs` maps (key, revision) to the record written at that
//! revision, so a read at any retained revision is a seek per key; `log`
//! maps revision to key, so watches replay history in order; `meta` holds
//! the current and compacted revisions and the format version.
//!
//! All writes go through one writer thread that commits whatever is queued
//! in one transaction (group commit: one fsync for many acknowledged
//! writes). Readers use redb snapshots and never block the writer.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use redb::{
    Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};
use tokio::sync::{mpsc, oneshot};

use super::backend::{
    Backend, BackendError, Event, EventKind, KeyValue, RangeRequest, RangeResponse, TxnOutcome,
    WatchReceiver,
};

mod record;
mod watch;

use record::{decode_record, encode_record, Record, KIND_DELETE, KIND_PUT};

const REVS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("revs");
const LOG: TableDefinition<u64, &str> = TableDefinition::new("log");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

const FORMAT_KEY: &str = "format";
const FORMAT_VERSION: u64 = 1;
const CURRENT_KEY: &str = "current";
const COMPACTED_KEY: &str = "compacted";
/// Most writes committed together.
const MAX_BATCH: usize = 2048;
/// redb's page cache (reads and write buffer). Clients read from the watch
/// cache and the kernel's page cache holds the file: 16 MiB kept 13 MiB
/// more resident with 10,000 ConfigMaps than 4 MiB, and 4 MiB about 3 MiB
/// more than 1 MiB, for creates within run-to-run noise each time
/// (`bench/probe`: 3,300-4,100/s at 16 and 4; 5,400-7,200/s at 4 and 1).
const CACHE_BYTES: usize = 1 << 20;
/// Revisions replayed per read transaction when a watch catches up.
const REPLAY_CHUNK: u64 = 2048;

fn internal<E: std::fmt::Display>(e: E) -> BackendError {
    BackendError::Internal(e.to_string())
}

/// One committed batch, as watchers see it.
struct Committed {
    events: Vec<Event>,
    /// The store's revision after the batch.
    revision: i64,
}

enum Op {
    Create {
        key: String,
        value: Bytes,
    },
    Update {
        key: String,
        value: Bytes,
        expected: i64,
    },
    Delete {
        key: String,
        expected: i64,
    },
    Compact {
        revision: i64,
    },
}

struct Pending {
    op: Op,
    reply: oneshot::Sender<Result<TxnOutcome, BackendError>>,
}

/// The database: open for writing when serving, or only for reading
/// (`kapi etcd dump`), with no writer behind it.
enum DbKind {
    Writable(Database),
    ReadOnly(ReadOnlyDatabase),
}

/// The open database, until [`Db::close`]: redb records a clean shutdown
/// when the database is dropped, and the server's parts that share this
/// store may outlive the shutdown (they hold one another), so closing is
/// explicit rather than left to the last reference.
struct Db(parking_lot::RwLock<Option<DbKind>>);

impl Db {
    fn new(kind: DbKind) -> Db {
        Db(parking_lot::RwLock::new(Some(kind)))
    }

    fn closed() -> BackendError {
        BackendError::Unavailable("the store is closed".into())
    }

    fn begin_read(&self) -> Result<redb::ReadTransaction, BackendError> {
        match &*self.0.read() {
            Some(DbKind::Writable(db)) => db.begin_read().map_err(internal),
            Some(DbKind::ReadOnly(db)) => db.begin_read().map_err(internal),
            None => Err(Self::closed()),
        }
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction, BackendError> {
        match &*self.0.read() {
            Some(DbKind::Writable(db)) => db.begin_write().map_err(internal),
            Some(DbKind::ReadOnly(_)) => Err(BackendError::Unavailable(
                "the store is open read-only".into(),
            )),
            None => Err(Self::closed()),
        }
    }

    /// Drops the database, which marks its file cleanly closed.
    fn close(&self) {
        self.0.write().take();
    }
}

/// Why [`Embedded::open_read_only`] could not open a store.
#[derive(Debug, thiserror::Error)]
pub enum ReadOnlyError {
    /// Another process, a serving kapi, has the store open for writing:
    /// redb locks the whole file for its one writer.
    #[error("{} is in use by another process", .0.display())]
    InUse(PathBuf),
    /// The last writer did not close the store cleanly; reading it in
    /// place would need redb's recovery, which writes.
    #[error("{} was not closed cleanly and needs recovery", .0.display())]
    NeedsRecovery(PathBuf),
    #[error(transparent)]
    Store(#[from] BackendError),
}

/// How many copies [`Embedded::open_snapshot`] takes before giving up.
const SNAPSHOT_ATTEMPTS: u32 = 10;

struct Shared {
    db: Db,
    /// Commits wait for the disk (fsync). Off only for stores that die with
    /// their process anyway (a test's server in a temporary directory).
    durable: bool,
    path: PathBuf,
    current: AtomicI64,
    compacted: AtomicI64,
    hub: watch::Hub,
}

pub struct Embedded {
    shared: Arc<Shared>,
    /// Bounds the reads running at once, and with them the blocking
    /// threads they run on: 32 clients listing at once otherwise start 32
    /// threads, each keeping its allocator's pages (and the read's
    /// buffers) for the ten seconds an idle blocking thread lives.
    readers: tokio::sync::Semaphore,
    writes: parking_lot::RwLock<Option<mpsc::Sender<Pending>>>,
    writer: parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Embedded {
    /// Opens (or creates) the store in `dir`. Foreign or damaged data is an
    /// error naming the file, never something to overwrite.
    pub fn open(dir: &Path) -> Result<Embedded, BackendError> {
        Embedded::open_with(dir, true)
    }

    /// [`Embedded::open`]; with `durable` false a commit does not wait for
    /// the disk, so a crash may lose acknowledged writes: for stores thrown
    /// away with their process (`kapi::testing`), never for `kapi serve`.
    pub fn open_with(dir: &Path, durable: bool) -> Result<Embedded, BackendError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| BackendError::Unavailable(format!("{}: {e}", dir.display())))?;
        let path = dir.join("kapi.redb");
        let existed = path.exists();
        let db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(&path)
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => BackendError::Unavailable(format!(
                    "{} is in use by another process (is another kapi serving from this --data-dir?)",
                    path.display()
                )),
                other => BackendError::Corrupt(format!("{} is not a usable kapi store: {other}", path.display())),
            })?;
        let (current, compacted) = {
            let mut txn = db.begin_write().map_err(internal)?;
            if !durable {
                txn.set_durability(redb::Durability::None)
                    .map_err(internal)?;
            }
            let (current, compacted) = {
                let mut meta = txn.open_table(META).map_err(|e| {
                    BackendError::Corrupt(format!("{} is not a kapi store: {e}", path.display()))
                })?;
                let format = meta.get(FORMAT_KEY).map_err(internal)?.map(|v| v.value());
                match format {
                    Some(FORMAT_VERSION) => {}
                    Some(other) => {
                        return Err(BackendError::Corrupt(format!(
                            "{} has store format {other}, this kapi reads format {FORMAT_VERSION}",
                            path.display()
                        )))
                    }
                    None if existed && meta.len().map_err(internal)? > 0 => {
                        return Err(BackendError::Corrupt(format!(
                            "{} is not a kapi store",
                            path.display()
                        )))
                    }
                    None => {
                        meta.insert(FORMAT_KEY, FORMAT_VERSION).map_err(internal)?;
                    }
                }
                let cur = meta
                    .get(CURRENT_KEY)
                    .map_err(internal)?
                    .map_or(1, |v| v.value());
                let comp = meta
                    .get(COMPACTED_KEY)
                    .map_err(internal)?
                    .map_or(0, |v| v.value());
                (cur as i64, comp as i64)
            };
            txn.open_table(REVS).map_err(internal)?;
            txn.open_table(LOG).map_err(internal)?;
            txn.commit().map_err(internal)?;
            (current, compacted)
        };
        let shared = Arc::new(Shared {
            db: Db::new(DbKind::Writable(db)),
            durable,
            path,
            current: AtomicI64::new(current),
            compacted: AtomicI64::new(compacted),
            hub: watch::Hub::default(),
        });
        let (tx, rx) = mpsc::channel(MAX_BATCH * 4);
        let writer_shared = shared.clone();
        let writer = std::thread::Builder::new()
            .name("kapi-store-writer".into())
            .spawn(move || writer_loop(writer_shared, rx))
            .map_err(internal)?;
        Ok(Embedded {
            shared,
            readers: readers(),
            writes: parking_lot::RwLock::new(Some(tx)),
            writer: parking_lot::Mutex::new(Some(writer)),
        })
    }

    /// Opens the store in `dir` for reading only, beside other readers and
    /// without changing the file. Fails with [`ReadOnlyError::InUse`] while
    /// a kapi serves from it (see [`Embedded::open_snapshot`] for that case).
    pub fn open_read_only(dir: &Path) -> Result<Embedded, ReadOnlyError> {
        let path = dir.join("kapi.redb");
        if !path.is_file() {
            return Err(
                BackendError::Unavailable(format!("{}: no such store", path.display())).into(),
            );
        }
        let db = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .open_read_only(&path)
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => ReadOnlyError::InUse(path.clone()),
                redb::DatabaseError::RepairAborted => ReadOnlyError::NeedsRecovery(path.clone()),
                other => BackendError::Corrupt(format!(
                    "{} is not a usable kapi store: {other}",
                    path.display()
                ))
                .into(),
            })?;
        Ok(Self::reader(Db::new(DbKind::ReadOnly(db)), path)?)
    }

    /// Opens a consistent copy of the store in `dir` while another process
    /// may be writing it, for reading.
    ///
    /// redb gives its one writer an exclusive lock on the whole file, so
    /// while a kapi serves, no other process can open the store, not even
    /// read-only (`ReadOnlyDatabase` shares the file only with readers;
    /// sharing it with a writer needs redb's experimental multi-process
    /// mode, which changes redb's API and the serving store's locking).
    /// Asking the serving kapi instead would need an endpoint that exposes
    /// raw storage. So the file is copied to `scratch` and the copy opened
    /// for writing, which runs redb's crash recovery on it: recovery checks
    /// the checksum of every page reachable from the newest commit, and
    /// falls back to the commit before it. A copy is an image of the file
    /// as a crash would leave it, unless a commit overwrote pages of both
    /// of those commits while it was read; such a torn copy fails the
    /// checksums and is taken again, so what is read is always one
    /// committed state, never a mix. A store busy enough to tear every one
    /// of [`SNAPSHOT_ATTEMPTS`] copies is reported as such.
    pub fn open_snapshot(dir: &Path, scratch: &Path) -> Result<Embedded, BackendError> {
        let source = dir.join("kapi.redb");
        let copy = scratch.join("kapi.redb");
        let mut last = String::new();
        for attempt in 0..SNAPSHOT_ATTEMPTS {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(20 * attempt as u64));
            }
            let _ = std::fs::remove_file(&copy);
            if let Err(e) = std::fs::copy(&source, &copy) {
                return Err(BackendError::Unavailable(format!(
                    "cannot copy {} to {}: {e}",
                    source.display(),
                    scratch.display()
                )));
            }
            match Database::builder()
                .set_cache_size(CACHE_BYTES)
                .create(&copy)
            {
                Ok(db) => return Self::reader(Db::new(DbKind::Writable(db)), source),
                Err(e) => {
                    tracing::debug!(attempt, error = %e, "the copy of the store was torn; copying again");
                    last = e.to_string();
                }
            }
        }
        Err(BackendError::Unavailable(format!(
            "{} changed while each of {SNAPSHOT_ATTEMPTS} copies of it was taken ({last})",
            source.display()
        )))
    }

    /// A store with no writer over an opened database.
    fn reader(db: Db, path: PathBuf) -> Result<Embedded, BackendError> {
        let not_kapi = |e: &dyn std::fmt::Display| {
            BackendError::Corrupt(format!("{} is not a kapi store: {e}", path.display()))
        };
        let (current, compacted) = {
            let txn = db.begin_read().map_err(internal)?;
            let meta = txn.open_table(META).map_err(|e| not_kapi(&e))?;
            match meta.get(FORMAT_KEY).map_err(internal)?.map(|v| v.value()) {
                Some(FORMAT_VERSION) => {}
                Some(other) => {
                    return Err(BackendError::Corrupt(format!(
                        "{} has store format {other}, this kapi reads format {FORMAT_VERSION}",
                        path.display()
                    )))
                }
                None => return Err(not_kapi(&"no format version")),
            }
            txn.open_table(REVS).map_err(|e| not_kapi(&e))?;
            txn.open_table(LOG).map_err(|e| not_kapi(&e))?;
            let get = |k: &str, default: u64| -> Result<u64, BackendError> {
                Ok(meta
                    .get(k)
                    .map_err(internal)?
                    .map_or(default, |v| v.value()))
            };
            (get(CURRENT_KEY, 1)? as i64, get(COMPACTED_KEY, 0)? as i64)
        };
        Ok(Embedded {
            readers: readers(),
            shared: Arc::new(Shared {
                db,
                durable: true,
                path,
                current: AtomicI64::new(current),
                compacted: AtomicI64::new(compacted),
                hub: watch::Hub::default(),
            }),
            writes: parking_lot::RwLock::new(None),
            writer: parking_lot::Mutex::new(None),
        })
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    async fn submit(&self, op: Op) -> Result<TxnOutcome, BackendError> {
        let (reply, rx) = oneshot::channel();
        let writes = self
            .writes
            .read()
            .clone()
            .ok_or_else(|| BackendError::Unavailable("the store is closed".into()))?;
        writes
            .send(Pending { op, reply })
            .await
            .map_err(|_| BackendError::Unavailable("the store is closed".into()))?;
        rx.await
            .map_err(|_| BackendError::Unavailable("the store writer stopped".into()))?
    }

    async fn read<T, F>(&self, f: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: FnOnce(&Shared) -> Result<T, BackendError> + Send + 'static,
    {
        let shared = self.shared.clone();
        // Held until the answer is back, not dropped in the closure: by then
        // the thread has gone back to waiting, so the next read reuses it
        // rather than starting another.
        let _permit = self.readers.acquire().await.map_err(internal)?;
        tokio::task::spawn_blocking(move || f(&shared))
            .await
            .map_err(internal)?
    }
}

/// Reads at once: enough to keep every core busy while some wait on the
/// disk; more only adds threads and memory.
fn readers() -> tokio::sync::Semaphore {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::sync::Semaphore::new((2 * cores).clamp(4, 16))
}

/// The latest record of `key` at or before `at`, as (revision, record).
fn latest_at<T: ReadableTable<(&'static str, u64), &'static [u8]>>(
    revs: &T,
    key: &str,
    at: u64,
) -> Result<Option<(u64, Record)>, BackendError> {
    let mut it = revs.range((key, 0u64)..=(key, at)).map_err(internal)?;
    match it.next_back() {
        Some(entry) => {
            let (k, v) = entry.map_err(internal)?;
            Ok(Some((k.value().1, decode_record(v.value())?)))
        }
        None => Ok(None),
    }
}

fn live(key: &str, rev: u64, rec: Record) -> Option<KeyValue> {
    (rec.kind == KIND_PUT).then(|| KeyValue {
        key: key.to_string(),
        value: rec.value,
        create_revision: rec.create_revision,
        mod_revision: rev as i64,
        version: rec.version,
        stale: false,
    })
}

fn writer_loop(shared: Arc<Shared>, mut rx: mpsc::Receiver<Pending>) {
    while let Some(first) = rx.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let start = shared.current.load(Ordering::Acquire);
        match apply_batch(&shared, &batch, start) {
            Ok((outcomes, events, next)) => {
                shared.current.store(next, Ordering::Release);
                shared.hub.publish(Committed {
                    events,
                    revision: next,
                });
                for (p, o) in batch.into_iter().zip(outcomes) {
                    let _ = p.reply.send(o);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "store commit failed; the batch was not written");
                for p in batch {
                    let _ = p.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

type BatchResult = (Vec<Result<TxnOutcome, BackendError>>, Vec<Event>, i64);

/// Applies a batch in one transaction. Revisions run from `current` (the
/// last one used) upwards; one per applied write, as etcd counts them.
fn apply_batch(
    shared: &Shared,
    batch: &[Pending],
    current: i64,
) -> Result<BatchResult, BackendError> {
    let mut txn = shared.db.begin_write()?;
    if !shared.durable {
        txn.set_durability(redb::Durability::None)
            .map_err(internal)?;
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut events = Vec::new();
    let mut rev = current;
    {
        let mut revs = txn.open_table(REVS).map_err(internal)?;
        let mut log = txn.open_table(LOG).map_err(internal)?;
        let mut meta = txn.open_table(META).map_err(internal)?;
        for p in batch {
            let outcome = match &p.op {
                Op::Create { key, value } => {
                    let prev =
                        latest_at(&revs, key, u64::MAX)?.and_then(|(r, rec)| live(key, r, rec));
                    if prev.is_some() {
                        Ok(TxnOutcome::Failed { current: prev })
                    } else {
                        rev += 1;
                        revs.insert(
                            (key.as_str(), rev as u64),
                            encode_record(KIND_PUT, rev, 1, value).as_slice(),
                        )
                        .map_err(internal)?;
                        log.insert(rev as u64, key.as_str()).map_err(internal)?;
                        events.push(Event {
                            kind: EventKind::Put,
                            kv: KeyValue {
                                key: key.clone(),
                                value: value.clone(),
                                create_revision: rev,
                                mod_revision: rev,
                                version: 1,
                                stale: false,
                            },
                            prev: None,
                        });
                        Ok(TxnOutcome::Applied { revision: rev })
                    }
                }
                Op::Update {
                    key,
                    value,
                    expected,
                } => {
                    let prev =
                        latest_at(&revs, key, u64::MAX)?.and_then(|(r, rec)| live(key, r, rec));
                    match prev {
                        Some(p) if p.mod_revision == *expected => {
                            rev += 1;
                            let version = p.version + 1;
                            revs.insert(
                                (key.as_str(), rev as u64),
                                encode_record(KIND_PUT, p.create_revision, version, value)
                                    .as_slice(),
                            )
                            .map_err(internal)?;
                            log.insert(rev as u64, key.as_str()).map_err(internal)?;
                            events.push(Event {
                                kind: EventKind::Put,
                                kv: KeyValue {
                                    key: key.clone(),
                                    value: value.clone(),
                                    create_revision: p.create_revision,
                                    mod_revision: rev,
                                    version,
                                    stale: false,
                                },
                                prev: Some(p),
                            });
                            Ok(TxnOutcome::Applied { revision: rev })
                        }
                        other => Ok(TxnOutcome::Failed { current: other }),
                    }
                }
                Op::Delete { key, expected } => {
                    let prev =
                        latest_at(&revs, key, u64::MAX)?.and_then(|(r, rec)| live(key, r, rec));
                    match prev {
                        Some(p) if p.mod_revision == *expected => {
                            rev += 1;
                            revs.insert(
                                (key.as_str(), rev as u64),
                                encode_record(KIND_DELETE, 0, 0, &[]).as_slice(),
                            )
                            .map_err(internal)?;
                            log.insert(rev as u64, key.as_str()).map_err(internal)?;
                            events.push(Event {
                                kind: EventKind::Delete,
                                kv: KeyValue {
                                    key: key.clone(),
                                    value: Bytes::new(),
                                    create_revision: 0,
                                    mod_revision: rev,
                                    version: 0,
                                    stale: false,
                                },
                                prev: Some(p),
                            });
                            Ok(TxnOutcome::Applied { revision: rev })
                        }
                        other => Ok(TxnOutcome::Failed { current: other }),
                    }
                }
                Op::Compact { revision } => {
                    compact_in(&mut revs, &mut log, &mut meta, shared, *revision, rev)
                }
            };
            outcomes.push(outcome);
        }
        meta.insert(CURRENT_KEY, rev as u64).map_err(internal)?;
    }
    txn.commit().map_err(internal)?;
    Ok((outcomes, events, rev))
}

fn compact_in(
    revs: &mut redb::Table<(&str, u64), &[u8]>,
    log: &mut redb::Table<u64, &str>,
    meta: &mut redb::Table<&str, u64>,
    shared: &Shared,
    revision: i64,
    current: i64,
) -> Result<TxnOutcome, BackendError> {
    let compacted = shared.compacted.load(Ordering::Acquire);
    if revision <= compacted {
        return Err(BackendError::Compacted {
            requested: revision,
            compacted,
        });
    }
    if revision > current {
        return Err(BackendError::FutureRevision {
            requested: revision,
            current,
        });
    }
    let at = revision as u64;
    // Every change at or before the compaction revision since the last
    // compaction, and the keys they touched.
    let entries: Vec<(u64, String)> = log
        .range(..=at)
        .map_err(internal)?
        .map(|e| e.map(|(r, k)| (r.value(), k.value().to_string())))
        .collect::<Result<_, _>>()
        .map_err(internal)?;
    let keys: std::collections::BTreeSet<&str> = entries.iter().map(|(_, k)| k.as_str()).collect();
    for key in keys {
        // Keep the state at `revision`: of each key's records at or before
        // it, only the newest survives, and not if it is a deletion. All of
        // them, not only those logged since the last compaction: a record
        // kept then is older than this key's newer ones, and left behind
        // it would outlive a deletion compacted now and bring the key back.
        let mut older: Vec<(u64, u8)> = revs
            .range((key, 0u64)..=(key, at))
            .map_err(internal)?
            .map(|e| {
                let (k, v) = e.map_err(internal)?;
                Ok((k.value().1, decode_record(v.value())?.kind))
            })
            .collect::<Result<_, BackendError>>()?;
        if older.last().is_some_and(|&(_, kind)| kind != KIND_DELETE) {
            older.pop();
        }
        for (r, _) in older {
            revs.remove((key, r)).map_err(internal)?;
        }
    }
    for (r, _) in &entries {
        log.remove(*r).map_err(internal)?;
    }
    meta.insert(COMPACTED_KEY, at).map_err(internal)?;
    shared.compacted.store(revision, Ordering::Release);
    Ok(TxnOutcome::Applied { revision })
}

fn check_revision(shared: &Shared, requested: i64, current: i64) -> Result<(), BackendError> {
    let compacted = shared.compacted.load(Ordering::Acquire);
    if requested > 0 && requested < compacted {
        return Err(BackendError::Compacted {
            requested,
            compacted,
        });
    }
    if requested > current {
        return Err(BackendError::FutureRevision { requested, current });
    }
    Ok(())
}

#[async_trait::async_trait]
impl Backend for Embedded {
    fn name(&self) -> &'static str {
        "embedded"
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, i64), BackendError> {
        let key = key.to_string();
        self.read(move |s| {
            let txn = s.db.begin_read()?;
            let current = txn
                .open_table(META)
                .map_err(internal)?
                .get(CURRENT_KEY)
                .map_err(internal)?
                .map_or(1, |v| v.value()) as i64;
            let revs = txn.open_table(REVS).map_err(internal)?;
            let kv = latest_at(&revs, &key, u64::MAX)?.and_then(|(r, rec)| live(&key, r, rec));
            Ok((kv, current))
        })
        .await
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResponse, BackendError> {
        self.read(move |s| {
            let txn = s.db.begin_read()?;
            let current = txn
                .open_table(META)
                .map_err(internal)?
                .get(CURRENT_KEY)
                .map_err(internal)?
                .map_or(1, |v| v.value()) as i64;
            let at = if req.revision > 0 {
                req.revision
            } else {
                current
            };
            check_revision(s, req.revision, current)?;
            let revs = txn.open_table(REVS).map_err(internal)?;
            let mut resp = RangeResponse {
                revision: at,
                ..Default::default()
            };
            let mut last_key: Option<String> = None;
            let mut best: Option<(u64, Vec<u8>)> = None;
            let flush = |key: &str,
                         best: Option<(u64, Vec<u8>)>,
                         resp: &mut RangeResponse|
             -> Result<(), BackendError> {
                if let Some((r, raw)) = best {
                    if let Some(kv) = live(key, r, decode_record(&raw)?) {
                        resp.count += 1;
                        if req.limit == 0 || (resp.kvs.len() as i64) < req.limit {
                            resp.kvs.push(kv);
                        } else {
                            resp.more = true;
                        }
                    }
                }
                Ok(())
            };
            for entry in revs
                .range((req.start.as_str(), 0u64)..(req.end.as_str(), 0u64))
                .map_err(internal)?
            {
                let (k, v) = entry.map_err(internal)?;
                let (key, r) = k.value();
                if last_key.as_deref() != Some(key) {
                    if let Some(prev_key) = last_key.take() {
                        flush(&prev_key, best.take(), &mut resp)?;
                        if req.skip_count && resp.more {
                            break;
                        }
                    }
                    last_key = Some(key.to_string());
                }
                if r <= at as u64 {
                    // Past the limit a key is only counted: its record's
                    // header says whether it is live, the value is not needed.
                    let raw = v.value();
                    let full = req.limit > 0 && resp.kvs.len() as i64 >= req.limit;
                    let keep = if full { raw.len().min(17) } else { raw.len() };
                    best = Some((r, raw[..keep].to_vec()));
                }
            }
            if let Some(prev_key) = last_key {
                flush(&prev_key, best, &mut resp)?;
            }
            Ok(resp)
        })
        .await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<TxnOutcome, BackendError> {
        self.submit(Op::Create {
            key: key.to_string(),
            value,
        })
        .await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.submit(Op::Update {
            key: key.to_string(),
            value,
            expected: expected_mod_revision,
        })
        .await
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: i64,
    ) -> Result<TxnOutcome, BackendError> {
        self.submit(Op::Delete {
            key: key.to_string(),
            expected: expected_mod_revision,
        })
        .await
    }

    async fn watch(&self, prefix: &str, from_revision: i64) -> Result<WatchReceiver, BackendError> {
        // Subscribe before reading history so nothing falls in between.
        let sub = self.shared.hub.subscribe(prefix);
        let current = self.shared.current.load(Ordering::Acquire);
        let from = if from_revision <= 0 {
            current + 1
        } else {
            from_revision
        };
        let compacted = self.shared.compacted.load(Ordering::Acquire);
        if from <= compacted {
            return Err(BackendError::Compacted {
                requested: from,
                compacted,
            });
        }
        let (tx, rx) = mpsc::channel(1024);
        let (progress, progress_requests) = mpsc::channel::<()>(1);
        let shared = self.shared.clone();
        let prefix = prefix.to_string();
        tokio::spawn(watch::follow(
            shared,
            prefix,
            from,
            sub,
            tx,
            progress_requests,
        ));
        Ok(WatchReceiver::new(rx, progress))
    }

    async fn current_revision(&self) -> Result<i64, BackendError> {
        Ok(self.shared.current.load(Ordering::Acquire))
    }

    fn current_revision_now(&self, _prefix: &str) -> Option<i64> {
        Some(self.shared.current.load(Ordering::Acquire))
    }

    async fn compact(&self, revision: i64) -> Result<(), BackendError> {
        self.submit(Op::Compact { revision }).await.map(|_| ())
    }

    async fn compacted_revision(&self) -> Result<i64, BackendError> {
        Ok(self.shared.compacted.load(Ordering::Acquire))
    }

    async fn close(&self) {
        // Dropping the last sender ends the writer loop once queued writes are done.
        self.writes.write().take();
        let handle = self.writer.lock().take();
        if let Some(handle) = handle {
            let _ = tokio::task::spawn_blocking(move || handle.join()).await;
        }
        self.shared.db.close();
    }
}

/// Events from `from` on, at most one chunk; returns them and the last revision covered.
fn replay(s: &Shared, prefix: &str, from: i64) -> Result<(Vec<Event>, i64), BackendError> {
    let txn = s.db.begin_read()?;
    let current = txn
        .open_table(META)
        .map_err(internal)?
        .get(CURRENT_KEY)
        .map_err(internal)?
        .map_or(1, |v| v.value()) as i64;
    let compacted = txn
        .open_table(META)
        .map_err(internal)?
        .get(COMPACTED_KEY)
        .map_err(internal)?
        .map_or(0, |v| v.value()) as i64;
    if from <= compacted {
        return Err(BackendError::Compacted {
            requested: from,
            compacted,
        });
    }
    let upto = current.min(from + REPLAY_CHUNK as i64 - 1);
    if from > upto {
        return Ok((Vec::new(), current));
    }
    let log = txn.open_table(LOG).map_err(internal)?;
    let revs = txn.open_table(REVS).map_err(internal)?;
    let mut out = Vec::new();
    for entry in log.range(from as u64..=upto as u64).map_err(internal)? {
        let (r, k) = entry.map_err(internal)?;
        let (r, key) = (r.value(), k.value());
        if !key.starts_with(prefix) {
            continue;
        }
        let Some(raw) = revs.get((key, r)).map_err(internal)? else {
            continue;
        };
        let rec = decode_record(raw.value())?;
        let prev = if r > 0 {
            latest_at(&revs, key, r - 1)?.and_then(|(pr, prec)| live(key, pr, prec))
        } else {
            None
        };
        let kind = if rec.kind == KIND_DELETE {
            EventKind::Delete
        } else {
            EventKind::Put
        };
        out.push(Event {
            kind,
            kv: KeyValue {
                key: key.to_string(),
                value: rec.value,
                create_revision: rec.create_revision,
                mod_revision: r as i64,
                version: rec.version,
                stale: false,
            },
            prev,
        });
    }
    Ok((out, upto))
}
