//! `--base UNITS/<class>/x.dat`: an edited assembled unit written back
//! into each part's archive entry (issue 24 item 5; unit-files-notes §3.5
//! step 5). The unit file is resolved to its mounted parts as `msh2gltf`
//! assembled them ([`crate::unit::assemble::resolve`]); the glTF is split
//! into one model document per part ([`crate::unit::split`]) and each goes
//! through the model `--base` edit against its `ARCHIVE:ENTRY` (geometry,
//! node poses, animation, control points in the part's `.cpt` entry).
//! Every changed archive is written by the run's one transaction: a copy
//! in the `-o` folder (default: the glTF's folder), or the game's own
//! archive with `--in-place` (locked from read to commit). An archive with
//! no edited part is not written; a part whose edit cannot be written
//! fails the run naming the part, and nothing is written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::points::{self, CptHome};
use super::{conversion, load_doc, output_fail, read_input, usage, Args, RunError};
use crate::convert::ConvertOptions;
use crate::gltf_import::{self, GltfFile, ImportOptions, ImportReport};
use crate::output::Transaction;
use crate::unit::assemble::{self, Part, Resolved};
use crate::unit::{cpt, split};
use crate::{msh, nres, source};

/// A part archive of the unit, read once.
struct PartArchive {
    /// Its path in the game folder.
    path: PathBuf,
    /// Its bytes (read under its lock with `--in-place`).
    bytes: Vec<u8>,
}

/// What one part's edit gives.
struct Outcome {
    /// Lower-case archive name.
    archive: String,
    /// The model's entry index in the archive.
    entry: usize,
    /// Changed entries: (index, new bytes) — the model, its `.cpt`.
    edits: Vec<(usize, Vec<u8>)>,
    /// The model edit's report.
    report: ImportReport,
}

/// Runs the unit edit (see the module docs); `dat` is the unit file,
/// `dat_bytes` its bytes. Returns the report's `import` object: `unit`,
/// `unchanged`, `parts` (per part: `part`, `record`, `archive`, `entry`,
/// `written`, `unchanged`, `summary`, `import`), `written` (the archives)
/// and `warnings` (each naming its part).
///
/// # Errors
/// [`RunError::Usage`]: `--game-dir`, a missing archive or output folder, a
/// refused output. [`RunError::Conversion`]: the unit does not resolve, a
/// part cannot be written (each such part named with its reason), two
/// parts sharing one entry are edited differently, the commit fails.
pub(super) fn run(
    cli: &Args,
    txn: &mut Transaction,
    dat: &Path,
    dat_bytes: &[u8],
) -> Result<Value, RunError> {
    if cli.game_dir.is_some() {
        return Err(usage(
            "--game-dir with a unit base: material and texture edits of a unit are not written yet (edit the part's ARCHIVE:ENTRY with --game-dir)",
        ));
    }
    let r = assemble::resolve_with(
        dat,
        dat_bytes,
        &crate::source::SharedFiles::default(),
        cli.max_work,
    )
    .map_err(|e| conversion(e.in_file(dat.display().to_string()).to_string()))?;
    let archives = open_archives(cli, txn, &r)?;
    let out_dir = match cli.in_place {
        true => None,
        false => Some(out_dir(cli)?),
    };
    let (doc, _) = load_doc(cli, txn)?;
    let mut warnings: Vec<String> = Vec::new();
    let outcomes = edit_parts(cli, &doc, &r, &archives, &mut warnings)?;
    if let Some((_, a)) = archives.iter().next() {
        warnings.extend(super::materials::refuse_pixel_edits(cli, &doc, &a.path)?);
    }
    let written = stage(
        txn,
        &r.parts,
        &outcomes,
        &archives,
        out_dir.as_deref(),
        &mut warnings,
    )?;
    txn.commit().map_err(output_fail)?;
    let mut rows = Vec::new();
    for (k, (p, o)) in r.parts.iter().zip(&outcomes).enumerate() {
        let unchanged = o.edits.is_empty() && o.report.unchanged;
        let summary = if unchanged {
            "unchanged".to_string()
        } else {
            summary(&o.report)
        };
        if !cli.quiet {
            eprintln!(
                "gltf2msh: part {k} {} ({}:{}): {summary}",
                p.record, p.archive, p.mesh_entry
            );
        }
        rows.push(
            json!({"part": k, "record": p.record, "archive": p.archive, "entry": p.mesh_entry,
            "written": !o.edits.is_empty(), "unchanged": unchanged, "summary": summary,
            "import": o.report}),
        );
    }
    if !cli.quiet {
        for (path, n, parts) in &written {
            eprintln!(
                "gltf2msh: wrote {} ({n} bytes; parts {parts:?})",
                path.display()
            );
        }
        if written.is_empty() && warnings.is_empty() {
            eprintln!(
                "gltf2msh: unit {}: unchanged, nothing written",
                dat.display()
            );
        } else if written.is_empty() {
            eprintln!(
                "gltf2msh: unit {}: nothing written; {} warning(s): what they name is not written",
                dat.display(),
                warnings.len()
            );
        }
    }
    super::console::print_warnings(cli, &warnings);
    // "unchanged" only when nothing differs: a warning names a difference
    // that was not written.
    let unchanged =
        written.is_empty() && warnings.is_empty() && rows.iter().all(|r| r["unchanged"] == true);
    Ok(json!({"unit": dat, "unchanged": unchanged, "parts": rows,
        "written": written.iter().map(|w| &w.0).collect::<Vec<_>>(), "warnings": warnings}))
}

/// One line of what a part's edit changed (as a model edit says it).
fn summary(r: &ImportReport) -> String {
    let mut s = format!(
        "{} moved vertices, {} new vertices, slots changed {:?}, rebuilt {:?}, tracks changed {:?}, object transforms written {:?}, {} warning(s)",
        r.moved_vertices, r.new_vertices, r.changed_slots, r.rebuilt_slots, r.changed_tracks, r.baked_nodes, r.warnings.len()
    );
    if !r.control_points.is_empty() {
        s += &format!(", control points: {}", r.control_points.join("; "));
    }
    s
}

/// The folder of the archive copies: `-o` (an existing folder), else the
/// glTF's folder.
fn out_dir(cli: &Args) -> Result<PathBuf, RunError> {
    let dir = match &cli.output {
        Some(o) => o.clone(),
        None => cli
            .input
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    if !dir.is_dir() {
        return Err(usage(format!(
            "with a unit base, -o is the folder for the copies of the edited part archives: {} is not a folder (or give --in-place to change the game's archives)",
            dir.display()
        )));
    }
    Ok(dir)
}

/// Reads every part archive once from the game folder: an input, or with
/// `--in-place` opened for update (locked until the commit).
fn open_archives(
    cli: &Args,
    txn: &mut Transaction,
    r: &Resolved,
) -> Result<BTreeMap<String, PartArchive>, RunError> {
    let mut out = BTreeMap::new();
    for p in &r.parts {
        let key = p.archive.to_lowercase();
        if out.contains_key(&key) {
            continue;
        }
        let path = assemble::find_file(&r.game, &p.archive).ok_or_else(|| {
            usage(format!(
                "unit.resolve: part {} needs the archive {}, which is not in {}",
                p.record,
                p.archive,
                r.game.display()
            ))
        })?;
        let bytes = if cli.in_place {
            txn.plan().reserve_update(&path);
            txn.open_for_update(&path)
                .map_err(output_fail)?
                .ok_or_else(|| usage(format!("part archive {}: no such file", path.display())))?
        } else {
            txn.add_input(&path);
            read_input(&path, "part archive")?
        };
        out.insert(key, PartArchive { path, bytes });
    }
    Ok(out)
}

/// Every part's edit, in part order; the parts that cannot be written are
/// all named in one error. Nodes of no part are a warning in `warnings`.
fn edit_parts(
    cli: &Args,
    doc: &GltfFile,
    r: &Resolved,
    archives: &BTreeMap<String, PartArchive>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Outcome>, RunError> {
    let iopts = import_options(cli);
    let ctx = gltf_import::context(doc, &iopts, None);
    let copts = ConvertOptions {
        fps: ctx.fps,
        up: ctx.up,
        textures: false,
        max_work: cli.max_work,
        ..Default::default()
    };
    let parts_of =
        split::node_parts(doc).map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    split::check_part_numbers(doc, r.parts.len())
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let (units, what) = split::split_work(doc, r.parts.len());
    if units > cli.max_work {
        return Err(conversion(format!(
            "{}: limits.work: {what} make {units} work units, over the budget of {} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
            cli.input.display(),
            cli.max_work
        )));
    }
    for name in split::orphans(doc, &parts_of) {
        warnings.push(format!(
            "object {name:?} belongs to no part of the unit (no extras.msh.part on it or a parent): not written"
        ));
    }
    for m in split::moved_mounts(doc, &parts_of, &r.parts) {
        warnings.push(moved_mount_warning(&m, r));
    }
    refuse_material_edits(cli, doc, &parts_of, r)?;
    let cache = crate::source::SharedFiles::default();
    for a in archives.values() {
        cache.insert(a.path.clone(), a.bytes.clone());
    }
    let scaled = split::inherited_scales(doc, &parts_of);
    let (mut outs, mut errors) = (Vec::new(), Vec::new());
    for (k, p) in r.parts.iter().enumerate() {
        let res = split::part_export(&r.game, p, &copts, &cache)
            .map_err(|e| e.to_string())
            .and_then(|own| {
                split::part_document(doc, &parts_of, k, &own).map_err(|e| e.to_string())
            })
            .and_then(|pdoc| edit_part(&iopts, &pdoc, p, archives));
        match res {
            Ok(mut o) => {
                if let Some(s) = scaled.iter().find(|s| s.part == k) {
                    o.report.warnings.push(inherited_scale_warning(s, p));
                    o.report.unchanged = false;
                }
                warnings.extend(
                    o.report
                        .warnings
                        .iter()
                        .map(|w| format!("part {k} {}: {w}", p.record)),
                );
                outs.push(o);
            }
            Err(e) => errors.push(format!(
                "part {k} {} ({}:{}): {e}",
                p.record, p.archive, p.mesh_entry
            )),
        }
    }
    if !errors.is_empty() {
        return Err(conversion(format!(
            "{}: {} part(s) cannot be written, nothing written: {}",
            cli.input.display(),
            errors.len(),
            errors.join("; ")
        )));
    }
    Ok(outs)
}

/// The warning for an object of a mounted part hung elsewhere than on
/// its socket ([`split::moved_mounts`]).
fn moved_mount_warning(m: &split::MovedMount, r: &Resolved) -> String {
    let p = &r.parts[m.part];
    let now = match &m.now {
        Some((n, Some(j))) => format!("now hangs on {n:?} (part {j} {})", r.parts[*j].record),
        Some((n, None)) => format!("now hangs on {n:?} (no part)"),
        None => "is now a scene root".to_string(),
    };
    let socket = match (p.parent_part, p.socket) {
        (Some(pp), Some(s)) => format!("node {s} of part {pp} {}", r.parts[pp].record),
        _ => "its socket".to_string(),
    };
    format!(
        "part {} {}: object {:?} {now}, not on its socket ({socket}, the unit file's component {} attach): the new mount is not written; the game mounts the part where the unit file says (edit the .dat to move it)",
        m.part, p.record, m.node, p.component
    )
}

/// Refuses material edits of a unit's parts before any part is edited,
/// naming each edited material once with the part(s) whose objects draw
/// it, and the way that writes them: the part's own `ARCHIVE:ENTRY` with
/// `--game-dir` (a unit base does not take `--game-dir`).
///
/// # Errors
/// [`RunError::Conversion`] with rule `gltf.material_edit`.
fn refuse_material_edits(
    cli: &Args,
    doc: &GltfFile,
    parts_of: &[Option<usize>],
    r: &Resolved,
) -> Result<(), RunError> {
    let edited = gltf_import::material_edits::edits(doc);
    if edited.is_empty() {
        return Ok(());
    }
    let mut lines = Vec::new();
    for e in &edited {
        let mut users: Vec<usize> = Vec::new();
        for (g, n) in doc.nodes().iter().enumerate() {
            let Some(k) = parts_of.get(g).copied().flatten() else {
                continue;
            };
            let mesh = gltf_import::read::idx(n, "mesh").and_then(|m| doc.meshes().get(m));
            let uses = mesh.is_some_and(|m| {
                gltf_import::read::arr(m, "primitives")
                    .iter()
                    .any(|p| gltf_import::read::idx(p, "material") == Some(e.index))
            });
            if uses && !users.contains(&k) {
                users.push(k);
            }
        }
        users.sort_unstable();
        let whose = if users.is_empty() {
            "drawn by no part".to_string()
        } else {
            users
                .iter()
                .map(|&k| {
                    let p = &r.parts[k];
                    format!("part {k} {} ({}:{})", p.record, p.archive, p.mesh_entry)
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let way = users.first().map_or(String::new(), |&k| {
            let p = &r.parts[k];
            let a = assemble::find_file(&r.game, &p.archive)
                .unwrap_or_else(|| r.game.join(&p.archive));
            format!(
                "; to recolour it, export that part on its own (msh2gltf \"{a}:{e}\" part.glb), make the edit there and write it with gltf2msh part.glb --base \"{a}:{e}\" -o out/{n} --game-dir \"{g}\" (its material is in the game's Material.lib/Textures.lib, shared by every model drawing it)",
                a = a.display(),
                e = p.mesh_entry,
                n = p.archive,
                g = r.game.display()
            )
        });
        lines.push(format!(
            "material {} {:?} ({}): {}{way}",
            e.index,
            e.gltf_name,
            e.changes.join(", "),
            whose
        ));
    }
    Err(conversion(format!(
        "{}: gltf.material_edit: a unit's parts are written without their materials (a unit base takes no --game-dir), so this recolour would be lost: {}; or revert it",
        cli.input.display(),
        lines.join("; ")
    )))
}

/// The warning for a part Blender shows scaled by its socket
/// ([`split::inherited_scales`]).
fn inherited_scale_warning(s: &split::InheritedScale, p: &Part) -> String {
    let f = |x: f64| format!("{x:.4}");
    format!(
        "shown scaled x[{}, {}, {}] by the objects it is mounted on (socket {:?}); not written: the game mounts a part at its own size. Scale the part's own objects to resize its model ({}:{}, which every unit using it shares)",
        f(s.scale[0]),
        f(s.scale[1]),
        f(s.scale[2]),
        s.socket,
        p.archive,
        p.mesh_entry
    )
}

fn import_options(cli: &Args) -> ImportOptions {
    ImportOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
        write_materials: false,
        base_clips: None,
    }
}

/// One part's model edit against its archive entry (as `--base
/// ARCHIVE:ENTRY`), with its `.cpt` entry when its control points changed.
fn edit_part(
    opts: &ImportOptions,
    pdoc: &GltfFile,
    p: &Part,
    archives: &BTreeMap<String, PartArchive>,
) -> Result<Outcome, String> {
    let key = p.archive.to_lowercase();
    let a = &archives[&key];
    let arch = nres::read(&a.bytes, nres::Mode::Strict).map_err(|e| e.to_string())?;
    let i = source::find_entry(&arch, &p.mesh_entry)?;
    let base_bytes = arch.entries[i].data;
    let decoded =
        msh::decode(base_bytes, msh::Mode::Strict).map_err(|e| format!("base model: {e}"))?;
    // The part's clips take their ranges from its .ctl entry.
    let sib = crate::unit::siblings::in_archive(
        &arch,
        &a.path.display().to_string(),
        arch.entries[i].name,
    );
    let opts = &ImportOptions {
        base_clips: sib
            .parse()
            .ctl
            .map(|c| crate::unit::clips::base_clips(&c, &decoded.model)),
        ..opts.clone()
    };
    let mut imp =
        gltf_import::import_with_base(pdoc, &decoded.model, opts).map_err(|e| e.to_string())?;
    let base_cpt = points::in_archive(&a.path, &a.bytes, i);
    let n_warnings = imp.report.warnings.len();
    let cpt_edit = points::edit(
        imp.points_doc.as_ref().unwrap_or(pdoc),
        base_cpt.as_ref(),
        &imp.res1_of,
        imp.up,
        &mut imp.report.warnings,
    )
    .map_err(|e| e.to_string())?
    .filter(|e| !e.changes.is_empty());
    if imp.report.warnings.len() > n_warnings {
        imp.report.unchanged = false;
    }
    let model_bytes =
        msh::encode(&imp.model).map_err(|e| format!("the edited model is invalid: {e}"))?;
    let mut edits = Vec::new();
    if model_bytes != base_bytes {
        edits.push((i, model_bytes));
    }
    if let (Some(e), Some(CptHome::Entry(j))) = (cpt_edit, base_cpt.map(|c| c.home)) {
        edits.push((j, cpt::write(&e.cpt)));
        imp.report.control_points = e.changes;
        imp.report.warnings.extend(e.warnings);
        imp.report.unchanged = false;
    }
    Ok(Outcome {
        archive: key,
        entry: i,
        edits,
        report: imp.report,
    })
}

/// Stages every archive with an edited entry (a copy in `out_dir`, or the
/// archive itself when `None`); returns (path, bytes, parts) per archive
/// written. A part sharing its entry with an edited part (a gun mounted
/// twice) is a warning; two different edits of one entry are refused.
fn stage(
    txn: &mut Transaction,
    parts: &[Part],
    outcomes: &[Outcome],
    archives: &BTreeMap<String, PartArchive>,
    out_dir: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<Vec<(PathBuf, usize, Vec<usize>)>, RunError> {
    let mut by_entry: BTreeMap<(&str, usize), (&[u8], usize)> = BTreeMap::new();
    for (k, o) in outcomes.iter().enumerate() {
        for (i, b) in &o.edits {
            match by_entry.get(&(o.archive.as_str(), *i)) {
                Some((b0, k0)) if *b0 != b.as_slice() => {
                    return Err(conversion(format!(
                        "parts {k0} and {k} are the same entry {}:{} edited differently; make the same edit on both or edit one",
                        parts[k].archive, parts[k].mesh_entry
                    )))
                }
                Some(_) => {}
                None => {
                    by_entry.insert((o.archive.as_str(), *i), (b.as_slice(), k));
                }
            }
        }
    }
    for (k, o) in outcomes.iter().enumerate() {
        if let Some((_, k0)) = by_entry.get(&(o.archive.as_str(), o.entry)) {
            if o.edits.is_empty() {
                warnings.push(format!(
                    "part {k} {}: not edited, but it is the same entry {}:{} as part {k0}, whose edit the game shows on both",
                    parts[k].record, parts[k].archive, parts[k].mesh_entry
                ));
            }
        }
    }
    let mut written = Vec::new();
    for (key, a) in archives {
        let edits: Vec<_> = by_entry.iter().filter(|((n, _), _)| n == key).collect();
        if edits.is_empty() {
            continue;
        }
        let arch =
            nres::read(&a.bytes, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
        let mut entries = arch.entries.clone();
        let mut by: Vec<usize> = Vec::new();
        for ((_, i), (b, k)) in &edits {
            entries[*i].data = b;
            if !by.contains(k) {
                by.push(*k);
            }
        }
        by.sort_unstable();
        let bytes =
            nres::write(&entries).map_err(|e| conversion(format!("{}: {e}", a.path.display())))?;
        let target = match out_dir {
            Some(d) => d.join(a.path.file_name().unwrap_or_default()),
            None => a.path.clone(),
        };
        let n = bytes.len();
        txn.stage(&target, bytes).map_err(|e| {
            let hint = match e {
                crate::output::OutputError::IsInput(_) => {
                    " (that is the game's archive: give another -o folder, or --in-place to change it)"
                }
                _ => "",
            };
            let f = output_fail(e);
            match f {
                RunError::Usage(m) => usage(format!("{m}{hint}")),
                c => c,
            }
        })?;
        written.push((target, n, by));
    }
    Ok(written)
}
