//! The game's material and texture libraries and the lookups of
//! format-notes §4: WEAR row name → `Material.lib` MAT0 entry (missing →
//! `DEFAULT` → entry 0) → first textured phase → `Textures.lib` Texm entry;
//! lightmap names → `LightMap.lib`.
//!
//! [`Libraries`] owns the file bytes and is `Send + Sync`: batch conversion
//! shares one instance between rayon workers. Each texture is decoded and
//! PNG-encoded at most once per run (one `OnceLock` per library entry).

use super::mat0::Mat0;
use super::texm::{encode_png, has_alpha, PageRect, TexFormat, Texm};
use super::{decode_name, MaterialError, TYPE_MAT0, TYPE_TEXM};
use crate::convention::TexmOrder;
use crate::nres::{self, NresError};
use image::RgbaImage;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// File name of the material library (matched case-insensitively).
pub const MATERIAL_LIB: &str = "Material.lib";
/// File name of the texture library (matched case-insensitively).
pub const TEXTURES_LIB: &str = "Textures.lib";
/// File name of the lightmap library (matched case-insensitively).
pub const LIGHTMAP_LIB: &str = "LightMap.lib";
/// The material a missing name falls back to (format-notes §4).
pub const DEFAULT_MATERIAL: &str = "DEFAULT";

/// One directory record of a [`Library`]; the payload is a range of the
/// library's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibEntry {
    /// Type id (`'MAT0'`, `'Texm'`, ...).
    pub type_id: u32,
    /// Attribute 1.
    pub attr1: u32,
    /// Attribute 2 (the MAT0 version).
    pub attr2: u32,
    /// Attribute 3.
    pub attr3: u32,
    /// Name bytes (Windows-1251).
    pub name: Vec<u8>,
    range: std::ops::Range<usize>,
}

/// An NRes library file held in memory, with a case-insensitive name index.
#[derive(Clone)]
pub struct Library {
    label: String,
    bytes: Vec<u8>,
    entries: Vec<LibEntry>,
    index: HashMap<Vec<u8>, usize>,
    /// Non-fatal NRes findings (the library is read in tolerant mode).
    pub warnings: Vec<NresError>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("label", &self.label)
            .field("bytes", &self.bytes.len())
            .field("entries", &self.entries.len())
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl Library {
    /// Parses an NRes library (tolerant mode: a broken sort table is a
    /// warning). `label` names the library in messages (e.g. `Textures.lib`).
    ///
    /// # Errors
    /// The NRes rule (`nres.*`) of a file that is not a readable container.
    pub fn from_bytes(label: &str, bytes: Vec<u8>) -> Result<Library, MaterialError> {
        let (entries, warnings) = {
            let a = nres::read(&bytes, nres::Mode::Tolerant)
                .map_err(|e| MaterialError::from(e).context(label))?;
            let base = bytes.as_ptr() as usize;
            let entries: Vec<LibEntry> = a
                .entries
                .iter()
                .map(|e| {
                    let start = e.data.as_ptr() as usize - base;
                    LibEntry {
                        type_id: e.type_id,
                        attr1: e.attr1,
                        attr2: e.attr2,
                        attr3: e.attr3,
                        name: e.name.to_vec(),
                        range: start..start + e.data.len(),
                    }
                })
                .collect();
            (entries, a.warnings)
        };
        let mut index = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            // The first of duplicate names wins (the engine's linear-scan order).
            index.entry(e.name.to_ascii_lowercase()).or_insert(i);
        }
        Ok(Library {
            label: label.to_owned(),
            bytes,
            entries,
            index,
            warnings,
        })
    }

    /// Reads and parses a library file.
    ///
    /// # Errors
    /// `lib.io` when the file cannot be read; the NRes rule otherwise.
    pub fn open(path: &Path) -> Result<Library, MaterialError> {
        let bytes =
            crate::source::read_regular(path, crate::output::MAX_UPDATE_BYTES).map_err(|e| {
                MaterialError::new("lib.io", format!("cannot read {}: {e}", path.display()))
            })?;
        let label = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Library::from_bytes(&label, bytes)
    }

    /// The whole library file as read (format-notes §1).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The label given at load (the file name).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Directory records in file order.
    pub fn entries(&self) -> &[LibEntry] {
        &self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the library has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Payload of entry `i` (empty when `i` is out of range).
    pub fn data(&self, i: usize) -> &[u8] {
        self.entries
            .get(i)
            .and_then(|e| self.bytes.get(e.range.clone()))
            .unwrap_or(&[])
    }

    /// The decoded name of entry `i`.
    pub fn name(&self, i: usize) -> String {
        self.entries
            .get(i)
            .map_or_else(String::new, |e| decode_name(&e.name))
    }

    /// Finds an entry by name, case-insensitively with ASCII folding like
    /// `nres::Archive::find`; the name is encoded to Windows-1251 first.
    pub fn find(&self, name: &str) -> Option<usize> {
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(name);
        self.index.get(&bytes.to_ascii_lowercase()).copied()
    }

    /// The entries the game tries for material `name`, in its order
    /// (format-notes §4): the entry of that name, `DEFAULT`, entry 0; each
    /// with the fallback it is (`None`: the name itself).
    pub fn candidates(&self, name: &str) -> [(Option<usize>, Option<Fallback>); 3] {
        [
            (self.find(name), None),
            (self.find(DEFAULT_MATERIAL), Some(Fallback::Default)),
            (Some(0), Some(Fallback::FirstEntry)),
        ]
    }

    /// The entry the game draws for material `name` (the first of
    /// [`Library::candidates`] whose MAT0 decodes) and its fallback;
    /// `None` when none decodes.
    pub fn drawn_for(&self, name: &str) -> Option<(usize, Option<Fallback>)> {
        self.candidates(name)
            .into_iter()
            .find_map(|(i, f)| i.filter(|&i| self.mat0(i).is_ok()).map(|i| (i, f)))
    }

    fn entry_context(&self, i: usize) -> String {
        format!("{} entry {i} ({:?})", self.label, self.name(i))
    }

    /// Entry `i` when its type is `type_id` (`name` its four-letter tag).
    ///
    /// # Errors
    /// `lib.missing` (no entry `i`), `lib.type` (another type, with the
    /// entry's context).
    fn typed(&self, i: usize, type_id: u32, name: &str) -> Result<&LibEntry, MaterialError> {
        let e = self.entries.get(i).ok_or_else(|| {
            MaterialError::new("lib.missing", format!("{} has no entry {i}", self.label))
        })?;
        if e.type_id != type_id {
            return Err(MaterialError::new(
                "lib.type",
                format!("type 0x{:08X}, expected '{name}'", e.type_id),
            )
            .context(self.entry_context(i)));
        }
        Ok(e)
    }

    /// Parses entry `i` as a MAT0 record (version = attr2).
    ///
    /// # Errors
    /// `lib.type` when the entry is not `'MAT0'`; the [`Mat0::parse`] rules.
    pub fn mat0(&self, i: usize) -> Result<Mat0, MaterialError> {
        let e = self.typed(i, TYPE_MAT0, "MAT0")?;
        Mat0::parse(self.data(i), e.attr2).map_err(|err| err.context(self.entry_context(i)))
    }

    /// Parses entry `i` as a Texm image.
    ///
    /// # Errors
    /// `lib.type` when the entry is not `'Texm'`; the [`Texm::parse`] rules.
    pub fn texm(&self, i: usize) -> Result<Texm<'_>, MaterialError> {
        self.typed(i, TYPE_TEXM, "Texm")?;
        Texm::parse(self.data(i)).map_err(|err| err.context(self.entry_context(i)))
    }
}

/// Why a material resolved to something other than the requested entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The requested name is missing (or its MAT0 is broken): `DEFAULT` used.
    Default,
    /// Neither the name nor `DEFAULT` is usable: entry 0 used.
    FirstEntry,
    /// No `Material.lib` loaded (or it is empty): untextured white.
    NoLibrary,
}

/// The outcome of [`Libraries::resolve_material`].
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedMaterial {
    /// The name asked for (the WEAR row's name).
    pub requested: String,
    /// The `Material.lib` entry name used (`""` with [`Fallback::NoLibrary`]
    /// or when every candidate was broken).
    pub resolved: String,
    /// Set when `resolved` is not the requested entry.
    pub fallback: Option<Fallback>,
    /// Phase 0 diffuse RGBA in 0..=1 (`p[4..=7] / 255`); white when no MAT0
    /// could be used.
    pub base_color: [f32; 4],
    /// The material's texture ([`Mat0::primary_texture`]: the first phase
    /// with a texture name, a `Textures.lib` entry); `None` when untextured.
    pub texture: Option<String>,
    /// The MAT0 record used.
    pub mat0: Option<Mat0>,
    /// The used entry's directory attr1: the blend mode (format-notes §6
    /// R10; 0 when no MAT0 was used).
    pub blend_attr1: u32,
    /// The first broken MAT0 met on the way (the requested entry or a
    /// fallback). Strict callers reject when this is set; tolerant callers
    /// use the fallback.
    pub error: Option<MaterialError>,
}

/// A decoded texture: mip 0 as RGBA8 and as PNG bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct TexturePng {
    /// The library entry's name.
    pub name: String,
    /// Mip 0 width in pixels.
    pub width: u32,
    /// Mip 0 height in pixels.
    pub height: u32,
    /// Any pixel with alpha < 255 (the PNG is then RGBA, else RGB).
    pub has_alpha: bool,
    /// Stored pixel format.
    pub format: TexFormat,
    /// Number of stored mip levels.
    pub mip_count: usize,
    /// `Page` atlas rectangles (empty without the chunk).
    pub page: Vec<PageRect>,
    /// PNG file bytes of mip 0.
    pub png: Arc<[u8]>,
    /// Mip 0 pixels, decoded with the libraries' [`TexmOrder`].
    pub rgba: RgbaImage,
}

type Cache = Vec<OnceLock<Result<Arc<TexturePng>, MaterialError>>>;

fn new_cache(lib: Option<&Library>) -> Cache {
    (0..lib.map_or(0, Library::len))
        .map(|_| OnceLock::new())
        .collect()
}

/// `Material.lib`, `Textures.lib` and `LightMap.lib` of one game directory
/// (each optional), with per-entry texture caches.
pub struct Libraries {
    dir: Option<PathBuf>,
    material: Option<Library>,
    textures: Option<Library>,
    lightmaps: Option<Library>,
    texture_cache: Cache,
    lightmap_cache: Cache,
    texm_order: TexmOrder,
}

impl std::fmt::Debug for Libraries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let decoded = |c: &Cache| c.iter().filter(|s| s.get().is_some()).count();
        f.debug_struct("Libraries")
            .field("dir", &self.dir)
            .field("material", &self.material)
            .field("textures", &self.textures)
            .field("lightmaps", &self.lightmaps)
            .field("textures_decoded", &decoded(&self.texture_cache))
            .field("lightmaps_decoded", &decoded(&self.lightmap_cache))
            .finish()
    }
}

/// Case-insensitive lookup of `file` in `dir`
/// ([`crate::source::find_any_case`]).
fn find_file(dir: &Path, file: &str) -> std::io::Result<Option<PathBuf>> {
    crate::source::find_any_case(dir, &[file])
}

fn holds_libraries(dir: &Path) -> bool {
    [MATERIAL_LIB, TEXTURES_LIB]
        .iter()
        .any(|f| matches!(find_file(dir, f), Ok(Some(_))))
}

/// Where the library lookup of [`Libraries::lookup`] looked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LibraryLookup {
    /// The folder chosen: it holds `Material.lib` or `Textures.lib`.
    pub dir: Option<PathBuf>,
    /// Every folder looked at, in order (`--game-dir` first when given).
    pub searched: Vec<PathBuf>,
}

impl LibraryLookup {
    /// The folders looked at, for messages: `A, B, C` (a folder looked at
    /// twice is named once; a chain of more than five folders is shortened
    /// to its first three and the last).
    pub fn searched_text(&self) -> String {
        let mut s: Vec<String> = Vec::new();
        for p in &self.searched {
            let p = p.display().to_string();
            if !s.contains(&p) {
                s.push(p);
            }
        }
        if s.len() <= 5 {
            return s.join(", ");
        }
        format!("{}, ... {}", s[..3].join(", "), s[s.len() - 1])
    }
}

impl Libraries {
    /// Builds from already parsed libraries (any may be absent).
    pub fn from_parts(
        material: Option<Library>,
        textures: Option<Library>,
        lightmaps: Option<Library>,
    ) -> Libraries {
        Libraries {
            dir: None,
            texture_cache: new_cache(textures.as_ref()),
            lightmap_cache: new_cache(lightmaps.as_ref()),
            texm_order: TexmOrder::default(),
            material,
            textures,
            lightmaps,
        }
    }

    /// Sets the Texm byte order used to decode textures and lightmaps
    /// (format-notes §6 R8; `--texm-order`). Call before any decode: the
    /// decoded images are cached.
    pub fn with_texm_order(mut self, order: TexmOrder) -> Libraries {
        self.texm_order = order;
        self.texture_cache = new_cache(self.textures.as_ref());
        self.lightmap_cache = new_cache(self.lightmaps.as_ref());
        self
    }

    /// The Texm byte order in use.
    pub fn texm_order(&self) -> TexmOrder {
        self.texm_order
    }

    /// Loads `Material.lib`, `Textures.lib` and `LightMap.lib` from `dir`
    /// (file names matched case-insensitively; each is optional).
    ///
    /// # Errors
    /// `lib.io` when `dir` or a library cannot be read; the NRes rule of a
    /// library that is not a readable container.
    pub fn load(dir: &Path) -> Result<Libraries, MaterialError> {
        let io = |e: std::io::Error| {
            MaterialError::new("lib.io", format!("cannot list {}: {e}", dir.display()))
        };
        let open = |file: &str| -> Result<Option<Library>, MaterialError> {
            match find_file(dir, file).map_err(io)? {
                Some(p) => Library::open(&p).map(Some),
                None => Ok(None),
            }
        };
        let mut libs = Libraries::from_parts(
            open(MATERIAL_LIB)?,
            open(TEXTURES_LIB)?,
            open(LIGHTMAP_LIB)?,
        );
        libs.dir = Some(dir.to_path_buf());
        Ok(libs)
    }

    /// [`Libraries::load`], but a library that cannot be read is left out
    /// with a warning naming it (and why), so one broken file does not
    /// disable the other two.
    pub fn load_lenient(dir: &Path) -> (Libraries, Vec<String>) {
        let mut warnings = Vec::new();
        let mut open = |file: &str| -> Option<Library> {
            let p = match find_file(dir, file) {
                Ok(Some(p)) => p,
                Ok(None) => return None,
                Err(e) => {
                    warnings.push(format!(
                        "{file} not loaded: cannot list {}: {e}",
                        dir.display()
                    ));
                    return None;
                }
            };
            match Library::open(&p) {
                Ok(l) => Some(l),
                Err(e) => {
                    warnings.push(format!("{} not loaded: {e}", p.display()));
                    None
                }
            }
        };
        let (m, t, l) = (open(MATERIAL_LIB), open(TEXTURES_LIB), open(LIGHTMAP_LIB));
        let mut libs = Libraries::from_parts(m, t, l);
        libs.dir = Some(dir.to_path_buf());
        (libs, warnings)
    }

    /// [`Libraries::load_lenient`] of `dir` decoded with `order`
    /// ([`Libraries::with_texm_order`]), once per run: the first caller
    /// loads, every model, map and mission of the run that finds its
    /// libraries in `dir` shares the result (and its decoded textures)
    /// through the run's `files` ([`crate::source::SharedFiles::derived`],
    /// keyed by `dir` as spelt and `order`; issue 28 item 1), until the run
    /// releases `dir`'s game folder. Returns the libraries and the load
    /// warnings (one per library file left out).
    pub fn load_shared(
        dir: &Path,
        order: TexmOrder,
        files: &crate::source::SharedFiles,
    ) -> (Arc<Libraries>, Vec<String>) {
        let loaded = files.derived(dir, &format!("libraries {order:?}"), || {
            let (l, w) = Libraries::load_lenient(dir);
            (Arc::new(l.with_texm_order(order)), w)
        });
        (Arc::clone(&loaded.0), loaded.1.clone())
    }

    /// Finds the directory holding the libraries for a model file or archive
    /// (format-notes §4, gltf-mapping "Materials and textures"): `game_dir`
    /// when it holds libraries (an explicit `--game-dir` always wins), then
    /// the archive's own folder, then each parent folder up the tree. A
    /// folder qualifies when it holds `Material.lib` or `Textures.lib` (any
    /// case). [`Libraries::lookup`] also says where it looked.
    pub fn find_for(archive_path: &Path, game_dir: Option<&Path>) -> Option<PathBuf> {
        Libraries::lookup(archive_path, game_dir).dir
    }

    /// [`Libraries::find_for`] with the record of every folder looked at,
    /// in order (for the "no libraries found" warning and `-v`).
    pub fn lookup(archive_path: &Path, game_dir: Option<&Path>) -> LibraryLookup {
        let mut searched = Vec::new();
        let found = |d: &Path, searched: &mut Vec<PathBuf>| {
            searched.push(d.to_path_buf());
            holds_libraries(d)
        };
        if let Some(g) = game_dir {
            if found(g, &mut searched) {
                return LibraryLookup {
                    dir: Some(g.to_path_buf()),
                    searched,
                };
            }
        }
        let start = if archive_path.is_dir() {
            Some(archive_path)
        } else {
            archive_path.parent()
        };
        let Some(start) = start.map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        }) else {
            return LibraryLookup {
                dir: None,
                searched,
            };
        };
        if found(start, &mut searched) {
            return LibraryLookup {
                dir: Some(start.to_path_buf()),
                searched,
            };
        }
        // Up the tree as the path is spelt (so messages name a game folder
        // the same way for a model at its top and a unit or map below it),
        // then, where the spelling runs out (a bare name, `..`), up the
        // canonical path.
        let mut last = start;
        for d in start.ancestors().skip(1) {
            if d.as_os_str().is_empty() || d.ends_with("..") {
                break;
            }
            if found(d, &mut searched) {
                return LibraryLookup {
                    dir: Some(d.to_path_buf()),
                    searched,
                };
            }
            last = d;
        }
        let abs = dunce::canonicalize(last).unwrap_or_else(|_| last.to_path_buf());
        let dir = abs
            .ancestors()
            .skip(1)
            .find(|d| found(d, &mut searched))
            .map(Path::to_path_buf);
        LibraryLookup { dir, searched }
    }

    /// Paths of the library files loaded, in the order `Material.lib`,
    /// `Textures.lib`, `LightMap.lib` (empty for [`Libraries::from_parts`]).
    pub fn files(&self) -> Vec<PathBuf> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        [&self.material, &self.textures, &self.lightmaps]
            .into_iter()
            .flatten()
            .map(|l| dir.join(l.label()))
            .collect()
    }

    /// The folder given to [`Libraries::load`], if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// `Material.lib`, when loaded.
    pub fn material_lib(&self) -> Option<&Library> {
        self.material.as_ref()
    }

    /// `Textures.lib`, when loaded.
    pub fn textures_lib(&self) -> Option<&Library> {
        self.textures.as_ref()
    }

    /// `LightMap.lib`, when loaded.
    pub fn lightmap_lib(&self) -> Option<&Library> {
        self.lightmaps.as_ref()
    }

    /// Resolves a material name (format-notes §4): the `Material.lib` entry
    /// of that name (case-insensitive); when missing or broken, `DEFAULT`;
    /// then entry 0. Never fails: a broken MAT0 is reported in
    /// [`ResolvedMaterial::error`] and the next candidate is used; when no
    /// candidate works the result is untextured white.
    pub fn resolve_material(&self, name: &str) -> ResolvedMaterial {
        let mut r = ResolvedMaterial {
            requested: name.to_owned(),
            resolved: String::new(),
            fallback: Some(Fallback::NoLibrary),
            base_color: [1.0; 4],
            texture: None,
            mat0: None,
            blend_attr1: 0,
            error: None,
        };
        let Some(lib) = self.material.as_ref().filter(|l| !l.is_empty()) else {
            return r;
        };
        for (i, fallback) in lib.candidates(name) {
            let Some(i) = i else { continue };
            r.fallback = fallback;
            match lib.mat0(i) {
                Ok(m) => {
                    r.resolved = lib.name(i);
                    r.blend_attr1 = lib.entries()[i].attr1;
                    r.base_color = m.diffuse();
                    r.texture = m.primary_texture();
                    r.mat0 = Some(m);
                    return r;
                }
                Err(e) => {
                    r.error.get_or_insert(e);
                }
            }
        }
        r
    }

    /// [`Libraries::resolve_material`] for strict callers.
    ///
    /// # Errors
    /// The first broken MAT0 met (`mat0.size`, `mat0.anim_count`,
    /// `lib.type`).
    pub fn try_resolve_material(&self, name: &str) -> Result<ResolvedMaterial, MaterialError> {
        let mut r = self.resolve_material(name);
        match r.error.take() {
            Some(e) => Err(e),
            None => Ok(r),
        }
    }

    /// Resolves every material row of a WEAR table, in row order.
    pub fn resolve_wear(&self, wear: &super::Wear) -> Vec<ResolvedMaterial> {
        wear.materials
            .iter()
            .map(|row| self.resolve_material(&row.name))
            .collect()
    }

    /// The `Textures.lib` entry `name`, decoded and PNG-encoded once per run
    /// (later calls, from any thread, share the result).
    ///
    /// # Errors
    /// `lib.missing` (no Textures.lib, or no such entry), `lib.type`, the
    /// [`Texm::parse`] rules, `png.encode`.
    pub fn texture_png(&self, name: &str) -> Result<Arc<TexturePng>, MaterialError> {
        cached_png(
            self.textures.as_ref(),
            &self.texture_cache,
            name,
            TEXTURES_LIB,
            self.texm_order,
        )
    }

    /// The `LightMap.lib` entry `name`, like [`Libraries::texture_png`].
    ///
    /// # Errors
    /// As [`Libraries::texture_png`].
    pub fn lightmap_png(&self, name: &str) -> Result<Arc<TexturePng>, MaterialError> {
        cached_png(
            self.lightmaps.as_ref(),
            &self.lightmap_cache,
            name,
            LIGHTMAP_LIB,
            self.texm_order,
        )
    }

    /// The parsed `Textures.lib` entry `name` (not cached; for inspection).
    ///
    /// # Errors
    /// `lib.missing`, `lib.type`, the [`Texm::parse`] rules.
    pub fn texture_texm(&self, name: &str) -> Result<Texm<'_>, MaterialError> {
        let lib = lookup(self.textures.as_ref(), name, TEXTURES_LIB)?;
        lib.0.texm(lib.1)
    }

    /// The parsed `LightMap.lib` entry `name` (not cached; for inspection).
    ///
    /// # Errors
    /// As [`Libraries::texture_texm`].
    pub fn lightmap_texm(&self, name: &str) -> Result<Texm<'_>, MaterialError> {
        let lib = lookup(self.lightmaps.as_ref(), name, LIGHTMAP_LIB)?;
        lib.0.texm(lib.1)
    }
}

fn lookup<'l>(
    lib: Option<&'l Library>,
    name: &str,
    label: &str,
) -> Result<(&'l Library, usize), MaterialError> {
    let lib = lib.ok_or_else(|| MaterialError::new("lib.missing", format!("no {label} loaded")))?;
    let i = lib.find(name).ok_or_else(|| {
        MaterialError::new(
            "lib.missing",
            format!("{} has no entry {name:?}", lib.label),
        )
    })?;
    Ok((lib, i))
}

fn cached_png(
    lib: Option<&Library>,
    cache: &Cache,
    name: &str,
    label: &str,
    order: TexmOrder,
) -> Result<Arc<TexturePng>, MaterialError> {
    let (lib, i) = lookup(lib, name, label)?;
    let slot = cache.get(i).ok_or_else(|| {
        MaterialError::new(
            "lib.missing",
            format!("{label} entry {i} has no cache slot"),
        )
    })?;
    slot.get_or_init(|| decode_png(lib, i, order)).clone()
}

fn decode_png(lib: &Library, i: usize, order: TexmOrder) -> Result<Arc<TexturePng>, MaterialError> {
    let t = lib.texm(i)?;
    let rgba = t
        .decode_with(&order.channel_order(), 0)
        .unwrap_or_else(|| image::RgbaImage::new(1, 1));
    let png = encode_png(&rgba).map_err(|e| e.context(lib.entry_context(i)))?;
    Ok(Arc::new(TexturePng {
        name: lib.name(i),
        width: t.width,
        height: t.height,
        has_alpha: has_alpha(&rgba),
        format: t.format,
        mip_count: t.mip_count(),
        page: t.page.clone().unwrap_or_default(),
        png: png.into(),
        rgba,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nres::{write, Entry};

    fn mat0_payload(diffuse: [u8; 4], texture: &[u8]) -> Vec<u8> {
        let mut d = vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut p = [0u8; 18];
        p[4..8].copy_from_slice(&diffuse);
        p[3] = 100; // opacity 100 %
        d.extend_from_slice(&p);
        let mut t = [0u8; 16];
        t[..texture.len()].copy_from_slice(texture);
        d.extend_from_slice(&t);
        d
    }

    fn lib(label: &str, entries: &[(u32, &[u8], &[u8])]) -> Library {
        let es: Vec<Entry<'_>> = entries
            .iter()
            .map(|&(type_id, name, data)| Entry {
                type_id,
                attr1: 0,
                attr2: 6,
                attr3: 0,
                name,
                data,
            })
            .collect();
        Library::from_bytes(label, write(&es).unwrap()).unwrap()
    }

    fn texm_1x1(px: [u8; 4]) -> Vec<u8> {
        let mut d = b"Texm".to_vec();
        for v in [1u32, 1, 1, 0, 0, 0, 8888] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(&px);
        d
    }

    #[test]
    fn resolves_with_fallbacks() {
        let a = mat0_payload([255, 0, 0, 255], b"TEX.0");
        let def = mat0_payload([0, 255, 0, 255], b"");
        let mut broken = a.clone();
        broken[2] = 20;
        let m = lib(
            "Material.lib",
            &[
                (TYPE_MAT0, b"FIRST.0", &a),
                (TYPE_MAT0, b"DEFAULT", &def),
                (TYPE_MAT0, b"BROKEN.0", &broken),
            ],
        );
        let libs = Libraries::from_parts(Some(m), None, None);
        let r = libs.resolve_material("first.0");
        assert_eq!((r.resolved.as_str(), r.fallback), ("FIRST.0", None));
        assert_eq!(r.base_color, [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(r.texture.as_deref(), Some("TEX.0"));
        let r = libs.resolve_material("NOSUCH.0");
        assert_eq!(
            (r.resolved.as_str(), r.fallback),
            ("DEFAULT", Some(Fallback::Default))
        );
        assert_eq!((r.texture, r.base_color), (None, [0.0, 1.0, 0.0, 1.0]));
        assert!(r.error.is_none());
        let r = libs.resolve_material("BROKEN.0");
        assert_eq!(r.fallback, Some(Fallback::Default));
        assert_eq!(r.error.as_ref().unwrap().rule, "mat0.anim_count");
        assert!(r.error.as_ref().unwrap().detail.contains("BROKEN.0"));
        assert_eq!(
            libs.try_resolve_material("BROKEN.0").unwrap_err().rule,
            "mat0.anim_count"
        );
        // Without DEFAULT: entry 0.
        let libs =
            Libraries::from_parts(Some(lib("m", &[(TYPE_MAT0, b"FIRST.0", &a)])), None, None);
        let r = libs.resolve_material("X");
        assert_eq!(
            (r.resolved.as_str(), r.fallback),
            ("FIRST.0", Some(Fallback::FirstEntry))
        );
        // Without Material.lib.
        let r = Libraries::from_parts(None, None, None).resolve_material("X");
        assert_eq!(
            (r.fallback, r.base_color),
            (Some(Fallback::NoLibrary), [1.0; 4])
        );
    }

    #[test]
    fn texture_cache_decodes_once_and_is_shared() {
        let t = texm_1x1([3, 2, 1, 128]); // retail B, G, R, A
        let libs = Libraries::from_parts(
            None,
            Some(lib(
                "Textures.lib",
                &[(TYPE_TEXM, b"TEX.0", &t), (TYPE_TEXM, b"BAD.0", b"Texm")],
            )),
            None,
        );
        let a = libs.texture_png("tex.0").unwrap();
        let b = std::thread::scope(|s| {
            s.spawn(|| libs.texture_png("TEX.0").unwrap())
                .join()
                .unwrap()
        });
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.rgba.get_pixel(0, 0).0, [1, 2, 3, 128]);
        assert!(a.has_alpha);
        assert_eq!((a.width, a.height, a.name.as_str()), (1, 1, "TEX.0"));
        assert_eq!(libs.texture_png("BAD.0").unwrap_err().rule, "texm.size");
        assert_eq!(libs.texture_png("NONE.0").unwrap_err().rule, "lib.missing");
        assert_eq!(libs.lightmap_png("TEX.0").unwrap_err().rule, "lib.missing");
    }

    #[test]
    fn libraries_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Libraries>();
        check::<TexturePng>();
    }

    /// A folder's libraries are loaded once per run and shared (one
    /// `Arc`, decoded textures included) per byte order; after the run
    /// releases the folder they are loaded again.
    #[test]
    fn load_shared_loads_once_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let t = texm_1x1([9, 9, 9, 255]);
        let es = [Entry {
            type_id: TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"T.0",
            data: &t,
        }];
        std::fs::write(dir.path().join("Textures.lib"), write(&es).unwrap()).unwrap();
        let files = crate::source::SharedFiles::default();
        let (a, w) = Libraries::load_shared(dir.path(), TexmOrder::Retail, &files);
        assert!(w.is_empty(), "{w:?}");
        let png = a.texture_png("T.0").unwrap();
        let (b, _) = Libraries::load_shared(dir.path(), TexmOrder::Retail, &files);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(Arc::ptr_eq(&png, &b.texture_png("T.0").unwrap()));
        let (argb, _) = Libraries::load_shared(dir.path(), TexmOrder::Argb, &files);
        assert!(!Arc::ptr_eq(&a, &argb));
        assert_eq!(argb.texm_order(), TexmOrder::Argb);
        files.release_under(dir.path());
        let (c, _) = Libraries::load_shared(dir.path(), TexmOrder::Retail, &files);
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn load_and_find_for() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a").join("b");
        std::fs::create_dir_all(&sub).unwrap();
        let t = texm_1x1([9, 9, 9, 255]);
        let es = [Entry {
            type_id: TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"T.0",
            data: &t,
        }];
        std::fs::write(dir.path().join("TEXTURES.LIB"), write(&es).unwrap()).unwrap();
        let model = sub.join("x.rlb");
        std::fs::write(&model, b"").unwrap();
        let found = Libraries::find_for(&model, None).unwrap();
        assert_eq!(found, dir.path(), "found as the model's path spells it");
        // A folder linked into the game folder from elsewhere: the game
        // folder above the link (as the path is spelt) holds the libraries,
        // not the folders above the link's target.
        #[cfg(unix)]
        {
            let elsewhere = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(elsewhere.path().join("b")).unwrap();
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
            let lookup = Libraries::lookup(&link.join("b").join("x.rlb"), None);
            assert_eq!(lookup.dir.as_deref(), Some(dir.path()));
            assert_eq!(lookup.searched.len(), 3, "{:?}", lookup.searched);
        }
        assert_eq!(
            Libraries::find_for(&model, Some(dir.path())).unwrap(),
            dir.path()
        );
        let libs = Libraries::load(&found).unwrap();
        assert!(libs.material_lib().is_none() && libs.lightmap_lib().is_none());
        assert_eq!(
            libs.texture_png("t.0").unwrap().rgba.get_pixel(0, 0).0,
            [9, 9, 9, 255]
        );
        assert_eq!(
            Libraries::load(&dir.path().join("nope")).unwrap_err().rule,
            "lib.io"
        );
        std::fs::write(dir.path().join("material.lib"), b"junk").unwrap();
        assert_eq!(Libraries::load(dir.path()).unwrap_err().rule, "nres.magic");
    }

    #[test]
    fn game_dir_wins_and_lookup_says_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let (beside, game, empty) = (
            dir.path().join("beside"),
            dir.path().join("game"),
            dir.path().join("empty"),
        );
        for d in [&beside, &game, &empty] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(beside.join("Material.lib"), b"").unwrap();
        std::fs::write(game.join("textures.lib"), b"").unwrap();
        let model = beside.join("x.rlb");
        assert_eq!(Libraries::find_for(&model, None).unwrap(), beside);
        let l = Libraries::lookup(&model, Some(&game));
        assert_eq!(
            (l.dir.as_deref(), l.searched.len()),
            (Some(game.as_path()), 1)
        );
        // A --game-dir without libraries is looked in first, then skipped.
        let l = Libraries::lookup(&model, Some(&empty));
        assert_eq!(l.dir.as_deref(), Some(beside.as_path()));
        assert_eq!(l.searched, [empty.clone(), beside.clone()]);
        let alone = empty.join("y.msh");
        let l = Libraries::lookup(&alone, Some(&empty));
        assert_eq!(l.searched[..2], [empty.clone(), empty.clone()]);
        assert!(l.searched_text().starts_with(&format!(
            "{}, {}",
            empty.display(),
            dunce::canonicalize(dir.path()).unwrap().display()
        )));
    }
}
