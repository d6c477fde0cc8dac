//! Land.map's areal vertices on the ground (terrain-notes §2.2, §3 "How
//! Land.map relates to Land.msh"; the corpus convention `land_map`:
//! "vertex z = LOD0 ground height").
//!
//! The areal polygons are XY navigation outlines; their vertices carry a
//! z, which in every unedited map is the LOD 0 ground height at the
//! vertex's XY as [`Ground::height_at`] finds it (measured on the corpus
//! maps m01 and m02: every one of their areal vertices within
//! [`AREAL_Z_TOLERANCE`] of it, see `tests/map_consistency.rs`). After a
//! height edit of Land.msh, [`follow_ground`] moves the vertices whose
//! ground changed onto the new ground, so Land.map stays consistent;
//! vertices with no ground under them (off the map, over a hole) are
//! named, never guessed.
//!
//! The polygons' XY, their areas, links and the lookup grid are never
//! changed here: they cannot be regenerated faithfully (terrain-notes §3),
//! so a changed XY extent or water is a warning of the importer.

use super::ground::Ground;
use super::ir::Land;
use super::map::ArealMap;

/// How far (world units, along z) an areal vertex may be from the LOD 0
/// ground and still count as on it: 1e-3, the same tolerance the corpus
/// samples use for a ground hit (manifest `terrain_conventions.expected_gltf`).
/// The corpus maps' areal vertices are within 1.6e-5 of
/// [`Ground::height_at`] (f32 rounding of the interpolation).
pub const AREAL_Z_TOLERANCE: f32 = 1e-3;

/// One areal vertex and the ground under it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArealVertex {
    /// Areal index (record order of Land.map).
    pub areal: usize,
    /// Vertex index inside the areal's polygon.
    pub vertex: usize,
    /// The vertex as stored (world units, game axes, Z up).
    pub at: [f32; 3],
    /// The LOD 0 ground height under its XY (`None`: off the map or over a
    /// hole).
    pub ground: Option<f32>,
}

impl ArealVertex {
    /// Whether the vertex is on the ground within [`AREAL_Z_TOLERANCE`].
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
                ground: g.height_at(p[0], p[1]),
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
/// z = `Ground::new(edited).height_at(x, y)`, exactly; x, y and everything
/// else of the areal are kept. A vertex whose ground is unchanged keeps
/// its bytes (an unedited map leaves Land.map unchanged). A vertex with
/// no edited ground under it (off the map, over a hole) keeps its z and is
/// listed in [`FollowReport::left_off`] when the base had ground there.
///
/// Work: two ground lookups per areal vertex.
pub fn follow_ground(map: &mut ArealMap, base: &Land, edited: &Land) -> FollowReport {
    let (gb, ge) = (Ground::new(base), Ground::new(edited));
    let mut rep = FollowReport::default();
    for (a, areal) in map.areals.iter_mut().enumerate() {
        let mut changed = false;
        for (k, p) in areal.vertices.iter_mut().enumerate() {
            let (before, after) = (gb.height_at(p[0], p[1]), ge.height_at(p[0], p[1]));
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
) -> Result<(Option<Vec<u8>>, ArealMap, FollowReport), super::TerrainError> {
    let mut m = super::map::decode(bytes)?;
    let rep = follow_ground(&mut m, base, edited);
    let out = if rep.unchanged() {
        None
    } else {
        Some(super::map::encode(&m)?)
    };
    Ok((out, m, rep))
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

/// Puts every areal vertex of `map` on `land`'s ground (a new map's
/// Land.map, corpus convention `land_map`: "vertex z = LOD0 ground
/// height"): z = [`Ground::height_at`] at its XY, exactly. Returns the
/// `(areal, vertex)` pairs with no ground under them (z kept).
pub fn place_on_ground(map: &mut ArealMap, land: &Land) -> Vec<(usize, usize)> {
    let g = Ground::new(land);
    let mut none = Vec::new();
    for (a, areal) in map.areals.iter_mut().enumerate() {
        for (k, p) in areal.vertices.iter_mut().enumerate() {
            match g.height_at(p[0], p[1]) {
                Some(z) => p[2] = z,
                None => none.push((a, k)),
            }
        }
    }
    none
}
