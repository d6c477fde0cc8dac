//! Land.map's areals (terrain-notes §2.2, §2.3, §5.1 "Land.map", §5.2
//! warning rule 12): every rule a written areal follows, each beside the
//! reader's inverse that checks it, and the two writers that use them.
//!
//! | rule | forward (writers) | inverse (reader checks) |
//! |------|-------------------|-------------------------|
//! | vertex z = LOD 0 ground height (corpus convention `land_map`) | [`ground_z`], [`place_on_ground`] | [`ArealVertex::on_ground`], [`off_ground`] |
//! | polygon CCW and convex, area = shoelace | [`quad_polygon`], [`shoelace_area`] | [`winding_of`] (`map.winding`) |
//! | twin links across shared edges | [`twin_links`] | [`check`] (`map.link_mutual`) |
//! | 128×128 lookup grid over the areals' XY bounds, x outer | [`cell_grid`] | [`check`] (`map.grid_size`) |
//!
//! The writers:
//! - an edited map ([`follow_ground`], [`follow_bytes`]): after a height
//!   edit of Land.msh the vertices whose ground changed move onto the new
//!   ground; the polygons' XY, areas, links and the grid are kept (they
//!   cannot be regenerated faithfully, terrain-notes §3), so a changed XY
//!   extent or water is a warning of the importer;
//! - a new map ([`areal_map`]): one areal per grid quad.
//!
//! The byte codec of Land.map is [`super::map`] (`decode` ↔ `encode`).

use std::collections::HashMap;

use super::author::HeightGrid;
use super::ground::{self, Ground};
use super::ir::Land;
use super::map::{Areal, ArealMap, TYPE_AREAL_MAP};
use super::TerrainError;

// ---------------------------------------------------------------------
// Vertex z: the LOD 0 ground height at the vertex's XY.
// ---------------------------------------------------------------------

/// How far (world units, along z) an areal vertex may be from the LOD 0
/// ground and still count as on it: 1e-3, the same tolerance the corpus
/// samples use for a ground hit (manifest `terrain_conventions.expected_gltf`).
/// The corpus maps' areal vertices are within 1.6e-5 of
/// [`Ground::height_at`] (f32 rounding of the interpolation; measured on
/// m01 and m02, `tests/map_consistency.rs`).
pub const AREAL_Z_TOLERANCE: f32 = 1e-3;

/// The z rule of an areal vertex (and of an areal's centre) at world
/// `(x, y)` (game axes, Z up): the LOD 0 ground height there as
/// [`Ground::height_at`] finds it, exactly; `None` off the map or over a
/// hole (the vertex then keeps its z and is named, never guessed).
pub fn ground_z(g: &Ground<'_>, x: f32, y: f32) -> Option<f32> {
    g.height_at(x, y)
}

/// One areal vertex and the ground under it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArealVertex {
    /// Areal index (record order of Land.map).
    pub areal: usize,
    /// Vertex index inside the areal's polygon.
    pub vertex: usize,
    /// The vertex as stored (world units, game axes, Z up).
    pub at: [f32; 3],
    /// The LOD 0 ground height under its XY ([`ground_z`]; `None`: off
    /// the map or over a hole).
    pub ground: Option<f32>,
}

impl ArealVertex {
    /// The inverse of [`ground_z`]: whether the vertex is on the ground
    /// within [`AREAL_Z_TOLERANCE`].
    pub fn on_ground(&self) -> bool {
        self.ground
            .is_some_and(|g| (self.at[2] - g).abs() <= AREAL_Z_TOLERANCE)
    }
}

/// Every areal vertex of `map` with the ground of `land` under it, in
/// record order. Work: one [`Ground::height_at`] per vertex.
pub fn vertices_over(map: &ArealMap, land: &Land) -> Vec<ArealVertex> {
    let g = Ground::new(land);
    let mut out = Vec::new();
    for (a, areal) in map.areals.iter().enumerate() {
        for (k, p) in areal.vertices.iter().enumerate() {
            out.push(ArealVertex {
                areal: a,
                vertex: k,
                at: *p,
                ground: ground_z(&g, p[0], p[1]),
            });
        }
    }
    out
}

/// The areal vertices of `map` that are not on `land`'s ground (more than
/// [`AREAL_Z_TOLERANCE`] off it, or with no ground under them).
pub fn off_ground(map: &ArealMap, land: &Land) -> Vec<ArealVertex> {
    vertices_over(map, land)
        .into_iter()
        .filter(|v| !v.on_ground())
        .collect()
}

/// Puts every areal vertex of `map` on `land`'s ground: z = [`ground_z`]
/// at its XY, exactly. Returns the `(areal, vertex)` pairs with no ground
/// under them (z kept).
pub fn place_on_ground(map: &mut ArealMap, land: &Land) -> Vec<(usize, usize)> {
    let g = Ground::new(land);
    let mut none = Vec::new();
    for (a, areal) in map.areals.iter_mut().enumerate() {
        for (k, p) in areal.vertices.iter_mut().enumerate() {
            match ground_z(&g, p[0], p[1]) {
                Some(z) => p[2] = z,
                None => none.push((a, k)),
            }
        }
    }
    none
}

/// One line per areal vertex off the ground (at most `max`, then a count),
/// naming the areal, the vertex, its position and the ground under it.
pub fn describe_off(off: &[ArealVertex], max: usize) -> String {
    let mut s: Vec<String> = off
        .iter()
        .take(max)
        .map(|v| {
            let g = v.ground.map_or_else(
                || "no ground under it".to_string(),
                |g| format!("ground {g}"),
            );
            format!(
                "areal {} vertex {} at ({}, {}) z {} ({g})",
                v.areal, v.vertex, v.at[0], v.at[1], v.at[2]
            )
        })
        .collect();
    if off.len() > max {
        s.push(format!("{} more", off.len() - max));
    }
    s.join("; ")
}

// ---------------------------------------------------------------------
// Polygon: counter-clockwise, convex, area = shoelace.
// ---------------------------------------------------------------------

/// How far (sine of the turn angle) a polygon corner may turn clockwise
/// and still count as convex in [`winding_of`]: 1e-4, room for f32
/// rounding of collinear vertices.
pub const CONVEX_TOLERANCE: f64 = 1e-4;

/// The areal polygon of the axis-aligned quad `[x0, x1] × [y0, y1]`
/// (world units, `x0 < x1`, `y0 < y1`): its corners counter-clockwise
/// seen from +Z starting at (x0, y0), so edge 0 is the bottom, 1 the
/// right, 2 the top and 3 the left side; `z` the corners' heights in that
/// order.
pub fn quad_polygon(x: [f32; 2], y: [f32; 2], z: [f32; 4]) -> Vec<[f32; 3]> {
    vec![
        [x[0], y[0], z[0]],
        [x[1], y[0], z[1]],
        [x[1], y[1], z[2]],
        [x[0], y[1], z[3]],
    ]
}

/// The signed XY area of a polygon (world units²; > 0 counter-clockwise
/// seen from +Z), the shoelace sum in f64 over edge `k` from vertex `k`
/// to `k + 1`. The areal's `area` field is its value as f32.
pub fn shoelace_area(poly: &[[f32; 3]]) -> f64 {
    let n = poly.len();
    let s: f64 = (0..n)
        .map(|k| {
            let (a, b) = (poly[k], poly[(k + 1) % n]);
            f64::from(a[0]) * f64::from(b[1]) - f64::from(b[0]) * f64::from(a[1])
        })
        .sum();
    s / 2.0
}

/// The inverse of the polygon rule: `None` when `poly` has at least 3
/// vertices, a positive [`shoelace_area`] and no corner turning clockwise
/// (beyond [`CONVEX_TOLERANCE`]); otherwise what breaks it.
pub fn winding_of(poly: &[[f32; 3]]) -> Option<String> {
    let n = poly.len();
    if n < 3 {
        return Some(format!("{n} vertices, a polygon needs 3"));
    }
    let area = shoelace_area(poly);
    if area <= 0.0 {
        return Some(format!("shoelace area {area}: not counter-clockwise"));
    }
    let d = |a: [f32; 3], b: [f32; 3]| [f64::from(b[0] - a[0]), f64::from(b[1] - a[1])];
    (0..n).find_map(|k| {
        let (u, v) = (
            d(poly[k], poly[(k + 1) % n]),
            d(poly[(k + 1) % n], poly[(k + 2) % n]),
        );
        let turn = u[0] * v[1] - u[1] * v[0];
        let scale = u[0].hypot(u[1]) * v[0].hypot(v[1]);
        (turn < -CONVEX_TOLERANCE * scale)
            .then(|| format!("turns clockwise at vertex {}: not convex", (k + 1) % n))
    })
}

// ---------------------------------------------------------------------
// Twin links: edge k of an areal to the same edge of the areal across it.
// ---------------------------------------------------------------------

/// Sets every areal's links (terrain-notes §2.2): edge `k` (vertex `k` to
/// `k + 1`) links to `(area_ref, edge_ref)`, the areal holding the same
/// edge backwards (same XY endpoints, bit for bit) and that edge's index
/// in it; `(-1, -1)` when no areal is across (the map's border). Work:
/// one hash insert and lookup per edge.
pub fn twin_links(areals: &mut [Areal]) {
    type Xy = (u32, u32);
    let key = |p: [f32; 3]| (p[0].to_bits(), p[1].to_bits());
    let edges = |a: &Areal| {
        let n = a.vertices.len();
        (0..n)
            .map(|k| (key(a.vertices[k]), key(a.vertices[(k + 1) % n])))
            .collect::<Vec<(Xy, Xy)>>()
    };
    let mut at: HashMap<(Xy, Xy), [i32; 2]> = HashMap::new();
    for (i, a) in areals.iter().enumerate() {
        for (k, e) in edges(a).into_iter().enumerate() {
            at.insert(e, [i as i32, k as i32]);
        }
    }
    for a in areals.iter_mut() {
        a.links = edges(&*a)
            .into_iter()
            .map(|(p, q)| at.get(&(q, p)).copied().unwrap_or([-1, -1]))
            .collect();
    }
}

/// The inverse of [`twin_links`] (warning rule 12) for areal `i` of `m`:
/// every link of it that is not `(-1, -1)` points back
/// (`map.link_mutual`).
fn check_links(m: &ArealMap, i: usize, out: &mut Vec<TerrainError>) {
    let a = &m.areals[i];
    for (k, l) in a.links.iter().enumerate().filter(|(_, l)| l[0] >= 0) {
        let back = m
            .areals
            .get(l[0] as usize)
            .and_then(|b| b.links.get(l[1] as usize));
        if back != Some(&[i as i32, k as i32]) {
            out.push(TerrainError::record(
                "map.link_mutual",
                TYPE_AREAL_MAP,
                i,
                format!("edge {k} -> {l:?} does not point back"),
            ));
        }
    }
}

// ---------------------------------------------------------------------
// The lookup grid.
// ---------------------------------------------------------------------

/// Lookup grid cells along each axis (every retail map: 128×128).
pub const LOOKUP_CELLS: u32 = 128;

/// The lookup grid of `areals` (terrain-notes §2.3): [`LOOKUP_CELLS`]²
/// cells over the areals' XY bounds, x outer (cell `(cx, cy)` at
/// `cx * 128 + cy`), each listing in record order the areals whose XY box
/// interior overlaps it. Returns `(cells_xy, cells)` as
/// [`ArealMap`] stores them.
pub fn cell_grid(areals: &[Areal]) -> ([u32; 2], Vec<Vec<u16>>) {
    let c = LOOKUP_CELLS as usize;
    let boxes: Vec<Option<[f32; 4]>> = areals.iter().map(|a| xy_box(&a.vertices)).collect();
    let mut cells = vec![Vec::new(); c * c];
    let all = boxes.iter().flatten().copied().reduce(|a, b| {
        [
            a[0].min(b[0]),
            a[1].min(b[1]),
            a[2].max(b[2]),
            a[3].max(b[3]),
        ]
    });
    let Some(all) = all else {
        return ([LOOKUP_CELLS; 2], cells);
    };
    let (x0, y0) = (f64::from(all[0]), f64::from(all[1]));
    let (w, h) = (
        (f64::from(all[2]) - x0) / c as f64,
        (f64::from(all[3]) - y0) / c as f64,
    );
    let range = |lo: f32, hi: f32, origin: f64, w: f64| {
        let a = ((f64::from(lo) - origin) / w).floor().max(0.0) as usize;
        let b = (((f64::from(hi) - origin) / w).ceil() as usize).min(c);
        a..b.max(a)
    };
    for (k, b) in boxes.iter().enumerate() {
        let Some(b) = b else { continue };
        for cx in range(b[0], b[2], x0, w) {
            for cy in range(b[1], b[3], y0, h) {
                cells[cx * c + cy].push(k as u16);
            }
        }
    }
    ([LOOKUP_CELLS; 2], cells)
}

/// `[min x, min y, max x, max y]` of a polygon; `None` when it is empty.
fn xy_box(poly: &[[f32; 3]]) -> Option<[f32; 4]> {
    let first = poly.first()?;
    Some(
        poly.iter()
            .fold([first[0], first[1], first[0], first[1]], |b, p| {
                [
                    b[0].min(p[0]),
                    b[1].min(p[1]),
                    b[2].max(p[0]),
                    b[3].max(p[1]),
                ]
            }),
    )
}

/// The reader's checks of the rules above (terrain-notes §5.2 warning
/// rule 12), at most 50 findings: `map.grid_size` (grid not
/// [`LOOKUP_CELLS`]²), `map.link_mutual` ([`twin_links`]),
/// `map.winding` ([`winding_of`]), `map.reserved` (normal not (0, 0, 1),
/// words 1 and 3 or the anchor's reserved float not 0).
pub fn check(m: &ArealMap) -> Vec<TerrainError> {
    const MAX: usize = 50;
    let mut out = Vec::new();
    if m.cells_xy != [LOOKUP_CELLS; 2] {
        out.push(TerrainError::stream(
            "map.grid_size",
            TYPE_AREAL_MAP,
            format!("grid {:?}, retail 128x128", m.cells_xy),
        ));
    }
    for (i, a) in m.areals.iter().enumerate() {
        if out.len() >= MAX {
            break;
        }
        check_links(m, i, &mut out);
        if let Some(why) = winding_of(&a.vertices) {
            out.push(TerrainError::record("map.winding", TYPE_AREAL_MAP, i, why));
        }
        if a.normal != [0.0, 0.0, 1.0] || a.words[1] != 0 || a.words[3] != 0 || a.anchor[3] != 0.0 {
            out.push(TerrainError::record(
                "map.reserved",
                TYPE_AREAL_MAP,
                i,
                "normal not (0,0,1) or reserved words not 0",
            ));
        }
    }
    out.truncate(MAX);
    out
}

// ---------------------------------------------------------------------
// An edited map: the vertices follow the edited ground.
// ---------------------------------------------------------------------

/// What [`follow_ground`] changed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FollowReport {
    /// Areal vertices moved onto the edited ground.
    pub moved_vertices: usize,
    /// Areals with at least one moved vertex.
    pub changed_areals: usize,
    /// The largest height change of a moved vertex (world units).
    pub max_change: f32,
    /// Areal vertices left where they are although they are off the
    /// edited ground: `(areal, vertex)`, with no ground under them.
    pub left_off: Vec<(usize, usize)>,
}

impl FollowReport {
    /// True when Land.map is unchanged.
    pub fn unchanged(&self) -> bool {
        self.moved_vertices == 0
    }
}

/// Moves the areal vertices of `map` onto the ground of `edited` where the
/// ground under them differs from `base`'s (a height edit of Land.msh):
/// z = [`ground_z`] on `edited`, exactly; x, y and everything else of the
/// areal are kept. A vertex whose ground is unchanged keeps its bytes (an
/// unedited map leaves Land.map unchanged). A vertex with no edited
/// ground under it (off the map, over a hole) keeps its z and is listed in
/// [`FollowReport::left_off`] when the base had ground there.
///
/// Work: two ground lookups per areal vertex.
pub fn follow_ground(map: &mut ArealMap, base: &Land, edited: &Land) -> FollowReport {
    let (gb, ge) = (Ground::new(base), Ground::new(edited));
    let mut rep = FollowReport::default();
    for (a, areal) in map.areals.iter_mut().enumerate() {
        let mut changed = false;
        for (k, p) in areal.vertices.iter_mut().enumerate() {
            let (before, after) = (ground_z(&gb, p[0], p[1]), ground_z(&ge, p[0], p[1]));
            match (before, after) {
                (b, Some(z))
                    if b.map(f32::to_bits) != Some(z.to_bits())
                        && z.to_bits() != p[2].to_bits() =>
                {
                    rep.max_change = rep.max_change.max((z - p[2]).abs());
                    p[2] = z;
                    rep.moved_vertices += 1;
                    changed = true;
                }
                (Some(_), None) => rep.left_off.push((a, k)),
                _ => {}
            }
        }
        rep.changed_areals += usize::from(changed);
    }
    rep
}

/// Land.map after a Land.msh edit: `bytes` (the base's Land.map) decoded,
/// its areal vertices made to follow `edited`'s ground ([`follow_ground`]),
/// and encoded again when anything moved (`None` when Land.map is
/// unchanged: it is then not written).
///
/// # Errors
/// The `map.*` rules of [`super::map::decode`] (the base's Land.map does
/// not read) and of [`super::map::encode`].
pub fn follow_bytes(
    bytes: &[u8],
    base: &Land,
    edited: &Land,
) -> Result<(Option<Vec<u8>>, ArealMap, FollowReport), TerrainError> {
    let mut m = super::map::decode(bytes)?;
    let rep = follow_ground(&mut m, base, edited);
    let out = if rep.unchanged() {
        None
    } else {
        Some(super::map::encode(&m)?)
    };
    Ok((out, m, rep))
}

// ---------------------------------------------------------------------
// A new map: one areal per grid quad.
// ---------------------------------------------------------------------

/// word2 of a lake areal (terrain-notes §2.2: all of 0xF0 set).
pub const LAKE_CLASS: u32 = 0xF0;

/// The Land.map of the new map `land` made from `grid` (terrain-notes
/// §5.1 "Land.map"); `land` must be [`super::author::build`]'s result for
/// `grid`. Areal `q = i * n + j` is quad `(i, j)`:
/// - polygon [`quad_polygon`] of the quad, z [`ground_z`] at each corner
///   (the grid height where no ground is found: not expected, the map is
///   built to cover its square);
/// - centre (anchor) the quad's centre, z [`ground_z`] there (corner 0's z
///   without ground); area [`shoelace_area`]; normal (0, 0, 1);
/// - word0 (walkable) 1, or 0 where a face of the quad is water or
///   steeper than the ground rule ([`ground::is_steep`], on the corners'
///   z); word2 (class) 1 on land, [`LAKE_CLASS`] on a lake quad (both
///   faces liquid surface); words 1 and 3 zero;
/// - links [`twin_links`] (the quads across each edge, `(-1, -1)` on the
///   map's border); grid [`cell_grid`] (over `[0, side]²`).
pub fn areal_map(grid: &HeightGrid, land: &Land) -> ArealMap {
    let spec = grid.spec;
    let n = spec.n();
    let g = Ground::new(land);
    // The vertex z rule once per grid node (four quads share a corner).
    let node_z: Vec<f32> = (0..(n + 1) * (n + 1))
        .map(|id| {
            let (i, j) = (id / (n + 1), id % (n + 1));
            ground_z(&g, spec.coord(i), spec.coord(j)).unwrap_or(grid.z[id])
        })
        .collect();
    let z = |(i, j): (usize, usize)| node_z[i * (n + 1) + j];
    let mut areals: Vec<Areal> = (0..n * n)
        .map(|q| {
            let (i, j) = (q / n, q % n);
            let faces = &grid.quads[q];
            let lake = faces.iter().all(|f| f.1.water);
            let steep = faces.iter().any(|(t, _)| {
                let p = t.map(|(a, b)| [spec.coord(a), spec.coord(b), z((a, b))]);
                let c = super::validate::cross_of(p[0], p[1], p[2]);
                let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
                len > 0.0 && ground::is_steep(c[2] / len)
            });
            let walk = !faces.iter().any(|f| f.1.water) && !steep;
            let (x, y) = (
                [spec.coord(i), spec.coord(i + 1)],
                [spec.coord(j), spec.coord(j + 1)],
            );
            let vertices = quad_polygon(
                x,
                y,
                [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)].map(z),
            );
            let (cx, cy) = ((x[0] + x[1]) / 2.0, (y[0] + y[1]) / 2.0);
            Areal {
                anchor: [cx, cy, ground_z(&g, cx, cy).unwrap_or(z((i, j))), 0.0],
                area: shoelace_area(&vertices) as f32,
                normal: [0.0, 0.0, 1.0],
                words: [u32::from(walk), 0, if lake { LAKE_CLASS } else { 1 }, 0],
                vertices,
                links: Vec::new(),
            }
        })
        .collect();
    twin_links(&mut areals);
    let (cells_xy, cells) = cell_grid(&areals);
    ArealMap {
        name: b"ArealMap".to_vec(),
        attr23: [0, 0],
        areals,
        cells_xy,
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn areal(vertices: Vec<[f32; 3]>) -> Areal {
        Areal {
            anchor: [0.0; 4],
            area: shoelace_area(&vertices) as f32,
            normal: [0.0, 0.0, 1.0],
            words: [1, 0, 1, 0],
            vertices,
            links: Vec::new(),
        }
    }

    /// The polygon rule and its inverse: a quad is CCW from (x0, y0) with
    /// its shoelace area; reversed it is clockwise, a dented one is not
    /// convex, two vertices are no polygon.
    #[test]
    fn winding_forward_and_inverse() {
        let q = quad_polygon([1.0, 4.0], [2.0, 7.0], [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(q[1], [4.0, 2.0, 1.0]);
        assert_eq!(shoelace_area(&q), 15.0);
        assert_eq!(winding_of(&q), None);
        let mut cw = q.clone();
        cw.reverse();
        assert_eq!(shoelace_area(&cw), -15.0);
        assert_eq!(
            winding_of(&cw).as_deref(),
            Some("shoelace area -15: not counter-clockwise")
        );
        let dent = vec![
            [0.0, 0.0, 0.0],
            [4.0, 0.0, 0.0],
            [2.0, 1.0, 0.0],
            [4.0, 4.0, 0.0],
            [0.0, 4.0, 0.0],
        ];
        assert_eq!(
            winding_of(&dent).as_deref(),
            Some("turns clockwise at vertex 2: not convex")
        );
        // A collinear vertex on an edge is still convex.
        let mut flat = q.clone();
        flat.insert(1, [2.5, 2.0, 0.0]);
        assert_eq!(winding_of(&flat), None);
        assert!(winding_of(&q[..2]).is_some());
    }

    /// Twin links of a 2×1 strip: the shared edge (right of 0, left of 1)
    /// links both ways, every other edge is the border; the check finds
    /// nothing, and a broken back link is `map.link_mutual` on both ends.
    #[test]
    fn twin_links_forward_and_inverse() {
        let mut a = vec![
            areal(quad_polygon([0.0, 1.0], [0.0, 1.0], [0.0; 4])),
            areal(quad_polygon([1.0, 2.0], [0.0, 1.0], [0.0; 4])),
        ];
        twin_links(&mut a);
        assert_eq!(a[0].links, vec![[-1, -1], [1, 3], [-1, -1], [-1, -1]]);
        assert_eq!(a[1].links, vec![[-1, -1], [-1, -1], [-1, -1], [0, 1]]);
        let (cells_xy, cells) = cell_grid(&a);
        let mut m = ArealMap {
            name: b"ArealMap".to_vec(),
            attr23: [0, 0],
            areals: a,
            cells_xy,
            cells,
        };
        assert!(check(&m).is_empty());
        m.areals[1].links[3] = [0, 2];
        let rules: Vec<_> = check(&m).iter().map(|e| e.rule).collect();
        assert_eq!(rules, ["map.link_mutual", "map.link_mutual"]);
    }

    /// The lookup grid spans the areals' XY bounds, x outer: of a 2×1 strip
    /// over [0, 2] × [0, 1], areal 0 fills cells x 0..64 and areal 1 x
    /// 64..128, every y.
    #[test]
    fn cell_grid_over_the_areal_bounds() {
        let a = vec![
            areal(quad_polygon([0.0, 1.0], [0.0, 1.0], [0.0; 4])),
            areal(quad_polygon([1.0, 2.0], [0.0, 1.0], [0.0; 4])),
        ];
        let (xy, cells) = cell_grid(&a);
        assert_eq!(xy, [128, 128]);
        assert_eq!(cells.len(), 128 * 128);
        assert_eq!(cells[0], vec![0]);
        assert_eq!(cells[63 * 128 + 127], vec![0]);
        assert_eq!(cells[64 * 128], vec![1]);
        assert_eq!(cells[127 * 128 + 127], vec![1]);
        assert!(cells.iter().all(|c| c.len() == 1));
        assert_eq!(cell_grid(&[]).1.iter().map(Vec::len).sum::<usize>(), 0);
    }
}
