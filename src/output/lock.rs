//! Advisory locks (`fd-lock`: `flock` on Unix, `LockFileEx` on Windows) on
//! the files a run reads and then replaces in place.
//!
//! The lock is not taken on the file itself but on a **lock file** beside
//! it, `.NAME.mshgltf-lock` (empty; created on first use and left in place,
//! so every run locks the same file): Windows refuses to rename a new file
//! over one that is open and locked (`Access denied`, os error 5), and the
//! commit must rename over the target while the lock is still held. The
//! target is read only after the lock is taken, so a run that waited for
//! another one reads the file that run committed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::temp::parent_dir;
use super::OutputError;

/// A lock file held exclusively until this is dropped (its descriptor is
/// then closed, which releases the lock).
#[derive(Debug)]
pub(crate) struct Locked {
    _lock: fd_lock::RwLock<std::fs::File>,
}

/// How often a waiting run retries the lock.
const POLL: Duration = Duration::from_millis(25);

/// The lock file of `target`: `.NAME.mshgltf-lock` in its folder.
pub fn lock_file(target: &Path) -> PathBuf {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    parent_dir(target).join(format!(".{name}.mshgltf-lock"))
}

/// Whether `path` is named like a [`lock_file`] (`.NAME.mshgltf-lock`):
/// the run's own empty lock, left beside the file it guards; a batch
/// does not list it among the files it skipped.
pub fn is_lock_file(path: &Path) -> bool {
    super::names::own_file(path) == Some(super::names::OwnFile::Lock)
}

/// Locks `path` exclusively (through its [`lock_file`]) and reads it whole,
/// waiting at most `wait`. `Ok(None)` when the file does not exist
/// (nothing to lock: the commit then creates it no-clobber, so a
/// concurrent creator fails instead of being overwritten).
///
/// # Errors
/// [`OutputError::Busy`] after `wait`; [`OutputError::Io`] (also when the
/// lock file exists and is not a regular file, e.g. a symlink).
pub(crate) fn lock_and_read(
    path: &Path,
    wait: Duration,
    max_bytes: u64,
) -> Result<Option<(Locked, Vec<u8>)>, OutputError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::io(path, e)),
        Ok(_) => {}
    }
    let lock_path = lock_file(path);
    let mut lock = fd_lock::RwLock::new(open_lock_file(&lock_path)?);
    let t0 = Instant::now();
    loop {
        match lock.try_write() {
            Ok(guard) => {
                // The lock lives as long as the descriptor: `Locked` keeps
                // it and closing it releases the lock.
                std::mem::forget(guard);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(OutputError::io(&lock_path, e)),
        }
        if t0.elapsed() >= wait {
            return Err(OutputError::Busy {
                path: path.to_path_buf(),
                waited_ms: t0.elapsed().as_millis() as u64,
            });
        }
        std::thread::sleep(POLL);
    }
    let locked = Locked { _lock: lock };
    let mut f = match super::retry::io(|| std::fs::File::open(path)) {
        Ok(f) => f,
        // Removed while this run waited: created no-clobber at the commit.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::io(path, e)),
    };
    let bytes = read_all(&mut f, max_bytes).map_err(|e| OutputError::io(path, e))?;
    Ok(Some((locked, bytes)))
}

/// Opens (creating it empty if needed) the lock file `p`, never through a
/// symlink, and checks it is a regular file.
fn open_lock_file(p: &Path) -> Result<std::fs::File, OutputError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW).mode(0o666);
    }
    let f = o.open(p).map_err(|e| OutputError::io(p, e))?;
    let m = f.metadata().map_err(|e| OutputError::io(p, e))?;
    if !m.is_file() || std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(OutputError::NotRegular(p.to_path_buf()));
    }
    Ok(f)
}

/// Reads `f` whole, refusing more than `max_bytes`.
fn read_all(f: &mut std::fs::File, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let len = f.metadata()?.len();
    if len > max_bytes {
        return Err(std::io::Error::other(format!(
            "{len} bytes, more than the {max_bytes} a library or archive may have"
        )));
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(max_bytes).read_to_end(&mut out)?;
    Ok(out)
}
