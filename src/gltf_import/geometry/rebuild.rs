//! The matched path of one slot (module docs of [`super`]): glTF
//! triangles looked up among the slot's base triangles by position, the
//! slot kept when every one is found, else rebuilt with new vertices where
//! needed.

use std::collections::HashMap;

use super::{
    batch_indices, exported_normal, nrm_eq, pos_key, push_vertex, set_material, NewBatch, Prim,
    Verts, DEFAULT_DESC,
};
use crate::convention::quant::{quantize_lightmap_uv, quantize_normal, quantize_uv};
use crate::gltf_export::{axes, batch_material, BatchMaterial, Up};
use crate::gltf_import::{Context, ImportError, ImportReport};
use crate::msh::{Batch20, Model};
/// The position keys of a triangle's corners.
type PosTri = [[u32; 3]; 3];

/// Rotation of a triangle that puts its smallest corner first (winding kept).
fn canonical_rotation(k: &PosTri) -> usize {
    (0..3).min_by_key(|&r| k[r]).unwrap_or(0)
}

/// `t` rotated left by `r` corners.
fn rotated<T: Copy>(t: [T; 3], r: usize) -> [T; 3] {
    [t[r % 3], t[(r + 1) % 3], t[(r + 2) % 3]]
}

/// Matched path for slot `s`; `Some(batches)` when the slot must be rebuilt.
///
/// # Errors
/// `gltf.limits` from a batch material edit (see [`set_material`]).
pub(super) fn match_slot(
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
    let (gtris, used, cmap) = match_tris(&cx, &bt, prims);
    if gtris.len() == bt.tris.len() && gtris.iter().all(|g| g.2.is_some()) {
        if keep_topology(&cx, model, &bt, prims, &gtris, report)? {
            return Ok(None);
        }
        return rebuild(&cx, model, &bt, prims, &gtris, used).map(Some);
    }
    // The same faces with corners moved (or normals, UVs changed): each
    // glTF corner goes back to its base vertex, as on the structural path.
    if let Some((paired, pmap)) = pair_moved(&cx, &bt, prims, &gtris, &used, &cmap) {
        if corners_agree(&cx, prims, &paired, &pmap)
            && keep_topology(&cx, model, &bt, prims, &paired, report)?
        {
            for (g, map) in paired.iter().zip(&pmap) {
                let p = &prims[g.0];
                for (q, &v) in map.iter().enumerate() {
                    super::apply_vertex(model, vs, p, g.1[q] as usize, v as usize, report);
                }
            }
            return Ok(None);
        }
    }
    rebuild(&cx, model, &bt, prims, &gtris, used).map(Some)
}

/// The base vertex of each corner of a glTF triangle (`None`: no base
/// triangle matched).
type CornerMap = Vec<Option<[u32; 3]>>;

/// Pairs the glTF triangles [`match_tris`] left unmatched with the base
/// triangles left unused, when there are as many of each: an edit that
/// moved corners (or changed their normal or UV) but kept the faces. Both
/// lists are taken in order (glTF primitive then triangle order; base batch
/// then triangle order: Blender keeps the face order of the import), a pair
/// must have the same material (or the glTF none), and each pair's corner
/// rotation is the one with most corners at their base position (then most
/// with their base UV, then none). Returns every glTF triangle with its
/// base triangle and the base vertex of each corner, or `None` when the
/// triangles do not pair.
fn pair_moved(
    cx: &SlotCx,
    bt: &BaseTris,
    prims: &[Prim],
    gtris: &[GltfTri],
    used: &[bool],
    cmap: &[Option<[u32; 3]>],
) -> Option<(Vec<GltfTri>, Vec<[u32; 3]>)> {
    let free: Vec<usize> = (0..bt.tris.len()).filter(|&k| !used[k]).collect();
    let open: Vec<usize> = (0..gtris.len()).filter(|&g| gtris[g].2.is_none()).collect();
    if free.is_empty() || free.len() != open.len() || gtris.len() != bt.tris.len() {
        return None;
    }
    let mut paired = gtris.to_vec();
    let mut pmap: Vec<[u32; 3]> = cmap.iter().map(|m| m.unwrap_or([0; 3])).collect();
    for (&g, &k) in open.iter().zip(&free) {
        let (pi, c, _) = gtris[g];
        let p = &prims[pi];
        let (b, t, _) = bt.tris[k];
        let bm = batch_material(&cx.conv.model, cx.conv.lightmaps, &cx.base.batches[b]);
        if p.material.is_some_and(|m| m != bm) {
            return None;
        }
        let score = |r: usize| {
            let tr = rotated(t, r);
            let mut at = 0;
            let mut uv = 0;
            for q in 0..3 {
                let i = c[q] as usize;
                let v = tr[q] as usize;
                let game = axes::vec3_inv(cx.up, p.pos[i]);
                at += usize::from(pos_key(game) == pos_key(cx.base.positions[v]));
                uv += usize::from(match (&p.uv, cx.base.uvs.as_ref()) {
                    (Some(u), Some(bu)) => quantize_uv(u[i], cx.conv.model.uv) == bu[v],
                    _ => false,
                });
            }
            (at, uv)
        };
        // Most corners in place, then most UVs; the first rotation on a tie.
        let r = (0..3).fold(0, |best, r| if score(r) > score(best) { r } else { best });
        paired[g].2 = Some(k);
        pmap[g] = rotated(t, r);
    }
    Some((paired, pmap))
}

/// Whether every base vertex gets one value from the glTF corners mapped to
/// it (position by [`super::pos_eq`], normal by [`nrm_eq`], quantized UV):
/// otherwise the edit split a base vertex and the slot is rebuilt.
fn corners_agree(cx: &SlotCx, prims: &[Prim], gtris: &[GltfTri], pmap: &[[u32; 3]]) -> bool {
    let mut first: HashMap<u32, (usize, usize)> = HashMap::new();
    for (g, map) in gtris.iter().zip(pmap) {
        for (q, &v) in map.iter().enumerate() {
            let here = (g.0, g.1[q] as usize);
            let Some(&(pj, j)) = first.get(&v) else {
                first.insert(v, here);
                continue;
            };
            let (a, b) = (&prims[here.0], &prims[pj]);
            let (i, up) = (here.1, cx.up);
            let pos = super::pos_eq(axes::vec3_inv(up, a.pos[i]), axes::vec3_inv(up, b.pos[j]));
            let nrm = match (&a.nrm, &b.nrm) {
                (Some(na), Some(nb)) => nrm_eq(na[i], nb[j]) || nrm_eq(nb[j], na[i]),
                _ => true,
            };
            let uv = match (&a.uv, &b.uv) {
                (Some(ua), Some(ub)) => {
                    quantize_uv(ua[i], cx.conv.model.uv) == quantize_uv(ub[j], cx.conv.model.uv)
                }
                _ => true,
            };
            if !(pos && nrm && uv) {
                return false;
            }
        }
    }
    true
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
/// [`SlotCx::corner_ok`]. Returns the glTF triangles, which base triangles
/// were used and the base vertex of each matched corner.
fn match_tris(cx: &SlotCx, bt: &BaseTris, prims: &[Prim]) -> (Vec<GltfTri>, Vec<bool>, CornerMap) {
    let bpos = |v: u32| pos_key(cx.base.positions[v as usize]);
    let mut used = vec![false; bt.tris.len()];
    let mut gtris: Vec<GltfTri> = Vec::new();
    let mut cmap: CornerMap = Vec::new();
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
            cmap.push(found.map(|k| {
                used[k] = true;
                // glTF corner rc[j] = c[(r + j) % 3] is base corner j.
                let t = bt.tris[k].1;
                let t = rotated(t, canonical_rotation(&t.map(bpos)));
                std::array::from_fn(|q| t[(q + 3 - r) % 3])
            }));
            gtris.push((pi, c, found));
        }
    }
    (gtris, used, cmap)
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
    // Blender's placeholder normal gives none (super::BLENDER_NO_NORMAL).
    let given = p.nrm.as_ref().filter(|n| !super::is_no_normal(n[i]));
    let normal = match (given, dn.and_then(|d| base.normals.as_ref().map(|n| n[d]))) {
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
