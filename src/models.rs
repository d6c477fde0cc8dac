//! The batch pipeline of model files (the `composed kinds` layer of
//! ARCHITECTURE.md, beside [`crate::terrain::batch`] and
//! [`crate::mission::pipeline`]): bare models, the `.msh` entries of
//! archives and unit files ([`ModelJob`], each with its [`JobKind`]),
//! converted in parallel on the current rayon pool, each file loaded once
//! and its material libraries found once per folder. A model goes through
//! [`crate::convert::convert`] and gets its `.cpt`/`.ctl` siblings
//! ([`crate::unit::pipeline::decorate`]); a unit file is assembled from its
//! parts ([`crate::unit::assemble::convert_unit`], unit-files-notes §3.3).
//! The driver ([`crate::batch`]) calls it through [`run::Pipeline`].

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use crate::convert::{convert, ConvertError, ConvertErrorKind, ModelRef};
use crate::material::Libraries;
use crate::msh::MshError;
use crate::nres;
use crate::output::{Durability, OutputError, Transaction, TxnOptions, WritePlan};
use crate::run::{
    self, archives_in, is_gltf_output, library_files, sanitize_component, BatchOptions, Format,
    ReportRow, Status,
};
use crate::source;

run::pipeline_of_jobs!(ModelJob, "model", run_planned);

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
    pub pipeline: JobKind,
}
impl ModelJob {
    /// The job of a whole file `file` named `name` (a bare model or a unit
    /// file), written to `output`.
    pub fn whole_file(file: &Path, name: &str, pipeline: JobKind, output: PathBuf) -> Self {
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
            pipeline: JobKind::Model,
        }
    }
}
/// Which pipeline converts a [`ModelJob`] (maps have their own job,
/// [`crate::terrain::batch::TerrainJob`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// A model: [`crate::convert::convert`], then its `.cpt`/`.ctl`
    /// siblings ([`crate::unit::pipeline::decorate`]).
    Model,
    /// A unit file assembled from its parts
    /// ([`crate::unit::assemble::convert_unit`], unit-files-notes §3.3).
    Unit,
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
    /// The libraries of `file`'s folder, loaded once per run for every
    /// folder, map and mission that uses them ([`Libraries::load_shared`]).
    fn find(file: &Path, opts: &BatchOptions) -> LibsFound {
        let lookup = Libraries::lookup(file, opts.game_dir.as_deref());
        let (libs, errors) = match lookup.dir.as_deref() {
            None => (None, Vec::new()),
            Some(dir) => {
                let (l, w) = Libraries::load_shared(dir, opts.texm_order, &opts.files);
                (Some(l), w)
            }
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

/// One input file of the model pipeline: its libraries (found before the
/// parallel phase), and its bytes, loaded by the first of its jobs to run
/// and dropped when the last is done, so memory holds the files in
/// flight, not the whole game (issue 28 item 1).
struct FileSlot {
    libs: LibsFound,
    /// Jobs of this file not done yet.
    remaining: AtomicUsize,
    /// `None` until loaded; `Some(None)`: unreadable.
    loaded: Mutex<Option<Option<Arc<Loaded>>>>,
}

impl FileSlot {
    /// The loaded file of job `j` (loaded now by the first job; `None`
    /// when it cannot be read). A file other jobs share through `shared`
    /// (a unit's part archive) is not read again.
    fn load(&self, j: &ModelJob, shared: &source::SharedFiles) -> Option<Arc<Loaded>> {
        let mut g = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(|| {
            shared.get_transient(&j.file).ok().map(|bytes| {
                let entries = entry_ranges(&bytes, j.entry.is_some());
                let wea = if j.entry.is_none() {
                    sibling_wea(&j.file)
                } else {
                    None
                };
                Arc::new(Loaded {
                    bytes,
                    libs: self.libs.clone(),
                    entries,
                    wea,
                })
            })
        })
        .clone()
    }

    /// One job of this file is done: after the last, its bytes are dropped.
    fn done(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) = Some(None);
        }
    }
}

/// Loaded inputs shared by the jobs of one file.
struct Loaded {
    /// The file's bytes, shared with the units whose part archive it is.
    bytes: Arc<Vec<u8>>,
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
    let p = source::file_any_case(dir, &format!("{stem}.wea"))?;
    source::read_regular(&p, crate::output::MAX_UPDATE_BYTES).ok()
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
/// Every file a run over `jobs` reads: the model files and archives, and
/// the material libraries found for them.
pub fn input_files(jobs: &[ModelJob], opts: &BatchOptions) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut unit_dirs: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut seen: std::collections::HashSet<&Path> = std::collections::HashSet::new();
    for j in jobs {
        if !seen.insert(&j.file) {
            continue;
        }
        files.push(j.file.clone());
        let dir = j.file.parent().map(Path::to_path_buf).unwrap_or_default();
        if j.pipeline == JobKind::Unit && unit_dirs.insert(dir.clone()) {
            // The registry and the part archives a unit reads (issue 26),
            // found once per folder of unit files.
            files.extend(
                crate::unit::assemble::game_dir_with(&j.file, &opts.files)
                    .map(|g| archives_in(&g))
                    .unwrap_or_default(),
            );
        }
        if dirs.insert(dir) {
            if let Some(d) = Libraries::find_for(&j.file, opts.game_dir.as_deref()) {
                files.extend(library_files(&d));
            }
        }
    }
    files
}
/// The files job `j` writes: its output, and the `.bin` beside a `.gltf`.
pub fn job_outputs(j: &ModelJob, format: Format) -> Vec<PathBuf> {
    run::outputs_of(&j.output, format)
}

/// Claims every output of job `j` in `plan` (all or none).
///
/// # Errors
/// The first refusal ([`WritePlan::claim`]).
pub fn claim_job(plan: &mut WritePlan, j: &ModelJob, format: Format) -> Result<(), OutputError> {
    plan.claim_all(&job_outputs(j, format))
}

/// [`run()`] against a caller's plan: `plan` must hold every input of the
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
    // Find the libraries once per folder; each file is loaded by the first
    // of its jobs to run and dropped after the last (issue 28 item 1).
    let mut files: BTreeMap<PathBuf, FileSlot> = BTreeMap::new();
    let mut libs_by_dir: HashMap<PathBuf, LibsFound> = HashMap::new();
    for j in jobs {
        if let Some(slot) = files.get(&j.file) {
            slot.remaining.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // Material names and colours need the libraries even without textures.
        let dir = j.file.parent().map(Path::to_path_buf).unwrap_or_default();
        let libs = libs_by_dir
            .entry(dir)
            .or_insert_with(|| LibsFound::find(&j.file, opts))
            .clone();
        let slot = FileSlot {
            libs,
            remaining: AtomicUsize::new(1),
            loaded: Mutex::new(None),
        };
        files.insert(j.file.clone(), slot);
    }
    let folders = plan.sharing_folders();
    let rows: Vec<ReportRow> = jobs
        .par_iter()
        .zip(claims.par_iter())
        .map(|(j, claim)| {
            let slot = &files[&j.file];
            let row = match claim {
                Some(e) => refused_row(j, e),
                None => isolated(j, || {
                    let loaded = slot.load(j, &opts.files);
                    run_one(j, loaded, opts, &folders, &opts.files)
                }),
            };
            slot.done();
            progress(&row);
            row
        })
        .collect();
    let mut rows = rows;
    if let Some(dir) = &opts.textures_out {
        write_textures(
            dir,
            jobs,
            &mut rows,
            &files,
            plan,
            opts.convert.max_work,
            progress,
        );
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
/// over `max_work` ([`crate::material::texm::Texm::check_decode_work`],
/// rule `limits.work`), or that cannot be decoded or written, adds a failed row (source
/// `--textures-out FILE`, so the run exits 1), passed to `progress`.
fn write_textures(
    dir: &Path,
    jobs: &[ModelJob],
    rows: &mut Vec<ReportRow>,
    files: &BTreeMap<PathBuf, FileSlot>,
    plan: &mut WritePlan,
    max_work: u64,
    progress: &(dyn Fn(&ReportRow) + Sync),
) {
    let mut failed: Vec<ReportRow> = Vec::new();
    let mut done_libs: Vec<*const Libraries> = Vec::new();
    let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
    for j in jobs {
        let Some(libs) = files.get(&j.file).and_then(|s| s.libs.libs.clone()) else {
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
            // The pixels are counted from the header before decoding
            // (issue 26 item 5; a header that does not parse is reported
            // by the decoder).
            let header = if lightmap {
                libs.lightmap_texm(name)
            } else {
                libs.texture_texm(name)
            };
            let png = match header.map(|t| t.check_decode_work(max_work)) {
                Ok(Err(e)) => Err(e),
                _ if lightmap => libs.lightmap_png(name),
                _ => libs.texture_png(name),
            };
            let res = png
                .map_err(|e| {
                    let rule = if e.rule == "limits.work" {
                        e.rule
                    } else {
                        "texture.decode"
                    };
                    (rule, e.to_string())
                })
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

fn run_one(
    j: &ModelJob,
    loaded: Option<Arc<Loaded>>,
    opts: &BatchOptions,
    folders: &WritePlan,
    shared: &source::SharedFiles,
) -> ReportRow {
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
    let written = convert_job(j, &loaded, (bytes, wear), opts, shared).and_then(|c| {
        let plan = folders.sharing_folders();
        let txn = txn_options(opts.force);
        write_output_in(&j.output, &c, opts.format, &j.source, &txn, plan).map(|_| c)
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

/// Hands job `j` to its pipeline ([`JobKind`]): a unit file is assembled
/// from its parts (unit-files-notes §3.3); a model is converted from
/// `bytes` and `wear`, then gets its `.cpt`/`.ctl` siblings (§6). Both add
/// the library warnings of the materials they use.
///
/// # Errors
/// The pipeline's [`ConvertError`].
fn convert_job(
    j: &ModelJob,
    loaded: &Loaded,
    (bytes, wear): Located<'_>,
    opts: &BatchOptions,
    shared: &source::SharedFiles,
) -> Result<crate::convert::Converted, ConvertError> {
    let libs = loaded.libs.libs.as_deref();
    let unit = j.pipeline == JobKind::Unit;
    let conv = match j.pipeline {
        JobKind::Unit => crate::unit::assemble::convert_unit_with(
            &j.file,
            &loaded.bytes,
            libs,
            &opts.convert,
            shared,
        ),
        JobKind::Model => {
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
        crate::unit::pipeline::decorate(
            &mut c,
            &siblings,
            opts.convert.fps,
            opts.convert.up,
            opts.convert.max_work,
        )
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
    write_output_in(path, c, format, source, opts, WritePlan::new(opts.force))
}

/// [`write_output_to`] through a transaction whose plan is `plan` (a
/// batch's [`WritePlan::sharing_folders`]).
fn write_output_in(
    path: &Path,
    c: &crate::convert::Converted,
    format: Format,
    source: &str,
    opts: &TxnOptions,
    plan: WritePlan,
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
        let mut txn = Transaction::with_plan(opts.clone(), plan);
        txn.stage(&bin_path, bin).map_err(output)?;
        txn.stage(path, json).map_err(output)?;
        txn.commit().map_err(output)?;
    } else {
        let glb = crate::gltf_export::to_glb(&c.exported).map_err(export)?;
        let mut txn = Transaction::with_plan(opts.clone(), plan);
        txn.stage(path, glb).map_err(output)?;
        txn.commit().map_err(output)?;
    }
    Ok(())
}
