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
use mshgltf::material::write::{add_entries, LibraryEdit, NewEntry};
use mshgltf::msh;
use mshgltf::output::{Transaction, TxnOptions};
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
    /// Replace an existing output file (never the base or the input). Does
    /// not replace entries inside archives or libraries: see --replace-entries.
    #[arg(long)]
    force: bool,
    /// Authoring: replace existing archive entries (NAME.msh, NAME.wea) and
    /// library entries (materials, textures) named like the new ones;
    /// without it such a collision is refused and the names are listed.
    #[arg(long, conflicts_with = "base")]
    replace_entries: bool,
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
    /// NAME.msh and NAME.wea; existing ones only with --replace-entries); the
    /// copy is -o, or the archive itself with --force.
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
    if !(1..=MAX_TEXTURE_SIDE).contains(&cli.max_texture) {
        return Err(usage(format!(
            "--max-texture {}: must be 1..={MAX_TEXTURE_SIDE} pixels",
            cli.max_texture
        )));
    }
    Ok(())
}

/// Largest `--max-texture` (a Texm side is a u16 after rounding).
const MAX_TEXTURE_SIDE: u32 = 1 << 15;

/// The transaction of the run: the inputs (glTF, base or --into archive),
/// then the report (refused when it is an input, exists without --force, or
/// is not a regular file).
fn plan_run(cli: &Cli) -> Result<Transaction, Fail> {
    let mut txn = Transaction::new(TxnOptions::from_env(cli.force));
    txn.add_input(&cli.input);
    if let Some(b) = cli.base.as_deref() {
        let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) = source::parse_input(b);
        txn.add_input(&p);
    }
    if let Some(a) = &cli.into {
        // The archive: an input, or reserved for its in-place edit.
        let out = cli.output.clone().unwrap_or_else(|| a.clone());
        if output::same_file(&out, a) {
            txn.plan().reserve_update(a);
        } else {
            txn.add_input(a);
        }
    }
    if let Some(g) = &cli.game_dir {
        // The game's libraries: inputs, or reserved for the in-place edit.
        use mshgltf::material::library::{LIGHTMAP_LIB, MATERIAL_LIB, TEXTURES_LIB};
        for f in [MATERIAL_LIB, TEXTURES_LIB, LIGHTMAP_LIB] {
            let p = find_in(g, f).unwrap_or_else(|| g.join(f));
            if cli.in_place {
                txn.plan().reserve_update(&p);
            } else {
                txn.add_input(&p);
            }
        }
    }
    if let Some(r) = &cli.report {
        txn.claim(r).map_err(|e| usage(format!("--report: {e}")))?;
    }
    Ok(txn)
}

/// Loads the glTF (buffer and image URIs confined unless --allow-outside)
/// and records the external files it reads or may read as inputs.
fn load_doc(
    cli: &Cli,
    txn: &mut Transaction,
) -> Result<(gltf_import::GltfFile, Vec<PathBuf>), Fail> {
    let read = gltf_import::ReadOptions {
        allow_outside: cli.allow_outside,
        max_work: cli.max_work,
    };
    let (doc, files) = gltf_import::load_path_with(&cli.input, &read)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    for f in &files {
        txn.add_input(f);
    }
    if let Some(dir) = cli.input.parent() {
        for f in gltf_import::materials::image_files(&doc, dir) {
            txn.add_input(&f);
        }
    }
    if let Some(r) = &cli.report {
        // Claimed before the glTF named its buffers and images.
        if txn.plan().is_input(r) {
            return Err(usage(format!(
                "--report {}: refusing to overwrite an input of the glTF",
                r.display()
            )));
        }
    }
    gltf_import::budget::check_scene(&doc, cli.max_work, cli.simplify)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    Ok((doc, files))
}

/// Claims an output, with `hint` after a refusal for an input or a
/// second use of one path.
fn claim(txn: &mut Transaction, p: &Path, hint: &str) -> Result<(), Fail> {
    txn.claim(p).map_err(|e| {
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

/// An output failure: exit 1 for I/O and busy locks (README exit codes),
/// 2 for refusals of the command line.
fn output_fail(e: output::OutputError) -> Fail {
    Fail {
        code: if e.is_runtime() { 1 } else { 2 },
        msg: e.to_string(),
    }
}

/// Reads an input file (a regular file of at most
/// [`output::MAX_UPDATE_BYTES`]): exit 2 when it is missing or not a
/// regular file, 1 for other I/O failures.
fn read_input(path: &Path, what: &str) -> Result<Vec<u8>, Fail> {
    source::read_regular(path, output::MAX_UPDATE_BYTES).map_err(|e| {
        let msg = format!("{what} {}: {e}", path.display());
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidInput => usage(msg),
            _ => conversion(msg),
        }
    })
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
            let bytes = read_input(&p, "base")?;
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
            let bytes = read_input(&archive, "base archive")?;
            let a = nres::read(&bytes, nres::Mode::Strict)
                .map_err(|e| conversion(format!("base archive {}: {e}", archive.display())))?;
            let i = source::find_entry(&a, &entry)
                .map_err(|e| usage(format!("base archive {}: {e}", archive.display())))?;
            let model = a.entries[i].data.to_vec();
            Ok(Base::Entry(archive, bytes, i, model))
        }
    }
}

fn run(cli: &Cli, txn: &mut Transaction) -> Result<serde_json::Value, Fail> {
    validate_options(cli)?;
    let Some(base_spec) = cli.base.as_deref() else {
        return run_author(cli, txn);
    };
    if !cli.input.is_file() {
        return Err(usage(format!("input {} not found", cli.input.display())));
    }
    if let InputSpec::File(p) = source::parse_input(base_spec) {
        let head = std::fs::read(&p).map_err(|e| usage(format!("base {}: {e}", p.display())))?;
        if source::classify(&head) == FileKind::Terrain {
            return run_terrain(cli, txn, &p, &head);
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
    txn.add_input(base.path());
    let (doc, _) = load_doc(cli, txn)?;
    let hint = if cli.output.is_none() {
        " (the default output is the input's name with .msh; give another one with -o)"
    } else {
        " (choose another output with -o)"
    };
    claim(txn, &out, hint)?;
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
    let n_bytes = bytes.len();
    txn.stage(&out, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
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
            "gltf2msh: wrote {} ({n_bytes} bytes; {what})",
            out.display()
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
    txn: &mut Transaction,
    base_path: &Path,
    base_bytes: &[u8],
) -> Result<serde_json::Value, Fail> {
    use mshgltf::terrain;
    let out = cli
        .output
        .clone()
        .unwrap_or_else(|| cli.input.with_extension("msh"));
    txn.add_input(base_path);
    let (doc, _) = load_doc(cli, txn)?;
    claim(txn, &out, " (choose another output with -o)")?;
    let base = terrain::read::decode(base_bytes)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    let (land, rep) = terrain::import::import_with_base(&doc, &base)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let bytes = terrain::write::encode(&land)
        .map_err(|e| conversion(format!("the edited map is invalid: {e}")))?;
    let n_bytes = bytes.len();
    txn.stage(&out, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
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
            n_bytes
        );
        for w in &rep.warnings {
            eprintln!("gltf2msh: warning: {w}");
        }
    }
    Ok(serde_json::to_value(&rep).unwrap_or_default())
}

/// Most bytes of an NRes entry name (format-notes §1: 36 with the NUL).
const MAX_ENTRY_NAME: usize = 35;

/// Where an authored model goes.
enum AuthorTarget {
    /// NEW.msh and NEW.wea.
    Files { out: PathBuf, wea: PathBuf },
    /// Entries of the archive `out`, made from `old` (the --into archive's
    /// bytes: read under its lock when `out` is that archive).
    Archive { out: PathBuf, old: Vec<u8> },
}

/// The entry stem of an authored model (--name, else the input's stem),
/// checked to fit an NRes name.
fn entry_stem(cli: &Cli) -> Result<String, Fail> {
    let stem = match &cli.name {
        Some(n) => source::stem_of(n)
            .strip_suffix(".msh")
            .unwrap_or(source::stem_of(n))
            .to_string(),
        None => cli
            .input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "MODEL".into()),
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
    Ok(stem)
}

/// Claims the authored model's outputs before any work: NEW.msh + NEW.wea,
/// an archive copy (-o), or the --into archive itself (--force; opened for
/// update, so it stays locked until the commit).
fn author_target(cli: &Cli, txn: &mut Transaction) -> Result<AuthorTarget, Fail> {
    let Some(a) = &cli.into else {
        let out = cli
            .output
            .clone()
            .unwrap_or_else(|| cli.input.with_extension("msh"));
        let wea = out.with_extension("wea");
        for p in [&out, &wea] {
            claim(txn, p, " (choose another output with -o)")?;
        }
        return Ok(AuthorTarget::Files { out, wea });
    };
    let out = cli.output.clone().unwrap_or_else(|| a.clone());
    let in_place = output::same_file(&out, a);
    let old = if in_place {
        if !cli.force {
            return Err(usage(format!(
                "--into {} without -o replaces the archive in place: add --force, or give the new archive with -o",
                a.display()
            )));
        }
        txn.open_for_update(a)
            .map_err(|e| match e {
                output::OutputError::IsInput(_) => {
                    usage("the archive is the input glTF or one of its buffers")
                }
                e => output_fail(e),
            })?
            .ok_or_else(|| usage(format!("archive {}: no such file", a.display())))?
    } else {
        txn.add_input(a);
        claim(txn, &out, " (choose another output with -o)")?;
        read_input(a, "archive")?
    };
    check_into_archive(a, &old)?;
    Ok(AuthorTarget::Archive { out, old })
}

/// `--into` needs an archive of models (or an empty one): a material,
/// texture or lightmap library, a bare model or terrain is refused.
fn check_into_archive(path: &Path, bytes: &[u8]) -> Result<(), Fail> {
    let a = nres::read(bytes, nres::Mode::Strict)
        .map_err(|e| conversion(format!("archive {}: {e}", path.display())))?;
    match source::classify(bytes) {
        FileKind::ModelArchive => Ok(()),
        FileKind::OtherNres if a.entries.is_empty() => Ok(()),
        k => Err(usage(format!(
            "--into {}: not an archive of models ({}); --into adds NAME.msh and NAME.wea to an archive such as units.rlb (materials and textures go to the libraries with --game-dir)",
            path.display(),
            match k {
                FileKind::OtherNres => "an NRes without .msh entries, e.g. Material.lib or Textures.lib",
                FileKind::Model => "a bare model",
                FileKind::Terrain => "terrain",
                _ => "not an NRes archive",
            }
        ))),
    }
}

/// The archive `old` with NAME.msh and NAME.wea added (or, with
/// --replace-entries, replacing same-named entries); each new entry takes
/// the type and attributes most of the archive's entries of its kind use.
fn archive_with_model(
    cli: &Cli,
    path: &Path,
    old: &[u8],
    stem: &str,
    model: &[u8],
    wear: &[u8],
) -> Result<(Vec<u8>, LibraryEdit), Fail> {
    let ar = nres::read(old, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
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
    let entry = |ext: &str, t: (u32, u32, u32, u32), data: &[u8]| NewEntry {
        name: encoding_rs::WINDOWS_1251
            .encode(&format!("{stem}.{ext}"))
            .0
            .into_owned(),
        type_id: t.0,
        attr1: t.1,
        attr2: t.2,
        attr3: t.3,
        data: data.to_vec(),
    };
    let new = [entry("msh", mt, model), entry("wea", wt, wear)];
    add_entries(
        &path.display().to_string(),
        Some(old),
        &new,
        cli.replace_entries,
    )
    .map_err(|e| usage(e.to_string()))
}

fn run_author(cli: &Cli, txn: &mut Transaction) -> Result<serde_json::Value, Fail> {
    if !cli.input.is_file() {
        return Err(usage(format!("input {} not found", cli.input.display())));
    }
    let (doc, _) = load_doc(cli, txn)?;
    // Where to write, checked before any work.
    let stem = entry_stem(cli)?;
    if let Some(g) = &cli.game_dir {
        check_game_dir(g)?;
    }
    let target = author_target(cli, txn)?;
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
    let wear_bytes = a
        .wear
        .to_bytes()
        .map_err(|e| conversion(format!("WEAR table: {e}")))?;
    let mut lib_warnings: Vec<String> = Vec::new();
    let mut written = Vec::new();
    let out = match target {
        AuthorTarget::Archive { out, old } => {
            let src = cli.into.as_deref().unwrap_or(&out);
            let (bytes, edit) =
                archive_with_model(cli, src, &old, &stem, &model_bytes, &wear_bytes)?;
            written.push(format!(
                "{} (entries {stem}.msh, {stem}.wea{})",
                out.display(),
                if edit.replaced.is_empty() {
                    String::new()
                } else {
                    format!(", replacing {}", edit.replaced.join(", "))
                }
            ));
            txn.stage(&out, bytes).map_err(output_fail)?;
            out
        }
        AuthorTarget::Files { out, wea } => {
            txn.stage(&out, model_bytes).map_err(output_fail)?;
            txn.stage(&wea, wear_bytes).map_err(output_fail)?;
            written.push(out.display().to_string());
            written.push(wea.display().to_string());
            out
        }
    };
    let mut lib_report = Vec::new();
    if let Some(g) = &cli.game_dir {
        for (path, edit) in author_libraries(cli, g, &doc, &a, &out, txn, &mut lib_warnings)? {
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
        }
    }
    let done = txn.commit().map_err(output_fail)?;
    if !cli.quiet {
        print_authored(cli, &a.report, &written, &done.unchanged, &lib_warnings);
    }
    let mut v = serde_json::to_value(&a.report).unwrap_or_default();
    if cli.game_dir.is_some() {
        v["libraries"] = serde_json::json!(lib_report);
        v["library_warnings"] = serde_json::json!(lib_warnings);
    }
    v["unchanged_files"] = serde_json::json!(done.unchanged);
    Ok(v)
}

/// The summary lines of an authored model on stderr.
fn print_authored(
    cli: &Cli,
    r: &gltf_import::AuthorReport,
    written: &[String],
    unchanged: &[PathBuf],
    lib_warnings: &[String],
) {
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
    if !unchanged.is_empty() {
        let u: Vec<String> = unchanged.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "gltf2msh: already up to date, not rewritten: {}",
            u.join(", ")
        );
    }
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
        for w in lib_warnings {
            eprintln!("gltf2msh: warning: {w}");
        }
    } else if !r.warnings.is_empty() || !lib_warnings.is_empty() {
        eprintln!(
            "gltf2msh: {} warning(s) (-v to list)",
            r.warnings.len() + lib_warnings.len()
        );
    }
}

/// `--game-dir` must be an existing folder (exit 2 naming it).
fn check_game_dir(game: &Path) -> Result<(), Fail> {
    match std::fs::metadata(game) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(usage(format!(
            "--game-dir {}: not a folder (it is a file)",
            game.display()
        ))),
        Err(e) => Err(usage(format!("--game-dir {}: {e}", game.display()))),
    }
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

/// `--game-dir`: stages the new Material.lib, Textures.lib and LightMap.lib
/// in `txn` and returns (path, edit) of each. With --in-place the game's
/// libraries are opened for update (locked until the commit) and one is
/// rewritten only when entries are added to it; otherwise they are inputs
/// and the copies go beside the output.
fn author_libraries(
    cli: &Cli,
    game: &Path,
    doc: &gltf_import::GltfFile,
    a: &gltf_import::Authored,
    out: &Path,
    txn: &mut Transaction,
    warnings: &mut Vec<String>,
) -> Result<Vec<(PathBuf, LibraryEdit)>, Fail> {
    use mshgltf::gltf_import::materials::{self, TextureBits, TextureOptions};
    use mshgltf::material::library::{LIGHTMAP_LIB, MATERIAL_LIB, TEXTURES_LIB};
    let opts = TextureOptions {
        bits: match cli.texture_bits.as_str() {
            "16" => TextureBits::Sixteen,
            "32" => TextureBits::ThirtyTwo,
            _ => TextureBits::Auto,
        },
        max_size: cli.max_texture,
        order: if cli.texm_order == "argb" {
            TexmOrder::Argb
        } else {
            TexmOrder::Retail
        },
        max_work: cli.max_work,
        allow_outside: cli.allow_outside,
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
        let (target, old) = if cli.in_place {
            if entries.is_empty() {
                // Nothing to add: the game's file is not touched.
                continue;
            }
            let t = src.clone().unwrap_or_else(|| game.join(file));
            let old = txn.open_for_update(&t).map_err(|e| match e {
                e @ (output::OutputError::IsInput(_) | output::OutputError::Collision(..)) => {
                    usage(format!("--in-place {file}: {e}"))
                }
                e => output_fail(e),
            })?;
            (t, old)
        } else {
            let t = find_in(&out_dir, file).unwrap_or_else(|| out_dir.join(file));
            if src.as_ref().is_some_and(|s| output::same_file(s, &t)) {
                return Err(usage(format!(
                    "the new {file} would replace {} in the game folder: add --in-place, or write the model to another folder with -o",
                    t.display()
                )));
            }
            let old = match &src {
                Some(p) => {
                    txn.add_input(p);
                    Some(read_input(p, "library")?)
                }
                None => None,
            };
            if old.is_none() && entries.is_empty() {
                continue;
            }
            claim(txn, &t, " (write the model to another folder with -o)")?;
            (t, old)
        };
        let label = src
            .as_ref()
            .map_or_else(|| file.to_string(), |p| p.display().to_string());
        let (bytes, edit) = add_entries(&label, old.as_deref(), &entries, cli.replace_entries)
            .map_err(|e| usage(e.to_string()))?;
        txn.stage(&target, bytes).map_err(output_fail)?;
        res.push((target, edit));
    }
    Ok(res)
}

/// Writes the JSON report (its own transaction, after the run's commit:
/// it is written whether the run succeeded or not).
fn write_report(
    path: &Path,
    cli: &Cli,
    txn: &mut Transaction,
    res: &Result<serde_json::Value, Fail>,
) {
    // The glTF's buffers and images became inputs after the report was claimed.
    if txn.plan().is_protected(path) || txn.plan().is_update(path) {
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
    let mut t = Transaction::new(txn.options().clone());
    if let Err(e) = t.stage(path, text).and_then(|()| t.commit().map(|_| ())) {
        eprintln!("gltf2msh: report {}: {e}", path.display());
    }
}

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let cli = Cli::parse();
    let mut txn = match plan_run(&cli) {
        Ok(p) => p,
        Err(f) => {
            eprintln!("gltf2msh: error: {}", f.msg);
            return ExitCode::from(f.code);
        }
    };
    let res = run(&cli, &mut txn);
    if let Some(p) = &cli.report {
        write_report(p, &cli, &mut txn, &res);
    }
    match res {
        Ok(_) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("gltf2msh: error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}
