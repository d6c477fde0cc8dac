//! `--base`: a glTF written back over the model or map it was exported
//! from (gltf-mapping.md "Reverse rules", terrain-notes §4.6): the base's
//! content decides the pipeline ([`run`]); values the glTF leaves as
//! exported keep the base's bytes.

use std::path::{Path, PathBuf};

use super::points::{self, BaseCpt, CptHome};
use super::{claim, conversion, load_doc, output_fail, read_input, usage, Args, RunError};
use crate::gltf_import::{self, ImportOptions};
use crate::msh;
use crate::nres;
use crate::output::Transaction;
use crate::source::{self, FileKind, InputSpec};
use crate::terrain;
use crate::unit::cpt;

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

/// The base named by `spec`; `read` holds a bare file's (or the archive's)
/// bytes when the caller has read them already (each input is read once;
/// an archive changed in place is read under its lock).
fn load_base(spec: &str, read: Option<Vec<u8>>) -> Result<Base, RunError> {
    match source::parse_input(spec) {
        InputSpec::File(p) => {
            let bytes = match read {
                Some(b) => b,
                None => read_input(&p, "base")?,
            };
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
            let bytes = match read {
                Some(b) => b,
                None => read_input(&archive, "base archive")?,
            };
            let a = nres::read(&bytes, nres::Mode::Strict)
                .map_err(|e| conversion(format!("base archive {}: {e}", archive.display())))?;
            let i = source::find_entry(&a, &entry)
                .map_err(|e| usage(format!("base archive {}: {e}", archive.display())))?;
            let model = a.entries[i].data.to_vec();
            Ok(Base::Entry(archive, bytes, i, model))
        }
    }
}

/// `--base BASE`: a map's Land.msh (recognised by its streams) goes to
/// [`edit_map`], a unit file (its magic) to the unit edit (module `unit`:
/// each part into its archive entry), a model (a file or `ARCHIVE:ENTRY`)
/// to [`edit_model`].
/// Returns the report's `import` object.
///
/// # Errors
/// [`RunError::Usage`] for a missing input or base; the pipeline's errors.
pub(super) fn run(
    cli: &Args,
    txn: &mut Transaction,
    base_spec: &str,
) -> Result<serde_json::Value, RunError> {
    super::check_input(&cli.input)?;
    // A bare base is read once, as every input: a regular file within the
    // input cap (a FIFO or a device is refused, never opened).
    let mut read = None;
    if let InputSpec::File(p) = source::parse_input(base_spec) {
        // Written over in place: read under its lock (held to the commit).
        let bytes = match cli.file_in_place() {
            Some(b) => txn
                .open_for_update(&b)
                .map_err(super::output_fail)?
                .ok_or_else(|| usage(format!("base {}: no such file", b.display())))?,
            None => read_input(&p, "base")?,
        };
        if source::classify(&bytes) == FileKind::Terrain {
            return edit_map(cli, txn, &p, &bytes);
        }
        if source::is_mission_file(&bytes, p.as_os_str().as_encoded_bytes()) {
            return super::mission::edit_mission(cli, txn, &p, &bytes);
        }
        if crate::unit::assemble::is_unit_file(&bytes) {
            return super::unit::run(cli, txn, &p, &bytes);
        }
        if cli.file_in_place().is_some() {
            return Err(usage(format!(
                "--in-place with the bare model base {}: a model is installed into its archive (--base ARCHIVE:ENTRY --in-place)",
                p.display()
            )));
        }
        read = Some(bytes);
    }
    edit_model(cli, txn, base_spec, read)
}

/// A model rebuilt with the glTF's edits against `base_spec` (a `.msh` or
/// `ARCHIVE:ENTRY`; with an archive base and a non-`.msh` output the
/// archive is copied with the entry replaced). `read`: a bare base's bytes
/// when [`run`] has read them.
///
/// # Errors
/// [`RunError`]: the base does not read, the glTF does not match it, the
/// edited model is invalid, or the output is refused.
fn edit_model(
    cli: &Args,
    txn: &mut Transaction,
    base_spec: &str,
    read: Option<Vec<u8>>,
) -> Result<serde_json::Value, RunError> {
    let in_place = cli.base_in_place();
    let read = match &in_place {
        Some(a) => Some(
            txn.open_for_update(a)
                .map_err(output_fail)?
                .ok_or_else(|| usage(format!("base archive {}: no such file", a.display())))?,
        ),
        None => read,
    };
    let base = load_base(base_spec, read)?;
    let base_bytes: &[u8] = match &base {
        Base::File(_, b) | Base::Entry(_, _, _, b) => b,
    };
    let out = cli.output_or(in_place.as_deref(), "msh");
    if in_place.is_none() {
        txn.add_input(base.path());
    }
    // The .ctl read beside a bare model base is an input of the run too
    // (issue 26 item 4; the .cpt is registered by `points::beside`).
    let siblings = base_siblings(&base);
    if let (Base::File(..), Some(ctl)) = (&base, &siblings.ctl) {
        txn.add_input(Path::new(&ctl.source));
    }
    let (doc, _) = load_doc(cli, txn)?;
    let hint = if cli.output.is_none() {
        " (the default output is the input's name with .msh; give another one with -o)"
    } else {
        " (choose another output with -o)"
    };
    if in_place.is_none() {
        claim(txn, &out, hint)?;
    }
    let decoded = msh::decode(base_bytes, msh::Mode::Strict)
        .map_err(|e| conversion(format!("base {base_spec}: {e}")))?;
    let base_clips = siblings
        .parse()
        .ctl
        .map(|c| crate::unit::clips::base_clips(&c, &decoded.model));
    let opts = ImportOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
        write_materials: cli.game_dir.is_some(),
        // Clip ranges come from the base's .ctl, never from the glTF.
        base_clips,
    };
    let mut imp = gltf_import::import_with_base(&doc, &decoded.model, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let base_cpt = match &base {
        Base::Entry(p, archive, i, _) => points::in_archive(p, archive, *i),
        Base::File(p, _) => points::beside(p, txn)?,
    };
    // The points as the baked document has them (a scaled node's points
    // follow its scale into the .cpt).
    let n_warnings = imp.report.warnings.len();
    let cpt_edit = points::edit(
        imp.points_doc.as_ref().unwrap_or(&doc),
        base_cpt.as_ref(),
        &imp.res1_of,
        imp.up,
        &mut imp.report.warnings,
    )?
    .filter(|e| !e.changes.is_empty());
    if imp.report.warnings.len() > n_warnings {
        imp.report.unchanged = false;
    }
    let model_bytes = msh::encode(&imp.model)
        .map_err(|e| conversion(format!("the edited model is invalid: {e}")))?;
    let cpt_bytes = cpt_edit.as_ref().map(|e| cpt::write(&e.cpt));
    let bytes = output_bytes(txn, &base, &out, model_bytes, cpt_bytes, base_cpt.as_ref())?;
    if let Some(e) = cpt_edit {
        imp.report.control_points = e.changes;
        imp.report.warnings.extend(e.warnings);
        imp.report.unchanged = false;
    }
    // Material and texture edits into the game's libraries (issue 23).
    let libs = library_edits(cli, txn, &doc, &out, base_spec, base.path())?;
    let r = &imp.report;
    commit_one(
        cli,
        txn,
        &out,
        bytes,
        r.unchanged && libs.is_empty(),
        || edit_summary(r, &libs),
    )?;
    if !cli.quiet {
        for p in &libs.written {
            eprintln!("gltf2msh: wrote {}", p.display());
        }
    }
    super::console::print_warnings(cli, &r.warnings);
    super::console::print_warnings(cli, &libs.warnings);
    if cli.verbose {
        eprintln!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
    }
    let mut v = serde_json::to_value(&imp.report).unwrap_or_default();
    if cli.game_dir.is_some() || !libs.warnings.is_empty() {
        v["libraries"] = serde_json::to_value(&libs).unwrap_or_default();
    }
    Ok(v)
}

/// The summary line of a model edit: what the import report `r` and the
/// library edits `libs` changed, and how many warnings follow.
fn edit_summary(
    r: &crate::gltf_import::ImportReport,
    libs: &super::materials::LibraryEdits,
) -> String {
    let mut s = format!(
        "{} moved vertices, {} new vertices, slots changed {:?}, rebuilt {:?}, tracks changed {:?}, object transforms written {:?}, {} warning(s)",
        r.moved_vertices, r.new_vertices, r.changed_slots, r.rebuilt_slots, r.changed_tracks, r.baked_nodes, r.warnings.len()
    );
    if !r.control_points.is_empty() {
        s += &format!(", control points: {}", r.control_points.join("; "));
    }
    if !r.shared_edits.is_empty() {
        s += &format!("; {}", r.shared_edits.join("; "));
    }
    if !libs.is_empty() {
        s += &format!("; {}", libs.summary());
    }
    s
}

/// The bytes of `out`: the edited model, or (an archive base and a
/// non-`.msh` output) a copy of the archive with the model's entry — and
/// its `.cpt` entry when `cpt_bytes` holds edited control points —
/// replaced. For a bare output the edited `.cpt` is staged beside it as
/// `<out stem>.cpt`.
///
/// # Errors
/// The archive does not read or write; the `.cpt` output is refused.
fn output_bytes(
    txn: &mut Transaction,
    base: &Base,
    out: &Path,
    model_bytes: Vec<u8>,
    cpt_bytes: Option<Vec<u8>>,
    base_cpt: Option<&BaseCpt>,
) -> Result<Vec<u8>, RunError> {
    let bare = out
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("msh"));
    match base {
        Base::Entry(_, archive, i, _) if !bare => {
            let a =
                nres::read(archive, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
            let mut entries = a.entries.clone();
            entries[*i].data = &model_bytes;
            if let (Some(b), Some(CptHome::Entry(j))) = (&cpt_bytes, base_cpt.map(|c| &c.home)) {
                entries[*j].data = b;
            }
            nres::write(&entries).map_err(|e| conversion(format!("archive: {e}")))
        }
        _ => {
            if let Some(b) = cpt_bytes {
                let beside = out.with_extension("cpt");
                claim(
                    txn,
                    &beside,
                    " (the edited control points go beside the output model)",
                )?;
                txn.stage(&beside, b).map_err(output_fail)?;
            }
            Ok(model_bytes)
        }
    }
}

/// The material and texture edits of `doc` written into the game's
/// libraries with `--game-dir` (issue 23: [`super::materials::write`]);
/// without it, a painted texture is refused
/// ([`super::materials::refuse_pixel_edits`]).
///
/// # Errors
/// The libraries' refusals and failures.
fn library_edits(
    cli: &Args,
    txn: &mut Transaction,
    doc: &gltf_import::GltfFile,
    out: &Path,
    base_spec: &str,
    base_path: &Path,
) -> Result<super::materials::LibraryEdits, RunError> {
    match &cli.game_dir {
        Some(g) => {
            let entry = match source::parse_input(base_spec) {
                InputSpec::Entry { entry, .. } => Some(entry),
                InputSpec::File(_) => None,
            };
            super::materials::write(cli, g, doc, out, (base_path, entry.as_deref()), txn)
        }
        None => {
            let mut l = super::materials::LibraryEdits::default();
            l.warnings
                .extend(super::materials::refuse_pixel_edits(cli, doc, base_path)?);
            Ok(l)
        }
    }
}

/// The `.cpt`/`.ctl` siblings of the base: entries of its archive, or
/// files beside it (read as every sibling is: regular files only).
fn base_siblings(base: &Base) -> crate::unit::siblings::Siblings {
    match base {
        Base::Entry(p, archive, i, _) => nres::read(archive, nres::Mode::Strict)
            .ok()
            .and_then(|a| {
                let name = a.entries.get(*i)?.name;
                Some(crate::unit::siblings::in_archive(
                    &a,
                    &p.display().to_string(),
                    name,
                ))
            })
            .unwrap_or_default(),
        Base::File(p, _) => crate::unit::siblings::beside_file(p),
    }
}

/// `--base Land.msh`: a map (recognised by its streams) rebuilt with the
/// glTF's edits (terrain-notes §4.6). Its Land.map follows the edited
/// ground ([`map_follow`]): `OUT.map` beside `-o OUT.msh` when an areal
/// vertex moved; with `--in-place` (no `-o`) both files replace the map's
/// own, locked from read to commit, in one journaled transaction.
fn edit_map(
    cli: &Args,
    txn: &mut Transaction,
    base_path: &Path,
    base_bytes: &[u8],
) -> Result<serde_json::Value, RunError> {
    let (out, in_place) = cli.file_output("msh");
    let in_place = in_place.is_some();
    if cli.game_dir.is_some() {
        return Err(usage(
            "--game-dir with a map base: a map's materials are not written (give --game-dir with a model base)",
        ));
    }
    if !in_place {
        txn.add_input(base_path);
    }
    // Repaints are checked against the map's Land1.wea (an input too).
    let land1 = terrain::import::land1_beside(base_path, cli.max_work)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    if let Some(p) = &land1.path {
        txn.add_input(p);
    }
    let map_in = map_beside(cli, txn, base_path, in_place)?;
    let (doc, _) = load_doc(cli, txn)?;
    if !in_place {
        claim(
            txn,
            &out,
            " (choose another output with -o, or install it with --in-place)",
        )?;
    }
    let base = terrain::read::decode(base_bytes)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    terrain::import::check_base(&base)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    terrain::import::check_primitive_work(&doc, cli.max_work)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let (land, mut rep) = terrain::import::import_with_land1(&doc, &base, land1.rows)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    rep.warnings.extend(land1.warning);
    let bytes = terrain::write::encode(&land)
        .map_err(|e| conversion(format!("the edited map is invalid: {e}")))?;
    // The strict reader's checks on the written bytes, before the commit.
    terrain::read::decode(&bytes)
        .map_err(|e| conversion(format!("the edited map does not read back: {e}")))
        .and_then(|l| {
            terrain::validate::validate(&l, terrain::Mode::Strict)
                .map_err(|e| conversion(format!("the edited map breaks a strict rule: {e}")))
        })?;
    let follow = map_follow(
        map_in,
        (&base, &land),
        &out,
        in_place,
        (&mut rep.warnings, &mut rep.notes),
    )?;
    if let Some((path, b, _)) = &follow.staged {
        if !in_place {
            claim(
                txn,
                path,
                " (the edited map's Land.map goes beside the output Land.msh; choose another output folder with -o)",
            )?;
        }
        txn.stage(path, b.clone()).map_err(output_fail)?;
    }
    commit_one(cli, txn, &out, bytes, rep.unchanged, || {
        format!(
            "{} moved vertices, {} faces repainted, {} alpha and {} UV edits{}, squares rebuilt {:?}{}",
            rep.moved_vertices,
            rep.repainted_faces,
            rep.alpha_changed,
            rep.uv_changed,
            match rep.split_vertices {
                0 => String::new(),
                n => format!(
                    ", {n} patch border vertices split ({} copies, {} alpha set)",
                    rep.patch_copies, rep.patch_alpha_set
                ),
            },
            rep.changed_squares,
            match rep.material_edits_dropped + rep.scene_edits_dropped {
                0 => String::new(),
                n => format!("; {n} material or scene edits not written (see the warnings)"),
            }
        )
    })?;
    if let (Some((path, b, what)), false) = (&follow.staged, cli.quiet) {
        eprintln!(
            "gltf2msh: wrote {} ({} bytes; {what})",
            path.display(),
            b.len()
        );
    }
    super::console::print_warnings(cli, &rep.warnings);
    if cli.verbose {
        for n in &rep.notes {
            eprintln!("gltf2msh: note: {n}");
        }
    }
    let mut v = serde_json::to_value(&rep).unwrap_or_default();
    v["land_map"] = follow.report;
    Ok(v)
}

/// The base's Land.map (`<stem>.map` beside it, any case): its path and
/// bytes, or `None` when there is none. An input of the run, or with
/// `--in-place` opened for update (locked until the commit); its parse is
/// counted against `--max-work` first.
///
/// # Errors
/// The lock or read failure; `limits.work`.
fn map_beside(
    cli: &Args,
    txn: &mut Transaction,
    base_path: &Path,
    in_place: bool,
) -> Result<Option<(PathBuf, Vec<u8>)>, RunError> {
    let dir = base_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = base_path
        .file_stem()
        .map_or_else(|| "Land".into(), |s| s.to_string_lossy().into_owned());
    let Some(p) = source::file_any_case(dir, &format!("{stem}.map")) else {
        return Ok(None);
    };
    let bytes = if in_place {
        txn.open_for_update(&p).map_err(output_fail)?
    } else {
        txn.add_input(&p);
        source::read_regular(&p, crate::output::MAX_UPDATE_BYTES).ok()
    };
    let Some(bytes) = bytes else { return Ok(None) };
    let (units, what) = terrain::source::sibling_work(true, &bytes);
    if units > cli.max_work {
        return Err(conversion(format!(
            "{}: {what} make {units} work units, over the budget of {} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
            p.display(),
            cli.max_work
        )));
    }
    Ok(Some((p, bytes)))
}

/// What [`map_follow`] stages and reports.
struct MapFollow {
    /// `(path, bytes, what)` of the Land.map to write, when it changed.
    staged: Option<(PathBuf, Vec<u8>, String)>,
    /// The report's `land_map` object.
    report: serde_json::Value,
}

/// Land.map's areal vertices made to follow the edited ground
/// (`terrain::areals::follow_bytes`, terrain-notes §2): written as
/// `<out stem>.map` beside `out` (in place: over the base's Land.map) when
/// a vertex moved, checked by the
/// strict Land.map reader first. Areal vertices the edit left with no
/// ground under them are a warning naming each (ones off the ground in the
/// base already, where it did not change, a note); a base without a
/// (readable) Land.map is a warning when the map changed.
///
/// # Errors
/// The written Land.map fails the strict reader (a bug: refused).
fn map_follow(
    map_in: Option<(PathBuf, Vec<u8>)>,
    (base, land): (&terrain::Land, &terrain::Land),
    out: &Path,
    in_place: bool,
    (warnings, notes): (&mut Vec<String>, &mut Vec<String>),
) -> Result<MapFollow, RunError> {
    let none = |why: &str, warnings: &mut Vec<String>| {
        if land != base {
            warnings.push(format!(
                "Land.map {why}: its areal heights do not follow the edit"
            ));
        }
        MapFollow {
            staged: None,
            report: serde_json::json!({"written": null, "why": why}),
        }
    };
    let Some((path, bytes)) = map_in else {
        return Ok(none("not found beside the base", warnings));
    };
    let (new, m, rep) = match terrain::areals::follow_bytes(&bytes, base, land) {
        Ok(r) => r,
        Err(e) => {
            return Ok(none(
                &format!("{} does not read ({e})", path.display()),
                warnings,
            ))
        }
    };
    // Left off by the edit (no ground under them now): a warning naming
    // each; off the ground already in the base, where the ground did not
    // change: a note (`-v`).
    let (left, before): (Vec<_>, Vec<_>) = terrain::areals::off_ground(&m, land)
        .into_iter()
        .partition(|v| rep.left_off.contains(&(v.areal, v.vertex)));
    if !left.is_empty() {
        warnings.push(format!(
            "{} Land.map areal vertices are left off the ground: the edited map has no ground under them (they keep their height): {}",
            left.len(),
            terrain::areals::describe_off(&left, 20)
        ));
    }
    if !before.is_empty() {
        notes.push(format!(
            "{} Land.map areal vertices were off the ground (more than {}) in the base already and their ground did not change (kept): {}",
            before.len(),
            terrain::areals::AREAL_Z_TOLERANCE,
            terrain::areals::describe_off(&before, 20)
        ));
    }
    let off = left.len() + before.len();
    // In place: the map's own Land.map (as its name is spelled on disk).
    let target = if in_place {
        path.clone()
    } else {
        out.with_extension("map")
    };
    let mut report = serde_json::json!({
        "source": path.display().to_string(),
        "written": null,
        "moved_vertices": rep.moved_vertices,
        "changed_areals": rep.changed_areals,
        "max_change": rep.max_change,
        "off_ground": off,
        "left_off": left.len(),
    });
    let Some(b) = new else {
        return Ok(MapFollow {
            staged: None,
            report,
        });
    };
    terrain::map::decode(&b)
        .map_err(|e| conversion(format!("the edited Land.map does not read back: {e}")))?;
    report["written"] = serde_json::json!(target.display().to_string());
    let what = format!(
        "{} areal vertices of {} areals follow the ground, by up to {}",
        rep.moved_vertices, rep.changed_areals, rep.max_change
    );
    Ok(MapFollow {
        staged: Some((target, b, what)),
        report,
    })
}

/// Stages `bytes` as `out`, commits the run's transaction and, unless
/// `-q`, says what was written: `gltf2msh: wrote OUT (N bytes; WHAT)`,
/// WHAT being `unchanged` or the `edits` summary.
///
/// # Errors
/// The transaction's refusal or failure ([`output_fail`]).
fn commit_one(
    cli: &Args,
    txn: &mut Transaction,
    out: &Path,
    bytes: Vec<u8>,
    unchanged: bool,
    edits: impl FnOnce() -> String,
) -> Result<(), RunError> {
    let n_bytes = bytes.len();
    txn.stage(out, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
    if !cli.quiet {
        let what = if unchanged {
            "unchanged".to_string()
        } else {
            edits()
        };
        eprintln!(
            "gltf2msh: wrote {} ({n_bytes} bytes; {what})",
            out.display()
        );
    }
    Ok(())
}
