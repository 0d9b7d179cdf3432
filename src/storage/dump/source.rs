//! Opening a store for dumping: the embedded store of a data dir (in
//! place, or a consistent copy while a kapi serves from it) or etcd.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::super::backend::Backend;
use super::super::embedded::{Embedded, ReadOnlyError};
use super::super::etcd::{Etcd, EtcdConfig};
use super::DumpError;

/// A store opened for dumping.
pub struct Source {
    pub backend: Arc<dyn Backend>,
    /// How the store was read, when that is worth telling (a copy).
    pub note: Option<String>,
    // Dropped after the backend: the copy is removed once it is closed.
    _scratch: Option<Scratch>,
}

/// A private directory for a copy of the store, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Scratch, DumpError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("kapi-etcd-dump-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| {
            DumpError::Storage(format!(
                "cannot create {} for a copy of the store: {e}",
                dir.display()
            ))
        })?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens the embedded store of a data dir (`DIR/store/kapi.redb`) for
/// reading, also while a kapi is serving from it.
///
/// Without a kapi running, the file is opened read-only in place (shared
/// with other readers, unchanged). While a kapi serves from it, redb's
/// exclusive lock keeps every other process out, so a consistent copy is
/// read instead ([`Embedded::open_snapshot`] explains why that is sound);
/// the same holds for a store a kapi did not close cleanly, whose in-place
/// reading would need recovery, a write. The copy lives in the system's
/// temporary directory until the dump ends.
pub fn open_data_dir(data_dir: &Path) -> Result<Source, DumpError> {
    let flag = |m: String| DumpError::Storage(format!("--data-dir {}: {m}", data_dir.display()));
    if !data_dir.is_dir() {
        return Err(flag("no such directory".into()));
    }
    let store = data_dir.join("store");
    if !store.join("kapi.redb").is_file() {
        return Err(flag("no kapi store in it (store/kapi.redb)".into()));
    }
    let (why, recovered) = match Embedded::open_read_only(&store) {
        Ok(e) => {
            return Ok(Source {
                backend: Arc::new(e),
                note: None,
                _scratch: None,
            })
        }
        Err(ReadOnlyError::InUse(_)) => ("is in use by a running kapi", false),
        Err(ReadOnlyError::NeedsRecovery(_)) => ("was not closed cleanly", true),
        Err(ReadOnlyError::Store(e)) => return Err(flag(e.to_string())),
    };
    let scratch = Scratch::create()?;
    let e = Embedded::open_snapshot(&store, &scratch.0).map_err(|e| flag(e.to_string()))?;
    let what = if recovered {
        "a recovered copy of it (the store itself is left as it is)"
    } else {
        "a consistent copy of it"
    };
    Ok(Source {
        backend: Arc::new(e),
        note: Some(format!(
            "{} {why}: reading {what}",
            store.join("kapi.redb").display()
        )),
        _scratch: Some(scratch),
    })
}

/// Connects to etcd for dumping.
pub async fn open_etcd(cfg: &EtcdConfig, prefix: &str) -> Result<Source, DumpError> {
    let e = Etcd::connect(cfg, prefix).await.map_err(|e| {
        let text = e.to_string().replace("storage unavailable: ", "");
        DumpError::Storage(format!("--etcd-servers: {text}"))
    })?;
    Ok(Source {
        backend: Arc::new(e),
        note: None,
        _scratch: None,
    })
}
