//! The batch driver (the `driver` layer of ARCHITECTURE.md): discover every
//! file under a game folder, decide its kind once by content
//! ([`source::content_kind`]) and make a job for its pipeline (model and
//! unit files: [`ModelJob`], [`crate::models`]; maps: [`TerrainJob`];
//! missions: [`MissionJob`]), skip what holds no model with a reason
//! (format-notes §2), then run every kind through the one interface
//! [`Pipeline`] ([`run_discovered`]) with the shared options
//! ([`BatchOptions`]) and write plan. The kinds import nothing from here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::limits::Budget;
use crate::mission::pipeline::MissionJob;
use crate::models::{JobKind, ModelJob};
use crate::nres;
use crate::output::WritePlan;
use crate::run::{
    self, sanitize_component, unique_names, BatchOptions, Format, Pipeline, ReportRow,
};
use crate::source::{self, Content};
use crate::terrain::batch::TerrainJob;

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
    pub terrains: Vec<TerrainJob>,
    /// Missions (`data.tma`), converted by [`crate::mission::pipeline::run`].
    pub missions: Vec<MissionJob>,
}

impl Discovery {
    /// Every kind's jobs as the pipeline that runs them, in the driver's
    /// order (models and units, maps, missions).
    pub fn pipelines(&self) -> [&dyn Pipeline; 3] {
        [&self.jobs, &self.terrains, &self.missions]
    }

    /// The number of jobs of every kind.
    pub fn job_count(&self) -> usize {
        self.pipelines().iter().map(|p| p.len()).sum()
    }
}

/// Why [`walk`] stopped: a folder that could not be listed, or the
/// discovery budget spent (told apart by type, never by message).
#[derive(Debug)]
enum WalkStop {
    /// Listing a folder failed.
    Io(std::io::Error),
    /// The `limits.work` detail: the walk listed more than the budget.
    Work(String),
}

impl From<std::io::Error> for WalkStop {
    fn from(e: std::io::Error) -> Self {
        WalkStop::Io(e)
    }
}

impl From<WalkStop> for std::io::Error {
    fn from(s: WalkStop) -> Self {
        match s {
            WalkStop::Io(e) => e,
            WalkStop::Work(detail) => std::io::Error::other(detail),
        }
    }
}

/// Files under `dir` into `files`, special entries into `skipped`. A
/// subfolder that cannot be listed (no permission, a path past the
/// system's limit: issue 26 item 9) is a failed `io` row in `failed` and
/// costs only itself; `dir` itself failing is the error. Every entry
/// listed is spent from `budget` as it is listed
/// ([`crate::limits::UNITS_PER_WALKED_FILE`]); over it, the walk stops
/// with [`WalkStop::Work`] (`limits.work`, issue 26 item 5).
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    skipped: &mut Vec<ReportRow>,
    failed: &mut Vec<ReportRow>,
    budget: &mut Budget,
) -> Result<(), WalkStop> {
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir)? {
        entries.push(e?);
        if budget
            .spend(crate::limits::UNITS_PER_WALKED_FILE, "walked files")
            .is_err()
        {
            return Err(WalkStop::Work(format!(
                "limits.work: {} files and folders listed by {}, {} work units, over the budget of {} before any is read (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                budget.used / crate::limits::UNITS_PER_WALKED_FILE,
                dir.display(),
                budget.used,
                budget.max
            )));
        }
    }
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let ft = e.file_type()?;
        if ft.is_dir() {
            let sub = e.path();
            // The store of the originals an install replaced: not game
            // content, one row that says so (output::install).
            if let Some(own @ crate::output::OwnFile::Originals) = crate::output::own_file(&sub) {
                skipped.push(ReportRow::skip(
                    sub.display().to_string(),
                    "own-file",
                    own.reason().to_string(),
                ));
                continue;
            }
            match walk(&sub, files, skipped, failed, budget) {
                Ok(()) => {}
                Err(stop @ WalkStop::Work(_)) => return Err(stop),
                Err(WalkStop::Io(err)) => failed.push(ReportRow::fail(
                    sub.display().to_string(),
                    "io",
                    format!("cannot list: {err}"),
                    0.0,
                )),
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

/// Spends the directory of an archive of models met by discovery
/// ([`crate::limits::UNITS_PER_ARCHIVE_ENTRY`] per entry its NRes header
/// declares, [`nres::declared_entries`]) from the discovery's `budget`,
/// before its entries become jobs (issue 26 item 5). Over what is left of
/// the budget, nothing is spent and the `limits.work` detail is returned:
/// the archive is refused as its own failed row, so the files after it
/// still convert.
fn archive_over_budget(budget: &mut Budget, data: &[u8]) -> Option<String> {
    let count = nres::declared_entries(data).unwrap_or(0);
    let units = count.saturating_mul(crate::limits::UNITS_PER_ARCHIVE_ENTRY);
    let mut after = *budget;
    if after.spend(units, "archive directory").is_ok() {
        *budget = after;
        return None;
    }
    Some(format!(
        "limits.work: {count} directory entries make {units} work units, over the {} left of the budget of {} (the discovery spent {} before this archive), before its entries are listed (docs/safety.md \"Bounded work\"; raise it with --max-work)",
        budget.max.saturating_sub(budget.used),
        budget.max,
        budget.used
    ))
}

/// Every file under `root` (or `root` itself) that a run may read: the
/// walk of [`discover`], symlinks to files included (a subfolder that
/// cannot be listed holds none; [`discover`] reports it). A batch's outputs are
/// checked against all of them, not only against the models.
///
/// # Errors
/// I/O errors while listing folders; `limits.work` over `max_work` units.
pub fn all_files(root: &Path, max_work: u64) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if root.is_dir() {
        let mut budget = Budget::new(max_work);
        walk(
            root,
            &mut files,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut budget,
        )
        .map_err(std::io::Error::from)?;
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

/// Completes the interrupted commits of every folder among `files` that
/// holds a journal ([`crate::output::recover_dir_once`], which says what it
/// did); one that cannot be completed is a failed `output.journal` row.
fn recover_journals(files: &[PathBuf], failed: &mut Vec<ReportRow>) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for f in files {
        if crate::output::own_file(f) == Some(crate::output::OwnFile::Journal) {
            let dir = f
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    for dir in dirs {
        if let Err(e) = crate::output::recover_dir_once(&dir) {
            failed.push(ReportRow::fail(
                dir.display().to_string(),
                e.rule(),
                e.to_string(),
                0.0,
            ));
        }
    }
}

/// Walks `root` (a folder, an archive or a bare model) and lists every model
/// with its output path under `out` (`OUT/<folders>/<archive stem>/<MODEL>.glb`,
/// `OUT/<folders>/<MODEL>.glb` for bare models), and every skipped file with
/// its reason (format-notes §2). Detection is by magic, not extension.
/// The walk and the directories of the archives of models it meets share
/// one budget of `max_work` units (issue 26 item 5): an archive whose
/// directory does not fit in what is left is one failed `limits.work` row
/// ([`crate::limits::UNITS_PER_ARCHIVE_ENTRY`] per entry, counted from its
/// header before its entries are listed), and the rest still converts.
///
/// # Errors
/// I/O errors while listing folders; `limits.work` when the walk lists
/// more than `max_work` units of files and folders.
pub fn discover(
    root: &Path,
    out: &Path,
    format: Format,
    max_work: u64,
) -> std::io::Result<Discovery> {
    let mut files = Vec::new();
    let mut d = Discovery::default();
    // One budget for the walk and the archives' directories.
    let mut budget = Budget::new(max_work);
    if root.is_dir() {
        walk(root, &mut files, &mut d.skipped, &mut d.failed, &mut budget)
            .map_err(std::io::Error::from)?;
    } else {
        files.push(root.to_path_buf());
    }
    // Output names per folder, resolved for collisions at the end.
    let mut planned = PlannedNames::new();
    // Interrupted commits in the walked folders are completed before any
    // of their files is read (docs/safety.md "One commit, one promise").
    recover_journals(&files, &mut d.failed);
    for file in files {
        if !is_own_file(&file, &mut d) {
            plan_file(&file, root, out, &mut budget, &mut planned, &mut d);
        }
    }
    planned.assign(&mut d, format);
    Ok(d)
}

/// Whether `file` is one of the tools' own files beside game files (not
/// content): lock files silently, the others (kept originals, temporary
/// files, journals) as skipped rows in `d` that say what they are.
fn is_own_file(file: &Path, d: &mut Discovery) -> bool {
    match crate::output::own_file(file) {
        None => false,
        Some(crate::output::OwnFile::Lock) => true,
        // Removed by a recovery before the walk's files are read: nothing to say.
        Some(_) if std::fs::symlink_metadata(file).is_err() => true,
        Some(own) => {
            d.skipped.push(ReportRow::skip(
                file.display().to_string(),
                "own-file",
                own.reason().to_string(),
            ));
            true
        }
    }
}

/// Decides the kind of one walked `file` and plans its work in `d`: a job
/// per model (its output name in `planned`), a map or mission job, or a
/// skipped or failed row; an archive's directory is counted in `budget`
/// first ([`discover`]).
fn plan_file(
    file: &Path,
    root: &Path,
    out: &Path,
    budget: &mut Budget,
    planned: &mut PlannedNames,
    d: &mut Discovery,
) {
    let rel_dir = rel_dir(root, file);
    let display = file.display().to_string();
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data = match source::read_for_kind(file) {
        Ok(b) => b,
        Err(e) => {
            d.failed.push(ReportRow::fail(
                display,
                "io",
                format!("cannot read: {e}"),
                0.0,
            ));
            return;
        }
    };
    // The file's kind, decided once; each kind goes to its pipeline.
    match source::content_kind(&data, name.as_bytes()) {
        // A bare model, or a unit file (one assembled scene,
        // unit-files-notes §3.5): one job for the whole file.
        kind @ (Content::Model | Content::Unit) => {
            let pipeline = if kind == Content::Unit {
                JobKind::Unit
            } else {
                JobKind::Model
            };
            let job = ModelJob::whole_file(file, &name, pipeline, PathBuf::new());
            planned.add_model(out.join(&rel_dir), &mut d.jobs, job);
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
        // Maps and missions are named after their folder, with the
        // other outputs of the folder they land in (issue 26 item 11).
        Content::Map => {
            let (folder, name) = run::folder_slot(out, &rel_dir, root);
            planned.add(folder, Slot::Map(d.terrains.len()), &name);
            d.terrains.push(TerrainJob {
                output: PathBuf::new(),
                msh: file.to_path_buf(),
            });
        }
        Content::Mission => {
            let (folder, name) = run::folder_slot(out, &rel_dir, root);
            planned.add(folder, Slot::Mission(d.missions.len()), &name);
            d.missions.push(MissionJob {
                output: PathBuf::new(),
                tma: file.to_path_buf(),
            });
        }
        Content::OtherNres => d.skipped.push(library_row(display, &data)),
        Content::ModelArchive => {
            if let Some(e) = archive_over_budget(budget, &data) {
                d.failed
                    .push(ReportRow::fail(display, "limits.work", e, 0.0));
                return;
            }
            let a = match nres::read(&data, nres::Mode::Tolerant) {
                Ok(a) => a,
                Err(e) => {
                    d.failed
                        .push(ReportRow::fail(display, e.rule, e.to_string(), 0.0));
                    return;
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
                let job = ModelJob::entry(file, i, source::decode_name(a.entries[i].name));
                planned.add_model(folder.clone(), &mut d.jobs, job);
            }
        }
    }
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

/// A discovered job whose output is named at the end of discovery.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// `Discovery::jobs[i]` (a model, an archive entry or a unit file).
    Model(usize),
    /// `Discovery::terrains[i]`.
    Map(usize),
    /// `Discovery::missions[i]`.
    Mission(usize),
}

/// The output names of every discovered job of every kind, per output
/// folder, in discovery order: collisions are resolved once every job is
/// known, by one rule for all kinds ([`unique_names`]: the first keeps its
/// name, later ones get `~2`, `~3`, ... ignoring case). Folders are
/// compared ignoring case too (`OUT/MAPS` and `OUT/maps` are one folder on
/// Windows and macOS).
struct PlannedNames(BTreeMap<String, Vec<(PathBuf, Slot, String)>>);

impl PlannedNames {
    fn new() -> Self {
        PlannedNames(BTreeMap::new())
    }

    /// Adds a job's output, named `name` (sanitised here) in `folder`.
    fn add(&mut self, folder: PathBuf, slot: Slot, name: &str) {
        let key = folder
            .components()
            .collect::<PathBuf>()
            .to_string_lossy()
            .to_lowercase();
        let name = sanitize_component(name);
        self.0.entry(key).or_default().push((folder, slot, name));
    }

    /// Adds `job` to `jobs`, its output to be named in `folder` after its stem.
    fn add_model(&mut self, folder: PathBuf, jobs: &mut Vec<ModelJob>, job: ModelJob) {
        self.add(folder, Slot::Model(jobs.len()), &job.stem);
        jobs.push(job);
    }

    /// Sets every job's output: `<folder>/<unique name>.<ext>`.
    fn assign(self, d: &mut Discovery, format: Format) {
        for list in self.0.into_values() {
            let names: Vec<String> = list.iter().map(|(_, _, n)| n.clone()).collect();
            for ((folder, slot, _), n) in list.into_iter().zip(unique_names(&names)) {
                let path = folder.join(format!("{n}.{}", format.ext()));
                match slot {
                    Slot::Model(i) => d.jobs[i].output = path,
                    Slot::Map(i) => d.terrains[i].output = path,
                    Slot::Mission(i) => d.missions[i].output = path,
                }
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

/// The batch driver: every kind's jobs of `d` through its pipeline
/// ([`Pipeline::run`]: each output claimed in `plan` first), in a fixed
/// order: model and unit files (in parallel on the current rayon pool,
/// [`crate::models`]), then maps ([`crate::terrain::batch`]), then
/// missions ([`crate::mission::pipeline`]); `progress` gets each row as it
/// is done. Returns the rows in that order (without `d`'s skipped and
/// failed rows).
///
/// A walk over several game folders runs them one after the other
/// ([`game_groups`]: each game's models, maps and missions), and after each
/// releases that game's shared inputs (part archives, registry, libraries:
/// [`crate::source::SharedFiles::release_under`]), so memory holds one
/// game's files at a time, not every game's (issue 28 item 1). With
/// `--textures-out` the run stays one group (its PNG names are unique
/// across the run).
pub fn run_discovered(
    d: &Discovery,
    opts: &BatchOptions,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    let groups = if opts.textures_out.is_some() {
        Vec::new()
    } else {
        game_groups(d)
    };
    if groups.len() <= 1 {
        return d
            .pipelines()
            .into_iter()
            .flat_map(|p| p.run(opts, plan, progress))
            .collect();
    }
    let mut by_kind: [Vec<ReportRow>; 3] = Default::default();
    for (folder, g) in &groups {
        for (rows, p) in by_kind.iter_mut().zip(g.pipelines()) {
            rows.extend(p.run(opts, plan, progress));
        }
        if let Some(folder) = folder {
            opts.files.release_under(folder);
        }
    }
    by_kind.into_iter().flatten().collect()
}

/// The jobs of `d` by game folder: the nearest folder at or above a job's
/// file that holds `objects.rlb`, `Material.lib` or `Textures.lib` (any
/// ASCII case, not a folder: [`crate::source::find_any_case`]; `None` for
/// a file under none), the groups in order of their
/// first job (models, then maps, then missions), each group's jobs in
/// `d`'s order.
pub fn game_groups(d: &Discovery) -> Vec<(Option<PathBuf>, Discovery)> {
    let mut games = GameFolders::default();
    let mut groups: Vec<(Option<PathBuf>, Discovery)> = Vec::new();
    let mut at = |games: &mut GameFolders, file: &Path| -> usize {
        let g = games.of(file);
        match groups.iter().position(|(f, _)| *f == g) {
            Some(i) => i,
            None => {
                groups.push((g, Discovery::default()));
                groups.len() - 1
            }
        }
    };
    let mut slots = Vec::new();
    for j in &d.jobs {
        slots.push((0, at(&mut games, &j.file)));
    }
    for j in &d.terrains {
        slots.push((1, at(&mut games, &j.msh)));
    }
    for j in &d.missions {
        slots.push((2, at(&mut games, &j.tma)));
    }
    let (mut m, mut t, mut n) = (d.jobs.iter(), d.terrains.iter(), d.missions.iter());
    for (kind, i) in slots {
        let g = &mut groups[i].1;
        match kind {
            0 => g.jobs.extend(m.next().cloned()),
            1 => g.terrains.extend(t.next().cloned()),
            _ => g.missions.extend(n.next().cloned()),
        }
    }
    groups
}

/// The game folder of each folder looked at ([`game_groups`]), cached.
#[derive(Default)]
struct GameFolders(std::collections::HashMap<PathBuf, Option<PathBuf>>);

impl GameFolders {
    /// The game folder of `file`: the nearest folder at or above its own
    /// holding a registry or a library.
    fn of(&mut self, file: &Path) -> Option<PathBuf> {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        self.folder(dir)
    }

    fn folder(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(hit) = self.0.get(dir) {
            return hit.clone();
        }
        const MARKERS: [&str; 3] = [
            crate::unit::assemble::REGISTRY,
            crate::material::library::MATERIAL_LIB,
            crate::material::library::TEXTURES_LIB,
        ];
        // One listing of `dir` for the three markers (any case, not a
        // folder); a folder that cannot be listed holds none.
        let holds = matches!(crate::source::find_any_case(dir, &MARKERS), Ok(Some(_)));
        let found = if holds {
            Some(dir.to_path_buf())
        } else {
            match dir.parent() {
                Some(up) if !up.as_os_str().is_empty() && !dir.ends_with("..") => self.folder(up),
                _ => None,
            }
        };
        self.0.insert(dir.to_path_buf(), found.clone());
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs are grouped by the nearest folder holding a registry or a
    /// library; groups keep the order of their first job, and jobs their
    /// order inside a group.
    #[test]
    fn jobs_are_grouped_by_game_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (g1, g2) = (dir.path().join("game1"), dir.path().join("game2"));
        for g in [&g1, &g2] {
            std::fs::create_dir_all(g.join("UNITS/A")).unwrap();
        }
        std::fs::write(g1.join("OBJECTS.RLB"), b"").unwrap();
        std::fs::write(g2.join("textures.lib"), b"").unwrap();
        let model = |f: &Path| ModelJob::whole_file(f, "x.msh", JobKind::Model, PathBuf::new());
        let d = Discovery {
            jobs: vec![
                model(&g1.join("a.msh")),
                model(&g2.join("UNITS/A/u.dat")),
                model(&dir.path().join("loose.msh")),
                model(&g1.join("UNITS/A/v.dat")),
            ],
            missions: vec![MissionJob {
                tma: g2.join("M/data.tma"),
                output: PathBuf::new(),
            }],
            ..Default::default()
        };
        let groups = game_groups(&d);
        let folders: Vec<Option<PathBuf>> = groups.iter().map(|(f, _)| f.clone()).collect();
        assert_eq!(folders[..2], [Some(g1.clone()), Some(g2.clone())]);
        assert_eq!(groups.len(), 3, "{folders:?}");
        let files =
            |g: &Discovery| -> Vec<PathBuf> { g.jobs.iter().map(|j| j.file.clone()).collect() };
        assert_eq!(
            files(&groups[0].1),
            [g1.join("a.msh"), g1.join("UNITS/A/v.dat")]
        );
        assert_eq!(files(&groups[1].1), [g2.join("UNITS/A/u.dat")]);
        assert_eq!(groups[1].1.missions, d.missions);
        assert_eq!(files(&groups[2].1), [dir.path().join("loose.msh")]);
    }
}
