//! Safe output files (README "Safety").
//!
//! - Every path a run writes is claimed in one [`WritePlan`] first: it must
//!   not be one of the run's inputs (same path after resolving links, or the
//!   same file through a hard link) nor another output of the run.
//! - An existing target needs `force`, and even then only a regular file is
//!   replaced (never a device, FIFO, socket, folder or symlink).
//! - Files are written to a temporary file beside the target (mode `0666`
//!   minus the umask), flushed, and moved into place: without `force` with a
//!   no-clobber rename ([`tempfile::NamedTempFile::persist_noclobber`]), so two
//!   concurrent runs cannot both create one output; with `force` with a rename
//!   over the (regular) target.
//! - Temporary files are removed on every error, and on SIGINT/SIGTERM/SIGHUP
//!   once [`install_signal_cleanup`] ran (the binaries call it first thing).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target exists and `force` was not given.
    #[error("{0} exists (use --force to replace it)")]
    Exists(PathBuf),
    /// The target is one of the inputs.
    #[error("refusing to overwrite the input {0}")]
    IsInput(PathBuf),
    /// The target exists and is not a regular file (device, FIFO, folder, symlink ...).
    #[error("{0} exists and is not a regular file: refusing to replace it, even with --force")]
    NotRegular(PathBuf),
    /// Two outputs of one run are the same file.
    #[error("{0} would be written twice in one run (also as {1})")]
    Collision(PathBuf, PathBuf),
    /// I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl OutputError {
    /// The rule id of the refusal (`output.exists`, `output.is_input`,
    /// `output.not_regular`, `output.collision`, `io`).
    pub fn rule(&self) -> &'static str {
        match self {
            OutputError::Exists(_) => "output.exists",
            OutputError::IsInput(_) => "output.is_input",
            OutputError::NotRegular(_) => "output.not_regular",
            OutputError::Collision(..) => "output.collision",
            OutputError::Io { .. } => "io",
        }
    }
}

/// A path's identity for collision checks: the deepest existing ancestor
/// resolved ([`std::fs::canonicalize`], so symlinks and `..` are followed),
/// the rest appended with `.` dropped and `..` applied lexically.
pub fn normalized(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    if let Ok(c) = abs.canonicalize() {
        return c;
    }
    // Walk the components: `out` is canonical while it exists, so `..`
    // goes to the real parent.
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => {
                out.push(n);
                if let Ok(c) = out.canonicalize() {
                    out = c;
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `(device, inode)` of an existing file (following links).
#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// True when `a` and `b` name the same file (after resolving links; hard
/// links to one file count as the same).
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Some(x), Some(y)) = (file_id(a), file_id(b)) {
        return x == y;
    }
    normalized(a) == normalized(b)
}

/// Every path one run reads and writes; [`WritePlan::claim`] admits an
/// output only when it is no input and no other output (linear: sets).
#[derive(Debug, Default, Clone)]
pub struct WritePlan {
    force: bool,
    input_paths: HashSet<PathBuf>,
    input_ids: HashSet<(u64, u64)>,
    outputs: HashMap<PathBuf, PathBuf>,
    /// [`normalized`] folders, by the folder as given (a batch writes
    /// thousands of files into a few folders).
    dirs: HashMap<PathBuf, PathBuf>,
}

impl WritePlan {
    /// An empty plan; `force` allows replacing existing regular files.
    pub fn new(force: bool) -> Self {
        WritePlan {
            force,
            ..Default::default()
        }
    }

    /// [`normalized`] with the folder part cached. The last component
    /// is not resolved: a symlink there is refused by [`WritePlan::claim`]
    /// (not a regular file) and matched to its target by file identity.
    fn key(&mut self, path: &Path) -> PathBuf {
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => {
                let d = self
                    .dirs
                    .entry(dir.to_path_buf())
                    .or_insert_with(|| normalized(dir));
                d.join(name)
            }
            _ => normalized(path),
        }
    }

    /// Records an input of the run (a file that must never be written).
    pub fn add_input(&mut self, path: &Path) {
        let k = self.key(path);
        self.input_paths.insert(k);
        self.input_paths.insert(normalized(path));
        if let Some(id) = file_id(path) {
            self.input_ids.insert(id);
        }
    }

    /// True when `path` is one of the recorded inputs.
    pub fn is_input(&mut self, path: &Path) -> bool {
        let k = self.key(path);
        self.input_paths.contains(&k)
            || file_id(path).is_some_and(|id| self.input_ids.contains(&id))
    }

    /// Admits `path` as an output of the run.
    ///
    /// # Errors
    /// [`OutputError::IsInput`], [`OutputError::Collision`] (another output
    /// of this run), [`OutputError::NotRegular`], [`OutputError::Exists`]
    /// (without `force`).
    pub fn claim(&mut self, path: &Path) -> Result<(), OutputError> {
        if self.is_input(path) {
            return Err(OutputError::IsInput(path.to_path_buf()));
        }
        let key = self.key(path);
        if let Some(first) = self.outputs.get(&key) {
            return Err(OutputError::Collision(path.to_path_buf(), first.clone()));
        }
        check_existing(path, self.force)?;
        self.outputs.insert(key, path.to_path_buf());
        Ok(())
    }

    /// Admits several outputs that are written together: all of them, or
    /// none (the plan is unchanged on error).
    ///
    /// # Errors
    /// The first refusal, as [`WritePlan::claim`].
    pub fn claim_all(&mut self, paths: &[PathBuf]) -> Result<(), OutputError> {
        let mut done: Vec<PathBuf> = Vec::new();
        for p in paths {
            if let Err(e) = self.claim(p) {
                for d in done {
                    self.outputs.remove(&d);
                }
                return Err(e);
            }
            done.push(self.key(p));
        }
        Ok(())
    }

    /// Whether existing regular files may be replaced.
    pub fn force(&self) -> bool {
        self.force
    }
}

/// An existing `path` must be a regular file, and needs `force`.
fn check_existing(path: &Path, force: bool) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if !m.file_type().is_file() => Err(OutputError::NotRegular(path.to_path_buf())),
        Ok(_) if !force => Err(OutputError::Exists(path.to_path_buf())),
        Ok(_) => Ok(()),
    }
}

/// Checks that `path` may be written: it is not one of `inputs`, an
/// existing target is a regular file, and it exists only with `force`.
///
/// # Errors
/// [`OutputError::IsInput`], [`OutputError::NotRegular`] or [`OutputError::Exists`].
pub fn check_target(path: &Path, inputs: &[&Path], force: bool) -> Result<(), OutputError> {
    let mut plan = WritePlan::new(force);
    for i in inputs {
        plan.add_input(i);
    }
    plan.claim(path)
}

/// Writes `bytes` to `path` atomically, replacing an existing regular file
/// (as [`write_files`] with `force`). Call [`check_target`] or
/// [`WritePlan::claim`] first.
///
/// # Errors
/// [`OutputError::Io`], [`OutputError::NotRegular`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_files(&[(path, bytes)], true)
}

/// [`write_files`] with `force` (kept for callers that checked the targets).
///
/// # Errors
/// See [`write_files`].
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> Result<(), OutputError> {
    write_files(files, true)
}

/// Writes several files that belong together (`.gltf` + `.bin`, `.msh` +
/// `.wea`) all-or-nothing: every temporary file is written and flushed
/// first, then each is moved into place (without `force`: no-clobber, so an
/// existing file, even one created a moment ago by a concurrent run, makes
/// the write fail with [`OutputError::Exists`]; with `force`: replacing a
/// regular file only). If a later move fails, the files this call created
/// are removed again.
///
/// # Errors
/// [`OutputError::Io`], [`OutputError::Exists`], [`OutputError::NotRegular`].
pub fn write_files(files: &[(&Path, &[u8])], force: bool) -> Result<(), OutputError> {
    let mut temps = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        check_existing(path, force)?;
        temps.push((*path, write_temp(path, bytes)?));
    }
    let mut created: Vec<&Path> = Vec::new();
    for (path, tmp) in temps {
        if let Err(e) = tmp.persist(path, force) {
            for c in created {
                let _ = std::fs::remove_file(c);
            }
            return Err(e);
        }
        created.push(path);
    }
    Ok(())
}

/// Temporary files of this process that exist right now (removed by the
/// signal watcher).
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A registered temporary file; dropping it removes the file.
struct Temp {
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// Moves the file to `target` (no-clobber unless `force`).
    fn persist(mut self, target: &Path, force: bool) -> Result<(), OutputError> {
        let io = |source| OutputError::Io {
            path: target.to_path_buf(),
            source,
        };
        let mut reg = temps();
        let file = self.file.take().expect("temp present until persisted");
        let res = if force {
            match check_existing(target, true) {
                Ok(()) => file
                    .persist(target)
                    .map(|_| ())
                    .map_err(|e| (e.file, e.error)),
                Err(e) => {
                    drop(file);
                    reg.retain(|p| p != &self.path);
                    return Err(e);
                }
            }
        } else {
            file.persist_noclobber(target)
                .map(|_| ())
                .map_err(|e| (e.file, e.error))
        };
        reg.retain(|p| p != &self.path);
        drop(reg);
        match res {
            Ok(()) => Ok(()),
            Err((f, e)) => {
                drop(f);
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Err(OutputError::Exists(target.to_path_buf()))
                } else {
                    Err(io(e))
                }
            }
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            let mut reg = temps();
            drop(f);
            reg.retain(|p| p != &self.path);
        }
    }
}

/// A flushed temporary file beside `path` holding `bytes`, mode `0666`
/// minus the umask.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<Temp, OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
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
        let mut reg = temps();
        let f = b.tempfile_in(&dir).map_err(io)?;
        let p = f.path().to_path_buf();
        reg.push(p.clone());
        Temp {
            file: Some(f),
            path: p,
        }
    };
    let f = t.file.as_mut().expect("just created");
    f.write_all(bytes).map_err(io)?;
    f.as_file().sync_all().map_err(io)?;
    Ok(t)
}

/// Removes this process's temporary files when SIGINT, SIGTERM or SIGHUP
/// arrives, then exits with `128 + signal`. Call it at the start of `main`,
/// before any thread is started: it blocks the signals in the calling
/// thread (inherited by later threads) and waits for them in a watcher
/// thread. A no-op off Unix.
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
                    let reg = temps();
                    for p in reg.iter() {
                        let _ = std::fs::remove_file(p);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_and_guards() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.bin");
        check_target(&p, &[], false).unwrap();
        write_files(&[(&p, b"abc")], false).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        assert!(matches!(
            check_target(&p, &[], false),
            Err(OutputError::Exists(_))
        ));
        assert!(matches!(
            write_files(&[(&p, b"x")], false),
            Err(OutputError::Exists(_))
        ));
        check_target(&p, &[], true).unwrap();
        assert!(matches!(
            check_target(&p, &[&p], true),
            Err(OutputError::IsInput(_))
        ));
        write_files(&[(&p, b"new")], true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(temps().iter().all(|t| !t.starts_with(dir.path())));
    }

    #[test]
    fn plan_detects_collisions_through_dots_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.msh");
        std::fs::write(&a, b"in").unwrap();
        let mut plan = WritePlan::new(true);
        plan.add_input(&a);
        let dotted = dir.path().join("x/../a.msh");
        assert!(matches!(plan.claim(&dotted), Err(OutputError::IsInput(_))));
        #[cfg(unix)]
        {
            let hard = dir.path().join("hard.msh");
            std::fs::hard_link(&a, &hard).unwrap();
            assert!(matches!(plan.claim(&hard), Err(OutputError::IsInput(_))));
        }
        let o = dir.path().join("new/out.glb");
        plan.claim(&o).unwrap();
        assert!(matches!(
            plan.claim(&dir.path().join("new/./out.glb")),
            Err(OutputError::Collision(..))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("l.glb");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        assert!(matches!(
            write_files(&[(&link, b"x")], true),
            Err(OutputError::NotRegular(_))
        ));
        assert!(matches!(
            check_target(Path::new("/dev/null"), &[], true),
            Err(OutputError::NotRegular(_))
        ));
        assert!(matches!(
            check_target(dir.path(), &[], true),
            Err(OutputError::NotRegular(_))
        ));
    }
}
