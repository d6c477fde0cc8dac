//! Batch conversion (application layer), the driver every content kind
//! shares: discover every file under a game folder, decide its kind once
//! by content ([`source::content_kind`]) and make a job for its pipeline
//! (models and `.msh` entries of archives, unit files: [`ModelJob`] with
//! its [`Pipeline`]; maps: [`crate::terrain::batch::TerrainJob`]), skip
//! what holds no model with a reason (format-notes §2), convert (models
//! and units in parallel, then maps: [`run_discovered`]) through the
//! shared options ([`BatchOptions`]) and write plan, and report per job
//! ([`Report`]).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::convert::{convert, ConvertError, ConvertErrorKind, ConvertOptions, Counts, ModelRef};
use crate::material::Libraries;
use crate::msh::MshError;
use crate::nres;
use crate::output::{Durability, OutputError, Transaction, TxnOptions, WritePlan};
use crate::source::{self, Content};

/// Output container format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Binary glTF, one `.glb` per model.
    #[default]
    Glb,
    /// `.gltf` JSON with a `.bin` beside it.
    Gltf,
}

impl Format {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Glb => "glb",
            Format::Gltf => "gltf",
        }
    }
}

/// Where a model's bytes live.
#[derive(Debug, Clone)]
pub struct ModelJob {
    /// The file on disk (a bare model or an archive).
    pub file: PathBuf,
    /// The archive entry index, for models nested in archives.
    pub entry: Option<usize>,
    /// The entry name (decoded), for display.
    pub entry_name: Option<String>,
    /// Display name: `file` or `file:ENTRY`.
    pub source: String,
    /// Model stem.
    pub stem: String,
    /// Output path.
    pub output: PathBuf,
    /// The pipeline that converts it (decided once, at discovery).
    pub pipeline: Pipeline,
}

impl ModelJob {
    /// The job of a whole file `file` named `name` (a bare model or a unit
    /// file), written to `output`.
    pub fn whole_file(file: &Path, name: &str, pipeline: Pipeline, output: PathBuf) -> Self {
        ModelJob {
            file: file.to_path_buf(),
            entry: None,
            entry_name: None,
            source: file.display().to_string(),
            stem: source::stem_of(name).to_string(),
            output,
            pipeline,
        }
    }

    /// The job of entry `index` (named `entry_name`) of the archive `file`;
    /// its output is set later.
    pub fn entry(file: &Path, index: usize, entry_name: String) -> Self {
        ModelJob {
            file: file.to_path_buf(),
            entry: Some(index),
            source: format!("{}:{entry_name}", file.display()),
            stem: source::stem_of(&entry_name).to_string(),
            entry_name: Some(entry_name),
            output: PathBuf::new(),
            pipeline: Pipeline::Model,
        }
    }
}

/// Which pipeline converts a [`ModelJob`] (maps have their own job,
/// [`crate::terrain::batch::TerrainJob`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipeline {
    /// A model: [`crate::convert::convert`], then its `.cpt`/`.ctl`
    /// siblings ([`crate::unit::pipeline::decorate`]).
    Model,
    /// A unit file assembled from its parts
    /// ([`crate::unit::assemble::convert_unit`], unit-files-notes §3.3).
    Unit,
}

/// Status of one model or file in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written.
    Converted,
    /// Not a model, or output kept (exists without --force).
    Skipped,
    /// Broken model or write error.
    Failed,
}

/// One row of the run report (`--report`).
#[derive(Debug, Clone, Serialize)]
pub struct ReportRow {
    /// `file` or `file:ENTRY`.
    pub source: String,
    /// Output path, for converted models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// converted / skipped / failed.
    pub status: Status,
    /// For skips: what the file is (`terrain`, `rsli`, `registry`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// For skips: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Counts, for converted models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// The model's conventions (format-notes §6) and how each was decided
    /// (`option`, `file` or `default`, with the evidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conventions: Option<crate::convention::Decided>,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Facts that need no action (maps' validation notes), listed with
    /// `-v` only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Errors (one for a failed model).
    pub errors: Vec<String>,
    /// The broken rule of a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Embedded textures (Textures.lib entry names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub textures: Vec<String>,
    /// The library files used, for converted models (`Material.lib`,
    /// `Textures.lib`, `LightMap.lib` paths; empty: none found).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<String>,
    /// Wall time spent on this model, milliseconds.
    pub time_ms: f64,
}

impl ReportRow {
    /// The libraries used, for messages: `DIR (Material.lib, Textures.lib)`,
    /// or `none found`.
    pub fn libraries_text(&self) -> String {
        libraries_text(&self.libraries)
    }

    /// A row for `source` with `status` and nothing else yet.
    pub(crate) fn new(source: String, status: Status) -> Self {
        ReportRow {
            source,
            output: None,
            status,
            kind: None,
            reason: None,
            counts: None,
            conventions: None,
            warnings: Vec::new(),
            notes: Vec::new(),
            errors: Vec::new(),
            rule: None,
            textures: Vec::new(),
            libraries: Vec::new(),
            time_ms: 0.0,
        }
    }

    fn skip(source: String, kind: &str, reason: String) -> Self {
        ReportRow {
            kind: Some(kind.to_string()),
            reason: Some(reason),
            ..ReportRow::new(source, Status::Skipped)
        }
    }
    fn fail(source: String, rule: &str, error: String, time_ms: f64) -> Self {
        // Every error names its source.
        let error = if error.starts_with(&source) {
            error
        } else {
            format!("{source}: {error}")
        };
        ReportRow {
            errors: vec![error],
            rule: Some(rule.to_string()),
            time_ms,
            ..ReportRow::new(source, Status::Failed)
        }
    }
}

/// The whole run's report.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    /// Tool and version.
    pub tool: String,
    /// Rows in a deterministic order (by source).
    pub models: Vec<ReportRow>,
    /// Converted count.
    pub converted: usize,
    /// Skipped count.
    pub skipped: usize,
    /// Failed count.
    pub failed: usize,
    /// Total wall time, seconds.
    pub seconds: f64,
}

impl Report {
    /// Builds the totals from rows (sorted by source for a stable report).
    pub fn from_rows(mut rows: Vec<ReportRow>, seconds: f64) -> Self {
        rows.sort_by(|a, b| a.source.cmp(&b.source));
        let count = |s| rows.iter().filter(|r| r.status == s).count();
        Report {
            tool: format!("mshgltf {}", env!("CARGO_PKG_VERSION")),
            converted: count(Status::Converted),
            skipped: count(Status::Skipped),
            failed: count(Status::Failed),
            models: rows,
            seconds,
        }
    }
}

impl Report {
    /// Writes the report as pretty JSON to `path` (`--report`) through its
    /// own write transaction ([`Transaction`]); without `force` an existing
    /// file is not replaced.
    ///
    /// # Errors
    /// The transaction's [`OutputError`] (serialisation failures as `Io`).
    pub fn write(&self, path: &Path, force: bool) -> Result<(), OutputError> {
        let json = serde_json::to_vec_pretty(self).map_err(|e| OutputError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let mut txn = Transaction::new(TxnOptions::from_env(force));
        txn.stage(path, json)?;
        txn.commit().map(|_| ())
    }
}

/// Windows-reserved device names (a file named so cannot be created there).
const RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Makes one path component safe on every OS: separators, `:` and other
/// characters Windows forbids become `_`, leading/trailing dots and spaces
/// are dropped (so `..` cannot survive), reserved device names get a `_`
/// prefix, and an empty result becomes `_`.
pub fn sanitize_component(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    s = s.trim_matches(|c| c == '.' || c == ' ').to_string();
    if s.is_empty() {
        return "_".to_string();
    }
    let base = s.split('.').next().unwrap_or("").to_ascii_uppercase();
    if RESERVED.contains(&base.as_str()) {
        s.insert(0, '_');
    }
    s
}

/// Resolves case-insensitive collisions among the output names of one
/// folder deterministically: the first keeps its name, later ones get
/// `~2`, `~3`, ... before the extension.
fn unique_names(names: &[String]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut taken: std::collections::HashSet<String> =
        names.iter().map(|n| n.to_lowercase()).collect();
    let mut out = Vec::with_capacity(names.len());
    let mut first: std::collections::HashSet<String> = std::collections::HashSet::new();
    for n in names {
        let key = n.to_lowercase();
        if first.insert(key.clone()) {
            out.push(n.clone());
            continue;
        }
        let k = seen.entry(key).or_insert(1);
        loop {
            *k += 1;
            let cand = format!("{n}~{k}");
            if taken.insert(cand.to_lowercase()) {
                out.push(cand);
                break;
            }
        }
    }
    out
}

/// Everything found under a root: model jobs and skipped files.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Models to convert, in a deterministic order.
    pub jobs: Vec<ModelJob>,
    /// Files that are not models, with reasons.
    pub skipped: Vec<ReportRow>,
    /// Files or entries that claim to hold a model but cannot be opened.
    pub failed: Vec<ReportRow>,
    /// Maps (terrain recognised by its streams), converted by
    /// [`crate::terrain::batch::run`].
    pub terrains: Vec<crate::terrain::batch::TerrainJob>,
    /// Missions (`data.tma`), converted by [`crate::mission::pipeline::run`].
    pub missions: Vec<crate::mission::pipeline::MissionJob>,
}

/// Files under `dir` into `files`, special entries into `skipped`. A
/// subfolder that cannot be listed (no permission, a path past the
/// system's limit: issue 26 item 9) is a failed `io` row in `failed` and
/// costs only itself; `dir` itself failing is the error.
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    skipped: &mut Vec<ReportRow>,
    failed: &mut Vec<ReportRow>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let ft = e.file_type()?;
        if ft.is_dir() {
            let sub = e.path();
            if let Err(err) = walk(&sub, files, skipped, failed) {
                failed.push(ReportRow::fail(
                    sub.display().to_string(),
                    "io",
                    format!("cannot list: {err}"),
                    0.0,
                ));
            }
        } else if ft.is_file() {
            files.push(e.path());
        } else if let Some(row) = special_file(&e.path(), ft.is_symlink()) {
            skipped.push(row);
        } else {
            // A symlink to a regular file is converted like the file.
            files.push(e.path());
        }
    }
    Ok(())
}

/// Every file under `root` (or `root` itself) that a run may read: the
/// walk of [`discover`], symlinks to files included (a subfolder that
/// cannot be listed holds none; [`discover`] reports it). A batch's outputs are
/// checked against all of them, not only against the models.
///
/// # Errors
/// I/O errors while listing folders.
pub fn all_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if root.is_dir() {
        walk(root, &mut files, &mut Vec::new(), &mut Vec::new())?;
    } else {
        files.push(root.to_path_buf());
    }
    Ok(files)
}

/// A walked entry that is not converted: a symlink to a folder (not
/// followed, so link loops cannot occur), a dangling symlink, or a file
/// that is not regular (FIFO, device, socket: reading one may block).
/// `None` for a symlink to a regular file.
fn special_file(path: &Path, symlink: bool) -> Option<ReportRow> {
    let display = path.display().to_string();
    let meta = std::fs::metadata(path);
    let reason = match (&meta, symlink) {
        (Ok(m), true) if m.is_file() => return None,
        (Ok(m), true) if m.is_dir() => "symlink to a folder (not followed)",
        (Err(_), true) => "dangling symlink",
        (Ok(_), true) => "symlink to a file that is not regular",
        _ => "not a regular file (FIFO, device or socket)",
    };
    Some(ReportRow::skip(display, "special", reason.to_string()))
}

/// True when the NRes is the `objects.rlb` registry: entries of
/// 64-byte `{archive[32], resource[32]}` records and no models.
fn registry_reason(archive: &nres::Archive<'_>) -> Option<String> {
    let all_records = !archive.entries.is_empty()
        && archive
            .entries
            .iter()
            .all(|e| !e.data.is_empty() && e.data.len() % 64 == 0);
    all_records.then(|| "prototype registry ({archive, resource} records), no models".to_string())
}

/// Walks `root` (a folder, an archive or a bare model) and lists every model
/// with its output path under `out` (`OUT/<folders>/<archive stem>/<MODEL>.glb`,
/// `OUT/<folders>/<MODEL>.glb` for bare models), and every skipped file with
/// its reason (format-notes §2). Detection is by magic, not extension.
///
/// # Errors
/// I/O errors while listing folders.
pub fn discover(root: &Path, out: &Path, format: Format) -> std::io::Result<Discovery> {
    let mut files = Vec::new();
    let mut d = Discovery::default();
    if root.is_dir() {
        walk(root, &mut files, &mut d.skipped, &mut d.failed)?;
    } else {
        files.push(root.to_path_buf());
    }
    // Output names per folder, resolved for collisions at the end.
    let mut planned = PlannedNames::new();
    for file in files {
        let rel_dir = rel_dir(root, &file);
        let display = file.display().to_string();
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let data = match source::read_for_kind(&file) {
            Ok(b) => b,
            Err(e) => {
                d.failed.push(ReportRow::fail(
                    display,
                    "io",
                    format!("cannot read: {e}"),
                    0.0,
                ));
                continue;
            }
        };
        // The file's kind, decided once; each kind goes to its pipeline.
        match source::content_kind(&data, name.as_bytes()) {
            // A bare model, or a unit file (one assembled scene,
            // unit-files-notes §3.5): one job for the whole file.
            kind @ (Content::Model | Content::Unit) => {
                let pipeline = if kind == Content::Unit {
                    Pipeline::Unit
                } else {
                    Pipeline::Model
                };
                let job = ModelJob::whole_file(&file, &name, pipeline, PathBuf::new());
                planned.add(out.join(&rel_dir), &mut d.jobs, job);
            }
            Content::BrokenModel => {
                let e = nres::read(&data, nres::Mode::Strict).err();
                let (rule, msg) = e
                    .map(|e| (e.rule, e.to_string()))
                    .unwrap_or(("nres.magic", "not an NRes file".into()));
                d.failed.push(ReportRow::fail(display, rule, msg, 0.0));
            }
            Content::NotNres => d.skipped.push(ReportRow::skip(
                display,
                "not-nres",
                "not an NRes container".into(),
            )),
            Content::Rsli => d.skipped.push(ReportRow::skip(
                display,
                "rsli",
                "RsLi archive ('NL' magic): fonts/sprites, no models".into(),
            )),
            Content::Map => d.terrains.push(crate::terrain::batch::TerrainJob {
                output: crate::terrain::batch::output_for(out, &rel_dir, root, format),
                msh: file.clone(),
            }),
            Content::Mission => d.missions.push(crate::mission::pipeline::MissionJob {
                output: crate::mission::pipeline::output_for(out, &rel_dir, root, format),
                tma: file.clone(),
            }),
            Content::OtherNres => d.skipped.push(library_row(display, &data)),
            Content::ModelArchive => {
                let a = match nres::read(&data, nres::Mode::Tolerant) {
                    Ok(a) => a,
                    Err(e) => {
                        d.failed
                            .push(ReportRow::fail(display, e.rule, e.to_string(), 0.0));
                        continue;
                    }
                };
                // A single archive converts into OUT itself; in a folder
                // walk every archive gets OUT/<folders>/<archive stem>/.
                let folder = if root.is_dir() {
                    out.join(&rel_dir)
                        .join(sanitize_component(source::stem_of(&name)))
                } else {
                    out.to_path_buf()
                };
                for i in source::model_entries(&a) {
                    let job = ModelJob::entry(&file, i, source::decode_name(a.entries[i].name));
                    planned.add(folder.clone(), &mut d.jobs, job);
                }
            }
        }
    }
    planned.assign(&mut d.jobs, format);
    Ok(d)
}

/// The folders of `file` below `root`, each component made safe
/// ([`sanitize_component`]); empty for `root` itself.
fn rel_dir(root: &Path, file: &Path) -> PathBuf {
    file.strip_prefix(root)
        .ok()
        .and_then(|r| r.parent())
        .map(|p| {
            p.components()
                .map(|c| sanitize_component(&c.as_os_str().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default()
}

/// The skip row of an NRes without models: the `objects.rlb` registry, or
/// a library named by its entry types.
fn library_row(display: String, data: &[u8]) -> ReportRow {
    let a = nres::read(data, nres::Mode::Tolerant).ok();
    let reason = a
        .as_ref()
        .and_then(registry_reason)
        .map(|r| ("registry", r))
        .unwrap_or_else(|| {
            let types: Vec<String> = a
                .as_ref()
                .map(|a| {
                    let mut t: Vec<u32> = a.entries.iter().map(|e| e.type_id).collect();
                    t.sort_unstable();
                    t.dedup();
                    t.iter().map(|t| fourcc(*t)).collect()
                })
                .unwrap_or_default();
            (
                "library",
                format!("NRes without models (entry types {})", types.join(",")),
            )
        });
    ReportRow::skip(display, reason.0, reason.1)
}

/// The output names of discovered jobs, per output folder, in discovery
/// order: collisions are resolved once every job is known
/// ([`unique_names`]).
struct PlannedNames(BTreeMap<PathBuf, Vec<(usize, String)>>);

impl PlannedNames {
    fn new() -> Self {
        PlannedNames(BTreeMap::new())
    }

    /// Adds `job` to `jobs`, its output to be named in `folder`.
    fn add(&mut self, folder: PathBuf, jobs: &mut Vec<ModelJob>, job: ModelJob) {
        let name = sanitize_component(&job.stem);
        self.0.entry(folder).or_default().push((jobs.len(), name));
        jobs.push(job);
    }

    /// Sets every job's output: `<folder>/<unique name>.<ext>`.
    fn assign(self, jobs: &mut [ModelJob], format: Format) {
        for (folder, list) in self.0 {
            let names: Vec<String> = list.iter().map(|(_, n)| n.clone()).collect();
            for ((idx, _), n) in list.iter().zip(unique_names(&names)) {
                jobs[*idx].output = folder.join(format!("{n}.{}", format.ext()));
            }
        }
    }
}

fn fourcc(t: u32) -> String {
    let b = t.to_le_bytes();
    if b.iter().all(|c| c.is_ascii_alphanumeric()) {
        String::from_utf8_lossy(&b).into_owned()
    } else {
        t.to_string()
    }
}

/// Options of a batch run.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Pipeline options.
    pub convert: ConvertOptions,
    /// Output format.
    pub format: Format,
    /// Replace existing outputs.
    pub force: bool,
    /// Folder holding Material.lib / Textures.lib / LightMap.lib, overriding the search.
    pub game_dir: Option<PathBuf>,
    /// Also write every texture and lightmap of the libraries found as PNG here.
    pub textures_out: Option<PathBuf>,
    /// Texm byte order (`--texm-order`, format-notes §6 R8).
    pub texm_order: crate::convention::TexmOrder,
    /// Maps: add Land.map's navigation polygons as a node of outlines
    /// (`--areals`).
    pub areals: bool,
}

/// `DIR (Material.lib, Textures.lib)` for library file paths (all in one
/// folder), or `none found`.
pub fn libraries_text(files: &[String]) -> String {
    let Some(first) = files.first() else {
        return "none found".into();
    };
    let dir = Path::new(first).parent().unwrap_or(Path::new(""));
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            Path::new(f)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    format!("{} ({})", dir.display(), names.join(", "))
}

/// The material libraries found for one folder of inputs
/// ([`Libraries::lookup`]: `--game-dir` first, then the file's folder and
/// up the tree), shared by its models.
#[derive(Clone, Default)]
struct LibsFound {
    libs: Option<Arc<Libraries>>,
    /// Library files found but not loaded (one warning each; the others
    /// are still used).
    errors: Vec<String>,
    lookup: crate::material::LibraryLookup,
    game_dir: Option<PathBuf>,
}

impl LibsFound {
    fn find(file: &Path, opts: &BatchOptions) -> LibsFound {
        let lookup = Libraries::lookup(file, opts.game_dir.as_deref());
        let (libs, errors) = match lookup.dir.as_deref().map(Libraries::load_lenient) {
            None => (None, Vec::new()),
            Some((l, w)) => (Some(Arc::new(l.with_texm_order(opts.texm_order))), w),
        };
        LibsFound {
            libs,
            errors,
            lookup,
            game_dir: opts.game_dir.clone(),
        }
    }

    /// Paths of the library files in use (the report's `libraries`).
    fn files(&self) -> Vec<String> {
        self.libs.as_ref().map_or_else(Vec::new, |l| {
            l.files().iter().map(|p| p.display().to_string()).collect()
        })
    }

    /// Warnings for one converted model: a load error, a `--game-dir`
    /// without libraries, and materials named by the WEAR table while no
    /// `Material.lib`/`Textures.lib` is in use (they come out white).
    fn warnings(&self, wear_materials: &[String]) -> Vec<String> {
        let mut w: Vec<String> = self.errors.clone();
        if let Some(g) = &self.game_dir {
            if self.lookup.dir.as_deref() != Some(g.as_path()) {
                w.push(format!(
                    "--game-dir {}: no Material.lib or Textures.lib there; {}",
                    g.display(),
                    self.lookup.dir.as_ref().map_or_else(
                        || "none found elsewhere either".to_string(),
                        |d| format!("using the libraries in {}", d.display())
                    )
                ));
            }
        }
        let usable = self
            .libs
            .as_ref()
            .is_some_and(|l| l.material_lib().is_some() || l.textures_lib().is_some());
        if !usable && !wear_materials.is_empty() {
            w.push(format!(
                "the WEAR table names {} material(s) ({}) but no Material.lib or Textures.lib \
                 was found (looked in {}): white and untextured; pass --game-dir GAME_FOLDER",
                wear_materials.len(),
                wear_materials
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                self.lookup.searched_text()
            ));
        }
        w
    }
}

/// Loaded inputs shared by the jobs of one file.
struct Loaded {
    bytes: Vec<u8>,
    /// The material libraries found for this file's folder.
    libs: LibsFound,
    /// For archives, parsed once: each `.msh` entry's byte range and its WEAR
    /// sibling's range, by entry index.
    entries: Result<HashMap<usize, EntryRanges>, nres::NresError>,
    /// For a bare model, its WEAR table: the file `<stem>.wea` beside it
    /// (any case), as `gltf2msh` writes it.
    wea: Option<Vec<u8>>,
}

/// The `.wea` file beside a bare model `path` (same stem, any case).
fn sibling_wea(path: &Path) -> Option<Vec<u8>> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let want = format!("{stem}.wea");
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        e.file_name()
            .to_string_lossy()
            .eq_ignore_ascii_case(&want)
            .then(|| crate::source::read_regular(&e.path(), crate::output::MAX_UPDATE_BYTES).ok())
            .flatten()
    })
}

/// Byte ranges of a model entry and of its WEAR sibling inside an archive.
type EntryRanges = (Range<usize>, Option<Range<usize>>);

/// The `.msh` entries of an archive as byte ranges (empty for a bare model).
fn entry_ranges(
    bytes: &[u8],
    nested: bool,
) -> Result<HashMap<usize, EntryRanges>, nres::NresError> {
    if !nested {
        return Ok(HashMap::new());
    }
    let a = nres::read(bytes, nres::Mode::Tolerant)?;
    let range = |d: &[u8]| {
        let o = d.as_ptr() as usize - bytes.as_ptr() as usize;
        o..o + d.len()
    };
    let wear = source::WearIndex::new(&a);
    Ok(source::model_entries(&a)
        .into_iter()
        .map(|i| {
            let e = &a.entries[i];
            (i, (range(e.data), wear.get(e.name).map(range)))
        })
        .collect())
}

/// Converts every job, in parallel on the current rayon pool; `progress`
/// is called once per finished model with its row. Outputs are checked
/// against a fresh [`WritePlan`] (see [`run_planned`]).
pub fn run(
    jobs: &[ModelJob],
    opts: &BatchOptions,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    let mut plan = WritePlan::new(opts.force);
    for p in input_files(jobs, opts) {
        plan.add_input(&p);
    }
    run_planned(jobs, opts, &mut plan, progress)
}

/// The batch driver: every job of `d` through its pipeline, each output
/// claimed in `plan` first. Models and unit files run in parallel on the
/// current rayon pool ([`run_planned`]), then maps, one by one
/// ([`crate::terrain::batch::run`]), then missions
/// ([`crate::mission::pipeline::run`]); `progress` gets each row as it is
/// done. Returns the rows in that order (without `d`'s skipped and failed
/// rows).
pub fn run_discovered(
    d: &Discovery,
    opts: &BatchOptions,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    let mut rows = run_planned(&d.jobs, opts, plan, progress);
    rows.extend(crate::terrain::batch::run(
        &d.terrains,
        opts,
        plan,
        progress,
    ));
    rows.extend(crate::mission::pipeline::run(
        &d.missions,
        opts,
        plan,
        progress,
    ));
    rows
}

/// Every file a run over `jobs` reads: the model files and archives, and
/// the material libraries found for them.
pub fn input_files(jobs: &[ModelJob], opts: &BatchOptions) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut seen: std::collections::HashSet<&Path> = std::collections::HashSet::new();
    for j in jobs {
        if !seen.insert(&j.file) {
            continue;
        }
        files.push(j.file.clone());
        if j.pipeline == Pipeline::Unit {
            // The registry and the part archives a unit reads (issue 26).
            files.extend(
                crate::unit::assemble::game_dir(&j.file)
                    .map(|g| archives_in(&g))
                    .unwrap_or_default(),
            );
        }
        let dir = j.file.parent().map(Path::to_path_buf).unwrap_or_default();
        if dirs.insert(dir) {
            if let Some(d) = Libraries::find_for(&j.file, opts.game_dir.as_deref()) {
                files.extend(library_files(&d));
            }
        }
    }
    files
}

/// The library files of `dir` a run may read: `Material.lib`,
/// `Textures.lib` and `LightMap.lib` as spelt on disk (any case), plus the
/// canonical spelling, so a library that does not exist yet is an input
/// too.
pub fn library_files(dir: &Path) -> Vec<PathBuf> {
    let names = [
        crate::material::library::MATERIAL_LIB,
        crate::material::library::TEXTURES_LIB,
        crate::material::library::LIGHTMAP_LIB,
    ];
    let mut files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
            files.push(e.path());
        }
    }
    files
}

/// What a run over a game folder `dir` may read there: every `*.rlb`
/// archive (the registry and the part archives units and missions name)
/// and the libraries ([`library_files`]).
pub fn game_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = archives_in(dir);
    files.extend(library_files(dir));
    files
}

/// Every `*.rlb` archive of `dir` (any case): the registry `objects.rlb`
/// and the part archives a unit file names (unit-files-notes §3.3).
fn archives_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("rlb")))
        .collect()
}

/// The files job `j` writes: its output, and the `.bin` beside a `.gltf`.
pub fn job_outputs(j: &ModelJob, format: Format) -> Vec<PathBuf> {
    if is_gltf_output(&j.output, format) {
        vec![j.output.clone(), j.output.with_extension("bin")]
    } else {
        vec![j.output.clone()]
    }
}

fn is_gltf_output(path: &Path, format: Format) -> bool {
    format == Format::Gltf
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gltf"))
}

/// Claims every output of job `j` in `plan` (all or none).
///
/// # Errors
/// The first refusal ([`WritePlan::claim`]).
pub fn claim_job(plan: &mut WritePlan, j: &ModelJob, format: Format) -> Result<(), OutputError> {
    plan.claim_all(&job_outputs(j, format))
}

/// [`run`] against a caller's plan: `plan` must hold every input of the
/// run ([`input_files`]) and any output the caller writes itself (the
/// report). Each job's outputs are claimed before anything is converted; a
/// job whose output is an input, another output or a non-regular file
/// fails with the `output.*` rule, an existing output without `force` is
/// skipped. A panic while converting one model fails that model only.
pub fn run_planned(
    jobs: &[ModelJob],
    opts: &BatchOptions,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    for p in input_files(jobs, opts) {
        plan.add_input(&p);
    }
    let claims: Vec<Option<OutputError>> = jobs
        .iter()
        .map(|j| claim_job(plan, j, opts.format).err())
        .collect();
    // Load each file once, and find the libraries once per folder.
    let mut files: BTreeMap<PathBuf, Option<Arc<Loaded>>> = BTreeMap::new();
    let mut libs_by_dir: HashMap<PathBuf, LibsFound> = HashMap::new();
    for j in jobs {
        if files.contains_key(&j.file) {
            continue;
        }
        // Material names and colours need the libraries even without textures.
        let dir = j.file.parent().map(Path::to_path_buf).unwrap_or_default();
        let found = libs_by_dir
            .entry(dir)
            .or_insert_with(|| LibsFound::find(&j.file, opts))
            .clone();
        let loaded = crate::source::read_regular(&j.file, crate::output::MAX_UPDATE_BYTES)
            .ok()
            .map(|bytes| {
                let entries = entry_ranges(&bytes, j.entry.is_some());
                let wea = if j.entry.is_none() {
                    sibling_wea(&j.file)
                } else {
                    None
                };
                Arc::new(Loaded {
                    bytes,
                    libs: found,
                    entries,
                    wea,
                })
            });
        files.insert(j.file.clone(), loaded);
    }
    let rows: Vec<ReportRow> = jobs
        .par_iter()
        .zip(claims.par_iter())
        .map(|(j, claim)| {
            let row = match claim {
                Some(e) => refused_row(j, e),
                None => isolated(j, || {
                    run_one(j, files.get(&j.file).cloned().flatten(), opts)
                }),
            };
            progress(&row);
            row
        })
        .collect();
    let mut rows = rows;
    if let Some(dir) = &opts.textures_out {
        write_textures(dir, jobs, &mut rows, &files, plan, progress);
    }
    // New outputs were not flushed one by one (Durability::Deferred): one
    // sync of their folders' file systems now.
    let mut dirs: Vec<PathBuf> = rows
        .iter()
        .filter(|r| r.status == Status::Converted)
        .filter_map(|r| r.output.as_deref())
        .map(|o| match Path::new(o).parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        })
        .collect();
    dirs.extend(opts.textures_out.iter().cloned());
    dirs.sort();
    dirs.dedup();
    crate::output::sync_dirs(&dirs);
    rows
}

/// The row of a job whose output was refused before conversion.
fn refused_row(j: &ModelJob, e: &OutputError) -> ReportRow {
    let mut r = match e {
        OutputError::Exists(_) => ReportRow::skip(j.source.clone(), "exists", e.to_string()),
        _ => ReportRow::fail(j.source.clone(), e.rule(), e.to_string(), 0.0),
    };
    r.output = Some(j.output.display().to_string());
    r
}

/// Runs one model's conversion so that a panic fails that model only
/// (rule `internal.panic`), never the batch.
fn isolated(j: &ModelJob, f: impl FnOnce() -> ReportRow) -> ReportRow {
    let t0 = Instant::now();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        ReportRow::fail(
            j.source.clone(),
            "internal.panic",
            format!("internal error while converting (please report): {what}"),
            t0.elapsed().as_secs_f64() * 1000.0,
        )
    })
}

/// `--textures-out`: writes every entry of each Textures.lib and
/// LightMap.lib found (once per library folder) as `<name>.png`; a texture
/// that cannot be decoded or written adds a failed row (source
/// `--textures-out FILE`, so the run exits 1), passed to `progress`.
fn write_textures(
    dir: &Path,
    jobs: &[ModelJob],
    rows: &mut Vec<ReportRow>,
    files: &BTreeMap<PathBuf, Option<Arc<Loaded>>>,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) {
    let mut failed: Vec<ReportRow> = Vec::new();
    let mut done_libs: Vec<*const Libraries> = Vec::new();
    let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
    for j in jobs {
        let Some(libs) = files
            .get(&j.file)
            .cloned()
            .flatten()
            .and_then(|l| l.libs.libs.clone())
        else {
            continue;
        };
        if done_libs.contains(&Arc::as_ptr(&libs)) {
            continue;
        }
        done_libs.push(Arc::as_ptr(&libs));
        let names = |lib: Option<&crate::material::library::Library>| -> Vec<String> {
            lib.map_or(Vec::new(), |l| (0..l.len()).map(|i| l.name(i)).collect())
        };
        let textures = names(libs.textures_lib());
        let lightmaps = names(libs.lightmap_lib());
        let all = textures
            .iter()
            .map(|n| (n, false))
            .chain(lightmaps.iter().map(|n| (n, true)));
        for (name, lightmap) in all {
            let file = dir.join(format!("{}.png", sanitize_component(name)));
            if !done.insert(file.display().to_string()) {
                continue;
            }
            let png = if lightmap {
                libs.lightmap_png(name)
            } else {
                libs.texture_png(name)
            };
            let res = png
                .map_err(|e| ("texture.decode", e.to_string()))
                .and_then(|t| {
                    plan.claim(&file).map_err(|e| (e.rule(), e.to_string()))?;
                    let mut txn = Transaction::new(txn_options(plan.force()));
                    txn.stage(&file, t.png.to_vec())
                        .and_then(|()| txn.commit())
                        .map(|_| ())
                        .map_err(|e| (e.rule(), e.to_string()))
                });
            if let Err((rule, e)) = res {
                let source = format!("--textures-out {}", file.display());
                let row = ReportRow::fail(source, rule, format!("{name}: {e}"), 0.0);
                progress(&row);
                failed.push(row);
            }
        }
    }
    rows.extend(failed);
}

/// The transaction options of one batch output: [`Durability::Deferred`]
/// (the batch syncs once at the end).
fn txn_options(force: bool) -> TxnOptions {
    TxnOptions {
        durability: Durability::Deferred,
        ..TxnOptions::from_env(force)
    }
}

fn run_one(j: &ModelJob, loaded: Option<Arc<Loaded>>, opts: &BatchOptions) -> ReportRow {
    let t0 = Instant::now();
    let ms = |t0: Instant| t0.elapsed().as_secs_f64() * 1000.0;
    let Some(loaded) = loaded else {
        return ReportRow::fail(
            j.source.clone(),
            "io",
            "cannot read the file".into(),
            ms(t0),
        );
    };
    let (bytes, wear) = match locate(j, &loaded) {
        Ok(found) => found,
        Err((rule, msg)) => return ReportRow::fail(j.source.clone(), rule, msg, ms(t0)),
    };
    let written = convert_job(j, &loaded, bytes, wear, opts).and_then(|c| {
        write_output_to(
            &j.output,
            &c,
            opts.format,
            &j.source,
            &txn_options(opts.force),
        )
        .map(|_| c)
    });
    if let Err(ConvertError {
        kind: ConvertErrorKind::Output(e),
        ..
    }) = &written
    {
        if created_meanwhile(e) {
            // A concurrent run created the output after the claim: keep it.
            let mut r = ReportRow::skip(j.source.clone(), "exists", e.to_string());
            r.output = Some(j.output.display().to_string());
            return r;
        }
    }
    match written {
        Ok(c) => ReportRow {
            source: j.source.clone(),
            output: Some(j.output.display().to_string()),
            status: Status::Converted,
            kind: None,
            reason: None,
            counts: Some(c.counts),
            conventions: Some(c.conventions),
            warnings: c.warnings,
            notes: Vec::new(),
            errors: Vec::new(),
            rule: None,
            textures: c.textures,
            libraries: loaded.libs.files(),
            time_ms: ms(t0),
        },
        Err(e) => {
            let rule = nested_rule(&e, j.entry.is_some());
            let msg = if rule == e.rule() {
                e.to_string()
            } else {
                format!(
                    "{}: {rule}: the entry's payload is not a readable model NRes: {}",
                    e.source,
                    e.to_string().trim_start_matches(&format!("{}: ", e.source))
                )
            };
            ReportRow::fail(j.source.clone(), rule, msg, ms(t0))
        }
    }
}

/// A model's bytes and its WEAR table's, inside a [`Loaded`] file.
type Located<'a> = (&'a [u8], Option<&'a [u8]>);

/// The model bytes of job `j` in its loaded file, and its WEAR table (the
/// archive's sibling entry, or the `.wea` beside a bare model).
///
/// # Errors
/// (rule, message): the archive's NRes rule, or `io` when the entry is gone.
fn locate<'a>(j: &ModelJob, loaded: &'a Loaded) -> Result<Located<'a>, (&'static str, String)> {
    match (j.entry, &loaded.entries) {
        (None, _) => Ok((&loaded.bytes, loaded.wea.as_deref())),
        (Some(_), Err(e)) => Err((e.rule, e.to_string())),
        (Some(i), Ok(map)) => match map.get(&i) {
            Some((m, w)) => Ok((
                &loaded.bytes[m.clone()],
                w.clone().map(|w| &loaded.bytes[w]),
            )),
            None => Err((
                "io",
                "the archive changed since it was listed: no such .msh entry".into(),
            )),
        },
    }
}

/// Hands job `j` to its pipeline ([`Pipeline`]): a unit file is assembled
/// from its parts (unit-files-notes §3.3); a model is converted from
/// `bytes` and `wear`, then gets its `.cpt`/`.ctl` siblings (§6). Both add
/// the library warnings of the materials they use.
///
/// # Errors
/// The pipeline's [`ConvertError`].
fn convert_job(
    j: &ModelJob,
    loaded: &Loaded,
    bytes: &[u8],
    wear: Option<&[u8]>,
    opts: &BatchOptions,
) -> Result<crate::convert::Converted, ConvertError> {
    let libs = loaded.libs.libs.as_deref();
    let unit = j.pipeline == Pipeline::Unit;
    let conv = match j.pipeline {
        Pipeline::Unit => {
            crate::unit::assemble::convert_unit(&j.file, &loaded.bytes, libs, &opts.convert)
        }
        Pipeline::Model => {
            let m = ModelRef {
                source: j.source.clone(),
                stem: j.stem.clone(),
                bytes,
                wear,
            };
            convert(&m, libs, &opts.convert)
        }
    };
    conv.and_then(|mut c| {
        let more = loaded.libs.warnings(&c.wear_materials);
        c.warnings.extend(more);
        if unit {
            return Ok(c);
        }
        let siblings = crate::unit::siblings::of_job(&j.file, &loaded.bytes, j.entry);
        crate::unit::pipeline::decorate(&mut c, &siblings, opts.convert.fps, opts.convert.up)
            .map_err(|e| ConvertError {
                source: j.source.clone(),
                kind: ConvertErrorKind::Export(e),
            })?;
        Ok(c)
    })
}

/// A nested `.msh` payload that is not a readable NRes is reported as
/// `msh.nested_container`.
fn nested_rule(e: &ConvertError, nested: bool) -> &'static str {
    match &e.kind {
        ConvertErrorKind::Msh(MshError { rule, .. }) if nested && rule.starts_with("nres.") => {
            "msh.nested_container"
        }
        _ => e.rule(),
    }
}

/// True when a commit failed only because a target appeared after it was
/// claimed (a concurrent run created it): the batch keeps that file.
fn created_meanwhile(e: &OutputError) -> bool {
    match e {
        OutputError::Exists(_) => true,
        OutputError::Commit(f) => {
            matches!(f.cause, OutputError::Exists(_)) && f.unrestored.is_empty()
        }
        _ => false,
    }
}

/// Writes a converted model as `.glb`, or `.gltf` + `.bin` beside it, in
/// one [`Transaction`] (replacing existing files).
///
/// # Errors
/// A [`ConvertError`] of kind Export (serialisation) or Output (the refusal or I/O failure).
pub fn write_output(
    path: &Path,
    c: &crate::convert::Converted,
    format: Format,
    source: &str,
) -> Result<(), ConvertError> {
    write_output_to(path, c, format, source, &TxnOptions::from_env(true))
}

/// [`write_output`] with `opts`: without `opts.force` an existing file is
/// not replaced (no-clobber creation); `.gltf` and `.bin` are committed
/// together ([`Transaction::commit`]).
///
/// # Errors
/// A [`ConvertError`] of kind Export (serialisation) or Output (the refusal or I/O failure).
pub fn write_output_to(
    path: &Path,
    c: &crate::convert::Converted,
    format: Format,
    source: &str,
    opts: &TxnOptions,
) -> Result<(), ConvertError> {
    let export = |e| ConvertError {
        source: source.to_string(),
        kind: ConvertErrorKind::Export(e),
    };
    let output = |e| ConvertError {
        source: source.to_string(),
        kind: ConvertErrorKind::Output(e),
    };
    if is_gltf_output(path, format) {
        let bin_path = path.with_extension("bin");
        let bin_uri = bin_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model.bin".into());
        let (json, bin) = crate::gltf_export::to_gltf(&c.exported, &bin_uri).map_err(export)?;
        let mut txn = Transaction::new(opts.clone());
        txn.stage(&bin_path, bin).map_err(output)?;
        txn.stage(path, json).map_err(output)?;
        txn.commit().map_err(output)?;
    } else {
        let glb = crate::gltf_export::to_glb(&c.exported).map_err(export)?;
        let mut txn = Transaction::new(opts.clone());
        txn.stage(path, glb).map_err(output)?;
        txn.commit().map_err(output)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_blocks_traversal_and_reserved_names() {
        assert_eq!(sanitize_component("../evil"), "_evil");
        assert_eq!(sanitize_component(".."), "_");
        assert_eq!(sanitize_component("a/b\\c:d"), "a_b_c_d");
        assert_eq!(sanitize_component("CON"), "_CON");
        assert_eq!(sanitize_component("con.txt"), "_con.txt");
        assert_eq!(sanitize_component("/abs"), "_abs");
        assert_eq!(sanitize_component("ok_name"), "ok_name");
        assert_eq!(sanitize_component(""), "_");
    }

    #[test]
    fn collisions_are_resolved_in_order() {
        let n = unique_names(&["A".into(), "a".into(), "b".into(), "A".into()]);
        assert_eq!(n, vec!["A", "a~2", "b", "A~3"]);
    }
}
