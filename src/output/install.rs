//! Installs into a game folder, undoable (issue 37 item 5; docs/safety.md
//! "An install keeps the game's originals").
//!
//! A [`Transaction`] told the game folder it writes into
//! ([`Transaction::install_into`]) keeps, in the same commit, the game's
//! original of every file it replaces or adds there:
//!
//! - the **store** `GAME/.mshgltf-originals/` ([`store_dir`], named in
//!   `names.rs`: the batch and the importers skip it) holds `files/REL`,
//!   the byte copy of the original of the game file `GAME/REL`, and
//!   `manifest.json` ([`Manifest`]): per file its game-relative path, the
//!   original's SHA-256 and size (`null`: the install added the file), the
//!   installed file's SHA-256 and size, and when it was first and last
//!   installed (Unix seconds);
//! - the **first original is kept once**: a file already in the manifest
//!   keeps its entry's original and its backup; a later install only
//!   updates the installed hash;
//! - the backup copies and the new manifest are staged in the install's
//!   own transaction (the manifest opened for update, so under its lock):
//!   with the install's files they are one journaled commit, so a kill at
//!   any moment leaves the install with its backup, or neither.
//!
//! A file whose staged bytes equal the game's (unchanged) is no install:
//! nothing is kept for it. Restoring, listing and packing read the
//! manifest through [`Manifest::parse`]; its paths are confined to the
//! game folder by the reader that opens them (`source::game_path_components`,
//! in `gltf2msh::store`).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::names::{ORIGINALS_DIR, ORIGINALS_FILES, ORIGINALS_MANIFEST};
use super::plan::normalized;
use super::{OutputError, Transaction, MAX_UPDATE_BYTES};

/// The `format` value of a store's manifest.
pub const MANIFEST_FORMAT: &str = "mshgltf-originals";
/// The manifest's version this build writes and reads.
pub const MANIFEST_VERSION: u32 = 1;
/// Most files a manifest lists (a game folder has a few thousand files).
pub const MAX_MANIFEST_FILES: usize = 100_000;

/// The store of a game folder's originals: `GAME/.mshgltf-originals`.
pub fn store_dir(game: &Path) -> PathBuf {
    game.join(ORIGINALS_DIR)
}

/// The store's manifest: `GAME/.mshgltf-originals/manifest.json`.
pub fn manifest_path(game: &Path) -> PathBuf {
    store_dir(game).join(ORIGINALS_MANIFEST)
}

/// The backup of the game file with components `rel` (already confined to
/// the game folder): `GAME/.mshgltf-originals/files/REL`.
pub fn backup_path(game: &Path, rel: &[&str]) -> PathBuf {
    let mut p = store_dir(game).join(ORIGINALS_FILES);
    p.extend(rel);
    p
}

/// The manifest of a store (module docs): every file installed over the
/// game's originals, in the order first installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// [`MANIFEST_VERSION`].
    pub version: u32,
    /// The installed files.
    pub files: Vec<Installed>,
}

/// One installed file of a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    /// The game-relative path, components joined by `/` (`MAPS/m01/Land.msh`).
    pub path: String,
    /// The game's original: `None` when the install added the file.
    pub original: Option<Digest256>,
    /// The file as the last install wrote it.
    pub installed: Digest256,
    /// When it was first installed (Unix seconds).
    pub first_installed: u64,
    /// When it was last installed (Unix seconds).
    pub last_installed: u64,
}

/// A file's SHA-256 (64 lowercase hex digits) and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest256 {
    /// SHA-256, lowercase hex.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

impl Digest256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest256 {
            sha256: sha256_hex(bytes),
            size: bytes.len() as u64,
        }
    }

    /// Whether `bytes` are the bytes this digest was made of.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.size == bytes.len() as u64 && self.sha256 == sha256_hex(bytes)
    }
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a manifest could not be read (rule `install.manifest`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: install.manifest: {reason}")]
pub struct ManifestError {
    /// The manifest.
    pub path: PathBuf,
    /// What is wrong, with the JSON pointer of a wrong value.
    pub reason: String,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            format: MANIFEST_FORMAT.to_string(),
            version: MANIFEST_VERSION,
            files: Vec::new(),
        }
    }
}

impl Manifest {
    /// Reads a manifest's JSON (`path` names it in errors).
    ///
    /// # Errors
    /// [`ManifestError`]: not JSON, a value of the wrong type (its JSON
    /// pointer named), another format or version, more than
    /// [`MAX_MANIFEST_FILES`] files, a path listed twice, or a hash that is
    /// not 64 hex digits.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Manifest, ManifestError> {
        let err = |reason: String| ManifestError {
            path: path.to_path_buf(),
            reason,
        };
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let m: Manifest = serde_path_to_error::deserialize(de)
            .map_err(|e| err(format!("at {}: {}", pointer(e.path()), e.inner())))?;
        if m.format != MANIFEST_FORMAT || m.version != MANIFEST_VERSION {
            return Err(err(format!(
                "format {:?} version {}: this build reads {MANIFEST_FORMAT:?} version {MANIFEST_VERSION}",
                m.format, m.version
            )));
        }
        if m.files.len() > MAX_MANIFEST_FILES {
            return Err(err(format!(
                "{} files, over the limit of {MAX_MANIFEST_FILES}",
                m.files.len()
            )));
        }
        for (i, f) in m.files.iter().enumerate() {
            let hashes = f.original.iter().chain([&f.installed]);
            for h in hashes {
                if h.sha256.len() != 64 || !h.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(err(format!(
                        "at /files/{i}: sha256 {:?} is not 64 hex digits",
                        h.sha256
                    )));
                }
            }
            if m.files[..i].iter().any(|o| same_rel(&o.path, &f.path)) {
                return Err(err(format!(
                    "at /files/{i}/path: {:?} is listed twice",
                    f.path
                )));
            }
        }
        Ok(m)
    }

    /// The manifest's JSON (pretty, ending in a newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).unwrap_or_default();
        v.push(b'\n');
        v
    }

    /// The entry of the game-relative `path`, if listed.
    pub fn entry(&self, path: &str) -> Option<&Installed> {
        self.files.iter().find(|f| same_rel(&f.path, path))
    }
}

/// The JSON pointer of a serde path (`/files/0/original/size`).
pub fn pointer(path: &serde_path_to_error::Path) -> String {
    let mut at = String::new();
    for s in path.iter() {
        match s {
            serde_path_to_error::Segment::Seq { index } => at.push_str(&format!("/{index}")),
            serde_path_to_error::Segment::Map { key }
            | serde_path_to_error::Segment::Enum { variant: key } => {
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            serde_path_to_error::Segment::Unknown => at.push_str("/?"),
        }
    }
    if at.is_empty() {
        at.push('/');
    }
    at
}

/// Whether two game-relative paths name one file: equal, or on Windows
/// equal ignoring ASCII case (its file systems ignore case).
pub fn same_rel(a: &str, b: &str) -> bool {
    a == b || (cfg!(windows) && a.eq_ignore_ascii_case(b))
}

/// The game-relative path of `target` (`/`-joined components) when it lies
/// inside `game` (both resolved as [`normalized`]) and outside its store;
/// `None` otherwise.
pub fn rel_in_game(game: &Path, target: &Path) -> Option<String> {
    let g = normalized(game);
    let t = normalized(target);
    let rest = t.strip_prefix(&g).ok()?;
    let mut parts = Vec::new();
    for c in rest.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?.to_string()),
            _ => return None,
        }
    }
    if parts.is_empty() || parts[0].eq_ignore_ascii_case(ORIGINALS_DIR) {
        return None;
    }
    Some(parts.join("/"))
}

/// What an install did to one game file (kept in the transaction after its
/// commit, [`Transaction::installed`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallNote {
    /// The game-relative path.
    pub path: String,
    /// True when the game had the file before (its original is kept);
    /// false when the install added it.
    pub replaced: bool,
    /// True when this install kept the original now; false when an earlier
    /// install had kept it (the first original stays).
    pub kept_now: bool,
}

/// The store's notes of a committed install: the game folder, its store
/// and every file installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallSummary {
    /// The game folder.
    pub game: PathBuf,
    /// Its store of originals.
    pub store: PathBuf,
    /// Each installed file.
    pub files: Vec<InstallNote>,
}

impl std::fmt::Display for InstallSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |replaced: bool| {
            self.files
                .iter()
                .filter(|n| n.replaced == replaced)
                .map(|n| n.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (rep, add) = (list(true), list(false));
        write!(f, "installed into {}:", self.game.display())?;
        if !rep.is_empty() {
            write!(
                f,
                " replaced {rep} (the game's originals are kept in {})",
                self.store.display()
            )?;
        }
        if !add.is_empty() {
            write!(f, "{} added {add}", if rep.is_empty() { "" } else { ";" })?;
        }
        write!(
            f,
            "; `gltf2msh --restore {}` puts every original back",
            self.game.display()
        )
    }
}

/// Reads `path` whole when it is a regular file of at most
/// [`MAX_UPDATE_BYTES`]; `None` when it does not exist.
fn read_existing(path: &Path) -> Result<Option<Vec<u8>>, OutputError> {
    use std::io::Read;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::io(path, e)),
    };
    if !meta.is_file() {
        return Err(OutputError::NotRegular(path.to_path_buf()));
    }
    let f = std::fs::File::open(path).map_err(|e| OutputError::io(path, e))?;
    let mut v = Vec::new();
    f.take(MAX_UPDATE_BYTES + 1)
        .read_to_end(&mut v)
        .map_err(|e| OutputError::io(path, e))?;
    if v.len() as u64 > MAX_UPDATE_BYTES {
        return Err(OutputError::io(
            path,
            std::io::Error::other(format!("over {MAX_UPDATE_BYTES} bytes")),
        ));
    }
    Ok(Some(v))
}

/// Stages `bytes` for `path` in `txn`, replacing an existing file of the
/// store (opened for update, under its lock) or creating a new one.
pub(crate) fn stage_store_file(
    txn: &mut Transaction,
    path: &Path,
    bytes: Vec<u8>,
) -> Result<(), OutputError> {
    if std::fs::symlink_metadata(path).is_ok() && !txn.plan().is_claimed(path) {
        txn.open_for_update(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    }
    txn.stage(path, bytes)
}

/// Seconds since the Unix epoch (0 when the clock is before it).
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The install step of [`Transaction::commit`] (module docs): for every
/// staged file inside `game` whose bytes differ from the game's, the
/// original's backup (when it is the first install of that file) and the
/// new manifest are staged in `txn`. Returns the notes, or `None` when no
/// staged file is an install.
///
/// # Errors
/// [`OutputError::Io`] reading a game file or the store (a manifest that
/// does not read is an I/O error naming `install.manifest`: nothing is
/// installed over a store whose originals cannot be told), the refusals of
/// staging.
pub(crate) fn stage_backups(
    txn: &mut Transaction,
    game: &Path,
) -> Result<Option<InstallSummary>, OutputError> {
    let mut changed: Vec<(String, Option<Vec<u8>>, Digest256)> = Vec::new();
    for (path, bytes) in txn.staged_files() {
        let Some(rel) = rel_in_game(game, &path) else {
            continue;
        };
        let old = read_existing(&path)?;
        if old.as_deref() == Some(bytes.as_slice()) {
            continue;
        }
        changed.push((rel, old, Digest256::of(&bytes)));
    }
    if changed.is_empty() {
        return Ok(None);
    }
    let mpath = manifest_path(game);
    if let Some(dir) = mpath.parent() {
        std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    }
    let mut manifest = match txn.open_for_update(&mpath)? {
        Some(b) => Manifest::parse(&b, &mpath)
            .map_err(|e| OutputError::io(&mpath, std::io::Error::other(e.to_string())))?,
        None => Manifest::default(),
    };
    let t = now();
    let mut notes = Vec::new();
    for (rel, old, installed) in changed {
        if let Some(e) = manifest.files.iter_mut().find(|f| same_rel(&f.path, &rel)) {
            e.installed = installed;
            e.last_installed = t;
            notes.push(InstallNote {
                path: e.path.clone(),
                replaced: e.original.is_some(),
                kept_now: false,
            });
            continue;
        }
        let original = old.as_deref().map(Digest256::of);
        if let Some(bytes) = old {
            let parts: Vec<&str> = rel.split('/').collect();
            stage_store_file(txn, &backup_path(game, &parts), bytes)?;
        }
        notes.push(InstallNote {
            path: rel.clone(),
            replaced: original.is_some(),
            kept_now: true,
        });
        manifest.files.push(Installed {
            path: rel,
            original,
            installed,
            first_installed: t,
            last_installed: t,
        });
    }
    txn.stage(&mpath, manifest.to_bytes())?;
    Ok(Some(InstallSummary {
        game: game.to_path_buf(),
        store: store_dir(game),
        files: notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_and_refuses_wrong_types_by_pointer() {
        let m = Manifest {
            files: vec![Installed {
                path: "MAPS/m01/Land.msh".into(),
                original: Some(Digest256::of(b"old")),
                installed: Digest256::of(b"new"),
                first_installed: 1,
                last_installed: 2,
            }],
            ..Manifest::default()
        };
        let p = Path::new("G/.mshgltf-originals/manifest.json");
        assert_eq!(Manifest::parse(&m.to_bytes(), p).unwrap(), m);
        let bad =
            String::from_utf8(m.to_bytes())
                .unwrap()
                .replacen("\"size\": 3", "\"size\": \"3\"", 1);
        let e = Manifest::parse(bad.as_bytes(), p).unwrap_err().to_string();
        assert!(
            e.contains("install.manifest") && e.contains("at /files/0/original/size"),
            "{e}"
        );
        assert!(Digest256::of(b"old").matches(b"old"));
        assert!(!Digest256::of(b"old").matches(b"olD"));
    }

    #[test]
    fn paths_inside_the_game_and_outside_its_store() {
        let d = tempfile::tempdir().unwrap();
        let g = d.path();
        assert_eq!(
            rel_in_game(g, &g.join("MAPS/m01/Land.msh")).as_deref(),
            Some("MAPS/m01/Land.msh")
        );
        assert_eq!(rel_in_game(g, &g.join(".mshgltf-originals/files/x")), None);
        assert_eq!(rel_in_game(&g.join("MAPS"), &g.join("x.rlb")), None);
        assert_eq!(rel_in_game(g, g), None);
    }
}
