//! Geometry: glTF primitives → Res3/4/5/15/16/18, Res6, Res13, Res7 and
//! Res2 (gltf-mapping.md "Meshes" and "Reverse rules"; msh-core §5.2–§5.8,
//! §8.3).
//!
//! Per slot, one of two paths:
//!
//! - **Structural** (msh2gltf's layout kept: one primitive per non-empty
//!   batch, index arrays equal to the raw Res6 slices): glTF vertex `i` of
//!   a batch's primitive *is* Res3 vertex `base_vertex + i`. Each value is
//!   compared with what msh2gltf exports from the base: equal keeps the raw
//!   bytes, changed is quantized (normal `clamp(round(v*127), -128, 127)`,
//!   UV `clamp(round(uv*1024), -32768, 32767)`); positions are taken as
//!   given. Topology is unchanged.
//! - **Matched** (anything else: Blender's split vertices, re-ordered
//!   triangles, merged primitives, deleted or added triangles): every glTF
//!   triangle is looked up among the slot's base triangles by its corner
//!   positions (any rotation, same winding) and accepted when every corner's
//!   normal and UV also equal the exported ones. When every base triangle is
//!   found exactly once the slot is unchanged. Otherwise the slot is
//!   rebuilt: surviving triangles keep their vertices and Res7 flags and
//!   selectors; other corners reuse a base vertex with the same position,
//!   normal and UV or become new vertices appended to every per-vertex
//!   stream (Res15/Res16/Res18 and the normal's 4th byte copied from the base
//!   vertex at the same position, else the nearest one, unless the glTF
//!   carries `_RES15` / `TEXCOORD_1`). Res6, Res13 and Res7 are re-assembled in
//!   slot order; Res7 links and face normals of rebuilt slots are
//!   recomputed ([`crate::msh::derive`]).
//!
//! "Equal" tolerances: positions `|Δ| <= 1e-6 * max(1, |v|)` per component
//! ([`POS_TOL`]; Blender keeps mesh coordinates as the f32 it read); normals
//! `|Δ| <= 1/127` per component ([`NORMAL_TOL`], one quantum of Res4: what
//! Blender's custom split normals move an imported normal by, see
//! [`crate::convention::quant::NORMAL_TOL`]); UVs equal after quantization.
//! A glTF normal of exactly `(0, 1, 0)` ([`BLENDER_NO_NORMAL`]) is the
//! placeholder Blender's glTF exporter writes where Blender has no normal
//! for the corner: it carries no normal (the base vertex's is kept).

mod assemble;
mod cells;
mod prim;
mod rebuild;

use std::collections::{BTreeMap, BTreeSet};

use super::matching::{Matched, MeshTarget};
use super::read::GltfFile;
use super::{Context, ImportError, ImportReport};
use crate::anim;
use crate::convention::quant::{quantize_lightmap_uv, quantize_normal, quantize_uv};
use crate::gltf_export::axes;
use crate::gltf_export::Up;
use crate::gltf_export::{batch_material, BatchMaterial};
use crate::msh::{derive, Batch20, Model, Slot68, TriDesc16, NONE16};

use assemble::assemble;
use prim::read_prims;
pub(crate) use prim::{read_primitive, Prim, PrimRules};
use rebuild::match_slot;

/// Relative position tolerance of "equal to the exported value".
pub const POS_TOL: f32 = 1e-6;
/// Normal component tolerance of "equal to the exported value" (one Res4
/// quantum; defined with the normal's quantisation).
pub use crate::convention::quant::NORMAL_TOL;

/// The normal Blender's glTF exporter writes for a corner whose normal
/// Blender computed as zero (io_scene_gltf2, `__get_normals`: "Replace zero
/// normals with the unit UP vector", Blender's +Z, glTF's +Y). Blender gives
/// a zero split normal at some corners of an imported fan (a vertex on a
/// UV seam that the glTF importer keeps as two vertices, e.g. the ring next
/// to an apex: corpus `bases.rlb:b_mine_52.msh` slot 6, issue 39), so the
/// value says nothing about the model. Exactly this value (signed zeros
/// alike) is taken as "no normal given": the base vertex keeps its normal,
/// a new vertex takes its donor's. A normal set on purpose in Blender goes
/// through its custom-normal encoding and does not come back exact.
pub const BLENDER_NO_NORMAL: [f32; 3] = [0.0, 1.0, 0.0];

/// Whether `n` is [`BLENDER_NO_NORMAL`] (`-0.0 == 0.0`).
pub(crate) fn is_no_normal(n: [f32; 3]) -> bool {
    n == BLENDER_NO_NORMAL
}

fn err(rule: &'static str, detail: impl Into<String>) -> ImportError {
    ImportError::new(rule, detail)
}

/// What [`apply`] changed, for [`finish`].
#[derive(Debug, Clone, Default)]
pub struct GeoOutcome {
    /// Slots whose vertex positions or topology changed.
    pub changed_slots: BTreeSet<usize>,
    /// True when anything geometric changed.
    pub any: bool,
}

fn pos_eq(a: [f32; 3], b: [f32; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= POS_TOL * b[k].abs().max(1.0))
}

/// Normal `a` (glTF) is `b` (exported): within [`NORMAL_TOL`], or `a` is
/// Blender's placeholder ([`BLENDER_NO_NORMAL`]).
fn nrm_eq(a: [f32; 3], b: [f32; 3]) -> bool {
    is_no_normal(a) || (0..3).all(|k| (a[k] - b[k]).abs() <= NORMAL_TOL)
}

fn pos_key(p: [f32; 3]) -> [u32; 3] {
    p.map(|c| if c == 0.0 { 0 } else { c.to_bits() })
}

/// The normal msh2gltf exports for a packed normal (glTF axes), `None` for a
/// zero normal (exported as a face normal: kept raw on import).
fn exported_normal(up: Up, n: [i8; 4]) -> Option<[f32; 3]> {
    let dec = |c: i8| f64::from((f32::from(c) / 127.0).clamp(-1.0, 1.0));
    axes::normalize3([dec(n[0]), dec(n[1]), dec(n[2])]).map(|u| axes::vec3(up, u))
}

/// Re-points `rec` (a copy of `base`) to the batch material `bm` under the
/// base's conventions (format-notes §6 R2): the key, and the lightmap byte
/// when the lit flag differs. `Ok(true)` when `rec` changed.
///
/// # Errors
/// `gltf.limits` when the key does not fit the layout (retail: > 255).
fn set_material(
    conv: Context,
    base: &Batch20,
    rec: &mut Batch20,
    bm: BatchMaterial,
) -> Result<bool, ImportError> {
    let cur = batch_material(&conv.model, conv.lightmaps, base);
    if cur == bm {
        return Ok(false);
    }
    conv.model
        .batch
        .set_material_key(rec, bm.key)
        .map_err(|e| err("gltf.limits", format!("Res13: {e}")))?;
    if cur.lit != bm.lit {
        conv.model.batch.set_lightmap_row(rec, bm.lit.then_some(0));
    }
    Ok(*rec != *base)
}

/// The Res6 slice of a batch as u32 (empty when out of range).
fn batch_indices(model: &Model, b: &Batch20) -> Vec<u32> {
    let s = b.index_start as usize;
    model
        .indices
        .get(s..s + usize::from(b.index_count))
        .map_or_else(Vec::new, |v| v.iter().map(|&i| u32::from(i)).collect())
}

/// Per-vertex state shared by the slots of one import.
struct Verts {
    up: Up,
    conv: Context,
    base_n: usize,
    moved: Vec<bool>,
    /// Base vertices whose position, normal or UV the glTF changed.
    edited: Vec<bool>,
    done: Vec<bool>,
}

/// Applies one glTF vertex to Res3 vertex `v` (structural path).
fn apply_vertex(
    model: &mut Model,
    vs: &mut Verts,
    p: &Prim,
    i: usize,
    v: usize,
    report: &mut ImportReport,
) {
    if vs.done[v] {
        return;
    }
    vs.done[v] = true;
    let up = vs.up;
    let g = p.pos[i];
    if !pos_eq(g, axes::vec3(up, model.positions[v])) {
        model.positions[v] = axes::vec3_inv(up, g);
        vs.moved[v] = true;
        vs.edited[v] = true;
        report.moved_vertices += 1;
    }
    if let (Some(n), Some(normals)) = (&p.nrm, model.normals.as_mut()) {
        if let Some(e) = exported_normal(up, normals[v]) {
            if !nrm_eq(n[i], e) {
                let q = quantize_normal(axes::vec3_inv(up, n[i]));
                normals[v] = [q[0], q[1], q[2], normals[v][3]];
                vs.edited[v] = true;
                report.changed_normals += 1;
            }
        }
    }
    if let (Some(uv), Some(uvs)) = (&p.uv, model.uvs.as_mut()) {
        let q = quantize_uv(uv[i], vs.conv.model.uv);
        if q != uvs[v] {
            uvs[v] = q;
            vs.edited[v] = true;
            report.changed_uvs += 1;
        }
    }
    if let (Some(r), Some(s)) = (&p.r15, model.res15.as_mut()) {
        s[v].copy_from_slice(r.elem(i));
    }
    if let (Some(u), Some(s)) = (&p.uv1, model.res18.as_mut()) {
        s[v] = quantize_lightmap_uv(u[i]);
    }
}

/// A new batch of a rebuilt slot.
struct NewBatch {
    rec: Batch20,
    /// (sort key, global vertex ids, Res7 record).
    tris: Vec<((u32, u32), [u32; 3], TriDesc16)>,
}

const DEFAULT_DESC: TriDesc16 = TriDesc16 {
    flags: 0,
    links: [NONE16; 3],
    normal: [0; 3],
    sel: 0x3F,
};

/// Applies every matched mesh to `model` (see the module docs).
///
/// # Errors
/// `gltf.mode`, `gltf.morph`, `gltf.accessor` for unusable primitives;
/// `gltf.limits` when a rebuilt batch or slot overflows a u16 field;
/// `gltf.match.primitive` for a topology edit of a legacy model.
pub fn apply(
    doc: &GltfFile,
    m: &Matched,
    base: &Model,
    model: &mut Model,
    conv: Context,
    report: &mut ImportReport,
) -> Result<GeoOutcome, ImportError> {
    let nv = base.positions.len();
    let mut vs = Verts {
        up: conv.up,
        conv,
        base_n: nv,
        moved: vec![false; nv],
        edited: vec![false; nv],
        done: vec![false; nv],
    };
    let mut out = GeoOutcome::default();
    let mut rebuilt: BTreeMap<usize, Vec<NewBatch>> = BTreeMap::new();
    for &(mesh, target) in &m.meshes {
        let prims = read_prims(doc, m, mesh, conv.model.uv)?;
        let (b0, bn) = match target {
            MeshTarget::Slot(s) => (
                usize::from(base.slots[s].batch_start),
                usize::from(base.slots[s].batch_count),
            ),
            MeshTarget::Legacy => (0, base.batches.len()),
        };
        let bend = (b0 + bn).min(base.batches.len());
        let nonempty: Vec<usize> = (b0.min(bend)..bend)
            .filter(|&b| base.batches[b].index_count > 0)
            .collect();
        let structural = prims.len() == nonempty.len()
            && prims
                .iter()
                .zip(&nonempty)
                .all(|(p, &b)| p.indices == batch_indices(base, &base.batches[b]));
        if structural {
            for (p, &b) in prims.iter().zip(&nonempty) {
                let bv = base.batches[b].base_vertex as usize;
                for &i in &p.indices {
                    apply_vertex(model, &mut vs, p, i as usize, bv + i as usize, report);
                }
                if let Some(bm) = p.material {
                    if set_material(conv, &base.batches[b], &mut model.batches[b], bm)? {
                        report.changed_materials += 1;
                    }
                }
            }
            continue;
        }
        let MeshTarget::Slot(s) = target else {
            return Err(err(
                "gltf.match.primitive",
                "legacy 24-byte-node model: the primitives do not match the batches (topology edits are not supported for this layout)",
            ));
        };
        if let Some(nb) = match_slot(base, model, s, &prims, &mut vs, report)? {
            rebuilt.insert(s, nb);
        }
    }
    // Slots with moved vertices.
    let moved_any = vs.moved.iter().any(|&x| x);
    if moved_any {
        for (s, slot) in base.slots.iter().enumerate() {
            if derive::slot_triangles(base, slot)
                .iter()
                .flatten()
                .any(|&v| vs.moved.get(v as usize) == Some(&true))
            {
                out.changed_slots.insert(s);
            }
        }
        update_res7_moved(base, model, &vs.moved, &out.changed_slots, &rebuilt);
    }
    if !rebuilt.is_empty() {
        assemble(base, model, &mut rebuilt)?;
        for &s in rebuilt.keys() {
            out.changed_slots.insert(s);
            report.rebuilt_slots.push(s);
        }
    }
    report.new_vertices = model.positions.len().saturating_sub(vs.base_n);
    let rebuilt_slots: BTreeSet<usize> = rebuilt.keys().copied().collect();
    cells::other_cells(doc, m, base, (&vs.edited, &rebuilt_slots), report);
    out.any = moved_any || !rebuilt.is_empty();
    report.changed_slots = out.changed_slots.iter().copied().collect();
    Ok(out)
}

/// Recomputes the Res7 face normals of triangles with a moved corner and the
/// links of slots with moved vertices (slots not rebuilt; structural path).
fn update_res7_moved(
    base: &Model,
    model: &mut Model,
    moved: &[bool],
    slots: &BTreeSet<usize>,
    rebuilt: &BTreeMap<usize, Vec<NewBatch>>,
) {
    let Some(mut tris) = model.tris.take() else {
        return;
    };
    for &s in slots {
        if rebuilt.contains_key(&s) {
            continue;
        }
        let slot = base.slots[s];
        let (t, corners, links) = slot_corners(base, &slot, &model.positions);
        for (k, (tri, c)) in t.iter().zip(&corners).enumerate() {
            if k >= usize::from(slot.tri_count) {
                break;
            }
            let Some(d) = tris.get_mut(usize::from(slot.tri_start) + k) else {
                break;
            };
            if tri.iter().any(|&v| moved[v as usize]) {
                d.normal = derive::face_normal_i16(c);
            }
            d.links =
                links[k].map(|x| x.map_or(NONE16, |u| (usize::from(slot.tri_start) + u) as u16));
        }
    }
    model.tris = Some(tris);
}

/// A slot's triangles (global Res3 vertices), their corners and their
/// slot-relative neighbour links (msh-core §8.3).
type SlotCorners = (Vec<[u32; 3]>, Vec<[[f32; 3]; 3]>, Vec<[Option<usize>; 3]>);

/// The triangles of `slot` as `from` stores them (global Res3 vertices),
/// their corners at `positions`, and their neighbour links.
fn slot_corners(from: &Model, slot: &Slot68, positions: &[[f32; 3]]) -> SlotCorners {
    let t = derive::slot_triangles(from, slot);
    let corners: Vec<[[f32; 3]; 3]> = t.iter().map(|c| c.map(|v| positions[v as usize])).collect();
    let links = derive::neighbour_links(&corners);
    (t, corners, links)
}

/// Appends one vertex to every per-vertex stream the model has (Res3,
/// Res4 normal, Res5 UV, Res15, Res16, Res18); returns its index.
fn push_vertex(
    model: &mut Model,
    pos: [f32; 3],
    n: [i8; 4],
    uv: [i16; 2],
    r15: [u8; 8],
    r16: [u8; 8],
    r18: [u8; 4],
) -> u32 {
    let v = model.positions.len() as u32;
    model.positions.push(pos);
    if let Some(x) = model.normals.as_mut() {
        x.push(n);
    }
    if let Some(x) = model.uvs.as_mut() {
        x.push(uv);
    }
    if let Some(x) = model.res15.as_mut() {
        x.push(r15);
    }
    if let Some(x) = model.res16.as_mut() {
        x.push(r16);
    }
    if let Some(x) = model.res18.as_mut() {
        x.push(r18);
    }
    v
}

/// Recomputes the bounds of changed slots (AABB, sphere; the Slot68 tail is
/// kept) and the Res2 header when geometry or the `t = 0` pose changed.
pub fn finish(
    base: &Model,
    model: &mut Model,
    conv: Context,
    geo: &GeoOutcome,
    report: &mut ImportReport,
) {
    for &s in &geo.changed_slots {
        derive::update_slot_bounds(model, s);
    }
    let pose_changed = match (
        anim::Sampler::new(base, conv.model.quat),
        anim::Sampler::new(model, conv.model.quat),
    ) {
        (Ok(a), Ok(b)) => a.world_matrices(0.0) != b.world_matrices(0.0),
        _ => false,
    };
    if geo.any || pose_changed {
        model.header = derive::res2_header(&crate::msh::build::model_space_points(
            model,
            conv.model.quat,
        ));
        report.header_recomputed = true;
    }
}
