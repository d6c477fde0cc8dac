//! Advisory locks (`fd-lock`: `flock` on Unix, `LockFileEx` on Windows) on
//! the files a run reads and then replaces in place.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use super::OutputError;

/// A file locked exclusively, with the bytes read under the lock. The lock
/// is released when this is dropped (the descriptor is closed).
#[derive(Debug)]
pub(crate) struct Locked {
    _lock: fd_lock::RwLock<std::fs::File>,
}

/// How often a waiting run retries the lock.
const POLL: Duration = Duration::from_millis(25);

/// Locks `path` exclusively and reads it whole, waiting at most `wait`.
/// `Ok(None)` when the file does not exist (nothing to lock: the commit
/// then creates it no-clobber, so a concurrent creator fails instead of
/// being overwritten). A replacement by another run between open and lock
/// is detected (the path no longer names the locked file) and the lock is
/// taken again on the new file.
///
/// # Errors
/// [`OutputError::Busy`] after `wait`; [`OutputError::Io`].
pub(crate) fn lock_and_read(
    path: &Path,
    wait: Duration,
    max_bytes: u64,
) -> Result<Option<(Locked, Vec<u8>)>, OutputError> {
    let t0 = Instant::now();
    loop {
        let file = match std::fs::OpenOptions::new().read(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(OutputError::io(path, e)),
        };
        let mut lock = fd_lock::RwLock::new(file);
        let taken = match lock.try_write() {
            Ok(mut guard) => {
                if still_names(path, &guard) {
                    let bytes =
                        read_all(&mut guard, max_bytes).map_err(|e| OutputError::io(path, e))?;
                    // The lock lives as long as the descriptor: `Locked`
                    // keeps it and closing it releases the lock.
                    std::mem::forget(guard);
                    Some(bytes)
                } else {
                    None
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
            Err(e) => return Err(OutputError::io(path, e)),
        };
        if let Some(bytes) = taken {
            return Ok(Some((Locked { _lock: lock }, bytes)));
        }
        if t0.elapsed() >= wait {
            return Err(OutputError::Busy {
                path: path.to_path_buf(),
                waited_ms: t0.elapsed().as_millis() as u64,
            });
        }
        std::thread::sleep(POLL);
    }
}

/// True when `path` still names the open file `f`.
#[cfg(unix)]
fn still_names(path: &Path, f: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_names(path: &Path, _f: &std::fs::File) -> bool {
    path.exists()
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
