//! One data dir, one server. The data dir holds the certificates and the
//! admin kubeconfig whatever the storage backend, so two servers on one dir
//! would overwrite each other's kubeconfig (and, embedded, fight over the
//! store). An advisory `flock` on `<data-dir>/kapi.lock` settles it: the
//! kernel drops the lock when its holder dies, so a crash never leaves a
//! stale lock behind, and the file tells a second server who holds it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Held while the server runs; dropping it releases the data dir.
#[derive(Debug)]
pub struct InstanceLock {
    file: File,
    path: PathBuf,
}

/// Why the data dir could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} is in use by another kapi ({holder}); stop it first, or give this server its own --data-dir", dir.display())]
    Held { dir: PathBuf, holder: Holder },
}

/// Who holds a lock, as its holder wrote it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub url: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.pid, &self.url) {
            (Some(pid), Some(url)) => write!(f, "pid {pid}, serving {url}"),
            (Some(pid), None) => write!(f, "pid {pid}, still starting"),
            (None, _) => f.write_str("its pid is not recorded"),
        }
    }
}

impl Holder {
    fn parse(text: &str) -> Holder {
        let mut lines = text.lines().map(str::trim);
        Holder {
            pid: lines.next().and_then(|l| l.parse().ok()),
            url: lines.next().filter(|l| !l.is_empty()).map(str::to_string),
        }
    }
}

impl InstanceLock {
    /// Takes `<dir>/kapi.lock` without waiting: a dir already held is an
    /// error naming the holder.
    pub fn acquire(dir: &Path) -> Result<InstanceLock, LockError> {
        let path = dir.join("kapi.lock");
        let io = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        std::fs::create_dir_all(dir).map_err(|error| LockError::Io {
            path: dir.to_path_buf(),
            error,
        })?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io(error));
            }
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockError::Held {
                dir: dir.to_path_buf(),
                holder: Holder::parse(&text),
            });
        }
        let lock = InstanceLock { file, path };
        lock.record(None).map_err(|error| LockError::Io {
            path: lock.path.clone(),
            error,
        })?;
        Ok(lock)
    }

    /// Records the URL served, so a second server can name it.
    pub fn serving(&self, url: &str) -> Result<(), LockError> {
        self.record(Some(url)).map_err(|error| LockError::Io {
            path: self.path.clone(),
            error,
        })
    }

    fn record(&self, url: Option<&str>) -> std::io::Result<()> {
        let mut file = &self.file;
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        let mut text = format!("{}\n", std::process::id());
        if let Some(url) = url {
            text.push_str(url);
            text.push('\n');
        }
        file.write_all(text.as_bytes())?;
        file.flush()
    }
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        // Emptied, so a reader racing the release never names a gone pid;
        // the kernel drops the flock when the descriptor closes.
        let _ = self.file.set_len(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_dir_names_its_holder_and_is_free_after_drop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = InstanceLock::acquire(dir.path()).expect("first");
        first.serving("https://127.0.0.1:6443").expect("record");
        // flock locks belong to the open file description, so a second
        // open in this process conflicts just as another process would.
        match InstanceLock::acquire(dir.path()) {
            Err(LockError::Held { holder, .. }) => {
                assert_eq!(holder.pid, Some(std::process::id()));
                assert_eq!(holder.url.as_deref(), Some("https://127.0.0.1:6443"));
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        InstanceLock::acquire(dir.path()).expect("free again");
    }

    #[test]
    fn holder_text_is_read_leniently() {
        assert_eq!(Holder::parse(""), Holder::default());
        assert_eq!(Holder::parse("42\n").to_string(), "pid 42, still starting");
    }
}
