//! What every content kind's pipeline shares, below all of them (the
//! `run` layer of ARCHITECTURE.md): the options of a run ([`BatchOptions`],
//! [`ConvertOptions`], [`Format`]), its report rows ([`ReportRow`],
//! [`Report`], [`Counts`]), the one output naming rule ([`sanitize_component`],
//! [`unique_names`]) and the pipeline interface the batch driver calls
//! ([`Pipeline`]). Models, units, maps and missions implement it; none of
//! them imports the driver (`crate::batch`) or another kind's batch code.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::convention::ConventionChoices;
use crate::gltf_export::{self, CellChoice};
use crate::msh::read::Mode;
use crate::output::{OutputError, Transaction, TxnOptions, WritePlan};

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

/// Options of the import pipeline (the CLI flags of `msh2gltf`).
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// Frames per second of the glTF timeline (`--fps`).
    pub fps: f32,
    /// Up axis.
    pub up: gltf_export::Up,
    /// The per-model convention choices (`--names`, `--batch-layout`,
    /// `--quat-layout`, `--wear-key`, `--uv`; `None` = auto).
    pub conventions: ConventionChoices,
    /// Which slot cell a node shows.
    pub cells: CellChoice,
    /// Strict (default) or tolerant reading.
    pub mode: Mode,
    /// Embed textures when libraries are available.
    pub textures: bool,
    /// Work budget per model (units, [`crate::limits`]; `--max-work`).
    pub max_work: u64,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            fps: 24.0,
            up: gltf_export::Up::Y,
            conventions: ConventionChoices::default(),
            cells: CellChoice::default(),
            mode: Mode::Strict,
            textures: true,
            max_work: crate::limits::DEFAULT_MAX_WORK,
        }
    }
}

/// Counts reported per converted model.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Counts {
    /// Res1 nodes.
    pub nodes: usize,
    /// Res2 slots.
    pub slots: usize,
    /// Res3 vertices.
    pub vertices: usize,
    /// Triangles (Res6 indices / 3).
    pub triangles: usize,
    /// Res13 batches.
    pub batches: usize,
    /// Animated nodes (with a frame map).
    pub animated_nodes: usize,
    /// Res19.attr2.
    pub frame_count: u32,
    /// glTF materials.
    pub materials: usize,
    /// Embedded textures.
    pub textures: usize,
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

    pub(crate) fn skip(source: String, kind: &str, reason: String) -> Self {
        ReportRow {
            kind: Some(kind.to_string()),
            reason: Some(reason),
            ..ReportRow::new(source, Status::Skipped)
        }
    }
    pub(crate) fn fail(source: String, rule: &str, error: String, time_ms: f64) -> Self {
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
pub fn unique_names(names: &[String]) -> Vec<String> {
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
    /// The inputs read once per run and shared by every job and pipeline
    /// that needs them (model archives that are also units' part archives,
    /// the registry; issue 28 item 1). A fresh (default) one per run.
    pub files: crate::source::SharedFiles,
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

/// Called with each report row as soon as its job is done (the console's
/// progress line).
pub type Progress<'a> = &'a (dyn Fn(&ReportRow) + Sync);

/// The interface every content kind's batch pipeline implements: a list
/// of jobs of one kind (model and unit files: `crate::models::ModelJobs`;
/// maps: `crate::terrain::batch::TerrainJobs`; missions:
/// `crate::mission::pipeline::MissionJobs`), found by the driver's
/// discovery (`crate::batch::discover`, kinds decided once by
/// [`crate::source::content_kind`]) and run by its driver
/// (`crate::batch::run_discovered`) in a fixed order.
pub trait Pipeline: Sync {
    /// The kind's name in messages (`model`, `terrain`, `mission`).
    fn kind(&self) -> &'static str;

    /// The number of jobs.
    fn len(&self) -> usize;

    /// True without jobs.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs every job: claims its outputs in `plan` first (an output that
    /// is an input, another job's output or not a regular file fails the
    /// job with the `output.*` rule; an existing one without `force` is
    /// skipped), converts it with `opts`, commits through one
    /// [`Transaction`] per job, and gives each row to `progress`. Returns
    /// one row per job (plus failed rows of side outputs such as
    /// `--textures-out`), never panicking on bad input.
    fn run(
        &self,
        opts: &BatchOptions,
        plan: &mut WritePlan,
        progress: Progress<'_>,
    ) -> Vec<ReportRow>;
}

/// Implements [`Pipeline`] for `Vec<$job>`: kind `$kind`, every job run
/// by `$run(jobs, opts, plan, progress)` (each content kind's pipeline is
/// a list of its jobs and one function that runs them).
macro_rules! pipeline_of_jobs {
    ($job:ty, $kind:literal, $run:path) => {
        impl $crate::run::Pipeline for Vec<$job> {
            fn kind(&self) -> &'static str {
                $kind
            }

            fn len(&self) -> usize {
                Vec::len(self)
            }

            fn run(
                &self,
                opts: &$crate::run::BatchOptions,
                plan: &mut $crate::output::WritePlan,
                progress: $crate::run::Progress<'_>,
            ) -> Vec<$crate::run::ReportRow> {
                $run(self, opts, plan, progress)
            }
        }
    };
}
pub(crate) use pipeline_of_jobs;

/// The files a job writing `output` commits: `output`, and the `.bin`
/// beside a `.gltf` (any case, or any output when `format` is
/// [`Format::Gltf`]).
pub fn outputs_of(output: &Path, format: Format) -> Vec<PathBuf> {
    if is_gltf_output(output, format) {
        vec![output.to_path_buf(), output.with_extension("bin")]
    } else {
        vec![output.to_path_buf()]
    }
}

/// True when `path` is written as `.gltf` + `.bin`.
pub fn is_gltf_output(path: &Path, format: Format) -> bool {
    format == Format::Gltf
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gltf"))
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
pub fn archives_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("rlb")))
        .collect()
}

/// Where the output of a map or mission found in `rel_dir` (relative to
/// the batch root `root`, e.g. `MAPS/m01`) goes: its folder
/// (`<out>/MAPS`) and its name before sanitising and the unique-name rule
/// (`m01`); one found at the root is named after the root folder (or the
/// file's folder), `Land` when there is none.
pub fn folder_slot(out: &Path, rel_dir: &Path, root: &Path) -> (PathBuf, String) {
    let (parent, name) = match rel_dir.file_name() {
        Some(n) => (
            rel_dir.parent().unwrap_or(Path::new("")),
            n.to_string_lossy().into_owned(),
        ),
        None => {
            let dir = if root.is_dir() {
                Some(root)
            } else {
                root.parent()
            };
            let n = dir
                .and_then(Path::file_name)
                .map_or_else(|| "Land".into(), |n| n.to_string_lossy().into_owned());
            (Path::new(""), n)
        }
    };
    (out.join(parent), name)
}

/// True when a job's write failed only because its target appeared after
/// the plan checked it (another run created it meanwhile): the refusal
/// `output.exists`, alone or as the cause of a commit that changed
/// nothing (rule `io`). With `--force` the pipelines write once more
/// (the target now exists and is replaced); otherwise, or when it
/// happens again, the job is skipped as `exists`, as the models are.
pub fn appeared_meanwhile(rule: &str, message: &str) -> bool {
    let exists = OutputError::Exists(PathBuf::new()).to_string();
    rule == "output.exists"
        || (rule == "io" && message.contains(&format!("{exists}; nothing was changed")))
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
    fn a_target_that_appeared_meanwhile_is_recognised() {
        let e = OutputError::Exists(PathBuf::from("o/m01.glb"));
        assert!(appeared_meanwhile(e.rule(), &e.to_string()));
        let busy = "o/m01.glb: busy: another run is changing it";
        assert!(!appeared_meanwhile("output.busy", busy));
        assert!(!appeared_meanwhile("io", "o/m01.glb: permission denied"));
    }

    #[test]
    fn collisions_are_resolved_in_order() {
        let n = unique_names(&["A".into(), "a".into(), "b".into(), "A".into()]);
        assert_eq!(n, vec!["A", "a~2", "b", "A~3"]);
    }
}
