//! The installs into a game folder, listed, undone, packed and applied
//! (issue 37 item 5; docs/safety.md "An install keeps the game's
//! originals"): `gltf2msh --installed GAME`, `--restore GAME`,
//! `--pack MOD.zip GAME`, `--apply MOD.zip GAME` ([`StoreArgs`]).
//!
//! The store itself (`GAME/.mshgltf-originals/`, its manifest, the backups
//! an install keeps in its own commit) is [`crate::output::install`]'s;
//! every path the store's manifest or a mod names is confined to the game
//! folder here by [`source::game_path_components`] before it is opened.
//!
//! A mod (`--pack`) is a zip of the installed files, `files/REL`, with
//! `mshgltf-mod.json` ([`ModManifest`]): per file its game-relative path,
//! its SHA-256 and size, and the original's (`null`: the mod adds it).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{output_fail, usage, RunError};
use crate::output::install::{
    backup_path, manifest_path, rel_in_game, same_rel, store_dir, Digest256, Installed,
};
use crate::output::{self, Manifest, Transaction, TxnOptions};
use crate::source;

pub use super::args::StoreArgs;

/// The `format` of a mod's manifest.
pub const MOD_FORMAT: &str = "mshgltf-mod";
/// The mod manifest's entry name in the zip.
pub const MOD_MANIFEST: &str = "mshgltf-mod.json";
/// The folder of the mod's files in the zip.
pub const MOD_FILES: &str = "files/";
/// Most entries a mod's zip may hold.
pub const MAX_MOD_ENTRIES: usize = 10_000;
/// Most bytes a mod's files may hold uncompressed, all together (1 GiB,
/// [`output::MAX_UPDATE_BYTES`]); also the largest zip read.
pub const MAX_MOD_BYTES: u64 = output::MAX_UPDATE_BYTES;
/// Most bytes of a mod's manifest.
const MAX_MOD_MANIFEST_BYTES: u64 = 16 << 20;

/// The manifest of a mod (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModManifest {
    /// Always [`MOD_FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// The mod's files.
    pub files: Vec<ModFile>,
}

/// One file of a mod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModFile {
    /// The game-relative path (`/`-separated).
    pub path: String,
    /// The file the mod installs.
    pub file: Digest256,
    /// The game's original the mod was made over; `None`: the mod adds the file.
    pub original: Option<Digest256>,
}

/// Runs one store command (module docs).
///
/// # Errors
/// [`RunError::Usage`] (exit 2): no such game folder, a refused mod;
/// [`RunError::Conversion`] (exit 1): a file that could not be restored,
/// a store or zip that does not read.
pub fn run(a: &StoreArgs) -> Result<(), RunError> {
    let (what, game) = a.command()?;
    if !game.is_dir() {
        return Err(usage(format!("{}: not a folder", game.display())));
    }
    let mut lines = Vec::new();
    let res = match what {
        Command::Installed => installed(&game, &mut lines),
        Command::Restore => restore(&game, a.force, &mut lines),
        Command::Pack(z) => pack(&z, &game, a.force, &mut lines),
        Command::Apply(z) => apply(&z, &game, &mut lines),
    };
    if !a.quiet || res.is_err() {
        for l in &lines {
            eprintln!("gltf2msh: {l}");
        }
    }
    if let Some(r) = &a.report {
        let v = match &res {
            Ok(files) => serde_json::json!({"ok": true, "game": game, "files": files}),
            Err(e) => serde_json::json!({"ok": false, "game": game, "exit_code": e.exit_code(),
                "error": e.to_string(), "lines": lines}),
        };
        let mut t = Transaction::new(TxnOptions::from_env(true));
        let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
        if let Err(e) = t.stage(r, text).and_then(|()| t.commit().map(|_| ())) {
            eprintln!("gltf2msh: report {}: {e}", r.display());
        }
    }
    res.map(|_| ())
}

/// Which store command.
pub enum Command {
    /// `--installed GAME`.
    Installed,
    /// `--restore GAME`.
    Restore,
    /// `--pack MOD.zip GAME`.
    Pack(PathBuf),
    /// `--apply MOD.zip GAME`.
    Apply(PathBuf),
}

/// The game folder a run of `cli` installs into: `--game-dir` when it is
/// a game folder (it holds `objects.rlb`), else the nearest folder holding
/// `objects.rlb` at or above the folder of the base (or the `--into`
/// archive), at most [`crate::mission::pipeline::GAME_DEPTH`] up.
pub fn install_game(base: Option<&Path>, game_dir: Option<&Path>) -> Option<PathBuf> {
    use crate::mission::validate::find_in_game;
    use crate::unit::assemble::REGISTRY;
    if let Some(g) = game_dir.filter(|g| find_in_game(g, REGISTRY).is_some()) {
        return Some(g.to_path_buf());
    }
    let abs = output::normalized(base?);
    let mut dir = abs.parent()?;
    for _ in 0..=crate::mission::pipeline::GAME_DEPTH {
        if find_in_game(dir, REGISTRY).is_some() {
            return Some(dir.to_path_buf());
        }
        dir = dir.parent()?;
    }
    None
}

/// The store's manifest, read without a lock (listing, packing); an empty
/// one when there is none.
fn read_manifest(game: &Path) -> Result<Manifest, RunError> {
    let p = manifest_path(game);
    if std::fs::symlink_metadata(&p).is_err() {
        return Ok(Manifest::default());
    }
    let b = super::read_input(&p, "install store manifest")?;
    Manifest::parse(&b, &p).map_err(|e| super::conversion(e.to_string()))
}

/// `GAME/REL` for a manifest's or a mod's game-relative path, confined to
/// the game folder; never a path into the store or one of the tools' own
/// files.
fn game_file(game: &Path, rel: &str) -> Result<(PathBuf, Vec<String>), String> {
    let parts = source::game_path_components(rel).map_err(|e| e.to_string())?;
    if parts.is_empty() {
        return Err(format!("{rel:?}: an empty path"));
    }
    // Only the form the tools write (components joined by `/`): no
    // absolute path, no `\`, no empty or `.` component.
    if parts.join("/") != rel {
        return Err(format!(
            "{rel:?} is not in the form of a game-relative path (components joined by /, as {:?})",
            parts.join("/")
        ));
    }
    let mut p = game.to_path_buf();
    p.extend(&parts);
    if let Some(own) = output::own_file(&p) {
        return Err(format!("{rel:?} is {}", own.reason()));
    }
    Ok((p, parts.iter().map(|s| s.to_string()).collect()))
}

/// A file's bytes, `None` when missing.
fn read_opt(p: &Path) -> Result<Option<Vec<u8>>, RunError> {
    if std::fs::symlink_metadata(p).is_err() {
        return Ok(None);
    }
    super::read_input(p, "game file").map(Some)
}

/// `--installed GAME`: each installed file, replaced or added, its
/// original's SHA-256, and whether it still holds what was installed.
fn installed(game: &Path, lines: &mut Vec<String>) -> Result<serde_json::Value, RunError> {
    let m = read_manifest(game)?;
    let mut rows = Vec::new();
    for f in &m.files {
        let state = match game_file(game, &f.path) {
            Err(e) => format!("refused: {e}"),
            Ok((p, _)) => match read_opt(&p)? {
                None => "missing".to_string(),
                Some(b) if f.installed.matches(&b) => "installed".to_string(),
                Some(b) if f.original.as_ref().is_some_and(|o| o.matches(&b)) => {
                    "original".to_string()
                }
                Some(_) => "changed since its install".to_string(),
            },
        };
        let kind = if f.original.is_some() {
            "replaced"
        } else {
            "added"
        };
        lines.push(match &f.original {
            Some(o) => format!(
                "{kind} {} (original sha256 {}, {} bytes; {state})",
                f.path, o.sha256, o.size
            ),
            None => format!("{kind} {} ({state})", f.path),
        });
        rows.push(serde_json::json!({"path": f.path, "kind": kind,
            "original": f.original, "installed": f.installed, "state": state,
            "first_installed": f.first_installed, "last_installed": f.last_installed}));
    }
    if m.files.is_empty() {
        lines.push(format!(
            "nothing is installed over the originals of {}",
            game.display()
        ));
    }
    Ok(serde_json::Value::Array(rows))
}

/// What `--restore` does to one installed file.
enum Undo {
    /// Put the original back.
    Put(PathBuf, Vec<u8>),
    /// Remove a file the install added.
    Remove(PathBuf),
    /// The file already holds its original (a restore interrupted after its
    /// commit): nothing to do.
    Already(PathBuf),
}

/// `--restore GAME [--force]` (module docs, docs/safety.md): every
/// replaced file back byte-identical (its backup's SHA-256 checked), then
/// every added file removed and the store emptied.
///
/// # Errors
/// [`RunError::Conversion`] naming every file that cannot be restored (a
/// damaged or missing backup, a path outside the game, a file changed
/// since its install without `--force`): nothing is changed then.
fn restore(
    game: &Path,
    force: bool,
    lines: &mut Vec<String>,
) -> Result<serde_json::Value, RunError> {
    let mpath = manifest_path(game);
    if std::fs::symlink_metadata(&mpath).is_err() {
        lines.push(format!(
            "nothing to restore in {}: no install kept an original there",
            game.display()
        ));
        cleanup_store(game);
        return Ok(serde_json::json!([]));
    }
    let mut txn = Transaction::new(TxnOptions::from_env(false));
    let mbytes = txn
        .open_for_update(&mpath)
        .map_err(output_fail)?
        .unwrap_or_default();
    let m = Manifest::parse(&mbytes, &mpath).map_err(|e| super::conversion(e.to_string()))?;
    let mut plan = Vec::new();
    let mut problems = Vec::new();
    for f in &m.files {
        match undo_of(game, f, force) {
            Ok(u) => plan.push((f, u)),
            Err(e) => problems.push(format!("{}: {e}", f.path)),
        }
    }
    if !problems.is_empty() {
        return Err(super::conversion(format!(
            "--restore {}: nothing was restored: {}",
            game.display(),
            problems.join("; ")
        )));
    }
    let mut rows = Vec::new();
    let mut later = Manifest::default();
    for (f, u) in &plan {
        match u {
            Undo::Put(p, bytes) => {
                txn.open_for_update(p).map_err(output_fail)?;
                txn.stage(p, bytes.clone()).map_err(output_fail)?;
            }
            Undo::Remove(_) => later.files.push((*f).clone()),
            Undo::Already(_) => {}
        }
    }
    // The added files stay listed until they are removed: a restore
    // stopped after this commit is finished by the next one.
    txn.stage(&mpath, later.to_bytes()).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
    let mut failed = Vec::new();
    for (f, u) in plan {
        let (verb, p) = match u {
            Undo::Put(p, b) => (format!("restored (original, {} bytes)", b.len()), p),
            Undo::Already(p) => ("already the original".to_string(), p),
            Undo::Remove(p) => match std::fs::remove_file(&p) {
                Ok(()) => ("removed (added by an install)".to_string(), p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    ("already removed (added by an install)".to_string(), p)
                }
                Err(e) => {
                    failed.push(format!("{}: could not be removed: {e}", p.display()));
                    continue;
                }
            },
        };
        lines.push(format!("{verb}: {}", f.path));
        rows.push(serde_json::json!({"path": f.path, "done": verb, "file": p}));
    }
    if !failed.is_empty() {
        return Err(super::conversion(format!(
            "--restore {}: {} (run --restore again to finish)",
            game.display(),
            failed.join("; ")
        )));
    }
    cleanup_store(game);
    lines.push(format!(
        "{} restored: {} file(s) put back or removed; the store {} is emptied",
        game.display(),
        rows.len(),
        store_dir(game).display()
    ));
    Ok(serde_json::Value::Array(rows))
}

/// How one installed file is undone (module docs), after its checks.
fn undo_of(game: &Path, f: &Installed, force: bool) -> Result<Undo, String> {
    let (p, parts) = game_file(game, &f.path)?;
    let now = read_opt(&p).map_err(|e| e.to_string())?;
    let Some(orig) = &f.original else {
        return match now {
            Some(b) if !force && !f.installed.matches(&b) => Err(changed(&b)),
            _ => Ok(Undo::Remove(p)),
        };
    };
    if now.as_deref().is_some_and(|b| orig.matches(b)) {
        return Ok(Undo::Already(p));
    }
    if let Some(b) = &now {
        if !force && !f.installed.matches(b) {
            return Err(changed(b));
        }
    }
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let bp = backup_path(game, &refs);
    let backup = read_opt(&bp)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("its backup {} is missing", bp.display()))?;
    if !orig.matches(&backup) {
        return Err(format!(
            "its backup {} is damaged (sha256 {}, {} bytes; the original was {}, {} bytes)",
            bp.display(),
            output::install::sha256_hex(&backup),
            backup.len(),
            orig.sha256,
            orig.size
        ));
    }
    Ok(Undo::Put(p, backup))
}

fn changed(now: &[u8]) -> String {
    format!(
        "changed since its install (now sha256 {}, {} bytes): not overwritten; --force restores the original anyway",
        output::install::sha256_hex(now),
        now.len()
    )
}

/// Removes the emptied store: its backups, manifest and lock files (only
/// the tools' own files live there).
fn cleanup_store(game: &Path) {
    let _ = std::fs::remove_dir_all(store_dir(game));
}

/// `--pack MOD.zip GAME`: the installed files (as they are now) and the
/// mod manifest, into one zip.
///
/// # Errors
/// Nothing installed, a path that does not confine, an installed file
/// missing; the zip refused as an output (exists without `--force`).
fn pack(
    zip_path: &Path,
    game: &Path,
    force: bool,
    lines: &mut Vec<String>,
) -> Result<serde_json::Value, RunError> {
    let m = read_manifest(game)?;
    if m.files.is_empty() {
        return Err(usage(format!(
            "--pack: nothing is installed over the originals of {} (install first: gltf2msh ... --in-place)",
            game.display()
        )));
    }
    if rel_in_game(game, zip_path).is_some() {
        return Err(usage(format!(
            "--pack {}: inside the game folder; write the mod outside it",
            zip_path.display()
        )));
    }
    let mut txn = Transaction::new(TxnOptions::from_env(force));
    txn.claim(zip_path).map_err(output_fail)?;
    let mut files = Vec::new();
    let mut zw = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let zerr = |e: &dyn std::fmt::Display| {
        super::conversion(format!("--pack {}: {e}", zip_path.display()))
    };
    for f in &m.files {
        let (p, parts) = game_file(game, &f.path).map_err(|e| zerr(&e))?;
        txn.add_input(&p);
        let b = super::read_input(&p, "installed file")?;
        if !f.installed.matches(&b) {
            lines.push(format!(
                "warning: {} changed since its install: packed as it is now",
                f.path
            ));
        }
        let rel = parts.join("/");
        zw.start_file(format!("{MOD_FILES}{rel}"), opts)
            .and_then(|()| zw.write_all(&b).map_err(Into::into))
            .map_err(|e| zerr(&e))?;
        lines.push(format!("packed {rel} ({} bytes)", b.len()));
        files.push(ModFile {
            path: rel,
            file: Digest256::of(&b),
            original: f.original.clone(),
        });
    }
    let man = ModManifest {
        format: MOD_FORMAT.to_string(),
        version: 1,
        files,
    };
    let text = serde_json::to_vec_pretty(&man).unwrap_or_default();
    zw.start_file(MOD_MANIFEST, opts)
        .and_then(|()| zw.write_all(&text).map_err(Into::into))
        .map_err(|e| zerr(&e))?;
    let bytes = zw.finish().map_err(|e| zerr(&e))?.into_inner();
    txn.stage(zip_path, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
    lines.push(format!(
        "wrote {} ({} file(s) with their originals' SHA-256)",
        zip_path.display(),
        man.files.len()
    ));
    Ok(serde_json::to_value(&man.files).unwrap_or_default())
}

/// A mod read from its zip: the manifest and each file's bytes, checked.
struct Mod {
    files: Vec<(ModFile, Vec<u8>)>,
}

/// Reads and checks a mod zip (bounded: [`MAX_MOD_BYTES`],
/// [`MAX_MOD_ENTRIES`]; every entry named in the manifest, under
/// `files/`, confined to the game folder, its SHA-256 as recorded).
fn read_mod(zip_path: &Path, game: &Path) -> Result<Mod, String> {
    let bytes = source::read_regular(zip_path, MAX_MOD_BYTES).map_err(|e| e.to_string())?;
    let mut za =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("not a zip: {e}"))?;
    if za.len() > MAX_MOD_ENTRIES {
        return Err(format!(
            "{} entries, over the limit of {MAX_MOD_ENTRIES}",
            za.len()
        ));
    }
    let mut budget = MAX_MOD_BYTES;
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..za.len() {
        let mut e = za.by_index(i).map_err(|e| format!("entry {i}: {e}"))?;
        let name = e.name().map_err(|e| format!("entry {i}: {e}"))?.to_string();
        if e.is_dir() {
            continue;
        }
        let cap = if name == MOD_MANIFEST {
            MAX_MOD_MANIFEST_BYTES
        } else {
            budget
        };
        let mut v = Vec::new();
        (&mut e)
            .take(cap + 1)
            .read_to_end(&mut v)
            .map_err(|err| format!("entry {name:?}: {err}"))?;
        if v.len() as u64 > cap {
            return Err(format!(
                "entry {name:?}: over the budget of {cap} bytes uncompressed (all the mod's files together may hold {MAX_MOD_BYTES})"
            ));
        }
        budget -= v.len() as u64;
        if entries.iter().any(|(n, _)| same_rel(n, &name)) {
            return Err(format!("entry {name:?} is in the zip twice"));
        }
        entries.push((name, v));
    }
    let man_bytes = entries
        .iter()
        .find(|(n, _)| n == MOD_MANIFEST)
        .map(|(_, b)| b.clone())
        .ok_or_else(|| format!("no {MOD_MANIFEST}: not a mod packed by gltf2msh --pack"))?;
    let de = &mut serde_json::Deserializer::from_slice(&man_bytes);
    let man: ModManifest = serde_path_to_error::deserialize(de).map_err(|e| {
        format!(
            "{MOD_MANIFEST}: at {}: {}",
            output::install::pointer(e.path()),
            e.inner()
        )
    })?;
    if man.format != MOD_FORMAT || man.version != 1 {
        return Err(format!(
            "{MOD_MANIFEST}: format {:?} version {}: this build reads {MOD_FORMAT:?} version 1",
            man.format, man.version
        ));
    }
    let mut files = Vec::new();
    for f in &man.files {
        game_file(game, &f.path)?;
        let want = format!("{MOD_FILES}{}", f.path);
        let (_, b) = entries
            .iter()
            .find(|(n, _)| n == &want)
            .ok_or_else(|| format!("{}: no entry {want:?} in the zip", f.path))?;
        if !f.file.matches(b) {
            return Err(format!(
                "{}: the zip's entry does not hold the recorded sha256 {}",
                f.path, f.file.sha256
            ));
        }
        if files
            .iter()
            .any(|(o, _): &(ModFile, Vec<u8>)| same_rel(&o.path, &f.path))
        {
            return Err(format!("{} is listed twice", f.path));
        }
        files.push((f.clone(), b.clone()));
    }
    for (n, _) in &entries {
        let listed = n == MOD_MANIFEST
            || man
                .files
                .iter()
                .any(|f| *n == format!("{MOD_FILES}{}", f.path));
        if !listed {
            return Err(format!("entry {n:?} is not one of the manifest's files"));
        }
    }
    Ok(Mod { files })
}

/// `--apply MOD.zip GAME`: refused (exit 2, every file named) when an
/// original there differs from the mod's recorded one; else installed with
/// backups, one transaction.
///
/// # Errors
/// [`RunError::Usage`]: a zip that does not read or is hostile (a path
/// leaving the game, over a bound), an original that differs;
/// the transaction's failures.
fn apply(
    zip_path: &Path,
    game: &Path,
    lines: &mut Vec<String>,
) -> Result<serde_json::Value, RunError> {
    let m = read_mod(zip_path, game)
        .map_err(|e| usage(format!("--apply {}: {e}", zip_path.display())))?;
    let store = read_manifest(game)?;
    let mut refused = Vec::new();
    let mut todo = Vec::new();
    for (f, bytes) in m.files {
        let (p, _) = game_file(game, &f.path).map_err(usage)?;
        let now = read_opt(&p)?;
        // The game's original: kept by an earlier install, else the file as it is.
        let original = match store.entry(&f.path) {
            Some(e) => e.original.clone(),
            None => now.as_deref().map(Digest256::of),
        };
        let same = match (&original, &f.original) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if !same {
            refused.push(format!(
                "{}: {}",
                f.path,
                differs(original.as_ref(), f.original.as_ref())
            ));
            continue;
        }
        todo.push((p, now.is_some(), bytes, f.path));
    }
    if !refused.is_empty() {
        return Err(usage(format!(
            "--apply {}: refused, this game's originals differ from the ones the mod was made over (nothing was changed): {}",
            zip_path.display(),
            refused.join("; ")
        )));
    }
    let mut txn = Transaction::new(TxnOptions::from_env(false));
    txn.add_input(zip_path);
    txn.install_into(game);
    for (p, exists, bytes, rel) in &todo {
        if *exists {
            txn.open_for_update(p).map_err(output_fail)?;
        } else if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| super::conversion(format!("{}: {e}", d.display())))?;
        }
        txn.stage(p, bytes.clone()).map_err(output_fail)?;
        lines.push(format!("applied {rel} ({} bytes)", bytes.len()));
    }
    txn.commit().map_err(output_fail)?;
    if let Some(s) = txn.installed() {
        lines.push(s.to_string());
    }
    Ok(serde_json::to_value(txn.installed()).unwrap_or_default())
}

fn differs(here: Option<&Digest256>, made_over: Option<&Digest256>) -> String {
    match (here, made_over) {
        (Some(h), Some(m)) => format!(
            "the original here is sha256 {} ({} bytes), the mod was made over sha256 {} ({} bytes)",
            h.sha256, h.size, m.sha256, m.size
        ),
        (Some(h), None) => format!(
            "the mod adds it, but this game has one (sha256 {}, {} bytes)",
            h.sha256, h.size
        ),
        (None, Some(m)) => format!(
            "missing here; the mod replaces an original of sha256 {} ({} bytes)",
            m.sha256, m.size
        ),
        (None, None) => String::new(),
    }
}
