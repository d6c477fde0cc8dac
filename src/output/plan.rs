//! The run's inputs and outputs, checked against each other before
//! anything is written (see the module docs of [`crate::output`]).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::OutputError;

/// A path's identity for collision checks: the deepest existing ancestor
/// resolved (`dunce::canonicalize`: symlinks and `..` followed, no `\\?\`
/// prefix on Windows where a plain path works),
/// the rest appended with `.` dropped and `..` applied lexically.
///
/// One resolution per call (issue 28 item 2): the deepest existing
/// ancestor is found with `lstat` calls, then resolved once, never each
/// prefix of a path that does not exist yet.
pub fn normalized(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    for base in abs.ancestors() {
        if std::fs::symlink_metadata(base).is_err() {
            continue;
        }
        // A dangling link or an unreadable folder: resolve further up.
        let Ok(mut out) = dunce::canonicalize(base) else {
            continue;
        };
        let rest = abs.strip_prefix(base).unwrap_or(Path::new(""));
        for c in rest.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(n) => out.push(n),
                _ => {}
            }
        }
        return out;
    }
    // Nothing exists, not even the root: the path made lexical.
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolved folders, by the folder as given: [`normalized`] of each,
/// computed once and shared by every clone (a batch writes and reads
/// thousands of files in a few folders; issue 28 item 2). On Unix a folder
/// is resolved from its parent's resolution when its own name is no
/// symlink (one `lstat`), so a run costs a `readlink` only for a folder
/// that is a symlink (and the components of a path given with `..`),
/// never one per component of every path. Elsewhere each folder is
/// resolved whole, once.
#[derive(Debug, Default, Clone)]
pub struct Folders(Arc<Mutex<HashMap<PathBuf, PathBuf>>>);

impl Folders {
    /// [`normalized`] of the folder `dir` (absolute, links resolved, `..`
    /// applied), through the cache.
    pub fn normalized(&self, dir: &Path) -> PathBuf {
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = cache.get(dir) {
            return hit.clone();
        }
        let out = resolve_dir(&mut cache, dir);
        cache.insert(dir.to_path_buf(), out.clone());
        out
    }

    /// The canonical path of the existing file `path` (what
    /// `dunce::canonicalize` returns: links and `..` resolved), with its
    /// folder resolved through the cache when the file itself is no
    /// symlink; `None` when it does not exist or cannot be resolved.
    pub fn canonical_file(&self, path: &Path) -> Option<PathBuf> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if cfg!(unix) && !meta.file_type().is_symlink() {
            if let (Some(dir), Some(Component::Normal(name))) =
                (path.parent(), path.components().next_back())
            {
                return Some(self.normalized(dir).join(name));
            }
        }
        dunce::canonicalize(path).ok()
    }
}

/// [`normalized`] of `dir`, resolving on Unix each plain folder as its
/// parent's resolution (found in or added to `cache`, keyed by absolute
/// path) plus its name: only a symlink, a `..` or the root is resolved by
/// [`normalized`] itself.
fn resolve_dir(cache: &mut HashMap<PathBuf, PathBuf>, dir: &Path) -> PathBuf {
    if !cfg!(unix) {
        return normalized(dir);
    }
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(dir)
    };
    // Up from `abs` while the last component is a plain name that is no
    // symlink (or does not exist: appended as `normalized` would).
    let mut names = Vec::new();
    let mut cur: &Path = &abs;
    let mut out = loop {
        if let Some(hit) = cache.get(cur) {
            break hit.clone();
        }
        let plain = match (cur.parent(), cur.components().next_back()) {
            (Some(parent), Some(Component::Normal(name))) => {
                let link = std::fs::symlink_metadata(cur).is_ok_and(|m| m.file_type().is_symlink());
                (!link).then_some((parent, name))
            }
            _ => None,
        };
        match plain {
            Some((parent, name)) => {
                names.push((cur.to_path_buf(), name));
                cur = parent;
            }
            None => {
                let n = normalized(cur);
                cache.insert(cur.to_path_buf(), n.clone());
                break n;
            }
        }
    };
    for (at, name) in names.into_iter().rev() {
        out.push(name);
        cache.insert(at, out.clone());
    }
    out
}

/// `(device, inode)` of an existing file (following links).
#[cfg(unix)]
pub(crate) fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `(volume serial number, file index)` of an existing file on Windows
/// (`GetFileInformationByHandle`: the pair that names one file on one
/// volume, shared by its hard links); `None` when it cannot be opened, and
/// the caller then compares paths.
#[cfg(windows)]
pub(crate) fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::windows::io::AsRawHandle;
    let f = std::fs::File::open(path).ok()?;
    let mut info = win::ByHandleFileInformation::default();
    // SAFETY: a handle that `f` keeps open, and a struct of the documented layout.
    let ok = unsafe { win::GetFileInformationByHandle(f.as_raw_handle(), &mut info) };
    (ok != 0).then(|| {
        let index = (u64::from(info.index_high) << 32) | u64::from(info.index_low);
        (u64::from(info.volume_serial), index)
    })
}

/// kernel32's `BY_HANDLE_FILE_INFORMATION` and its reader (no crate).
#[cfg(windows)]
mod win {
    /// `FILETIME`: two 32-bit halves.
    #[repr(C)]
    #[derive(Default)]
    pub(super) struct FileTime {
        _low: u32,
        _high: u32,
    }

    /// `BY_HANDLE_FILE_INFORMATION`, field for field.
    #[repr(C)]
    #[derive(Default)]
    pub(super) struct ByHandleFileInformation {
        _attributes: u32,
        _creation: FileTime,
        _access: FileTime,
        _write: FileTime,
        pub(super) volume_serial: u32,
        _size_high: u32,
        _size_low: u32,
        _links: u32,
        pub(super) index_high: u32,
        pub(super) index_low: u32,
    }

    #[link(name = "kernel32")]
    extern "system" {
        pub(super) fn GetFileInformationByHandle(
            file: std::os::windows::raw::HANDLE,
            info: *mut ByHandleFileInformation,
        ) -> i32;
    }
}

#[cfg(not(any(unix, windows)))]
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
    /// thousands of files into a few folders); shared with the plans made
    /// by [`WritePlan::sharing_folders`].
    dirs: Folders,
    /// Folders of inputs whose interrupted commit could not be completed
    /// (journal.rs): checked again, and refused, at each claim.
    journal_dirs: Vec<PathBuf>,
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
            (Some(dir), Some(name)) => self.dirs.normalized(dir).join(name),
            _ => normalized(path),
        }
    }

    /// An empty plan (no inputs, no outputs, `force` as this one) that
    /// shares this plan's resolved folders: the plan of one job's
    /// [`super::Transaction`] inside a batch whose plan resolved its
    /// folders already, so a folder is resolved once per run, not once
    /// per output (issue 28 item 2).
    pub fn sharing_folders(&self) -> WritePlan {
        WritePlan {
            force: self.force,
            dirs: self.dirs.clone(),
            ..Default::default()
        }
    }

    /// [`normalized`] of `path` through the folder cache: the same path,
    /// resolved once per folder. Only a last component that is a symlink
    /// (or, on Windows, an existing file, whose spelling the system
    /// resolves) costs a resolution of its own.
    fn resolved(&mut self, path: &Path) -> PathBuf {
        let plain = match std::fs::symlink_metadata(path) {
            Err(_) => true,
            Ok(m) => cfg!(unix) && !m.file_type().is_symlink(),
        };
        if plain && path.file_name().is_some() {
            self.key(path)
        } else {
            normalized(path)
        }
    }

    /// Completes the interrupted commits in `path`'s folder the first time
    /// the process touches it (journal.rs); a failure is remembered and
    /// returned by every later claim.
    fn recover_near(&mut self, path: &Path) -> Result<(), OutputError> {
        let dir = super::temp::parent_dir(path);
        let res = super::journal::recover_dir_once(&dir);
        if res.is_err() && !self.journal_dirs.contains(&dir) {
            self.journal_dirs.push(dir);
        }
        res
    }

    /// The failures of `WritePlan::recover_near` so far, checked again.
    ///
    /// # Errors
    /// [`OutputError::Journal`], [`OutputError::Busy`] or
    /// [`OutputError::Io`] of the first folder still failing.
    pub fn check_journals(&mut self) -> Result<(), OutputError> {
        for d in self.journal_dirs.clone() {
            super::journal::recover_dir_once(&d)?;
        }
        self.journal_dirs.clear();
        Ok(())
    }

    /// Records an input of the run (a file that must never be written).
    /// An interrupted commit in its folder is completed first (journal.rs);
    /// one that cannot be is refused by the next claim.
    pub fn add_input(&mut self, path: &Path) {
        let _ = self.recover_near(path);
        let k = self.key(path);
        self.input_paths.insert(k);
        let n = self.resolved(path);
        self.input_paths.insert(n);
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
        let _ = self.recover_near(path);
        let k = self.key(path);
        self.reserved.insert(k);
        let n = self.resolved(path);
        self.reserved.insert(n);
    }

    /// True when a plain output must not be `path`: an input, or reserved
    /// for an update.
    pub fn is_protected(&mut self, path: &Path) -> bool {
        if self.input_paths.is_empty() && self.input_ids.is_empty() && self.reserved.is_empty() {
            return false;
        }
        let k = self.key(path);
        if self.is_input(path) || self.reserved.contains(&k) {
            return true;
        }
        let n = self.resolved(path);
        self.reserved.contains(&n)
    }

    /// Admits `path` as a file the run reads and then replaces in place (a
    /// game library or archive; [`super::Transaction::open_for_update`]). It
    /// must be no input and no other output; it may exist without `force`.
    ///
    /// # Errors
    /// [`OutputError::IsInput`], [`OutputError::Collision`],
    /// [`OutputError::NotRegular`]; [`OutputError::Journal`] (an
    /// interrupted commit in a folder of the run that cannot be completed).
    pub fn claim_update(&mut self, path: &Path) -> Result<(), OutputError> {
        self.check_journals()?;
        self.recover_near(path)?;
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
    /// (without `force`); [`OutputError::Journal`] (an interrupted commit
    /// in a folder of the run that cannot be completed).
    pub fn claim(&mut self, path: &Path) -> Result<(), OutputError> {
        self.check_journals()?;
        self.recover_near(path)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A hard link is the same file as its target, on Unix (device and
    /// inode) and on Windows (volume serial and file index); two files
    /// with the same bytes are not (issue 36 item 1: an output that is a
    /// hard link to an input is refused).
    #[test]
    fn a_hard_link_is_the_same_file_on_every_platform() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.cfg"),
            dir.path().join("b.glb"),
            dir.path().join("c.cfg"),
        );
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(&c, b"x").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        assert!(file_id(&a).is_some(), "no file id for {}", a.display());
        assert_eq!(file_id(&a), file_id(&b));
        assert!(same_file(&a, &b));
        assert!(!same_file(&a, &c));
        let err = check_target(&b, &[&a], true).unwrap_err();
        assert!(matches!(err, OutputError::IsInput(_)), "{err}");
    }

    /// A path that does not exist is its deepest existing folder resolved,
    /// the rest applied lexically; through a link, `..` goes to the link
    /// target's parent, as before issue 28 item 2.
    #[test]
    fn normalized_resolves_the_existing_part_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        let n = normalized(&dir.path().join("a/new/../x/./y.glb"));
        assert_eq!(n, root.join("a/x/y.glb"));
        assert_eq!(normalized(&dir.path().join("a")), root.join("a"));
        #[cfg(unix)]
        {
            std::fs::create_dir_all(root.join("t/inner")).unwrap();
            std::os::unix::fs::symlink(root.join("t/inner"), root.join("link")).unwrap();
            let n = normalized(&dir.path().join("link/../new/z.glb"));
            assert_eq!(n, root.join("t/new/z.glb"));
        }
    }

    /// The folder cache resolves as [`normalized`] does (links followed,
    /// a missing tail appended, `..` applied), and a file as
    /// `dunce::canonicalize` does, through links at any level.
    #[test]
    fn folders_resolve_as_normalized() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f.dat"), b"x").unwrap();
        let folders = Folders::default();
        // Unix adds the symlink cases below.
        #[cfg_attr(not(unix), allow(unused_mut))]
        let mut cases = vec![
            dir.path().join("a/b"),
            dir.path().join("a"),
            dir.path().join("a/new/deeper"),
            dir.path().join("a/b/../b"),
            dir.path().to_path_buf(),
        ];
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("a/b"), root.join("l")).unwrap();
            std::os::unix::fs::symlink(root.join("a/b/f.dat"), root.join("a/g.dat")).unwrap();
            cases.extend([dir.path().join("l"), dir.path().join("l/new")]);
            cases.push(dir.path().join("l/.."));
            let g = dir.path().join("a/g.dat");
            assert_eq!(folders.canonical_file(&g), dunce::canonicalize(&g).ok());
            let via = dir.path().join("l/f.dat");
            assert_eq!(folders.canonical_file(&via), Some(root.join("a/b/f.dat")));
        }
        for c in &cases {
            assert_eq!(folders.normalized(c), normalized(c), "{}", c.display());
            // Cached: the same answer again.
            assert_eq!(folders.normalized(c), normalized(c), "{}", c.display());
        }
        let f = dir.path().join("a/b/f.dat");
        assert_eq!(folders.canonical_file(&f), Some(root.join("a/b/f.dat")));
        assert_eq!(folders.canonical_file(&dir.path().join("a/none")), None);
    }

    /// A plan sharing another's folders still refuses an output claimed
    /// twice in it, and keeps its own inputs and outputs.
    #[test]
    fn plans_sharing_folders_keep_their_own_claims() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = WritePlan::new(false);
        run.claim(&dir.path().join("o/a.glb")).unwrap();
        let mut job = run.sharing_folders();
        job.claim(&dir.path().join("o/a.glb")).unwrap();
        assert!(matches!(
            job.claim(&dir.path().join("o/./a.glb")),
            Err(OutputError::Collision(..))
        ));
        assert_eq!(Arc::strong_count(&run.dirs.0), 2);
    }
}
