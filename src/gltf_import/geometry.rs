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
//! ([`POS_TOL`]); normals `|Δ| <= 0.5/127` per component ([`NORMAL_TOL`],
//! half a quantization step: a smaller edit would not survive quantization);
//! UVs equal after quantization.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::matching::{Matched, MeshTarget};
use super::read::{arr, idx, GltfFile, RawAccessor};
use super::{Context, ImportError, ImportReport};
use crate::anim;
use crate::convention::quant::{quantize_lightmap_uv, quantize_normal, quantize_uv, uv_turns};
use crate::convention::UvSign;
use crate::gltf_export::axes;
use crate::gltf_export::Up;
use crate::gltf_export::{batch_material, BatchMaterial};
use crate::msh::{derive, Batch20, Model, Slot68, TriDesc16, NONE16};

/// Relative position tolerance of "equal to the exported value".
pub const POS_TOL: f32 = 1e-6;
/// Normal component tolerance of "equal to the exported value".
pub const NORMAL_TOL: f32 = 0.5 / 127.0;

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

/// One glTF primitive, read: triangle list indices and per-vertex data in
/// glTF axes (UVs with the material's `KHR_texture_transform` applied).
#[derive(Debug, Clone)]
pub(crate) struct Prim {
    /// Triangle corners, 3 per triangle, each `< pos.len()`.
    pub(crate) indices: Vec<u32>,
    /// glTF-axes positions.
    pub(crate) pos: Vec<[f32; 3]>,
    pub(crate) nrm: Option<Vec<[f32; 3]>>,
    pub(crate) uv: Option<Vec<[f32; 2]>>,
    /// `TEXCOORD_1` as stored: the Res18 lightmap UV (format-notes §6 R5).
    pub(crate) uv1: Option<Vec<[f32; 2]>>,
    r15: Option<RawAccessor>,
    /// Batch material (the `--base` path's material matching).
    material: Option<BatchMaterial>,
    /// The glTF material index.
    pub(crate) gltf_material: Option<usize>,
}

/// How [`read_primitive`] treats what a triangle list cannot hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PrimRules {
    /// Convert TRIANGLE_STRIP and TRIANGLE_FAN to triangle lists (glTF 2.0
    /// §3.7.2.1 corner order; triangles with a repeated corner dropped);
    /// otherwise any mode but TRIANGLES is a `gltf.mode` error.
    pub(crate) triangulate: bool,
    /// Ignore morph targets (the base shape is read) instead of a
    /// `gltf.morph` error.
    pub(crate) ignore_morph: bool,
}

const MODE_NAMES: [&str; 7] = [
    "POINTS",
    "LINES",
    "LINE_LOOP",
    "LINE_STRIP",
    "TRIANGLES",
    "TRIANGLE_STRIP",
    "TRIANGLE_FAN",
];

/// Triangle list of a strip or fan over `src` (glTF 2.0 §3.7.2.1): strip
/// triangle `i` is `(v[i], v[i+1+i%2], v[i+2-i%2])`, fan triangle `i` is
/// `(v[i+1], v[i+2], v[0])`. Triangles with a repeated corner are dropped.
pub(crate) fn triangulate(mode: usize, src: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(src.len().saturating_sub(2) * 3);
    for i in 0..src.len().saturating_sub(2) {
        let t = if mode == 5 {
            [src[i], src[i + 1 + i % 2], src[i + 2 - i % 2]]
        } else {
            [src[i + 1], src[i + 2], src[0]]
        };
        if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
            out.extend_from_slice(&t);
        }
    }
    out
}

fn pos_eq(a: [f32; 3], b: [f32; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= POS_TOL * b[k].abs().max(1.0))
}

fn nrm_eq(a: [f32; 3], b: [f32; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= NORMAL_TOL)
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

fn to_vec3(v: Vec<f32>) -> Vec<[f32; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// KHR_texture_transform of a material's base colour texture, as a 2x3
/// matrix, and the texCoord set it applies to.
fn texture_transform(doc: &GltfFile, material: Option<usize>) -> (usize, Option<[[f32; 3]; 2]>) {
    let Some(mat) = material.and_then(|m| arr(&doc.json, "materials").get(m)) else {
        return (0, None);
    };
    let Some(info) = mat.pointer("/pbrMetallicRoughness/baseColorTexture") else {
        return (0, None);
    };
    let set = idx(info, "texCoord").unwrap_or(0);
    let Some(t) = info.pointer("/extensions/KHR_texture_transform") else {
        return (set, None);
    };
    let set = idx(t, "texCoord").unwrap_or(set);
    let off = super::read::floats(t, "offset")
        .filter(|v| v.len() == 2)
        .unwrap_or(vec![0.0, 0.0]);
    let sc = super::read::floats(t, "scale")
        .filter(|v| v.len() == 2)
        .unwrap_or(vec![1.0, 1.0]);
    let r = t.get("rotation").and_then(Value::as_f64).unwrap_or(0.0) as f32;
    let (s, c) = r.sin_cos();
    // T * R * S (KHR_texture_transform): R = [[c, s], [-s, c]].
    (
        set,
        Some([
            [c * sc[0], s * sc[1], off[0]],
            [-s * sc[0], c * sc[1], off[1]],
        ]),
    )
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

/// The primitives of glTF mesh `mesh`, each primitive's `TEXCOORD_0` moved
/// by whole turns as one batch ([`uv_turns`]) for the model's UV sign.
fn read_prims(
    doc: &GltfFile,
    m: &Matched,
    mesh: usize,
    sign: UvSign,
) -> Result<Vec<Prim>, ImportError> {
    let mj = doc.get("meshes", mesh)?;
    let mut out = Vec::new();
    for (pi, p) in arr(mj, "primitives").iter().enumerate() {
        let mut prim = read_primitive(doc, mesh, pi, p, PrimRules::default())?;
        prim.material = prim
            .gltf_material
            .and_then(|mi| m.materials.get(mi).copied().flatten());
        if let Some(uv) = prim.uv.as_mut() {
            let s = uv_turns(uv.iter().copied(), sign);
            if s != [0.0, 0.0] {
                for u in uv.iter_mut() {
                    *u = [u[0] - s[0], u[1] - s[1]];
                }
            }
        }
        out.push(prim);
    }
    Ok(out)
}

/// Reads primitive `pi` (`p`) of glTF mesh `mesh` as a triangle list.
///
/// # Errors
/// `gltf.mode` (points, lines; strips and fans unless
/// [`PrimRules::triangulate`]), `gltf.morph` (morph targets unless
/// [`PrimRules::ignore_morph`]), `gltf.accessor` (no POSITION, attribute
/// counts that differ, an index out of range, a list that is not a multiple
/// of 3).
pub(crate) fn read_primitive(
    doc: &GltfFile,
    mesh: usize,
    pi: usize,
    p: &Value,
    rules: PrimRules,
) -> Result<Prim, ImportError> {
    let at = |d: &str| format!("mesh {mesh} primitive {pi}: {d}");
    let mode = match p.get("mode") {
        None => 4,
        Some(m) => match m.as_u64().filter(|&m| m <= 6) {
            Some(m) => m as usize,
            None => {
                return Err(err(
                    "gltf.mode",
                    at(&format!("mode {m} is not a glTF primitive mode (0..=6)")),
                ))
            }
        },
    };
    let name = MODE_NAMES.get(mode).copied().unwrap_or("unknown");
    if mode != 4 && !(rules.triangulate && (mode == 5 || mode == 6)) {
        let why = if rules.triangulate {
            "MSH holds triangles only (TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN)"
        } else {
            "is not TRIANGLES (4)"
        };
        return Err(err("gltf.mode", at(&format!("mode {mode} ({name}) {why}"))));
    }
    if !arr(p, "targets").is_empty() && !rules.ignore_morph {
        return Err(err(
            "gltf.morph",
            at("morph targets cannot be stored in MSH; apply the shape keys"),
        ));
    }
    let attrs = p.get("attributes").cloned().unwrap_or(Value::Null);
    let a = |name: &str| idx(&attrs, name);
    let pa = a("POSITION").ok_or_else(|| err("gltf.accessor", at("no POSITION attribute")))?;
    let pos = to_vec3(doc.floats(pa, 3, "POSITION")?);
    let n = pos.len();
    let count_ok = |len: usize, what: &str| -> Result<(), ImportError> {
        if len != n {
            return Err(err(
                "gltf.accessor",
                at(&format!("{what} has {len} elements, POSITION has {n}")),
            ));
        }
        Ok(())
    };
    let nrm = match a("NORMAL") {
        Some(x) => {
            let v = to_vec3(doc.floats(x, 3, "NORMAL")?);
            count_ok(v.len(), "NORMAL")?;
            Some(v)
        }
        None => None,
    };
    let material = idx(p, "material");
    let (set, tt) = texture_transform(doc, material);
    let uv = match a(&format!("TEXCOORD_{set}")) {
        Some(x) => {
            let v = doc.floats(x, 2, "TEXCOORD")?;
            count_ok(v.len() / 2, "TEXCOORD")?;
            Some(
                v.chunks_exact(2)
                    .map(|c| match tt {
                        None => [c[0], c[1]],
                        Some(t) => [
                            t[0][0] * c[0] + t[0][1] * c[1] + t[0][2],
                            t[1][0] * c[0] + t[1][1] * c[1] + t[1][2],
                        ],
                    })
                    .collect(),
            )
        }
        None => None,
    };
    let uv1 = match a("TEXCOORD_1") {
        Some(x) => {
            let v = doc.floats(x, 2, "TEXCOORD_1")?;
            count_ok(v.len() / 2, "TEXCOORD_1")?;
            Some(v.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
        }
        None => None,
    };
    let raw = |name: &str, size: usize| -> Result<Option<RawAccessor>, ImportError> {
        match a(name) {
            None => Ok(None),
            Some(x) => {
                let r = doc.accessor(x)?;
                count_ok(r.count, name)?;
                Ok((r.elem_size() == size).then_some(r))
            }
        }
    };
    let r15 = raw("_RES15", 8)?;
    let mut indices = match idx(p, "indices") {
        Some(x) => doc.indices(x)?,
        None => (0..n as u32).collect(),
    };
    if let Some(&bad) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(err(
            "gltf.accessor",
            at(&format!("index {bad} >= {n} vertices")),
        ));
    }
    if mode != 4 {
        indices = triangulate(mode, &indices);
    }
    if indices.len() % 3 != 0 {
        return Err(err(
            "gltf.accessor",
            at(&format!("{} indices is not a multiple of 3", indices.len())),
        ));
    }
    Ok(Prim {
        indices,
        pos,
        nrm,
        uv,
        uv1,
        r15,
        material: None,
        gltf_material: material,
    })
}

impl Prim {
    /// The `_RES15` bytes of vertex `i` (8 per vertex), when the primitive
    /// carries them.
    pub(crate) fn res15(&self, i: usize) -> Option<[u8; 8]> {
        let r = self.r15.as_ref()?;
        r.elem(i).try_into().ok()
    }
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
        report.moved_vertices += 1;
    }
    if let (Some(n), Some(normals)) = (&p.nrm, model.normals.as_mut()) {
        if let Some(e) = exported_normal(up, normals[v]) {
            if !nrm_eq(n[i], e) {
                let q = quantize_normal(axes::vec3_inv(up, n[i]));
                normals[v] = [q[0], q[1], q[2], normals[v][3]];
                report.changed_normals += 1;
            }
        }
    }
    if let (Some(uv), Some(uvs)) = (&p.uv, model.uvs.as_mut()) {
        let q = quantize_uv(uv[i], vs.conv.model.uv);
        if q != uvs[v] {
            uvs[v] = q;
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

type PosTri = [[u32; 3]; 3];

/// Rotation of a triangle that puts its smallest corner first (winding kept).
fn canonical_rotation(k: &PosTri) -> usize {
    (0..3).min_by_key(|&r| k[r]).unwrap_or(0)
}

fn rotated<T: Copy>(t: [T; 3], r: usize) -> [T; 3] {
    [t[r % 3], t[(r + 1) % 3], t[(r + 2) % 3]]
}

/// Matched path for slot `s`; `Some(batches)` when the slot must be rebuilt.
///
/// # Errors
/// `gltf.limits` from a batch material edit (see [`set_material`]).
fn match_slot(
    base: &Model,
    model: &mut Model,
    s: usize,
    prims: &[Prim],
    vs: &mut Verts,
    report: &mut ImportReport,
) -> Result<Option<Vec<NewBatch>>, ImportError> {
    let cx = SlotCx {
        base,
        up: vs.up,
        conv: vs.conv,
    };
    let bt = base_tris(base, s);
    let (gtris, used) = match_tris(&cx, &bt, prims);
    if keep_topology(&cx, model, &bt, prims, &gtris, report)? {
        return Ok(None);
    }
    rebuild(&cx, model, &bt, prims, &gtris, used).map(Some)
}

/// What the steps of [`match_slot`] share: the base, the axes and the
/// conventions.
struct SlotCx<'a> {
    /// The base model.
    base: &'a Model,
    /// Up axis of the glTF.
    up: Up,
    /// The import context.
    conv: Context,
}

impl SlotCx<'_> {
    /// Whether corner `i` of `p` exports to what base vertex `v` exports:
    /// the same normal (when both have one) and the same quantized UV.
    fn corner_ok(&self, p: &Prim, i: usize, v: u32) -> bool {
        let base = self.base;
        let v = v as usize;
        if let (Some(n), Some(normals)) = (&p.nrm, base.normals.as_ref()) {
            if let Some(e) = exported_normal(self.up, normals[v]) {
                if !nrm_eq(n[i], e) {
                    return false;
                }
            }
        }
        if let (Some(uv), Some(uvs)) = (&p.uv, base.uvs.as_ref()) {
            if quantize_uv(uv[i], self.conv.model.uv) != uvs[v] {
                return false;
            }
        }
        true
    }
}

/// A base triangle of a slot: (batch, global vertices, Res7 index).
type BaseTri = (usize, [u32; 3], Option<usize>);

/// A glTF triangle: (primitive, corner indices, matched base triangle).
type GltfTri = (usize, [u32; 3], Option<usize>);

/// The base triangles of one slot and their lookups by position key.
struct BaseTris {
    /// First batch of the slot and the end of its batch range.
    b0: usize,
    /// End of the slot's batch range (clamped to Res13).
    bend: usize,
    /// The triangles, in batch order.
    tris: Vec<BaseTri>,
    /// Triangles by their positions (rotated to the smallest corner).
    by_pos: HashMap<PosTri, Vec<usize>>,
    /// Triangles by their edges (position pairs, smaller first).
    by_edge: HashMap<([u32; 3], [u32; 3]), Vec<usize>>,
    /// Base vertices by position.
    vert_at: HashMap<[u32; 3], Vec<u32>>,
}

/// Base triangles of slot `s`: every batch's Res6 triangles with their
/// Res7 record (while within the slot's `tri_count`), indexed by position,
/// edge and vertex position.
fn base_tris(base: &Model, s: usize) -> BaseTris {
    let slot = base.slots[s];
    let b0 = usize::from(slot.batch_start);
    let bend = (b0 + usize::from(slot.batch_count)).min(base.batches.len());
    let descs = base.tris.as_deref().unwrap_or(&[]);
    let mut btris: Vec<BaseTri> = Vec::new();
    for b in b0.min(bend)..bend {
        let bb = &base.batches[b];
        for t in batch_indices(base, bb).chunks_exact(3) {
            let k = btris.len();
            let d = (k < usize::from(slot.tri_count))
                .then_some(usize::from(slot.tri_start) + k)
                .filter(|&d| d < descs.len());
            btris.push((
                b,
                [
                    bb.base_vertex + t[0],
                    bb.base_vertex + t[1],
                    bb.base_vertex + t[2],
                ],
                d,
            ));
        }
    }
    let bpos = |v: u32| pos_key(base.positions[v as usize]);
    let mut by_pos: HashMap<PosTri, Vec<usize>> = HashMap::new();
    let mut by_edge: HashMap<([u32; 3], [u32; 3]), Vec<usize>> = HashMap::new();
    let mut vert_at: HashMap<[u32; 3], Vec<u32>> = HashMap::new();
    for (k, (_, t, _)) in btris.iter().enumerate() {
        let pk = t.map(bpos);
        let r = canonical_rotation(&pk);
        by_pos.entry(rotated(pk, r)).or_default().push(k);
        for e in 0..3 {
            let (a, b) = (pk[e], pk[(e + 1) % 3]);
            by_edge
                .entry(if a <= b { (a, b) } else { (b, a) })
                .or_default()
                .push(k);
        }
        for &v in t {
            let l = vert_at.entry(bpos(v)).or_default();
            if !l.contains(&v) {
                l.push(v);
            }
        }
    }
    BaseTris {
        b0,
        bend,
        tris: btris,
        by_pos,
        by_edge,
        vert_at,
    }
}

/// Matches every glTF triangle of `prims` to an unused base triangle with
/// the same positions (any rotation, winding kept) whose corners all pass
/// [`SlotCx::corner_ok`]. Returns the glTF triangles and which base
/// triangles were used.
fn match_tris(cx: &SlotCx, bt: &BaseTris, prims: &[Prim]) -> (Vec<GltfTri>, Vec<bool>) {
    let bpos = |v: u32| pos_key(cx.base.positions[v as usize]);
    let mut used = vec![false; bt.tris.len()];
    let mut gtris: Vec<GltfTri> = Vec::new();
    for (pi, p) in prims.iter().enumerate() {
        for c in p.indices.chunks_exact(3) {
            let c = [c[0], c[1], c[2]];
            let pk = c.map(|i| pos_key(axes::vec3_inv(cx.up, p.pos[i as usize])));
            let r = canonical_rotation(&pk);
            let rc = rotated(c, r);
            let found = bt.by_pos.get(&rotated(pk, r)).and_then(|cands| {
                cands.iter().copied().find(|&k| {
                    if used[k] {
                        return false;
                    }
                    let t = bt.tris[k].1;
                    let br = canonical_rotation(&t.map(bpos));
                    let t = rotated(t, br);
                    (0..3).all(|j| cx.corner_ok(p, rc[j] as usize, t[j]))
                })
            });
            if let Some(k) = found {
                used[k] = true;
            }
            gtris.push((pi, c, found));
        }
    }
    (gtris, used)
}

/// Unchanged topology: every base triangle found once and materials
/// uniform per batch. Then the batches' material edits are applied
/// (counted in the report) and `true` is returned; else `false` (rebuild).
///
/// # Errors
/// See [`set_material`].
fn keep_topology(
    cx: &SlotCx,
    model: &mut Model,
    bt: &BaseTris,
    prims: &[Prim],
    gtris: &[GltfTri],
    report: &mut ImportReport,
) -> Result<bool, ImportError> {
    if gtris.len() != bt.tris.len() || !gtris.iter().all(|g| g.2.is_some()) {
        return Ok(false);
    }
    let mut mat: HashMap<usize, Option<BatchMaterial>> = HashMap::new();
    let mut uniform = true;
    for g in gtris {
        let b = bt.tris[g.2.unwrap_or(0)].0;
        let mi = prims[g.0].material;
        match mat.get(&b) {
            None => {
                mat.insert(b, mi);
            }
            Some(prev) if *prev != mi => uniform = false,
            _ => {}
        }
    }
    if !uniform {
        return Ok(false);
    }
    for (b, mi) in mat {
        if let Some(bm) = mi {
            if set_material(cx.conv, &cx.base.batches[b], &mut model.batches[b], bm)? {
                report.changed_materials += 1;
            }
        }
    }
    Ok(true)
}

/// Rebuild: the slot's batches (base records, then one per new material)
/// with every glTF triangle: a matched one keeps its base vertices and Res7
/// record; a new one takes the batch and Res7 record of a surviving
/// neighbour (a base triangle sharing an edge by position) and base
/// vertices whose corners match, else new vertices ([`new_vertex`]).
/// Triangles are sorted by (base triangle, glTF order).
///
/// # Errors
/// See [`set_material`].
fn rebuild(
    cx: &SlotCx,
    model: &mut Model,
    bt: &BaseTris,
    prims: &[Prim],
    gtris: &[GltfTri],
    used: Vec<bool>,
) -> Result<Vec<NewBatch>, ImportError> {
    let (base, up, conv, b0) = (cx.base, cx.up, cx.conv, bt.b0);
    let descs = base.tris.as_deref().unwrap_or(&[]);
    let btris = &bt.tris;
    let mut batches: Vec<NewBatch> = (b0.min(bt.bend)..bt.bend)
        .map(|b| NewBatch {
            rec: base.batches[b],
            tris: Vec::new(),
        })
        .collect();
    let mut new_vert: HashMap<(Vec<u8>, u32), u32> = HashMap::new();
    let mut claimed = used;
    for (seq, &(pi, c, found)) in gtris.iter().enumerate() {
        let p = &prims[pi];
        let seq = seq as u32;
        if let Some(k) = found {
            let (b, t, d) = btris[k];
            let desc = d.map_or(DEFAULT_DESC, |d| descs[d]);
            batches[b - b0].tris.push(((k as u32, seq), t, desc));
            continue;
        }
        // Surviving neighbour: a base triangle sharing an edge by position.
        let pk = c.map(|i| pos_key(axes::vec3_inv(up, p.pos[i as usize])));
        let donor = neighbour(bt, &pk, &claimed);
        if let Some(k) = donor {
            claimed[k] = true;
        }
        let mut vids = [0u32; 3];
        for j in 0..3 {
            let i = c[j] as usize;
            let game = axes::vec3_inv(up, p.pos[i]);
            let cands = bt.vert_at.get(&pk[j]);
            vids[j] = match cands.and_then(|l| l.iter().copied().find(|&v| cx.corner_ok(p, i, v))) {
                Some(v) => v,
                None => new_vertex(cx, bt, model, p, i, game, &mut new_vert),
            };
        }
        let bidx = match p.material {
            Some(bm) => match batches
                .iter()
                .position(|nb| batch_material(&conv.model, conv.lightmaps, &nb.rec) == bm)
            {
                Some(x) => x,
                None => {
                    let first = batches.first().map_or(Batch20::default(), |nb| nb.rec);
                    let mut rec = first;
                    set_material(conv, &first, &mut rec, bm)?;
                    batches.push(NewBatch {
                        rec,
                        tris: Vec::new(),
                    });
                    batches.len() - 1
                }
            },
            None => donor.map_or(0, |k| btris[k].0 - b0),
        };
        if batches.is_empty() {
            batches.push(NewBatch {
                rec: Batch20::default(),
                tris: Vec::new(),
            });
        }
        let desc = donor
            .and_then(|k| btris[k].2)
            .map_or(DEFAULT_DESC, |d| descs[d]);
        let key = donor.map_or(u32::MAX, |k| k as u32);
        batches[bidx].tris.push(((key, seq), vids, desc));
    }
    for nb in &mut batches {
        nb.tris.sort_by_key(|t| t.0);
    }
    Ok(batches)
}

/// The first base triangle not yet claimed that shares an edge (by
/// position keys `pk`) with a new triangle, edges in corner order.
fn neighbour(bt: &BaseTris, pk: &[[u32; 3]; 3], claimed: &[bool]) -> Option<usize> {
    for e in 0..3 {
        let (a, b) = (pk[e], pk[(e + 1) % 3]);
        if let Some(l) = bt.by_edge.get(&if a <= b { (a, b) } else { (b, a) }) {
            if let Some(&k) = l.iter().find(|&&k| !claimed[k]) {
                return Some(k);
            }
        }
    }
    None
}

/// Appends (or reuses, by `cache`) a new vertex for corner `i` of `p` at
/// `game` (game axes); fields the glTF does not give come from a donor:
/// a base vertex of the slot at the same position, else the nearest.
fn new_vertex(
    cx: &SlotCx,
    bt: &BaseTris,
    model: &mut Model,
    p: &Prim,
    i: usize,
    game: [f32; 3],
    cache: &mut HashMap<(Vec<u8>, u32), u32>,
) -> u32 {
    let (base, conv, btris) = (cx.base, cx.conv, &bt.tris);
    let same_pos = bt.vert_at.get(&pos_key(game));
    let up = conv.up;
    // Donor of unknown fields: a base vertex at the same position, else the nearest.
    let donor = same_pos.and_then(|l| l.first().copied()).or_else(|| {
        let d2 = |v: u32| {
            let q = base.positions[v as usize];
            (0..3)
                .map(|k| f64::from(q[k] - game[k]).powi(2))
                .sum::<f64>()
        };
        btris
            .iter()
            .flat_map(|t| t.1)
            .min_by(|&a, &b| d2(a).total_cmp(&d2(b)))
    });
    let dn = donor.map(|d| d as usize);
    let normal = match (&p.nrm, dn.and_then(|d| base.normals.as_ref().map(|n| n[d]))) {
        (Some(n), dn4) => {
            let q = quantize_normal(axes::vec3_inv(up, n[i]));
            [q[0], q[1], q[2], dn4.map_or(0, |d| d[3])]
        }
        (None, Some(d)) => d,
        (None, None) => [0, 0, 127, 0],
    };
    let uv = match (&p.uv, dn.and_then(|d| base.uvs.as_ref().map(|u| u[d]))) {
        (Some(uv), _) => quantize_uv(uv[i], conv.model.uv),
        (None, Some(d)) => d,
        (None, None) => [0, 0],
    };
    let r15: [u8; 8] = match (&p.r15, dn.and_then(|d| base.res15.as_ref().map(|r| r[d]))) {
        (Some(r), _) => r.elem(i).try_into().unwrap_or([0; 8]),
        (None, Some(d)) => d,
        _ => [0; 8],
    };
    let r16: [u8; 8] = dn
        .and_then(|d| base.res16.as_ref().map(|r| r[d]))
        .unwrap_or([0; 8]);
    let r18: [u8; 4] = match (&p.uv1, dn.and_then(|d| base.res18.as_ref().map(|r| r[d]))) {
        (Some(u), _) => quantize_lightmap_uv(u[i]),
        (None, Some(d)) => d,
        _ => [0; 4],
    };
    let mut key = Vec::with_capacity(40);
    for c in game {
        key.extend_from_slice(&c.to_bits().to_le_bytes());
    }
    key.extend(normal.iter().map(|&b| b as u8));
    key.extend(uv.iter().flat_map(|c| c.to_le_bytes()));
    key.extend_from_slice(&r15);
    key.extend_from_slice(&r16);
    key.extend_from_slice(&r18);
    let k = (key, 0);
    if let Some(&v) = cache.get(&k) {
        return v;
    }
    let v = push_vertex(model, game, normal, uv, r15, r16, r18);
    cache.insert(k, v);
    v
}

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

/// Copies vertex `v` to the end of every per-vertex stream.
fn clone_vertex(model: &mut Model, v: usize) -> u32 {
    let n = model.normals.as_ref().map_or([0; 4], |x| x[v]);
    let uv = model.uvs.as_ref().map_or([0; 2], |x| x[v]);
    let r15 = model.res15.as_ref().map_or([0; 8], |x| x[v]);
    let r16 = model.res16.as_ref().map_or([0; 8], |x| x[v]);
    let r18 = model.res18.as_ref().map_or([0; 4], |x| x[v]);
    push_vertex(model, model.positions[v], n, uv, r15, r16, r18)
}

fn u16_of(v: usize, what: &str) -> Result<u16, ImportError> {
    u16::try_from(v).map_err(|_| {
        err(
            "gltf.limits",
            format!("{what} {v} does not fit the u16 field"),
        )
    })
}

/// Re-assembles Res13, Res6 and Res7 in slot order with the rebuilt slots.
#[allow(clippy::needless_range_loop)]
fn assemble(
    base: &Model,
    model: &mut Model,
    rebuilt: &mut BTreeMap<usize, Vec<NewBatch>>,
) -> Result<(), ImportError> {
    let base_tris = base.tris.as_deref();
    let mut batches: Vec<Batch20> = Vec::with_capacity(base.batches.len());
    let mut indices: Vec<u16> = Vec::with_capacity(base.indices.len());
    let mut tris: Vec<TriDesc16> = Vec::new();
    let mut batch_used = vec![false; base.batches.len()];
    let mut slots = model.slots.clone();
    // Old Res7 index -> new index, for the links of copied (unchanged) slots.
    let mut tri_map: Vec<u16> = vec![NONE16; base_tris.map_or(0, <[TriDesc16]>::len)];
    for (s, slot) in base.slots.iter().enumerate() {
        let batch_start = batches.len();
        let tri_start = tris.len();
        if let Some(nbs) = rebuilt.get_mut(&s) {
            let b0 = usize::from(slot.batch_start);
            for b in b0..(b0 + usize::from(slot.batch_count)).min(base.batches.len()) {
                batch_used[b] = true;
            }
            for nb in nbs.iter_mut() {
                batches.push(place_batch(model, s, nb, &mut indices, &mut tris)?);
            }
        } else {
            let b0 = usize::from(slot.batch_start);
            for b in b0..(b0 + usize::from(slot.batch_count)).min(base.batches.len()) {
                batch_used[b] = true;
                batches.push(copy_batch(model.batches[b], &base.indices, &mut indices));
            }
            if let Some(bt) = model.tris.as_deref().or(base_tris) {
                let t0 = usize::from(slot.tri_start);
                let t1 = (t0 + usize::from(slot.tri_count)).min(bt.len());
                for k in t0.min(t1)..t1 {
                    if let Some(m) = tri_map.get_mut(k) {
                        *m = u16_of(tris.len(), "Res7 index")?;
                    }
                    tris.push(bt[k]);
                }
            }
        }
        let sl = &mut slots[s];
        sl.batch_start = u16_of(batch_start, "Res2 batch_start")?;
        sl.batch_count = u16_of(batches.len() - batch_start, "Res2 batch_count")?;
        sl.tri_start = u16_of(tri_start, "Res2 tri_start")?;
        sl.tri_count = u16_of(tris.len() - tri_start, "Res2 tri_count")?;
    }
    // Batches that no slot references stay, after the slots.
    for (b, u) in batch_used.iter().enumerate() {
        if !u {
            batches.push(copy_batch(model.batches[b], &base.indices, &mut indices));
        }
    }
    u16_of(tris.len(), "Res7 count").map_err(|e| ImportError::new(e.rule, e.detail))?;
    // Links of copied slots follow their triangles.
    let rebuilt_ranges: Vec<(usize, usize)> = rebuilt
        .keys()
        .map(|&s| {
            (
                usize::from(slots[s].tri_start),
                usize::from(slots[s].tri_start) + usize::from(slots[s].tri_count),
            )
        })
        .collect();
    for (k, d) in tris.iter_mut().enumerate() {
        if rebuilt_ranges.iter().any(|&(a, b)| k >= a && k < b) {
            continue;
        }
        for l in d.links.iter_mut() {
            if *l != NONE16 {
                *l = tri_map.get(usize::from(*l)).copied().unwrap_or(NONE16);
            }
        }
    }
    model.batches = batches;
    model.indices = indices;
    model.slots = slots;
    if model.tris.is_some() {
        model.tris = Some(tris);
        rebuilt_links(model, rebuilt);
    }
    Ok(())
}

/// Places one rebuilt batch after the Res6/Res7 written so far: its
/// `base_vertex` is kept when every vertex is within 65536 above it, else
/// moved to its lowest vertex, else (too far apart for u16 indices) its
/// vertices are copied contiguously to the end of Res3; its indices and
/// Res7 records are appended. Returns the batch record.
///
/// # Errors
/// `gltf.limits`: a batch over 65536 vertices or an index count over a
/// u16 (`Res2 slot {s}` named).
fn place_batch(
    model: &mut Model,
    s: usize,
    nb: &mut NewBatch,
    indices: &mut Vec<u16>,
    tris: &mut Vec<TriDesc16>,
) -> Result<Batch20, ImportError> {
    let mut rec = nb.rec;
    let ids: Vec<u32> = nb.tris.iter().flat_map(|t| t.1).collect();
    let (lo, hi) = (
        ids.iter().copied().min().unwrap_or(rec.base_vertex),
        ids.iter().copied().max().unwrap_or(rec.base_vertex),
    );
    if lo >= rec.base_vertex && hi - rec.base_vertex <= 0xFFFF {
        // keep the base's base_vertex
    } else if hi - lo <= 0xFFFF {
        rec.base_vertex = lo;
    } else {
        // Too far apart for u16 indices: copy the batch's vertices contiguously.
        let mut map: HashMap<u32, u32> = HashMap::new();
        let mut uniq: Vec<u32> = ids.clone();
        uniq.sort_unstable();
        uniq.dedup();
        if uniq.len() > 0x10000 {
            return Err(err(
                "gltf.limits",
                format!(
                    "Res2 slot {s}: a batch uses {} vertices (> 65536)",
                    uniq.len()
                ),
            ));
        }
        for &v in &uniq {
            let nv = clone_vertex(model, v as usize);
            map.insert(v, nv);
        }
        for t in nb.tris.iter_mut() {
            t.1 = t.1.map(|v| map[&v]);
        }
        rec.base_vertex = map[&uniq[0]];
    }
    rec.index_start = indices.len() as u32;
    rec.index_count = u16_of(
        nb.tris.len() * 3,
        &format!("Res2 slot {s}: batch index count"),
    )?;
    for t in &nb.tris {
        for v in t.1 {
            indices.push((v - rec.base_vertex) as u16);
        }
        tris.push(t.2);
    }
    Ok(rec)
}

/// Links and face normals of the rebuilt slots (msh-core §8.3), from their
/// new triangles.
fn rebuilt_links(model: &mut Model, rebuilt: &BTreeMap<usize, Vec<NewBatch>>) {
    for &s in rebuilt.keys() {
        let slot = model.slots[s];
        let (_, corners, links) = slot_corners(model, &slot, &model.positions);
        let tr = model.tris.as_mut().expect("checked");
        for (k, c) in corners.iter().enumerate() {
            let d = &mut tr[usize::from(slot.tri_start) + k];
            d.normal = derive::face_normal_i16(c);
            d.links =
                links[k].map(|x| x.map_or(NONE16, |u| (usize::from(slot.tri_start) + u) as u16));
        }
    }
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

/// A batch record unchanged except that its Res6 slice (taken from
/// `base_indices`) is appended to `indices` and `index_start` points there.
fn copy_batch(mut rec: Batch20, base_indices: &[u16], indices: &mut Vec<u16>) -> Batch20 {
    let start = rec.index_start as usize;
    let slice = base_indices
        .get(start..start + usize::from(rec.index_count))
        .unwrap_or(&[]);
    rec.index_start = indices.len() as u32;
    indices.extend_from_slice(slice);
    rec
}
