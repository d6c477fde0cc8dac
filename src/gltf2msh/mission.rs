//! `--base MISSIONS/<…>/data.tma`: a mission scene written back over the
//! mission it was exported from ([`crate::mission::back::apply`],
//! mission-notes §8.7). Unedited: the base's bytes.
//!
//! The scene is compared with the one msh2gltf makes of the base (the
//! reference: what the user started from), and an edited mission is
//! checked as msh2gltf would read it before anything is committed: the
//! strict reader (§9 errors 1–5), every path inside the game folder, and
//! the strict export of the new mission (every object resolves, every
//! hosted unit's hall-way vertex exists: §9 errors 5–6; issue 36 item 7).
//!
//! Moved and new objects meet the ground rule of mission-notes §5.4
//! ([`crate::mission::ground`]): `--drop-to-ground` sets them down, and
//! without it each one left more than 0.25 off the ground is a warning.

use std::path::Path;

use super::{claim, conversion, output_fail, read_doc, Args, RunError};
use crate::gltf_import::GltfFile;
use crate::mission::pipeline::{game_of, MissionSource};
use crate::mission::{back, tma, validate, Mission, MissionError, Mode};
use crate::output::Transaction;
use crate::run::ConvertOptions;

/// Writes `-o` (default: the input with `.tma`; with `--in-place` the
/// base itself, an install whose original is kept) from the glTF's objects
/// over the base mission `base_path` (bytes `base_bytes`), checked before
/// it is committed (module docs). Returns the report's `import` object.
///
/// # Errors
/// [`RunError::Conversion`]: the base does not read or has no game
/// folder, the glTF is not a mission, is over the mission budget
/// (`limits.work`), or names a node it cannot write (`mission.node`,
/// `gltf.json`, `gltf.hierarchy`), or the result breaks a §9 rule or
/// would not export; [`RunError::Usage`]: a model path the edit chose
/// (a new object's, an edited one) that does not resolve in the game
/// folder (`mission.resolve`, naming the node, the path and the kind:
/// [`crate::mission::assets::refuse_unresolved`]), the output is refused, or
/// `--in-place` was given with another `-o`.
pub(super) fn edit_mission(
    cli: &Args,
    txn: &mut Transaction,
    base_path: &Path,
    base_bytes: &[u8],
) -> Result<serde_json::Value, RunError> {
    // In place (an install, its original kept: output::install) or to -o.
    let (out, in_place) = cli.file_output("tma");
    if cli.in_place && in_place.is_none() {
        return Err(super::usage(format!(
            "--in-place with the mission base {} and -o {}: --in-place writes the mission over its own data.tma (its original kept in the game's .mshgltf-originals); give one of the two",
            base_path.display(),
            out.display()
        )));
    }
    if in_place.is_none() {
        txn.add_input(base_path);
    }
    // The text files beside the base are the mission's too (issue 36 item 1).
    for f in crate::mission::pipeline::text_file_paths(base_path) {
        txn.add_input(&f);
    }
    let (doc, _) = read_doc(cli, txn)?;
    let input = cli.input.display().to_string();
    back::check_budget(&doc, cli.max_work).map_err(|e| conversion(format!("{input}: {e}")))?;
    if in_place.is_none() {
        claim(
            txn,
            &out,
            " (choose another output with -o, or install it with --in-place)",
        )?;
    }
    let mut budget = crate::limits::Budget::new(cli.max_work);
    let (base, _) = tma::read_counted(base_bytes, Mode::Tolerant, &mut budget)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    let up =
        back::conventions_up(&doc.to_json()).map_err(|e| conversion(format!("{input}: {e}")))?;
    let opts = ConvertOptions {
        up,
        mode: crate::msh::read::Mode::Tolerant,
        textures: false,
        max_work: cli.max_work,
        ..Default::default()
    };
    let game = game_of(base_path, cli.game_dir.as_deref()).ok_or_else(|| {
        conversion(format!(
            "base {}: no objects.rlb in the folders above it (pass --game-dir): the scene is compared with the base's and the edit checked against the game's files",
            base_path.display()
        ))
    })?;
    let reference = scene_of(txn, base_path, &base, &game, &opts)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    let mut w =
        back::apply(&doc, &base, &reference).map_err(|e| conversion(format!("{input}: {e}")))?;
    // A model the edit chose that the game does not have is refused
    // before anything is written (exit 2; §9 error 6).
    crate::mission::assets::refuse_unresolved(&w, &base, &game)
        .map_err(|e| super::usage(format!("{input}: {e}")))?;
    let ground = Grounding {
        reference: &reference,
        edited: &doc,
        up,
        game: &game,
        drop: cli.drop_to_ground,
        quiet: cli.quiet,
    };
    let ground_rows = settle_on_ground(&ground, txn, &mut w, &base)?;
    let bytes = tma::write(&w.mission);
    if bytes != base_bytes {
        check_written(txn, base_path, &bytes, &game, &opts)
            .map_err(|e| conversion(format!("the edited mission is invalid: {e}")))?;
    }
    // "unchanged" only when nothing differs: a difference not written (a
    // piece moved inside a model, a kind 0/1 scale) is a warning, and then
    // not unchanged.
    let unchanged = bytes == base_bytes && w.warnings.is_empty();
    let n_bytes = bytes.len();
    txn.stage(&out, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
    if !cli.quiet {
        eprintln!(
            "gltf2msh: wrote {} ({n_bytes} bytes; {})",
            out.display(),
            summary(&w, unchanged, &ground_rows)
        );
    }
    super::console::print_warnings(cli, &w.warnings);
    let set = set_count(&ground_rows);
    Ok(
        serde_json::json!({"kind": "mission", "unchanged": unchanged, "moved": w.moved,
        "edited": w.edited, "deleted": w.deleted, "added": w.added, "layers": w.layers,
        "clans": w.clans,
        "set_on_ground": set, "ground": ground_rows, "warnings": w.warnings}),
    )
}

/// What the ground rule of a write-back reads: the scene msh2gltf makes of
/// the base (`reference`), the scene being written (`edited`: a new
/// unit's model under its node), their up axis, the game folder, whether
/// `--drop-to-ground` was given and whether `-q`.
pub(super) struct Grounding<'a> {
    pub reference: &'a GltfFile,
    pub edited: &'a GltfFile,
    pub up: crate::convention::Up,
    pub game: &'a Path,
    pub drop: bool,
    pub quiet: bool,
}

/// The ground rule over the moved and new objects of `w`
/// ([`crate::mission::ground::settle`]) on the map of `base`: with
/// `--drop-to-ground` their z set on the ground (each one moved printed
/// unless `-q`), without a warning for each left off it; the map and the
/// files the rule reads are inputs of `txn`. Returns the report's `ground`
/// rows. Shared with the new-mission writer (every object new, on the new
/// mission's map).
///
/// # Errors
/// [`RunError::Conversion`] when the map of `base` does not read.
pub(super) fn settle_on_ground(
    g: &Grounding<'_>,
    txn: &mut Transaction,
    w: &mut back::Written,
    base: &Mission,
) -> Result<Vec<serde_json::Value>, RunError> {
    use crate::mission::ground;
    let (land, map) =
        ground::load_land(g.game, base).map_err(|e| conversion(format!("base map: {e}")))?;
    txn.add_input(&map);
    let mut footings = ground::Footings::new(g.reference, g.up, g.game).with_edited(g.edited);
    let rows = ground::settle(w, base, &land, &mut footings, g.drop)
        .map_err(|e| conversion(format!("base scene: {e}")))?;
    for f in &footings.inputs {
        txn.add_input(f);
    }
    if !g.quiet {
        let moved = |r: &&serde_json::Value| {
            r["set"] == true && r["off"].as_f64().is_some_and(|d| d.abs() > 1e-3)
        };
        for r in rows.iter().filter(moved) {
            eprintln!(
                "gltf2msh: {}: set down on the ground: z {:.2} -> {:.2} ({})",
                r["node"].as_str().unwrap_or("?"),
                r["z"].as_f64().unwrap_or(0.0),
                r["ground_z"].as_f64().unwrap_or(0.0),
                r["rule"].as_str().unwrap_or("")
            );
        }
    }
    Ok(rows)
}

/// The rows whose object `--drop-to-ground` moved (by more than 1e-3).
pub(super) fn set_count(rows: &[serde_json::Value]) -> usize {
    rows.iter()
        .filter(|r| r["set"] == true && r["off"].as_f64().is_some_and(|d| d.abs() > 1e-3))
        .count()
}

fn summary(w: &back::Written, unchanged: bool, ground: &[serde_json::Value]) -> String {
    if unchanged {
        return "unchanged".to_string();
    }
    format!(
        "{} objects moved, {} edited, {} deleted, {} added{}; {} lodes, clan bases, zones and routes moved{}{}",
        w.moved,
        w.edited,
        w.deleted,
        w.added,
        ground_clause(ground),
        w.layers,
        match w.clans {
            0 => String::new(),
            n => format!("; {n} clans edited (renamed, retyped, relations: named below)"),
        },
        warnings_clause(w.warnings.len())
    )
}

/// What the ground rule did, for a summary line: ` (N set down on the
/// ground, M written at their own height more than 0.25 off it)`, each
/// part only when not 0, or empty. Shared with the new-mission writer.
pub(super) fn ground_clause(ground: &[serde_json::Value]) -> String {
    let tol = f64::from(crate::mission::ground::TOLERANCE);
    let off = ground
        .iter()
        .filter(|r| r["set"] != true && r["off"].as_f64().is_some_and(|d| d.abs() > tol))
        .count();
    let parts: Vec<String> = [
        (set_count(ground), "set down on the ground"),
        (
            off,
            "written at their own height more than 0.25 off the ground",
        ),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, t)| format!("{n} {t}"))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The warnings' clause of a summary line: `; N warning(s) below (…)`, or
/// empty. A warning is a note on a decision the write-back made (an id, a
/// height, an owner: written) or a difference it could not write (its
/// text says "not written" or what is kept instead), so the clause claims
/// neither for all of them. Shared with the new-mission writer.
pub(super) fn warnings_clause(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(
            "; {n} warning(s) below (each says how what it names was written, or that it was not and what was kept)"
        ),
    }
}

/// The scene msh2gltf makes of `mission` (its bytes `path`'s, or about to
/// be), every file it reads an input of `txn` (but `path` itself: the base,
/// registered by the caller, or the output about to be written). Shared
/// with the new-mission writer.
pub(super) fn scene_of(
    txn: &mut Transaction,
    path: &Path,
    mission: &Mission,
    game: &Path,
    opts: &ConvertOptions,
) -> Result<GltfFile, MissionError> {
    let src = MissionSource {
        path: path.to_path_buf(),
        bytes: Vec::new(),
        mission: mission.clone(),
        warnings: Vec::new(),
        game: game.to_path_buf(),
        files: Vec::new(),
    };
    let s = src.scene(None, opts, &crate::source::SharedFiles::default())?;
    for f in s.inputs.iter().filter(|f| f.as_path() != path) {
        txn.add_input(f);
    }
    Ok(GltfFile::new(s.json, vec![s.bin]))
}

/// The checks msh2gltf would make of `bytes` (module docs): the strict
/// reader, every path inside the game folder, every record resolving
/// (mission-notes §9 errors 1–6) and the strict scene. Shared with the
/// new-mission writer.
pub(super) fn check_written(
    txn: &mut Transaction,
    path: &Path,
    bytes: &[u8],
    game: &Path,
    opts: &ConvertOptions,
) -> Result<(), MissionError> {
    let (m, _) = tma::read(bytes, Mode::Strict)?;
    let found = validate::confined(&m)
        .into_iter()
        .chain(validate::resolve(&m, game));
    if let Some(e) = found.into_iter().next() {
        return Err(e);
    }
    let strict = ConvertOptions {
        mode: crate::msh::read::Mode::Strict,
        ..opts.clone()
    };
    scene_of(txn, path, &m, game, &strict).map(|_| ())
}
