//! The names of the files the tools themselves leave beside their targets,
//! in one place: made here, and recognised here by [`own_file`] (a batch
//! skips them, a recovery only ever touches files named so).
//!
//! - `.NAME.mshgltf-lock`: the lock file of `NAME` (`lock.rs`; empty, left
//!   in place on purpose).
//! - `.NAME.mshgltf-keep-PID-N`: the kept original of `NAME` during a commit
//!   (`txn.rs`); `.NAME.mshgltf-keep-PID-N.part` while it is being copied
//!   (file systems without hard links).
//! - `.mshgltf-XXXXXX.tmp`: a staged new file (`temp.rs`), also a journal
//!   being written.
//! - `.mshgltf-journal-ID`, `.mshgltf-journal-ID-committed`,
//!   `.mshgltf-journal-ID-ref`: a commit journal (`journal.rs`).
//! - `GAME/.mshgltf-originals/`: the store of the game's originals an
//!   install replaced (`install.rs`): `manifest.json` and `files/REL`.

use std::path::{Path, PathBuf};

use super::temp::parent_dir;

/// Prefix of the staged temporary files (`.mshgltf-XXXXXX.tmp`).
pub(crate) const TEMP_PREFIX: &str = ".mshgltf-";
/// Suffix of the staged temporary files.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";
/// What follows `.NAME` in a kept original's name.
pub(crate) const KEEP_INFIX: &str = ".mshgltf-keep-";
/// Suffix of a kept original while it is copied.
pub(crate) const PART_SUFFIX: &str = ".part";
/// Prefix of every journal file.
pub(crate) const JOURNAL_PREFIX: &str = ".mshgltf-journal-";
/// Suffix of a journal whose renames all succeeded.
pub(crate) const COMMITTED_SUFFIX: &str = "-committed";
/// Suffix of a journal's pointer in another folder of the same commit.
pub(crate) const REF_SUFFIX: &str = "-ref";

/// The folder of a game's originals kept by installs (`install.rs`).
pub const ORIGINALS_DIR: &str = ".mshgltf-originals";
/// The manifest inside [`ORIGINALS_DIR`].
pub(crate) const ORIGINALS_MANIFEST: &str = "manifest.json";
/// The folder of the backup copies inside [`ORIGINALS_DIR`].
pub(crate) const ORIGINALS_FILES: &str = "files";

/// Which of the tools' own files a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnFile {
    /// `.NAME.mshgltf-lock`.
    Lock,
    /// `.NAME.mshgltf-keep-*` (also its `.part` copy in progress).
    Kept,
    /// `.mshgltf-*.tmp`.
    Temp,
    /// `.mshgltf-journal-*`.
    Journal,
    /// `.mshgltf-originals` (a folder), or anything inside it.
    Originals,
}

impl OwnFile {
    /// Why a batch does not convert such a file (the skipped row's reason).
    pub fn reason(self) -> &'static str {
        match self {
            OwnFile::Lock => "the tools' own lock file (.NAME.mshgltf-lock)",
            OwnFile::Kept => {
                "the tools' own kept original of a commit (.NAME.mshgltf-keep-*), not a game file"
            }
            OwnFile::Temp => {
                "the tools' own temporary file of a write (.mshgltf-*.tmp), not a game file"
            }
            OwnFile::Journal => {
                "the tools' own commit journal (.mshgltf-journal-*), not a game file"
            }
            OwnFile::Originals => {
                "the tools' own store of the game's originals an install replaced (.mshgltf-originals; gltf2msh --restore GAME puts them back), not game files"
            }
        }
    }
}

/// Which of the tools' own files `path` is named as, by its last
/// component alone (no file-system access), or [`OwnFile::Originals`] when
/// any component is [`ORIGINALS_DIR`]; `None` for any other name.
pub fn own_file(path: &Path) -> Option<OwnFile> {
    if path
        .components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(ORIGINALS_DIR))
    {
        return Some(OwnFile::Originals);
    }
    let name = path.file_name()?.to_str()?;
    if !name.starts_with('.') {
        return None;
    }
    if name.starts_with(JOURNAL_PREFIX) {
        return Some(OwnFile::Journal);
    }
    if name.len() > ".mshgltf-lock".len() + 1 && name.ends_with(".mshgltf-lock") {
        return Some(OwnFile::Lock);
    }
    if let Some(i) = name.find(KEEP_INFIX) {
        if i > 1 {
            return Some(OwnFile::Kept);
        }
    }
    if name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) {
        return Some(OwnFile::Temp);
    }
    None
}

/// The kept original of `target` for commit step `n` of process `pid`:
/// `.NAME.mshgltf-keep-PID-N` beside it.
pub(crate) fn kept_name(target: &Path, pid: u32, n: usize) -> PathBuf {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    parent_dir(target).join(format!(".{name}{KEEP_INFIX}{pid}-{n}"))
}

/// The copy in progress of the kept original `kept`: `KEPT.part`.
pub(crate) fn part_of(kept: &Path) -> PathBuf {
    let mut s = kept.as_os_str().to_owned();
    s.push(PART_SUFFIX);
    PathBuf::from(s)
}

/// Whether `name` (one path component) is a kept original of the file
/// named `target_name`: `.TARGET.mshgltf-keep-*`, nothing else.
pub(crate) fn is_kept_of(name: &str, target_name: &str) -> bool {
    single_component(name)
        && name
            .strip_prefix('.')
            .and_then(|r| r.strip_prefix(target_name))
            .and_then(|r| r.strip_prefix(KEEP_INFIX))
            .is_some_and(|r| !r.is_empty() && !r.ends_with(PART_SUFFIX))
}

/// Whether `name` (one path component) is a staged temporary file's name.
pub(crate) fn is_temp_name(name: &str) -> bool {
    single_component(name)
        && name.len() > TEMP_PREFIX.len() + TEMP_SUFFIX.len()
        && name.starts_with(TEMP_PREFIX)
        && name.ends_with(TEMP_SUFFIX)
        && !name.starts_with(JOURNAL_PREFIX)
}

/// True for a plain file name: no separator of either system, not `.`/`..`.
fn single_component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_files_are_recognised_by_name() {
        let t = Path::new("G/animals.rlb");
        let k = kept_name(t, 12, 3);
        assert_eq!(k, Path::new("G/.animals.rlb.mshgltf-keep-12-3"));
        assert_eq!(own_file(&k), Some(OwnFile::Kept));
        assert_eq!(own_file(&part_of(&k)), Some(OwnFile::Kept));
        assert!(is_kept_of(".animals.rlb.mshgltf-keep-12-3", "animals.rlb"));
        assert!(!is_kept_of(
            ".animals.rlb.mshgltf-keep-12-3.part",
            "animals.rlb"
        ));
        assert!(!is_kept_of(".other.rlb.mshgltf-keep-1", "animals.rlb"));
        assert!(!is_kept_of("../.animals.rlb.mshgltf-keep-1", "animals.rlb"));
        assert_eq!(
            own_file(Path::new(".mshgltf-a1B2c3.tmp")),
            Some(OwnFile::Temp)
        );
        assert!(is_temp_name(".mshgltf-a1B2c3.tmp"));
        assert!(!is_temp_name("x/.mshgltf-a1B2c3.tmp"));
        assert_eq!(
            own_file(Path::new(".mshgltf-journal-1-2-3")),
            Some(OwnFile::Journal)
        );
        assert_eq!(
            own_file(Path::new(".Material.lib.mshgltf-lock")),
            Some(OwnFile::Lock)
        );
        assert_eq!(
            own_file(Path::new("G/.mshgltf-originals/files/MAPS/m01/Land.msh")),
            Some(OwnFile::Originals)
        );
        assert_eq!(
            own_file(Path::new("G/.mshgltf-originals")),
            Some(OwnFile::Originals)
        );
        for other in [
            "animals.rlb",
            "mshgltf-keep-1",
            ".hidden",
            ".mshgltf-.tm",
            "a.tmp",
        ] {
            assert_eq!(own_file(Path::new(other)), None, "{other}");
        }
    }
}
