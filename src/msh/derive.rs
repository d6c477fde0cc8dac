//! Derived data of a model, recomputed when geometry changes (msh-core §8.3):
//! slot triangles in batch order, Res7 neighbour links and face normals,
//! Slot68 bounds and the Res2 header.
//!
//! Conventions (checked against the corpus): a slot's triangles are numbered
//! in batch order from `slot.tri_start`; `TriDesc16.links[e]` is the other
//! triangle of the same slot that shares the edge `(v[e], v[e+1 mod 3])` by
//! vertex *position*, or `0xFFFF`; the face normal is
//! `round(normalize((v1-v0) x (v2-v0)) * 32767)`.

use std::collections::HashMap;

use super::ir::{Model, Res2Header, Slot68, NONE16};

/// Bounds of a point set: AABB min, AABB max, sphere centre, sphere radius.
pub type Bounds = ([f32; 3], [f32; 3], [f32; 3], f32);

/// The triangles of `slot` as global vertex indices (`base_vertex + Res6`),
/// in batch order. Batches or indices outside the model are skipped (the
/// model is expected to be validated).
pub fn slot_triangles(model: &Model, slot: &Slot68) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    let first = slot.batch_start as usize;
    let last = (first + slot.batch_count as usize).min(model.batches.len());
    for b in &model.batches[first.min(last)..last] {
        let start = b.index_start as usize;
        let end = start + b.index_count as usize;
        let Some(idx) = model.indices.get(start..end) else {
            continue;
        };
        for t in idx.chunks_exact(3) {
            out.push([
                b.base_vertex + t[0] as u32,
                b.base_vertex + t[1] as u32,
                b.base_vertex + t[2] as u32,
            ]);
        }
    }
    out
}

fn pos_key(p: [f32; 3]) -> [u32; 3] {
    // -0.0 and 0.0 are the same point.
    p.map(|c| if c == 0.0 { 0 } else { c.to_bits() })
}

/// Res7 neighbour links of triangles given by corner positions: for each
/// triangle and edge `e`, the index (into `tris`) of the first other
/// triangle having both edge end points among its corners, or `None`.
pub fn neighbour_links(tris: &[[[f32; 3]; 3]]) -> Vec<[Option<usize>; 3]> {
    let mut by_edge: HashMap<([u32; 3], [u32; 3]), Vec<usize>> = HashMap::new();
    for (t, v) in tris.iter().enumerate() {
        for e in 0..3 {
            let a = pos_key(v[e]);
            let b = pos_key(v[(e + 1) % 3]);
            let key = if a <= b { (a, b) } else { (b, a) };
            let list = by_edge.entry(key).or_default();
            if list.last() != Some(&t) {
                list.push(t);
            }
        }
    }
    tris.iter()
        .enumerate()
        .map(|(t, v)| {
            let mut l = [None; 3];
            for (e, slot) in l.iter_mut().enumerate() {
                let a = pos_key(v[e]);
                let b = pos_key(v[(e + 1) % 3]);
                let key = if a <= b { (a, b) } else { (b, a) };
                *slot = by_edge
                    .get(&key)
                    .and_then(|ts| ts.iter().copied().find(|&u| u != t));
            }
            l
        })
        .collect()
}

/// Face normal quantized like Res7: `round(normalize((v1-v0) x (v2-v0)) * 32767)`;
/// a degenerate triangle gives `[0, 0, 0]`.
pub fn face_normal_i16(v: &[[f32; 3]; 3]) -> [i16; 3] {
    let e1 = [
        v[1][0] as f64 - v[0][0] as f64,
        v[1][1] as f64 - v[0][1] as f64,
        v[1][2] as f64 - v[0][2] as f64,
    ];
    let e2 = [
        v[2][0] as f64 - v[0][0] as f64,
        v[2][1] as f64 - v[0][1] as f64,
        v[2][2] as f64 - v[0][2] as f64,
    ];
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if l == 0.0 || !l.is_finite() {
        return [0, 0, 0];
    }
    n.map(|c| (c / l * 32767.0).round().clamp(-32767.0, 32767.0) as i16)
}

/// Recomputes the Res7 links and face normals of every slot's triangles
/// (in place; flags and selectors are kept). Links point to triangle
/// indices of the same slot (`tri_start + k`).
pub fn recompute_tri_descs(model: &mut Model) {
    let Some(mut tris) = model.tris.take() else {
        return;
    };
    for slot in model.slots.clone() {
        let corners: Vec<[[f32; 3]; 3]> = slot_triangles(model, &slot)
            .iter()
            .map(|t| t.map(|i| model.positions.get(i as usize).copied().unwrap_or_default()))
            .collect();
        let links = neighbour_links(&corners);
        for (k, (c, l)) in corners.iter().zip(&links).enumerate() {
            let Some(d) = tris.get_mut(slot.tri_start as usize + k) else {
                break;
            };
            d.normal = face_normal_i16(c);
            d.links = l.map(|x| x.map_or(NONE16, |u| (slot.tri_start as usize + u) as u16));
        }
    }
    model.tris = Some(tris);
}

/// Node-local bounds of the vertices referenced by `slot`: AABB, sphere
/// centre = AABB centre, radius = max distance from the centre (rounded up
/// to the next f32 so that it bounds every vertex). `None` when the slot
/// has no vertex.
pub fn slot_bounds(model: &Model, slot: &Slot68) -> Option<Bounds> {
    let tris = slot_triangles(model, slot);
    let pts = tris
        .iter()
        .flatten()
        .filter_map(|&i| model.positions.get(i as usize).copied());
    bounds_of(pts)
}

/// Recomputes slot `s`'s AABB and sphere from its vertices (zero bounds for
/// a slot without vertices); the Slot68 tail is left alone. Returns the
/// bounds written.
pub fn update_slot_bounds(model: &mut Model, s: usize) -> Bounds {
    let slot = model.slots[s];
    let b = slot_bounds(model, &slot).unwrap_or_default();
    let sl = &mut model.slots[s];
    (sl.aabb_min, sl.aabb_max, sl.sphere_center, sl.sphere_radius) = b;
    b
}

/// AABB, centre and bounding radius of a point set (see [`slot_bounds`]).
pub fn bounds_of(pts: impl Iterator<Item = [f32; 3]> + Clone) -> Option<Bounds> {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    let mut any = false;
    for p in pts.clone() {
        any = true;
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if !any {
        return None;
    }
    let c = [0, 1, 2].map(|k| ((lo[k] as f64 + hi[k] as f64) * 0.5) as f32);
    let r = pts
        .map(|p| {
            let d = [0, 1, 2].map(|k| p[k] as f64 - c[k] as f64);
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        })
        .fold(0.0f64, f64::max);
    Some((lo, hi, c, round_up_f32(r)))
}

/// The smallest f32 >= `r` (r >= 0), so that a radius bounds every point.
fn round_up_f32(r: f64) -> f32 {
    let rf = r as f32;
    if (rf as f64) < r {
        f32::from_bits(rf.to_bits() + 1)
    } else {
        rf
    }
}

/// Res2 header from model-space points (the vertices of every node's
/// cell-0 (state 0, lod 0) slot transformed by the t = 0 world matrices): hull =
/// the 8 AABB corners `(xmin,ymin,zmin) (xmax,ymin,zmin) (xmax,ymax,zmin)
/// (xmin,ymax,zmin)` then the same at zmax; sphere = AABB centre + max
/// distance; capsule A = (cx, cy, zmin), B = (cx, cy, zmax), radius = max
/// XY distance from (cx, cy).
pub fn res2_header(points: &[[f32; 3]]) -> Res2Header {
    let Some((lo, hi, c, r)) = bounds_of(points.iter().copied()) else {
        return Res2Header::default();
    };
    let hull = [
        [lo[0], lo[1], lo[2]],
        [hi[0], lo[1], lo[2]],
        [hi[0], hi[1], lo[2]],
        [lo[0], hi[1], lo[2]],
        [lo[0], lo[1], hi[2]],
        [hi[0], lo[1], hi[2]],
        [hi[0], hi[1], hi[2]],
        [lo[0], hi[1], hi[2]],
    ];
    let rxy = round_up_f32(
        points
            .iter()
            .map(|p| {
                let dx = p[0] as f64 - c[0] as f64;
                let dy = p[1] as f64 - c[1] as f64;
                (dx * dx + dy * dy).sqrt()
            })
            .fold(0.0f64, f64::max),
    );
    Res2Header {
        hull,
        sphere_center: c,
        sphere_radius: r,
        capsule_a: [c[0], c[1], lo[2]],
        capsule_b: [c[0], c[1], hi[2]],
        capsule_radius: rxy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_by_shared_positions() {
        // Two triangles forming a quad, sharing edge (1,2)/(2,1).
        let a = [0.0, 0.0, 0.0];
        let b = [1.0, 0.0, 0.0];
        let c = [1.0, 1.0, 0.0];
        let d = [0.0, 1.0, 0.0];
        let l = neighbour_links(&[[a, b, c], [a, c, d]]);
        assert_eq!(l[0], [None, None, Some(1)]);
        assert_eq!(l[1], [Some(0), None, None]);
        assert_eq!(face_normal_i16(&[a, b, c]), [0, 0, 32767]);
    }

    #[test]
    fn bounds_and_header() {
        let pts = [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]];
        let (lo, hi, c, r) = bounds_of(pts.iter().copied()).unwrap();
        assert_eq!((lo, hi, c), ([0.0; 3], [2.0, 4.0, 6.0], [1.0, 2.0, 3.0]));
        assert!(r as f64 >= 14f64.sqrt());
        let h = res2_header(&pts);
        assert_eq!(h.hull[6], [2.0, 4.0, 6.0]);
        assert_eq!(h.capsule_a, [1.0, 2.0, 0.0]);
        assert_eq!(h.capsule_b, [1.0, 2.0, 6.0]);
    }
}
