//! Temporary files beside their targets, kept originals, and their cleanup
//! on SIGINT/SIGTERM/SIGHUP.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::OutputError;

/// What this process must clean up if it is killed.
#[derive(Default)]
pub(crate) struct Registry {
    /// Temporary files that exist right now (removed).
    temps: Vec<PathBuf>,
    /// Kept originals `(aside, target)`: put back when the target is
    /// missing, else removed.
    asides: Vec<(PathBuf, PathBuf)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    asides: Vec::new(),
});

pub(crate) fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    pub(crate) fn add_aside(&mut self, aside: &Path, target: &Path) {
        self.asides
            .push((aside.to_path_buf(), target.to_path_buf()));
    }

    pub(crate) fn drop_aside(&mut self, aside: &Path) {
        self.asides.retain(|(a, _)| a != aside);
    }

    #[cfg(test)]
    pub(crate) fn temps_under(&self, dir: &Path) -> usize {
        self.temps.iter().filter(|t| t.starts_with(dir)).count()
    }
}

/// A registered temporary file; dropping it removes the file.
pub(crate) struct Temp {
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// Renames the file to `target`: over an existing file when `replace`,
    /// else no-clobber ([`OutputError::Exists`] when `target` appeared).
    pub(crate) fn persist(mut self, target: &Path, replace: bool) -> Result<(), OutputError> {
        let mut reg = registry();
        let file = self.file.take().expect("temp present until persisted");
        // Retried while Windows reports the target held open (`retry.rs`).
        let res = super::retry::when_held_open(file, |file| {
            let r = if replace {
                file.persist(target)
            } else {
                file.persist_noclobber(target)
            };
            r.map(|_| ()).map_err(|e| (e.error, e.file))
        });
        reg.temps.retain(|p| p != &self.path);
        drop(reg);
        match res {
            Ok(()) => Ok(()),
            Err((e, f)) => {
                drop(f);
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Err(OutputError::Exists(target.to_path_buf()))
                } else {
                    Err(OutputError::io(target, e))
                }
            }
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            let mut reg = registry();
            drop(f);
            reg.temps.retain(|p| p != &self.path);
        }
    }
}

/// The folder of `path` (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file beside `path` holding `bytes`, mode `0666` minus the
/// umask; flushed to disk when `sync`.
pub(crate) fn write_temp(path: &Path, bytes: &[u8], sync: bool) -> Result<Temp, OutputError> {
    let io = |source| OutputError::io(path, source);
    let dir = parent_dir(path);
    std::fs::create_dir_all(&dir).map_err(|e| dir_error(&dir, e))?;
    let mut b = tempfile::Builder::new();
    b.prefix(".mshgltf-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut t = {
        // Create and register under the lock, so the signal watcher never
        // misses a file.
        let mut reg = registry();
        let f = b.tempfile_in(&dir).map_err(|e| dir_error(&dir, e))?;
        let p = f.path().to_path_buf();
        reg.temps.push(p.clone());
        Temp {
            file: Some(f),
            path: p,
        }
    };
    let f = t.file.as_mut().expect("just created");
    f.write_all(bytes).map_err(io)?;
    if sync {
        f.as_file().sync_all().map_err(io)?;
    }
    Ok(t)
}

/// The error for a folder that cannot hold the output: names the path
/// component that is a file ("not a folder") instead of the OS's
/// "File exists".
fn dir_error(dir: &Path, e: std::io::Error) -> OutputError {
    let mut p = dir.to_path_buf();
    loop {
        if let Ok(m) = std::fs::metadata(&p) {
            if !m.is_dir() {
                return OutputError::io(
                    dir,
                    std::io::Error::other(format!("{} is a file, not a folder", p.display())),
                );
            }
            break;
        }
        if !p.pop() {
            break;
        }
    }
    OutputError::io(dir, e)
}

/// Removes this process's temporary files when SIGINT, SIGTERM or SIGHUP
/// arrives (and puts back a kept original whose target is missing), then
/// exits with `128 + signal`. Call it at the start of `main`, before any
/// thread is started: it blocks the signals in the calling thread
/// (inherited by later threads) and waits for them in a watcher thread. A
/// no-op off Unix.
pub fn install_signal_cleanup() {
    #[cfg(unix)]
    // SAFETY: plain libc signal-mask calls on a zero-initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let set_copy = set;
        let spawned = std::thread::Builder::new()
            .name("signal-cleanup".into())
            .spawn(move || {
                let mut sig: libc::c_int = 0;
                // SAFETY: sigwait on the set blocked above.
                if libc::sigwait(&set_copy, &mut sig) == 0 {
                    let reg = registry();
                    for p in reg.temps.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                    for (aside, target) in reg.asides.iter() {
                        if std::fs::symlink_metadata(target).is_err() {
                            let _ = std::fs::rename(aside, target);
                        } else {
                            let _ = std::fs::remove_file(aside);
                        }
                    }
                    // Keep the lock: no new temporary file can appear.
                    libc::_exit(128 + sig);
                }
            });
        if spawned.is_err() {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}
