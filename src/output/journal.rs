//! The commit journal: a commit of several files is all or nothing even
//! across a kill, a crash or a power loss (docs/safety.md, "One commit, one
//! promise").
//!
//! Modelled on SQLite's rollback journal: before the first rename of a
//! commit that renames two or more files, the run writes a journal into the
//! folder of its first target, flushes it (and the folder) to disk, and
//! holds an exclusive lock on it (`fd-lock`) until the commit is over.
//! When every rename succeeded and the folders were synced, the journal is
//! renamed to its `-committed` name (the commit point: one atomic rename,
//! synced), then the kept originals are removed, then the journal.
//!
//! A run that later touches the folder (an input, an output or a library
//! in it, a batch over it; [`recover_dir_once`]), or `gltf2msh --recover
//! FOLDER` ([`recover_folder`]), finds a journal whose lock is free (its
//! run is gone) and completes it: a `-committed` journal is **finished**
//! (the kept originals and staged files are removed: every target keeps
//! its new bytes), any other is **rolled back** (every target with a kept
//! original gets it back; every target the commit created is removed if it
//! holds the commit's bytes; staged files are removed). Either way the run
//! says so, naming the files, and removes the journal last.
//!
//! # Format (version 1)
//!
//! UTF-8 text, `\n` line ends, at most [`MAX_JOURNAL_BYTES`]:
//!
//! ```text
//! mshgltf-journal 1
//! files N
//! replace LEN SHA256 TARGET KEPT TEMP      (a target that existed)
//! create LEN SHA256 TARGET - TEMP          (a target the commit creates)
//! ... N lines in the commit's rename order ...
//! end SHA256
//! ```
//!
//! - `LEN`, `SHA256`: length (decimal) and SHA-256 (64 lowercase hex digits)
//!   of the target's new bytes.
//! - `TARGET`: the target's absolute path; `KEPT` and `TEMP`: file names in
//!   the target's folder, which must be the target's own kept-original name
//!   (`.NAME.mshgltf-keep-*`) and a staged temporary name (`.mshgltf-*.tmp`)
//!   (`names.rs`): a forged journal can make a recovery rename or remove
//!   only the tools' own files, and remove a created target only when it
//!   holds exactly the journal's bytes.
//! - Paths are percent-encoded: every byte outside `!`..`~`, and `%`
//!   itself, is `%XX` (on Unix the path's bytes; on Windows its UTF-8,
//!   a path that is not valid Unicode is refused before anything is
//!   written).
//! - `end SHA256`: SHA-256 of every byte before the `end` line. A journal
//!   that is truncated, garbled, too large, of another version, or whose
//!   checksum or names do not hold is refused ([`OutputError::Journal`]):
//!   nothing is renamed or removed on its word, and the run stops with the
//!   journal's name and what to do.
//!
//! Names (`names.rs`): `.mshgltf-journal-PID-N-NANOS` while the commit
//! renames, `...-committed` after its commit point; while it is being
//! written it is `...tmp` (a file a recovery never reads, removed once
//! its lock is free). A commit whose targets span several folders also
//! writes a **pointer** `...-ref` into each other folder (`mshgltf-journal-ref
//! 1`, `primary PATH`, `end SHA256`), so a run touching any of them finds
//! the journal; the pointers are removed before the journal, so a pointer
//! whose journal is missing is refused as unreadable, never guessed at.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::names::{
    is_kept_of, is_temp_name, part_of, COMMITTED_SUFFIX, JOURNAL_PREFIX, REF_SUFFIX, TEMP_SUFFIX,
};
use super::temp::{parent_dir, registry, Registry};
use super::OutputError;

/// Largest journal read (1 MiB: a commit's journal lists a few files).
pub const MAX_JOURNAL_BYTES: u64 = 1 << 20;
/// Most files one journal lists.
const MAX_FILES: usize = 4096;
const MAGIC: &str = "mshgltf-journal 1";
const REF_MAGIC: &str = "mshgltf-journal-ref 1";

/// One target of a journaled commit.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The target, absolute.
    pub target: PathBuf,
    /// Its kept original (in the target's folder); `None` for a target the
    /// commit creates.
    pub kept: Option<PathBuf>,
    /// The staged new file (in the target's folder).
    pub temp: PathBuf,
    /// Length of the new bytes.
    pub len: u64,
    /// SHA-256 of the new bytes.
    pub sha: [u8; 32],
}

impl Entry {
    /// An entry for `target` (made absolute) with its new `bytes`.
    pub(crate) fn new(target: &Path, kept: Option<PathBuf>, temp: &Path, bytes: &[u8]) -> Self {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        Entry {
            target: abs(target),
            kept: kept.map(|k| abs(&k)),
            temp: abs(temp),
            len: bytes.len() as u64,
            sha: Sha256::digest(bytes).into(),
        }
    }
}

/// A journal this process holds (registered for the signal cleanup).
#[derive(Debug)]
pub(crate) struct Active {
    /// The journal's current name.
    pub path: PathBuf,
    /// Its pointers in the commit's other folders.
    pub refs: Vec<PathBuf>,
    /// The targets.
    pub entries: Vec<Entry>,
    /// Whether the commit point was passed (renamed `-committed`).
    pub committed: bool,
    /// A number telling this journal from the others of the process.
    pub id: usize,
}

/// A journal file held locked (closing it releases the lock).
type FileLock = fd_lock::RwLock<std::fs::File>;

/// The handle of a journal being held: its lock lives as long as this.
pub(crate) struct Live {
    id: usize,
    dir: PathBuf,
    _lock: fd_lock::RwLock<std::fs::File>,
    /// The pointers' locks (a recovery never removes one being written).
    _ref_locks: Vec<fd_lock::RwLock<std::fs::File>>,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Writes, flushes (when `sync`) and locks the journal of a commit of
/// `entries` (two or more), with its pointers, and registers it for the
/// signal cleanup. Nothing has been renamed yet.
///
/// # Errors
/// [`OutputError::Io`] naming the journal (a commit is then refused whole).
pub(crate) fn begin(entries: &[Entry], sync: bool) -> Result<Live, OutputError> {
    let dir = parent_dir(&entries[0].target);
    let id = SEQ.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let base = format!("{JOURNAL_PREFIX}{}-{id}-{nanos:x}", std::process::id());
    let path = dir.join(&base);
    let body = encode(entries).map_err(|e| OutputError::io(&path, e))?;
    if body.len() as u64 > MAX_JOURNAL_BYTES {
        return Err(OutputError::io(
            &path,
            std::io::Error::other(format!(
                "a journal of {} files would exceed {MAX_JOURNAL_BYTES} bytes: commit fewer files at once",
                entries.len()
            )),
        ));
    }
    let lock = write_then_rename(&path, &body, sync, true)?
        .ok_or_else(|| OutputError::io(&path, std::io::Error::other("journal not locked")))?;
    let mut refs = Vec::new();
    let mut ref_locks = Vec::new();
    let primary = pct(path.as_os_str()).map_err(|e| OutputError::io(&path, e))?;
    let ref_body = with_checksum(format!("{REF_MAGIC}\nprimary {primary}\n"));
    for d in other_dirs(entries, &dir) {
        let r = d.join(format!("{base}{REF_SUFFIX}"));
        match write_then_rename(&r, ref_body.as_bytes(), sync, true) {
            Ok(l) => ref_locks.extend(l),
            Err(e) => {
                for r in &refs {
                    let _ = std::fs::remove_file(r);
                }
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
        }
        refs.push(r);
    }
    registry().journals.push(Active {
        path,
        refs,
        entries: entries.to_vec(),
        committed: false,
        id,
    });
    Ok(Live {
        id,
        dir,
        _lock: lock,
        _ref_locks: ref_locks,
    })
}

/// Writes `body` to `path` through `PATH.tmp` (locked first, and the
/// lock returned, when `lock`), flushed when `sync`, then renamed into
/// place and the folder synced. The lock is taken before the first byte,
/// so a recovery never reads or removes a journal being written.
fn write_then_rename(
    path: &Path,
    body: &[u8],
    sync: bool,
    lock: bool,
) -> Result<Option<fd_lock::RwLock<std::fs::File>>, OutputError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(TEMP_SUFFIX);
    let tmp = PathBuf::from(tmp);
    let io = |e| OutputError::io(path, e);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(io)?;
    let write = |f: &mut std::fs::File| {
        f.write_all(body)?;
        if sync {
            f.sync_all()?;
        }
        Ok::<(), std::io::Error>(())
    };
    let mut held = None;
    let res = if lock {
        let mut rw = fd_lock::RwLock::new(f);
        let r = match rw.try_write() {
            // Written through the guard (Windows' locks are per handle and
            // not re-entrant); the lock then lives as long as the handle.
            Ok(mut g) => {
                let r = write(&mut g);
                std::mem::forget(g);
                r
            }
            Err(e) => Err(e),
        };
        held = Some(rw);
        r
    } else {
        write(&mut f)
    }
    .and_then(|()| super::retry::io(|| std::fs::rename(&tmp, path)));
    if let Err(e) = res {
        drop(held);
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    if sync {
        sync_dir(&parent_dir(path));
    }
    Ok(held)
}

/// The distinct folders of `entries` other than `first`, in order.
fn other_dirs(entries: &[Entry], first: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for e in entries {
        let d = parent_dir(&e.target);
        if d != first && !v.contains(&d) {
            v.push(d);
        }
    }
    v
}

/// The commit point: every rename succeeded; the journal becomes
/// `-committed` (synced when `sync`). Done under the registry lock, so the
/// signal cleanup sees the journal under one name and state.
///
/// # Errors
/// [`OutputError::Io`]: the journal still says "roll back".
pub(crate) fn commit_point(live: &Live, sync: bool) -> Result<(), OutputError> {
    let mut reg = registry();
    let Some(a) = reg.journals.iter_mut().find(|a| a.id == live.id) else {
        return Ok(());
    };
    let mut to = a.path.as_os_str().to_owned();
    to.push(COMMITTED_SUFFIX);
    let to = PathBuf::from(to);
    super::retry::io(|| std::fs::rename(&a.path, &to)).map_err(|e| OutputError::io(&a.path, e))?;
    a.path = to;
    a.committed = true;
    drop(reg);
    if sync {
        sync_dir(&live.dir);
    }
    Ok(())
}

/// Ends a held journal whose commit is complete either way (every kept
/// original was removed after the commit point, or every target was
/// rolled back): removes its pointers, then the journal, and releases it.
pub(crate) fn end(live: Live) {
    let mut reg = registry();
    if let Some(i) = reg.journals.iter().position(|a| a.id == live.id) {
        let a = reg.journals.remove(i);
        for r in &a.refs {
            let _ = std::fs::remove_file(r);
        }
        let _ = std::fs::remove_file(&a.path);
    }
    drop(reg);
    drop(live);
}

/// Releases a held journal and leaves it on disk (a rollback that could
/// not put every file back): the next run, or `--recover`, completes it.
/// Returns the journal's path.
pub(crate) fn leave(live: Live) -> Option<PathBuf> {
    let mut reg = registry();
    let p = reg
        .journals
        .iter()
        .position(|a| a.id == live.id)
        .map(|i| reg.journals.remove(i).path);
    drop(reg);
    drop(live);
    p
}

/// The signal cleanup of this process's journals (the registry locked, so
/// no rename is in flight): a committed one is finished, any other rolled
/// back; a journal is removed only when that worked, else left for the
/// next run. Their kept originals are taken out of the registry.
pub(crate) fn cleanup_on_signal(reg: &mut Registry) {
    for a in std::mem::take(&mut reg.journals) {
        let ok = if a.committed {
            finish_entries(&a.entries);
            true
        } else {
            undo_entries(&a.entries).is_ok()
        };
        for e in &a.entries {
            if let Some(k) = &e.kept {
                reg.drop_aside(k);
            }
        }
        if ok {
            for r in &a.refs {
                let _ = std::fs::remove_file(r);
            }
            let _ = std::fs::remove_file(&a.path);
        }
    }
}

/// Removes the kept originals and staged files of a finished commit.
fn finish_entries(entries: &[Entry]) {
    for e in entries {
        if let Some(k) = &e.kept {
            let _ = std::fs::remove_file(k);
            let _ = std::fs::remove_file(part_of(k));
        }
        let _ = std::fs::remove_file(&e.temp);
    }
}

/// What a rollback did.
#[derive(Debug, Default)]
struct Undone {
    /// Targets that hold their old bytes (put back, or never replaced).
    old: Vec<PathBuf>,
    /// Targets the commit had created, removed again.
    removed: Vec<PathBuf>,
}

/// Rolls every target of `entries` back, last first: a kept original that
/// exists is renamed over its target (the target holds its old bytes
/// otherwise: a kept original exists whole before its target is replaced);
/// a created target is removed when it holds exactly the new bytes; staged
/// files are removed. Every entry is tried.
///
/// # Errors
/// `(target, error)` for each target that could not be put back.
fn undo_entries(entries: &[Entry]) -> Result<Undone, (Undone, Vec<(PathBuf, String)>)> {
    let mut u = Undone::default();
    let mut failed = Vec::new();
    for e in entries.iter().rev() {
        match &e.kept {
            Some(k) => {
                let _ = std::fs::remove_file(part_of(k));
                if std::fs::symlink_metadata(k).is_ok() {
                    if let Err(err) = super::retry::io(|| std::fs::rename(k, &e.target)) {
                        failed.push((e.target.clone(), format!("{}: {err}", k.display())));
                        continue;
                    }
                }
                u.old.push(e.target.clone());
            }
            None => {
                if holds_new(e) {
                    if let Err(err) = std::fs::remove_file(&e.target) {
                        failed.push((e.target.clone(), err.to_string()));
                        continue;
                    }
                    u.removed.push(e.target.clone());
                }
            }
        }
        let _ = std::fs::remove_file(&e.temp);
    }
    u.old.reverse();
    u.removed.reverse();
    if failed.is_empty() {
        Ok(u)
    } else {
        Err((u, failed))
    }
}

/// Whether the entry's target is a regular file holding its new bytes.
fn holds_new(e: &Entry) -> bool {
    let Ok(m) = std::fs::symlink_metadata(&e.target) else {
        return false;
    };
    if !m.is_file() || m.len() != e.len {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(&e.target) else {
        return false;
    };
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(_) => return false,
        }
    }
    <[u8; 32]>::from(h.finalize()) == e.sha
}

/// What a recovery did with one journal.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// The journal.
    pub journal: PathBuf,
    /// True when the commit was finished (every target keeps its new
    /// bytes); false when it was rolled back.
    pub finished: bool,
    /// The targets that hold their old bytes again (rolled back), or their
    /// new bytes (finished).
    pub files: Vec<PathBuf>,
    /// Targets the rolled-back commit had created, removed again.
    pub removed: Vec<PathBuf>,
}

impl fmt::Display for Recovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.finished {
            write!(
                f,
                "finished an interrupted commit ({}): its renames were all done; {} keep their new bytes, the kept originals were removed",
                self.journal.display(),
                list(&self.files)
            )
        } else {
            write!(
                f,
                "rolled back an interrupted commit ({}): {} hold their old bytes again",
                self.journal.display(),
                if self.files.is_empty() {
                    "no existing file was replaced; the files".to_string()
                } else {
                    list(&self.files)
                }
            )?;
            if !self.removed.is_empty() {
                write!(f, "; files it had created removed: {}", list(&self.removed))?;
            }
            Ok(())
        }
    }
}

/// Finds every journal in `dir` whose run is gone and completes it
/// (finished when `-committed`, else rolled back; see the module docs).
/// A journal held by a live run (its lock taken) is waited for, at most
/// `wait`. A journal being written (`.tmp`) whose lock is free is removed
/// (its commit had renamed nothing).
///
/// # Errors
/// [`OutputError::Journal`] for a journal it cannot read or complete
/// (nothing is removed on its word; the other journals are still done
/// first); [`OutputError::Busy`] when a live run holds it longer than
/// `wait`; [`OutputError::Io`] when `dir` cannot be listed.
pub fn recover_folder(dir: &Path, wait: Duration) -> Result<Vec<Recovered>, OutputError> {
    let mut names: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| OutputError::io(dir, e))? {
        let e = e.map_err(|e| OutputError::io(dir, e))?;
        let n = e.file_name();
        if n.to_str().is_some_and(|n| n.starts_with(JOURNAL_PREFIX)) {
            names.push(e.path());
        }
    }
    names.sort();
    let mut done = Vec::new();
    let mut first_err = None;
    for p in names {
        match recover_path(&p, wait) {
            Ok(Some(r)) => done.push(r),
            Ok(None) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => {
            for r in &done {
                say(r);
            }
            Err(e)
        }
        None => Ok(done),
    }
}

/// Completes the journal (or pointer, or leftover `.tmp`) at `p`, if it
/// still exists and is not this process's own.
fn recover_path(p: &Path, wait: Duration) -> Result<Option<Recovered>, OutputError> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if is_own(p) {
        return Ok(None);
    }
    if name.ends_with(TEMP_SUFFIX) {
        // A journal being written: its run never renamed a target.
        if let Some((_lock, _)) = lock_journal(p, wait)? {
            let _ = std::fs::remove_file(p);
        }
        return Ok(None);
    }
    if name.ends_with(REF_SUFFIX) {
        let Some(primary) = read_ref(p, wait)? else {
            return Ok(None);
        };
        let committed = {
            let mut s = primary.as_os_str().to_owned();
            s.push(COMMITTED_SUFFIX);
            PathBuf::from(s)
        };
        for j in [&primary, &committed] {
            if std::fs::symlink_metadata(j).is_ok() {
                return recover_path(j, wait);
            }
        }
        if std::fs::symlink_metadata(p).is_err() {
            return Ok(None);
        }
        return Err(unreadable(
            p,
            &format!(
                "it points to the journal {}, which is missing",
                primary.display()
            ),
        ));
    }
    let Some((_lock, bytes)) = lock_journal(p, wait)? else {
        return Ok(None);
    };
    let entries = decode(&bytes).map_err(|why| unreadable(p, &why))?;
    let finished = name.ends_with(COMMITTED_SUFFIX);
    let base = name.strip_suffix(COMMITTED_SUFFIX).unwrap_or(name);
    let refs: Vec<PathBuf> = other_dirs(&entries, &parent_dir(p))
        .into_iter()
        .map(|d| d.join(format!("{base}{REF_SUFFIX}")))
        .collect();
    let r = if finished {
        finish_entries(&entries);
        Recovered {
            journal: p.to_path_buf(),
            finished,
            files: entries.iter().map(|e| e.target.clone()).collect(),
            removed: Vec::new(),
        }
    } else {
        match undo_entries(&entries) {
            Ok(u) => Recovered {
                journal: p.to_path_buf(),
                finished,
                files: u.old,
                removed: u.removed,
            },
            Err((_, failed)) => {
                let list: Vec<String> = failed
                    .iter()
                    .map(|(t, e)| format!("{} ({e})", t.display()))
                    .collect();
                return Err(unreadable(
                    p,
                    &format!("rolling back failed for {}", list.join(", ")),
                ));
            }
        }
    };
    for r in &refs {
        let _ = std::fs::remove_file(r);
    }
    let _ = std::fs::remove_file(p);
    sync_dir(&parent_dir(p));
    Ok(Some(r))
}

/// Whether `p` is a journal (or pointer) this process holds.
fn is_own(p: &Path) -> bool {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    registry()
        .journals
        .iter()
        .any(|a| a.path == abs || a.path == p || a.refs.iter().any(|r| r == &abs || r == p))
}

/// Opens and locks the journal `p` (waiting at most `wait` for a live run)
/// and reads it, bounded; `None` when it is gone by then.
fn lock_journal(p: &Path, wait: Duration) -> Result<Option<(FileLock, Vec<u8>)>, OutputError> {
    let f = match std::fs::OpenOptions::new().read(true).write(true).open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::io(p, e)),
    };
    let mut rw = fd_lock::RwLock::new(f);
    let t0 = Instant::now();
    let bytes = loop {
        match rw.try_write() {
            Ok(mut g) => {
                // Read through the guard (Windows' locks are per handle);
                // the lock lives as long as the handle.
                let r = read_locked(p, &mut g);
                std::mem::forget(g);
                match r? {
                    Some(b) => break b,
                    None => return Ok(None),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(OutputError::io(p, e)),
        }
        if t0.elapsed() >= wait {
            return Err(OutputError::Busy {
                path: p.to_path_buf(),
                waited_ms: t0.elapsed().as_millis() as u64,
            });
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    Ok(Some((rw, bytes)))
}

/// Reads the locked journal `f` opened as `p`; `None` when the run that
/// held it removed or renamed it meanwhile.
fn read_locked(p: &Path, f: &mut std::fs::File) -> Result<Option<Vec<u8>>, OutputError> {
    if std::fs::symlink_metadata(p).is_err() {
        return Ok(None);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().map_err(|e| OutputError::io(p, e))?;
        let same = std::fs::symlink_metadata(p).is_ok_and(|n| n.ino() == m.ino());
        if m.nlink() == 0 || !same {
            return Ok(None);
        }
    }
    read_bounded(f).map(Some).map_err(|why| unreadable(p, &why))
}

/// Reads at most [`MAX_JOURNAL_BYTES`] from `f`.
fn read_bounded(f: &mut std::fs::File) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    f.take(MAX_JOURNAL_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > MAX_JOURNAL_BYTES {
        return Err(format!("more than {MAX_JOURNAL_BYTES} bytes"));
    }
    Ok(out)
}

/// The journal a pointer names; `None` when the pointer is gone.
fn read_ref(p: &Path, wait: Duration) -> Result<Option<PathBuf>, OutputError> {
    let Some((_lock, bytes)) = lock_journal(p, wait)? else {
        return Ok(None);
    };
    let lines = checked_lines(&bytes).map_err(|why| unreadable(p, &why))?;
    let bad = |why: &str| unreadable(p, why);
    if lines.len() != 2 || lines[0] != REF_MAGIC {
        return Err(bad("not a journal pointer of version 1"));
    }
    let primary = lines[1]
        .strip_prefix("primary ")
        .ok_or_else(|| bad("no `primary` line"))
        .and_then(|s| unpct(s).map_err(|w| bad(&w)))?;
    let ok_name = primary
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(JOURNAL_PREFIX));
    if !primary.is_absolute() || !ok_name {
        return Err(bad("its `primary` is not a journal's absolute path"));
    }
    Ok(Some(primary))
}

fn unreadable(p: &Path, why: &str) -> OutputError {
    OutputError::Journal {
        path: p.to_path_buf(),
        reason: why.to_string(),
    }
}

/// The text of a journal of `entries` (see the module docs).
fn encode(entries: &[Entry]) -> std::io::Result<Vec<u8>> {
    let mut s = format!("{MAGIC}\nfiles {}\n", entries.len());
    let name = |p: &Path| pct(p.file_name().unwrap_or_default());
    for e in entries {
        let (kind, kept) = match &e.kept {
            Some(k) => ("replace", name(k)?),
            None => ("create", "-".to_string()),
        };
        s.push_str(&format!(
            "{kind} {} {} {} {kept} {}\n",
            e.len,
            hex(&e.sha),
            pct(e.target.as_os_str())?,
            name(&e.temp)?
        ));
    }
    Ok(with_checksum(s).into_bytes())
}

/// `body` followed by its `end SHA256` line.
fn with_checksum(mut body: String) -> String {
    let sum = hex(&Sha256::digest(body.as_bytes()));
    body.push_str(&format!("end {sum}\n"));
    body
}

/// The lines before a valid `end` line (checksum checked).
fn checked_lines(bytes: &[u8]) -> Result<Vec<&str>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let body_end = text
        .trim_end_matches('\n')
        .rfind('\n')
        .map(|i| i + 1)
        .ok_or("truncated: no `end` line")?;
    let (body, end) = text.split_at(body_end);
    let sum = end
        .strip_prefix("end ")
        .and_then(|s| s.strip_suffix('\n'))
        .ok_or("truncated: no `end` line")?;
    if sum != hex(&Sha256::digest(body.as_bytes())) {
        return Err("its checksum does not match (garbled or truncated)".into());
    }
    Ok(body.lines().collect())
}

/// The entries of a journal's bytes, every rule of the format checked.
fn decode(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let lines = checked_lines(bytes)?;
    if lines.first() != Some(&MAGIC) {
        return Err("not a journal of version 1".into());
    }
    let n: usize = lines
        .get(1)
        .and_then(|l| l.strip_prefix("files "))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= MAX_FILES)
        .ok_or("no valid `files N` line")?;
    if lines.len() != n + 2 {
        return Err(format!("says {n} files but lists {}", lines.len() - 2));
    }
    lines[2..]
        .iter()
        .enumerate()
        .map(|(i, l)| decode_entry(l).map_err(|why| format!("file line {}: {why}", i + 1)))
        .collect()
}

fn decode_entry(line: &str) -> Result<Entry, String> {
    let f: Vec<&str> = line.split(' ').collect();
    let [kind, len, sha, target, kept, temp] = f[..] else {
        return Err("not 6 fields".into());
    };
    let len: u64 = len.parse().map_err(|_| "bad length")?;
    let sha = unhex(sha).ok_or("bad SHA-256")?;
    let target = unpct(target)?;
    let tname = target
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|_| target.is_absolute())
        .ok_or("the target is not an absolute file path")?
        .to_string();
    let dir = parent_dir(&target);
    let kept = match (kind, kept) {
        ("create", "-") => None,
        ("replace", k) => {
            let k = unpct(k)?;
            let ks = k.to_str().unwrap_or_default();
            if !is_kept_of(ks, &tname) {
                return Err(format!("{ks:?} is not a kept original's name of {tname}"));
            }
            Some(dir.join(ks))
        }
        _ => return Err(format!("bad kind {kind:?}")),
    };
    let temp = unpct(temp)?;
    let ts = temp.to_str().unwrap_or_default();
    if !is_temp_name(ts) {
        return Err(format!("{ts:?} is not a staged file's name"));
    }
    Ok(Entry {
        kept,
        temp: dir.join(ts),
        target,
        len,
        sha,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The path's bytes, percent-encoded (see the module docs).
fn pct(p: &std::ffi::OsStr) -> std::io::Result<String> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(p);
    #[cfg(not(unix))]
    let bytes = p
        .to_str()
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "{}: not valid Unicode, cannot be journaled",
                p.to_string_lossy()
            ))
        })?
        .as_bytes();
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (b'!'..=b'~').contains(&b) && b != b'%' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(s)
}

fn unpct(s: &str) -> Result<PathBuf, String> {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("bad %XX escape")?;
            out.push(h);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    if out.is_empty() {
        return Err("empty path".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
    }
    #[cfg(not(unix))]
    String::from_utf8(out)
        .map(PathBuf::from)
        .map_err(|_| "a path that is not UTF-8".to_string())
}

/// Flushes `dir`'s entries (Unix; errors ignored).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Folders already checked by [`recover_dir_once`] in this process.
static CHECKED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Completes the interrupted commits in `dir` the first time this process
/// touches it ([`recover_folder`], waiting as `MSHGLTF_LOCK_WAIT_MS` or
/// 10 s), saying each on stderr: `TOOL: rolled back an interrupted commit
/// (JOURNAL): FILES hold their old bytes again` (or `finished ...`).
///
/// # Errors
/// As [`recover_folder`] (the folder is checked again next time).
pub fn recover_dir_once(dir: &Path) -> Result<(), OutputError> {
    {
        let c = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
        if c.iter().any(|d| d == dir) {
            return Ok(());
        }
    }
    if !dir.is_dir() {
        return Ok(());
    }
    let wait = super::TxnOptions::from_env(false).lock_wait;
    for r in recover_folder(dir, wait)? {
        say(&r);
    }
    CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(dir.to_path_buf());
    Ok(())
}

/// Prints what a recovery did, as `TOOL: ...` on stderr.
fn say(r: &Recovered) {
    let tool = std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "mshgltf".into());
    eprintln!("{tool}: {r}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<Entry> {
        ["Material.lib", "animals.rlb"]
            .iter()
            .map(|n| {
                let t = dir.join(n);
                Entry::new(
                    &t,
                    Some(super::super::names::kept_name(&t, 7, 1)),
                    &dir.join(".mshgltf-abc.tmp"),
                    b"new",
                )
            })
            .collect()
    }

    /// A journal reads back as written; every truncation and every
    /// single-byte change is refused, never misread.
    #[test]
    fn journal_round_trips_and_refuses_every_truncation_and_garble() {
        let d = tempfile::tempdir().unwrap();
        let es = entries(d.path());
        let body = encode(&es).unwrap();
        let back = decode(&body).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].target, es[1].target);
        assert_eq!(back[1].kept, es[1].kept);
        assert_eq!(back[1].sha, es[1].sha);
        for n in 0..body.len() {
            assert!(decode(&body[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..body.len() {
            let mut b = body.clone();
            b[i] ^= 0x20;
            assert!(decode(&b).is_err(), "byte {i} changed");
        }
    }

    /// A journal naming files that are not the tools' own (a forged one
    /// with a valid checksum) is refused.
    #[test]
    fn forged_names_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let mut es = entries(d.path());
        es[0].kept = Some(d.path().join("important.doc"));
        assert!(decode(&encode(&es).unwrap())
            .unwrap_err()
            .contains("not a kept original"));
        let mut es = entries(d.path());
        es[1].temp = d.path().join("animals.rlb");
        assert!(decode(&encode(&es).unwrap())
            .unwrap_err()
            .contains("not a staged file"));
    }

    /// A commit over two folders: the journal in the first, a pointer in
    /// the second; a run touching only the second folder finds the
    /// journal through the pointer and rolls the whole commit back,
    /// removing both; a pointer whose journal is missing is refused.
    #[test]
    fn a_pointer_in_another_folder_leads_to_the_journal() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let mut es = entries(&a);
        let t = b.join("animals.rlb");
        es[1] = Entry::new(
            &t,
            Some(super::super::names::kept_name(&t, 7, 2)),
            &b.join(".mshgltf-abc.tmp"),
            b"new",
        );
        for (e, old) in es.iter().zip(["oldM", "oldA"]) {
            std::fs::write(&e.target, b"new").unwrap();
            std::fs::write(e.kept.as_ref().unwrap(), old).unwrap();
        }
        let live = begin(&es, false).unwrap();
        let j = leave(live).unwrap();
        assert!(j.starts_with(&a));
        let count = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
        assert_eq!((count(&a), count(&b)), (3, 3), "journal, pointer");
        let r = recover_folder(&b, Duration::from_millis(100)).unwrap();
        assert_eq!(r.len(), 1);
        assert!(!r[0].finished);
        assert_eq!(std::fs::read(&es[0].target).unwrap(), b"oldM");
        assert_eq!(std::fs::read(&es[1].target).unwrap(), b"oldA");
        assert_eq!((count(&a), count(&b)), (1, 1), "only the targets left");
        // A pointer alone is refused, and left.
        let live = begin(&es, false).unwrap();
        let j = leave(live).unwrap();
        std::fs::remove_file(&j).unwrap();
        let e = recover_folder(&b, Duration::from_millis(100)).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        assert_eq!(count(&b), 2);
    }

    /// Recovery of a garbled journal refuses, keeps the kept originals and
    /// the journal; of a pending one restores; of a committed one finishes.
    #[test]
    fn recovery_rolls_back_finishes_or_refuses() {
        let d = tempfile::tempdir().unwrap();
        let es = entries(d.path());
        let w = Duration::from_millis(100);
        for (e, old) in es.iter().zip(["oldM", "oldA"]) {
            std::fs::write(&e.target, b"new").unwrap();
            std::fs::write(e.kept.as_ref().unwrap(), old).unwrap();
        }
        let j = d.path().join(".mshgltf-journal-1-1-1");
        let mut body = encode(&es).unwrap();
        let n = body.len();
        body.truncate(n - 5);
        std::fs::write(&j, &body).unwrap();
        let e = recover_folder(d.path(), w).unwrap_err();
        assert_eq!(e.rule(), "output.journal", "{e}");
        assert!(e.to_string().contains("by hand"), "{e}");
        assert!(es.iter().all(|e| e.kept.as_ref().unwrap().exists()));
        assert!(j.exists());
        std::fs::write(&j, encode(&es).unwrap()).unwrap();
        let r = recover_folder(d.path(), w).unwrap();
        assert_eq!(r.len(), 1);
        assert!(!r[0].finished);
        assert!(r[0].to_string().contains("animals.rlb"), "{}", r[0]);
        assert_eq!(std::fs::read(&es[0].target).unwrap(), b"oldM");
        assert_eq!(std::fs::read(&es[1].target).unwrap(), b"oldA");
        let mut left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "{left:?}");
        // Committed: the new bytes stay, the kept files go.
        for e in &es {
            std::fs::write(e.kept.as_ref().unwrap(), b"old").unwrap();
            std::fs::write(&e.target, b"new").unwrap();
        }
        let jc = d.path().join(".mshgltf-journal-1-1-1-committed");
        std::fs::write(&jc, encode(&es).unwrap()).unwrap();
        let r = recover_folder(d.path(), w).unwrap();
        assert!(r[0].finished, "{}", r[0]);
        assert_eq!(std::fs::read(&es[0].target).unwrap(), b"new");
        left = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }
}
