//! Missions file to file: `MISSIONS/<…>/data.tma` (or its folder) → one
//! `.glb` / `.gltf` scene ([`super::gltf::build`]) through the output
//! transaction, and the missions of a batch (`OUT/MISSIONS/<dir>.glb`, one
//! report row each, kind `mission`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::gltf::{self, MissionScene, SceneInput};
use super::validate::find_in_game;
use super::{tma, Mission, MissionError, Mode};
use crate::output::{Transaction, TxnOptions, WritePlan};
use crate::run::{self, BatchOptions, Counts, Format, ReportRow, Status};
use crate::unit::assemble::REGISTRY;

/// The name of a mission's binary file.
pub const TMA: &str = crate::source::MISSION_TMA;
/// The text files of a mission folder carried in the scene extras (§1.1).
pub const TEXT_FILES: [&str; 5] = [
    "mission.cfg",
    "briefing.cfg",
    "messages.cfg",
    "Mistips.mis",
    "descr",
];
/// Folders above `data.tma` searched for the game folder (`objects.rlb`):
/// `MISSIONS/CAMPAIGN/CAMPAIGN.01/Mission.01` is four deep.
pub const GAME_DEPTH: usize = 6;

/// One mission of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissionJob {
    /// Its `data.tma`.
    pub tma: PathBuf,
    /// Output file.
    pub output: PathBuf,
}

/// A mission read from its folder, with what the scene needs.
#[derive(Debug, Clone)]
pub struct MissionSource {
    /// `data.tma`'s path.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The mission.
    pub mission: Mission,
    /// Tolerant read findings.
    pub warnings: Vec<MissionError>,
    /// The game folder.
    pub game: PathBuf,
    /// The text files beside it (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
}

pub use crate::source::tma_in;

/// The game folder of a mission: `game_dir` when it holds `objects.rlb`,
/// else the nearest folder above `data.tma` that does (at most
/// [`GAME_DEPTH`] up).
pub fn game_of(tma: &Path, game_dir: Option<&Path>) -> Option<PathBuf> {
    game_of_with(tma, game_dir, &crate::source::SharedFiles::default())
}

/// [`game_of`] with `tma`'s folder resolved through the run's shared
/// inputs `files` (once per folder; issue 28 item 2).
pub fn game_of_with(
    tma: &Path,
    game_dir: Option<&Path>,
    files: &crate::source::SharedFiles,
) -> Option<PathBuf> {
    if let Some(g) = game_dir.filter(|g| find_in_game(g, REGISTRY).is_some()) {
        return Some(g.to_path_buf());
    }
    let mut dir = files.canonical_file(tma)?.parent()?.to_path_buf();
    for _ in 0..GAME_DEPTH {
        dir = dir.parent()?.to_path_buf();
        if find_in_game(&dir, REGISTRY).is_some() {
            return Some(dir);
        }
    }
    None
}

/// The text files beside `tma` ([`TEXT_FILES`], found as the loader finds
/// them), each counted against `budget` from its size before it is read
/// (issue 36 item 5); one that cannot be read is left out, as before.
///
/// # Errors
/// `limits.work` naming the file.
fn read_text_files(
    tma: &Path,
    budget: &mut crate::limits::Budget,
) -> Result<Vec<(String, Vec<u8>)>, MissionError> {
    let dir = tma.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for n in TEXT_FILES {
        let Some(p) = find_in_game(dir, n) else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        let per = crate::limits::MISSION_TEXT_BYTES_PER_UNIT;
        budget
            .spend_of(
                meta.len() / per,
                &format!("{n} of {} bytes", meta.len()),
                "the mission's",
            )
            .map_err(|d| MissionError::new("limits.work", Some(n.to_string()), d))?;
        // Read at most what was counted (and what the budget has left): a
        // file that grew meanwhile is not read past it.
        let left = (budget.max - budget.used).saturating_mul(per);
        let cap = crate::output::MAX_UPDATE_BYTES.min(meta.len().saturating_add(left));
        if let Ok(b) = crate::source::read_regular(&p, cap) {
            out.push((n.to_string(), b));
        }
    }
    Ok(out)
}

/// The text files beside `tma` ([`TEXT_FILES`]) that exist, found as the
/// loader finds them (any case): inputs of every run that reads the
/// mission (issue 36 item 1).
pub fn text_file_paths(tma: &Path) -> Vec<PathBuf> {
    let dir = tma.parent().unwrap_or(Path::new("."));
    TEXT_FILES
        .iter()
        .filter_map(|n| find_in_game(dir, n))
        .collect()
}

/// Every file the conversion of mission `tma` reads or lists, for the
/// run's write plan (issue 36 item 1): `data.tma`, the text files beside
/// it ([`TEXT_FILES`]), the game folder's archives and libraries
/// ([`run::game_files`], also of `opts.game_dir`), each building's and
/// unit's `.dat` the mission places and every file of its map's folder.
/// The mission is read (budgeted by `opts.convert.max_work`) to find them;
/// when it does not read (the run will fail it) only the files found
/// without it are returned.
pub fn input_files(tma: &Path, opts: &BatchOptions) -> Vec<PathBuf> {
    let mut files = vec![tma.to_path_buf()];
    files.extend(text_file_paths(tma));
    if let Some(g) = &opts.game_dir {
        files.extend(run::game_files(g));
    }
    let Some(game) = game_of_with(tma, opts.game_dir.as_deref(), &opts.files) else {
        return files;
    };
    files.extend(run::game_files(&game));
    let Ok(bytes) = crate::source::read_regular(tma, crate::output::MAX_UPDATE_BYTES) else {
        return files;
    };
    let mut budget = crate::limits::Budget::new(opts.convert.max_work);
    let Ok((m, _)) = tma::read_counted(&bytes, Mode::Tolerant, &mut budget) else {
        return files;
    };
    for o in m.objects.iter().filter(|o| o.is_owned()) {
        files.extend(find_in_game(&game, &o.path_text()));
    }
    let map = crate::source::decode_name(&m.map_path);
    let map_folder = super::validate::map_dir(&map).and_then(|d| find_in_game(&game, &d));
    if let Some(d) = map_folder {
        let listed = std::fs::read_dir(d).into_iter().flatten().flatten();
        files.extend(listed.map(|e| e.path()).filter(|p| p.is_file()));
    }
    files
}

impl MissionSource {
    /// Reads `tma` (§2, under `mode`) and the text files beside it, and
    /// finds the game folder.
    ///
    /// # Errors
    /// `io` (unreadable), the reader's `mission.*` rules,
    /// `mission.resolve` (no game folder with `objects.rlb`; an object's
    /// `.dat` path or the map path leaving the game folder,
    /// [`super::validate::confined`]); each names the file.
    pub fn load(
        tma: &Path,
        mode: Mode,
        game_dir: Option<&Path>,
    ) -> Result<MissionSource, MissionError> {
        let files = crate::source::SharedFiles::default();
        Self::load_with(tma, mode, game_dir, &files, crate::limits::DEFAULT_MAX_WORK)
    }

    /// [`MissionSource::load`] finding the game folder through the run's
    /// shared inputs `files` ([`game_of_with`]), with a work budget of
    /// `max_work` units for the mission's tables and text
    /// ([`tma::read_counted`]; each text file from its size before it is
    /// read, [`crate::limits::MISSION_TEXT_BYTES_PER_UNIT`]).
    ///
    /// # Errors
    /// As [`MissionSource::load`], and `limits.work` naming the record or
    /// the text file.
    pub fn load_with(
        tma: &Path,
        mode: Mode,
        game_dir: Option<&Path>,
        files: &crate::source::SharedFiles,
        max_work: u64,
    ) -> Result<MissionSource, MissionError> {
        let file = tma.display().to_string();
        let bytes =
            crate::source::read_regular(tma, crate::output::MAX_UPDATE_BYTES).map_err(|e| {
                MissionError::new("io", None, format!("cannot read: {e}")).in_file(&file)
            })?;
        let mut budget = crate::limits::Budget::new(max_work);
        let (mission, warnings) =
            tma::read_counted(&bytes, mode, &mut budget).map_err(|e| e.in_file(&file))?;
        // A path out of the game folder is never read, in either mode.
        if let Some(e) = super::validate::confined(&mission).into_iter().next() {
            return Err(e.in_file(&file));
        }
        let game = game_of_with(tma, game_dir, files).ok_or_else(|| {
            MissionError::new(
                "mission.resolve",
                None,
                format!("no {REGISTRY} in the {GAME_DEPTH} folders above it (pass --game-dir)"),
            )
            .in_file(&file)
        })?;
        let files = read_text_files(tma, &mut budget).map_err(|e| e.in_file(&file))?;
        Ok(MissionSource {
            path: tma.to_path_buf(),
            bytes,
            mission,
            warnings,
            game,
            files,
        })
    }

    /// The mission's name: its folder's name.
    pub fn name(&self) -> String {
        self.name_with(&crate::source::SharedFiles::default())
    }

    /// [`MissionSource::name`], `data.tma`'s folder resolved through the
    /// run's shared inputs `files`.
    fn name_with(&self, files: &crate::source::SharedFiles) -> String {
        files
            .canonical_file(&self.path)
            .and_then(|p| {
                p.parent()?
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "mission".into())
    }

    /// The scene of the mission ([`gltf::build`]).
    ///
    /// # Errors
    /// [`gltf::build`]'s, naming the file.
    pub fn scene(
        &self,
        libs: Option<&crate::material::Libraries>,
        opts: &crate::convert::ConvertOptions,
        shared: &crate::source::SharedFiles,
    ) -> Result<MissionScene, MissionError> {
        let sha: String = Sha256::digest(&self.bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let descr = self
            .files
            .iter()
            .find(|(n, _)| n == "descr")
            .map(|(_, b)| crate::source::decode_name(b).trim().to_string());
        let source = self.path.display().to_string();
        let input = SceneInput {
            mission: &self.mission,
            name: &self.name_with(shared),
            source: &source,
            sha256: &sha,
            game: &self.game,
            descr: descr.as_deref(),
            files: &self.files,
            shared,
        };
        let mut s = gltf::build(&input, libs, opts).map_err(|e| e.in_file(&source))?;
        let mut w: Vec<String> = self.warnings.iter().map(ToString::to_string).collect();
        w.append(&mut s.warnings);
        s.warnings = w;
        s.inputs.push(self.path.clone());
        Ok(s)
    }
}

/// The bytes of a scene: GLB, or `.gltf` JSON whose buffer is `bin_uri`.
///
/// # Errors
/// `gltf.json`; `gltf.size` (a GLB over 4 GiB).
pub fn encode(
    s: &MissionScene,
    bin_uri: Option<&str>,
) -> Result<(Vec<u8>, Option<Vec<u8>>), MissionError> {
    let json_err = |e: serde_json::Error| MissionError::new("gltf.json", None, e.to_string());
    match bin_uri {
        Some(uri) => {
            let mut j = s.json.clone();
            j["buffers"][0]["uri"] = serde_json::json!(uri);
            Ok((
                serde_json::to_vec_pretty(&j).map_err(json_err)?,
                Some(s.bin.clone()),
            ))
        }
        None => {
            let json = serde_json::to_vec(&s.json).map_err(json_err)?;
            let glb = crate::gltf_export::glb::frame(&json, &s.bin).map_err(|total| {
                MissionError::new(
                    "gltf.size",
                    None,
                    format!("GLB of {total} bytes exceeds 4 GiB"),
                )
            })?;
            Ok((glb, None))
        }
    }
}

/// Converts the mission `tma` into `out` (`.gltf` writes a `.bin` beside
/// it, anything else is GLB) in one transaction whose inputs are every file
/// read. Returns the scene (counts, warnings) and the libraries' files.
///
/// # Errors
/// [`MissionSource::load`]'s, [`MissionSource::scene`]'s, [`encode`]'s and
/// the transaction's `output.*` rules.
pub fn convert_file(
    tma: &Path,
    out: &Path,
    opts: &BatchOptions,
) -> Result<(MissionScene, Vec<PathBuf>), MissionError> {
    let mode = match opts.convert.mode {
        crate::msh::read::Mode::Tolerant => Mode::Tolerant,
        _ => Mode::Strict,
    };
    let game_dir = opts.game_dir.as_deref();
    let max_work = opts.convert.max_work;
    let src = MissionSource::load_with(tma, mode, game_dir, &opts.files, max_work)?;
    let lookup_at = opts.game_dir.clone().unwrap_or_else(|| src.game.clone());
    let (libs, lib_warnings) =
        crate::terrain::convert::libraries_shared(&lookup_at, None, opts.texm_order, &opts.files);
    let mut s = src.scene(libs.as_deref(), &opts.convert, &opts.files)?;
    s.warnings.splice(0..0, lib_warnings);
    let lib_files = libs.as_ref().map(|l| l.files()).unwrap_or_default();
    let file = out.display().to_string();
    let out_err = |e: crate::output::OutputError| {
        MissionError::new(e.rule(), None, e.to_string()).in_file(&file)
    };
    let is_gltf = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    let mut txn = Transaction::new(TxnOptions::from_env(opts.force));
    for p in s.inputs.iter().chain(&lib_files) {
        txn.add_input(p);
    }
    for p in input_files(tma, opts) {
        txn.add_input(&p);
    }
    if is_gltf {
        let bin_path = out.with_extension("bin");
        let uri = bin_path.file_name().map_or_else(
            || "mission.bin".into(),
            |n| n.to_string_lossy().into_owned(),
        );
        let (json, bin) = encode(&s, Some(&uri)).map_err(|e| e.in_file(&file))?;
        txn.stage(&bin_path, bin.unwrap_or_default())
            .map_err(out_err)?;
        txn.stage(out, json).map_err(out_err)?;
    } else {
        let (glb, _) = encode(&s, None).map_err(|e| e.in_file(&file))?;
        txn.stage(out, glb).map_err(out_err)?;
    }
    txn.commit().map_err(out_err)?;
    Ok((s, lib_files))
}

/// The files mission job `j` writes: its output, and the `.bin` beside a
/// `.gltf`.
pub fn outputs(j: &MissionJob) -> Vec<PathBuf> {
    run::outputs_of(&j.output, Format::Glb)
}

run::pipeline_of_jobs!(MissionJob, "mission", run);

/// The mission pipeline of a run: each job converted (one by one: a
/// mission converts its models in turn) after claiming its outputs in
/// `plan`; one row per mission (kind `mission`), given to `progress` as it
/// is done.
pub fn run(
    jobs: &[MissionJob],
    opts: &BatchOptions,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    let mut rows = Vec::with_capacity(jobs.len());
    for j in jobs {
        let t0 = Instant::now();
        let source = j.tma.display().to_string();
        let mut r = ReportRow {
            kind: Some("mission".into()),
            ..ReportRow::new(source.clone(), Status::Converted)
        };
        // Everything the mission reads is an input before its output is
        // claimed (issue 36 item 1).
        for p in input_files(&j.tma, opts) {
            plan.add_input(&p);
        }
        let mut result = plan
            .claim_all(&outputs(j))
            .map_err(|e| MissionError::new(e.rule(), None, e.to_string()))
            .and_then(|()| convert_file(&j.tma, &j.output, opts));
        let meanwhile = |e: &MissionError| run::appeared_meanwhile(e.rule, &e.detail);
        if opts.force && result.as_ref().err().is_some_and(meanwhile) {
            // Another run created the output after the check: --force
            // replaces it (issue 26 item 11).
            result = convert_file(&j.tma, &j.output, opts);
        }
        match result {
            Ok((s, libs)) => {
                r.output = Some(j.output.display().to_string());
                r.libraries = libs.iter().map(|p| p.display().to_string()).collect();
                r.warnings = s.warnings;
                r.notes = vec![format!(
                    "{} placed objects, {} models, {} meshes shared by {} mesh nodes",
                    s.counts.placed, s.counts.models, s.counts.meshes, s.counts.placed_mesh_nodes
                )];
                r.counts = Some(Counts {
                    nodes: s.counts.nodes,
                    triangles: s.counts.terrain_triangles,
                    materials: s.counts.materials,
                    textures: s.counts.textures,
                    ..Default::default()
                });
            }
            Err(e) if meanwhile(&e) => {
                // Created by a concurrent run again: kept, as for models.
                r.status = Status::Skipped;
                r.kind = Some("exists".into());
                r.reason = Some(e.detail);
                r.output = Some(j.output.display().to_string());
            }
            Err(e) => {
                r.status = Status::Failed;
                r.errors = vec![e.to_string()];
                r.rule = Some(e.rule.to_string());
            }
        }
        r.time_ms = t0.elapsed().as_secs_f64() * 1000.0;
        progress(&r);
        rows.push(r);
    }
    rows
}
