//! Where models come from: bare model files, archives holding `.msh`
//! entries, and `ARCHIVE:ENTRY` specs (format-notes §2). This module only
//! locates bytes; decoding is [`crate::msh::read`]'s job.

use std::path::{Path, PathBuf};

use crate::nres;

/// Type id of a WEAR material table entry (`'WEAR'` as a little-endian FourCC).
pub const WEAR_TYPE: u32 = 0x5241_4557;

/// What a command-line INPUT names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    /// An existing file (a bare model or an archive; decided by content).
    File(PathBuf),
    /// One entry of an archive: `ARCHIVE:ENTRY`.
    Entry {
        /// The archive file.
        archive: PathBuf,
        /// The entry name (matched case-insensitively).
        entry: String,
    },
}

/// Splits `ARCHIVE:ENTRY`. A path that exists as given is a file, even if it
/// contains `:`; otherwise the text after the last `:` is the entry name,
/// unless it holds a path separator (an entry name never does) or the text
/// before it is a Windows drive letter: `C:\x\nowhere.msh` is a missing
/// file, not entry `\x\nowhere.msh` of an archive `C`.
pub fn parse_input(s: &str) -> InputSpec {
    let p = Path::new(s);
    if p.exists() {
        return InputSpec::File(p.to_path_buf());
    }
    let drive = |a: &str| a.len() == 1 && a.as_bytes()[0].is_ascii_alphabetic();
    match s.rfind(':') {
        Some(i)
            if i > 0 && i + 1 < s.len() && !drive(&s[..i]) && !s[i + 1..].contains(['/', '\\']) =>
        {
            InputSpec::Entry {
                archive: PathBuf::from(&s[..i]),
                entry: s[i + 1..].to_string(),
            }
        }
        _ => InputSpec::File(p.to_path_buf()),
    }
}

/// Kinds of file the converter recognises by content (format-notes §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// An NRes whose entries are model streams (types 1, 2, 3, 6, 13).
    Model,
    /// Terrain (`Land.msh`: types 11/14/21, no Res6/Res13).
    Terrain,
    /// An NRes holding `.msh` entries.
    ModelArchive,
    /// An NRes library or archive with no models (Material.lib, Textures.lib,
    /// objects.rlb, Land.map, ...).
    OtherNres,
    /// An RsLi archive (`NL\0\1`).
    Rsli,
    /// Anything else.
    NotNres,
}

/// True when an entry name ends with `.msh` in any case.
pub fn is_msh_name(name: &[u8]) -> bool {
    name.len() > 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".msh")
}

/// The indices of the `.msh` entries of an archive, in directory order.
pub fn model_entries(archive: &nres::Archive<'_>) -> Vec<usize> {
    archive
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| is_msh_name(e.name))
        .map(|(i, _)| i)
        .collect()
}

/// True when the NRes entries look like model streams: types 1, 2, 3, 6
/// and 13 all present (msh-core §3.3).
pub fn looks_like_model(archive: &nres::Archive<'_>) -> bool {
    [1u32, 2, 3, 6, 13]
        .iter()
        .all(|t| archive.entries.iter().any(|e| e.type_id == *t))
}

/// True when the NRes looks like terrain: model-like types 1..5 with
/// 11/14/21 and without Res6/Res13 (format-notes §2).
pub fn looks_like_terrain(archive: &nres::Archive<'_>) -> bool {
    let has = |t: u32| archive.entries.iter().any(|e| e.type_id == t);
    has(1) && (has(11) || has(14) || has(21)) && !(has(6) && has(13))
}

/// Reads what [`classify`] needs of the file at `path`: the first
/// [`nres::HEADER_SIZE`] bytes, and when they start with the NRes magic its
/// directory (format-notes §1: the `count * 64` bytes before `total_size`,
/// and the last `count * 64` bytes of the file, which the reader looks at
/// to tell a truncated file from a corrupt `total_size`), in a buffer of
/// the file's length whose payload bytes are left zero (never read, and
/// never touched in memory: issue 28 item 1). Everything [`classify`],
/// [`content_kind`] and the batch's discovery decide depends on the
/// header and the directory only (entry types, names and sizes), so the
/// answers are those of the whole file; the payloads are read once, by the
/// job that converts them. An NRes over [`crate::output::MAX_UPDATE_BYTES`]
/// (the size cap of every archive and library input) is refused from its
/// size; a large file of another kind (a video, a 3 GiB image) costs 16
/// bytes.
///
/// # Errors
/// The I/O error of opening or reading the file; `InvalidInput` for a
/// file that is not regular (never opened); `InvalidData` for an NRes
/// file over the cap (refused before it is read).
pub fn read_for_kind(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let cap = crate::output::MAX_UPDATE_BYTES;
    if !std::fs::metadata(path)?.is_file() {
        // Opening a FIFO would block: refused before it is opened.
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a folder, device, FIFO or socket)",
        ));
    }
    let mut f = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(nres::HEADER_SIZE);
    (&mut f)
        .take(nres::HEADER_SIZE as u64)
        .read_to_end(&mut head)?;
    if !nres::is_nres(&head) || head.len() < nres::HEADER_SIZE {
        return Ok(head);
    }
    let len = f.metadata()?.len();
    if len > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes, more than the {cap} an input may have"),
        ));
    }
    // Zeroed and untouched until written: the payloads cost no memory.
    let mut buf = vec![0u8; len as usize];
    buf[..head.len()].copy_from_slice(&head);
    let word = |o: usize| {
        u64::from(u32::from_le_bytes([
            head[o],
            head[o + 1],
            head[o + 2],
            head[o + 3],
        ]))
    };
    let dir_size = word(8) * nres::DIR_ENTRY_SIZE as u64;
    let total = word(12);
    if dir_size > 0 && dir_size + nres::HEADER_SIZE as u64 <= len {
        read_span(&mut f, &mut buf, len - dir_size, dir_size)?;
        if total >= dir_size && total < len {
            read_span(&mut f, &mut buf, total - dir_size, dir_size)?;
        }
    }
    Ok(buf)
}

/// Reads `size` bytes of `f` at `offset` into `buf` at the same offset
/// (fewer when the file shrank meanwhile: the rest stays zero).
fn read_span(f: &mut std::fs::File, buf: &mut [u8], offset: u64, size: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(offset))?;
    let span = &mut buf[offset as usize..(offset + size) as usize];
    let mut done = 0;
    while done < span.len() {
        match f.read(&mut span[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Classifies a file by its content.
pub fn classify(data: &[u8]) -> FileKind {
    if data.len() >= 4 && &data[..4] == nres::RSLI_MAGIC {
        return FileKind::Rsli;
    }
    if !nres::is_nres(data) {
        return FileKind::NotNres;
    }
    match nres::read(data, nres::Mode::Tolerant) {
        Ok(a) if looks_like_model(&a) => FileKind::Model,
        Ok(a) if looks_like_terrain(&a) => FileKind::Terrain,
        Ok(a) if !model_entries(&a).is_empty() => FileKind::ModelArchive,
        Ok(_) => FileKind::OtherNres,
        // A broken NRes that claims to be one: let the model reader report it.
        Err(_) => FileKind::Model,
    }
}

/// Which pipeline converts a file: its [`FileKind`] refined by its name
/// and the unit magic, decided once per file and handed to that pipeline
/// (models [`crate::convert`], units [`crate::unit`], maps
/// [`crate::terrain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A bare model; also an NRes named `.msh` that is not a complete model
    /// (the model reader names the missing stream).
    Model,
    /// A unit file (unit-files-notes §3.3): one assembled scene.
    Unit,
    /// An NRes holding `.msh` entries.
    ModelArchive,
    /// A map's `Land.msh` (terrain recognised by its streams).
    Map,
    /// A mission's `data.tma` ([`is_mission_file`]; mission-notes §2).
    Mission,
    /// A file named `.msh` that is not an NRes container.
    BrokenModel,
    /// An RsLi archive (fonts, sprites).
    Rsli,
    /// An NRes without models (a library, the registry, `Land.map`).
    OtherNres,
    /// Anything else.
    NotNres,
}

/// The [`Content`] of a file from its bytes (as [`read_for_kind`] or
/// [`read_regular`] returns them) and its name (`.msh` in any case marks a
/// model).
pub fn content_kind(data: &[u8], name: &[u8]) -> Content {
    let msh = is_msh_name(name);
    match classify(data) {
        FileKind::Model => Content::Model,
        FileKind::OtherNres if msh => Content::Model,
        FileKind::NotNres if is_unit_file(data) => Content::Unit,
        FileKind::NotNres if is_mission_file(data, name) => Content::Mission,
        FileKind::NotNres if msh => Content::BrokenModel,
        FileKind::Terrain => Content::Map,
        FileKind::ModelArchive => Content::ModelArchive,
        FileKind::Rsli => Content::Rsli,
        FileKind::OtherNres => Content::OtherNres,
        FileKind::NotNres => Content::NotNres,
    }
}

/// The unit file magic (unit-files-notes §3.3), the first `u32` of a
/// `UNITS/<class>/*.dat` file.
pub const UNIT_MAGIC: u32 = 0xF0F1;

/// True when `data` starts with the unit file magic ([`UNIT_MAGIC`],
/// unit-files-notes §3.3) and holds at least its 8-byte header start.
pub fn is_unit_file(data: &[u8]) -> bool {
    data.len() >= 8 && data[..4] == UNIT_MAGIC.to_le_bytes()
}

/// The name of a mission's binary file (mission-notes §1.1).
pub const MISSION_TMA: &str = "data.tma";

/// The `data.tma` of a mission folder `dir` (the name in any case), if it
/// is a file there: a mission folder given as INPUT is its `data.tma`
/// (mission-notes §1.1).
pub fn tma_in(dir: &Path) -> Option<PathBuf> {
    file_any_case(dir, MISSION_TMA).filter(|p| p.is_file())
}

/// The file of `dir` named `name` in any case, by [`find_any_case`]'s
/// rule (ASCII case folding, folders skipped, the same one every time);
/// `None` also when `dir` cannot be listed. The lookup of a file beside
/// an input: `data.tma`, `<stem>.wea`, `<stem>.cpt`/`.ctl`, a map's
/// sibling files, a game folder's libraries.
pub fn file_any_case(dir: &Path, name: &str) -> Option<PathBuf> {
    find_any_case(dir, &[name]).ok().flatten()
}

/// The file of `dir` named like one of `names`, ignoring case: the one
/// case-blind file lookup of the game folder's fixed names
/// (`objects.rlb`, `Material.lib`, `Textures.lib`, `LightMap.lib`) and of
/// the part archives `objects.rlb` names (unit-files-notes §3.3; the game
/// runs on Windows, whose file names are case-blind). Costs one
/// `read_dir` of `dir`, whatever the number of names.
///
/// - **Case.** Names are compared with ASCII case folding only
///   ([`str::eq_ignore_ascii_case`] of the entry's name as lossy UTF-8):
///   `A-Z` equal `a-z`, every other character must be equal. The names
///   looked up are ASCII, Unicode folding depends on the file system (NTFS
///   has its own table; `ß`, dotted `İ`) and would make a lookup match
///   here what the game does not, so the strict, predictable subset is
///   used. A non-UTF-8 name never matches (its lossy form holds U+FFFD).
/// - **Not a folder.** An entry that is a folder (following a symlink)
///   is skipped; any other entry (a file, a FIFO, a broken symlink) is
///   returned so that reading it fails naming it, rather than it being
///   reported as missing.
/// - **Several matches** (`objects.rlb` and `OBJECTS.RLB` side by side on
///   a case-sensitive file system, or two of `names`): the same one every
///   time, whatever the listing order: the earliest of `names`; for it, an
///   entry spelled exactly as asked; else the least name in byte order
///   (upper case sorts first: `OBJECTS.RLB` before `objects.rlb`).
///
/// Returns `Ok(None)` when no entry matches.
///
/// # Errors
/// The I/O error of listing `dir` or reading one of its entries.
pub fn find_any_case(dir: &Path, names: &[&str]) -> std::io::Result<Option<PathBuf>> {
    Ok(each_any_case(dir, names)?.into_iter().flatten().next())
}

/// For each of `names`, the file of `dir` named like it, by
/// [`find_any_case`]'s rule (ASCII case folding, folders skipped, the
/// exact spelling first, else the least name in byte order): `names.len()`
/// answers from one `read_dir` of `dir` (a bare model's `<stem>.cpt` and
/// `<stem>.ctl`, unit-files-notes §3.3).
///
/// # Errors
/// The I/O error of listing `dir` or reading one of its entries.
pub fn each_any_case(dir: &Path, names: &[&str]) -> std::io::Result<Vec<Option<PathBuf>>> {
    // Per name: (not spelled as asked, the entry's name), then its path.
    type Best = Option<((bool, std::ffi::OsString), PathBuf)>;
    let mut best: Vec<Best> = vec![None; names.len()];
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        let lossy = name.to_string_lossy();
        for (i, asked) in names.iter().enumerate() {
            if !asked.eq_ignore_ascii_case(&lossy) {
                continue;
            }
            let key = (lossy != *asked, name.clone());
            if best[i].as_ref().is_some_and(|(k, _)| *k <= key) {
                continue;
            }
            let path = e.path();
            if !path.is_dir() {
                best[i] = Some((key, path));
            }
        }
    }
    Ok(best.into_iter().map(|b| b.map(|(_, p)| p)).collect())
}

/// True when `name` ends in `.tma` (any case) and `data` is neither an
/// NRes or RsLi container nor a unit file: a mission (mission-notes §2.1:
/// `data.tma` has no magic, its first word is 1). Whatever its first word
/// and however short, such a file goes to the mission reader, which names
/// the broken rule (`mission.version` for a format word other than 1,
/// `mission.exact_eof`) rather than "not an NRes container" (issue 36
/// item 11).
pub fn is_mission_file(data: &[u8], name: &[u8]) -> bool {
    let tma = name.len() >= 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".tma");
    let container = nres::is_nres(data) || data.starts_with(nres::RSLI_MAGIC);
    tma && !container && !is_unit_file(data)
}

/// Why a game-relative path from a game file leaves the game folder
/// ([`game_path_components`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path:?} leaves the game folder: {why}")]
pub struct OutsideGame {
    /// The path as the file spells it.
    pub path: String,
    /// The component that leaves it, and why.
    pub why: String,
}

/// The components of `rel`, a path a game file names relative to the game
/// folder (a mission's object `.dat` path `UNITS\BUILDS\x.dat`, its map
/// path `DATA\MAPS\m01\land`, an extras `path` about to be written;
/// mission-notes §2.4, §2.1), confined to that folder: the one rule of the
/// reader and the writer (issue 36 item 11).
///
/// `\` and `/` both separate components (the game runs on Windows); empty
/// components (a leading `\`, `\\`) and `.` are dropped, so the result is
/// relative. Refused, with the component named: `..` and any component of
/// dots and spaces only with two or more dots (Windows trims trailing dots
/// and spaces, so `.. ` and `...` are `..` there), and a component holding
/// `:` (a drive `C:` or a stream `x:y`, which would leave the folder or
/// name another file on Windows). Nothing is looked up: a symlink inside
/// the game folder is the game's own business.
///
/// # Errors
/// [`OutsideGame`] naming the path and the component.
pub fn game_path_components(rel: &str) -> Result<Vec<&str>, OutsideGame> {
    let refuse = |why: String| OutsideGame {
        path: rel.to_string(),
        why,
    };
    let mut out = Vec::new();
    for part in rel.split(['\\', '/']) {
        if part.is_empty() || part == "." {
            continue;
        }
        let dots = part.chars().filter(|&c| c == '.').count();
        if dots >= 2 && part.chars().all(|c| c == '.' || c == ' ') {
            return Err(refuse(format!("component {part:?} is the parent folder")));
        }
        if part.contains(':') {
            return Err(refuse(format!(
                "component {part:?} names a drive or a stream"
            )));
        }
        out.push(part);
    }
    Ok(out)
}

/// Reads an input file whole, after checking that it is a regular file of
/// at most `max_bytes` (a FIFO or `/dev/zero` is refused before any read).
///
/// # Errors
/// `NotFound` ("no such file"), `InvalidInput` ("not a regular file (a
/// folder, device, FIFO or socket)"), `InvalidData` (over `max_bytes`), or the read's error.
pub fn read_regular(path: &std::path::Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::new(ErrorKind::NotFound, "no such file"),
        _ => e,
    })?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "a device, FIFO or socket"
        };
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("not a regular file ({what})"),
        ));
    }
    if meta.len() > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!(
                "{} bytes, more than the {max_bytes} an input may have",
                meta.len()
            ),
        ));
    }
    let f = std::fs::File::open(path)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(max_bytes + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("grew past the {max_bytes} bytes an input may have while read"),
        ));
    }
    Ok(out)
}

/// Input files read once per run and shared by every job that needs them
/// (issue 28 item 1): the registry and part archives of units (read per
/// unit before), the model archives that are also part archives. Cheap to
/// clone (the clones share one cache); each file is read by
/// [`read_regular`] with [`crate::output::MAX_UPDATE_BYTES`] the first time
/// it is asked for (by one thread, the others wait for it) and kept, with
/// its read error if it failed, until the last clone is dropped. Keyed by
/// the path as given. It also holds the run's resolved folders
/// ([`crate::output::Folders`]: [`SharedFiles::canonical_file`] costs no
/// `readlink` per file; issue 28 item 2).
///
/// Values derived from a folder's files (the material libraries of a
/// folder, parsed) are kept beside them ([`SharedFiles::derived`]), and
/// [`SharedFiles::release_under`] drops both for a game folder whose jobs
/// are done, so a batch over many games holds one game's files at a time
/// (issue 28 item 1).
#[derive(Clone, Default)]
pub struct SharedFiles {
    files: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, SharedSlot>>>,
    derived: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<DerivedKey, DerivedSlot>>>,
    folders: crate::output::Folders,
}

/// The key of a derived value: the path it derives from, a tag naming the
/// variant (e.g. a byte order), and the value's type.
type DerivedKey = (PathBuf, String, std::any::TypeId);

/// One derived value of [`SharedFiles`], made by its first caller.
type DerivedSlot =
    std::sync::Arc<std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>>;

/// One file of [`SharedFiles`]: its bytes, or its read error (kind, text).
type SharedSlot = std::sync::Arc<
    std::sync::OnceLock<Result<std::sync::Arc<Vec<u8>>, (std::io::ErrorKind, String)>>,
>;

impl std::fmt::Debug for SharedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.files.lock().map_or(0, |m| m.len());
        write!(f, "SharedFiles({n} files)")
    }
}

impl SharedFiles {
    /// The canonical path of the existing file `path` (as
    /// `dunce::canonicalize`), its folder resolved once per run
    /// ([`crate::output::Folders::canonical_file`]); `None` when it does
    /// not exist or cannot be resolved.
    pub fn canonical_file(&self, path: &Path) -> Option<PathBuf> {
        self.folders.canonical_file(path)
    }

    /// The value derived from `path` (a file or folder) under `tag`, made
    /// by `init` on the first call (one thread makes it, the others wait)
    /// and shared until [`SharedFiles::release_under`] drops it or the
    /// last clone goes: e.g. the material libraries of a folder, loaded
    /// once per run for the models, maps and missions that use them.
    pub fn derived<T: std::any::Any + Send + Sync>(
        &self,
        path: &Path,
        tag: &str,
        init: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        let key = (
            path.to_path_buf(),
            tag.to_string(),
            std::any::TypeId::of::<T>(),
        );
        let slot = {
            let mut d = self.derived.lock().unwrap_or_else(|p| p.into_inner());
            std::sync::Arc::clone(d.entry(key).or_default())
        };
        let any = slot
            .get_or_init(|| {
                std::sync::Arc::new(init()) as std::sync::Arc<dyn std::any::Any + Send + Sync>
            })
            .clone();
        any.downcast::<T>()
            .unwrap_or_else(|_| unreachable!("the key holds the value's TypeId"))
    }

    /// Drops every file and derived value whose path lies in the folder
    /// `dir` or below it (compared resolved: links and spellings agree),
    /// when the jobs of the game folder `dir` are done; a later request
    /// reads the file again. Returns the bytes of the files dropped.
    pub fn release_under(&self, dir: &Path) -> u64 {
        let root = self.folders.normalized(dir);
        let inside = |p: &Path| {
            let parent = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            self.folders.normalized(parent).starts_with(&root)
        };
        let mut freed = 0u64;
        {
            let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
            files.retain(|p, slot| {
                let keep = !inside(p);
                if !keep {
                    if let Some(Ok(b)) = slot.get() {
                        freed += b.len() as u64;
                    }
                }
                keep
            });
        }
        let mut d = self.derived.lock().unwrap_or_else(|p| p.into_inner());
        d.retain(|(p, _, _), _| !self.folders.normalized(p).starts_with(&root));
        freed
    }

    /// The bytes of `path` when another job asked for them through
    /// [`SharedFiles::get`] already; else read now and not kept (the
    /// caller holds them as long as it needs them: a model archive,
    /// dropped after its last model).
    ///
    /// # Errors
    /// [`read_regular`]'s error.
    pub fn get_transient(&self, path: &Path) -> std::io::Result<std::sync::Arc<Vec<u8>>> {
        let slot = {
            let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
            files.get(path).cloned()
        };
        if let Some(Ok(bytes)) = slot.as_ref().and_then(|s| s.get()) {
            return Ok(std::sync::Arc::clone(bytes));
        }
        read_regular(path, crate::output::MAX_UPDATE_BYTES).map(std::sync::Arc::new)
    }

    /// Gives `path` the bytes `bytes` (read by the caller, e.g. under a
    /// lock): later [`SharedFiles::get`] calls return them, never reading
    /// the file. A file already read keeps its first bytes.
    pub fn insert(&self, path: PathBuf, bytes: Vec<u8>) {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let slot = files.entry(path).or_default();
        let _ = slot.set(Ok(std::sync::Arc::new(bytes)));
    }

    /// The bytes of `path`, read on the first call.
    ///
    /// # Errors
    /// [`read_regular`]'s error (the same one on every call).
    pub fn get(&self, path: &Path) -> std::io::Result<std::sync::Arc<Vec<u8>>> {
        let slot = {
            let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
            std::sync::Arc::clone(files.entry(path.to_path_buf()).or_default())
        };
        slot.get_or_init(|| {
            read_regular(path, crate::output::MAX_UPDATE_BYTES)
                .map(std::sync::Arc::new)
                .map_err(|e| (e.kind(), e.to_string()))
        })
        .clone()
        .map_err(|(kind, text)| std::io::Error::new(kind, text))
    }
}

/// The stem of an entry or file name: the name without its last extension.
pub fn stem_of(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// Decodes an entry name (Windows-1251 bytes) for display and file names.
pub fn decode_name(name: &[u8]) -> String {
    encoding_rs::WINDOWS_1251.decode(name).0.into_owned()
}

/// Finds the archive entry a user named on the command line
/// (`ARCHIVE:ENTRY`, format-notes §1: names are Windows-1251 bytes, looked up
/// case-insensitively). `entry` is UTF-8 as typed: it is encoded to
/// Windows-1251 and looked up like the engine does (ASCII case folding),
/// then compared with every decoded name under full Unicode case folding
/// (so `ТАНК.msh` finds `танк.msh`).
///
/// # Errors
/// A message listing up to five entry names closest to `entry` (by edit
/// distance of the lower-cased names).
pub fn find_entry(archive: &nres::Archive<'_>, entry: &str) -> Result<usize, String> {
    let (encoded, _, unmappable) = encoding_rs::WINDOWS_1251.encode(entry);
    if let Some(i) = (!unmappable)
        .then_some(())
        .and_then(|()| archive.find(&encoded))
    {
        return Ok(i);
    }
    let want = entry.to_lowercase();
    if let Some(i) = archive
        .entries
        .iter()
        .position(|e| decode_name(e.name).to_lowercase() == want)
    {
        return Ok(i);
    }
    let mut near: Vec<(usize, String)> = archive
        .entries
        .iter()
        .map(|e| {
            let n = decode_name(e.name);
            (edit_distance(&n.to_lowercase(), &want), n)
        })
        .collect();
    near.sort();
    let list: Vec<String> = near
        .into_iter()
        .take(5)
        .map(|(_, n)| format!("{n:?}"))
        .collect();
    Err(format!(
        "no entry named {entry:?}; closest: {}",
        if list.is_empty() {
            "(the archive is empty)".to_string()
        } else {
            list.join(", ")
        }
    ))
}

/// Levenshtein distance over chars (names are at most 35 bytes).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The model's WEAR sibling: the entry `<STEM>.wea` (any case) of type
/// `WEAR`, or any `<STEM>.wea` entry when none has that type.
pub fn find_wear<'a>(archive: &nres::Archive<'a>, model_entry: &[u8]) -> Option<&'a [u8]> {
    let stem = match model_entry.iter().rposition(|&c| c == b'.') {
        Some(i) => &model_entry[..i],
        None => model_entry,
    };
    let mut want = stem.to_vec();
    want.extend_from_slice(b".wea");
    let matches = |e: &&nres::Entry<'a>| e.name.eq_ignore_ascii_case(&want);
    let typed = archive
        .entries
        .iter()
        .filter(matches)
        .find(|e| e.type_id == WEAR_TYPE);
    typed
        .or_else(|| archive.entries.iter().find(matches))
        .map(|e| e.data)
}

/// Every WEAR sibling of an archive by lower-case entry name, built in one
/// pass, so that finding the siblings of all models is linear (an archive
/// of 40 000 entries does not scan them per model). Same choice as
/// [`find_wear`]: the first entry of type `WEAR`, else the first of any type.
#[derive(Debug, Default)]
pub struct WearIndex<'a> {
    map: std::collections::HashMap<Vec<u8>, (bool, &'a [u8])>,
}

impl<'a> WearIndex<'a> {
    /// Indexes the `.wea` entries of `archive`.
    pub fn new(archive: &nres::Archive<'a>) -> Self {
        let mut map: std::collections::HashMap<Vec<u8>, (bool, &'a [u8])> =
            std::collections::HashMap::new();
        for e in &archive.entries {
            let lower = e.name.to_ascii_lowercase();
            if !lower.ends_with(b".wea") {
                continue;
            }
            let typed = e.type_id == WEAR_TYPE;
            match map.get(&lower) {
                Some((true, _)) => {}
                Some((false, _)) if !typed => {}
                _ => {
                    map.insert(lower, (typed, e.data));
                }
            }
        }
        WearIndex { map }
    }

    /// The WEAR sibling of `model_entry` (as [`find_wear`]).
    pub fn get(&self, model_entry: &[u8]) -> Option<&'a [u8]> {
        let stem = match model_entry.iter().rposition(|&c| c == b'.') {
            Some(i) => &model_entry[..i],
            None => model_entry,
        };
        let mut want = stem.to_ascii_lowercase();
        want.extend_from_slice(b".wea");
        self.map.get(&want).map(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NRes archive of a model entry `TANK.MSH` holding `model` and its
    /// material table `tank.wea` (one row, `0 A`).
    fn tank_archive(model: &[u8]) -> Vec<u8> {
        let es = [
            nres::Entry {
                type_id: 0,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"TANK.MSH",
                data: model,
            },
            nres::Entry {
                type_id: WEAR_TYPE,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"tank.wea",
                data: b"1\r\n0 A\r\n",
            },
        ];
        nres::write(&es).unwrap()
    }

    /// [`find_any_case`]: ASCII case folding only, folders skipped, and of
    /// two names differing only in case the exact spelling, else the least
    /// in byte order, whatever the listing order; a missing folder is an
    /// error, no match is `None`.
    #[test]
    fn find_any_case_picks_one_name_every_time() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let find = |names: &[&str]| {
            find_any_case(dir, names)
                .unwrap()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        };
        std::fs::create_dir(dir.join("material.lib")).unwrap();
        std::fs::write(dir.join("Strasse.lib"), b"").unwrap();
        assert_eq!(find(&["Material.lib"]), None, "a folder is skipped");
        assert_eq!(find(&["STRASSE.LIB"]).as_deref(), Some("Strasse.lib"));
        assert_eq!(find(&["straße.lib"]), None, "no Unicode folding");
        std::fs::write(dir.join("objects.rlb"), b"").unwrap();
        assert_eq!(find(&["OBJECTS.RLB"]).as_deref(), Some("objects.rlb"));
        std::fs::write(dir.join("OBJECTS.RLB"), b"").unwrap();
        let two = std::fs::read_dir(dir).unwrap().count() == 4;
        assert!(two || !cfg!(target_os = "linux"), "Linux is case-sensitive");
        if two {
            // A case-sensitive file system: two names differ only in case.
            assert_eq!(find(&["objects.rlb"]).as_deref(), Some("objects.rlb"));
            assert_eq!(find(&["OBJECTS.RLB"]).as_deref(), Some("OBJECTS.RLB"));
            assert_eq!(find(&["Objects.rlb"]).as_deref(), Some("OBJECTS.RLB"));
        }
        assert_eq!(
            find(&["Material.lib", "Strasse.lib", "objects.rlb"]).as_deref(),
            Some("Strasse.lib"),
            "the earliest of names that is there"
        );
        assert!(find_any_case(&dir.join("gone"), &["x"]).is_err());
        // Each name its own answer from one listing, by the same rule: a
        // folder skipped, no match none, the exact spelling first.
        let each = |names: &[&str]| {
            each_any_case(dir, names)
                .unwrap()
                .into_iter()
                .map(|p| p.map(|p| p.file_name().unwrap().to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
        };
        let exact = if two { "OBJECTS.RLB" } else { "objects.rlb" };
        assert_eq!(
            each(&["Material.lib", "STRASSE.LIB", "gone.ctl", "OBJECTS.RLB"]),
            [None, Some("Strasse.lib".into()), None, Some(exact.into())]
        );
        assert!(each_any_case(&dir.join("gone"), &["x"]).is_err());
    }

    /// The lookups of a file beside an input (`data.tma`, `.wea`, `.cpt`,
    /// `.ctl`, map siblings, libraries) follow the same rule: a folder is
    /// skipped, the exact spelling wins, and an unlistable folder is none.
    #[test]
    fn files_beside_an_input_follow_the_one_rule() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        std::fs::create_dir(dir.join("data.tma")).unwrap();
        assert_eq!(tma_in(dir), None, "a folder is no data.tma");
        // Removed first: on a case-blind file system (Windows) the folder
        // and the file below would be one name.
        std::fs::remove_dir(dir.join("data.tma")).unwrap();
        std::fs::write(dir.join("DATA.TMA"), b"").unwrap();
        assert_eq!(tma_in(dir), Some(dir.join("DATA.TMA")));
        std::fs::write(dir.join("Data.tma"), b"").unwrap();
        if std::fs::read_dir(dir).unwrap().count() == 2 {
            // Case-sensitive: the least name in byte order, every time.
            assert_eq!(tma_in(dir), Some(dir.join("DATA.TMA")));
            assert_eq!(file_any_case(dir, "Data.tma"), Some(dir.join("Data.tma")));
        }
        assert_eq!(file_any_case(&dir.join("gone"), "x"), None);
    }

    /// An NRes file over the input cap is refused from its size, before it
    /// is read (a sparse file: no disk or memory spent); another kind of
    /// file costs its first 16 bytes, whatever its size.
    #[test]
    fn read_for_kind_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.rlb");
        let f = std::fs::File::create(&big).unwrap();
        std::io::Write::write_all(&mut &f, nres::MAGIC).unwrap();
        f.set_len(crate::output::MAX_UPDATE_BYTES + 1).unwrap();
        let e = read_for_kind(&big).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
        let video = dir.path().join("intro.avi");
        let f = std::fs::File::create(&video).unwrap();
        f.set_len(crate::output::MAX_UPDATE_BYTES + 1).unwrap();
        assert_eq!(read_for_kind(&video).unwrap().len(), nres::HEADER_SIZE);
    }

    /// Discovery reads an archive's header and directory, never its
    /// payloads, and decides the same as from the whole file.
    #[test]
    fn read_for_kind_reads_the_directory_only() {
        let bytes = tank_archive(&[7u8; 100]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("units.rlb");
        std::fs::write(&p, &bytes).unwrap();
        let seen = read_for_kind(&p).unwrap();
        assert_eq!(seen.len(), bytes.len());
        assert!(seen[nres::HEADER_SIZE..nres::HEADER_SIZE + 100]
            .iter()
            .all(|&b| b == 0));
        assert_eq!(content_kind(&seen, b"units.rlb"), Content::ModelArchive);
        let a = nres::read(&seen, nres::Mode::Tolerant).unwrap();
        let b = nres::read(&bytes, nres::Mode::Tolerant).unwrap();
        let names = |a: &nres::Archive<'_>| -> Vec<Vec<u8>> {
            a.entries.iter().map(|e| e.name.to_vec()).collect()
        };
        assert_eq!(names(&a), names(&b));
        assert_eq!(model_entries(&a), model_entries(&b));
        // A truncated archive is still told apart the same way.
        std::fs::write(&p, &bytes[..bytes.len() - 10]).unwrap();
        let cut = read_for_kind(&p).unwrap();
        assert_eq!(
            nres::read(&cut, nres::Mode::Tolerant).err().map(|e| e.rule),
            nres::read(&bytes[..bytes.len() - 10], nres::Mode::Tolerant)
                .err()
                .map(|e| e.rule)
        );
    }

    /// A derived value is made once and shared; releasing a folder drops
    /// its files and values (read or made again on the next request) and
    /// keeps those of other folders.
    #[test]
    fn shared_files_release_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (g1, g2) = (dir.path().join("game1"), dir.path().join("game2"));
        for g in [&g1, &g2] {
            std::fs::create_dir_all(g.join("sub")).unwrap();
            std::fs::write(g.join("sub/a.rlb"), b"abc").unwrap();
        }
        let files = SharedFiles::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = || made.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        assert_eq!(*files.derived(&g1, "x", make), 1);
        assert_eq!(*files.derived(&g1, "x", make), 1);
        assert_eq!(*files.derived(&g1, "y", make), 2);
        assert_eq!(*files.derived(&g2, "x", make), 3);
        let a1 = files.get(&g1.join("sub/a.rlb")).unwrap();
        files.get(&g2.join("sub/a.rlb")).unwrap();
        std::fs::write(g1.join("sub/a.rlb"), b"changed").unwrap();
        assert_eq!(*files.get(&g1.join("sub/a.rlb")).unwrap(), *a1);
        // Through another spelling of the same folder.
        assert_eq!(files.release_under(&g1.join("sub/..")), 3);
        assert_eq!(*files.get(&g1.join("sub/a.rlb")).unwrap(), b"changed");
        assert_eq!(*files.derived(&g1, "x", make), 4);
        assert_eq!(*files.derived(&g2, "x", make), 3);
        assert_eq!(files.release_under(&g2), 3);
    }

    #[test]
    fn input_specs() {
        assert_eq!(
            parse_input("no/such/units.rlb:R_L_89.msh"),
            InputSpec::Entry {
                archive: "no/such/units.rlb".into(),
                entry: "R_L_89.msh".into()
            }
        );
        assert_eq!(
            parse_input("no/such/file.msh"),
            InputSpec::File("no/such/file.msh".into())
        );
        assert_eq!(parse_input("x:"), InputSpec::File("x:".into()));
        // Windows paths of missing files: a drive letter is no archive, and
        // an entry name holds no separator.
        for p in [
            r"C:\x\nowhere.msh",
            "c:/x/nowhere.msh",
            r"C:\game\a.rlb:sub\e.msh",
        ] {
            assert_eq!(parse_input(p), InputSpec::File(p.into()), "{p}");
        }
        assert_eq!(
            parse_input(r"C:\game\bases.rlb:R_L_89.msh"),
            InputSpec::Entry {
                archive: r"C:\game\bases.rlb".into(),
                entry: "R_L_89.msh".into()
            }
        );
    }

    #[test]
    fn cyrillic_entry_names() {
        use crate::nres::{read, write, Entry, Mode};
        let cyr = encoding_rs::WINDOWS_1251
            .encode("Танк_1.msh")
            .0
            .into_owned();
        let es = [
            Entry {
                type_id: 0,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"a.msh",
                data: b"x",
            },
            Entry {
                type_id: 0,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: &cyr,
                data: b"y",
            },
        ];
        let bytes = write(&es).unwrap();
        let a = read(&bytes, Mode::Strict).unwrap();
        assert_eq!(find_entry(&a, "Танк_1.msh"), Ok(1));
        assert_eq!(find_entry(&a, "ТАНК_1.MSH"), Ok(1));
        assert_eq!(find_entry(&a, "A.MSH"), Ok(0));
        let e = find_entry(&a, "Танк_2.msh").unwrap_err();
        assert!(e.contains("closest: \"Танк_1.msh\""), "{e}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn names() {
        assert!(is_msh_name(b"a.MSH"));
        assert!(is_msh_name(b"a.msh"));
        assert!(!is_msh_name(b".msh"));
        assert!(!is_msh_name(b"a.wea"));
        assert_eq!(stem_of("R_L_89.msh"), "R_L_89");
        assert_eq!(stem_of("noext"), "noext");
    }

    #[test]
    fn wear_sibling_is_found_case_insensitively() {
        let bytes = tank_archive(b"m");
        let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
        assert_eq!(model_entries(&a), vec![0]);
        assert_eq!(find_wear(&a, b"TANK.MSH"), Some(&b"1\r\n0 A\r\n"[..]));
        assert_eq!(find_wear(&a, b"other.msh"), None);
        let idx = WearIndex::new(&a);
        assert_eq!(idx.get(b"TANK.MSH"), find_wear(&a, b"TANK.MSH"));
        assert_eq!(idx.get(b"other.msh"), None);
    }

    /// An NRes of one entry per `(type, name)`, each holding `b"x"`.
    fn nres_of(entries: &[(u32, &[u8])]) -> Vec<u8> {
        let es: Vec<nres::Entry<'_>> = entries
            .iter()
            .map(|&(type_id, name)| nres::Entry {
                type_id,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name,
                data: b"x",
            })
            .collect();
        nres::write(&es).unwrap()
    }

    #[test]
    fn content_kind_picks_one_pipeline_per_file() {
        let model = nres_of(&[(1, b"a"), (2, b"b"), (3, b"c"), (6, b"d"), (13, b"e")]);
        assert_eq!(content_kind(&model, b"x.bin"), Content::Model);
        let land = nres_of(&[(1, b"a"), (11, b"b")]);
        assert_eq!(content_kind(&land, b"Land.msh"), Content::Map);
        let archive = nres_of(&[(0, b"T.MSH"), (WEAR_TYPE, b"T.WEA")]);
        assert_eq!(content_kind(&archive, b"units.rlb"), Content::ModelArchive);
        let lib = nres_of(&[(7, b"MAT")]);
        assert_eq!(content_kind(&lib, b"Material.lib"), Content::OtherNres);
        // An incomplete NRes named .msh goes to the model reader.
        assert_eq!(content_kind(&lib, b"broken.MSH"), Content::Model);
        let mut unit = UNIT_MAGIC.to_le_bytes().to_vec();
        unit.resize(16, 0);
        assert_eq!(content_kind(&unit, b"tank.msh"), Content::Unit);
        assert_eq!(content_kind(b"plain text", b"a.msh"), Content::BrokenModel);
        assert_eq!(content_kind(b"plain text", b"a.txt"), Content::NotNres);
        // A .tma is a mission whatever its first word: its reader names
        // the rule (issue 36 item 11).
        for tma in [&[1u8, 0, 0, 0][..], &[2, 0, 0, 0], b"", b"\x01"] {
            assert_eq!(content_kind(tma, b"DATA.TMA"), Content::Mission);
        }
        assert_eq!(content_kind(&lib, b"x.tma"), Content::OtherNres);
        assert_eq!(content_kind(b"NL\x00\x01rest", b"font.rlb"), Content::Rsli);
    }

    /// A game-relative path is confined to the game folder: `..` (also
    /// Windows' `.. ` and `...`), a drive or a stream refused, naming the
    /// component; separators, empty components and `.` dropped.
    #[test]
    fn game_paths_stay_in_the_game_folder() {
        assert_eq!(
            game_path_components(r"\UNITS\.\BUILDS//x.dat").unwrap(),
            ["UNITS", "BUILDS", "x.dat"]
        );
        assert_eq!(game_path_components(r"a..b\.x").unwrap(), ["a..b", ".x"]);
        for bad in [
            r"UNITS\..\..\etc\passwd",
            "../x.dat",
            r"DATA\MAPS\.. \land",
            r"UNITS\...\x.dat",
            r"C:\Windows\x.dat",
            "UNITS\\x.dat:evil",
        ] {
            let e = game_path_components(bad).unwrap_err();
            assert_eq!(e.path, bad);
            assert!(e.to_string().contains("leaves the game folder"), "{e}");
        }
    }
}
