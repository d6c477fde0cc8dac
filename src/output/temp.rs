//! Temporary files beside their targets, kept originals, and their cleanup
//! on SIGINT/SIGTERM/SIGHUP.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tempfile::NamedTempFile;

use super::OutputError;

/// What this process must clean up if it is killed.
#[derive(Default)]
pub(crate) struct Registry {
    /// Temporary files that exist right now (removed).
    temps: Vec<PathBuf>,
    /// Kept originals `(aside, target)` of commits without a journal: put
    /// back when the target is missing, else removed.
    asides: Vec<(PathBuf, PathBuf)>,
    /// The journals this process holds (journal.rs): their commits are
    /// finished or rolled back whole.
    pub(crate) journals: Vec<super::journal::Active>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    asides: Vec::new(),
    journals: Vec::new(),
});

pub(crate) fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    pub(crate) fn add_aside(&mut self, aside: &Path, target: &Path) {
        self.asides
            .push((aside.to_path_buf(), target.to_path_buf()));
    }

    /// Whether `aside` is registered as a kept original.
    #[cfg(test)]
    pub(crate) fn has_aside(&self, aside: &Path) -> bool {
        self.asides.iter().any(|(a, _)| a == aside)
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
    file: Option<NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// The temporary file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file to `target`: over an existing file when `replace`,
    /// else no-clobber ([`OutputError::Exists`] when `target` appeared).
    /// On Windows a rename refused while another process holds the target
    /// open is retried (`retry.rs`, about 1.3 s at most).
    pub(crate) fn persist(self, target: &Path, replace: bool) -> Result<(), OutputError> {
        self.persist_with(
            target,
            super::retry::pauses(),
            super::retry::sleep,
            |file| {
                let r = if replace {
                    file.persist(target)
                } else {
                    file.persist_noclobber(target)
                };
                r.map(|_| ()).map_err(|e| (e.error, e.file))
            },
        )
    }

    /// [`Temp::persist`] with the rename `attempt`, the retry `pauses` and
    /// the `pause` given ([`super::retry::when_held_open_in`]).
    ///
    /// The registry lock is taken for each attempt, never across a pause:
    /// the signal cleanup (or a thread staging a file) waits for one rename
    /// at most, not for the retries. The cleanup's guarantee holds all the
    /// same, as it only ever sees one of two states: during a pause the
    /// file is still the temporary file, registered (the cleanup removes
    /// it); a successful rename and its deregistration happen under one
    /// lock (the cleanup never removes the target's new bytes, nor misses
    /// a temporary file). A rename that finally fails removes the file
    /// and deregisters it under one lock too, as [`Drop`] does.
    fn persist_with(
        mut self,
        target: &Path,
        pauses: &[u64],
        pause: impl FnMut(u64),
        mut attempt: impl FnMut(NamedTempFile) -> Result<(), (std::io::Error, NamedTempFile)>,
    ) -> Result<(), OutputError> {
        let file = self.file.take().expect("temp present until persisted");
        let path = &self.path;
        let res = super::retry::when_held_open_in(pauses, pause, file, |file| {
            let mut reg = registry();
            let r = attempt(file);
            if r.is_ok() {
                reg.temps.retain(|p| p != path);
            }
            r
        });
        match res {
            Ok(()) => Ok(()),
            Err((e, f)) => {
                let mut reg = registry();
                drop(f);
                reg.temps.retain(|p| p != path);
                drop(reg);
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
    b.prefix(super::names::TEMP_PREFIX)
        .suffix(super::names::TEMP_SUFFIX);
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

/// What a signal (or a Windows console close) leaves behind, done with
/// the registry locked (no rename is in flight): every journaled commit of
/// this process is rolled back whole, or finished when it passed its
/// commit point (journal.rs); then the temporary files are removed; then
/// each remaining kept original (a one-file commit) is put back when its
/// target is missing, else removed. The registry stays locked (returned),
/// so no new file appears before the process exits.
pub(crate) fn emergency_cleanup() -> std::sync::MutexGuard<'static, Registry> {
    let mut reg = registry();
    super::journal::cleanup_on_signal(&mut reg);
    for p in reg.temps.iter() {
        let _ = std::fs::remove_file(p);
    }
    for (aside, target) in reg.asides.iter() {
        if std::fs::symlink_metadata(target).is_err() {
            let _ = std::fs::rename(aside, target);
        } else {
            let _ = std::fs::remove_file(aside);
        }
        let _ = std::fs::remove_file(super::names::part_of(aside));
    }
    reg
}

/// Undoes this process's unfinished writes (`emergency_cleanup`: a
/// commit of several files is rolled back whole, temporary files removed)
/// when SIGINT, SIGTERM or SIGHUP arrives, then exits with `128 + signal`;
/// on Windows the same on Ctrl-C, Ctrl-Break, console close, logoff and
/// shutdown (`SetConsoleCtrlHandler`), exiting with 130. Call it at the
/// start of `main`, before any thread is started: on Unix it blocks the
/// signals in the calling thread (inherited by later threads) and waits
/// for them in a watcher thread. What no handler sees (SIGKILL,
/// `TerminateProcess`, a power loss) the commit journal covers (journal.rs).
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
                    // Keep the lock: no new temporary file can appear.
                    let _reg = emergency_cleanup();
                    libc::_exit(128 + sig);
                }
            });
        if spawned.is_err() {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
    #[cfg(windows)]
    // SAFETY: registers a handler routine of the documented signature.
    unsafe {
        win::SetConsoleCtrlHandler(Some(win::on_console_event), 1);
    }
}

/// Windows' console control handler, declared here (kernel32; no crate).
#[cfg(windows)]
pub(crate) mod win {
    /// `HandlerRoutine`: returns nonzero when handled.
    pub(crate) type Handler = unsafe extern "system" fn(u32) -> i32;

    #[link(name = "kernel32")]
    extern "system" {
        pub(crate) fn SetConsoleCtrlHandler(handler: Option<Handler>, add: i32) -> i32;
        pub(crate) fn GetCurrentProcess() -> isize;
        pub(crate) fn TerminateProcess(process: isize, code: u32) -> i32;
    }

    /// Runs on a thread of its own for Ctrl-C (0), Ctrl-Break (1), close
    /// (2), logoff (5) and shutdown (6): the cleanup, then exit 130 (the
    /// system would end the process soon after a close anyway).
    pub(crate) unsafe extern "system" fn on_console_event(_kind: u32) -> i32 {
        let _reg = super::emergency_cleanup();
        std::process::exit(130)
    }
}

/// The registry, waited for up to 5 s (other tests' writes hold it
/// briefly); `None` when it stays locked, as it would for ever were
/// this thread holding it.
#[cfg(test)]
pub(crate) fn registry_within_5s() -> Option<std::sync::MutexGuard<'static, Registry>> {
    let start = std::time::Instant::now();
    loop {
        match REGISTRY.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {
                if start.elapsed() > std::time::Duration::from_secs(5) {
                    return None;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

/// Whether the registry is locked right now (by this thread or another).
#[cfg(test)]
pub(crate) fn registry_is_locked() -> bool {
    matches!(
        REGISTRY.try_lock(),
        Err(std::sync::TryLockError::WouldBlock)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rename refused twice as "held open" (os error 5) then done: the
    /// registry is locked during each attempt and free during each pause,
    /// with the temporary file still there and registered; afterwards the
    /// target holds the bytes and nothing is registered. A rename refused
    /// every time removes and deregisters the temporary file.
    #[test]
    fn persist_locks_per_attempt_not_across_a_pause() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("out.glb");
        let t = write_temp(&target, b"new", false).unwrap();
        let tmp = t.path.clone();
        let (mut attempts, mut paused) = (0, 0);
        t.persist_with(
            &target,
            &[1, 1, 1],
            |_| {
                paused += 1;
                let reg = registry_within_5s().expect("registry free during a pause");
                assert_eq!(reg.temps_under(d.path()), 1);
                assert!(tmp.is_file());
            },
            |file| {
                attempts += 1;
                assert!(REGISTRY.try_lock().is_err(), "locked during an attempt");
                if attempts < 3 {
                    return Err((std::io::Error::from_raw_os_error(5), file));
                }
                file.persist(&target)
                    .map(|_| ())
                    .map_err(|e| (e.error, e.file))
            },
        )
        .unwrap();
        assert_eq!((attempts, paused), (3, 2));
        assert_eq!(registry().temps_under(d.path()), 0);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(!tmp.exists());

        let other = d.path().join("other.glb");
        let t = write_temp(&other, b"x", false).unwrap();
        let tmp = t.path.clone();
        let e = t
            .persist_with(
                &other,
                &[1],
                |_| {},
                |file| Err((std::io::Error::from_raw_os_error(5), file)),
            )
            .unwrap_err();
        assert!(matches!(e, OutputError::Io { .. }), "{e}");
        assert_eq!(registry().temps_under(d.path()), 0);
        assert!(!tmp.exists() && !other.exists());
    }
}
