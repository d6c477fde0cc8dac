//! `gltf2msh terrain.glb --new-map MAPS/<name> [--palette MAPS/<existing>]`
//! (issue 38 item 1): a new map folder from a grid mesh
//! ([`crate::terrain::author`]): `Land.msh`, `Land.map`, and the palette
//! map's `Land1.wea` / `Land2.wea`, the four files in one transaction,
//! each read back as the game reads it before the commit.

use std::path::{Path, PathBuf};

use super::{claim, conversion, load_doc, output_fail, usage, Args, RunError};
use crate::output::Transaction;
use crate::source::file_any_case;
use crate::terrain::author;

/// The four files of a map folder.
const FILES: [&str; 4] = ["Land.msh", "Land.map", "Land1.wea", "Land2.wea"];

/// The palette folder: `--palette`, else the map the glTF names (node
/// extras `parkan_map_palette`) beside the new one, else the first map
/// folder (by name) beside the new one with both `.wea` tables.
fn palette_dir(cli: &Args, hint: Option<String>, out: &Path) -> Result<PathBuf, RunError> {
    if let Some(p) = &cli.palette {
        return Ok(p.clone());
    }
    let maps = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(h) = hint.filter(|h| !h.is_empty() && !h.contains(['/', '\\'])) {
        return Ok(maps.join(h));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(maps)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .find(|d| {
            !crate::output::same_file(d, out)
                && file_any_case(d, "Land1.wea").is_some()
                && file_any_case(d, "Land2.wea").is_some()
        })
        .ok_or_else(|| {
            usage(format!(
                "--new-map {}: no palette map: give --palette MAPS/<existing> (a map folder whose Land1.wea rows the new map paints with)",
                out.display()
            ))
        })
}

/// Reads the palette's two WEAR tables (inputs of the run).
fn read_palette(
    txn: &mut Transaction,
    dir: &Path,
) -> Result<(author::Palette, Vec<u8>, Vec<u8>), RunError> {
    let mut out = Vec::new();
    for name in ["Land1.wea", "Land2.wea"] {
        let p = file_any_case(dir, name).ok_or_else(|| {
            usage(format!(
                "--palette {}: no {name} there (a palette is an existing map folder: MAPS/<name>)",
                dir.display()
            ))
        })?;
        txn.add_input(&p);
        let bytes = super::read_input(&p, "palette")?;
        let wear = crate::material::Wear::parse(&bytes)
            .map_err(|e| conversion(format!("palette {}: {e}", p.display())))?;
        out.push((wear, bytes));
    }
    let (w2, b2) = out.pop().expect("two tables");
    let (w1, b1) = out.pop().expect("two tables");
    if w1.materials.len() != w2.materials.len() || w1.materials.len() < 2 {
        return Err(conversion(format!(
            "palette {}: Land1.wea has {} rows, Land2.wea {}: a map's two tables have the same length, at least 2 (terrain-notes §1.10)",
            dir.display(),
            w1.materials.len(),
            w2.materials.len()
        )));
    }
    let rows = w1.materials.iter().map(|r| r.name.clone()).collect();
    Ok((author::Palette { rows }, b1, b2))
}

/// `--new-map DIR`: refuses an existing map (unless `--force`), reads the
/// grid, makes and checks the map, and writes the folder's four files in
/// one transaction. Returns the report's `new_map` object.
///
/// # Errors
/// Exit 2: an existing map without `--force`, no palette, a mesh that is
/// not a map grid (`terrain.new_map.*`, naming the vertex or face and what
/// to do). Exit 1: an unreadable glTF or palette, a write failure.
pub(super) fn run(
    cli: &Args,
    txn: &mut Transaction,
    out: &Path,
) -> Result<serde_json::Value, RunError> {
    if out.is_file() {
        return Err(usage(format!(
            "--new-map {}: a file, not a map folder",
            out.display()
        )));
    }
    let existing: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| file_any_case(out, f).is_some())
        .collect();
    if !existing.is_empty() && !cli.force {
        return Err(usage(format!(
            "--new-map {}: a map is already there ({}): a new map never replaces one; choose another folder name, or give --force to replace it",
            out.display(),
            existing.join(", ")
        )));
    }
    let (doc, _) = load_doc(cli, txn)?;
    let hint = author::palette_hint(&doc)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let pdir = palette_dir(cli, hint, out)?;
    let (palette, land1, land2) = read_palette(txn, &pdir)?;
    let grid = author::read_grid(&doc, &palette).map_err(|e| {
        let msg = format!("{}: {e}", cli.input.display());
        // A mesh that is not a map grid is refused (2); unreadable data fails (1).
        if e.rule.starts_with("terrain.new_map.") {
            usage(msg)
        } else {
            conversion(msg)
        }
    })?;
    let spec = grid.spec;
    let made =
        author::make(grid).map_err(|e| conversion(format!("the new map is invalid: {e}")))?;
    let created = !out.exists();
    if created {
        std::fs::create_dir_all(out)
            .map_err(|e| conversion(format!("--new-map {}: {e}", out.display())))?;
    }
    let res = commit(
        cli,
        txn,
        out,
        [made.msh.clone(), made.map.clone(), land1, land2],
    );
    if res.is_err() && created {
        let _ = std::fs::remove_dir(out); // only when still empty
    }
    res?;
    let (v, f, a) = made.counts;
    if !cli.quiet {
        eprintln!(
            "gltf2msh: wrote new map {} (Land.msh, Land.map, Land1.wea, Land2.wea; {}x{} squares of {}x{} quads, side {} units; {v} vertices, {f} faces in 2 LODs, {a} areals; palette {})",
            out.display(),
            spec.squares,
            spec.squares,
            spec.quads,
            spec.quads,
            spec.side,
            pdir.display()
        );
    }
    super::console::print_warnings(cli, &made.warnings);
    Ok(serde_json::json!({
        "folder": out, "palette": pdir, "squares": spec.squares, "quads": spec.quads,
        "side": spec.side, "vertices": v, "faces": f, "areals": a, "warnings": made.warnings,
    }))
}

fn commit(
    cli: &Args,
    txn: &mut Transaction,
    out: &Path,
    bytes: [Vec<u8>; 4],
) -> Result<(), RunError> {
    let _ = cli;
    for (name, b) in FILES.iter().zip(bytes) {
        let p = file_any_case(out, name).unwrap_or_else(|| out.join(name));
        claim(txn, &p, " (choose another --new-map folder)")?;
        txn.stage(&p, b).map_err(output_fail)?;
    }
    txn.commit().map_err(output_fail)?;
    Ok(())
}
