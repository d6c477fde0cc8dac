//! `gltf2msh`: write a glTF 2.0 scene back into a Parkan: Iron Strategy MSH
//! model, losslessly against a base model (gltf-mapping.md, "Reverse rules"),
//! or author a new model and its WEAR table from any glTF scene (no `--base`;
//! see `mshgltf::gltf_import::author`).
//!
//! Exit codes: 0 ok, 1 conversion error (mismatch, invalid result, unreadable
//! glTF), 2 usage or environment error (missing files, refused output).

use mshgltf::convention::TexmOrder;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use mshgltf::gltf_import::{self, AuthorOptions, ImportOptions};
use mshgltf::material::write::{add_entries, LibraryEdit};
use mshgltf::msh;
use mshgltf::source::{self, FileKind, InputSpec};
use mshgltf::{nres, output};

/// Write a glTF (.glb/.gltf) into an MSH model.
///
/// With --base, every value the glTF leaves as msh2gltf exported it keeps the
/// base's bytes, so an unedited trip is byte-identical; edits are quantized
/// by the seed rules and derived data (bounds, Res7, Res8/Res19) is rebuilt.
/// Without --base, a new model is authored from the scene: the bare model
/// and its WEAR table NEW.wea beside it, or with --into both as entries of an
/// archive.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, about, long_about = None,
    after_help = "Examples:\n  gltf2msh tank.glb --base tank.msh            (writes tank.msh beside tank.glb unless that is the base)\n  gltf2msh tank.glb --base tank.msh -o tank2.msh\n  gltf2msh tank.glb --base units.rlb:R_L_89.msh -o units_new.rlb   (archive copy, one entry replaced)\n  gltf2msh scene.glb -o NEW.msh                 (new model: NEW.msh and NEW.wea)\n  gltf2msh scene.glb --into units.rlb --name NEW -o units_new.rlb   (archive copy with NEW.msh and NEW.wea)\n  gltf2msh scene.glb --into units.rlb --name NEW --force             (replaces units.rlb in place)\n  gltf2msh scene.glb -o out/NEW.msh --game-dir GAME   (also out/Material.lib, out/Textures.lib: copies with the new materials and textures)\n\nExit codes: 0 ok, 1 conversion error (including glTF content MSH cannot hold: skins, morph targets, points, lines), 2 usage error.")]
struct Cli {
    /// The edited glTF: .glb, or .gltf with its buffers.
    input: PathBuf,
    /// The model the glTF was exported from: a .msh file or ARCHIVE:ENTRY.
    #[arg(long)]
    base: Option<String>,
    /// Output: a .msh (bare model; authoring also writes the .wea beside it)
    /// or, with an ARCHIVE:ENTRY base or --into, an archive. Default: the
    /// input's name with .msh, beside it (with --into: the archive itself,
    /// which needs --force).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Frames per second of the glTF timeline (default: the scene extras' fps, else 24).
    #[arg(long)]
    fps: Option<f32>,
    /// Replace an existing output file (never the base or the input).
    #[arg(long)]
    force: bool,
    /// Keep every integer-frame key (reduce only resampled channels).
    #[arg(long)]
    keep_keys: bool,
    /// Print nothing but errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Print every warning and the change summary.
    #[arg(short, long)]
    verbose: bool,
    /// Authoring: add the new model to a copy of this archive (entries
    /// NAME.msh and NAME.wea, replacing existing ones); the copy is -o, or the
    /// archive itself with --force.
    #[arg(long, value_name = "ARCHIVE", conflicts_with = "base")]
    into: Option<PathBuf>,
    /// Authoring with --into: the entry stem (default: the input's stem).
    #[arg(long, requires = "into")]
    name: Option<String>,
    /// Authoring: convert skinned meshes in their bind pose and morphed
    /// meshes with their base shape instead of refusing them.
    #[arg(long, conflicts_with = "base")]
    ignore_skins: bool,
    /// Authoring: also write the new materials (MAT0), textures and lightmap
    /// (Texm) into copies of this folder's Material.lib, Textures.lib and
    /// LightMap.lib, beside the output (or into the originals with --in-place).
    #[arg(long, value_name = "GAME", conflicts_with = "base")]
    game_dir: Option<PathBuf>,
    /// With --game-dir: change the game's libraries themselves.
    #[arg(long, requires = "game_dir")]
    in_place: bool,
    /// With --game-dir: texture depth: auto (565 opaque, 8888 with alpha),
    /// 16 (565 / 4444) or 32 (8888).
    #[arg(long, value_name = "auto|16|32", default_value = "auto", value_parser = ["auto", "16", "32"])]
    texture_bits: String,
    /// With --game-dir: largest texture side (rounded up to a power of two).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_texture: u32,
    /// With --game-dir: byte order of 8888 textures: retail (B, G, R, A) or
    /// argb (A, R, G, B).
    #[arg(long, value_name = "retail|argb", default_value = "retail", value_parser = ["retail", "argb"])]
    texm_order: String,
    /// Authoring: fit a scene over 65535 triangles under the limit with
    /// meshoptimizer (reports the error) instead of refusing it.
    #[arg(long, conflicts_with = "base")]
    simplify: bool,
    /// Write a JSON report of the import to this file.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Also read buffer URIs that are absolute or lead outside the glTF's
    /// folder (they are refused by default).
    #[arg(long)]
    allow_outside: bool,
    /// Work budget (units, see README "Safety"): nodes x 32 + primitive
    /// instances x 64, and JSON bytes / 2; a glTF above it fails with rule
    /// `limits.work` before its data is read.
    #[arg(long, value_name = "UNITS", default_value_t = mshgltf::limits::DEFAULT_MAX_WORK)]
    max_work: u64,
}

/// Range checks of the numeric options (the same limits as msh2gltf's).
fn validate_options(cli: &Cli) -> Result<(), Fail> {
    if let Some(f) = cli.fps {
        mshgltf::limits::check_fps(f).map_err(|e| usage(format!("--fps: {e}")))?;
    }
    mshgltf::limits::check_work(cli.max_work).map_err(|e| usage(format!("--max-work: {e}")))?;
    Ok(())
}

/// The write plan of the run: the inputs (glTF, base or --into archive),
/// then the report (refused when it is an input, exists without --force, or
/// is not a regular file).
fn plan_run(cli: &Cli) -> Result<output::WritePlan, Fail> {
    let mut plan = output::WritePlan::new(cli.force);
    plan.add_input(&cli.input);
    if let Some(b) = cli.base.as_deref() {
        let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) = source::parse_input(b);
        plan.add_input(&p);
    }
    if let Some(a) = &cli.into {
        plan.add_input(a);
    }
    if let Some(r) = &cli.report {
        plan.claim(r).map_err(|e| usage(format!("--report: {e}")))?;
    }
    Ok(plan)
}

/// Loads the glTF (URIs confined unless --allow-outside) and records the
/// external files it read as inputs of the run.
fn load_doc(
    cli: &Cli,
    plan: &mut output::WritePlan,
) -> Result<(gltf_import::GltfFile, Vec<PathBuf>), Fail> {
    let read = gltf_import::ReadOptions {
        allow_outside: cli.allow_outside,
        max_work: cli.max_work,
    };
    let (doc, files) = gltf_import::load_path_with(&cli.input, &read)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    for f in &files {
        plan.add_input(f);
    }
    gltf_import::budget::check_scene(&doc, cli.max_work, cli.simplify)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    Ok((doc, files))
}

/// Claims an output in the plan, and checks that no file the glTF read
/// is among the outputs claimed so far.
fn claim(plan: &mut output::WritePlan, p: &Path, hint: &str) -> Result<(), Fail> {
    plan.claim(p).map_err(|e| {
        let h = match e {
            output::OutputError::IsInput(_) | output::OutputError::Collision(..) => hint,
            _ => "",
        };
        usage(format!("{e}{h}"))
    })
}

/// A failure with its exit code.
struct Fail {
    code: u8,
    msg: String,
}

fn usage(msg: impl Into<String>) -> Fail {
    Fail {
        code: 2,
        msg: msg.into(),
    }
}

fn conversion(msg: impl Into<String>) -> Fail {
    Fail {
        code: 1,
        msg: msg.into(),
    }
}

/// Where the base model lives.
enum Base {
    /// A bare model file.
    File(PathBuf, Vec<u8>),
    /// An archive entry: archive path, archive bytes, entry index, model bytes.
    Entry(PathBuf, Vec<u8>, usize, Vec<u8>),
}

impl Base {
    fn path(&self) -> &Path {
        match self {
            Base::File(p, _) | Base::Entry(p, _, _, _) => p,
        }
    }
}

fn load_base(spec: &str) -> Result<Base, Fail> {
    match source::parse_input(spec) {
        InputSpec::File(p) => {
            let bytes =
                std::fs::read(&p).map_err(|e| usage(format!("base {}: {e}", p.display())))?;
            match source::classify(&bytes) {
                FileKind::Model => Ok(Base::File(p, bytes)),
                FileKind::ModelArchive => Err(usage(format!(
                    "base {} is an archive: name the model as ARCHIVE:ENTRY (e.g. {}:MODEL.msh)",
                    p.display(),
                    p.display()
                ))),
                k => Err(usage(format!(
                    "base {} is not an MSH model ({k:?})",
                    p.display()
                ))),
            }
        }
        InputSpec::Entry { archive, entry } => {
            let bytes = std::fs::read(&archive)
                .map_err(|e| usage(format!("base archive {}: {e}", archive.display())))?;
            let a = nres::read(&bytes, nres::Mode::Strict)
                .map_err(|e| conversion(format!("base archive {}: {e}", archive.display())))?;
            let i = source::find_entry(&a, &entry)
                .map_err(|e| usage(format!("base archive {}: {e}", archive.display())))?;
            let model = a.entries[i].data.to_vec();
            Ok(Base::Entry(archive, bytes, i, model))
        }
    }
}

fn run(cli: &Cli, plan: &mut output::WritePlan) -> Result<serde_json::Value, Fail> {
    validate_options(cli)?;
    let Some(base_spec) = cli.base.as_deref() else {
        return run_author(cli, plan);
    };
    if !cli.input.is_file() {
        return Err(usage(format!("input {} not found", cli.input.display())));
    }
    if let InputSpec::File(p) = source::parse_input(base_spec) {
        let head = std::fs::read(&p).map_err(|e| usage(format!("base {}: {e}", p.display())))?;
        if source::classify(&head) == FileKind::Terrain {
            return run_terrain(cli, plan, &p, &head);
        }
    }
    let base = load_base(base_spec)?;
    let base_bytes: &[u8] = match &base {
        Base::File(_, b) | Base::Entry(_, _, _, b) => b,
    };
    let out = cli
        .output
        .clone()
        .unwrap_or_else(|| cli.input.with_extension("msh"));
    plan.add_input(base.path());
    let (doc, _) = load_doc(cli, plan)?;
    let hint = if cli.output.is_none() {
        " (the default output is the input's name with .msh; give another one with -o)"
    } else {
        " (choose another output with -o)"
    };
    claim(plan, &out, hint)?;
    let decoded = msh::decode(base_bytes, msh::Mode::Strict)
        .map_err(|e| conversion(format!("base {base_spec}: {e}")))?;
    let opts = ImportOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
    };
    let imp = gltf_import::import_with_base(&doc, &decoded.model, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let model_bytes = msh::encode(&imp.model)
        .map_err(|e| conversion(format!("the edited model is invalid: {e}")))?;
    let bare = out
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("msh"));
    let bytes = match &base {
        Base::Entry(_, archive, i, _) if !bare => {
            let a =
                nres::read(archive, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
            let mut entries = a.entries.clone();
            entries[*i].data = &model_bytes;
            nres::write(&entries).map_err(|e| conversion(format!("archive: {e}")))?
        }
        _ => model_bytes,
    };
    output::write_files(&[(&out, &bytes)], cli.force).map_err(|e| usage(e.to_string()))?;
    if !cli.quiet {
        let r = &imp.report;
        let what = if r.unchanged {
            "unchanged".to_string()
        } else {
            format!(
                "{} moved vertices, {} new vertices, slots changed {:?}, rebuilt {:?}, tracks changed {:?}",
                r.moved_vertices, r.new_vertices, r.changed_slots, r.rebuilt_slots, r.changed_tracks
            )
        };
        eprintln!(
            "gltf2msh: wrote {} ({} bytes; {what})",
            out.display(),
            bytes.len()
        );
        if cli.verbose {
            eprintln!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
        } else if !r.warnings.is_empty() {
            eprintln!("gltf2msh: {} warning(s) (-v to list)", r.warnings.len());
        }
    }
    Ok(serde_json::to_value(&imp.report).unwrap_or_default())
}

/// `--base Land.msh`: a map (recognised by its streams) rebuilt with the
/// glTF's edits (terrain-notes §4.6).
fn run_terrain(
    cli: &Cli,
    plan: &mut output::WritePlan,
    base_path: &Path,
    base_bytes: &[u8],
) -> Result<serde_json::Value, Fail> {
    use mshgltf::terrain;
    let out = cli
        .output
        .clone()
        .unwrap_or_else(|| cli.input.with_extension("msh"));
    plan.add_input(base_path);
    let (doc, _) = load_doc(cli, plan)?;
    claim(plan, &out, " (choose another output with -o)")?;
    let base = terrain::read::decode(base_bytes)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    let (land, rep) = terrain::import::import_with_base(&doc, &base)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let bytes = terrain::write::encode(&land)
        .map_err(|e| conversion(format!("the edited map is invalid: {e}")))?;
    output::write_files(&[(&out, &bytes)], cli.force).map_err(|e| usage(e.to_string()))?;
    if !cli.quiet {
        let what = if rep.unchanged {
            "unchanged".to_string()
        } else {
            format!(
                "{} moved vertices, {} repainted faces, {} alpha and {} UV edits, squares rebuilt {:?}",
                rep.moved_vertices, rep.repainted_faces, rep.alpha_changed, rep.uv_changed, rep.changed_squares
            )
        };
        eprintln!(
            "gltf2msh: wrote {} ({} bytes; {what})",
            out.display(),
            bytes.len()
        );
        for w in &rep.warnings {
            eprintln!("gltf2msh: warning: {w}");
        }
    }
    Ok(serde_json::to_value(&rep).unwrap_or_default())
}

/// Most bytes of an NRes entry name (format-notes §1: 36 with the NUL).
const MAX_ENTRY_NAME: usize = 35;

fn run_author(cli: &Cli, plan: &mut output::WritePlan) -> Result<serde_json::Value, Fail> {
    if !cli.input.is_file() {
        return Err(usage(format!("input {} not found", cli.input.display())));
    }
    let (doc, buffers) = load_doc(cli, plan)?;
    // Where to write, checked before any work.
    let input_stem = cli
        .input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "MODEL".into());
    let (out, wea_out, archive) = match &cli.into {
        Some(a) => {
            let bytes =
                std::fs::read(a).map_err(|e| usage(format!("archive {}: {e}", a.display())))?;
            nres::read(&bytes, nres::Mode::Strict)
                .map_err(|e| conversion(format!("archive {}: {e}", a.display())))?;
            let out = cli.output.clone().unwrap_or_else(|| a.clone());
            let in_place = output::same_file(&out, a);
            if in_place && !cli.force {
                return Err(usage(format!(
                    "--into {} without -o replaces the archive in place: add --force, or give the new archive with -o",
                    a.display()
                )));
            }
            if !in_place {
                claim(plan, &out, " (choose another output with -o)")?;
            } else if output::same_file(&out, &cli.input)
                || buffers.iter().any(|b| output::same_file(b, &out))
            {
                return Err(usage("the archive is the input glTF or one of its buffers"));
            }
            (out, None, Some(bytes))
        }
        None => {
            let out = cli
                .output
                .clone()
                .unwrap_or_else(|| cli.input.with_extension("msh"));
            let wea = out.with_extension("wea");
            for p in [&out, &wea] {
                claim(plan, p, " (choose another output with -o)")?;
            }
            (out, Some(wea), None)
        }
    };
    let stem = match &cli.name {
        Some(n) => source::stem_of(n)
            .strip_suffix(".msh")
            .unwrap_or(source::stem_of(n))
            .to_string(),
        None => input_stem,
    };
    let (stem_bytes, _, bad) = encoding_rs::WINDOWS_1251.encode(&stem);
    if bad
        || stem.is_empty()
        || stem_bytes.len() + 4 > MAX_ENTRY_NAME
        || stem.contains(['/', '\\', '\0'])
    {
        return Err(usage(format!(
            "entry name {stem:?}: must be 1..={} Windows-1251 bytes before .msh (give one with --name)",
            MAX_ENTRY_NAME - 4
        )));
    }
    let opts = AuthorOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
        ignore_skins: cli.ignore_skins,
        simplify: cli.simplify,
        max_work: cli.max_work,
    };
    let a = gltf_import::author(&doc, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let model_bytes =
        msh::encode(&a.model).map_err(|e| conversion(format!("the new model is invalid: {e}")))?;
    // Strict re-read of what will be written.
    msh::decode(&model_bytes, msh::Mode::Strict)
        .map_err(|e| conversion(format!("the new model does not read back: {e}")))?;
    let mut lib_warnings: Vec<String> = Vec::new();
    let wear_bytes = a
        .wear
        .to_bytes()
        .map_err(|e| conversion(format!("WEAR table: {e}")))?;
    let mut written = Vec::new();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut lib_report = Vec::new();
    let libs = match &cli.game_dir {
        Some(g) => author_libraries(cli, g, &doc, &a, &out, &mut lib_warnings)?,
        None => Vec::new(),
    };
    match archive {
        Some(arch) => {
            let ar =
                nres::read(&arch, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
            let msh_name = format!("{stem}.msh");
            let wea_name = format!("{stem}.wea");
            let msh_nb = encoding_rs::WINDOWS_1251.encode(&msh_name).0.into_owned();
            let wea_nb = encoding_rs::WINDOWS_1251.encode(&wea_name).0.into_owned();
            // The type and attributes the archive's other entries of that kind use.
            let like = |pred: &dyn Fn(&nres::Entry<'_>) -> bool, default: (u32, u32, u32, u32)| {
                let mut counts: Vec<((u32, u32, u32, u32), usize)> = Vec::new();
                for e in ar.entries.iter().filter(|e| pred(e)) {
                    let k = (e.type_id, e.attr1, e.attr2, e.attr3);
                    match counts.iter_mut().find(|c| c.0 == k) {
                        Some(c) => c.1 += 1,
                        None => counts.push((k, 1)),
                    }
                }
                counts.iter().max_by_key(|c| c.1).map_or(default, |c| c.0)
            };
            let mt = like(&|e| source::is_msh_name(e.name), (0, 0, 0, 0));
            let wt = like(
                &|e| e.type_id == source::WEAR_TYPE,
                (source::WEAR_TYPE, 0, 0, 1),
            );
            let mut entries: Vec<nres::Entry<'_>> = ar
                .entries
                .iter()
                .filter(|e| {
                    !e.name.eq_ignore_ascii_case(&msh_nb) && !e.name.eq_ignore_ascii_case(&wea_nb)
                })
                .cloned()
                .collect();
            let replaced = ar.entries.len() - entries.len();
            for (name, t, data) in [(&msh_nb, mt, &model_bytes), (&wea_nb, wt, &wear_bytes)] {
                entries.push(nres::Entry {
                    type_id: t.0,
                    attr1: t.1,
                    attr2: t.2,
                    attr3: t.3,
                    name,
                    data,
                });
            }
            let bytes = nres::write(&entries).map_err(|e| conversion(format!("archive: {e}")))?;
            files.push((out.clone(), bytes));
            written.push(format!(
                "{} (entries {msh_name}, {wea_name}{})",
                out.display(),
                if replaced > 0 {
                    ", replacing the old ones"
                } else {
                    ""
                }
            ));
        }
        None => {
            let wea = wea_out.unwrap_or_else(|| out.with_extension("wea"));
            files.push((out.clone(), model_bytes.clone()));
            files.push((wea.clone(), wear_bytes.clone()));
            written.push(out.display().to_string());
            written.push(wea.display().to_string());
        }
    }
    for (path, bytes, edit) in libs {
        written.push(format!(
            "{} (+{} entries{})",
            path.display(),
            edit.added.len(),
            if edit.replaced.is_empty() {
                String::new()
            } else {
                format!(", replaced {}", edit.replaced.join(", "))
            }
        ));
        lib_report.push(serde_json::json!({"path": path, "added": edit.added, "replaced": edit.replaced, "kept": edit.kept}));
        files.push((path, bytes));
    }
    let pairs: Vec<(&Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    // Existence was checked above; --in-place replaces the libraries.
    output::write_files(&pairs, cli.force || cli.in_place).map_err(|e| usage(e.to_string()))?;
    let r = &a.report;
    if !cli.quiet {
        eprintln!(
            "gltf2msh: wrote {} ({} nodes, {} slots, {} batches, {} vertices, {} triangles, {} keys over {} frames, {} materials)",
            written.join(" and "),
            r.nodes,
            r.slots,
            r.batches,
            r.vertices,
            r.triangles,
            r.keys,
            r.frame_count,
            r.materials.len()
        );
        for s in &r.sheared_nodes {
            eprintln!(
                "gltf2msh: warning: Res1 node {} {:?} shears over time (a rotation under a non-uniform parent scale); MSH nodes are rigid: largest vertex error {:.4} at frame {}",
                s.node, s.name, s.max_vertex_error, s.frame
            );
        }
        if let Some(s) = &r.simplified {
            eprintln!(
                "gltf2msh: simplified {} -> {} triangles (largest error {:.6} units)",
                s.from, s.to, s.max_error
            );
        }
        for rn in &r.renamed_materials {
            eprintln!(
                "gltf2msh: material {} {:?} renamed {:?}",
                rn.row, rn.from, rn.to
            );
        }
        if cli.verbose {
            eprintln!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
            for w in &lib_warnings {
                eprintln!("gltf2msh: warning: {w}");
            }
        } else if !r.warnings.is_empty() || !lib_warnings.is_empty() {
            eprintln!(
                "gltf2msh: {} warning(s) (-v to list)",
                r.warnings.len() + lib_warnings.len()
            );
        }
    }
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if cli.game_dir.is_some() {
        v["libraries"] = serde_json::json!(lib_report);
        v["library_warnings"] = serde_json::json!(lib_warnings);
    }
    Ok(v)
}

/// The file `name` in `dir`, matched case-insensitively.
fn find_in(dir: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        e.file_name()
            .to_string_lossy()
            .eq_ignore_ascii_case(name)
            .then(|| e.path())
    })
}

/// `--game-dir`: the new Material.lib and Textures.lib (path, bytes, edit).
fn author_libraries(
    cli: &Cli,
    game: &Path,
    doc: &gltf_import::GltfFile,
    a: &gltf_import::Authored,
    out: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<(PathBuf, Vec<u8>, LibraryEdit)>, Fail> {
    use mshgltf::gltf_import::materials::{self, TextureBits, TextureOptions};
    use mshgltf::material::library::{LIGHTMAP_LIB, MATERIAL_LIB, TEXTURES_LIB};
    if !game.is_dir() {
        return Err(usage(format!(
            "--game-dir {}: not a folder",
            game.display()
        )));
    }
    let opts = TextureOptions {
        bits: match cli.texture_bits.as_str() {
            "16" => TextureBits::Sixteen,
            "32" => TextureBits::ThirtyTwo,
            _ => TextureBits::Auto,
        },
        max_size: cli.max_texture.clamp(1, 1 << 15),
        order: if cli.texm_order == "argb" {
            TexmOrder::Argb
        } else {
            TexmOrder::Retail
        },
        max_work: cli.max_work,
    };
    let content = materials::library_content(doc, cli.input.parent(), &a.wear, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    warnings.extend(content.warnings.iter().cloned());
    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut res = Vec::new();
    for (file, entries) in [
        (MATERIAL_LIB, content.material_entries()),
        (TEXTURES_LIB, content.texture_entries()),
        (LIGHTMAP_LIB, content.lightmap_entries()),
    ] {
        let src = find_in(game, file);
        let target = if cli.in_place {
            src.clone().unwrap_or_else(|| game.join(file))
        } else {
            let t = find_in(&out_dir, file).unwrap_or_else(|| out_dir.join(file));
            if src.as_ref().is_some_and(|s| output::same_file(s, &t)) {
                return Err(usage(format!(
                    "the new {file} would replace {} in the game folder: add --in-place, or write the model to another folder with -o",
                    t.display()
                )));
            }
            output::check_target(&t, &[&cli.input], cli.force).map_err(|e| usage(e.to_string()))?;
            t
        };
        let old = match &src {
            Some(p) => Some(std::fs::read(p).map_err(|e| usage(format!("{}: {e}", p.display())))?),
            None => None,
        };
        if old.is_none() && entries.is_empty() {
            continue;
        }
        let label = src
            .as_ref()
            .map_or_else(|| file.to_string(), |p| p.display().to_string());
        let (bytes, edit) = add_entries(&label, old.as_deref(), &entries, cli.force)
            .map_err(|e| conversion(e.to_string()))?;
        res.push((target, bytes, edit));
    }
    Ok(res)
}

fn write_report(
    path: &Path,
    cli: &Cli,
    plan: &mut output::WritePlan,
    res: &Result<serde_json::Value, Fail>,
) {
    // The glTF's buffers became inputs after the report was claimed.
    if plan.is_input(path) {
        eprintln!(
            "gltf2msh: report {}: refusing to overwrite an input",
            path.display()
        );
        return;
    }
    let v = match res {
        Ok(r) => {
            if cli.base.is_some() {
                serde_json::json!({"ok": true, "input": cli.input, "base": cli.base, "output": cli.output, "import": r})
            } else {
                serde_json::json!({"ok": true, "input": cli.input, "into": cli.into, "output": cli.output, "author": r})
            }
        }
        Err(f) => {
            serde_json::json!({"ok": false, "input": cli.input, "base": cli.base, "exit_code": f.code, "error": f.msg})
        }
    };
    let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
    if let Err(e) = output::write_files(&[(path, &text)], cli.force) {
        eprintln!("gltf2msh: report {}: {e}", path.display());
    }
}

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let cli = Cli::parse();
    let mut plan = match plan_run(&cli) {
        Ok(p) => p,
        Err(f) => {
            eprintln!("gltf2msh: error: {}", f.msg);
            return ExitCode::from(f.code);
        }
    };
    let res = run(&cli, &mut plan);
    if let Some(p) = &cli.report {
        write_report(p, &cli, &mut plan, &res);
    }
    match res {
        Ok(_) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("gltf2msh: error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}
