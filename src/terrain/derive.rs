//! Values derived from geometry and materials (terrain-notes §4.4, §5.1;
//! the corpus conventions): face normals, vertex normals, cell boxes, the
//! Res2 header box and the Res11 draw order. The writer recomputes them for
//! what an edit touched and keeps the base bytes elsewhere.

use std::collections::{BTreeSet, HashMap};

use super::ir::*;

/// Face normal as stored: `round(unit cross product × 32767)` as i16;
/// `None` for a degenerate triangle.
pub fn face_normal(p: [[f32; 3]; 3]) -> Option<[i16; 3]> {
    let c = cross64(p);
    let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
    (len > 0.0 && len.is_finite()).then(|| c.map(|x| (x / len * 32767.0).round() as i16))
}

/// `cross(p1 − p0, p2 − p0)` in f64.
fn cross64(p: [[f32; 3]; 3]) -> [f64; 3] {
    let q = p.map(|v| v.map(f64::from));
    let u: [f64; 3] = std::array::from_fn(|k| q[1][k] - q[0][k]);
    let v: [f64; 3] = std::array::from_fn(|k| q[2][k] - q[0][k]);
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Recomputes the face normal of every face in `faces`.
pub fn face_normals(land: &mut Land, faces: &BTreeSet<usize>) {
    for &i in faces {
        let f = &land.faces[i];
        let p = f.v.map(|v| land.positions[usize::from(v)]);
        if let Some(n) = face_normal(p) {
            land.faces[i].normal = n;
        }
    }
}

fn key(p: [f32; 3]) -> [u32; 3] {
    p.map(f32::to_bits)
}

/// Recomputes the Res4 normals of `vertices`: the normalised mean of the
/// unit normals of the LOD0 faces that are not liquid surface at the
/// vertex's position (all copies of the point); +Z for liquid-surface
/// vertices. i8 = round(c × 127); the 4th byte is kept.
pub fn vertex_normals(land: &mut Land, vertices: &BTreeSet<usize>) {
    if vertices.is_empty() {
        return;
    }
    let wanted: BTreeSet<[u32; 3]> = vertices.iter().map(|&v| key(land.positions[v])).collect();
    let mut sum: HashMap<[u32; 3], [f64; 3]> = HashMap::new();
    let mut water = vec![false; land.positions.len()];
    for i in land.lod_range(0) {
        let f = &land.faces[i];
        if f.is_water() {
            f.v.iter().for_each(|&v| water[usize::from(v)] = true);
            continue;
        }
        let p = f.v.map(|v| land.positions[usize::from(v)]);
        let c = cross64(p);
        let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        if len == 0.0 || !len.is_finite() {
            continue;
        }
        for q in p.iter().map(|&q| key(q)).filter(|k| wanted.contains(k)) {
            let s = sum.entry(q).or_insert([0.0; 3]);
            (0..3).for_each(|k| s[k] += c[k] / len);
        }
    }
    for &v in vertices {
        let n = match (water[v], sum.get(&key(land.positions[v]))) {
            (true, _) | (false, None) => [0.0, 0.0, 1.0],
            (false, Some(s)) => {
                let l = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
                if l > 0.0 {
                    s.map(|x| x / l)
                } else {
                    [0.0, 0.0, 1.0]
                }
            }
        };
        let q = n.map(|c| (c * 127.0).round().clamp(-127.0, 127.0) as i8 as u8);
        land.normals[v] = [q[0], q[1], q[2], land.normals[v][3]];
    }
}

/// The smallest f32 not below `x`.
fn f32_up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) >= x {
        f
    } else {
        f32::from_bits(f.to_bits() + 1)
    }
}

/// Recomputes the Z range, centre and radius of the LOD0 and LOD1 slots of
/// `squares` (XY stays the grid square): Z = min/max Z of both LODs' faces
/// of the square; centre = midpoint; radius = half the diagonal rounded up
/// to f32.
pub fn cell_boxes(land: &mut Land, squares: &BTreeSet<usize>) {
    let n = land.squares.len();
    for &sq in squares {
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for slot in [sq, sq + n].into_iter().filter(|&s| s < land.slots.len()) {
            let s = land.slots[slot];
            for i in usize::from(s.first)..usize::from(s.first) + usize::from(s.count) {
                for &v in &land.faces[i].v {
                    let z = land.positions[usize::from(v)][2];
                    lo = lo.min(z);
                    hi = hi.max(z);
                }
            }
        }
        if lo > hi {
            continue;
        }
        let slots = land.slots.len();
        for slot in [sq, sq + n].into_iter().filter(|&s| s < slots) {
            let s = &mut land.slots[slot];
            s.min[2] = lo;
            s.max[2] = hi;
            let d: [f64; 3] = std::array::from_fn(|k| f64::from(s.max[k]) - f64::from(s.min[k]));
            s.centre =
                std::array::from_fn(|k| ((f64::from(s.min[k]) + f64::from(s.max[k])) / 2.0) as f32);
            s.radius = f32_up((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / 2.0);
        }
    }
}

/// The Res2 header corners from the bounding box of Res3:
/// (xmin,ymin,zmin) (xmax,ymin,zmin) (xmax,ymax,zmin) (xmin,ymax,zmin), then
/// the same at zmax.
pub fn header_corners(land: &Land) -> [[f32; 3]; 8] {
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in &land.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let xy = [
        [lo[0], lo[1]],
        [hi[0], lo[1]],
        [hi[0], hi[1]],
        [lo[0], hi[1]],
    ];
    std::array::from_fn(|k| {
        let z = if k < 4 { lo[2] } else { hi[2] };
        [xy[k % 4][0], xy[k % 4][1], z]
    })
}

/// Regenerates the Res11 run of `slot`: its faces grouped by (tex1, tex2)
/// in order of first occurrence in Res21; flags 0x58 on a group start and
/// 0x48 otherwise; 4th byte 0.
pub fn draw_order(land: &mut Land, slot: usize) {
    let s = land.slots[slot];
    let range = usize::from(s.first)..usize::from(s.first) + usize::from(s.count);
    let mut groups: Vec<((u8, u8), Vec<u16>)> = Vec::new();
    for i in range.clone() {
        let f = &land.faces[i];
        let pair = (f.tex1, f.tex2);
        match groups.iter_mut().find(|g| g.0 == pair) {
            Some(g) => g.1.push(i as u16),
            None => groups.push((pair, vec![i as u16])),
        }
    }
    let entries = groups.iter().flat_map(|g| {
        g.1.iter().enumerate().map(|(k, &face)| DrawEntry {
            face,
            flags: if k == 0 { 0x58 } else { 0x48 },
            byte3: 0,
        })
    });
    for (slot_k, e) in range.zip(entries.collect::<Vec<_>>()) {
        land.order[slot_k] = e;
    }
}
