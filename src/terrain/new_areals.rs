//! Land.map of a new map (terrain-notes §2, §5.1 "Land.map"): one areal
//! per grid quad, derived from the written terrain as the game reads it.
//!
//! - polygon: the quad's four corners counter-clockwise from (x0, y0),
//!   edge `k` from vertex `k` to `k+1`, z the ground under each corner
//!   ([`super::ground::Ground`], the one ground rule);
//! - centre (anchor) the quad's centre, z the ground there; area the
//!   shoelace area; normal (0, 0, 1);
//! - word0 (walkable) 1, or 0 on water and where a face of the quad is
//!   steeper than the ground rule's 80° ([`super::ground::STEEP_NORMAL_Z`]);
//!   word2 (class) 1 on land, 0xF0 on a lake quad (both faces liquid
//!   surface); words 1 and 3 zero;
//! - twin links to the quads across each edge, `(-1, -1)` on the map's
//!   border;
//! - the 128×128 lookup grid over the map's XY bounds, x outer, each cell
//!   listing the quads whose interior overlaps it.

use super::author::HeightGrid;
use super::ground::{Ground, STEEP_NORMAL_Z};
use super::ir::Land;
use super::map::{Areal, ArealMap};

/// Lookup grid cells along each axis (every retail map: 128×128).
pub const LOOKUP_CELLS: u32 = 128;
/// word2 of a lake areal (terrain-notes §2.2: all of 0xF0 set).
pub const LAKE_CLASS: u32 = 0xF0;

/// The Land.map of the new map `land` made from `grid` (see the module
/// docs). `land` must be [`super::author::build`]'s result for `grid`.
pub fn areal_map(grid: &HeightGrid, land: &Land) -> ArealMap {
    let spec = grid.spec;
    let n = spec.n();
    let ground = Ground::new(land);
    let node_z: Vec<f32> = (0..(n + 1) * (n + 1))
        .map(|id| {
            let (i, j) = (id / (n + 1), id % (n + 1));
            ground
                .height_at(spec.coord(i), spec.coord(j))
                .unwrap_or(grid.z[id])
        })
        .collect();
    let z = |i: usize, j: usize| node_z[i * (n + 1) + j];
    let mut areals = Vec::with_capacity(n * n);
    for q in 0..n * n {
        let (i, j) = (q / n, q % n);
        let (x0, x1, y0, y1) = (
            spec.coord(i),
            spec.coord(i + 1),
            spec.coord(j),
            spec.coord(j + 1),
        );
        let faces = &grid.quads[q];
        let lake = faces.iter().all(|f| f.1.water);
        let steep = faces.iter().any(|(t, _)| {
            let p = t.map(|(a, b)| [spec.coord(a), spec.coord(b), z(a, b)]);
            let c = super::validate::cross_of(p[0], p[1], p[2]);
            let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
            len > 0.0 && c[2] / len <= STEEP_NORMAL_Z
        });
        let walk = !lake && !faces.iter().any(|f| f.1.water) && !steep;
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        let cz = ground.height_at(cx, cy).unwrap_or(z(i, j));
        let id = |a: usize, b: usize| (a * n + b) as i32;
        // Edge 0 bottom (to j-1's top, its edge 2), 1 right (to i+1's left,
        // edge 3), 2 top (to j+1's bottom, edge 0), 3 left (to i-1's right, edge 1).
        let links = vec![
            if j > 0 { [id(i, j - 1), 2] } else { [-1, -1] },
            if i + 1 < n {
                [id(i + 1, j), 3]
            } else {
                [-1, -1]
            },
            if j + 1 < n {
                [id(i, j + 1), 0]
            } else {
                [-1, -1]
            },
            if i > 0 { [id(i - 1, j), 1] } else { [-1, -1] },
        ];
        areals.push(Areal {
            anchor: [cx, cy, cz, 0.0],
            area: ((f64::from(x1) - f64::from(x0)) * (f64::from(y1) - f64::from(y0))) as f32,
            normal: [0.0, 0.0, 1.0],
            words: [u32::from(walk), 0, if lake { LAKE_CLASS } else { 1 }, 0],
            vertices: vec![
                [x0, y0, z(i, j)],
                [x1, y0, z(i + 1, j)],
                [x1, y1, z(i + 1, j + 1)],
                [x0, y1, z(i, j + 1)],
            ],
            links,
        });
    }
    let cells = lookup(&areals, spec.side);
    ArealMap {
        name: b"ArealMap".to_vec(),
        attr23: [0, 0],
        areals,
        cells_xy: [LOOKUP_CELLS, LOOKUP_CELLS],
        cells,
    }
}

/// The lookup grid over `[0, side]²`, x outer: per cell the areals whose
/// XY box interior overlaps it.
fn lookup(areals: &[Areal], side: f32) -> Vec<Vec<u16>> {
    let c = LOOKUP_CELLS as usize;
    let w = f64::from(side) / c as f64;
    let mut cells = vec![Vec::new(); c * c];
    let range = |lo: f32, hi: f32| {
        let a = (f64::from(lo) / w).floor().max(0.0) as usize;
        let b = ((f64::from(hi) / w).ceil() as usize).min(c);
        a..b.max(a)
    };
    for (k, a) in areals.iter().enumerate() {
        let (x0, y0) = (a.vertices[0][0], a.vertices[0][1]);
        let (x1, y1) = (a.vertices[2][0], a.vertices[2][1]);
        for cx in range(x0, x1) {
            for cy in range(y0, y1) {
                cells[cx * c + cy].push(k as u16);
            }
        }
    }
    cells
}
