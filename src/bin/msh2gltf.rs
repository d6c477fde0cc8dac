//! `msh2gltf`: convert Parkan: Iron Strategy MSH models to glTF 2.0.
//!
//! Exit codes: 0 everything converted (skips are fine), 1 a model failed
//! (the others were still converted), 2 usage or environment error.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use mshgltf::batch::{self, BatchOptions, Format, ModelJob, Report, ReportRow, Status};
use mshgltf::convention::{
    BatchLayout, ConventionChoices, NameSource, QuatLayout, TexmOrder, UvSign, WearKey,
};
use mshgltf::convert::ConvertOptions;
use mshgltf::gltf_export::{CellChoice, Up};
use mshgltf::msh::read::Mode;
use mshgltf::source::{self, FileKind, InputSpec};
use mshgltf::{nres, output};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum UpArg {
    /// glTF = (x, z, -y) of game coordinates (glTF's Y-up; Blender then shows game axes).
    Y,
    /// Game coordinates unchanged (Z-up inside the glTF).
    Z,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum QuatArg {
    /// Per model: the slot holding ±32767 in most static keys, then the Res2 box, else wxyz.
    Auto,
    /// Stored x, y, z, w (the seed's reading).
    Xyzw,
    /// Stored w, x, y, z (retail files).
    Wxyz,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum NamesArg {
    /// Res9 when it is 32 x nodes bytes with a name, else Res10.
    Auto,
    /// Res9 32-byte fields (retail; Res10 then holds labels).
    Res9,
    /// Res10 strings (seed).
    Res10,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BatchArg {
    /// Retail when every batch has +2 = 0 and +4 high byte 0x00/0xFF.
    Auto,
    /// Material key in the low byte of Batch20 +4, lightmap in the high byte.
    Retail,
    /// Material key in the u16 at Batch20 +2.
    Seed,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum WearKeyArg {
    /// By id when the WEAR ids are a permutation of 0..n, else by row.
    Auto,
    /// The WEAR id column (retail).
    Id,
    /// The row number (seed).
    Row,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum UvArg {
    /// Signed only when a triangle spans more than 0x8000 as u16 but not as i16.
    Auto,
    /// u16 / 1024 (retail).
    Unsigned,
    /// i16 / 1024 (seed).
    Signed,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TexmArg {
    /// 8888 B,G,R,A; 888 B,G,R,X; palettes B,G,R,X (real game files).
    Retail,
    /// 8888 A,R,G,B; 888 R,G,B,X; palettes R,G,B,A (the other public reading).
    Argb,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Binary glTF (one .glb per model).
    Glb,
    /// JSON .gltf with a .bin beside it.
    Gltf,
}

/// Convert Parkan: Iron Strategy MSH models (NRes) to glTF 2.0.
///
/// INPUT is a bare model file, an archive (every .msh entry is converted into
/// the OUTPUT folder), ARCHIVE:ENTRY (one model of an archive), or a game
/// folder (every model of every archive, with textures, into OUTPUT).
#[derive(Debug, Parser)]
#[command(name = "msh2gltf", version, about, long_about = None,
    after_help = "Examples:\n  msh2gltf model.msh out.glb\n  msh2gltf units.rlb:R_L_89.msh tank.gltf\n  msh2gltf units.rlb out/units\n  msh2gltf GAME_DIR OUT_DIR --jobs 2 --report report.json\n\nExit codes: 0 ok, 1 a model failed (the rest converted), 2 usage error.")]
struct Cli {
    /// Model file, archive, ARCHIVE:ENTRY, or game folder.
    input: String,
    /// Output .glb/.gltf (one model; default: beside the input) or folder
    /// (archive or game folder; default for an archive: <archive stem>/ beside it).
    output: Option<PathBuf>,
    /// Frames per second for key times (t = frame / fps).
    #[arg(long, default_value_t = 24.0)]
    fps: f32,
    /// Up axis of the glTF.
    #[arg(long, value_enum, default_value = "y")]
    up: UpArg,
    /// Where node names are (format-notes §6 R1).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    names: NamesArg,
    /// Where a batch's material key is (format-notes §6 R2).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    batch_layout: BatchArg,
    /// Which stored i16 of a Res8 quaternion is w (format-notes §6 R3).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    quat_layout: QuatArg,
    /// What a material key selects in the WEAR table (format-notes §6 R4).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    wear_key: WearKeyArg,
    /// How Res5 UVs are read (format-notes §6 R6).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    uv: UvArg,
    /// Byte order of Texm 8888/888/palette textures (format-notes §6 R8).
    #[arg(
        long,
        value_enum,
        default_value = "retail",
        help_heading = "Conventions"
    )]
    texm_order: TexmArg,
    /// Damage state of the slot cell each node shows (0 intact, 1 damaged, 2 destroyed).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
    state: u8,
    /// Level of the slot cell each node shows (0..3 LOD, 4 = cockpit view).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
    lod: u8,
    /// Add every non-empty cell as a child node <node>.S<state>L<lod>.
    #[arg(long)]
    all_cells: bool,
    /// Maps: add Land.map's navigation polygons as a node of outlines.
    #[arg(long)]
    areals: bool,
    /// Convert what is locally sound in broken models and report what was skipped.
    #[arg(long)]
    tolerant: bool,
    /// Replace existing output files.
    #[arg(long)]
    force: bool,
    /// Output format for archives and folders.
    #[arg(long, value_enum, default_value = "glb")]
    format: FormatArg,
    /// Folder holding Material.lib, Textures.lib and LightMap.lib; it wins
    /// over libraries beside the archive (default: beside the archive, then
    /// up the tree). The summary names the libraries used.
    #[arg(long, value_name = "DIR")]
    game_dir: Option<PathBuf>,
    /// Do not embed textures.
    #[arg(long)]
    no_textures: bool,
    /// Also write every texture and lightmap of the libraries found as PNG into DIR.
    #[arg(long, value_name = "DIR")]
    textures_out: Option<PathBuf>,
    /// Parallel jobs (default: all cores).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// Write a JSON report (per model: source, output, status, counts, warnings, errors, time).
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Work budget per model (units of about 32 bytes: animation samples x 2,
    /// glTF nodes x 32, primitives x 16, output bytes / 32; see README
    /// "Safety"); a model above it fails with rule `limits.work` before the
    /// work is done.
    #[arg(long, value_name = "UNITS", default_value_t = mshgltf::limits::DEFAULT_MAX_WORK)]
    max_work: u64,
    /// Print only errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Print warnings of every model.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Print the model entries of INPUT (an archive or a bare model) as JSON
    /// and convert nothing.
    #[arg(long, conflicts_with = "output")]
    list: bool,
}

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("msh2gltf: error: {e:#}");
            ExitCode::from(exit_code_of(&e))
        }
    }
}

/// Exit code of a run error: 1 for I/O failures and busy locks (the
/// environment failed), 2 for usage errors (README "Exit codes").
fn exit_code_of(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if let Some(o) = cause.downcast_ref::<output::OutputError>() {
            return if o.is_runtime() { 1 } else { 2 };
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            return match io.kind() {
                NotFound | InvalidInput => 2,
                _ => 1,
            };
        }
    }
    2
}

/// `--game-dir` must be an existing folder (a usage error naming it).
fn check_game_dir(cli: &Cli) -> Result<()> {
    if let Some(g) = &cli.game_dir {
        match std::fs::metadata(g) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("--game-dir {}: not a folder (it is a file)", g.display()),
            Err(e) => bail!("--game-dir {}: {e}", g.display()),
        }
    }
    Ok(())
}

fn convert_options(cli: &Cli) -> ConvertOptions {
    ConvertOptions {
        fps: cli.fps,
        up: match cli.up {
            UpArg::Y => Up::Y,
            UpArg::Z => Up::Z,
        },
        conventions: ConventionChoices {
            names: match cli.names {
                NamesArg::Auto => None,
                NamesArg::Res9 => Some(NameSource::Res9),
                NamesArg::Res10 => Some(NameSource::Res10),
            },
            batch: match cli.batch_layout {
                BatchArg::Auto => None,
                BatchArg::Retail => Some(BatchLayout::Retail),
                BatchArg::Seed => Some(BatchLayout::Seed),
            },
            quat: match cli.quat_layout {
                QuatArg::Auto => None,
                QuatArg::Xyzw => Some(QuatLayout::Xyzw),
                QuatArg::Wxyz => Some(QuatLayout::Wxyz),
            },
            wear_key: match cli.wear_key {
                WearKeyArg::Auto => None,
                WearKeyArg::Id => Some(WearKey::Id),
                WearKeyArg::Row => Some(WearKey::Row),
            },
            uv: match cli.uv {
                UvArg::Auto => None,
                UvArg::Unsigned => Some(UvSign::Unsigned),
                UvArg::Signed => Some(UvSign::Signed),
            },
        },
        cells: CellChoice {
            state: cli.state,
            lod: cli.lod,
            all_cells: cli.all_cells,
        },
        mode: if cli.tolerant {
            Mode::Tolerant
        } else {
            Mode::Strict
        },
        textures: !cli.no_textures,
        max_work: cli.max_work,
    }
}

/// The output file of a single model: OUTPUT (a folder gets `<stem>.glb`
/// inside), or `<stem>.glb` beside the input file.
fn single_output(cli: &Cli, beside: &Path, stem: &str) -> PathBuf {
    let name = format!("{}.glb", batch::sanitize_component(stem));
    match &cli.output {
        Some(o) if o.is_dir() => o.join(name),
        Some(o) => o.clone(),
        None => beside.parent().unwrap_or(Path::new(".")).join(name),
    }
}

/// Range checks of the numeric options (the same limits as gltf2msh's).
fn validate_options(cli: &Cli) -> Result<()> {
    if let Err(e) = mshgltf::limits::check_fps(cli.fps) {
        bail!("--fps: {e}");
    }
    if let Some(j) = cli.jobs {
        if let Err(e) = mshgltf::limits::check_jobs(j) {
            bail!("--jobs: {e}");
        }
    }
    if let Err(e) = mshgltf::limits::check_work(cli.max_work) {
        bail!("--max-work: {e}");
    }
    check_game_dir(cli)
}

/// The write plan of the run: every input, then the report (refused when
/// it is an input, exists without --force, or is not a regular file).
fn plan_run(cli: &Cli, jobs: &[ModelJob], opts: &BatchOptions) -> Result<output::WritePlan> {
    let mut plan = output::WritePlan::new(cli.force);
    let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) =
        source::parse_input(&cli.input);
    if p.is_dir() {
        for f in batch::all_files(&p).with_context(|| format!("cannot list {}", p.display()))? {
            plan.add_input(&f);
        }
    } else if p.is_file() {
        plan.add_input(&p);
    }
    for p in batch::input_files(jobs, opts) {
        plan.add_input(&p);
    }
    if let Some(r) = &cli.report {
        plan.claim(r)
            .map_err(|e| anyhow::anyhow!("--report: {e}"))?;
    }
    Ok(plan)
}

fn run(cli: &Cli) -> Result<u8> {
    validate_options(cli)?;
    if cli.list {
        return list_models(&cli.input);
    }
    let t0 = Instant::now();
    let format = match cli.format {
        FormatArg::Glb => Format::Glb,
        FormatArg::Gltf => Format::Gltf,
    };
    let opts = BatchOptions {
        convert: convert_options(cli),
        format,
        force: cli.force,
        game_dir: cli.game_dir.clone(),
        textures_out: cli.textures_out.clone(),
        texm_order: match cli.texm_order {
            TexmArg::Retail => TexmOrder::Retail,
            TexmArg::Argb => TexmOrder::Argb,
        },
    };
    let mut rows_pre: Vec<ReportRow> = Vec::new();
    let mut single = false;
    let mut terrain_jobs = Vec::new();
    let jobs: Vec<ModelJob> = match source::parse_input(&cli.input) {
        InputSpec::Entry { archive, entry } => {
            let bytes = source::read_regular(&archive, output::MAX_UPDATE_BYTES)
                .with_context(|| format!("cannot read {}", archive.display()))?;
            let a = nres::read(&bytes, nres::Mode::Tolerant)
                .map_err(|e| anyhow::anyhow!("{}: {e}", archive.display()))?;
            let i = match source::find_entry(&a, &entry) {
                Ok(i) => i,
                Err(e) => bail!("{}: {e}", archive.display()),
            };
            let name = source::decode_name(a.entries[i].name);
            let stem = source::stem_of(&name).to_string();
            let output = match &cli.output {
                Some(o) if o.is_dir() => {
                    o.join(format!("{}.glb", batch::sanitize_component(&stem)))
                }
                Some(o) => o.clone(),
                None => PathBuf::from(format!("{}.glb", batch::sanitize_component(&stem))),
            };
            single = true;
            vec![ModelJob {
                file: archive.clone(),
                entry: Some(i),
                entry_name: Some(name.clone()),
                source: format!("{}:{name}", archive.display()),
                stem,
                output,
            }]
        }
        InputSpec::File(path) => {
            if !path.exists() {
                bail!("{}: no such file or folder", path.display());
            }
            let mut unit_file = false;
            let kind = if path.is_dir() {
                None
            } else {
                let head = source::read_regular(&path, output::MAX_UPDATE_BYTES)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                unit_file = mshgltf::unit::assemble::is_unit_file(&head);
                Some(source::classify(&head))
            };
            match kind {
                // A bare model; also a .msh that is not a readable model, so
                // that the reader names the broken rule.
                Some(k)
                    if k == FileKind::Model
                        || (k == FileKind::NotNres && unit_file)
                        || (matches!(k, FileKind::NotNres | FileKind::OtherNres)
                            && source::is_msh_name(path.as_os_str().as_encoded_bytes())) =>
                {
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let stem = source::stem_of(&name).to_string();
                    single = true;
                    vec![ModelJob {
                        file: path.clone(),
                        entry: None,
                        entry_name: None,
                        source: path.display().to_string(),
                        output: single_output(cli, &path, &stem),
                        stem,
                    }]
                }
                Some(FileKind::ModelArchive) | None => {
                    let out = match &cli.output {
                        Some(o) => o.clone(),
                        None if path.is_dir() => {
                            bail!(
                                "a folder INPUT needs an OUTPUT folder: msh2gltf {} OUT_DIR",
                                path.display()
                            )
                        }
                        None => path.with_extension(""),
                    };
                    if out.exists() && !out.is_dir() {
                        bail!("{} exists and is not a folder", out.display());
                    }
                    let d = batch::discover(&path, &out, format)
                        .with_context(|| format!("cannot list {}", path.display()))?;
                    rows_pre.extend(d.skipped);
                    rows_pre.extend(d.failed);
                    terrain_jobs = d.terrains;
                    d.jobs
                }
                Some(FileKind::Terrain) => return run_terrain(cli, &path, &opts),
                Some(other) => {
                    let why = match other {
                        FileKind::Terrain => "terrain (Land.msh: types 11/14/21, no Res6/Res13)",
                        FileKind::Rsli => "an RsLi archive (fonts/sprites)",
                        FileKind::OtherNres => "an NRes library without models",
                        _ => "not an NRes container",
                    };
                    eprintln!("msh2gltf: {}: not a model: {why}", path.display());
                    return Ok(1);
                }
            }
        }
    };
    let mut plan = plan_run(cli, &jobs, &opts)?;
    if single {
        // A refused single output is a usage error (exit 2).
        let mut probe = plan.clone();
        if let Err(e) = batch::claim_job(&mut probe, &jobs[0], format) {
            bail!("{e}");
        }
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cli.jobs.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let interactive = std::io::stderr().is_terminal() && !cli.quiet && jobs.len() > 1;
    let bar = interactive.then(|| {
        let b = indicatif::ProgressBar::new(jobs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} models {msg}",
            )
            .expect("valid template"),
        );
        b
    });
    let print_lock = Mutex::new(());
    let verbose = cli.verbose;
    let quiet = cli.quiet;
    let progress = |r: &ReportRow| {
        let line = row_line(r, verbose > 0 || single);
        let _g = print_lock.lock();
        match &bar {
            Some(b) => {
                if r.status == Status::Failed || verbose > 0 {
                    b.println(line);
                }
                b.inc(1);
            }
            None if r.status == Status::Failed => eprintln!("{line}"),
            None if !quiet => eprintln!("{line}"),
            None => {}
        }
    };
    if !cli.quiet && !single {
        for r in &rows_pre {
            progress(r);
        }
    } else {
        for r in rows_pre.iter().filter(|r| r.status == Status::Failed) {
            eprintln!("{}", row_line(r, false));
        }
    }
    let mut rows = pool.install(|| batch::run_planned(&jobs, &opts, &mut plan, &progress));
    rows.extend(mshgltf::terrain::batch::run(
        &terrain_jobs,
        &opts,
        cli.areals,
        &mut plan,
        &progress,
    ));
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut all = rows_pre;
    all.extend(rows);
    let report = Report::from_rows(all, t0.elapsed().as_secs_f64());
    let mut code = if report.failed > 0 { 1 } else { 0 };
    if let Some(path) = &cli.report {
        if let Err(e) = write_report(path, &report, cli.force) {
            eprintln!("msh2gltf: error: --report {}: {e}", path.display());
            code = code.max(if e.is_runtime() { 1 } else { 2 });
        }
    }
    if !cli.quiet && !single {
        let mut libs: Vec<String> = report
            .models
            .iter()
            .filter(|r| r.status == Status::Converted)
            .map(ReportRow::libraries_text)
            .collect();
        libs.sort();
        libs.dedup();
        eprintln!(
            "summary: {} converted, {} skipped, {} failed in {:.2} s; libraries: {}",
            report.converted,
            report.skipped,
            report.failed,
            report.seconds,
            if libs.is_empty() {
                "-".into()
            } else {
                libs.join("; ")
            }
        );
    }
    Ok(code)
}

/// One map: Land.msh (recognised by its streams) and its siblings → glTF,
/// with a report row like the batch's.
fn run_terrain(cli: &Cli, msh: &Path, opts: &BatchOptions) -> Result<u8> {
    use mshgltf::terrain::batch::{self as tbatch, TerrainJob};
    let t0 = Instant::now();
    let stem = msh
        .parent()
        .and_then(|p| p.file_name())
        .map_or_else(|| "Land".to_string(), |n| n.to_string_lossy().into_owned());
    let job = TerrainJob {
        output: single_output(cli, msh, &stem),
        msh: msh.to_path_buf(),
    };
    let mut plan = output::WritePlan::new(cli.force);
    plan.add_input(msh);
    if let Some(dir) = msh.parent() {
        for f in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            plan.add_input(&f.path());
        }
    }
    if let Some(r) = &cli.report {
        plan.claim(r)
            .map_err(|e| anyhow::anyhow!("--report: {e}"))?;
    }
    let show = cli.verbose > 0 || cli.tolerant;
    let quiet = cli.quiet;
    let rows = tbatch::run(&[job], opts, cli.areals, &mut plan, &|r: &ReportRow| {
        if r.status == Status::Failed || !quiet {
            eprintln!("{}", row_line(r, show));
        }
    });
    let report = Report::from_rows(rows, t0.elapsed().as_secs_f64());
    if let Some(path) = &cli.report {
        write_report(path, &report, cli.force)
            .with_context(|| format!("--report {}", path.display()))?;
    }
    Ok(if report.failed > 0 { 1 } else { 0 })
}

/// Writes the `--report` JSON through its own write transaction.
fn write_report(path: &Path, report: &Report, force: bool) -> Result<(), output::OutputError> {
    let json = serde_json::to_vec_pretty(report).map_err(|e| output::OutputError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    let mut txn = output::Transaction::new(output::TxnOptions::from_env(force));
    txn.stage(path, json)?;
    txn.commit().map(|_| ())
}

/// `--list`: prints `{"file", "kind", "models": [{"name", "index", "bytes"}]}`
/// on stdout: the `.msh` entries of an archive in directory order, or the
/// file itself (`index` null) for a bare model. Other inputs are an error.
fn list_models(input: &str) -> Result<u8> {
    let path = Path::new(input);
    let bytes = source::read_regular(path, output::MAX_UPDATE_BYTES)
        .with_context(|| format!("cannot read {input}"))?;
    let (kind, models) = match source::classify(&bytes) {
        FileKind::Model => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let one = serde_json::json!({"name": name, "index": null, "bytes": bytes.len()});
            ("model", vec![one])
        }
        FileKind::ModelArchive => {
            let a = nres::read(&bytes, nres::Mode::Tolerant)
                .map_err(|e| anyhow::anyhow!("{input}: {e}"))?;
            let rows = source::model_entries(&a)
                .into_iter()
                .map(|i| {
                    let e = &a.entries[i];
                    serde_json::json!({"name": source::decode_name(e.name), "index": i, "bytes": e.data.len()})
                })
                .collect();
            ("archive", rows)
        }
        FileKind::Terrain => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let one = serde_json::json!({"name": name, "index": null, "bytes": bytes.len()});
            ("terrain", vec![one])
        }
        other => {
            eprintln!("msh2gltf: {input}: no models to list ({other:?})");
            return Ok(1);
        }
    };
    let json = serde_json::json!({"file": input, "kind": kind, "models": models});
    // A closed pipe (`| head`) ends the listing quietly.
    use std::io::Write;
    match writeln!(std::io::stdout().lock(), "{json}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write the listing"))
        }
        _ => Ok(0),
    }
}

/// One human-readable line (plus warnings when asked) for a report row.
fn row_line(r: &ReportRow, with_warnings: bool) -> String {
    let mut s = match r.status {
        Status::Converted => {
            let c = r.counts.clone().unwrap_or_default();
            format!(
                "converted {} -> {} ({} nodes, {} vertices, {} triangles, {} batches, {} animated nodes, {} frames, {} materials, {} textures; libraries: {}; {} conventions: {}){}",
                r.source,
                r.output.as_deref().unwrap_or("?"),
                c.nodes,
                c.vertices,
                c.triangles,
                c.batches,
                c.animated_nodes,
                c.frame_count,
                c.materials,
                c.textures,
                r.libraries_text(),
                r.conventions.as_ref().map_or("?", |d| d.label()),
                r.conventions.as_ref().map_or_else(String::new, |d| d.summary()),
                if r.warnings.is_empty() {
                    String::new()
                } else {
                    format!(", {} warning(s)", r.warnings.len())
                }
            )
        }
        Status::Skipped => format!(
            "skipped {}: {}",
            r.source,
            r.reason.as_deref().unwrap_or("")
        ),
        Status::Failed => format!("error: {}", r.errors.join("; ")),
    };
    if with_warnings {
        for w in &r.warnings {
            s.push_str(&format!("\n  warning: {w}"));
        }
    }
    s
}
