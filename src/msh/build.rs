//! Authoring new models: [`ModelBuilder`] assembles nodes, slots, batches
//! and keys into a [`Model`] whose derived data (Res2 header, slot bounds,
//! Res7 links and normals, Res8/Res19) is regenerated canonically, and
//! whose unknown fields get documented defaults:
//!
//! | field | default |
//! |---|---|
//! | `Node38.flags` (`hdr0`) | caller's value, 0 by default |
//! | `Batch20` | retail layout (format-notes §6 R2): flags 0, `+2` = 0, `+4` = material key (≤ 255) with high byte 0x00 (lit, LIGHTMAPS row 0) or 0xFF (unlit), `+6` = 0xFFFF, `+14` = the batch's vertex count |
//! | `Slot68.tail` | f32 bits of the XY area and of the volume of the AABB, then 3 zero words |
//! | `TriDesc16.flags` / `sel` | 0 / `0x3F` (three selectors = none) |
//! | `PackedNormal4` 4th byte | 0 |
//! | Res15 | the vertex's bytes, 8 zero bytes by default |
//! | Res18 | only when a vertex has a lightmap UV: u16 `round(uv*1024)` per vertex (0 for the others) |
//! | Res9 | the node names, 32 bytes each, NUL-padded (retail, format-notes §6 R1; longer names cut to 31 bytes); attributes `n / 0 / 32` |
//! | Res10 | one empty record per node (retail: labels) |
//! | Res17 | empty payload, attributes 0 |
//! | Res5 | u16 (retail, §6 R6): each batch's UVs moved by whole turns so that none is negative (the same texels under REPEAT) |
//! | stream order | retail `1,2,3,4,5,15,13,6,7,8,19,9,10,17`, with Res18 after Res5 when present (format-notes §2) |
//! | `Res1.attr2` | 0 |
//!
//! Quaternions are written in the retail `wxyz` order (format-notes §6 R3);
//! the WEAR ids are the row numbers 0..n−1 (R4).

use super::derive;
use super::ir::*;
use crate::anim::{self, NodeTrackIn, QuatLayout};
use crate::convention::{quant, BatchLayout, Conventions, RES9_NAME_SIZE};

/// One vertex in game axes (node-local).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vertex {
    /// Position.
    pub pos: [f32; 3],
    /// Unit normal (quantized `*127`).
    pub normal: [f32; 3],
    /// UV (quantized `*1024`).
    pub uv: [f32; 2],
    /// Res15 bytes (meaning unknown; 0 by default).
    pub res15: [u8; 8],
    /// Lightmap UV (Res18, quantized `round(uv*1024)` as u16, format-notes
    /// §6 R5); `None` for an unlit vertex (Res18 0).
    pub lightmap_uv: Option<[f32; 2]>,
}

/// One batch to add: triangles over its own vertex list, one material row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Part {
    /// WEAR row.
    pub material: u16,
    /// Vertices (at most 65536 per part: indices are u16).
    pub vertices: Vec<Vertex>,
    /// Triangle corner indices into `vertices`, 3 per triangle.
    pub indices: Vec<u16>,
    /// Lit with the WEAR's LIGHTMAPS row 0 (format-notes §6 R2: the batch's
    /// lightmap byte 0x00 instead of 0xFF).
    pub lit: bool,
}

/// Errors of the builder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct BuildError {
    /// Rule id (`build.limits`, `msh.anim.*`).
    pub rule: &'static str,
    /// What went wrong.
    pub detail: String,
}

/// A node to add.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeSpec {
    /// Name (Windows-1251 bytes), `None` for an empty Res10 record.
    pub name: Option<Vec<u8>>,
    /// Parent node index (must be an earlier node).
    pub parent: Option<usize>,
    /// `hdr0`.
    pub flags: u16,
    /// `(cell, slot)` pairs, `cell = 5*state + lod` (format-notes §6 R7).
    pub cells: Vec<(usize, u16)>,
    /// Keys (times in integer frames, increasing from 0); one key for a static node.
    pub keys: Vec<AnimKey24>,
    /// Animated (gets a frame map) even with one key? Normally `keys.len() > 1`.
    pub animated: bool,
}

/// Builds models from parts (see the module docs for the defaults).
#[derive(Debug, Clone, Default)]
pub struct ModelBuilder {
    model: Model,
    nodes: Vec<NodeSpec>,
}

pub use crate::convention::quant::quantize_normal;

pub use crate::convention::quant::quantize_lightmap_uv;

/// Stored i16 quaternion in the retail `wxyz` order for a rotation given as
/// a glTF-style unit quaternion `(x, y, z, w)` in game axes
/// ([`quant::quantize_rotation`]).
pub fn quantize_rotation(r: [f32; 4]) -> [i16; 4] {
    quant::quantize_rotation(r, Conventions::RETAIL.quat)
}

/// A key at integer frame `time` with translation `pos` and glTF-style
/// rotation `rot` (x, y, z, w) in game axes.
pub fn key(time: f32, pos: [f32; 3], rot: [f32; 4]) -> AnimKey24 {
    AnimKey24 {
        pos,
        time,
        q: quantize_rotation(rot),
    }
}

/// Whole turns `floor(min)` per UV axis when some UV of `vertices` is
/// negative (else 0): subtracting them keeps a batch's UVs non-negative for
/// the retail u16 Res5 (format-notes §6 R6) without changing the texels
/// under REPEAT, and keeps the file's UV reading decidable as unsigned.
/// Most vertices one [`Part`] (one Batch20) can address: Res6 indices are
/// u16, `base_vertex` is u32 (msh-core §5.6, §5.8).
pub const MAX_PART_VERTICES: usize = 65536;
/// Most indices one [`Part`] can hold: `Batch20.index_count` is a u16,
/// rounded down to whole triangles.
pub const MAX_PART_INDICES: usize = (u16::MAX as usize / 3) * 3;

/// Splits a triangle list over `vertices` into parts of at most
/// [`MAX_PART_VERTICES`] vertices and [`MAX_PART_INDICES`] indices, keeping
/// the triangle order; each part holds only the vertices its triangles use,
/// in order of first use. One part per call when the list fits.
///
/// # Errors
/// `build.index` when `indices.len()` is not a multiple of 3 or an index is
/// `>= vertices.len()`.
pub fn split_part(
    material: u16,
    vertices: &[Vertex],
    indices: &[u32],
) -> Result<Vec<Part>, BuildError> {
    if !indices.len().is_multiple_of(3) {
        return Err(BuildError {
            rule: "build.index",
            detail: format!("{} indices is not a multiple of 3", indices.len()),
        });
    }
    if let Some(&bad) = indices.iter().find(|&&i| i as usize >= vertices.len()) {
        return Err(BuildError {
            rule: "build.index",
            detail: format!("index {bad} >= {} vertices", vertices.len()),
        });
    }
    // local[v] = (part number + 1, local index) of a vertex already in the part.
    let mut local: Vec<(u32, u16)> = vec![(0, 0); vertices.len()];
    let mut parts: Vec<Part> = Vec::new();
    let mut cur = Part {
        material,
        ..Part::default()
    };
    for tri in indices.chunks_exact(3) {
        let gen = parts.len() as u32 + 1;
        let new = tri
            .iter()
            .enumerate()
            .filter(|&(k, &v)| local[v as usize].0 != gen && !tri[..k].contains(&v))
            .count();
        if cur.vertices.len() + new > MAX_PART_VERTICES || cur.indices.len() + 3 > MAX_PART_INDICES
        {
            parts.push(std::mem::replace(
                &mut cur,
                Part {
                    material,
                    ..Part::default()
                },
            ));
        }
        let gen = parts.len() as u32 + 1;
        for &v in tri {
            let slot = &mut local[v as usize];
            if slot.0 != gen {
                *slot = (gen, cur.vertices.len() as u16);
                cur.vertices.push(vertices[v as usize]);
            }
            cur.indices.push(slot.1);
        }
    }
    if !cur.indices.is_empty() || parts.is_empty() {
        parts.push(cur);
    }
    Ok(parts)
}

impl ModelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a slot made of `parts` (one batch each) and returns its index.
    ///
    /// # Errors
    /// `build.limits` when u16 ranges (slots, batches, triangles, indices per
    /// part) would overflow.
    pub fn add_slot(&mut self, parts: &[Part]) -> Result<u16, BuildError> {
        let lim = |what: &str| BuildError {
            rule: "build.limits",
            detail: format!("too many {what} for the u16 fields of Slot68/Batch20"),
        };
        let m = &mut self.model;
        let tri_start = m.tris.as_ref().map_or(0, Vec::len);
        let batch_start = m.batches.len();
        let slot_index = m.slots.len();
        if slot_index >= NONE16 as usize || batch_start + parts.len() > u16::MAX as usize {
            return Err(lim("slots or batches"));
        }
        let mut tri_count = 0usize;
        for (bi, p) in parts.iter().enumerate() {
            if p.vertices.len() > 65536
                || p.indices.len() > u16::MAX as usize
                || p.indices.len() % 3 != 0
            {
                return Err(lim("vertices or indices in one part (split it)"));
            }
            let base = m.positions.len() as u32;
            let normals = m.normals.get_or_insert_with(Vec::new);
            let uvs = m.uvs.get_or_insert_with(Vec::new);
            let res15 = m.res15.get_or_insert_with(Vec::new);
            if m.res18.is_none() && p.vertices.iter().any(|v| v.lightmap_uv.is_some()) {
                m.res18 = Some(vec![[0; 4]; m.positions.len()]);
            }
            let sign = Conventions::RETAIL.uv;
            let shift = quant::uv_turns(p.vertices.iter().map(|v| v.uv), sign);
            for v in &p.vertices {
                m.positions.push(v.pos);
                normals.push(quantize_normal(v.normal));
                uvs.push(quant::quantize_uv(
                    [v.uv[0] - shift[0], v.uv[1] - shift[1]],
                    sign,
                ));
                res15.push(v.res15);
                if let Some(r18) = m.res18.as_mut() {
                    r18.push(v.lightmap_uv.map_or([0; 4], quantize_lightmap_uv));
                }
            }
            let index_start = m.indices.len() as u32;
            m.indices.extend_from_slice(&p.indices);
            let tris = m.tris.get_or_insert_with(Vec::new);
            for _ in 0..p.indices.len() / 3 {
                tris.push(TriDesc16 {
                    flags: 0,
                    links: [NONE16; 3],
                    normal: [0; 3],
                    sel: 0x3F,
                });
            }
            tri_count += p.indices.len() / 3;
            let mut b = Batch20 {
                flags: 0,
                material_index: 0,
                opaque4: 0,
                opaque6: 0xFFFF,
                index_count: p.indices.len() as u16,
                index_start,
                opaque14: p.vertices.len().min(u16::MAX as usize) as u16,
                base_vertex: base,
            };
            let layout = BatchLayout::Retail;
            layout
                .set_material_key(&mut b, p.material)
                .map_err(|e| BuildError {
                    rule: "build.limits",
                    detail: format!("part {bi}: {e}"),
                })?;
            layout.set_lightmap_row(&mut b, p.lit.then_some(0));
            m.batches.push(b);
        }
        if tri_start + tri_count > u16::MAX as usize {
            return Err(BuildError {
                rule: "build.limits",
                detail: format!(
                    "{} triangles in all (slot {slot_index} adds {tri_count}); Res7 links and Slot68 triangle ranges are u16, so a model holds at most 65535 triangles",
                    tri_start + tri_count
                ),
            });
        }
        m.slots.push(Slot68 {
            tri_start: tri_start as u16,
            tri_count: tri_count as u16,
            batch_start: batch_start as u16,
            batch_count: parts.len() as u16,
            ..Slot68::default()
        });
        Ok(slot_index as u16)
    }

    /// Adds a node and returns its index.
    pub fn add_node(&mut self, node: NodeSpec) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Finishes the model: node table, names, canonical animation, Res7,
    /// slot bounds and the Res2 header, stream entries in retail order.
    ///
    /// # Errors
    /// `build.parent` for a parent that is not an earlier node, `build.cell`
    /// for a cell >= 15 or an unknown slot, and the `msh.anim.*` rules of
    /// [`anim::canonical_anim`].
    pub fn finish(self) -> Result<Model, BuildError> {
        let ModelBuilder { mut model, nodes } = self;
        let mut tracks = Vec::with_capacity(nodes.len());
        let mut node38 = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let mut slots = [NONE16; CELLS];
            for &(cell, slot) in &n.cells {
                if cell >= CELLS || slot as usize >= model.slots.len() {
                    return Err(BuildError {
                        rule: "build.cell",
                        detail: format!("node {i}: cell {cell} / slot {slot} out of range"),
                    });
                }
                slots[cell] = slot;
            }
            let parent = match n.parent {
                None => NONE16,
                Some(p) if p < i => p as u16,
                Some(p) => {
                    return Err(BuildError {
                        rule: "build.parent",
                        detail: format!("node {i}: parent {p} is not an earlier node"),
                    })
                }
            };
            node38.push(Node38 {
                flags: n.flags,
                parent,
                map_start: NONE16,
                fallback_key: 0,
                slots,
            });
            let keys = if n.keys.is_empty() {
                vec![key(0.0, [0.0; 3], [0.0, 0.0, 0.0, 1.0])]
            } else {
                n.keys.clone()
            };
            tracks.push(NodeTrackIn {
                has_map: n.animated || keys.len() > 1,
                keys,
            });
        }
        let anim = anim::canonical_anim(&tracks).map_err(|e| BuildError {
            rule: e.rule,
            detail: e.detail,
        })?;
        for (i, n) in node38.iter_mut().enumerate() {
            n.map_start = anim.map_start[i];
            n.fallback_key = anim.fallback_key[i];
        }
        model.nodes = Nodes::Node38(node38);
        model.keys = Some(anim.keys);
        model.frame_map = Some(anim.frame_map);
        model.frame_count = anim.frame_count;
        // Retail names (format-notes §6 R1): Res9 fields, empty Res10 labels.
        model.names = Some(vec![None; nodes.len()]);
        let mut res9 = vec![0u8; RES9_NAME_SIZE * nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            let name: Vec<u8> = n
                .name
                .iter()
                .flatten()
                .copied()
                .filter(|&b| b != 0)
                .take(RES9_NAME_SIZE - 1)
                .collect();
            res9[i * RES9_NAME_SIZE..i * RES9_NAME_SIZE + name.len()].copy_from_slice(&name);
        }
        if model.normals.is_none() {
            model.normals = Some(Vec::new());
            model.uvs = Some(Vec::new());
            model.res15 = Some(Vec::new());
            model.tris = Some(Vec::new());
        }
        derive::recompute_tri_descs(&mut model);
        recompute_bounds(&mut model, true);
        let lightmapped = model.res18.is_some();
        model.entries = [1u32, 2, 3, 4, 5, 18, 15, 13, 6, 7, 8, 19, 9, 10, 17]
            .iter()
            .filter(|&&t| t != 18 || lightmapped)
            .map(|&t| StreamEntry {
                type_id: t,
                name: format!("Res{t}").into_bytes(),
                attr1: if t == 9 { nodes.len() as u32 } else { 0 },
                attr2: 0,
                attr3: if t == 9 { RES9_NAME_SIZE as u32 } else { 0 },
                raw: match t {
                    9 => Some(res9.clone()),
                    17 => Some(Vec::new()),
                    _ => None,
                },
            })
            .collect();
        Ok(model)
    }
}

/// Recomputes every slot's bounds (and, when `tail`, the Slot68 tail
/// defaults) and the Res2 header from the geometry and the t = 0 pose
/// (msh-core §5.2; the header covers each node's cell-0 (state 0, lod 0) slot in
/// model space). Slots without vertices get zero bounds. New models use the
/// retail `wxyz` quaternion order.
pub fn recompute_bounds(model: &mut Model, tail: bool) {
    for s in 0..model.slots.len() {
        let (lo, hi, _, _) = derive::update_slot_bounds(model, s);
        if tail {
            let area = (hi[0] - lo[0]) * (hi[1] - lo[1]);
            let volume = area * (hi[2] - lo[2]);
            model.slots[s].tail = [area.to_bits(), volume.to_bits(), 0, 0, 0];
        }
    }
    model.header = derive::res2_header(&model_space_points(model, Conventions::RETAIL.quat));
}

/// Vertices of every node's cell-0 (state 0, lod 0) slot, transformed by the t = 0
/// world matrices (double math, rounded to f32), reading quaternions with
/// `layout`.
pub fn model_space_points(model: &Model, layout: QuatLayout) -> Vec<[f32; 3]> {
    let Ok(sampler) = anim::Sampler::new(model, layout) else {
        return Vec::new();
    };
    let world = sampler.world_matrices(0.0);
    let mut pts = Vec::new();
    for (i, n) in model.nodes38().iter().enumerate() {
        let s = n.slots[0];
        let (Some(slot), Some(m)) = (model.slots.get(s as usize), world.get(i)) else {
            continue;
        };
        for t in derive::slot_triangles(model, slot) {
            for v in t {
                let Some(p) = model.positions.get(v as usize) else {
                    continue;
                };
                let (x, y, z) = (p[0] as f64, p[1] as f64, p[2] as f64);
                let row = |r: usize| {
                    (m[4 * r] as f64 * x
                        + m[4 * r + 1] as f64 * y
                        + m[4 * r + 2] as f64 * z
                        + m[4 * r + 3] as f64) as f32
                };
                pts.push([row(0), row(1), row(2)]);
            }
        }
    }
    pts
}
