//! The Res2 slots of an authored model (module docs of [`super`], points
//! 3, 6 and 8): one slot per (glTF mesh, baked residual) placed in its
//! node's cells, the triangle limit, the lightmap row and the batches.

use std::collections::{HashMap, HashSet};

use super::bake::{shear_warnings, NodeInfo};
use super::parts::mesh_parts;
use super::tree::Tree;
use super::{err, AuthorCx, AuthorOptions, AuthorReport};
use crate::gltf_import::read::{idx, GltfFile};
use crate::gltf_import::simplify::{self, RawPrim, MAX_TRIANGLES};
use crate::gltf_import::ImportError;
use crate::material::wear::WearRow;
use crate::msh::build::{split_part, ModelBuilder};

/// What the slots step gives the node step and the WEAR table.
pub(super) struct Slots {
    /// Per Res1 node: `(cell, slot)` pairs.
    pub(super) cells: Vec<Vec<(usize, u16)>>,
    /// The LIGHTMAPS rows (at most one).
    pub(super) lightmaps: Vec<WearRow>,
}

/// Geometry: one slot per (mesh, baked scale), added to `b`, with the
/// shear and unused-mesh warnings.
///
/// # Errors
/// Reading the meshes (see [`mesh_parts`]), `gltf.limits` (over
/// [`MAX_TRIANGLES`] without [`AuthorOptions::simplify`], a slot the
/// builder refuses), `gltf.accessor` (a batch that cannot be split),
/// `gltf.empty` (no triangles).
pub(super) fn build(
    cx: &mut AuthorCx,
    tree: &Tree,
    info: &[NodeInfo],
    b: &mut ModelBuilder,
    report: &mut AuthorReport,
) -> Result<Slots, ImportError> {
    let placements = placements(cx.doc, tree, report);
    let (mut pending, cells, used_meshes) = pending_slots(cx, &placements, info, report)?;
    let triangles = fit_triangles(&mut pending, cx.opts, report)?;
    let lightmaps = lightmap_row(cx.doc, &pending, report);
    for prims in &pending {
        let mut parts = Vec::new();
        for p in prims {
            let mut split = split_part(p.material, &p.vertices, &p.indices)
                .map_err(|e| err("gltf.accessor", e.to_string()))?;
            for part in &mut split {
                part.lit = p.lit;
            }
            parts.extend(split);
        }
        b.add_slot(&parts)
            .map_err(|e| err("gltf.limits", e.to_string()))?;
    }
    shear_warnings(cx.doc, tree, info, &placements, cx.opts, report)?;
    let meshes = cx.doc.meshes().len();
    let unused: Vec<usize> = (0..meshes).filter(|m| !used_meshes.contains(m)).collect();
    if !unused.is_empty() {
        report.warnings.push(format!(
            "meshes {unused:?} are used by no node of the scene; ignored"
        ));
    }
    if triangles == 0 {
        return Err(err(
            "gltf.empty",
            "the scene has no triangle geometry (no node with a mesh of triangles)",
        ));
    }
    Ok(Slots { cells, lightmaps })
}

/// Where meshes go: `(Res1 node, cell, glTF mesh)`, the nodes' own meshes
/// in cell 0, then the carriers' (a carrier replaces the node's own mesh in
/// its cell, with a warning).
fn placements(
    doc: &GltfFile,
    tree: &Tree,
    report: &mut AuthorReport,
) -> Vec<(usize, usize, usize)> {
    let nodes = doc.nodes();
    let mut placements: Vec<(usize, usize, usize)> = Vec::new(); // (Res1, cell, mesh)
    for (r, &g) in tree.order.iter().enumerate() {
        if let Some(m) = idx(&nodes[g], "mesh") {
            placements.push((r, 0, m));
        }
    }
    for &(g, p, c) in &tree.carriers {
        if let Some(m) = idx(&nodes[g], "mesh") {
            if let Some(k) = placements
                .iter()
                .position(|&(r, cell, _)| r == p && cell == c)
            {
                report.warnings.push(format!(
                    "node {g}: cell {c} of Res1 node {p} also holds that node's own mesh; the carrier's mesh is used"
                ));
                placements.remove(k);
            }
            placements.push((p, c, m));
        }
    }
    placements
}

/// Pending slots, the cells and the used meshes of one authoring.
type Pending = (Vec<Vec<RawPrim>>, Vec<Vec<(usize, u16)>>, HashSet<usize>);

/// The primitives of each (mesh, residual) in slot order (a mesh without
/// triangles makes no slot, with a warning), each node's `(cell, slot)`
/// pairs, and the meshes placed.
///
/// # Errors
/// See [`mesh_parts`].
fn pending_slots(
    cx: &mut AuthorCx,
    placements: &[(usize, usize, usize)],
    info: &[NodeInfo],
    report: &mut AuthorReport,
) -> Result<Pending, ImportError> {
    let mut slot_of: HashMap<(usize, [i64; 9]), Option<u16>> = HashMap::new();
    let mut cells: Vec<Vec<(usize, u16)>> = vec![Vec::new(); info.len()];
    let mut used_meshes = HashSet::new();
    let mut pending: Vec<Vec<RawPrim>> = Vec::new();
    for &(r, cell, mesh) in placements {
        used_meshes.insert(mesh);
        let bake = info[r].bake;
        let key = (
            mesh,
            bake.to_cols_array()
                .map(|x| (x * 1e6).round().clamp(-9e18, 9e18) as i64),
        );
        let slot = match slot_of.get(&key) {
            Some(s) => *s,
            None => {
                let prims = mesh_parts(cx, mesh, &bake, report)?;
                let s = if prims.is_empty() {
                    report
                        .warnings
                        .push(format!("mesh {mesh}: no triangles; no slot"));
                    None
                } else {
                    pending.push(prims);
                    Some((pending.len() - 1) as u16)
                };
                slot_of.insert(key, s);
                s
            }
        };
        if let Some(s) = slot {
            cells[r].push((cell, s));
        }
    }
    Ok((pending, cells, used_meshes))
}

/// The triangle limit (module docs, point 6): returns the triangle count
/// before any simplification; over [`MAX_TRIANGLES`] with
/// [`AuthorOptions::simplify`], `pending` is reduced by [`simplify::fit`]
/// and reported.
///
/// # Errors
/// `gltf.limits` over the limit without `simplify`; [`simplify::fit`]'s.
fn fit_triangles(
    pending: &mut [Vec<RawPrim>],
    opts: &AuthorOptions,
    report: &mut AuthorReport,
) -> Result<usize, ImportError> {
    let triangles: usize = pending.iter().flatten().map(|p| p.indices.len() / 3).sum();
    if triangles > MAX_TRIANGLES {
        if !opts.simplify {
            return Err(err(
                "gltf.limits",
                format!(
                    "the scene has {triangles} triangles; an MSH model holds at most {MAX_TRIANGLES} (Res7 links and Slot68 triangle ranges are u16): reduce it (Blender: Decimate modifier) or pass --simplify"
                ),
            ));
        }
        let s = simplify::fit(pending, MAX_TRIANGLES)?;
        report.warnings.push(format!(
            "simplified from {} to {} triangles with meshoptimizer; largest geometric error {:.6} units{}",
            s.from,
            s.to,
            s.max_error,
            if s.sloppy > 0 {
                format!(" ({} primitives by the sloppy simplifier)", s.sloppy)
            } else {
                String::new()
            }
        ));
        report.simplified = Some(s);
    }
    Ok(triangles)
}

/// Lightmap (module docs, point 8): one LIGHTMAPS row (row 0, the one lit
/// batches use) named after the first lit material's occlusion image, when
/// a batch is lit; other occlusion images are reported.
fn lightmap_row(
    doc: &GltfFile,
    pending: &[Vec<RawPrim>],
    report: &mut AuthorReport,
) -> Vec<WearRow> {
    let mut lightmaps = Vec::new();
    if pending.iter().flatten().any(|p| p.lit) {
        let (first, others) = crate::gltf_import::materials::lightmap_image(doc);
        if let Some((m, img)) = first {
            let stem = crate::gltf_import::materials::image_stem(doc, img, "LIGHTMAP");
            let name = crate::material::write::texture_name(&stem, &mut HashSet::new());
            if !others.is_empty() {
                report.warnings.push(format!(
                    "occlusion images {others:?} besides image {img} (material {m}): a model has one lightmap (LIGHTMAPS row 0); image {img} is used for every lit batch"
                ));
            }
            report.lightmap = Some(name.clone());
            lightmaps.push(WearRow { legacy_id: 0, name });
        }
    }
    lightmaps
}
