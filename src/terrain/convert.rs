//! One map, file to file: Land.msh (+ siblings) → .glb / .gltf, through
//! the output transaction of [`crate::output`].

use std::path::{Path, PathBuf};

use super::export::{self, TerrainExportOptions, TerrainGltf};
use super::source::TerrainSource;
use super::{Mode, TerrainError};
use crate::material::Libraries;
use crate::output::{Transaction, TxnOptions};

/// What [`convert_file`] did.
#[derive(Debug, Clone)]
pub struct ConvertedMap {
    /// Files written.
    pub outputs: Vec<PathBuf>,
    /// The export (counts, warnings).
    pub gltf: TerrainGltf,
    /// Res3 vertex count of the map.
    pub src_vertices: usize,
    /// The validation notes (facts that need no action; `-v`).
    pub notes: Vec<String>,
}

/// The libraries for a map (terrain-notes: Land1 → Material.lib →
/// Textures.lib): `game_dir`, else the map's folder and up the tree
/// ([`Libraries::lookup`]). A library that does not load is left out with
/// a warning naming it ([`Libraries::load_lenient`]; maps never read
/// `LightMap.lib`, so a broken one costs them nothing); with no folder
/// found, one warning says where it looked. Returns the libraries and the
/// warnings.
pub fn libraries_for(msh: &Path, game_dir: Option<&Path>) -> (Option<Libraries>, Vec<String>) {
    let found = Libraries::lookup(msh, game_dir);
    let Some(dir) = found.dir.as_deref() else {
        return (None, vec![no_libraries(&found)]);
    };
    let (libs, warnings) = Libraries::load_lenient(dir);
    (Some(libs), warnings)
}

/// [`libraries_for`] loading through the run's shared inputs `files`
/// ([`Libraries::load_shared`] with `order`: once per run for every map,
/// model and mission that uses the folder; issue 28 item 1).
pub fn libraries_shared(
    msh: &Path,
    game_dir: Option<&Path>,
    order: crate::convention::TexmOrder,
    files: &crate::source::SharedFiles,
) -> (Option<std::sync::Arc<Libraries>>, Vec<String>) {
    let found = Libraries::lookup(msh, game_dir);
    let Some(dir) = found.dir.as_deref() else {
        return (None, vec![no_libraries(&found)]);
    };
    let (libs, warnings) = Libraries::load_shared(dir, order, files);
    (Some(libs), warnings)
}

/// The warning of a map (or mission) for which no library folder was
/// found, naming where it looked.
fn no_libraries(found: &crate::material::LibraryLookup) -> String {
    format!(
        "no Material.lib or Textures.lib found (looked in {}): the map's materials are untextured; pass --game-dir",
        found.searched_text()
    )
}

/// The work a map's export costs, in [`crate::limits`] units, and what
/// was counted: Res21 faces (1 each), Res3 vertices (2 each: about 64
/// output bytes, [`crate::limits::BYTES_PER_UNIT`]), face classes (each a
/// glTF material and a primitive per exported LOD:
/// 2 x [`crate::limits::UNITS_PER_PRIMITIVE`]), Res1 grid squares and
/// Res2 cells (1 each) and Land1/Land2 WEAR rows
/// ([`crate::limits::UNITS_PER_PRIMITIVE`] each: a row resolves a material
/// and its textures).
pub fn work(src: &TerrainSource) -> (u64, String) {
    let (units, what) = land_work(&src.land);
    let rows = src.land1.as_ref().map_or(0, |w| w.materials.len())
        + src.land2.as_ref().map_or(0, |w| w.materials.len());
    let p = crate::limits::UNITS_PER_PRIMITIVE;
    (
        units.saturating_add(p * rows as u64),
        format!("{what}, {rows} WEAR rows"),
    )
}

/// The part of [`work`] that Land.msh alone gives (faces, vertices, face
/// classes, grid squares and cells): counted right after the streams are
/// decoded, before the validation (terrain-notes §5.2) walks them.
pub fn land_work(land: &crate::terrain::ir::Land) -> (u64, String) {
    let classes: std::collections::HashSet<_> = land.faces.iter().map(|f| f.class()).collect();
    let (f, v, c) = (land.faces.len(), land.positions.len(), classes.len());
    let cells = land.squares.len() + land.slots.len();
    let p = crate::limits::UNITS_PER_PRIMITIVE;
    let units = f as u64 + 2 * v as u64 + 2 * p * c as u64 + cells as u64;
    (
        units,
        format!(
            "{f} faces, {v} vertices, {c} face classes (materials), {cells} grid squares and cells"
        ),
    )
}

/// Refuses a map whose export costs more than `opts.max_work`
/// ([`work`]; issue 26 item 5), before any of it is built.
///
/// # Errors
/// `limits.work` naming what was counted and the budget.
pub fn check_work(src: &TerrainSource, opts: &TerrainExportOptions) -> Result<(), TerrainError> {
    let (units, what) = work(src);
    if units > opts.max_work {
        return Err(TerrainError::file(
            "limits.work",
            format!(
                "{}: {what} make {units} work units, over the budget of {} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                src.path.display(),
                opts.max_work
            ),
        ));
    }
    Ok(())
}

/// Converts `msh` (a Land.msh; its siblings are found beside it) into `out`
/// (`.gltf` writes a `.bin` beside it, anything else is GLB).
///
/// # Errors
/// The load rules of [`TerrainSource::load`]; `output.*` rules of the write
/// transaction (as `TerrainError::file`); `gltf.json`.
pub fn convert_file(
    msh: &Path,
    out: &Path,
    mode: Mode,
    libs: Option<&Libraries>,
    opts: &TerrainExportOptions,
    force: bool,
) -> Result<ConvertedMap, TerrainError> {
    let src = TerrainSource::load_within(msh, mode, libs, opts.max_work)?;
    check_work(&src, opts)?;
    let gltf = export::export(&src, libs, opts);
    let json_err = |e: serde_json::Error| TerrainError::file("gltf.json", e.to_string());
    let out_err = |e: crate::output::OutputError| TerrainError::file(e.rule(), e.to_string());
    let is_gltf = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    // One transaction (crate::output): the map and its siblings are inputs,
    // the .gltf and its .bin are committed together.
    let mut txn = Transaction::new(TxnOptions::from_env(force));
    for p in &src.inputs {
        txn.add_input(p);
    }
    let outputs = if is_gltf {
        let bin_path = out.with_extension("bin");
        let uri = bin_path
            .file_name()
            .map_or_else(|| "Land.bin".into(), |n| n.to_string_lossy().into_owned());
        let (json, bin) = export::to_gltf(&gltf, &uri).map_err(json_err)?;
        txn.stage(&bin_path, bin).map_err(out_err)?;
        txn.stage(out, json).map_err(out_err)?;
        vec![out.to_path_buf(), bin_path]
    } else {
        let glb = export::to_glb(&gltf)?;
        txn.stage(out, glb).map_err(out_err)?;
        vec![out.to_path_buf()]
    };
    txn.commit().map_err(out_err)?;
    Ok(ConvertedMap {
        outputs,
        gltf,
        src_vertices: src.land.positions.len(),
        notes: src.findings.notes.iter().map(ToString::to_string).collect(),
    })
}
