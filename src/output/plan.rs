//! The run's inputs and outputs, checked against each other before
//! anything is written (see the module docs of [`crate::output`]).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use super::OutputError;

/// A path's identity for collision checks: the deepest existing ancestor
/// resolved (`dunce::canonicalize`: symlinks and `..` followed, no `\\?\`
/// prefix on Windows where a plain path works),
/// the rest appended with `.` dropped and `..` applied lexically.
pub fn normalized(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    if let Ok(c) = dunce::canonicalize(&abs) {
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
                if let Ok(c) = dunce::canonicalize(&out) {
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
pub(crate) fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(crate) fn file_id(_path: &Path) -> Option<(u64, u64)> {
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
    /// Keys of the files opened for update (read, then replaced in place).
    updates: HashSet<PathBuf>,
    /// Keys of files only [`WritePlan::claim_update`] may claim.
    reserved: HashSet<PathBuf>,
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

    /// Reserves `path` for a later [`WritePlan::claim_update`] (a game
    /// library an in-place run will change): until then, and after, a
    /// plain [`WritePlan::claim`] refuses it as an input.
    pub fn reserve_update(&mut self, path: &Path) {
        let k = self.key(path);
        self.reserved.insert(k);
        self.reserved.insert(normalized(path));
    }

    /// True when a plain output must not be `path`: an input, or reserved
    /// for an update.
    pub fn is_protected(&mut self, path: &Path) -> bool {
        let k = self.key(path);
        self.is_input(path)
            || self.reserved.contains(&k)
            || self.reserved.contains(&normalized(path))
    }

    /// Admits `path` as a file the run reads and then replaces in place (a
    /// game library or archive; [`super::Transaction::open_for_update`]). It
    /// must be no input and no other output; it may exist without `force`.
    ///
    /// # Errors
    /// [`OutputError::IsInput`], [`OutputError::Collision`],
    /// [`OutputError::NotRegular`].
    pub fn claim_update(&mut self, path: &Path) -> Result<(), OutputError> {
        if self.is_input(path) {
            return Err(OutputError::IsInput(path.to_path_buf()));
        }
        let key = self.key(path);
        if let Some(first) = self.outputs.get(&key) {
            return Err(OutputError::Collision(path.to_path_buf(), first.clone()));
        }
        check_existing(path, true)?;
        self.outputs.insert(key.clone(), path.to_path_buf());
        self.updates.insert(key);
        Ok(())
    }

    /// True when `path` was admitted by [`WritePlan::claim_update`].
    pub fn is_update(&mut self, path: &Path) -> bool {
        let k = self.key(path);
        self.updates.contains(&k)
    }

    /// True when `path` was admitted as an output (either way).
    pub fn is_claimed(&mut self, path: &Path) -> bool {
        let k = self.key(path);
        self.outputs.contains_key(&k)
    }

    /// Admits `path` as an output of the run.
    ///
    /// # Errors
    /// [`OutputError::IsInput`], [`OutputError::Collision`] (another output
    /// of this run), [`OutputError::NotRegular`], [`OutputError::Exists`]
    /// (without `force`).
    pub fn claim(&mut self, path: &Path) -> Result<(), OutputError> {
        if self.is_protected(path) {
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
pub(crate) fn check_existing(path: &Path, force: bool) -> Result<(), OutputError> {
    // Windows: a device name (`NUL`, `CON.glb`) is the device, never a file.
    if cfg!(windows) && super::is_windows_device_name(path) {
        return Err(OutputError::NotRegular(path.to_path_buf()));
    }
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
