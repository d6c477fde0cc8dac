//! glTF loading (GLB 2.0 and `.gltf` with external or `data:` buffers) and
//! accessor reading (glTF 2.0 §3.6, `KHR_mesh_quantization` component types).
//!
//! The importer reads only the properties it needs and tolerates
//! everything else (unknown extensions that are not *required*, Blender's
//! extras, ...). [`parse`] reads the big top-level arrays ([`TopArray`]:
//! `accessors`, `bufferViews`, `nodes`, `meshes`, `materials`, `scenes`,
//! `animations`) into typed slots ([`typed`]: no map and no key string per
//! element, each element's `extras` kept as its JSON text until first
//! read, as the `gltf` crate keeps extras raw) and the rest into a
//! [`serde_json::Value`]; [`GltfFile::new`] moves the same arrays out of a
//! tree: one representation, read with [`GltfFile::list`] (elements are
//! [`Elem`]s, read like JSON objects; [`Props`] lets the helpers take
//! either), never from `json`. Accessors are
//! read here, not through the `gltf` crate's readers, because those assume
//! float data where `KHR_mesh_quantization` allows normalized and plain
//! integers. [`GltfFile::floats`] and [`GltfFile::indices`] check an
//! accessor's layout once and decode its values straight from the buffer
//! (no intermediate byte copy); `cargo bench --bench gltf_read` compares
//! the reader with the `gltf` crate (docs/development.md "Benchmarks").

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ImportError;

pub mod refs;
pub mod schema;
pub mod typed;
pub mod vocabulary;

pub use typed::Elem;
use typed::{at, ACCESSOR_KEYS, LISTS, VIEW_KEYS};

/// Extensions a file may *require* and still be imported: the importer
/// reads their data ([`KHR_MESH_QUANTIZATION`] accessors,
/// `KHR_texture_transform` UV transforms) or they do not affect geometry
/// and animation (material extensions).
pub const ACCEPTED_REQUIRED: &[&str] = &[
    "KHR_mesh_quantization",
    "KHR_texture_transform",
    "KHR_materials_unlit",
    "KHR_materials_emissive_strength",
    "KHR_materials_specular",
    "KHR_materials_ior",
    "KHR_materials_transmission",
    "KHR_materials_volume",
];

/// Most elements of an accessor without a bufferView (all zeros): the
/// largest attribute a model holds (65 535 triangles, 3 corners each).
pub const MAX_ZERO_ELEMENTS: usize = 3 * 65_535;

/// Name of the quantization extension (glTF 2.0 extension registry).
pub const KHR_MESH_QUANTIZATION: &str = "KHR_mesh_quantization";

/// A loaded glTF document: its JSON and the bytes of every buffer (buffer
/// `i` of the JSON is `buffers[i]`).
///
/// One representation, however the document was made ([`parse`] or
/// [`GltfFile::new`]): the top-level arrays of [`TopArray`] (`accessors`,
/// `bufferViews`, `nodes`, `meshes`, `materials`, `scenes`, `animations`;
/// glTF 2.0 §5) are always typed ([`Elem`]: properties in slots, `extras`
/// parsed when first read) and never in `json`. Read them with
/// [`GltfFile::list`] (or [`GltfFile::nodes`], ...) and, for the two
/// accessor arrays, [`GltfFile::accessor_def`] /
/// [`GltfFile::buffer_view_def`]; change them with
/// [`GltfFile::list_mut`] and [`GltfFile::push`].
/// [`GltfFile::to_json`] is the whole document as one tree.
#[derive(Debug, Clone)]
pub struct GltfFile {
    /// Every other top-level property of the glTF JSON document, as JSON
    /// (a [`TopArray`] only when it is not an array: a value the reader
    /// sees no elements in, kept so [`GltfFile::to_json`] gives back what
    /// was read).
    pub json: Value,
    /// Buffer contents, one per `buffers[i]`, at least `byteLength` bytes.
    pub buffers: Vec<Vec<u8>>,
    /// The [`TopArray`]s, in its order, when they are arrays (`None`:
    /// absent or not an array).
    lists: [Option<Vec<Elem>>; 7],
}

/// [`GltfFile::tree_mut`]'s guard: the document as a tree, written back
/// into the [`GltfFile`] when dropped.
pub struct TreeMut<'a> {
    doc: &'a mut GltfFile,
    tree: Value,
}

impl std::ops::Deref for TreeMut<'_> {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.tree
    }
}

impl std::ops::DerefMut for TreeMut<'_> {
    fn deref_mut(&mut self) -> &mut Value {
        &mut self.tree
    }
}

impl Drop for TreeMut<'_> {
    fn drop(&mut self) {
        let tree = std::mem::take(&mut self.tree);
        let buffers = std::mem::take(&mut self.doc.buffers);
        *self.doc = GltfFile::new(tree, buffers);
    }
}

/// The top-level arrays a [`GltfFile`] keeps typed (glTF 2.0 §5), the ones
/// with many elements or large `extras`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopArray {
    /// `accessors` (§5.1).
    Accessors,
    /// `bufferViews` (§5.11).
    BufferViews,
    /// `nodes` (§5.25).
    Nodes,
    /// `meshes` (§5.23).
    Meshes,
    /// `materials` (§5.19).
    Materials,
    /// `scenes` (§5.27).
    Scenes,
    /// `animations` (§5.6).
    Animations,
}

impl TopArray {
    /// Every one, in [`GltfFile`]'s order.
    pub const ALL: [TopArray; 7] = [
        TopArray::Accessors,
        TopArray::BufferViews,
        TopArray::Nodes,
        TopArray::Meshes,
        TopArray::Materials,
        TopArray::Scenes,
        TopArray::Animations,
    ];

    /// The array's glTF property name (`"nodes"`).
    pub fn name(self) -> &'static str {
        LISTS[self as usize].0
    }

    /// The array of a glTF property name, if it is kept typed.
    pub fn of_name(name: &str) -> Option<TopArray> {
        TopArray::ALL.into_iter().find(|t| t.name() == name)
    }

    fn keys(self) -> &'static [&'static str] {
        LISTS[self as usize].1
    }
}

/// A JSON object's properties read the same from a [`Value`] tree and an
/// [`Elem`], for the helpers ([`arr`], [`idx`], [`msh_extras`], ...).
pub trait Props {
    /// The property `key` (`None` when missing, or not an object).
    fn prop(&self, key: &str) -> Option<&Value>;
}

impl Props for Value {
    fn prop(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

impl Props for Elem {
    fn prop(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

impl<T: Props + ?Sized> Props for &T {
    fn prop(&self, key: &str) -> Option<&Value> {
        (**self).prop(key)
    }
}

fn err(rule: &'static str, detail: impl Into<String>) -> ImportError {
    ImportError::new(rule, detail)
}

/// Loads a `.glb` or `.gltf` file; external buffers are resolved relative
/// to the file's folder and must lie inside it (see [`load_path_with`]).
///
/// # Errors
/// `io` when a file cannot be read; see [`parse`].
pub fn load_path(path: &Path) -> Result<GltfFile, ImportError> {
    load_path_with(path, &ReadOptions::default()).map(|(f, _)| f)
}

/// How a glTF is read (`gltf2msh --allow-outside`, `--max-work`).
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Also read buffer URIs that are absolute or lead outside the glTF's
    /// folder.
    pub allow_outside: bool,
    /// Work budget (units, [`crate::limits`]): the JSON text may be at most
    /// [`crate::limits::max_json_bytes`] of it.
    pub max_work: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            allow_outside: false,
            max_work: crate::limits::DEFAULT_MAX_WORK,
        }
    }
}

/// Loads a `.glb` or `.gltf` file and lists the external files it read.
/// A buffer URI must be relative and, after percent-decoding, `..`
/// resolution and following symlinks, name a regular file inside the glTF's
/// folder, unless `opts.allow_outside` (`gltf2msh --allow-outside`); only
/// the declared `byteLength` bytes of it are read.
///
/// # Errors
/// `io` when the glTF cannot be read; `gltf.uri` for a refused URI; see
/// [`parse`].
pub fn load_path_with(
    path: &Path,
    opts: &ReadOptions,
) -> Result<(GltfFile, Vec<PathBuf>), ImportError> {
    let meta =
        std::fs::metadata(path).map_err(|e| err("io", format!("{}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(err("io", format!("{}: not a regular file", path.display())));
    }
    let bytes = crate::source::read_regular(path, crate::output::MAX_UPDATE_BYTES)
        .map_err(|e| err("io", format!("{}: {e}", path.display())))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut files = Vec::new();
    let f = parse_with(&bytes, Some(&dir), opts, &mut files)?;
    Ok((f, files))
}

/// Parses GLB or glTF JSON bytes. `base_dir` resolves relative buffer URIs
/// (`None`: only the GLB chunk and `data:` URIs are available); URIs must
/// stay inside it (see [`load_path_with`]).
///
/// # Errors
/// - `gltf.glb`: a malformed GLB header or chunk;
/// - `gltf.json`: invalid JSON or a document that is not an object; a
///   property of a type, or an enumerated value, the glTF 2.0 schema does
///   not allow (gltf-json's typed `Root`, [`schema`]: a string
///   `bufferView`, `null`, `primitives` as an object, `alphaMode
///   "GARBAGE"`, a material factor outside [0, 1], ...) or an
///   `extras.msh` key of the wrong type ([`vocabulary`]), naming its JSON
///   pointer and what was expected (an integral number such as `504.0` is
///   an integer, as JSON Schema 2020-12 reads it);
/// - `gltf.non_finite`: a JSON number that overflows f32;
/// - `gltf.version`: `asset.version` is not 2.x;
/// - `gltf.extension`: a required extension outside [`ACCEPTED_REQUIRED`]
///   (Draco, meshopt, ...);
/// - `gltf.uri`: an external URI that is absolute, leaves `base_dir` or is
///   not a regular file;
/// - `gltf.buffer`: a buffer that cannot be loaded or is shorter than its
///   `byteLength`.
pub fn parse(bytes: &[u8], base_dir: Option<&Path>) -> Result<GltfFile, ImportError> {
    parse_with(bytes, base_dir, &ReadOptions::default(), &mut Vec::new())
}

/// [`parse`] with `opts` (URIs outside `base_dir`, the budget of the JSON
/// text), recording every external file read in `files`.
///
/// # Errors
/// See [`parse`].
pub fn parse_with(
    bytes: &[u8],
    base_dir: Option<&Path>,
    opts: &ReadOptions,
    files: &mut Vec<PathBuf>,
) -> Result<GltfFile, ImportError> {
    let (json_bytes, blob) = if bytes.starts_with(b"glTF") {
        split_glb(bytes)?
    } else {
        (bytes, None)
    };
    let mut doc = read_json(json_bytes, opts)?;
    check_asset(&doc.json)?;
    // Every core property of the type the glTF 2.0 schema gives it (issue
    // 36 item 3): a wrong type is refused, never read as absent.
    schema::check(json_bytes, &doc)?;
    vocabulary::check(&doc)?;
    check_external_budget(&doc.json, opts)?;
    let mut blob = blob;
    for (i, b) in arr(&doc.json, "buffers").iter().enumerate() {
        let data = load_buffer(i, b, &mut blob, base_dir, opts, files)?;
        doc.buffers.push(data);
    }
    Ok(doc)
}

/// The JSON document (no buffers yet): at most
/// [`crate::limits::max_json_bytes`] of the work budget, an object, with
/// no number that overflows f32; `accessors` and `bufferViews` typed.
///
/// # Errors
/// `limits.work`, `gltf.json`, `gltf.non_finite`.
/// The typed document of the JSON text `de` reads, to its end (sets `big`
/// when a number overflows f32).
fn root_of<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    big: &std::cell::Cell<bool>,
) -> Result<typed::Root, serde_json::Error> {
    let root = serde::de::DeserializeSeed::deserialize(typed::RootSeed(big), &mut de)?;
    de.end()?;
    Ok(root)
}

fn read_json(json_bytes: &[u8], opts: &ReadOptions) -> Result<GltfFile, ImportError> {
    let max_json = crate::limits::max_json_bytes(opts.max_work);
    if json_bytes.len() as u64 > max_json {
        return Err(err(
            "limits.work",
            format!(
                "{} bytes of glTF JSON, more than the {max_json} the work budget allows (raise it with --max-work)",
                json_bytes.len()
            ),
        ));
    }
    // Set when a number overflows f32 (checked while the tree is built).
    let big = std::cell::Cell::new(false);
    let first = json_bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    let doc = if first == Some(&b'{') {
        // Text checked as UTF-8 once, whole, is read without a check per
        // string (a text that fails is read as bytes, for the same error).
        let root = match std::str::from_utf8(json_bytes) {
            Ok(text) => root_of(serde_json::Deserializer::from_str(text), &big),
            Err(_) => root_of(serde_json::Deserializer::from_slice(json_bytes), &big),
        };
        let root = root.map_err(|e| {
            // The tree's error names the position in the whole text
            // (an error inside a raw `extras` names one in the extras).
            let e = serde_json::from_slice::<Value>(json_bytes)
                .err()
                .unwrap_or(e);
            err("gltf.json", e.to_string())
        })?;
        GltfFile {
            json: Value::Object(root.json),
            buffers: Vec::new(),
            lists: root.lists,
        }
    } else {
        // Not an object (or not JSON): the tree, for the same error.
        let json: Value =
            serde_json::from_slice(json_bytes).map_err(|e| err("gltf.json", e.to_string()))?;
        if !json.is_object() {
            return Err(err("gltf.json", "the document is not a JSON object"));
        }
        big.set(!all_f32(&json));
        GltfFile::new(json, Vec::new())
    };
    if big.get() {
        // Only now build the JSON pointers (one string per level) to name
        // it, in the whole tree's key order.
        check_numbers(&doc.to_json(), &mut String::new())?;
    }
    Ok(doc)
}

/// The asset version (2.x, `minVersion` 2.0 when given) and the required
/// extensions ([`ACCEPTED_REQUIRED`]).
///
/// # Errors
/// `gltf.version`, `gltf.extension`.
fn check_asset(json: &Value) -> Result<(), ImportError> {
    let version = json
        .pointer("/asset/version")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !version.starts_with('2') {
        return Err(err(
            "gltf.version",
            format!("asset.version {version:?} is not 2.x"),
        ));
    }
    if let Some(min) = json.pointer("/asset/minVersion") {
        // glTF 2.0 §3.2: a reader refuses a minVersion it does not implement.
        if min.as_str() != Some("2.0") {
            return Err(err(
                "gltf.version",
                format!("asset.minVersion {min} is not 2.0: this reader implements glTF 2.0"),
            ));
        }
    }
    for ext in arr(json, "extensionsRequired") {
        let name = ext.as_str().unwrap_or("");
        if !ACCEPTED_REQUIRED.contains(&name) {
            return Err(err(
                "gltf.extension",
                format!(
                    "required extension {name:?} is not supported (accepted: {})",
                    ACCEPTED_REQUIRED.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Every external byte counts, before any is read (a buffer reads at most
/// its byteLength; each reference reads again): the external buffers'
/// `byteLength`s must add up to at most
/// [`crate::limits::max_buffer_bytes`] of the work budget.
///
/// # Errors
/// `limits.work`.
fn check_external_budget(json: &Value, opts: &ReadOptions) -> Result<(), ImportError> {
    let max_read = crate::limits::max_buffer_bytes(opts.max_work);
    let external: Vec<u64> = arr(json, "buffers")
        .iter()
        .filter(|b| {
            b.get("uri")
                .and_then(Value::as_str)
                .is_some_and(|u| !u.starts_with("data:"))
        })
        .map(|b| b.get("byteLength").and_then(Value::as_u64).unwrap_or(0))
        .collect();
    let read_total = external.iter().fold(0u64, |a, &l| a.saturating_add(l));
    if read_total > max_read {
        return Err(err(
            "limits.work",
            format!(
                "{} external buffers' byteLength add up to {read_total} bytes, more than the {max_read} the work budget allows (README \"Safety\"; raise it with --max-work)",
                external.len()
            ),
        ));
    }
    Ok(())
}

/// The bytes of buffer `i` (`b`): the GLB BIN chunk (taken from `blob`, no
/// `uri`), a base64 `data:` URI, or an external file resolved in
/// `base_dir` and read up to its `byteLength` (recorded in `files`).
///
/// # Errors
/// `gltf.buffer` (no data, bad data URI, unreadable or short file),
/// `gltf.uri` (a URI outside `base_dir`, see [`load_path_with`]).
fn load_buffer(
    i: usize,
    b: &Value,
    blob: &mut Option<&[u8]>,
    base_dir: Option<&Path>,
    opts: &ReadOptions,
    files: &mut Vec<PathBuf>,
) -> Result<Vec<u8>, ImportError> {
    let len = b.get("byteLength").and_then(Value::as_u64).unwrap_or(0);
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let data = match b.get("uri").and_then(Value::as_str) {
        None => blob
            .take()
            .ok_or_else(|| {
                err(
                    "gltf.buffer",
                    format!("buffer {i}: no uri and no GLB BIN chunk"),
                )
            })?
            .to_vec(),
        Some(uri) if uri.starts_with("data:") => {
            data_uri_bytes(&uri["data:".len()..], "gltf.buffer", &format!("buffer {i}"))?
        }
        Some(uri) => {
            let dir = base_dir.ok_or_else(|| {
                err(
                    "gltf.buffer",
                    format!("buffer {i}: external uri {uri:?} but no folder to resolve it"),
                )
            })?;
            let p = resolve_uri(dir, uri, opts.allow_outside)
                .map_err(|d| err("gltf.uri", format!("buffer {i}: uri {uri:?}: {d}")))?;
            let data = read_capped(&p, len)
                .map_err(|e| err("gltf.buffer", format!("buffer {i}: uri {uri:?}: {e}")))?;
            files.push(p);
            data
        }
    };
    if data.len() < len {
        return Err(err(
            "gltf.buffer",
            format!("buffer {i}: {} bytes, byteLength says {len}", data.len()),
        ));
    }
    Ok(data)
}

/// The bytes of a base64 `data:` URI: `rest` is the URI after `data:`
/// (`<media type>;base64,<data>`); errors name `what` (e.g. `buffer 3`)
/// under `rule`.
///
/// # Errors
/// `rule`: no `,`, a URI that is not base64, or invalid base64 data.
pub(crate) fn data_uri_bytes(
    rest: &str,
    rule: &'static str,
    what: &str,
) -> Result<Vec<u8>, ImportError> {
    let comma = rest
        .find(',')
        .ok_or_else(|| err(rule, format!("{what}: data URI without ','")))?;
    if !rest[..comma].ends_with(";base64") {
        return Err(err(rule, format!("{what}: data URI is not base64")));
    }
    base64_decode(&rest[comma + 1..])
        .ok_or_else(|| err(rule, format!("{what}: invalid base64 data")))
}

/// Whether every JSON number of `v` fits f32 (no allocation: the pointer
/// of an offending number is built by [`check_numbers`] only when one is).
fn all_f32(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64().is_none_or(|x| (x as f32).is_finite()),
        Value::Array(a) => a.iter().all(all_f32),
        Value::Object(o) => o.values().all(all_f32),
        _ => true,
    }
}

/// Refuses JSON numbers that overflow f32 (they would become infinities),
/// naming their JSON pointer.
fn check_numbers(v: &Value, at: &mut String) -> Result<(), ImportError> {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|x| !(x as f32).is_finite()) => {
            return Err(err(
                "gltf.non_finite",
                format!("the number {n} at {at} overflows f32"),
            ));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let l = at.len();
                at.push_str(&format!("/{i}"));
                check_numbers(x, at)?;
                at.truncate(l);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let l = at.len();
                at.push('/');
                at.push_str(k);
                check_numbers(x, at)?;
                at.truncate(l);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Resolves a relative URI against `dir`: percent-decoded, no scheme, not
/// absolute, and (unless `allow_outside`) inside `dir` after resolving
/// `..` and symlinks; the target must be a regular file.
pub(crate) fn resolve_uri(dir: &Path, uri: &str, allow_outside: bool) -> Result<PathBuf, String> {
    // The folder of a bare file name (`in.gltf`) is the current one.
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let decoded = percent_decode(uri);
    if decoded.contains('\0') {
        return Err("contains a NUL byte".into());
    }
    let scheme = decoded
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains(['/', '\\']));
    let rel = Path::new(&decoded);
    if !allow_outside && (scheme || rel.has_root() || decoded.starts_with(['/', '\\'])) {
        return Err(
            "only relative URIs inside the glTF's folder are read (--allow-outside to lift this)"
                .into(),
        );
    }
    let joined = dir.join(rel);
    let real = dunce::canonicalize(&joined).map_err(|e| format!("{}: {e}", joined.display()))?;
    if !allow_outside {
        let root = dunce::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if !real.starts_with(&root) {
            return Err(format!(
                "resolves to {}, outside the glTF's folder {} (--allow-outside to lift this)",
                real.display(),
                root.display()
            ));
        }
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", real.display()));
    }
    Ok(real)
}

/// Reads at most `cap` bytes of a regular file.
fn read_capped(path: &Path, cap: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let want = usize::try_from(size).unwrap_or(usize::MAX).min(cap);
    let mut out = Vec::with_capacity(want);
    f.take(want as u64).read_to_end(&mut out)?;
    Ok(out)
}

/// Splits a GLB into its JSON chunk and optional BIN chunk (glTF 2.0 §4.4).
fn split_glb(b: &[u8]) -> Result<(&[u8], Option<&[u8]>), ImportError> {
    let u32_at = |o: usize| -> Option<u32> {
        b.get(o..o + 4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let version = u32_at(4).ok_or_else(|| err("gltf.glb", "truncated GLB header"))?;
    if version != 2 {
        return Err(err(
            "gltf.glb",
            format!("GLB version {version} (expected 2)"),
        ));
    }
    let total = (u32_at(8).unwrap_or(0) as usize).min(b.len());
    let mut off = 12usize;
    let mut json = None;
    let mut bin = None;
    while off + 8 <= total {
        let len = u32_at(off).unwrap_or(0) as usize;
        let ty = u32_at(off + 4).unwrap_or(0);
        let data = b.get(off + 8..off + 8 + len).ok_or_else(|| {
            err(
                "gltf.glb",
                format!("chunk at {off}: {len} bytes past the end of the file"),
            )
        })?;
        match ty {
            0x4E4F_534A if json.is_none() => json = Some(data),
            0x004E_4942 if bin.is_none() => bin = Some(data),
            _ => {}
        }
        off += 8 + len.div_ceil(4) * 4;
    }
    let json = json.ok_or_else(|| err("gltf.glb", "no JSON chunk"))?;
    Ok((json, bin))
}

/// Decodes standard base64 (padding and whitespace tolerated).
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && s.is_char_boundary(i + 3) {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `v[key]` as an array (empty when missing).
pub fn arr<'a, P: Props + ?Sized>(v: &'a P, key: &str) -> &'a [Value] {
    v.prop(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `v[key]` as an index.
pub fn idx<P: Props + ?Sized>(v: &P, key: &str) -> Option<usize> {
    v.prop(key).and_then(Value::as_u64).map(|x| x as usize)
}

/// `v[key]` as f32 numbers (`None` when missing or not all numbers).
pub fn floats<P: Props + ?Sized>(v: &P, key: &str) -> Option<Vec<f32>> {
    v.prop(key)?
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// The `msh` object of an element's extras (`{"extras": {"msh": {...}}}`).
pub fn msh_extras<P: Props + ?Sized>(v: &P) -> Option<&serde_json::Map<String, Value>> {
    v.prop("extras")?.get("msh")?.as_object()
}

/// An extras value read as a flag, the same for every Blender version
/// (gltf-mapping.md "Extras"): `true`/`false`; a number, non-zero meaning
/// true (Blender 3.x writes boolean custom properties as `1`/`0`, 5.x as
/// `true`/`false`); the strings `"true"`/`"false"`/`"1"`/`"0"`. Anything
/// else is `None`.
pub fn extra_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|x| x != 0.0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// An extras value read as an unsigned integer, the same for every
/// Blender version: a JSON integer, or a float with an integral value
/// (`3.0`; Blender may write integer custom properties as floats). Negative,
/// fractional, non-finite or non-numeric values are `None`.
pub fn extra_u64(v: &Value) -> Option<u64> {
    if let Some(u) = v.as_u64() {
        return Some(u);
    }
    let f = v.as_f64()?;
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0)
        .then_some(f as u64)
}

/// `{"extras": {"msh": {key: ...}}}` of `v` as a flag ([`extra_bool`]).
pub fn msh_bool<P: Props + ?Sized>(v: &P, key: &str) -> Option<bool> {
    extra_bool(msh_extras(v)?.get(key)?)
}

/// `{"extras": {"msh": {key: ...}}}` of `v` as an unsigned integer
/// ([`extra_u64`]).
pub fn msh_u64<P: Props + ?Sized>(v: &P, key: &str) -> Option<u64> {
    extra_u64(msh_extras(v)?.get(key)?)
}

/// Component type of an accessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// 5120.
    I8,
    /// 5121.
    U8,
    /// 5122.
    I16,
    /// 5123.
    U16,
    /// 5125.
    U32,
    /// 5126.
    F32,
}

impl Component {
    fn from_code(c: u64) -> Option<Self> {
        Some(match c {
            5120 => Component::I8,
            5121 => Component::U8,
            5122 => Component::I16,
            5123 => Component::U16,
            5125 => Component::U32,
            5126 => Component::F32,
            _ => return None,
        })
    }

    /// Bytes per component.
    pub fn size(self) -> usize {
        match self {
            Component::I8 | Component::U8 => 1,
            Component::I16 | Component::U16 => 2,
            Component::U32 | Component::F32 => 4,
        }
    }

    fn value(self, b: &[u8], normalized: bool) -> f32 {
        match self {
            Component::I8 => {
                let v = b[0] as i8;
                if normalized {
                    (f32::from(v) / 127.0).max(-1.0)
                } else {
                    f32::from(v)
                }
            }
            Component::U8 => {
                if normalized {
                    f32::from(b[0]) / 255.0
                } else {
                    f32::from(b[0])
                }
            }
            Component::I16 => {
                let v = i16::from_le_bytes([b[0], b[1]]);
                if normalized {
                    (f32::from(v) / 32767.0).max(-1.0)
                } else {
                    f32::from(v)
                }
            }
            Component::U16 => {
                let v = u16::from_le_bytes([b[0], b[1]]);
                if normalized {
                    f32::from(v) / 65535.0
                } else {
                    f32::from(v)
                }
            }
            Component::U32 => {
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if normalized {
                    (f64::from(v) / 4_294_967_295.0) as f32
                } else {
                    v as f32
                }
            }
            Component::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        }
    }
}

/// The raw elements of one accessor, sparse substitution applied.
#[derive(Debug, Clone)]
pub struct RawAccessor {
    /// Component type.
    pub component: Component,
    /// Components per element (1 for SCALAR ... 16 for MAT4).
    pub ncomp: usize,
    /// `normalized` flag.
    pub normalized: bool,
    /// Element count.
    pub count: usize,
    /// Tightly packed element bytes (`count * ncomp * component.size()`).
    pub bytes: Vec<u8>,
}

impl RawAccessor {
    /// Element size in bytes.
    pub fn elem_size(&self) -> usize {
        self.ncomp * self.component.size()
    }

    /// All values as f32 (normalized integers per glTF 2.0 §3.11), `ncomp`
    /// per element.
    pub fn to_f32(&self) -> Vec<f32> {
        let s = self.component.size();
        self.bytes
            .chunks_exact(s)
            .map(|c| self.component.value(c, self.normalized))
            .collect()
    }

    /// Element `i`'s raw bytes.
    pub fn elem(&self, i: usize) -> &[u8] {
        let n = self.elem_size();
        &self.bytes[i * n..(i + 1) * n]
    }
}

fn type_components(t: &str) -> Option<usize> {
    Some(match t {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        _ => return None,
    })
}

/// The `gltf.index` error of `key[i]` in an array of `len` entries.
fn no_entry(key: &str, i: usize, len: usize) -> ImportError {
    err(
        "gltf.index",
        format!("{key}[{i}] does not exist ({len} entries)"),
    )
}

impl GltfFile {
    /// The document of the JSON tree `json` (the [`TopArray`]s move to
    /// their typed slots, as [`parse`] reads them); `buffers[i]` holds
    /// buffer `i`.
    pub fn new(mut json: Value, buffers: Vec<Vec<u8>>) -> GltfFile {
        let mut lists: [Option<Vec<Elem>>; 7] = Default::default();
        if let Some(o) = json.as_object_mut() {
            for t in TopArray::ALL {
                if !o.get(t.name()).is_some_and(Value::is_array) {
                    continue;
                }
                if let Some(Value::Array(a)) = o.remove(t.name()) {
                    let keys = t.keys();
                    let elems = a.into_iter().map(|v| Elem::from_value(v, keys));
                    lists[t as usize] = Some(elems.collect());
                }
            }
        }
        GltfFile {
            json,
            buffers,
            lists,
        }
    }

    /// The whole document as one JSON tree: `json` with the typed arrays
    /// put back (the tree [`parse`] read).
    pub fn to_json(&self) -> Value {
        let mut j = self.json.clone();
        if let Some(o) = j.as_object_mut() {
            for t in TopArray::ALL {
                if let Some(l) = &self.lists[t as usize] {
                    o.insert(t.name().into(), l.iter().map(Elem::to_value).collect());
                }
            }
        }
        j
    }

    /// `json[key][i]`, or a `gltf.index` error naming the array. Not for
    /// a [`TopArray`]: see [`GltfFile::elem`].
    pub fn get(&self, key: &str, i: usize) -> Result<&Value, ImportError> {
        debug_assert!(TopArray::of_name(key).is_none(), "{key}: use elem");
        let a = arr(&self.json, key);
        a.get(i).ok_or_else(|| no_entry(key, i, a.len()))
    }

    /// The elements of a top-level array (empty when it is missing or not
    /// an array).
    pub fn list(&self, t: TopArray) -> &[Elem] {
        self.lists[t as usize].as_deref().unwrap_or(&[])
    }

    /// The elements of a top-level array, to change in place (empty when
    /// it is missing or not an array; [`GltfFile::push`] adds).
    pub fn list_mut(&mut self, t: TopArray) -> &mut [Elem] {
        self.lists[t as usize].as_deref_mut().unwrap_or(&mut [])
    }

    /// The list of a top-level array; it becomes an array (empty) when it
    /// is missing or not one.
    fn list_vec(&mut self, t: TopArray) -> &mut Vec<Elem> {
        let l = &mut self.lists[t as usize];
        if l.is_none() {
            // It becomes an array: a value that was not one goes.
            if let Some(o) = self.json.as_object_mut() {
                o.remove(t.name());
            }
        }
        l.get_or_insert_with(Vec::new)
    }

    /// The whole document as one JSON tree to change in place; the change
    /// takes effect when the returned guard is dropped (the tree is read
    /// back as [`GltfFile::new`] reads one). For tests and tools, not for
    /// hot paths.
    pub fn tree_mut(&mut self) -> TreeMut<'_> {
        let tree = self.to_json();
        TreeMut { doc: self, tree }
    }

    /// Whether a top-level array is there (an array, maybe empty).
    pub fn has(&self, t: TopArray) -> bool {
        self.lists[t as usize].is_some()
    }

    /// Element `i` of a top-level array.
    ///
    /// # Errors
    /// `gltf.index` when there is no element `i`, naming the array.
    pub fn elem(&self, t: TopArray, i: usize) -> Result<&Elem, ImportError> {
        let l = self.list(t);
        l.get(i).ok_or_else(|| no_entry(t.name(), i, l.len()))
    }

    /// Appends the JSON tree `v` to a top-level array (made an array first
    /// when it is not one); returns its index.
    pub fn push(&mut self, t: TopArray, v: Value) -> usize {
        let l = self.list_vec(t);
        l.push(Elem::from_value(v, t.keys()));
        l.len() - 1
    }

    /// `nodes` (glTF 2.0 §5.25): [`GltfFile::list`].
    pub fn nodes(&self) -> &[Elem] {
        self.list(TopArray::Nodes)
    }

    /// `meshes` (glTF 2.0 §5.23): [`GltfFile::list`].
    pub fn meshes(&self) -> &[Elem] {
        self.list(TopArray::Meshes)
    }

    /// `materials` (glTF 2.0 §5.19): [`GltfFile::list`].
    pub fn materials(&self) -> &[Elem] {
        self.list(TopArray::Materials)
    }

    /// `scenes` (glTF 2.0 §5.27): [`GltfFile::list`].
    pub fn scenes(&self) -> &[Elem] {
        self.list(TopArray::Scenes)
    }

    /// `animations` (glTF 2.0 §5.6): [`GltfFile::list`].
    pub fn animations(&self) -> &[Elem] {
        self.list(TopArray::Animations)
    }

    /// Entries of `accessors` (0 when it is missing or not an array).
    pub fn accessor_count(&self) -> usize {
        self.list(TopArray::Accessors).len()
    }

    /// Entries of `bufferViews` (0 when it is missing or not an array).
    pub fn buffer_view_count(&self) -> usize {
        self.list(TopArray::BufferViews).len()
    }

    /// Accessor `a` (glTF 2.0 §5.1).
    ///
    /// # Errors
    /// `gltf.index` when there is no accessor `a`.
    pub fn accessor_def(&self, a: usize) -> Result<&Elem, ImportError> {
        self.elem(TopArray::Accessors, a)
    }

    /// BufferView `v` (glTF 2.0 §5.11).
    ///
    /// # Errors
    /// `gltf.index` when there is no bufferView `v`.
    pub fn buffer_view_def(&self, v: usize) -> Result<&Elem, ImportError> {
        self.elem(TopArray::BufferViews, v)
    }

    /// Edits accessor `a` as a JSON object (glTF 2.0 §5.1) with `f`: for
    /// tests and tools that change a document in place.
    ///
    /// # Errors
    /// `gltf.index` when there is no accessor `a`.
    pub fn edit_accessor(
        &mut self,
        a: usize,
        f: impl FnOnce(&mut Value),
    ) -> Result<(), ImportError> {
        self.edit(TopArray::Accessors, a, f)
    }

    /// Edits bufferView `v` as a JSON object (glTF 2.0 §5.11) with `f`.
    ///
    /// # Errors
    /// `gltf.index` when there is no bufferView `v`.
    pub fn edit_buffer_view(
        &mut self,
        v: usize,
        f: impl FnOnce(&mut Value),
    ) -> Result<(), ImportError> {
        self.edit(TopArray::BufferViews, v, f)
    }

    /// Edits element `i` of a top-level array as a JSON tree with `f`.
    ///
    /// # Errors
    /// `gltf.index` when there is no element `i`.
    fn edit(
        &mut self,
        t: TopArray,
        i: usize,
        f: impl FnOnce(&mut Value),
    ) -> Result<(), ImportError> {
        let len = self.list(t).len();
        let e = self.lists[t as usize]
            .as_mut()
            .and_then(|l| l.get_mut(i))
            .ok_or_else(|| no_entry(t.name(), i, len))?;
        let mut v = e.to_value();
        f(&mut v);
        *e = Elem::from_value(v, t.keys());
        Ok(())
    }

    /// Appends accessor `v` (a JSON object, glTF 2.0 §5.1); returns its
    /// index. `accessors` becomes an array first when it is not one.
    pub fn push_accessor(&mut self, v: Value) -> usize {
        self.push(TopArray::Accessors, v)
    }

    /// Appends bufferView `v` (a JSON object, glTF 2.0 §5.11); returns its
    /// index. `bufferViews` becomes an array first when it is not one.
    pub fn push_buffer_view(&mut self, v: Value) -> usize {
        self.push(TopArray::BufferViews, v)
    }

    /// Reads accessor `a` into tightly packed bytes (glTF 2.0 §3.6.2: byte
    /// stride, offsets, sparse substitution; an accessor without bufferView
    /// is zeros).
    ///
    /// # Errors
    /// `gltf.accessor` for unknown types, ranges outside the buffer view or
    /// buffer, and malformed sparse data.
    pub fn accessor(&self, a: usize) -> Result<RawAccessor, ImportError> {
        let l = self.layout(a)?;
        let elem = l.elem();
        let mut bytes = match l.data {
            None => vec![0u8; l.count * elem],
            Some((view, off, stride)) if stride == elem => view[off..off + l.count * elem].to_vec(),
            Some((view, off, stride)) => {
                let mut out = Vec::with_capacity(l.count * elem);
                for i in 0..l.count {
                    let s = off + i * stride;
                    out.extend_from_slice(&view[s..s + elem]);
                }
                out
            }
        };
        if let Some(sp) = &l.sparse {
            for k in 0..sp.n {
                let t = sp.target(k);
                let src = sp.vo + k * elem;
                bytes[t * elem..(t + 1) * elem].copy_from_slice(&sp.vv[src..src + elem]);
            }
        }
        Ok(RawAccessor {
            component: l.component,
            ncomp: l.ncomp,
            normalized: l.normalized,
            count: l.count,
            bytes,
        })
    }

    /// The checked layout of accessor `a` (glTF 2.0 §3.6.2): every check of
    /// [`GltfFile::accessor`], in its order, before any value is decoded.
    fn layout(&self, a: usize) -> Result<Layout<'_>, ImportError> {
        let acc = self.accessor_def(a)?;
        let p = |i| acc.slot(ACCESSOR_KEYS, i);
        let num = |i| p(i).and_then(Value::as_u64).map(|x| x as usize);
        let bad = |d: String| err("gltf.accessor", format!("accessor {a}: {d}"));
        let component = p(at::COMPONENT_TYPE)
            .and_then(Value::as_u64)
            .and_then(Component::from_code)
            .ok_or_else(|| bad(format!("componentType {:?} unknown", p(at::COMPONENT_TYPE))))?;
        let ty = p(at::TYPE).and_then(Value::as_str).unwrap_or("");
        let ncomp = type_components(ty).ok_or_else(|| bad(format!("type {ty:?} unknown")))?;
        let normalized = p(at::NORMALIZED).and_then(Value::as_bool).unwrap_or(false);
        let count = num(at::COUNT).ok_or_else(|| bad("no count".into()))?;
        let elem = ncomp * component.size();
        count
            .checked_mul(elem)
            .ok_or_else(|| bad("count overflows".into()))?;
        let data = match num(at::BUFFER_VIEW) {
            None => {
                // Zeros (usually the base of a sparse accessor): no data backs
                // them, so the model limits bound them.
                if count > MAX_ZERO_ELEMENTS {
                    return Err(bad(format!(
                        "{count} elements without a bufferView (at most {MAX_ZERO_ELEMENTS})"
                    )));
                }
                None
            }
            Some(v) => {
                let (view, stride) = self.view(v)?;
                let off = num(at::BYTE_OFFSET).unwrap_or(0);
                if let Some(st) = stride.filter(|&st| st != 0 && st < elem) {
                    // glTF 2.0 §3.6.2.4: byteStride >= the element size.
                    return Err(bad(format!(
                        "bufferView {v} byteStride {st} is smaller than one element ({elem} bytes)"
                    )));
                }
                let stride = stride.filter(|&st| st != 0).unwrap_or(elem);
                // The last element's end; with no elements, the offset itself
                // must still lie inside the view (glTF 2.0 §3.6.2.4).
                let need = match count.checked_sub(1) {
                    None => off,
                    Some(last) => last
                        .checked_mul(stride)
                        .and_then(|x| x.checked_add(off))
                        .and_then(|x| x.checked_add(elem))
                        .unwrap_or(usize::MAX),
                };
                if need > view.len() {
                    return Err(bad(format!(
                        "{count} elements of {elem} bytes (stride {stride}) at offset {off} exceed bufferView {v} ({} bytes)",
                        view.len()
                    )));
                }
                Some((view, off, stride))
            }
        };
        let sparse = match p(at::SPARSE) {
            None => None,
            Some(sp) => Some(self.sparse(sp, count, elem, &bad)?),
        };
        Ok(Layout {
            component,
            ncomp,
            normalized,
            count,
            data,
            sparse,
        })
    }

    /// The sparse substitution `sp` of an accessor of `count` elements of
    /// `elem` bytes, its ranges and every index checked.
    fn sparse(
        &self,
        sp: &Value,
        count: usize,
        elem: usize,
        bad: &dyn Fn(String) -> ImportError,
    ) -> Result<Sparse<'_>, ImportError> {
        let n = idx(sp, "count").ok_or_else(|| bad("sparse without count".into()))?;
        let ind = sp
            .get("indices")
            .ok_or_else(|| bad("sparse without indices".into()))?;
        let val = sp
            .get("values")
            .ok_or_else(|| bad("sparse without values".into()))?;
        let ic = ind
            .get("componentType")
            .and_then(Value::as_u64)
            .and_then(Component::from_code)
            .ok_or_else(|| bad("sparse index componentType".into()))?;
        let (iv, _) =
            self.view(idx(ind, "bufferView").ok_or_else(|| bad("sparse indices view".into()))?)?;
        let (vv, _) =
            self.view(idx(val, "bufferView").ok_or_else(|| bad("sparse values view".into()))?)?;
        let io = idx(ind, "byteOffset").unwrap_or(0);
        let vo = idx(val, "byteOffset").unwrap_or(0);
        let end = |o: usize, size: usize| {
            n.checked_mul(size)
                .and_then(|x| x.checked_add(o))
                .unwrap_or(usize::MAX)
        };
        if n > count || end(io, ic.size()) > iv.len() || end(vo, elem) > vv.len() {
            return Err(bad(format!(
                "sparse data of {n} elements exceeds its bufferViews"
            )));
        }
        let sparse = Sparse {
            n,
            ic,
            iv,
            io,
            vv,
            vo,
        };
        for k in 0..n {
            if !matches!(ic, Component::U8 | Component::U16 | Component::U32) {
                return Err(bad("sparse indices must be unsigned integers".into()));
            }
            let target = sparse.target(k);
            if target >= count {
                return Err(bad(format!("sparse index {target} >= count {count}")));
            }
        }
        Ok(sparse)
    }

    /// The bytes of bufferView `v` and its byte stride.
    fn view(&self, v: usize) -> Result<(&[u8], Option<usize>), ImportError> {
        let view = self.buffer_view_def(v)?;
        let num = |i| {
            view.slot(VIEW_KEYS, i)
                .and_then(Value::as_u64)
                .map(|x| x as usize)
        };
        let b = num(at::VIEW_BUFFER).unwrap_or(0);
        let buf = self.buffers.get(b).ok_or_else(|| {
            err(
                "gltf.accessor",
                format!("bufferView {v}: buffer {b} does not exist"),
            )
        })?;
        let off = num(at::VIEW_BYTE_OFFSET).unwrap_or(0);
        let len = num(at::VIEW_BYTE_LENGTH).unwrap_or(0);
        let data = buf.get(off..off.saturating_add(len)).ok_or_else(|| {
            err(
                "gltf.accessor",
                format!(
                    "bufferView {v}: bytes {off}+{len} outside buffer {b} ({} bytes)",
                    buf.len()
                ),
            )
        })?;
        Ok((data, num(at::VIEW_BYTE_STRIDE)))
    }

    /// Accessor `a` as f32 values, `ncomp` per element (normalized integers
    /// per glTF 2.0 §3.11); checks the element width is `want` components.
    /// Decoded in one pass from the buffer (no intermediate byte copy).
    ///
    /// # Errors
    /// As [`GltfFile::accessor`]; `gltf.accessor` for another width;
    /// `gltf.non_finite` for a NaN or infinite value.
    pub fn floats(&self, a: usize, want: usize, what: &str) -> Result<Vec<f32>, ImportError> {
        let l = self.layout(a)?;
        if l.ncomp != want {
            return Err(err(
                "gltf.accessor",
                format!(
                    "accessor {a} ({what}): {} components per element, expected {want}",
                    l.ncomp
                ),
            ));
        }
        let v = match (l.component, l.normalized) {
            (Component::F32, _) => l.decode(f32::from_le_bytes),
            (comp @ (Component::I8 | Component::U8), norm) => {
                l.decode(|c: [u8; 1]| comp.value(&c, norm))
            }
            (comp @ (Component::I16 | Component::U16), norm) => {
                l.decode(|c: [u8; 2]| comp.value(&c, norm))
            }
            (comp, norm) => l.decode(|c: [u8; 4]| comp.value(&c, norm)),
        };
        if let Some(k) = v.iter().position(|x| !x.is_finite()) {
            return Err(err(
                "gltf.non_finite",
                format!(
                    "accessor {a} ({what}): element {} component {} is {}",
                    k / want.max(1),
                    k % want.max(1),
                    v[k]
                ),
            ));
        }
        Ok(v)
    }

    /// Accessor `a` as unsigned integer indices (UNSIGNED_BYTE/SHORT/INT
    /// SCALAR), decoded in one pass from the buffer.
    ///
    /// # Errors
    /// As [`GltfFile::accessor`]; `gltf.accessor` for another type.
    pub fn indices(&self, a: usize) -> Result<Vec<u32>, ImportError> {
        let l = self.layout(a)?;
        Ok(match (l.ncomp, l.component) {
            (1, Component::U8) => l.decode(|[c]: [u8; 1]| u32::from(c)),
            (1, Component::U16) => l.decode(|c| u32::from(u16::from_le_bytes(c))),
            (1, Component::U32) => l.decode(u32::from_le_bytes),
            _ => {
                return Err(err(
                    "gltf.accessor",
                    format!(
                        "accessor {a} (indices): {:?} x{} is not an unsigned integer SCALAR",
                        l.component, l.ncomp
                    ),
                ))
            }
        })
    }
}

/// The values of `N` bytes each in `b`, converted by `conv` (`N` a
/// constant: the loop is a plain copy the compiler vectorises).
fn each<'a, const N: usize, T>(
    b: &'a [u8],
    conv: &'a impl Fn([u8; N]) -> T,
) -> impl Iterator<Item = T> + 'a {
    b.chunks_exact(N)
        .map(|c| conv(c.try_into().expect("chunks of N bytes")))
}

/// A checked accessor (glTF 2.0 §3.6.2): every range lies inside its
/// bufferView, every sparse index below `count`.
struct Layout<'a> {
    component: Component,
    ncomp: usize,
    normalized: bool,
    count: usize,
    /// The bufferView's bytes, the accessor's byteOffset in them and the
    /// element stride; `None`: zeros.
    data: Option<(&'a [u8], usize, usize)>,
    sparse: Option<Sparse<'a>>,
}

/// Checked sparse substitution: `n` indices of type `ic` at `iv[io..]`,
/// `n` elements at `vv[vo..]`.
struct Sparse<'a> {
    n: usize,
    ic: Component,
    iv: &'a [u8],
    io: usize,
    vv: &'a [u8],
    vo: usize,
}

impl Sparse<'_> {
    /// Target element of substitution `k` (checked by [`GltfFile::sparse`]).
    fn target(&self, k: usize) -> usize {
        let s = self.io + k * self.ic.size();
        let t = &self.iv[s..s + self.ic.size()];
        match self.ic {
            Component::U8 => usize::from(t[0]),
            Component::U16 => usize::from(u16::from_le_bytes([t[0], t[1]])),
            _ => u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize,
        }
    }
}

impl Layout<'_> {
    fn elem(&self) -> usize {
        self.ncomp * self.component.size()
    }

    /// Every component converted by `conv` (given one component's bytes),
    /// `ncomp` per element, sparse substitution applied; zeros without a
    /// bufferView.
    /// The elements as values of `N` bytes each (`N` the component size),
    /// converted by `conv`, sparse substitution applied.
    fn decode<const N: usize, T: Copy>(&self, conv: impl Fn([u8; N]) -> T) -> Vec<T> {
        debug_assert_eq!(N, self.component.size());
        let elem = self.elem();
        let each = |b| each(b, &conv);
        let mut out = match self.data {
            None => vec![conv([0u8; N]); self.count * self.ncomp],
            Some((view, off, stride)) if stride == elem => {
                each(&view[off..off + self.count * elem]).collect()
            }
            Some((view, off, stride)) => {
                let mut out = Vec::with_capacity(self.count * self.ncomp);
                for i in 0..self.count {
                    let s = off + i * stride;
                    out.extend(each(&view[s..s + elem]));
                }
                out
            }
        };
        if let Some(sp) = &self.sparse {
            for k in 0..sp.n {
                let t = sp.target(k) * self.ncomp;
                let src = sp.vo + k * elem;
                for (o, c) in out[t..t + self.ncomp]
                    .iter_mut()
                    .zip(each(&sp.vv[src..src + elem]))
                {
                    *o = c;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_mean_the_same_in_every_blender_version() {
        use serde_json::json;
        for (v, want) in [
            (json!(true), Some(true)),
            (json!(1), Some(true)),
            (json!(1.0), Some(true)),
            (json!("true"), Some(true)),
            (json!(false), Some(false)),
            (json!(0), Some(false)),
            (json!(0.0), Some(false)),
            (json!("0"), Some(false)),
            (json!(null), None),
            (json!("yes?"), None),
        ] {
            assert_eq!(extra_bool(&v), want, "{v}");
        }
        for (v, want) in [
            (json!(3), Some(3)),
            (json!(3.0), Some(3)),
            (json!(3.5), None),
            (json!(-1), None),
            (json!(-1.0), None),
            (json!("3"), None),
        ] {
            assert_eq!(extra_u64(&v), want, "{v}");
        }
        let m = json!({"extras": {"msh": {"lit": 1, "material_index": 2.0}}});
        assert_eq!(msh_bool(&m, "lit"), Some(true));
        assert_eq!(msh_u64(&m, "material_index"), Some(2));
    }

    #[test]
    fn base64_and_percent() {
        assert_eq!(base64_decode("AAECAw==").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert!(base64_decode("a*b").is_none());
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("a%2"), "a%2");
    }

    #[test]
    fn normalized_components() {
        assert_eq!(Component::I8.value(&[0x81], true), -1.0);
        assert_eq!(Component::U8.value(&[255], true), 1.0);
        assert_eq!(Component::I16.value(&32767i16.to_le_bytes(), true), 1.0);
        assert_eq!(Component::U16.value(&7u16.to_le_bytes(), false), 7.0);
    }

    /// `floats`/`indices` (one pass from the buffer) read the values of
    /// the packed-bytes path (`accessor` + `to_f32`): strides, offsets,
    /// normalized integers, sparse substitution, zeros without a view.
    #[test]
    fn one_pass_decode_matches_the_packed_bytes() {
        use serde_json::json;
        let mut bin = Vec::new();
        // View 0: 3 VEC3 f32 at stride 16 (4 bytes of padding each).
        for i in 0..3 {
            for c in 0..3 {
                bin.extend_from_slice(&(i as f32 * 10.0 + c as f32).to_le_bytes());
            }
            bin.extend_from_slice(&[0xEE; 4]);
        }
        // View 1 (48..): 4 VEC2 i8 normalized at stride 4.
        bin.extend_from_slice(&[0x81, 127, 0, 0, 64, 0xC0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0]);
        // View 2 (64..): sparse indices u16 [2, 0]; view 3 (68..): 2 VEC3 f32.
        bin.extend_from_slice(&[2, 0, 0, 0]);
        for v in [7.5f32, 8.5, 9.5, -1.0, -2.0, -3.0] {
            bin.extend_from_slice(&v.to_le_bytes());
        }
        // View 4 (92..): u8 indices at stride 2.
        bin.extend_from_slice(&[5, 0xFF, 1, 0xFF, 4, 0xFF]);
        let sparse = json!({"count": 2,
            "indices": {"bufferView": 2, "componentType": 5123},
            "values": {"bufferView": 3}});
        let untyped = GltfFile::new(
            json!({
                "asset": {"version": "2.0"},
                "buffers": [{"byteLength": bin.len()}],
                "bufferViews": [
                    {"buffer": 0, "byteOffset": 0, "byteLength": 48, "byteStride": 16},
                    {"buffer": 0, "byteOffset": 48, "byteLength": 16, "byteStride": 4},
                    {"buffer": 0, "byteOffset": 64, "byteLength": 4},
                    {"buffer": 0, "byteOffset": 68, "byteLength": 24},
                    {"buffer": 0, "byteOffset": 92, "byteLength": 6, "byteStride": 2}
                ],
                "accessors": [
                    {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "sparse": sparse},
                    {"bufferView": 1, "componentType": 5120, "count": 4, "type": "VEC2", "normalized": true},
                    {"componentType": 5126, "count": 3, "type": "VEC3", "sparse": sparse},
                    {"bufferView": 4, "componentType": 5121, "count": 3, "type": "SCALAR"},
                    {"bufferView": 0, "byteOffset": 4, "componentType": 5126, "count": 2, "type": "VEC2"}
                ]
            }),
            vec![bin],
        );
        // The same document as `parse` reads it from the text.
        assert!(untyped.json.get("accessors").is_none() && untyped.has(TopArray::Accessors));
        let text = serde_json::to_vec(&untyped.to_json()).unwrap();
        let mut typed = read_json(&text, &ReadOptions::default()).unwrap();
        assert!(typed.json.get("accessors").is_none() && typed.has(TopArray::Accessors));
        assert_eq!(typed.to_json(), untyped.to_json());
        typed.buffers.clone_from(&untyped.buffers);
        for doc in [untyped, typed] {
            one_pass_checks(&doc);
        }
    }

    fn one_pass_checks(doc: &GltfFile) {
        let want0 = [-1.0, -2.0, -3.0, 10.0, 11.0, 12.0, 7.5, 8.5, 9.5];
        assert_eq!(doc.floats(0, 3, "t").unwrap(), want0);
        let want1 = [
            -1.0,
            1.0,
            64.0 / 127.0,
            -64.0 / 127.0,
            1.0 / 127.0,
            2.0 / 127.0,
            0.0,
            0.0,
        ];
        assert_eq!(doc.floats(1, 2, "t").unwrap(), want1);
        let want2 = [-1.0, -2.0, -3.0, 0.0, 0.0, 0.0, 7.5, 8.5, 9.5];
        assert_eq!(doc.floats(2, 3, "t").unwrap(), want2);
        assert_eq!(doc.indices(3).unwrap(), [5, 1, 4]);
        assert_eq!(doc.floats(4, 2, "t").unwrap(), [1.0, 2.0, 11.0, 12.0]);
        for (a, n) in [(0, 3), (1, 2), (2, 3), (4, 2)] {
            let packed = doc.accessor(a).unwrap().to_f32();
            assert_eq!(doc.floats(a, n, "t").unwrap(), packed, "accessor {a}");
        }
        let e = doc.floats(0, 2, "t").unwrap_err();
        assert_eq!(e.rule, "gltf.accessor");
        assert_eq!(doc.indices(0).unwrap_err().rule, "gltf.accessor");
    }

    /// The tree reader `read_json` had before the typed arrays: the same
    /// document, or the same error rule and message.
    fn tree_read(text: &[u8]) -> Result<Value, ImportError> {
        let json: Value =
            serde_json::from_slice(text).map_err(|e| err("gltf.json", e.to_string()))?;
        if !json.is_object() {
            return Err(err("gltf.json", "the document is not a JSON object"));
        }
        check_numbers(&json, &mut String::new())?;
        Ok(json)
    }

    /// Typed `accessors`/`bufferViews` read the same document as the tree,
    /// and refuse the same documents with the same rule and message: odd
    /// shapes, escaped and duplicate keys, numbers over f32 (the first in
    /// key order is named), syntax errors, non-objects.
    #[test]
    fn typed_arrays_read_what_the_tree_reads() {
        use serde_json::json;
        let texts: &[&str] = &[
            r#"{"asset":{"version":"2.0"},"accessors":[{"count":3,"type":"VEC3","min":[1e39]}],"nodes":[{"translation":[1e40,0,0]}]}"#,
            r#"{"nodes":[{"translation":[1e40,0,0]}],"bufferViews":[{"byteLength":1e39}]}"#,
            r#"{"accessors":5,"bufferViews":{"a":[1,2,{"b":-1e300}]}}"#,
            r#"{"accessors":[5,null,"x",[1,2.5],{"count":3,"count":4.0,"count":-2,"extras":{"k":[true]}}]}"#,
            r#"{"accessors":[],"accessors":7,"bufferViews":3,"bufferViews":[{"name":"é","byteStride":4,"target":34962}]}"#,
            r#"  {"accessors":[{"sparse":{"count":1}}] , "x": 1} "#,
            r#"{"accessors":[{"count":1}],}"#,
            r#"{"accessors":[{"count":1e400}]}"#,
            r#"{"accessors":[{"count":1}]} x"#,
            r#"[1,2]"#,
            r#""text""#,
            "",
            r#"{"a":"#,
            // Every kept array, and each element's extras kept raw.
            r#"{"nodes":[{"extras":{"msh":{"node":1,"v":[2.5]}},"name":"n","children":[1]},{"mesh":0}],"meshes":[{"primitives":[{"attributes":{"POSITION":0}}],"extras":{"e":"1e5"}}],"materials":[{"extras":{"a":1},"extras":{"b":2}}],"scenes":[{"nodes":[0],"ext\u0072as":[1,{"x":true}]}],"animations":[3,{"extras":null,"channels":[]}]}"#,
            r#"{"nodes":[{"extras":{"msh":{"node":1,"v":[1e39]}}}]}"#,
            r#"{"scenes":[{"extras":{"n":1234567890123456789012345678901234567890}}]}"#,
            r#"{"animations":[{"extras":{"v":1e400}}]}"#,
            r#"{"materials":[{"extras":{"v":1e3,"w":[-2E+2]}}],"meshes":{"not":"an array"}}"#,
        ];
        for t in texts {
            let typed = read_json(t.as_bytes(), &ReadOptions::default());
            match (typed, tree_read(t.as_bytes())) {
                (Ok(d), Ok(want)) => assert_eq!(d.to_json(), want, "{t}"),
                (Err(e), Err(want)) => {
                    assert_eq!(
                        (e.rule, e.to_string()),
                        (want.rule, want.to_string()),
                        "{t}"
                    );
                }
                (got, want) => panic!("{t}: {:?} against {want:?}", got.map(|d| d.to_json())),
            }
        }
        let d = read_json(texts[3].as_bytes(), &ReadOptions::default()).unwrap();
        assert_eq!(d.accessor_count(), 5);
        assert_eq!(d.accessor_def(4).unwrap().get("count"), Some(&json!(-2)));
        assert_eq!(idx(d.accessor_def(4).unwrap(), "count"), None);
        assert_eq!(d.accessor_def(3).unwrap().get("count"), None);
        let e = d.accessor_def(5).unwrap_err();
        assert_eq!(e.rule, "gltf.index");
        assert!(e
            .to_string()
            .contains("accessors[5] does not exist (5 entries)"));
        // GltfFile::new types the same arrays as parse: one representation.
        let n = GltfFile::new(d.to_json(), Vec::new());
        assert!(n.json.get("accessors").is_none() && n.accessor_count() == 5);
        assert_eq!(n.to_json(), d.to_json());
        assert_eq!(n.accessor_def(5).unwrap_err().to_string(), e.to_string());
        let mut n = n;
        n.edit_accessor(4, |a| a["count"] = json!(7)).unwrap();
        assert_eq!(idx(n.accessor_def(4).unwrap(), "count"), Some(7));
        assert_eq!(
            n.edit_buffer_view(0, |_| ()).unwrap_err().rule,
            "gltf.index"
        );
        let d = read_json(texts[2].as_bytes(), &ReadOptions::default()).unwrap_err();
        assert_eq!(d.rule, "gltf.non_finite");
    }

    #[test]
    fn elements_read_and_change_like_json_objects() {
        use serde_json::json;
        let text = br#"{"nodes":[{"name":"a","extras":{"msh":{"node":2}},"x":1},7]}"#;
        let mut d = read_json(text, &ReadOptions::default()).unwrap();
        assert!(d.json.get("nodes").is_none() && d.has(TopArray::Nodes));
        assert!(!d.has(TopArray::Scenes) && d.scenes().is_empty());
        let n = &d.nodes()[0];
        assert_eq!(n["extras"]["msh"]["node"], json!(2));
        assert_eq!(msh_u64(n, "node"), Some(2));
        assert_eq!(n.pointer("/extras/msh/node"), Some(&json!(2)));
        assert_eq!(n.pointer("/name"), Some(&json!("a")));
        assert_eq!(n["missing"], Value::Null);
        assert_eq!(idx(n, "x"), Some(1));
        let other = &d.nodes()[1];
        assert!(other.get("name").is_none() && !other.is_object());
        let n = &mut d.list_mut(TopArray::Nodes)[0];
        n["extras"]["msh"]["node"] = json!(3);
        n["translation"] = json!([1, 2, 3]);
        assert_eq!(n.remove("x"), Some(json!(1)));
        assert_eq!(
            d.to_json()["nodes"][0],
            json!({"name": "a", "extras": {"msh": {"node": 3}}, "translation": [1, 2, 3]})
        );
        d.tree_mut()["nodes"][0]["name"] = json!("b");
        assert_eq!(d.nodes()[0]["name"], "b");
        assert!(d.json.get("nodes").is_none());
        assert_eq!(d.push(TopArray::Scenes, json!({"nodes": [0]})), 0);
        assert_eq!(d.elem(TopArray::Scenes, 1).unwrap_err().rule, "gltf.index");
        assert_eq!(TopArray::of_name("animations"), Some(TopArray::Animations));
        assert_eq!(TopArray::of_name("images"), None);
    }

    #[test]
    fn rejects_unsupported_required_extension() {
        let j =
            br#"{"asset":{"version":"2.0"},"extensionsRequired":["KHR_draco_mesh_compression"]}"#;
        assert_eq!(parse(j, None).unwrap_err().rule, "gltf.extension");
        let j = br#"{"asset":{"version":"2.0"},"extensionsRequired":["KHR_mesh_quantization"]}"#;
        assert!(parse(j, None).is_ok());
        let j = br#"{"asset":{"version":"1.0"}}"#;
        assert_eq!(parse(j, None).unwrap_err().rule, "gltf.version");
    }
}
