//! The ground under a point, as the game finds it (terrain-notes §3 items
//! 1 and 10): LOD 0 faces looked up through the map's cell grid (origin
//! Res2 corner 0, cell size from slot 0's box, record `i` the square
//! `(i / down, i % down)`), the height interpolated on the face under the
//! point.
//!
//! One rule for every user: the mission's display of clan bases, the
//! placement rule of mission-notes §5.4 (objects set on the ground) and the
//! `Land.map` areal vertices that follow an edited terrain (terrain-notes §2).

use super::ir::Land;

/// Faces whose normal has `z` at most this (steeper than 80°) never count
/// as ground (terrain-notes §3 item 10).
pub const STEEP_NORMAL_Z: f32 = 0.173_648;

/// Whether a face whose unit normal has z `normal_z` is too steep to be
/// ground: `normal_z` ≤ [`STEEP_NORMAL_Z`] (terrain-notes §3 item 10). The
/// one steepness rule of the ground lookup and of a new map's walkable
/// areals.
pub fn is_steep(normal_z: f32) -> bool {
    normal_z <= STEEP_NORMAL_Z
}

/// A LOD 0 ground lookup over one map, built once ([`Ground::new`], linear
/// in the face count) and queried many times ([`Ground::height_at`], the
/// faces of one cell).
#[derive(Debug, Clone)]
pub struct Ground<'a> {
    land: &'a Land,
    /// `(origin x, origin y, cell width, cell height, across, down)`, or
    /// `None` when the grid is unusable (then every query scans LOD 0).
    grid: Option<(f32, f32, f32, f32, usize, usize)>,
}

impl<'a> Ground<'a> {
    /// The lookup over `land`'s LOD 0 faces.
    pub fn new(land: &'a Land) -> Self {
        Ground {
            land,
            grid: grid_of(land),
        }
    }

    /// The ground height (world z, game axes, Z up) at `(x, y)`: the LOD 0
    /// face under the point, its plane interpolated; `None` off the map or
    /// over a hole. Steep faces are skipped unless no other face is there.
    pub fn height_at(&self, x: f32, y: f32) -> Option<f32> {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let lod0 = self.land.lod_range(0);
        if let Some(run) = self.cell_run(x, y) {
            let run = run.start.max(lod0.start)..run.end.min(lod0.end);
            if let Some(z) = self.scan(run, x, y) {
                return Some(z);
            }
        }
        // On a cell border or with an unusual grid: every LOD 0 face.
        self.scan(lod0, x, y)
    }

    /// The mean ground height along a closed outline (world x, y pairs),
    /// sampled at every vertex and at steps of at most `step` along each
    /// edge (mission-notes §5.4: a building is set down on the mean ground
    /// of its outer `.bas` ring). `None` when no sample is on the map.
    pub fn mean_along(&self, ring: &[[f32; 2]], step: f32) -> Option<f32> {
        let step = if step.is_finite() && step > 0.0 {
            step
        } else {
            1.0
        };
        let (mut sum, mut n) = (0.0f64, 0u64);
        for (k, a) in ring.iter().enumerate() {
            let b = ring[(k + 1) % ring.len()];
            let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            // Bounded: at most 4096 samples an edge whatever its length.
            let parts = ((len / step).ceil() as usize).clamp(1, 4096);
            for s in 0..parts {
                let t = s as f32 / parts as f32;
                let (x, y) = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t);
                if let Some(z) = self.height_at(x, y) {
                    sum += f64::from(z);
                    n += 1;
                }
            }
        }
        (n > 0).then(|| (sum / n as f64) as f32)
    }

    fn cell_run(&self, x: f32, y: f32) -> Option<std::ops::Range<usize>> {
        let (x0, y0, w, h, across, down) = self.grid?;
        let ix = ((x - x0) / w).floor();
        let iy = ((y - y0) / h).floor();
        if ix < 0.0 || iy < 0.0 || ix >= across as f32 || iy >= down as f32 {
            return None;
        }
        let record = ix as usize * down + iy as usize;
        let slot = usize::from(*self.land.squares.get(record)?.slots.first()?);
        let s = self.land.slots.get(slot)?;
        let first = usize::from(s.first);
        Some(first..first + usize::from(s.count))
    }

    fn scan(&self, faces: std::ops::Range<usize>, x: f32, y: f32) -> Option<f32> {
        let p = &self.land.positions;
        let mut steep = None;
        for f in self.land.faces.get(faces)? {
            let [a, b, c] = f.v.map(|k| p.get(usize::from(k)).copied());
            let (Some(a), Some(b), Some(c)) = (a, b, c) else {
                continue;
            };
            let Some(z) = on_triangle([a, b, c], x, y) else {
                continue;
            };
            if !is_steep(f32::from(f.normal[2]) / 32767.0) {
                return Some(z);
            }
            steep.get_or_insert(z);
        }
        steep
    }
}

/// The height at `(x, y)` of the plane through `t` when the point is inside
/// the triangle's XY projection (edges included, 1e-6 slack).
fn on_triangle(t: [[f32; 3]; 3], x: f32, y: f32) -> Option<f32> {
    let [a, b, c] = t;
    let d = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1]);
    if d.abs() < 1e-12 {
        return None;
    }
    let l1 = ((b[1] - c[1]) * (x - c[0]) + (c[0] - b[0]) * (y - c[1])) / d;
    let l2 = ((c[1] - a[1]) * (x - c[0]) + (a[0] - c[0]) * (y - c[1])) / d;
    let l3 = 1.0 - l1 - l2;
    let eps = -1e-6;
    (l1 >= eps && l2 >= eps && l3 >= eps).then(|| l1 * a[2] + l2 * b[2] + l3 * c[2])
}

fn grid_of(land: &Land) -> Option<(f32, f32, f32, f32, usize, usize)> {
    let (across, down) = land.grid()?;
    let s0 = land.slots.first()?;
    let (w, h) = (s0.max[0] - s0.min[0], s0.max[1] - s0.min[1]);
    let [x0, y0, _] = land.corners[0];
    (w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0 && x0.is_finite() && y0.is_finite())
        .then_some((x0, y0, w, h, across, down))
}
