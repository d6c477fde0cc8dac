//! Re-assembling Res13, Res6 and Res7 in slot order after slots were
//! rebuilt (msh-core §8.3): rebuilt batches placed within u16 indices,
//! unchanged slots copied, Res7 links and face normals recomputed.

use std::collections::{BTreeMap, HashMap};

use super::{err, push_vertex, slot_corners, NewBatch};
use crate::gltf_import::ImportError;
use crate::msh::{derive, Batch20, Model, TriDesc16, NONE16};
/// Copies vertex `v` to the end of every per-vertex stream.
fn clone_vertex(model: &mut Model, v: usize) -> u32 {
    let n = model.normals.as_ref().map_or([0; 4], |x| x[v]);
    let uv = model.uvs.as_ref().map_or([0; 2], |x| x[v]);
    let r15 = model.res15.as_ref().map_or([0; 8], |x| x[v]);
    let r16 = model.res16.as_ref().map_or([0; 8], |x| x[v]);
    let r18 = model.res18.as_ref().map_or([0; 4], |x| x[v]);
    push_vertex(model, model.positions[v], n, uv, r15, r16, r18)
}

/// `v` as a u16 field value.
///
/// # Errors
/// `gltf.limits`, naming `what`.
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
pub(super) fn assemble(
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
