//! A new map from a height grid (issue 38 item 1; terrain-notes §5.1 and
//! §4.6 "Without a base"): a glTF grid mesh (what the add-on's "New Parkan
//! map" makes and the modder sculpted) → every Land.msh stream.
//!
//! The grid: `G × G` squares (Res1, G ∈ {8, 16}), each cut into `k × k`
//! quads of two triangles, so `N = G·k` quads and `(N+1)²` nodes a side;
//! origin (0, 0), square side `side / G` within the retail cell sizes.
//! Heights are free; XY must stay on the nodes. Per face, the material is a
//! palette row: a glTF material named after a Land1.wea row (`L02`), or
//! `A+B` for a two-material face (Blender's `.001` and the importer's `#...`
//! suffixes are ignored). What is derived (terrain-notes §5.1):
//! - LOD 0 as given, LOD 1 a copy (legal: terrain-notes §4.6);
//! - vertices: one per node, plus one copy per (node, two-material pair)
//!   where a patch meets other faces (patch border vertices are stored
//!   twice, terrain-notes §1.7);
//! - Res5 world-planar with T = 200 (u = x/T, v = (maxY − y)/T) × 1024,
//!   Res18 world × 51.2, both u16 wrapping;
//! - Res14: 1.0 except on patch vertices: 1.0 where the patch meets ground
//!   of its second material, 0.0 where it meets its first, 0.5 elsewhere;
//! - face records (flags, surface, normal, neighbours and edge codes by
//!   shared edge position, within a LOD), Res11 per cell, Res2 boxes, Res1.
//!
//! A mesh that is not such a grid is refused naming the first offending
//! vertex or face and what to do (`terrain.new_map.*`).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::derive;
use super::ir::*;
use super::TerrainError;
use crate::convention::{axes, Up};
use crate::gltf_import::read::refs::index_at;
use crate::gltf_import::GltfFile;

/// Squares along a side of a map the game supports (terrain-notes §5.1:
/// 16×16 on 28 retail maps, 8×8 on 5).
pub const SQUARES: [usize; 2] = [8, 16];
/// Smallest square (cell) side in world units (retail: 49.90).
pub const MIN_CELL: f32 = 49.0;
/// Largest square (cell) side in world units (retail: 311.28).
pub const MAX_CELL: f32 = 312.0;
/// World units per texture turn of Res5 (terrain-notes §5.1).
pub const UV_TURN: f64 = 200.0;
/// Raw Res18 units per world unit (terrain-notes §1.6).
pub const MICRO_PER_UNIT: f64 = 51.2;
/// Map side range in world units (terrain-notes §5.1: 800 to 2,500;
/// retail 798 to 2,490).
pub const SIDE: std::ops::RangeInclusive<f32> = 790.0..=2500.0;
/// How far (in units of the quad side) a vertex may lie off its node.
pub const NODE_TOLERANCE: f64 = 1e-3;

/// The grid of a new map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridSpec {
    /// Squares along a side (8 or 16).
    pub squares: usize,
    /// Quads along a square's side (1 or more).
    pub quads: usize,
    /// Map side in world units (origin (0, 0)).
    pub side: f32,
}

impl GridSpec {
    /// Quads along the map's side (`squares × quads`).
    pub fn n(&self) -> usize {
        self.squares * self.quads
    }

    /// World coordinate of grid line `i` (0..=n), in f32 as stored.
    pub fn coord(&self, i: usize) -> f32 {
        (f64::from(self.side) * i as f64 / self.n() as f64) as f32
    }

    /// Faces of the written map: two per quad and LOD, both LODs.
    pub fn faces(&self) -> usize {
        self.n() * self.n() * 4
    }

    /// Checks the sizes the game supports (terrain-notes §5.1, §1.0).
    ///
    /// # Errors
    /// `terrain.new_map.size`: squares not 8 or 16, no quads, a cell side
    /// outside `MIN_CELL..=MAX_CELL` or a map side outside [`SIDE`], or more than 65,535 faces or vertices.
    pub fn check(&self) -> Result<(), TerrainError> {
        let cell = self.side / self.squares.max(1) as f32;
        let bad = |d: String| Err(TerrainError::file("terrain.new_map.size", d));
        if !SQUARES.contains(&self.squares) {
            return bad(format!(
                "{} squares a side: the game's maps have 8 or 16 (terrain-notes §5.1)",
                self.squares
            ));
        }
        if self.quads == 0 || !(MIN_CELL..=MAX_CELL).contains(&cell) || !SIDE.contains(&self.side) {
            return bad(format!(
                "{} quads a square, square side {cell} units: a square needs at least one quad and a side of {MIN_CELL}..{MAX_CELL} units, the map a side of {}..{} (the retail ranges, terrain-notes §5.1)",
                self.quads,
                (MIN_CELL * self.squares as f32).max(*SIDE.start()),
                (MAX_CELL * self.squares as f32).min(*SIDE.end())
            ));
        }
        let nodes = (self.n() + 1) * (self.n() + 1);
        if self.faces() > usize::from(u16::MAX) || nodes > usize::from(u16::MAX) {
            return bad(format!(
                "{}x{} quads make {} faces (both LODs) and {nodes} vertices: at most 65,535 each (u16 indices); choose fewer quads a square",
                self.n(),
                self.n(),
                self.faces()
            ));
        }
        Ok(())
    }
}

/// A face's material: the palette rows and the liquid bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Paint {
    /// Land1.wea row of the first material (1..n).
    pub tex1: u8,
    /// Second material row, or 0xFF.
    pub tex2: u8,
    /// A liquid surface (`WATER`): flags 0x008, surface 0x02.
    pub water: bool,
    /// A liquid bed (`WATER_BOT`, `*_BOT`): flags 0x2000.
    pub bed: bool,
}

impl Paint {
    /// The Res21 class fields (terrain-notes §5.1 "Faces").
    pub fn class(&self) -> FaceClass {
        let mut flags = 0x600;
        let mut surface = SURFACE_NOT_LAVA;
        if self.tex2 != NO_TEX2 {
            flags |= FLAG_SECOND;
        }
        if self.water {
            flags |= FLAG_WATER;
            surface |= SURFACE_WATER;
        }
        if self.bed {
            flags |= FLAG_BED;
        }
        FaceClass {
            tex1: self.tex1,
            tex2: self.tex2,
            flags,
            surface,
            word3: NONE,
        }
    }
}

/// A grid node `(i, j)`: x index, y index (0..=n).
pub type Node = (usize, usize);
/// A triangle of a quad: three nodes, CCW seen from +Z.
pub type Tri = [Node; 3];
/// A quad's two triangles and their paints.
pub type Quad = [(Tri, Paint); 2];
/// What [`read_mesh`] gives: the map node, its vertices, its triangles
/// (vertex indices and material name).
type MeshRead = (usize, Vec<Vert>, Vec<([usize; 3], String)>);

/// The height grid read from the glTF: a height per node, two triangles
/// per quad with their paint.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightGrid {
    /// The grid.
    pub spec: GridSpec,
    /// Height of node `(i, j)` at `i * (n+1) + j` (x index outer).
    pub z: Vec<f32>,
    /// Per quad `(i, j)` at `i * n + j`: its two triangles as node
    /// triples `[(i, j); 3]`, CCW seen from +Z, and their paint.
    pub quads: Vec<Quad>,
}

impl HeightGrid {
    /// A flat grid at height `z` painted `paint`, split along the
    /// (i, j)–(i+1, j+1) diagonal (the add-on's New map; tests, benches).
    pub fn flat(spec: GridSpec, z: f32, paint: Paint) -> HeightGrid {
        let n = spec.n();
        let quads = (0..n * n)
            .map(|q| {
                let (i, j) = (q / n, q % n);
                [
                    ([(i, j), (i + 1, j), (i + 1, j + 1)], paint),
                    ([(i, j), (i + 1, j + 1), (i, j + 1)], paint),
                ]
            })
            .collect();
        HeightGrid {
            spec,
            z: vec![z; (n + 1) * (n + 1)],
            quads,
        }
    }

    fn node(&self, (i, j): (usize, usize)) -> [f32; 3] {
        [
            self.spec.coord(i),
            self.spec.coord(j),
            self.z[i * (self.spec.n() + 1) + j],
        ]
    }
}

/// The palette: the Land1.wea row names of an existing map (row 0 is the
/// footing material, never painted).
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    /// Row names in row order.
    pub rows: Vec<String>,
}

impl Palette {
    /// The paint of material `name`: `A` or `A+B` (rows by name, any
    /// case), Blender's `.NNN` and the importer's `#...` suffixes
    /// dropped; `WATER` rows are liquid surface, `*_BOT` rows liquid bed.
    ///
    /// # Errors
    /// A message naming the part that is not a row and listing the rows.
    pub fn paint(&self, name: &str) -> Result<Paint, String> {
        let base = name.split('#').next().unwrap_or(name);
        let base = match base.rsplit_once('.') {
            Some((a, d)) if d.len() == 3 && d.bytes().all(|b| b.is_ascii_digit()) => a,
            _ => base,
        };
        let row = |part: &str| -> Result<u8, String> {
            let k = self
                .rows
                .iter()
                .position(|r| r.eq_ignore_ascii_case(part.trim()));
            match k {
                Some(0) => Err(format!("{part:?} is row 0, the footing material the engine keeps for buildings; paint another row")),
                Some(k) if k < usize::from(NO_TEX2) => Ok(k as u8),
                _ => Err(format!("{part:?} is not a row of the palette's Land1.wea ({})", self.rows.iter().skip(1).cloned().collect::<Vec<_>>().join(", "))),
            }
        };
        let (tex1, tex2) = match base.split_once('+') {
            Some((a, b)) => (row(a)?, row(b)?),
            None => (row(base)?, NO_TEX2),
        };
        if tex1 == tex2 {
            return Err(format!(
                "{name:?}: the same row twice; paint {} alone",
                self.rows[usize::from(tex1)]
            ));
        }
        let n = self.rows[usize::from(tex1)].to_ascii_uppercase();
        Ok(Paint {
            tex1,
            tex2,
            water: n == "WATER",
            bed: n.ends_with("_BOT"),
        })
    }
}

fn refuse(rule: &'static str, detail: impl Into<String>) -> TerrainError {
    TerrainError::file(rule, detail)
}

/// The grid of the glTF's map node: its extras (`parkan_map_squares`,
/// `parkan_map_quads`, `parkan_map_side`, what the add-on's New map sets),
/// else from the vertices: `n` quads a side from their count, 16 squares
/// when `n` is a multiple of 16, else 8, the side from their X extent.
fn spec_of(doc: &GltfFile, node: usize, xy: &[[f32; 2]]) -> Result<GridSpec, TerrainError> {
    let x = &doc.nodes()[node]["extras"];
    let num = |k: &str| -> Result<Option<f64>, TerrainError> {
        match x.get(k) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                refuse(
                    "gltf.json",
                    format!("/nodes/{node}/extras/{k}: {v} is not a number"),
                )
            }),
        }
    };
    if let (Some(g), Some(k), Some(s)) = (
        num("parkan_map_squares")?,
        num("parkan_map_quads")?,
        num("parkan_map_side")?,
    ) {
        return Ok(GridSpec {
            squares: g as usize,
            quads: k as usize,
            side: s as f32,
        });
    }
    let mut cols: Vec<u32> = xy.iter().map(|p| p[0].to_bits()).collect();
    cols.sort_unstable();
    cols.dedup();
    let n = cols.len().saturating_sub(1).max(1);
    let side = xy.iter().map(|p| p[0]).fold(0.0f32, f32::max);
    let squares = if n.is_multiple_of(16) { 16 } else { 8 };
    Ok(GridSpec {
        squares,
        quads: (n / squares).max(1),
        side,
    })
}

/// One glTF vertex, where it is (for messages).
struct Vert {
    p: [f32; 3],
    at: (usize, usize, usize),
}

/// A reference of the wrong type ([`crate::gltf_import::read::refs`]) as
/// a terrain error (`gltf.json` naming its pointer).
fn json(e: crate::gltf_import::ImportError) -> TerrainError {
    refuse(e.rule, e.detail)
}

/// The name of the material a primitive's `material` (at pointer `at`)
/// names: `""` without one, or for a material without a name.
///
/// # Errors
/// `gltf.json` naming `at` when it is not a material index, or
/// `/materials/{m}/name` when that is not a string.
fn material_name(doc: &GltfFile, v: Option<&Value>, at: &str) -> Result<String, TerrainError> {
    let mats = doc.materials();
    let Some(m) = index_at(v, at, mats.len(), "materials").map_err(json)? else {
        return Ok(String::new());
    };
    match mats[m].get("name") {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(refuse(
            "gltf.json",
            format!("/materials/{m}/name: {v} is not a string"),
        )),
    }
}

/// Reads the map mesh of `doc`: the one node with a mesh, its world
/// transform applied, glTF axes back to game axes (`up` from the scene
/// extras `parkan_terrain.up`, default y).
fn read_mesh(doc: &GltfFile) -> Result<MeshRead, TerrainError> {
    let nodes = doc.nodes();
    let with_mesh: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].get("mesh").is_some())
        .collect();
    let node = match with_mesh.as_slice() {
        [n] => *n,
        [] => {
            return Err(refuse(
                "terrain.new_map.objects",
                "the glTF has no mesh: export the map object made by New Parkan map",
            ))
        }
        many => {
            let names: Vec<&str> = many
                .iter()
                .map(|&i| nodes[i]["name"].as_str().unwrap_or("(unnamed)"))
                .collect();
            return Err(refuse("terrain.new_map.objects", format!("{} meshes ({}): a new map is one grid object; export it alone (Selected Objects) or join the pieces", names.len(), names.join(", "))));
        }
    };
    let parents = crate::gltf_import::matching::child_links(nodes)
        .map_err(|e| refuse("gltf.hierarchy", e.to_string()))?;
    let (mut world, mut at) = (
        crate::gltf_import::matching::local_matrix(&nodes[node]),
        node,
    );
    for _ in 0..nodes.len() {
        let Some(p) = parents[at] else { break };
        world = crate::gltf_import::matching::local_matrix(&nodes[p]) * world;
        at = p;
    }
    let up = super::import::scene_up(doc)?;
    let (n_meshes, n_acc) = (doc.meshes().len(), doc.accessor_count());
    let at = format!("/nodes/{node}/mesh");
    let mesh = index_at(nodes[node].get("mesh"), &at, n_meshes, "meshes").map_err(json)?;
    let mesh = mesh.ok_or_else(|| refuse("gltf.json", format!("{at}: no mesh")))?;
    let mesh_j = &doc.meshes()[mesh];
    let ge = |e: crate::gltf_import::ImportError| refuse("gltf.accessor", e.to_string());
    let (mut verts, mut tris) = (Vec::new(), Vec::new());
    for (pi, p) in crate::gltf_import::read::arr(mesh_j, "primitives")
        .iter()
        .enumerate()
    {
        let at = format!("/meshes/{mesh}/primitives/{pi}");
        let mode = match p.get("mode") {
            None => 4,
            Some(v) => crate::gltf_import::read::extra_u64(v).ok_or_else(|| {
                refuse(
                    "gltf.json",
                    format!("{at}/mode: {v} is not an integer (a primitive mode)"),
                )
            })?,
        };
        if mode != 4 {
            return Err(refuse(
                "terrain.new_map.faces",
                format!(
                    "mesh {mesh} primitive {pi}: mode {mode}; the map is a triangle list (mode 4)"
                ),
            ));
        }
        let pa = p.get("attributes").and_then(|a| a.get("POSITION"));
        let pa = index_at(pa, &format!("{at}/attributes/POSITION"), n_acc, "accessors");
        let Some(pa) = pa.map_err(json)? else {
            return Err(refuse(
                "terrain.new_map.faces",
                format!("mesh {mesh} primitive {pi}: no POSITION"),
            ));
        };
        let pos = doc.floats(pa, 3, "POSITION").map_err(ge)?;
        let first = verts.len();
        for (k, c) in pos.chunks_exact(3).enumerate() {
            let w = world.transform_point3(glam::DVec3::new(c[0].into(), c[1].into(), c[2].into()));
            let g = axes::vec3_inv(up, [w.x as f32, w.y as f32, w.z as f32]);
            verts.push(Vert {
                p: g,
                at: (mesh, pi, k),
            });
        }
        let n = verts.len() - first;
        let idx = match index_at(
            p.get("indices"),
            &format!("{at}/indices"),
            n_acc,
            "accessors",
        )
        .map_err(json)?
        {
            Some(a) => doc.indices(a).map_err(ge)?,
            None => (0..n as u32).collect(),
        };
        let name = material_name(doc, p.get("material"), &format!("{at}/material"))?;
        for t in idx.chunks(3) {
            if t.len() < 3 || t.iter().any(|&i| i as usize >= n) {
                return Err(refuse("terrain.new_map.faces", format!("mesh {mesh} primitive {pi}: a partial triangle or an index past its {n} vertices")));
            }
            tris.push(([0, 1, 2].map(|c| first + t[c] as usize), name.clone()));
        }
    }
    Ok((node, verts, tris))
}

/// The height grid of `doc` (the grid mesh the add-on's New map makes,
/// sculpted and painted), with the paints resolved through `palette`.
///
/// # Errors
/// `terrain.new_map.objects` (not one mesh), `terrain.new_map.size`
/// ([`GridSpec::check`]), `terrain.new_map.off_grid` (a vertex whose XY is
/// not on a node), `terrain.new_map.fold` (two vertices of one node at
/// different heights), `terrain.new_map.face` (a face not half of one
/// quad), `terrain.new_map.overhang` (a face whose normal points down),
/// `terrain.new_map.hole` (a quad without its two faces),
/// `terrain.new_map.overlap` (a quad with more), `terrain.new_map.material`
/// (a face's material is no palette row); `gltf.*` for unreadable data.
pub fn read_grid(doc: &GltfFile, palette: &Palette) -> Result<HeightGrid, TerrainError> {
    let (node, verts, tris) = read_mesh(doc)?;
    let xy: Vec<[f32; 2]> = verts.iter().map(|v| [v.p[0], v.p[1]]).collect();
    let spec = spec_of(doc, node, &xy)?;
    spec.check()?;
    let n = spec.n();
    let step = f64::from(spec.side) / n as f64;
    let mut z: Vec<Option<(f32, usize)>> = vec![None; (n + 1) * (n + 1)];
    let mut node_of = Vec::with_capacity(verts.len());
    for (k, v) in verts.iter().enumerate() {
        let f = |c: f32| f64::from(c) / step;
        let (fi, fj) = (f(v.p[0]), f(v.p[1]));
        let (i, j) = (fi.round(), fj.round());
        let off = (fi - i).abs().max((fj - j).abs());
        let (mesh, prim, gv) = v.at;
        if off > NODE_TOLERANCE || i < 0.0 || j < 0.0 || i > n as f64 || j > n as f64 {
            return Err(refuse("terrain.new_map.off_grid", format!(
                "vertex {gv} of mesh {mesh} primitive {prim} at x {} y {} is not on a grid node (nodes every {step} units from 0 to {}): move it back onto the node (only heights may change: sculpt with X and Y locked, as New Parkan map sets, or snap it) or make the map again",
                v.p[0], v.p[1], spec.side
            )));
        }
        let id = i as usize * (n + 1) + j as usize;
        match z[id] {
            None => z[id] = Some((v.p[2], k)),
            Some((z0, k0)) if (z0 - v.p[2]).abs() > 1e-3 => {
                let (m0, p0, g0) = verts[k0].at;
                return Err(refuse("terrain.new_map.fold", format!(
                    "vertex {gv} of mesh {mesh} primitive {prim} and vertex {g0} of mesh {m0} primitive {p0} stand on one grid node (x {} y {}) at heights {} and {}: a map has one height per point (no walls, overhangs or split vertices); merge them (Merge by Distance) or move one",
                    v.p[0], v.p[1], v.p[2], z0
                )));
            }
            Some(_) => {}
        }
        node_of.push((i as usize, j as usize));
    }
    let quads = quads_of(&spec, &verts, &node_of, &tris, palette)?;
    let z = z.iter().map(|h| h.map_or(0.0, |h| h.0)).collect();
    Ok(HeightGrid { spec, z, quads })
}

/// Sorts the triangles into their quads and checks each quad has exactly
/// its two halves (see [`read_grid`]).
fn quads_of(
    spec: &GridSpec,
    verts: &[Vert],
    node_of: &[(usize, usize)],
    tris: &[([usize; 3], String)],
    palette: &Palette,
) -> Result<Vec<Quad>, TerrainError> {
    let n = spec.n();
    let mut per: Vec<Vec<(Tri, Paint, usize)>> = vec![Vec::new(); n * n];
    let mut paints: HashMap<&str, Paint> = HashMap::new();
    for (t, (v, name)) in tris.iter().enumerate() {
        let nodes = v.map(|k| node_of[k]);
        let (mesh, prim, _) = verts[v[0]].at;
        let face = format!(
            "face {} of mesh {mesh} primitive {prim} (vertices {:?})",
            t,
            v.map(|k| verts[k].at.2)
        );
        let (i0, i1) = (
            nodes.iter().map(|p| p.0).min().unwrap_or(0),
            nodes.iter().map(|p| p.0).max().unwrap_or(0),
        );
        let (j0, j1) = (
            nodes.iter().map(|p| p.1).min().unwrap_or(0),
            nodes.iter().map(|p| p.1).max().unwrap_or(0),
        );
        let distinct = nodes[0] != nodes[1] && nodes[1] != nodes[2] && nodes[0] != nodes[2];
        if !distinct || i1 - i0 != 1 || j1 - j0 != 1 {
            return Err(refuse("terrain.new_map.face", format!(
                "{face} is not half of one grid quad (its corners are nodes {nodes:?}): every quad of the grid is two triangles on its corners; do not subdivide, dissolve or collapse faces (make the map again, or undo the edit)"
            )));
        }
        let area2 = |a: (usize, usize), b: (usize, usize), c: (usize, usize)| {
            let (ax, ay, bx, by, cx, cy) = (
                a.0 as i64, a.1 as i64, b.0 as i64, b.1 as i64, c.0 as i64, c.1 as i64,
            );
            (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        };
        if area2(nodes[0], nodes[1], nodes[2]) <= 0 {
            return Err(refuse("terrain.new_map.overhang", format!(
                "{face} faces down (its normal points below the horizon: an overhang, a fold or a flipped face): the ground is seen from above; flip it back (Mesh > Normals > Recalculate Outside) or undo the fold"
            )));
        }
        let paint = match paints.get(name.as_str()) {
            Some(p) => *p,
            None => {
                let p = palette.paint(name).map_err(|e| refuse("terrain.new_map.material", format!("{face}: material {name:?}: {e}; assign one of the palette's materials (the ones New Parkan map made)")))?;
                paints.insert(name, p);
                p
            }
        };
        per[i0 * n + j0].push((nodes, paint, t));
    }
    let mut out = Vec::with_capacity(n * n);
    for (q, list) in per.iter().enumerate() {
        let (i, j) = (q / n, q % n);
        let at = format!(
            "grid quad {i},{j} (x {}..{}, y {}..{})",
            spec.coord(i),
            spec.coord(i + 1),
            spec.coord(j),
            spec.coord(j + 1)
        );
        match list.as_slice() {
            [a, b] if complementary(&a.0, &b.0) => out.push([(a.0, a.1), (b.0, b.1)]),
            [] | [_] => {
                return Err(refuse("terrain.new_map.hole", format!(
                    "{at} has {} of its 2 faces: a hole; the ground must cover the whole map: fill it (select the quad's 4 corner vertices, then Face > Fill, or F) with a palette material",
                    list.len()
                )))
            }
            _ => {
                return Err(refuse("terrain.new_map.overlap", format!(
                    "{at} has {} faces (faces {:?}) where 2 halves belong: overlapping or doubled faces; delete the extra ones (Merge by Distance, then Delete > Faces)",
                    list.len(),
                    list.iter().map(|t| t.2).collect::<Vec<_>>()
                )))
            }
        }
    }
    Ok(out)
}

/// Two triangles of one quad covering it: they share one diagonal and
/// together use its four corners.
fn complementary(a: &[(usize, usize); 3], b: &[(usize, usize); 3]) -> bool {
    let shared = a.iter().filter(|p| b.contains(p)).count();
    let mut all: Vec<(usize, usize)> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all.dedup();
    shared == 2 && all.len() == 4
}

/// Raw u16 of a UV value (wrapping, as the engine reads u16).
fn raw_uv(x: f64) -> u16 {
    (x.round() as i64).rem_euclid(65536) as u16
}

/// The vertex key of a face corner: the node, and the two-material pair
/// for a patch face's copy.
type VKey = ((usize, usize), Option<(u8, u8)>);

/// Builds every Land.msh stream of the new map (terrain-notes §5.1).
///
/// The result passes [`super::validate::validate`] in strict mode.
///
/// # Errors
/// `terrain.new_map.size` ([`GridSpec::check`]).
pub fn build(grid: &HeightGrid) -> Result<Land, TerrainError> {
    let spec = grid.spec;
    spec.check()?;
    let (g, k, n) = (spec.squares, spec.quads, spec.n());
    // Which first materials stand on each node (one-material faces).
    let mut ground: HashMap<(usize, usize), Vec<u8>> = HashMap::new();
    for q in &grid.quads {
        for (t, p) in q.iter().filter(|t| t.1.tex2 == NO_TEX2) {
            t.iter()
                .for_each(|nd| ground.entry(*nd).or_default().push(p.tex1));
        }
    }
    let mut vid: BTreeMap<VKey, u16> = BTreeMap::new();
    let mut land = empty_land(g);
    let mut lod0: Vec<Face> = Vec::with_capacity(n * n * 2);
    let mut square_faces = Vec::with_capacity(g * g);
    for sq in 0..g * g {
        let (sx, sy) = (sq / g, sq % g);
        let start = lod0.len();
        for qi in sx * k..(sx + 1) * k {
            for qj in sy * k..(sy + 1) * k {
                for (tri, paint) in &grid.quads[qi * n + qj] {
                    let pair = (paint.tex2 != NO_TEX2).then_some((paint.tex1, paint.tex2));
                    let mut v = [0u16; 3];
                    for c in 0..3 {
                        let nd = tri[c];
                        let key = (nd, pair.filter(|_| ground.contains_key(&nd)));
                        let next = vid.len() as u16;
                        v[c] = *vid.entry(key).or_insert(next);
                    }
                    let class = paint.class();
                    lod0.push(Face {
                        flags: class.flags,
                        surface: class.surface,
                        tex1: class.tex1,
                        tex2: class.tex2,
                        word3: class.word3,
                        v,
                        nb: [NONE; 3],
                        normal: [0; 3],
                        edges: 0,
                        byte27: 0,
                    });
                }
            }
        }
        square_faces.push(start..lod0.len());
    }
    vertices(&mut land, grid, &vid, &ground);
    land.faces = lod0.iter().chain(lod0.iter()).copied().collect();
    let f0 = lod0.len();
    for (lod, offset) in [(0usize, 0usize), (1, f0)] {
        for (sq, r) in square_faces.iter().enumerate() {
            let s = &mut land.slots[lod * g * g + sq];
            s.first = (offset + r.start) as u16;
            s.count = r.len() as u16;
        }
    }
    finish(&mut land, &spec);
    Ok(land)
}

/// A Land with the nine streams (retail order, all named `Land`, Res1
/// attr2 = `g`, attr3 the stride) and the Res1/Res2 tables of `g × g`
/// squares (terrain-notes §5.1: [`Square::retail`] records, `2 g²` zero
/// slots), no vertices or faces yet. `g` is 8 or 16 in a valid map.
pub fn empty_land(g: usize) -> Land {
    let entries = super::STREAM_ORDER
        .iter()
        .map(|&t| StreamEntry {
            type_id: t,
            name: b"Land".to_vec(),
            attr1: 0,
            attr2: if t == 1 { g as u32 } else { 0 },
            attr3: super::read::stride_of(t).unwrap_or(0) as u32,
            raw: None,
        })
        .collect();
    let s = g * g;
    let squares = (0..s).map(|i| Square::retail(i, s)).collect();
    let slot = Slot {
        first: 0,
        count: 0,
        reserved: [0; 4],
        min: [0.0; 3],
        max: [0.0; 3],
        centre: [0.0; 3],
        radius: 0.0,
        tail: [0; 20],
    };
    Land {
        entries,
        squares,
        corners: [[0.0; 3]; 8],
        header_tail: [0; RES2_HEADER - 0x60],
        slots: vec![slot; 2 * s],
        positions: Vec::new(),
        normals: Vec::new(),
        uv0: Vec::new(),
        uv1: Vec::new(),
        alpha: Some(Vec::new()),
        order: Vec::new(),
        faces: Vec::new(),
    }
}

/// Res3, Res5, Res18 and Res14 of the vertex copies `vid`.
fn vertices(
    land: &mut Land,
    grid: &HeightGrid,
    vid: &BTreeMap<VKey, u16>,
    ground: &HashMap<(usize, usize), Vec<u8>>,
) {
    let nv = vid.len();
    land.positions = vec![[0.0; 3]; nv];
    land.uv0 = vec![[0; 2]; nv];
    land.uv1 = vec![[0; 2]; nv];
    land.normals = vec![[0; 4]; nv];
    let mut alpha = vec![1.0f32; nv];
    let max_y = f64::from(grid.spec.side);
    for (&(nd, pair), &v) in vid {
        let p = grid.node(nd);
        let (x, y) = (f64::from(p[0]), f64::from(p[1]));
        let v = usize::from(v);
        land.positions[v] = p;
        land.uv0[v] = [
            raw_uv(x / UV_TURN * 1024.0),
            raw_uv((max_y - y) / UV_TURN * 1024.0),
        ];
        land.uv1[v] = [
            raw_uv(x * MICRO_PER_UNIT),
            raw_uv((max_y - y) * MICRO_PER_UNIT),
        ];
        if let Some((a, b)) = pair {
            let around = ground.get(&nd).map_or(&[][..], Vec::as_slice);
            alpha[v] = match (around.contains(&b), around.contains(&a)) {
                (true, false) => 1.0,
                (false, true) => 0.0,
                _ => 0.5,
            };
        }
    }
    land.alpha = Some(alpha);
}

/// Derived streams: slot XY boxes, normals, adjacency, boxes' Z, header,
/// Res11.
fn finish(land: &mut Land, spec: &GridSpec) {
    let g = spec.squares;
    for sq in 0..g * g {
        let (sx, sy) = (sq / g, sq % g);
        let k = spec.quads;
        for slot in [sq, sq + g * g] {
            let s = &mut land.slots[slot];
            s.min = [spec.coord(sx * k), spec.coord(sy * k), 0.0];
            s.max = [spec.coord((sx + 1) * k), spec.coord((sy + 1) * k), 0.0];
        }
    }
    for i in 0..land.faces.len() {
        let p = land.faces[i].v.map(|v| land.positions[usize::from(v)]);
        land.faces[i].normal = derive::face_normal(p).unwrap_or([0, 0, 32767]);
    }
    let all: std::collections::BTreeSet<usize> = (0..land.positions.len()).collect();
    derive::vertex_normals(land, &all);
    let f0 = land.lod_range(0);
    let f1 = land.lod_range(1);
    adjacency(land, f0);
    adjacency(land, f1);
    let squares: std::collections::BTreeSet<usize> = (0..g * g).collect();
    derive::cell_boxes(land, &squares);
    land.corners = derive::header_corners(land);
    land.order = (0..land.faces.len())
        .map(|i| DrawEntry {
            face: i as u16,
            flags: 0x48,
            byte3: 0,
        })
        .collect();
    for s in 0..land.slots.len() {
        derive::draw_order(land, s);
    }
}

/// Neighbours and edge codes of the faces in `range`, by shared edge
/// position (terrain-notes §1.9: edge e = (v[e], v[(e+1)%3]); links cross
/// duplicated vertices and cell borders, stay inside one LOD).
fn adjacency(land: &mut Land, range: std::ops::Range<usize>) {
    let key = |p: [f32; 3]| p.map(f32::to_bits);
    let mut edges: HashMap<([u32; 3], [u32; 3]), (usize, usize)> = HashMap::new();
    for i in range.clone() {
        let f = land.faces[i];
        for e in 0..3 {
            let a = key(land.positions[usize::from(f.v[e])]);
            let b = key(land.positions[usize::from(f.v[(e + 1) % 3])]);
            // The neighbour walks the edge the other way.
            if let Some(&(j, ej)) = edges.get(&(b, a)) {
                land.faces[i].nb[e] = j as u16;
                land.faces[j].nb[ej] = i as u16;
            } else {
                edges.insert((a, b), (i, e));
            }
        }
    }
    for i in range {
        let f = land.faces[i];
        let mut codes = 0u8;
        for e in 0..3 {
            let code = match f.nb[e] {
                NONE => 3,
                j => land.faces[usize::from(j)]
                    .nb
                    .iter()
                    .position(|&b| usize::from(b) == i)
                    .unwrap_or(3) as u8,
            };
            codes |= code << (2 * e);
        }
        land.faces[i].edges = codes;
    }
}

/// A new map's files, checked as the game would load them.
#[derive(Debug, Clone)]
pub struct NewMap {
    /// The grid it was made from.
    pub grid: HeightGrid,
    /// Land.msh bytes (read back strictly before they are returned).
    pub msh: Vec<u8>,
    /// Land.map bytes (decoded back and checked).
    pub map: Vec<u8>,
    /// Vertices (Res3), faces (Res21, both LODs) and areals written.
    pub counts: (usize, usize, usize),
    /// What the strict reader warns about the written files (none is
    /// expected but Res18 wrap straddles, summed in one line).
    pub warnings: Vec<String>,
}

/// Makes the Land.msh and Land.map of `grid` ([`build`],
/// [`super::areals::areal_map`]) and reads both back from their bytes:
/// Land.msh through [`super::read::decode`] and the strict
/// [`super::validate::validate`], Land.map through [`super::map::decode`]
/// and [`super::areals::check`].
///
/// # Errors
/// `terrain.new_map.size`, the container writer's `nres.*`, and any rule
/// the read-back breaks (a bug: the written map would not load).
pub fn make(grid: HeightGrid) -> Result<NewMap, TerrainError> {
    let land = build(&grid)?;
    let map = super::areals::areal_map(&grid, &land);
    let msh = super::write::encode(&land)?;
    let map_bytes = super::map::encode(&map)?;
    let back = super::read::decode(&msh)?;
    let f = super::validate::validate(&back, super::Mode::Strict)?;
    let mut warnings = Vec::new();
    let straddle = f
        .warnings
        .iter()
        .filter(|w| w.rule == "terrain.uv_span")
        .count();
    warnings.extend(
        f.warnings
            .iter()
            .filter(|w| w.rule != "terrain.uv_span")
            .map(ToString::to_string),
    );
    if straddle > 0 {
        warnings.push(format!(
            "terrain.uv_span: {straddle}{} faces cross a wrap line of the microtexture UV (Res18 wraps every {} units, as on retail maps wider than that; terrain-notes §1.6): the microtexture may smear along those lines",
            if straddle >= super::validate::MAX_PER_RULE { " or more" } else { "" },
            65536.0 / MICRO_PER_UNIT
        ));
    }
    let m = super::map::decode(&map_bytes)?;
    warnings.extend(super::areals::check(&m).iter().map(ToString::to_string));
    Ok(NewMap {
        grid,
        counts: (land.positions.len(), land.faces.len(), m.areals.len()),
        msh,
        map: map_bytes,
        warnings,
    })
}

/// The palette map the glTF names (the first node extras
/// `parkan_map_palette`, the map folder name the add-on's New map was made
/// with), if any.
///
/// # Errors
/// `gltf.json` naming `/nodes/{i}/extras/parkan_map_palette` when it is
/// not text (never read as absent, which would choose another palette).
pub fn palette_hint(doc: &GltfFile) -> Result<Option<String>, TerrainError> {
    for (i, n) in doc.nodes().iter().enumerate() {
        match n.get("extras").and_then(|e| e.get("parkan_map_palette")) {
            None => continue,
            Some(Value::String(s)) => return Ok(Some(s.clone())),
            Some(v) => {
                return Err(refuse(
                    "gltf.json",
                    format!("/nodes/{i}/extras/parkan_map_palette: {v} is not a string"),
                ))
            }
        }
    }
    Ok(None)
}

/// The glTF form of `grid` (the inverse of [`read_grid`]; what the
/// add-on's New map makes, for tests and benchmarks): one node `NewMap`
/// with the grid extras, one primitive per paint named by
/// `palette` (`A` / `A+B`), its own vertices (as Blender exports them),
/// glTF axes Y up. Returns the JSON and the binary buffer.
pub fn to_gltf(grid: &HeightGrid, palette: &Palette) -> (Value, Vec<u8>) {
    let mut by_paint: BTreeMap<Paint, Vec<[(usize, usize); 3]>> = BTreeMap::new();
    for q in &grid.quads {
        for (t, p) in q {
            by_paint.entry(*p).or_default().push(*t);
        }
    }
    let (mut bin, mut accessors, mut views, mut prims, mut mats) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (m, (paint, tris)) in by_paint.iter().enumerate() {
        let mut name = palette.rows[usize::from(paint.tex1)].clone();
        if paint.tex2 != NO_TEX2 {
            name = format!("{name}+{}", palette.rows[usize::from(paint.tex2)]);
        }
        mats.push(serde_json::json!({"name": name}));
        let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
        let start = bin.len();
        for t in tris {
            for nd in t {
                let g = axes::vec3(Up::Y, grid.node(*nd));
                for k in 0..3 {
                    lo[k] = lo[k].min(g[k]);
                    hi[k] = hi[k].max(g[k]);
                    bin.extend_from_slice(&g[k].to_le_bytes());
                }
            }
        }
        views.push(
            serde_json::json!({"buffer": 0, "byteOffset": start, "byteLength": bin.len() - start}),
        );
        accessors.push(serde_json::json!({"bufferView": views.len() - 1, "componentType": 5126, "count": tris.len() * 3, "type": "VEC3", "min": lo, "max": hi}));
        prims.push(serde_json::json!({"attributes": {"POSITION": accessors.len() - 1}, "material": m, "mode": 4}));
    }
    let json = serde_json::json!({
        "asset": {"version": "2.0", "generator": "mshgltf terrain::author::to_gltf"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "NewMap", "mesh": 0, "extras": {
            "parkan_map_squares": grid.spec.squares, "parkan_map_quads": grid.spec.quads,
            "parkan_map_side": grid.spec.side}}],
        "meshes": [{"name": "NewMap", "primitives": prims}],
        "materials": mats,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}],
    });
    (json, bin)
}
