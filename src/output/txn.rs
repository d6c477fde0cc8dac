//! The commit protocol of a run's writes (see the module docs of
//! [`crate::output`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::journal::{self, Entry, Live};
use super::lock::{lock_and_read, Locked};
use super::names::{kept_name, part_of};
use super::plan::{check_existing, WritePlan};
use super::temp::{parent_dir, registry, write_temp, Temp};
use super::OutputError;

/// Largest file [`Transaction::open_for_update`] reads (1 GiB; retail
/// libraries are a few MB).
pub const MAX_UPDATE_BYTES: u64 = 1 << 30;

/// How long a run waits for another run's lock by default (10 s).
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// When new files reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Every file is flushed (`fsync`) before its rename, and its folder
    /// after the commit.
    Each,
    /// A file that replaces an existing one is flushed as with `Each`; a
    /// new file is not: the caller syncs once at the end with
    /// [`sync_dirs`] (msh2gltf's batch). A power loss before that sync may
    /// leave new outputs empty or short; nothing existing is at risk.
    Deferred,
}

/// How a [`Transaction`] writes.
#[derive(Debug, Clone)]
pub struct TxnOptions {
    /// Replace existing output files (`--force`). Files opened with
    /// [`Transaction::open_for_update`] are replaced without it.
    pub force: bool,
    /// When new files are flushed.
    pub durability: Durability,
    /// Longest wait for another run's lock before [`OutputError::Busy`].
    pub lock_wait: Duration,
    /// Test hook: the commit's rename number `k` (0-based, counting the
    /// changed files in the order they were staged) fails with an injected
    /// I/O error. Set from `MSHGLTF_TEST_FAIL_RENAME_AT` by
    /// [`TxnOptions::from_env`].
    #[doc(hidden)]
    pub fail_rename_at: Option<usize>,
    /// Test hook: hard links fail (`EPERM`), as on FAT/exFAT or some
    /// network shares, so each original is kept aside as a copy. Set from
    /// `MSHGLTF_TEST_NO_HARD_LINKS=1` by [`TxnOptions::from_env`].
    #[doc(hidden)]
    pub no_hard_links: bool,
    /// Test hook, **for the tests only**: right after the commit's rename
    /// number `k` (0-based, as `fail_rename_at`) succeeded, or with `k` the
    /// number of renames right after a journaled commit's commit point, the
    /// process stops itself as `how` says, as a kill from outside would. Set from
    /// `MSHGLTF_TEST_STOP_AFTER_RENAME=k` and `MSHGLTF_TEST_STOP_HOW`
    /// (`kill`, the default: SIGKILL on Unix, `TerminateProcess` on
    /// Windows; `term`: SIGTERM on Unix, the console-close handler on
    /// Windows) by [`TxnOptions::from_env`].
    #[doc(hidden)]
    pub stop_after_rename: Option<(usize, Stop)>,
}

/// How the test hook [`TxnOptions::stop_after_rename`] stops the process.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGKILL (Unix), `TerminateProcess` (Windows): no handler runs.
    Kill,
    /// SIGTERM (Unix), the console-close handler (Windows).
    Term,
}

impl TxnOptions {
    /// Options with `force`, [`Durability::Each`] and the default lock
    /// wait, overridden by the environment: `MSHGLTF_LOCK_WAIT_MS`
    /// (milliseconds) and the test hooks `MSHGLTF_TEST_FAIL_RENAME_AT`,
    /// `MSHGLTF_TEST_NO_HARD_LINKS`, `MSHGLTF_TEST_STOP_AFTER_RENAME` and
    /// `MSHGLTF_TEST_STOP_HOW` (test-only: never set them in use).
    pub fn from_env(force: bool) -> Self {
        let num = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        TxnOptions {
            force,
            durability: Durability::Each,
            lock_wait: num("MSHGLTF_LOCK_WAIT_MS").map_or(DEFAULT_LOCK_WAIT, Duration::from_millis),
            fail_rename_at: num("MSHGLTF_TEST_FAIL_RENAME_AT").map(|k| k as usize),
            no_hard_links: num("MSHGLTF_TEST_NO_HARD_LINKS").is_some_and(|v| v != 0),
            stop_after_rename: num("MSHGLTF_TEST_STOP_AFTER_RENAME").map(|k| {
                let how = std::env::var("MSHGLTF_TEST_STOP_HOW").unwrap_or_default();
                let how = if how.trim() == "term" {
                    Stop::Term
                } else {
                    Stop::Kill
                };
                (k as usize, how)
            }),
        }
    }
}

/// What a successful commit did.
#[derive(Debug, Clone, Default)]
pub struct Committed {
    /// Targets that got new bytes, in staging order.
    pub written: Vec<PathBuf>,
    /// Targets left alone because they already held the same bytes.
    pub unchanged: Vec<PathBuf>,
}

/// A commit that failed part-way: what happened to every target.
#[derive(Debug)]
pub struct CommitFailure {
    /// The failure that stopped the commit.
    pub cause: OutputError,
    /// Targets that had been replaced and got their old bytes back.
    pub restored: Vec<PathBuf>,
    /// Targets that did not exist, had been created, and were removed again.
    pub removed: Vec<PathBuf>,
    /// Targets never touched (the failing one included).
    pub not_written: Vec<PathBuf>,
    /// Targets already holding the new bytes before the run (untouched).
    pub unchanged: Vec<PathBuf>,
    /// Targets whose rollback failed: `(target, kept original, error)`.
    /// The target holds the new bytes; the old ones are in the kept file
    /// (the kept file is the target itself for a target that was new).
    pub unrestored: Vec<(PathBuf, PathBuf, String)>,
    /// The commit's journal, left on disk when not every file could be
    /// put back: the next run in its folder, or `gltf2msh --recover
    /// FOLDER`, completes the rollback.
    pub journal: Option<PathBuf>,
}

impl fmt::Display for CommitFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(f, "{}", self.cause)?;
        if self.unrestored.is_empty() {
            write!(f, "; nothing was changed")?;
        } else {
            write!(f, "; NOT every file could be put back")?;
        }
        if !self.restored.is_empty() {
            write!(f, "; restored to their old bytes: {}", list(&self.restored))?;
        }
        if !self.removed.is_empty() {
            write!(f, "; new files removed again: {}", list(&self.removed))?;
        }
        if !self.not_written.is_empty() {
            write!(f, "; not written: {}", list(&self.not_written))?;
        }
        for (t, a, e) in &self.unrestored {
            if t == a {
                write!(
                    f,
                    "; {} was created and could not be removed ({e})",
                    t.display()
                )?;
                continue;
            }
            write!(
                f,
                "; {} holds the new bytes and could not be restored ({e}): its old bytes are in {}",
                t.display(),
                a.display()
            )?;
        }
        if let Some(j) = &self.journal {
            write!(
                f,
                "; the journal {} is kept: run again, or `gltf2msh --recover {}`, to finish putting them back",
                j.display(),
                parent_dir(j).display()
            )?;
        }
        Ok(())
    }
}

/// One staged output.
struct Staged {
    path: PathBuf,
    bytes: Vec<u8>,
    replace: bool,
}

/// A file committed so far, and how to undo it.
struct Done {
    path: PathBuf,
    aside: Option<PathBuf>,
}

/// Every read and write of one run (see the module docs of
/// [`crate::output`]): inputs, outputs, locks, and the staged bytes,
/// committed all together by [`Transaction::commit`].
pub struct Transaction {
    plan: WritePlan,
    opts: TxnOptions,
    staged: Vec<Staged>,
    locks: Vec<Locked>,
    /// The game folder this run installs into (install.rs).
    install: Option<PathBuf>,
    /// What the last commit installed.
    installed: Option<super::InstallSummary>,
}

impl Transaction {
    /// An empty transaction.
    pub fn new(opts: TxnOptions) -> Self {
        Transaction {
            plan: WritePlan::new(opts.force),
            opts,
            staged: Vec::new(),
            locks: Vec::new(),
            install: None,
            installed: None,
        }
    }

    /// An empty transaction whose plan is `plan` (e.g. a batch's
    /// [`WritePlan::sharing_folders`]: its folders resolved once per run).
    pub fn with_plan(opts: TxnOptions, plan: WritePlan) -> Self {
        Transaction {
            plan,
            opts,
            staged: Vec::new(),
            locks: Vec::new(),
            install: None,
            installed: None,
        }
    }

    /// The run's plan of inputs and outputs.
    pub fn plan(&mut self) -> &mut WritePlan {
        &mut self.plan
    }

    /// The options.
    pub fn options(&self) -> &TxnOptions {
        &self.opts
    }

    /// Records an input of the run (a file that is never written).
    pub fn add_input(&mut self, path: &Path) {
        self.plan.add_input(path);
    }

    /// Admits `path` as an output before its bytes exist (refusals come
    /// before any work).
    ///
    /// # Errors
    /// As [`WritePlan::claim`].
    pub fn claim(&mut self, path: &Path) -> Result<(), OutputError> {
        self.plan.claim(path)
    }

    /// Opens a file the run reads and then replaces in place (a game
    /// library, an archive given to `--into` without `-o`): admits it
    /// ([`WritePlan::claim_update`]), locks it until the transaction ends
    /// (waiting at most [`TxnOptions::lock_wait`]) and returns its bytes,
    /// read under the lock; `None` when it does not exist (it is then
    /// created no-clobber).
    ///
    /// # Errors
    /// [`OutputError::Busy`]; [`OutputError::Io`] (also for a file over
    /// [`MAX_UPDATE_BYTES`]); the refusals of [`WritePlan::claim_update`].
    pub fn open_for_update(&mut self, path: &Path) -> Result<Option<Vec<u8>>, OutputError> {
        self.plan.claim_update(path)?;
        match lock_and_read(path, self.opts.lock_wait, MAX_UPDATE_BYTES)? {
            Some((lock, bytes)) => {
                self.locks.push(lock);
                Ok(Some(bytes))
            }
            None => Ok(None),
        }
    }

    /// Stages `bytes` for `path` (claimed now unless it was claimed or
    /// opened for update before). Nothing is written until
    /// [`Transaction::commit`].
    ///
    /// # Errors
    /// As [`WritePlan::claim`].
    pub fn stage(&mut self, path: &Path, bytes: Vec<u8>) -> Result<(), OutputError> {
        if !self.plan.is_claimed(path) {
            self.plan.claim(path)?;
        }
        let replace = self.opts.force || self.plan.is_update(path);
        self.staged.push(Staged {
            path: path.to_path_buf(),
            bytes,
            replace,
        });
        Ok(())
    }

    /// Makes this run an install into the game folder `game`
    /// (`output::install`, docs/safety.md "An install keeps the game's
    /// originals"): at [`Transaction::commit`], every staged file inside
    /// `game` (outside its store) whose bytes differ from the game's gets
    /// its original kept, the first time, in `GAME/.mshgltf-originals/`
    /// with the manifest, all in the same commit.
    pub fn install_into(&mut self, game: &Path) {
        self.install = Some(game.to_path_buf());
    }

    /// The game folder given to [`Transaction::install_into`].
    pub fn install_game(&self) -> Option<&Path> {
        self.install.as_deref()
    }

    /// What the last successful commit installed into the game folder
    /// (`None`: no install, or nothing differed).
    pub fn installed(&self) -> Option<&super::InstallSummary> {
        self.installed.as_ref()
    }

    /// The staged files, paths and bytes (copies: the install step reads
    /// them while it stages more).
    pub(crate) fn staged_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        self.staged
            .iter()
            .map(|s| (s.path.clone(), s.bytes.clone()))
            .collect()
    }

    /// Number of staged files.
    pub fn len(&self) -> usize {
        self.staged.len()
    }

    /// True when nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Writes every staged file: unchanged ones are skipped, the others
    /// written beside their targets and flushed, then renamed into place,
    /// each existing target kept aside until all renames succeeded. On any
    /// failure every committed target gets its old bytes back (or is
    /// removed when it was new). Locks are released at the end; the
    /// transaction is then empty and may stage more files.
    ///
    /// # Errors
    /// For one staged file, its failure as is ([`OutputError::Exists`]
    /// when a concurrent run created the target, [`OutputError::Io`], ...);
    /// for several, [`OutputError::Commit`] listing every target's state;
    /// [`OutputError::Journal`] when an interrupted commit in a folder of
    /// the run cannot be completed (nothing is written). A commit of two or
    /// more files is journaled (journal.rs): all or nothing across a kill.
    /// After [`Transaction::install_into`], the install step comes first
    /// (`output::install`: the originals' backups and the manifest staged
    /// with the files); its failures (a game file or the store that does
    /// not read, `install.manifest`) leave everything as it was.
    pub fn commit(&mut self) -> Result<Committed, OutputError> {
        self.installed = None;
        if let Some(game) = self.install.clone() {
            match super::install::stage_backups(self, &game) {
                Ok(s) => self.installed = s,
                Err(e) => {
                    self.staged.clear();
                    self.locks.clear();
                    return Err(e);
                }
            }
        }
        let staged = std::mem::take(&mut self.staged);
        let res = self
            .plan
            .check_journals()
            .and_then(|()| self.commit_staged(staged));
        self.locks.clear();
        if res.is_err() {
            self.installed = None;
        }
        res
    }

    fn commit_staged(&self, staged: Vec<Staged>) -> Result<Committed, OutputError> {
        let single = staged.len() == 1;
        let mut c = Committed::default();
        let all: Vec<PathBuf> = staged.iter().map(|s| s.path.clone()).collect();
        let fail = |cause: OutputError, done: Vec<Done>, from: usize, unchanged: &[PathBuf]| {
            if single {
                return cause;
            }
            let mut f = rollback(done);
            f.cause = cause;
            f.not_written = all[from..]
                .iter()
                .filter(|p| !unchanged.contains(p))
                .cloned()
                .collect();
            f.unchanged = unchanged.to_vec();
            OutputError::Commit(Box::new(f))
        };
        let temps = match self.stage_temps(&staged, &mut c) {
            Ok(t) => t,
            Err(e) => return Err(fail(e, Vec::new(), 0, &c.unchanged)),
        };
        let any_existed = temps.iter().any(|t| t.kept.is_some());
        let sync = self.opts.durability == Durability::Each || any_existed;
        // Two or more renames: journaled (journal.rs), all or nothing
        // across a kill too.
        let live = if temps.len() >= 2 {
            let entries: Vec<Entry> = temps
                .iter()
                .map(|t| {
                    Entry::new(
                        &t.path,
                        t.kept.clone(),
                        t.temp.path(),
                        &staged[t.index].bytes,
                    )
                })
                .collect();
            match journal::begin(&entries, sync) {
                Ok(l) => Some(l),
                Err(e) => return Err(fail(e, Vec::new(), 0, &c.unchanged)),
            }
        } else {
            None
        };
        drop(staged);
        let renames = temps.len();
        // Commit: keep each original aside, rename the new file over it.
        let mut done: Vec<Done> = Vec::new();
        let mut rest = temps.into_iter().enumerate();
        while let Some((k, t)) = rest.next() {
            let hook = Hook {
                fail_rename: self.opts.fail_rename_at == Some(k),
                no_hard_links: self.opts.no_hard_links,
            };
            match commit_one(&t.path, t.temp, t.kept, hook) {
                Ok(aside) => {
                    c.written.push(t.path.clone());
                    done.push(Done {
                        path: t.path,
                        aside,
                    });
                    if let Some((at, how)) = self.opts.stop_after_rename {
                        if at == k {
                            stop_for_test(how);
                        }
                    }
                }
                Err(e) => {
                    // The staged files not renamed are removed first.
                    drop(rest);
                    let from = all.iter().position(|p| p == &t.path).unwrap_or(0);
                    return Err(settle(live, fail(e, done, from, &c.unchanged)));
                }
            }
        }
        if self.opts.durability == Durability::Each || any_existed {
            let dirs: Vec<PathBuf> = c.written.iter().map(|p| parent_dir(p)).collect();
            fsync_dirs(&dirs);
        }
        if let Some(l) = &live {
            if let Err(e) = journal::commit_point(l, sync) {
                return Err(settle(live, fail(e, done, all.len(), &c.unchanged)));
            }
            if let Some((at, how)) = self.opts.stop_after_rename {
                if at == renames {
                    stop_for_test(how);
                }
            }
        }
        let mut reg = registry();
        for d in done {
            if let Some(a) = d.aside {
                let _ = std::fs::remove_file(&a);
                reg.drop_aside(&a);
            }
        }
        drop(reg);
        if let Some(l) = live {
            journal::end(l);
        }
        Ok(c)
    }

    /// Checks consent again, skips unchanged files (listed in `c`) and
    /// writes the temporary files of the others, with the names their kept
    /// originals will have.
    fn stage_temps(
        &self,
        staged: &[Staged],
        c: &mut Committed,
    ) -> Result<Vec<TempFor>, OutputError> {
        let mut temps = Vec::new();
        for (index, s) in staged.iter().enumerate() {
            check_existing(&s.path, s.replace)?;
            // Without consent to replace, the target must be created by
            // this run: never "unchanged", never replaced.
            if s.replace && holds(&s.path, &s.bytes) {
                c.unchanged.push(s.path.clone());
                continue;
            }
            let existed = std::fs::symlink_metadata(&s.path).is_ok();
            if existed && !s.replace {
                return Err(OutputError::Exists(s.path.clone()));
            }
            let sync = existed || self.opts.durability == Durability::Each;
            let temp = write_temp(&s.path, &s.bytes, sync)?;
            let kept = existed.then(|| {
                let n = ASIDE_SEQ.fetch_add(1, Ordering::Relaxed);
                kept_name(&s.path, std::process::id(), n)
            });
            temps.push(TempFor {
                path: s.path.clone(),
                temp,
                kept,
                index,
            });
        }
        Ok(temps)
    }
}

/// A staged file written beside its target, not yet renamed.
struct TempFor {
    path: PathBuf,
    temp: Temp,
    /// The name its kept original will have (`None`: a new target).
    kept: Option<PathBuf>,
    /// Its index among the staged files.
    index: usize,
}

/// Ends the journal of a failed commit: removed when every file was put
/// back, else left for the next run (and named in the failure).
fn settle(live: Option<Live>, err: OutputError) -> OutputError {
    let Some(l) = live else {
        return err;
    };
    match err {
        OutputError::Commit(mut f) if !f.unrestored.is_empty() => {
            f.journal = journal::leave(l);
            OutputError::Commit(f)
        }
        other => {
            journal::end(l);
            other
        }
    }
}

/// The test hook [`TxnOptions::stop_after_rename`]: stops this process as
/// a kill from outside would, right now.
fn stop_for_test(how: Stop) {
    #[cfg(unix)]
    // SAFETY: signals to this process.
    unsafe {
        let sig = match how {
            Stop::Kill => libc::SIGKILL,
            Stop::Term => libc::SIGTERM,
        };
        libc::kill(libc::getpid(), sig);
    }
    #[cfg(windows)]
    match how {
        // SAFETY: ends this process.
        Stop::Kill => unsafe {
            super::temp::win::TerminateProcess(super::temp::win::GetCurrentProcess(), 1);
        },
        // As the system does on a console close: the handler on a thread
        // of its own.
        Stop::Term => {
            std::thread::spawn(|| unsafe { super::temp::win::on_console_event(2) });
        }
    }
    // The signal's handler ends the process; nothing more is done here.
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// True when `path` is a regular file holding exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && m.len() == bytes.len() as u64 => {
            std::fs::read(path).is_ok_and(|old| old == bytes)
        }
        _ => false,
    }
}

static ASIDE_SEQ: AtomicUsize = AtomicUsize::new(0);

/// The test hooks for one commit step.
#[derive(Clone, Copy)]
struct Hook {
    /// The rename of the new file fails.
    fail_rename: bool,
    /// The hard link fails (`EPERM`).
    no_hard_links: bool,
}

/// Keeps the original of `path` aside as `aside` (`.NAME.mshgltf-keep-PID-N`
/// beside it, names.rs): a hard link, or, where hard links fail
/// (FAT/exFAT, some network shares), a copy flushed to disk, made as
/// `aside.part` and renamed, so the kept name only ever holds the whole
/// old file. Either way `path` stays bound to its old bytes until the new
/// file is renamed over it: a kill at any moment leaves the old or the new
/// file under the target's name, never none.
fn keep_aside(path: &Path, aside: &Path, no_hard_links: bool) -> Result<(), OutputError> {
    let linked = if no_hard_links {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "hard links disabled (MSHGLTF_TEST_NO_HARD_LINKS)",
        ))
    } else {
        link_aside_with(
            path,
            aside,
            super::retry::pauses(),
            super::retry::sleep,
            || std::fs::hard_link(path, aside),
        )
    };
    if linked.is_err() {
        // Registered first: a signal during the copy removes the partial copy
        // (the target is there, so the watcher removes the kept file).
        registry().add_aside(aside, path);
        let part = part_of(aside);
        let res = copy_aside(path, &part).and_then(|()| {
            super::retry::io(|| std::fs::rename(&part, aside))
                .map_err(|e| OutputError::io(aside, e))
        });
        if let Err(e) = res {
            let _ = std::fs::remove_file(&part);
            let _ = std::fs::remove_file(aside);
            registry().drop_aside(aside);
            return Err(e);
        }
    }
    Ok(())
}

/// Hard-links `path` as `aside` with `link` and registers the link as a
/// kept original; Windows' refusals of a file held open are retried
/// ([`super::retry::when_held_open_in`], `pauses` and `pause` given).
///
/// The registry lock is taken for each attempt, never across a pause (as
/// `Temp::persist`): the other jobs' staging and commits wait for one link
/// at most. A link and its registration happen under one lock, so the
/// signal cleanup never sees a kept file it does not know of.
fn link_aside_with(
    path: &Path,
    aside: &Path,
    pauses: &[u64],
    pause: impl FnMut(u64),
    mut link: impl FnMut() -> std::io::Result<()>,
) -> std::io::Result<()> {
    super::retry::when_held_open_in(pauses, pause, (), |()| {
        let mut reg = registry();
        link().map_err(|e| (e, ()))?;
        reg.add_aside(aside, path);
        Ok(())
    })
    .map_err(|(e, ())| e)
}

/// Copies `path` to the new file `aside` (never over an existing file) and
/// flushes it, so the kept bytes survive a power loss after the rename.
fn copy_aside(path: &Path, aside: &Path) -> Result<(), OutputError> {
    let mut from =
        super::retry::io(|| std::fs::File::open(path)).map_err(|e| OutputError::io(path, e))?;
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(aside)
        .map_err(|e| OutputError::io(aside, e))?;
    std::io::copy(&mut from, &mut to).map_err(|e| OutputError::io(aside, e))?;
    to.sync_all().map_err(|e| OutputError::io(aside, e))
}

/// Renames one staged file into place; returns the kept original.
fn commit_one(
    path: &Path,
    temp: Temp,
    kept: Option<PathBuf>,
    hook: Hook,
) -> Result<Option<PathBuf>, OutputError> {
    let injected = || {
        OutputError::io(
            path,
            std::io::Error::other("injected rename failure (MSHGLTF_TEST_FAIL_RENAME_AT)"),
        )
    };
    let Some(aside) = kept else {
        if hook.fail_rename {
            return Err(injected());
        }
        return temp.persist(path, false).map(|()| None);
    };
    check_existing(path, true)?;
    keep_aside(path, &aside, hook.no_hard_links)?;
    let res = if hook.fail_rename {
        Err(injected())
    } else {
        temp.persist(path, true)
    };
    match res {
        Ok(()) => Ok(Some(aside)),
        Err(e) => {
            // The target still holds its old bytes: drop the kept copy (or
            // put it back should the target have gone missing anyway).
            let mut reg = registry();
            if std::fs::symlink_metadata(path).is_err() {
                let _ = super::retry::io(|| std::fs::rename(&aside, path));
            } else {
                let _ = std::fs::remove_file(&aside);
            }
            reg.drop_aside(&aside);
            Err(e)
        }
    }
}

/// Undoes the committed files, last first.
fn rollback(done: Vec<Done>) -> CommitFailure {
    let mut f = CommitFailure {
        cause: OutputError::Collision(PathBuf::new(), PathBuf::new()),
        restored: Vec::new(),
        removed: Vec::new(),
        not_written: Vec::new(),
        unchanged: Vec::new(),
        unrestored: Vec::new(),
        journal: None,
    };
    let mut reg = registry();
    for d in done.into_iter().rev() {
        match d.aside {
            Some(a) => match super::retry::io(|| std::fs::rename(&a, &d.path)) {
                Ok(()) => {
                    reg.drop_aside(&a);
                    f.restored.push(d.path);
                }
                Err(e) => f.unrestored.push((d.path, a, e.to_string())),
            },
            None => match std::fs::remove_file(&d.path) {
                Ok(()) => f.removed.push(d.path),
                Err(e) => f.unrestored.push((d.path.clone(), d.path, e.to_string())),
            },
        }
    }
    f.restored.reverse();
    f.removed.reverse();
    f
}

/// Flushes the folder entries (renames) of `dirs` (each once); errors are
/// ignored (some file systems cannot sync a folder).
fn fsync_dirs(dirs: &[PathBuf]) {
    let mut seen: Vec<&PathBuf> = Vec::new();
    for d in dirs {
        if seen.contains(&d) {
            continue;
        }
        seen.push(d);
        #[cfg(unix)]
        if let Ok(f) = std::fs::File::open(d) {
            let _ = f.sync_all();
        }
    }
}

/// The one sync at the end of a [`Durability::Deferred`] run: on Linux one
/// `syncfs` per file system holding `dirs`, then each folder's entries;
/// elsewhere each folder. Errors are ignored (best effort: the outputs are
/// complete files either way, this only shortens the window in which a
/// power loss could cut them).
pub fn sync_dirs(dirs: &[PathBuf]) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let mut devs: Vec<u64> = Vec::new();
        for d in dirs {
            if let Ok(f) = std::fs::File::open(d) {
                let dev = f.metadata().map(|m| m.dev()).unwrap_or(0);
                if !devs.contains(&dev) {
                    devs.push(dev);
                    // SAFETY: syncfs on an open descriptor.
                    unsafe {
                        libc::syncfs(f.as_raw_fd());
                    }
                }
            }
        }
    }
    fsync_dirs(dirs);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(force: bool) -> TxnOptions {
        TxnOptions {
            force,
            durability: Durability::Each,
            lock_wait: Duration::from_millis(100),
            fail_rename_at: None,
            no_hard_links: false,
            stop_after_rename: None,
        }
    }

    /// Linking a kept original takes the registry lock for each attempt,
    /// not across a Windows retry pause; the link is registered under the
    /// lock that made it.
    #[test]
    fn keep_aside_locks_per_attempt_not_across_a_pause() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("out.glb");
        std::fs::write(&target, b"old").unwrap();
        let aside = d.path().join(".out.glb.mshgltf-keep-test");
        let (mut attempts, mut paused) = (0, 0);
        link_aside_with(
            &target,
            &aside,
            &[1, 1, 1],
            |_| {
                paused += 1;
                let reg = crate::output::temp::registry_within_5s()
                    .expect("registry free during a pause");
                assert!(!reg.has_aside(&aside));
            },
            || {
                attempts += 1;
                assert!(
                    crate::output::temp::registry_is_locked(),
                    "locked during an attempt"
                );
                if attempts < 3 {
                    return Err(std::io::Error::from_raw_os_error(5));
                }
                std::fs::hard_link(&target, &aside)
            },
        )
        .unwrap();
        assert_eq!((attempts, paused), (3, 2));
        assert!(registry().has_aside(&aside));
        assert_eq!(std::fs::read(&aside).unwrap(), b"old");
        registry().drop_aside(&aside);

        let e = link_aside_with(
            &target,
            &d.path().join("never"),
            &[1],
            |_| {},
            || Err(std::io::Error::from_raw_os_error(5)),
        )
        .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(5));
        assert!(!registry().has_aside(&d.path().join("never")));
    }

    /// Names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn write_guards_and_no_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.bin");
        let mut t = Transaction::new(opts(false));
        t.stage(&p, b"abc".to_vec()).unwrap();
        t.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        let mut t = Transaction::new(opts(false));
        assert!(matches!(
            t.stage(&p, b"x".to_vec()),
            Err(OutputError::Exists(_))
        ));
        let mut t = Transaction::new(opts(true));
        t.add_input(&p);
        assert!(matches!(
            t.stage(&p, b"x".to_vec()),
            Err(OutputError::IsInput(_))
        ));
        let mut t = Transaction::new(opts(true));
        t.stage(&p, b"new".to_vec()).unwrap();
        let c = t.commit().unwrap();
        assert_eq!(c.written, std::slice::from_ref(&p));
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(names(&dir.path().join("sub")), ["out.bin"]);
        assert_eq!(registry().temps_under(dir.path()), 0);
    }

    #[test]
    fn rename_failure_at_every_position_keeps_every_original() {
        // With hard links, and without (kept originals are copies).
        for no_links in [false, true] {
            rename_failures(no_links);
        }
    }

    fn rename_failures(no_links: bool) {
        let dir = tempfile::tempdir().unwrap();
        let old: Vec<(PathBuf, Vec<u8>)> = ["Material.lib", "Textures.lib", "units.rlb"]
            .iter()
            .map(|n| (dir.path().join(n), format!("old {n}").into_bytes()))
            .collect();
        for (p, b) in &old {
            std::fs::write(p, b).unwrap();
        }
        let fresh = dir.path().join("NEW.msh");
        let before = names(dir.path());
        let o = |k: Option<usize>| TxnOptions {
            fail_rename_at: k,
            no_hard_links: no_links,
            ..opts(true)
        };
        for k in 0..4 {
            let mut t = Transaction::new(o(Some(k)));
            for (p, _) in &old {
                t.stage(p, b"new bytes".to_vec()).unwrap();
            }
            t.stage(&fresh, b"model".to_vec()).unwrap();
            let e = t.commit().unwrap_err();
            let OutputError::Commit(f) = &e else {
                panic!("k={k}: {e}")
            };
            assert_eq!(f.restored.len(), k.min(3), "k={k}: {e}");
            assert!(f.unrestored.is_empty(), "k={k}: {e}");
            assert!(e.to_string().contains("nothing was changed"), "{e}");
            assert!(e.to_string().contains("injected"), "{e}");
            for (p, b) in &old {
                assert_eq!(&std::fs::read(p).unwrap(), b, "k={k}: {}", p.display());
            }
            assert!(!fresh.exists(), "k={k}");
            assert_eq!(
                names(dir.path()),
                before,
                "k={k}, no_links={no_links}: no temporary or kept file left"
            );
        }
        // Without the rename hook all four are written.
        let mut t = Transaction::new(o(None));
        for (p, _) in &old {
            t.stage(p, b"new bytes".to_vec()).unwrap();
        }
        t.stage(&fresh, b"model".to_vec()).unwrap();
        assert_eq!(t.commit().unwrap().written.len(), 4);
        assert_eq!(std::fs::read(&fresh).unwrap(), b"model");
        assert_eq!(
            names(dir.path()).len(),
            before.len() + 1,
            "no kept file left"
        );
    }

    /// Issue 26 item 2: keeping an original aside never unbinds the target's
    /// name, with or without hard links (a kill between keeping it and the
    /// rename leaves the old file in place), and the kept file holds the old
    /// bytes.
    #[test]
    fn keeping_an_original_never_unbinds_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("weapon.rlb");
        std::fs::write(&lib, b"old archive").unwrap();
        for no_links in [false, true] {
            let aside = kept_name(&lib, 1, usize::from(no_links));
            keep_aside(&lib, &aside, no_links).unwrap();
            assert_eq!(std::fs::read(&lib).unwrap(), b"old archive", "{no_links}");
            assert_eq!(std::fs::read(&aside).unwrap(), b"old archive", "{no_links}");
            std::fs::remove_file(&aside).unwrap();
            registry().drop_aside(&aside);
        }
        assert_eq!(names(dir.path()), ["weapon.rlb"]);
    }

    #[cfg(unix)]
    #[test]
    fn unchanged_files_are_not_rewritten() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("LightMap.lib");
        let b = dir.path().join("Material.lib");
        std::fs::write(&a, b"same").unwrap();
        std::fs::write(&b, b"old").unwrap();
        let ino = std::fs::metadata(&a).unwrap().ino();
        let mut t = Transaction::new(opts(false));
        t.open_for_update(&a).unwrap();
        t.open_for_update(&b).unwrap();
        t.stage(&a, b"same".to_vec()).unwrap();
        t.stage(&b, b"new".to_vec()).unwrap();
        let c = t.commit().unwrap();
        assert_eq!(c.unchanged, std::slice::from_ref(&a));
        assert_eq!(c.written, std::slice::from_ref(&b));
        assert_eq!(std::fs::metadata(&a).unwrap().ino(), ino);
    }

    #[test]
    fn updates_are_locked_and_reread_after_a_replacement() {
        for no_links in [false, true] {
            locked_updates(no_links);
        }
    }

    fn locked_updates(no_links: bool) {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("Material.lib");
        std::fs::write(&lib, b"v1").unwrap();
        let o = || TxnOptions {
            no_hard_links: no_links,
            ..opts(false)
        };
        let mut first = Transaction::new(o());
        assert_eq!(first.open_for_update(&lib).unwrap().unwrap(), b"v1");
        // The lock is on the lock file beside the library, never on the
        // library (Windows refuses a rename over a locked file).
        assert_eq!(
            names(dir.path()),
            [".Material.lib.mshgltf-lock", "Material.lib"]
        );
        let mut second = Transaction::new(o());
        let e = second.open_for_update(&lib).unwrap_err();
        assert!(matches!(e, OutputError::Busy { .. }), "{e}");
        assert!(e.to_string().contains("busy"), "{e}");
        assert!(e.is_runtime());
        first.stage(&lib, b"v2".to_vec()).unwrap();
        first.commit().unwrap();
        // The lock is free, and the new file is what a next run reads; the
        // lock file stays (empty), so every run locks the same file.
        let mut third = Transaction::new(o());
        assert_eq!(third.open_for_update(&lib).unwrap().unwrap(), b"v2");
        assert_eq!(
            std::fs::read(super::super::lock_file(&lib)).unwrap(),
            b"",
            "the lock file stays empty"
        );
        // An update target is never also an input or a second output.
        let mut t = Transaction::new(opts(true));
        t.add_input(&lib);
        assert!(matches!(
            t.open_for_update(&lib),
            Err(OutputError::IsInput(_))
        ));
        let mut t = Transaction::new(opts(true));
        t.claim(&lib).unwrap();
        assert!(matches!(
            t.open_for_update(&lib),
            Err(OutputError::Collision(..))
        ));
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
        let mut t = Transaction::new(opts(true));
        assert!(matches!(
            t.stage(&link, b"x".to_vec()),
            Err(OutputError::NotRegular(_))
        ));
        assert!(matches!(
            super::super::check_target(Path::new("/dev/null"), &[], true),
            Err(OutputError::NotRegular(_))
        ));
        assert!(matches!(
            super::super::check_target(dir.path(), &[], true),
            Err(OutputError::NotRegular(_))
        ));
    }

    #[test]
    fn a_file_as_parent_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        let mut t = Transaction::new(opts(false));
        t.stage(&f.join("out.glb"), b"x".to_vec()).unwrap();
        let e = t.commit().unwrap_err();
        assert!(e.to_string().contains("is a file, not a folder"), "{e}");
    }
}
