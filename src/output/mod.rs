//! Safe output files: one write transaction per run (docs/safety.md).
//!
//! Every write of both tools goes through a [`Transaction`], modelled on a
//! database's commit:
//!
//! - **Plan** ([`WritePlan`], `plan.rs`): every path the run reads is an
//!   input, every path it writes an output; an output must not be an input
//!   (same path after resolving links, or the same file through a hard
//!   link) nor another output. Only a file opened with
//!   [`Transaction::open_for_update`] (a game library or archive changed in
//!   place) is both read and written.
//! - **Consent**: an existing target needs `force` (or is the updated file
//!   itself), and only a regular file is replaced (never a device, FIFO,
//!   socket, folder or symlink).
//! - **Lock** (`lock.rs`): a file opened for update is read under an
//!   advisory lock (`fd-lock`) on its [`lock_file`] `.NAME.mshgltf-lock`
//!   (empty, left in place), held from before the read to the end of the
//!   commit; a second run waits a bounded time, then fails with
//!   [`OutputError::Busy`]. The target itself is not held open, so the
//!   commit can rename over it on Windows too.
//! - **Stage** (`temp.rs`): each changed file is written to a temporary file
//!   beside its target (mode `0666` minus the umask) and flushed to disk.
//!   A file whose bytes equal the target's is not rewritten.
//! - **Commit** (`txn.rs`): each existing target is first kept aside (a hard
//!   link, else a copy flushed to disk: the target's name is never unbound,
//!   so a kill at any moment leaves its old or its new bytes), then the
//!   temporary file is renamed over it (a new
//!   target is created no-clobber, so two runs cannot both create it). If any
//!   step fails, every target already committed gets its old bytes back (or
//!   is removed when it did not exist), and the error
//!   ([`OutputError::Commit`]) lists what was and was not changed. The kept
//!   originals are removed only after every rename succeeded and the folders
//!   were synced.
//! - **Retries** (`retry.rs`): on Windows, a rename, hard link or open that
//!   fails because another process briefly holds the file open (`Access
//!   denied`, a sharing violation) is tried again for about 1.3 s before
//!   it is an error.
//! - **Journal** (`journal.rs`): a commit of two or more files writes a
//!   journal beside its targets before its first rename, renamed
//!   `-committed` at its commit point; a run whose process is gone is
//!   finished or rolled back whole by the next run touching the folder, or
//!   by [`recover_folder`] (`gltf2msh --recover FOLDER`).
//! - Temporary files are removed on every error, and on SIGINT/SIGTERM/SIGHUP
//!   (Windows: Ctrl-C, console close, logoff, shutdown) once
//!   [`install_signal_cleanup`] ran (the binaries call it first thing): a
//!   journaled commit is rolled back whole (finished after its commit
//!   point); a kept original of a one-file commit whose target is missing
//!   at that moment is put back.
//! - The tools' own file names (`names.rs`, [`own_file`]) are made and
//!   recognised in one place: a batch skips them, a recovery touches no
//!   other file.
//! - **Installs** (`install.rs`): a transaction told its game folder
//!   ([`Transaction::install_into`]) keeps, in the same commit, the
//!   game's original of each file it replaces there, once, in
//!   `GAME/.mshgltf-originals/` with a manifest (`gltf2msh --restore`).

pub mod install;
mod journal;
mod lock;
mod names;
mod plan;
mod retry;
mod temp;
mod txn;

use std::path::PathBuf;

pub use install::{InstallSummary, Manifest};
pub use journal::{recover_dir_once, recover_folder, Recovered, MAX_JOURNAL_BYTES};
pub use lock::{is_lock_file, lock_file};
pub use names::{own_file, OwnFile, ORIGINALS_DIR};
pub use plan::{check_target, normalized, same_file, Folders, WritePlan};
pub use temp::install_signal_cleanup;
pub use txn::{
    sync_dirs, CommitFailure, Committed, Durability, Transaction, TxnOptions, DEFAULT_LOCK_WAIT,
    MAX_UPDATE_BYTES,
};

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
    /// Another run holds the lock of a file this run updates.
    #[error("{path}: busy: another run is changing it (waited {waited_ms} ms); try again when it has finished")]
    Busy {
        /// The locked file.
        path: PathBuf,
        /// How long this run waited, milliseconds.
        waited_ms: u64,
    },
    /// I/O failure before anything was committed.
    #[error("{path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A commit failed part-way; the failure lists every target's state.
    #[error("{0}")]
    Commit(Box<CommitFailure>),
    /// The journal of an interrupted commit cannot be read or completed
    /// (journal.rs): nothing was renamed or removed on its word.
    #[error("{path}: output.journal: the journal of an interrupted commit cannot be completed: {reason}. Nothing was changed on its word: the kept originals (.NAME.mshgltf-keep-*) beside the files it names are left as they are; check those files, put back what needs it, then remove the journal by hand")]
    Journal {
        /// The journal (or its pointer).
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl OutputError {
    /// The rule id of the refusal (`output.exists`, `output.is_input`,
    /// `output.not_regular`, `output.collision`, `output.busy`,
    /// `output.journal`, `io`).
    pub fn rule(&self) -> &'static str {
        match self {
            OutputError::Exists(_) => "output.exists",
            OutputError::IsInput(_) => "output.is_input",
            OutputError::NotRegular(_) => "output.not_regular",
            OutputError::Collision(..) => "output.collision",
            OutputError::Busy { .. } => "output.busy",
            OutputError::Journal { .. } => "output.journal",
            OutputError::Io { .. } | OutputError::Commit(_) => "io",
        }
    }

    /// True for failures of the environment (I/O, a busy lock): exit code 1
    /// in both tools; false for refusals of the command line (exit 2).
    pub fn is_runtime(&self) -> bool {
        matches!(
            self,
            OutputError::Busy { .. }
                | OutputError::Io { .. }
                | OutputError::Commit(_)
                | OutputError::Journal { .. }
        )
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Whether the last component of `path` is one of Windows' reserved device
/// names: `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`,
/// `CONIN$`, `CONOUT$`, in any case, with or without an extension and with
/// trailing spaces before it (`nul`, `CON.glb`, `Com1 .msh`). On Windows
/// such a path names the device in every folder (`out\NUL.glb` is `NUL`), and
/// `std::fs::metadata` fails on it instead of saying what it is, so the
/// checks of outputs ([`check_target`], the transaction) and of the glTF input
/// refuse it there by name as "not a regular file" (exit 2) before anything
/// is written. Pure: no file-system access, the same answer on every system;
/// callers apply it only when `cfg!(windows)`.
pub fn is_windows_device_name(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    let up = stem.to_ascii_uppercase();
    let numbered = up.len() == 4
        && (up.starts_with("COM") || up.starts_with("LPT"))
        && up.as_bytes()[3].is_ascii_digit();
    numbered
        || matches!(
            up.as_str(),
            "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
        )
}

#[cfg(test)]
mod device_name_tests {
    use super::is_windows_device_name as dev;
    use std::path::Path;

    #[test]
    fn windows_device_names_are_recognised_in_any_folder_case_and_extension() {
        for p in [
            "NUL",
            "nul",
            "CON.glb",
            "out/Aux.msh",
            "COM1",
            "lpt9.txt",
            "Com1 .msh",
            "CONOUT$",
            "conin$.x",
        ] {
            assert!(dev(Path::new(p)), "{p}");
        }
        for p in [
            "NULL",
            "CONSOLE.glb",
            "COM",
            "COM10",
            "LPTX",
            "xNUL",
            "tower.msh",
            "NUL/x.glb",
            "",
        ] {
            assert!(!dev(Path::new(p)), "{p}");
        }
    }
}
