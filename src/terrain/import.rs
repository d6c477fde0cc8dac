//! glTF → Land.msh with a base (terrain-notes §4.6).
//!
//! Vertices are found through `_VERTEX_ID` (else `TEXCOORD_2.x`, which a
//! Blender round trip keeps, else the accessor index), faces
//! by (LOD, sorted vertex-id triple). Unchanged values keep their base
//! bytes, so an unedited file comes back byte for byte. Edits:
//! - moved vertices → Res3, then face normals of the faces using them,
//!   vertex normals at the moved points, the Z range / centre / radius of
//!   the cells holding those faces and the Res2 header box;
//! - repainted faces (a face in another class's primitive, i.e. another
//!   material slot) → the Res21 class fields (tex1, tex2, flags, surface,
//!   word3) from the material's extras, and the cell's Res11 run;
//! - changed COLOR_0 alpha (through Blender: TEXCOORD_2.y) → Res14; changed
//!   UVs → Res5/Res18.
//!
//! - a repaint next to a two-material patch → the border vertices split,
//!   one copy per side ([`super::patches::split_borders`]).
//!
//! Topology edits (faces added or removed, new vertices) are refused.
//! When the map's XY extent or its water changes, a warning names what
//! changed and says that Land.map's polygons may be stale (kept as they
//! are); the areal vertices' heights follow the ground through
//! [`super::areals::follow_ground`], called by `gltf2msh`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::derive;
use super::ir::*;
use super::{patches, validate, Mode, TerrainError};
use crate::convention::{axes, Up};
use crate::gltf_import::read::refs::index_at;
use crate::gltf_import::read::{arr, Elem};
use crate::gltf_import::{material_edits, GltfFile};

/// What an import changed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TerrainImportReport {
    /// Nothing differs from the base.
    pub unchanged: bool,
    /// Vertices whose position changed.
    pub moved_vertices: usize,
    /// Vertices whose Res14 alpha changed.
    pub alpha_changed: usize,
    /// Vertices whose Res5 or Res18 UV changed.
    pub uv_changed: usize,
    /// Faces whose class (material) changed.
    pub repainted_faces: usize,
    /// Materials whose colour, opacity, texture or blend mode was edited:
    /// not written, each a warning.
    pub material_edits_dropped: usize,
    /// Scene edits a Land.msh cannot hold (a terrain node moved as a
    /// whole, a mesh that is not a terrain node): not written, each a
    /// warning.
    pub scene_edits_dropped: usize,
    /// Base vertices shared across a two-material patch border after the
    /// repaint, split into one copy per side (terrain-notes §1.7,
    /// [`super::patches::split_borders`]).
    pub split_vertices: usize,
    /// Vertex copies the split appended (Res3/4/5/18/14 grow by this).
    pub patch_copies: usize,
    /// Copies whose Res14 alpha the border rule set (0 next to
    /// first-material ground, 1 next to second-material ground).
    pub patch_alpha_set: usize,
    /// Squares whose cells were rebuilt.
    pub changed_squares: Vec<usize>,
    /// Warnings (Land.map may be stale, conflicting vertex copies, ...).
    pub warnings: Vec<String>,
    /// Validation notes of the written map (facts that need no action;
    /// `gltf2msh -v`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn err(detail: impl Into<String>) -> TerrainError {
    TerrainError::file("terrain.import", detail)
}

/// A reference of the wrong type ([`crate::gltf_import::read::refs`]) as
/// a terrain error (`gltf.json` naming its pointer).
fn json(e: crate::gltf_import::ImportError) -> TerrainError {
    TerrainError::file(e.rule, e.detail)
}

/// The attributes of primitive `prim` of mesh `mesh` (`p`), each an
/// accessor index.
///
/// # Errors
/// `gltf.json` naming `/meshes/{mesh}/primitives/{prim}/attributes[/NAME]`
/// when it is not an object of accessor indices (never read as absent: a
/// `_VERTEX_ID` so read would match every vertex to the wrong base one).
fn attributes(
    doc: &GltfFile,
    p: &Value,
    (mesh, prim): (usize, usize),
) -> Result<HashMap<String, usize>, TerrainError> {
    let at = format!("/meshes/{mesh}/primitives/{prim}/attributes");
    let o = match p.get("attributes") {
        None => return Ok(HashMap::new()),
        Some(Value::Object(o)) => o,
        Some(v) => {
            return Err(TerrainError::file(
                "gltf.json",
                format!("{at}: {v} is not an object"),
            ))
        }
    };
    let n = doc.accessor_count();
    o.iter()
        .map(|(k, v)| {
            let a = index_at(Some(v), &format!("{at}/{k}"), n, "accessors").map_err(json)?;
            Ok((k.clone(), a.unwrap_or_default()))
        })
        .collect()
}

fn class_of(material: &Elem) -> Option<FaceClass> {
    let t = material.get("extras")?.get("parkan_terrain")?;
    let g = |k: &str| t.get(k).and_then(Value::as_u64);
    Some(FaceClass {
        tex1: u8::try_from(g("tex1")?).ok()?,
        tex2: u8::try_from(g("tex2")?).ok()?,
        flags: u16::try_from(g("flags")?).ok()?,
        surface: u16::try_from(g("surface")?).ok()?,
        word3: u16::try_from(g("word3")?).ok()?,
    })
}

/// One glTF triangle matched to a base face by its sorted vertex triple.
struct FaceEdit {
    class: FaceClass,
    /// The triangle's base vertex ids in glTF order (its winding).
    order: [u16; 3],
    /// (mesh, primitive) it came from.
    prim: (usize, usize),
    /// A second (mesh, primitive) holding the same face.
    dup: Option<(usize, usize)>,
}

/// Edits read from the glTF, per base vertex and per face.
#[derive(Default)]
struct Edits {
    position: BTreeMap<usize, [f32; 3]>,
    alpha: BTreeMap<usize, f32>,
    uv0: BTreeMap<usize, [u16; 2]>,
    uv1: BTreeMap<usize, [u16; 2]>,
    /// Per attribute (position, alpha, TEXCOORD_0, TEXCOORD_1): base
    /// vertices with a glTF copy left at the base's value.
    kept: [BTreeSet<usize>; 4],
    /// Per LOD: sorted vertex triple → the glTF triangle.
    faces: BTreeMap<usize, HashMap<[u16; 3], FaceEdit>>,
}

/// Where a glTF vertex copy is: (mesh, primitive, glTF vertex).
type At = (usize, usize, usize);

/// Records one glTF copy's value for base vertex `v`: an edit when it
/// differs from the base, a kept copy otherwise; two copies edited to
/// different values are a conflict (`terrain.edit_conflict`, naming the
/// vertex, both values and where the second copy is).
#[allow(clippy::too_many_arguments)]
fn note<T: Copy + std::fmt::Debug>(
    edits: &mut BTreeMap<usize, T>,
    kept: &mut BTreeSet<usize>,
    (v, value, unchanged): (usize, T, bool),
    same: impl Fn(&T, &T) -> bool,
    (what, stream): (&str, u32),
    (mesh, prim, i): At,
) -> Result<(), TerrainError> {
    if unchanged {
        kept.insert(v);
        return Ok(());
    }
    match edits.entry(v) {
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(value);
            Ok(())
        }
        std::collections::btree_map::Entry::Occupied(o) if same(o.get(), &value) => Ok(()),
        std::collections::btree_map::Entry::Occupied(o) => Err(TerrainError::record(
            "terrain.edit_conflict",
            stream,
            v,
            format!(
                "map vertex {v}: two glTF copies carry different {what} edits, {:?} and {value:?} (the second in mesh {mesh} primitive {prim}, glTF vertex {i}); a map vertex has one {what}: edit its copies together",
                o.get()
            ),
        )),
    }
}

/// Copies of one map vertex edited on some glTF copies and left at the
/// base's value on others (a split vertex): the edit is written for every
/// copy, with a warning naming the vertices.
fn split_warnings(ed: &Edits, warnings: &mut Vec<String>) {
    let edited: [BTreeSet<usize>; 4] = [
        ed.position.keys().copied().collect(),
        ed.alpha.keys().copied().collect(),
        ed.uv0.keys().copied().collect(),
        ed.uv1.keys().copied().collect(),
    ];
    for (k, what) in [
        "position",
        "COLOR_0 alpha (Res14)",
        "TEXCOORD_0",
        "TEXCOORD_1",
    ]
    .iter()
    .enumerate()
    {
        let split: Vec<usize> = edited[k].intersection(&ed.kept[k]).copied().collect();
        if !split.is_empty() {
            warnings.push(format!(
                "{} map vertices have their {what} edited on some glTF copies and unchanged on others (a split vertex); the edited value is written for every copy: vertices {:?}{}",
                split.len(),
                &split[..split.len().min(20)],
                if split.len() > 20 { " ..." } else { "" }
            ));
        }
    }
}

fn uv_raw(u: f32) -> u16 {
    ((f64::from(u) * 1024.0).round() as i64).rem_euclid(65536) as u16
}

/// The per-vertex alpha of a primitive: TEXCOORD_2.y through Blender,
/// else COLOR_0's fourth component (1 for an RGB COLOR_0); non-finite
/// alpha is refused naming the glTF vertex (`gltf.non_finite`).
fn read_alpha(
    doc: &GltfFile,
    attr: &dyn Fn(&str) -> Option<usize>,
    n: usize,
    (mesh, prim): (usize, usize),
) -> Result<Option<Vec<f32>>, TerrainError> {
    let ge = |e: crate::gltf_import::ImportError| err(e.to_string());
    // Blender 3.x loses COLOR_0's alpha and every `_` attribute but keeps
    // UV maps: through Blender, Res14 travels in TEXCOORD_2.y.
    let blender = doc.json["asset"]["generator"]
        .as_str()
        .is_some_and(|g| g.contains("Blender"));
    let alpha: Option<Vec<f32>> = match (blender, attr("TEXCOORD_2")) {
        (true, Some(a)) => Some(
            doc.floats(a, 2, "TEXCOORD_2")
                .map_err(ge)?
                .iter()
                .skip(1)
                .step_by(2)
                .copied()
                .collect(),
        ),
        _ => attr("COLOR_0")
            .map(|a| doc.accessor(a).map(|r| (r.ncomp, r.to_f32())))
            .transpose()
            .map_err(ge)?
            .map(|(nc, c)| {
                if nc == 4 {
                    c.chunks_exact(4).map(|q| q[3]).collect()
                } else {
                    vec![1.0; n]
                }
            }),
    };
    if let Some((i, a)) = alpha
        .iter()
        .flatten()
        .enumerate()
        .find(|(_, a)| !a.is_finite())
    {
        return Err(TerrainError::file(
            "gltf.non_finite",
            format!("mesh {mesh} primitive {prim}: COLOR_0 alpha of glTF vertex {i} is {a}; Res14 alpha must be a finite number"),
        ));
    }
    Ok(alpha)
}

/// The triangle list of a primitive (TRIANGLES only), each index inside
/// its `n` vertices; a partial triangle or a stray index is refused
/// (`terrain.import`) naming mesh, primitive and index.
fn read_triangles(
    doc: &GltfFile,
    p: &Value,
    n: usize,
    (mesh, prim): (usize, usize),
) -> Result<Vec<u32>, TerrainError> {
    let at = format!("mesh {mesh} primitive {prim}");
    let ptr = format!("/meshes/{mesh}/primitives/{prim}");
    let mode = match p.get("mode") {
        None => 4,
        Some(v) => crate::gltf_import::read::extra_u64(v).ok_or_else(|| {
            TerrainError::file(
                "gltf.json",
                format!("{ptr}/mode: {v} is not an integer (a primitive mode)"),
            )
        })?,
    };
    if mode != 4 {
        return Err(err(format!(
            "{at}: mode {mode}; a terrain primitive is a triangle list (mode 4)"
        )));
    }
    let n_acc = doc.accessor_count();
    let indices = index_at(
        p.get("indices"),
        &format!("{ptr}/indices"),
        n_acc,
        "accessors",
    );
    let idx = match indices.map_err(json)? {
        Some(a) => doc.indices(a).map_err(|e| err(format!("{at}: {e}")))?,
        None => (0..n as u32).collect(),
    };
    if idx.len() % 3 != 0 {
        return Err(err(format!(
            "{at}: {} indices are not whole triangles ({} left over); every face is 3 indices",
            idx.len(),
            idx.len() % 3
        )));
    }
    if let Some((k, i)) = idx.iter().enumerate().find(|(_, &i)| i as usize >= n) {
        return Err(err(format!(
            "{at}: index {k} is {i}, past the primitive's {n} vertices (a stray index)"
        )));
    }
    Ok(idx)
}

/// Reads one primitive's vertices (mapped to base ids) and faces.
fn read_primitive(
    doc: &GltfFile,
    p: &Value,
    (lod, mesh, prim): (usize, usize, usize),
    up: Up,
    base: &Land,
    ed: &mut Edits,
) -> Result<(), TerrainError> {
    let ge = |e: crate::gltf_import::ImportError| err(e.to_string());
    let attrs = attributes(doc, p, (mesh, prim))?;
    let attr = |k: &str| attrs.get(k).copied();
    let ptr = format!("/meshes/{mesh}/primitives/{prim}/material");
    let mat = index_at(p.get("material"), &ptr, doc.materials().len(), "materials")
        .map_err(json)?
        .map(|m| &doc.materials()[m]);
    let class = mat.and_then(class_of).ok_or_else(|| err(format!("mesh {mesh} primitive {prim}: its material has no extras.parkan_terrain class (tex1, tex2, flags, surface, word3)")))?;
    let pos = doc
        .floats(
            attr("POSITION").ok_or_else(|| err("primitive without POSITION"))?,
            3,
            "POSITION",
        )
        .map_err(ge)?;
    let n = pos.len() / 3;
    let ids: Vec<f32> = match (attr("_VERTEX_ID"), attr("TEXCOORD_2")) {
        (Some(a), _) => doc.floats(a, 1, "_VERTEX_ID").map_err(ge)?,
        (None, Some(a)) => doc
            .floats(a, 2, "TEXCOORD_2")
            .map_err(ge)?
            .iter()
            .step_by(2)
            .copied()
            .collect(),
        (None, None) => (0..n).map(|i| i as f32).collect(),
    };
    let nv = base.positions.len();
    let id_of = |i: usize| -> Result<usize, TerrainError> {
        let x = ids.get(i).copied().unwrap_or(-1.0);
        if x >= 0.0 && x.fract() == 0.0 && (x as usize) < nv {
            Ok(x as usize)
        } else {
            Err(TerrainError::file("terrain.topology", format!("glTF vertex {i} has no base vertex (_VERTEX_ID {x}): new vertices are refused; re-cutting at the grid lines is not implemented")))
        }
    };
    let alpha = read_alpha(doc, &attr, n, (mesh, prim))?;
    let uv = |k: &str| attr(k).map(|a| doc.floats(a, 2, k)).transpose().map_err(ge);
    let (t0, t1) = (uv("TEXCOORD_0")?, uv("TEXCOORD_1")?);
    for i in 0..n {
        let v = id_of(i)?;
        let at = (mesh, prim, i);
        let p = axes::vec3_inv(up, [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]);
        let same_bits = |a: &[f32; 3], b: &[f32; 3]| a.map(f32::to_bits) == b.map(f32::to_bits);
        let moved = (v, p, p == base.positions[v]);
        note(
            &mut ed.position,
            &mut ed.kept[0],
            moved,
            same_bits,
            ("position", 3),
            at,
        )?;
        if let Some(a) = alpha.as_ref().and_then(|al| al.get(i).copied()) {
            let close = |x: &f32, y: &f32| (x - y).abs() <= 1e-6;
            let unchanged = close(&a, &base.alpha_of(v));
            note(
                &mut ed.alpha,
                &mut ed.kept[1],
                (v, a, unchanged),
                close,
                ("COLOR_0 alpha", 14),
                at,
            )?;
        }
        for (k, t, stream, name) in [
            (0, &t0, &base.uv0, "TEXCOORD_0"),
            (1, &t1, &base.uv1, "TEXCOORD_1"),
        ] {
            if let Some(t) = t {
                let Some(&[u, w]) = t.get(2 * i..2 * i + 2) else {
                    return Err(err(format!(
                        "{name} has {} elements, POSITION {n}: every attribute of a primitive needs one element per vertex (glTF 2.0 §3.7.2.1)",
                        t.len() / 2
                    )));
                };
                let q = [uv_raw(u), uv_raw(w)];
                let map = if k == 0 { &mut ed.uv0 } else { &mut ed.uv1 };
                let sid = if k == 0 { 5 } else { 18 };
                note(
                    map,
                    &mut ed.kept[2 + k],
                    (v, q, q == stream[v]),
                    |a, b| a == b,
                    (name, sid),
                    at,
                )?;
            }
        }
    }
    let idx = read_triangles(doc, p, n, (mesh, prim))?;
    record_faces(
        ed.faces.entry(lod).or_default(),
        &idx,
        &id_of,
        class,
        (mesh, prim),
    )
}

/// Records each triangle of `idx` (glTF vertex indices, 3 a face) of
/// primitive `(mesh, prim)` in `faces` by its sorted base vertex ids
/// (`id_of`), with its `class` and glTF winding; a face already there
/// from another primitive is marked as its duplicate (refused later).
///
/// # Errors
/// `id_of`'s: a glTF vertex with no base vertex (`terrain.topology`).
fn record_faces(
    faces: &mut HashMap<[u16; 3], FaceEdit>,
    idx: &[u32],
    id_of: &dyn Fn(usize) -> Result<usize, TerrainError>,
    class: FaceClass,
    (mesh, prim): (usize, usize),
) -> Result<(), TerrainError> {
    for t in idx.chunks_exact(3) {
        let mut order = [0u16; 3];
        for j in 0..3 {
            order[j] = id_of(t[j] as usize)? as u16;
        }
        let mut k = order;
        k.sort_unstable();
        match faces.entry(k) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(FaceEdit {
                    class,
                    order,
                    prim: (mesh, prim),
                    dup: None,
                });
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                e.get_mut().dup.get_or_insert((mesh, prim));
            }
        }
    }
    Ok(())
}

/// The first scene's `extras.parkan_terrain` (terrain-notes §4.5;
/// `None` when absent).
///
/// # Errors
/// `gltf.json` naming `/scenes/0/extras/parkan_terrain` when it is there
/// and neither an object nor text. Text is read as absent, as before:
/// Blender may keep a nested extra it cannot hold as a custom property as
/// its Python text (compat.py "Custom properties"), and a map edited in
/// Blender must still import (its `up` is then the default, y).
fn terrain_extras(doc: &GltfFile) -> Result<Option<&serde_json::Map<String, Value>>, TerrainError> {
    let v = doc
        .scenes()
        .first()
        .and_then(|s| s.get("extras"))
        .and_then(|e| e.get("parkan_terrain"));
    match v {
        None | Some(Value::String(_)) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => Err(TerrainError::file(
            "gltf.json",
            format!("/scenes/0/extras/parkan_terrain: {v} is not an object"),
        )),
    }
}

/// The axes of a map's glTF: its first scene's `extras.parkan_terrain.up`
/// (terrain-notes §4.5, written by [`super::export`]): `"z"` is Z up,
/// `"y"` or no such value Y up (the default of every export).
///
/// # Errors
/// `gltf.json` naming `/scenes/0/extras/parkan_terrain/up` when it is
/// there but is neither `"y"` nor `"z"` (a wrong type is never read as the
/// default).
pub fn scene_up(doc: &GltfFile) -> Result<Up, TerrainError> {
    let v = terrain_extras(doc)?.and_then(|x| x.get("up"));
    match v.map(|v| (v, v.as_str())) {
        None => Ok(Up::Y),
        Some((_, Some("y"))) => Ok(Up::Y),
        Some((_, Some("z"))) => Ok(Up::Z),
        Some((v, _)) => Err(TerrainError::file(
            "gltf.json",
            format!("/scenes/0/extras/parkan_terrain/up: {v} is not \"y\" or \"z\""),
        )),
    }
}

/// The `extras.lod` of node `i` (`None`: not a terrain node).
///
/// # Errors
/// `gltf.json` naming `/nodes/{i}/extras/lod` when it is there and not an
/// integer >= 0 (never read as "not a terrain node", which would drop
/// the node's edits).
fn lod_of(node: &Elem, i: usize) -> Result<Option<u64>, TerrainError> {
    let Some(v) = node.get("extras").and_then(|e| e.get("lod")) else {
        return Ok(None);
    };
    crate::gltf_import::read::extra_u64(v)
        .map(Some)
        .ok_or_else(|| {
            TerrainError::file(
                "gltf.json",
                format!("/nodes/{i}/extras/lod: {v} is not an integer >= 0 (a terrain LOD)"),
            )
        })
}

/// The mesh of node `i` (`None`: it has none).
///
/// # Errors
/// `gltf.json` naming `/nodes/{i}/mesh` when it is not a mesh index.
fn mesh_of(doc: &GltfFile, node: &Elem, i: usize) -> Result<Option<usize>, TerrainError> {
    let at = format!("/nodes/{i}/mesh");
    index_at(node.get("mesh"), &at, doc.meshes().len(), "meshes").map_err(json)
}

/// The faces a tolerant export left out (first scene's
/// `extras.parkan_terrain.skipped_faces`, terrain-notes §4.5; none when
/// absent).
///
/// # Errors
/// `gltf.json` naming the pointer when it, or one of its entries, is not
/// a list of face indices (never read as "none skipped").
fn skipped_faces(doc: &GltfFile) -> Result<BTreeSet<usize>, TerrainError> {
    let at = "/scenes/0/extras/parkan_terrain/skipped_faces";
    let v = terrain_extras(doc)?.and_then(|t| t.get("skipped_faces"));
    let bad = |at: &str, v: &Value, what: &str| {
        TerrainError::file("gltf.json", format!("{at}: {v} is not {what}"))
    };
    match v {
        None => Ok(BTreeSet::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(k, x)| {
                crate::gltf_import::read::extra_u64(x)
                    .map(|x| x as usize)
                    .ok_or_else(|| bad(&format!("{at}/{k}"), x, "a face index"))
            })
            .collect(),
        Some(v) => Err(bad(at, v, "an array of face indices")),
    }
}

/// Reads every terrain node (node extras `lod`) of the scene.
fn read_edits(doc: &GltfFile, base: &Land) -> Result<(Edits, Vec<usize>), TerrainError> {
    let up = scene_up(doc)?;
    let mut ed = Edits::default();
    let mut lods = Vec::new();
    for (i, node) in doc.nodes().iter().enumerate() {
        let (Some(lod), Some(mesh)) = (lod_of(node, i)?, mesh_of(doc, node, i)?) else {
            continue;
        };
        let lod = lod.min(1) as usize;
        lods.push(lod);
        let prims = match doc.meshes()[mesh].get("primitives") {
            None => &[][..],
            Some(Value::Array(a)) => a.as_slice(),
            Some(v) => {
                return Err(TerrainError::file(
                    "gltf.json",
                    format!("/meshes/{mesh}/primitives: {v} is not an array"),
                ))
            }
        };
        for (k, p) in prims.iter().enumerate() {
            read_primitive(doc, p, (lod, mesh, k), up, base, &mut ed)?;
        }
    }
    if lods.is_empty() {
        return Err(err("no terrain node (node extras {\"lod\": n} with a mesh): was this glTF exported from a Land.msh?"));
    }
    Ok((ed, lods))
}

/// Whether a face's tex1/tex2 is past `rows` Land1.wea rows (terrain-notes
/// §5.2 rule 8; what a tolerant export leaves out).
fn row_bad(c: &FaceClass, rows: usize) -> bool {
    usize::from(c.tex1) >= rows || (c.tex2 != NO_TEX2 && usize::from(c.tex2) >= rows)
}

/// Whether `order` is `base` turned (same winding), not mirrored.
fn same_winding(order: [u16; 3], base: [u16; 3]) -> bool {
    (0..3).any(|r| (0..3).all(|j| order[j] == base[(j + r) % 3]))
}

/// One base face matched against the glTF's triangle: a face in two
/// primitives is refused (`terrain.edit_conflict`), a repaint to a row
/// past Land1.wea's `rows` is refused (`terrain.material_row`), a flipped
/// winding is pushed to `flipped`. Returns whether the class changed.
fn apply_face(
    land: &mut Land,
    (lod, i): (usize, usize),
    fe: &FaceEdit,
    rows: Option<usize>,
    flipped: &mut Vec<usize>,
) -> Result<bool, TerrainError> {
    let f = &mut land.faces[i];
    let (m, p) = fe.prim;
    if let Some((m2, p2)) = fe.dup {
        return Err(TerrainError::record("terrain.edit_conflict", 21, i, format!("LOD{lod} face {:?} is in mesh {m} primitive {p} and again in mesh {m2} primitive {p2}: a face has one material (one primitive); delete the extra copy", f.v)));
    }
    if !same_winding(fe.order, f.v) {
        flipped.push(i);
    }
    let c = fe.class;
    if f.class() == c {
        return Ok(false);
    }
    if let Some(n) = rows.filter(|&n| row_bad(&c, n)) {
        return Err(TerrainError::record("terrain.material_row", 21, i, format!("LOD{lod} face {:?} repainted (mesh {m} primitive {p}) to tex1 {} / tex2 {}: Land1.wea has {n} rows (0..{}); the game and msh2gltf refuse a row past them", f.v, c.tex1, c.tex2, n.saturating_sub(1))));
    }
    (f.tex1, f.tex2, f.flags, f.surface, f.word3) = (c.tex1, c.tex2, c.flags, c.surface, c.word3);
    Ok(true)
}

/// Applies repaints: checks the face sets match, sets class fields.
///
/// With Land1.wea's `rows` known, a base face missing from the glTF is
/// refused (the base's own rows were checked by [`check_base_rows`]); with
/// them unknown, one the glTF's `skipped_faces` (`listed`) names is kept
/// with a warning.
fn apply_faces(
    land: &mut Land,
    ed: &Edits,
    lods: &[usize],
    (listed, rows): (&BTreeSet<usize>, Option<usize>),
    rep: &mut TerrainImportReport,
) -> Result<BTreeSet<usize>, TerrainError> {
    let mut repainted = BTreeSet::new();
    let mut flipped = Vec::new();
    let mut unchecked = Vec::new();
    let none = HashMap::new();
    for &lod in lods {
        // A LOD node whose mesh has no primitives (or names no mesh) has no faces.
        let got = ed.faces.get(&lod).unwrap_or(&none);
        let range = land.lod_range(lod);
        let mut seen = 0usize;
        for i in range.clone() {
            let mut k = land.faces[i].v;
            k.sort_unstable();
            let Some(fe) = got.get(&k) else {
                if rows.is_none() && listed.contains(&i) {
                    unchecked.push(i);
                    continue;
                }
                let note = if listed.contains(&i) {
                    " (it is listed in the glTF's skipped_faces, but only faces the export left out, a tex1/tex2 past Land1.wea's rows, may be missing)"
                } else {
                    ""
                };
                return Err(TerrainError::record("terrain.topology", 21, i, format!("LOD{lod} face {:?} is missing from the glTF{note}: removing faces is refused (re-cutting at the grid lines is not implemented)", land.faces[i].v)));
            };
            seen += 1;
            if apply_face(land, (lod, i), fe, rows, &mut flipped)? {
                repainted.insert(i);
            }
        }
        if seen != got.len() {
            return Err(TerrainError::file("terrain.topology", format!("LOD{lod}: the glTF has {} faces, the base {seen}: adding faces is refused (re-cutting at the grid lines is not implemented)", got.len())));
        }
    }
    if !flipped.is_empty() {
        rep.warnings.push(format!(
            "{} face(s) have a flipped winding in the glTF; a face's winding is not written, the base's is kept: Res21 faces {:?}{}",
            flipped.len(),
            &flipped[..flipped.len().min(20)],
            if flipped.len() > 20 { " ..." } else { "" }
        ));
    }
    if !unchecked.is_empty() {
        rep.warnings.push(format!(
            "{} face(s) missing from the glTF are kept from the base because its skipped_faces lists them; without Land1.wea beside the base this cannot be checked (only faces with a row past Land1.wea's are left out by an export): Res21 faces {:?}{}",
            unchecked.len(),
            &unchecked[..unchecked.len().min(20)],
            if unchecked.len() > 20 { " ..." } else { "" }
        ));
    }
    rep.repainted_faces = repainted.len();
    Ok(repainted)
}

/// Squares (Res1 records) of the faces in `faces`.
fn squares_of(land: &Land, faces: &BTreeSet<usize>) -> BTreeSet<usize> {
    let owner = validate::face_slots(land);
    let n = land.squares.len().max(1);
    faces
        .iter()
        .filter_map(|&f| owner[f])
        .map(|s| s as usize % n)
        .collect()
}

/// Applies vertex edits and recomputes what depends on moved vertices.
/// Returns the faces whose geometry changed.
fn apply_vertices(land: &mut Land, ed: &Edits, rep: &mut TerrainImportReport) -> BTreeSet<usize> {
    for (&v, &p) in &ed.position {
        land.positions[v] = p;
    }
    if let Some(a) = land.alpha.as_mut() {
        for (&v, &x) in &ed.alpha {
            a[v] = x;
        }
    } else if !ed.alpha.is_empty() {
        rep.warnings.push(format!(
            "{} alpha edit(s) dropped: the base has no Res14 stream",
            ed.alpha.len()
        ));
    }
    for (&v, &q) in &ed.uv0 {
        land.uv0[v] = q;
    }
    for (&v, &q) in &ed.uv1 {
        land.uv1[v] = q;
    }
    rep.moved_vertices = ed.position.len();
    rep.alpha_changed = ed.alpha.len();
    rep.uv_changed = ed
        .uv0
        .keys()
        .chain(ed.uv1.keys())
        .collect::<BTreeSet<_>>()
        .len();
    let moved: BTreeSet<usize> = ed.position.keys().copied().collect();
    let faces: BTreeSet<usize> = land
        .faces
        .iter()
        .enumerate()
        .filter(|(_, f)| f.v.iter().any(|&v| moved.contains(&usize::from(v))))
        .map(|(i, _)| i)
        .collect();
    derive::face_normals(land, &faces);
    // Every copy of a point next to a moved vertex gets a new normal.
    let near: BTreeSet<[u32; 3]> = faces
        .iter()
        .flat_map(|&i| land.faces[i].v)
        .map(|v| land.positions[usize::from(v)].map(f32::to_bits))
        .collect();
    let vertices: BTreeSet<usize> = (0..land.positions.len())
        .filter(|&v| near.contains(&land.positions[v].map(f32::to_bits)))
        .collect();
    derive::vertex_normals(land, &vertices);
    faces
}

/// Error-level rules of the strict validator that the import repairs
/// itself (it regenerates Res11 for every cell).
const REPAIRED: [&str; 3] = [
    "terrain.res11_range",
    "terrain.res11_permutation",
    // Split by the import (patches::split_borders).
    "terrain.patch_vertices",
];

/// Checks that `base` can be rebuilt: every error-level rule of
/// [`validate::check`] (terrain-notes §5.2: vertex indices inside Res3,
/// slot runs inside Res21 and chained, the Res1 grid, neighbours, finite
/// floats) must hold, since deriving normals and boxes indexes by them and
/// the written map must pass the strict validator anyway. Res11 that is
/// not a permutation is the exception: it is regenerated.
///
/// Returns whether Res11 must be regenerated.
///
/// # Errors
/// The first error-level finding, its rule, stream and record kept and its
/// detail saying that the base breaks it.
pub fn check_base(base: &Land) -> Result<bool, TerrainError> {
    let f = validate::check(base);
    if let Some(e) = f.errors.iter().find(|e| !REPAIRED.contains(&e.rule)) {
        let mut e = e.clone();
        e.detail = format!(
            "{} (the base map breaks this strict rule: only a strict-valid Land.msh can be rebuilt with edits)",
            e.detail
        );
        return Err(e);
    }
    Ok(f.regenerate_order)
}

/// Checks the base's faces against Land1.wea's `rows` (terrain-notes §5.2
/// rule 8, what the strict reader refuses): a face whose tex1 or tex2 is no
/// row cannot be rebuilt, since its class is neither exported (a tolerant
/// export leaves the face out) nor writable back.
///
/// # Errors
/// `terrain.material_row` naming the first such Res21 record, its rows and
/// how many faces break the rule.
pub fn check_base_rows(base: &Land, rows: usize) -> Result<(), TerrainError> {
    let mut bad = base
        .faces
        .iter()
        .enumerate()
        .filter(|(_, f)| row_bad(&f.class(), rows));
    let Some((i, f)) = bad.next() else {
        return Ok(());
    };
    let more = bad.count();
    Err(TerrainError::record(
        "terrain.material_row",
        21,
        i,
        format!(
            "tex1 {} / tex2 {}: Land1.wea has {rows} rows (0..{}){}; the base map breaks this strict rule (msh2gltf refuses it without --tolerant, the game draws no such row): only a strict-valid Land.msh can be rebuilt with edits, repair the face's material bytes or Land1.wea first",
            f.tex1,
            f.tex2,
            rows.saturating_sub(1),
            if more > 0 { format!(" ({more} more faces like it)") } else { String::new() }
        ),
    ))
}

/// The work of reading the terrain primitives of `doc` (issue 26 item 5),
/// from its JSON alone: per primitive of every LOD node's mesh,
/// [`crate::limits::UNITS_PER_IMPORTED_PRIMITIVE`] plus 1 unit per element
/// of each attribute accessor and of its indices (every primitive reads
/// its accessors whole, so 1000 primitives sharing one 10^6-vertex
/// accessor count 10^9). Returns the units and what was counted.
pub fn primitive_work(doc: &GltfFile) -> (u64, String) {
    let count = |a: &Value| {
        a.as_u64()
            .and_then(|a| doc.accessor_def(a as usize).ok())
            .and_then(|a| a.get("count"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let (mut prims, mut elements) = (0u64, 0u64);
    for node in doc.nodes() {
        if node.get("extras").and_then(|e| e.get("lod")).is_none() {
            continue;
        }
        let Some(mesh) = node.get("mesh").and_then(Value::as_u64) else {
            continue;
        };
        let mesh_j = doc.meshes().get(mesh as usize);
        for p in mesh_j.map_or(&[][..], |m| arr(m, "primitives")) {
            prims += 1;
            let attrs = p["attributes"].as_object().into_iter().flatten();
            let sum = attrs
                .map(|(_, a)| count(a))
                .fold(count(&p["indices"]), u64::saturating_add);
            elements = elements.saturating_add(sum);
        }
    }
    let units = prims
        .saturating_mul(crate::limits::UNITS_PER_IMPORTED_PRIMITIVE)
        .saturating_add(elements);
    (
        units,
        format!("{prims} terrain primitives reading {elements} accessor elements"),
    )
}

/// Refuses a map edit whose primitives cost more than `max_work` units to
/// read ([`primitive_work`]), before any is read.
///
/// # Errors
/// `limits.work` naming the counts and the budget.
pub fn check_primitive_work(doc: &GltfFile, max_work: u64) -> Result<(), TerrainError> {
    let (units, what) = primitive_work(doc);
    if units > max_work {
        return Err(TerrainError::file(
            "limits.work",
            format!("{what} make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)"),
        ));
    }
    Ok(())
}

/// Rebuilds `base` with the edits of `doc` (an export of `base`), Land1.wea
/// unknown: [`import_with_land1`] with `None`.
///
/// # Errors
/// As [`import_with_land1`].
pub fn import_with_base(
    doc: &GltfFile,
    base: &Land,
) -> Result<(Land, TerrainImportReport), TerrainError> {
    import_with_land1(doc, base, None)
}

/// Rebuilds `base` with the edits of `doc` (an export of `base`);
/// `land1_rows` is the number of material rows of the map's Land1.wea
/// (`None`: not found beside the base).
///
/// A base with a face past `land1_rows` (terrain-notes §5.2 rule 8) is
/// refused ([`check_base_rows`]); faces missing from the glTF are kept
/// from the base only when `land1_rows` is unknown and the glTF's
/// `skipped_faces` lists them (with a warning). Conflicting edits are refused naming
/// the vertex or face; a flipped winding or a split vertex (one copy
/// edited, another left) is a warning naming them. The result passes the
/// strict validator or the import fails.
///
/// # Errors
/// Any error-level rule the base breaks ([`check_base`]),
/// `terrain.material_row` (a base face past `land1_rows`), `terrain.import`
/// (no terrain node, a material without class extras, unreadable
/// accessors, an attribute shorter than POSITION, a partial triangle, a
/// stray index, a mode other than triangles), `gltf.non_finite` (a NaN/Inf
/// COLOR_0 alpha), `terrain.edit_conflict` (two copies of one map vertex
/// edited differently, one face in two primitives), `terrain.material_row`
/// (a repaint to a row past Land1.wea's), `terrain.topology` (faces or
/// vertices added or removed), and any strict rule of
/// [`validate::validate`] the edited map breaks (e.g. a vertex moved out of
/// its cell: `terrain.cell_box` is a warning, reported).
pub fn import_with_land1(
    doc: &GltfFile,
    base: &Land,
    land1_rows: Option<usize>,
) -> Result<(Land, TerrainImportReport), TerrainError> {
    let regenerate_order = check_base(base)?;
    if let Some(n) = land1_rows {
        check_base_rows(base, n)?;
    }
    let (ed, lods) = read_edits(doc, base)?;
    let skipped = skipped_faces(doc)?;
    let mut land = base.clone();
    let mut rep = TerrainImportReport::default();
    let repainted = apply_faces(&mut land, &ed, &lods, (&skipped, land1_rows), &mut rep)?;
    split_warnings(&ed, &mut rep.warnings);
    let moved_faces = apply_vertices(&mut land, &ed, &mut rep);
    // A repaint next to a two-material patch: its border vertices stored
    // once per side (terrain-notes §1.7), also for a base that shares them.
    let alpha_kept: BTreeSet<usize> = ed.alpha.keys().copied().collect();
    let split = patches::split_borders(&mut land, &repainted, &alpha_kept)?;
    rep.split_vertices = split.split_vertices;
    rep.patch_copies = split.new_vertices;
    rep.patch_alpha_set = split.alpha_set;
    let squares = squares_of(&land, &moved_faces);
    derive::cell_boxes(&mut land, &squares);
    if !moved_faces.is_empty() {
        land.corners = derive::header_corners(&land);
    }
    let n = land.squares.len();
    let owner = validate::face_slots(&land);
    let mut slots: BTreeSet<usize> = repainted
        .iter()
        .filter_map(|&f| owner[f])
        .map(|s| s as usize)
        .collect();
    if regenerate_order {
        // A base whose Res11 is not a permutation (read tolerantly): rebuilt everywhere.
        rep.warnings
            .push("Res11 of the base is not a permutation: regenerated for every cell".into());
        slots.extend(0..land.slots.len());
    }
    for &s in &slots {
        derive::draw_order(&mut land, s);
    }
    let mut changed: BTreeSet<usize> = squares;
    changed.extend(slots.iter().map(|s| s % n.max(1)));
    rep.changed_squares = changed.into_iter().collect();
    stale_map_warning(base, &land, &repainted, &mut rep);
    let dropped = material_edit_warnings(doc);
    rep.material_edits_dropped = dropped.len();
    rep.warnings.extend(dropped);
    let dropped = scene_edit_warnings(doc);
    rep.scene_edits_dropped = dropped.len();
    rep.warnings.extend(dropped);
    let f = validate::validate(&land, Mode::Strict)?;
    rep.warnings
        .extend(f.warnings.iter().map(ToString::to_string));
    rep.notes = f.notes.iter().map(ToString::to_string).collect();
    rep.unchanged =
        land == *base && rep.material_edits_dropped == 0 && rep.scene_edits_dropped == 0;
    Ok((land, rep))
}

/// One warning per map material whose colour, opacity, texture or blend
/// mode differs from what msh2gltf exported (`extras.msh.exported`,
/// compared as for a model: `gltf_import::material_edits`): none is
/// written, since a map's material is a Land1.wea row naming `Material.lib`
/// and `Textures.lib` entries that other maps and models share, and
/// `gltf2msh --base Land.msh` writes Land.msh only (terrain-notes §4.6).
fn material_edit_warnings(doc: &GltfFile) -> Vec<String> {
    material_edits::edits(doc)
        .iter()
        .map(|e| {
            format!(
                "material {} {:?}: {} not written: a map's materials are Land1.wea rows naming Material.lib and Textures.lib entries, which gltf2msh --base Land.msh does not write; repaint faces with another material slot instead, or edit the library material through a model that uses it (--game-dir)",
                e.index,
                e.gltf_name,
                e.changes.join(", ")
            )
        })
        .collect()
}

/// One warning per scene edit a Land.msh cannot hold: a terrain node
/// (extras `lod`) whose world transform is not the identity (its vertices
/// are read as they are stored, so a move, turn or scale of the whole
/// object would be lost), and a node with a mesh that is not a terrain
/// node (a Land.msh holds the terrain only; Land.map's `--areals` outline
/// is msh2gltf's own display). Node names in glTF order.
fn scene_edit_warnings(doc: &GltfFile) -> Vec<String> {
    let nodes = doc.nodes();
    let Ok(parents) = crate::gltf_import::matching::child_links(nodes) else {
        return Vec::new(); // the hierarchy was refused earlier
    };
    let name = |i: usize| nodes[i]["name"].as_str().unwrap_or("(unnamed)").to_owned();
    let mut out = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        // `--areals` outlines (extras `areals`) are shown, never written.
        if n.get("mesh").is_none() || !n["extras"]["areals"].is_null() {
            continue;
        }
        let Some(lod) = n["extras"]["lod"].as_u64() else {
            out.push(format!(
                "node {:?}: a mesh that is not a terrain node (no extras.lod): not written (a Land.msh holds the terrain only; place buildings, units, trees and rocks in a mission)",
                name(i)
            ));
            continue;
        };
        let (mut world, mut at) = (crate::gltf_import::matching::local_matrix(n), i);
        for _ in 0..nodes.len() {
            let Some(p) = parents[at] else { break };
            world = crate::gltf_import::matching::local_matrix(&nodes[p]) * world;
            at = p;
        }
        if !world.abs_diff_eq(glam::DMat4::IDENTITY, 1e-6) {
            out.push(format!(
                "terrain node {:?} (LOD{lod}): moved, turned or scaled as a whole: not written (gltf2msh writes the map's vertices as stored, not an object transform; apply it to the vertices first: Blender's Object > Apply > All Transforms)",
                name(i)
            ));
        }
    }
    out
}

fn stale_map_warning(
    base: &Land,
    land: &Land,
    repainted: &BTreeSet<usize>,
    rep: &mut TerrainImportReport,
) {
    let (b0, b1) = validate::corner_box(&base.corners);
    let (n0, n1) = validate::corner_box(&land.corners);
    let extent = b0[..2] != n0[..2] || b1[..2] != n1[..2];
    let water_faces = |l: &Land| {
        l.faces
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_water() || f.is_bed())
            .map(|(i, _)| i)
            .collect::<BTreeSet<_>>()
    };
    let water_moved = water_faces(land).iter().any(|&i| {
        land.faces[i]
            .v
            .iter()
            // A patch split's copy (past the base's vertices) sits where
            // its original is: the original tells whether it moved.
            .any(|&v| {
                base.positions
                    .get(usize::from(v))
                    .is_some_and(|b| *b != land.positions[usize::from(v)])
            })
    });
    let water_class = water_faces(land) != water_faces(base)
        || repainted
            .iter()
            .any(|&i| land.faces[i].is_water() != base.faces[i].is_water());
    let mut what = Vec::new();
    if extent {
        what.push(format!(
            "its XY extent changed ({:?}..{:?} -> {:?}..{:?})",
            &b0[..2],
            &b1[..2],
            &n0[..2],
            &n1[..2]
        ));
    }
    if water_moved {
        what.push("water or liquid-bed vertices moved".to_string());
    }
    if water_class {
        what.push("faces were repainted to or from water or liquid bed".to_string());
    }
    if !what.is_empty() {
        rep.warnings.push(format!(
            "{}: Land.map's navigation polygons (their XY outlines, lake areals and links) may be stale; they are kept as they are, since they cannot be regenerated faithfully (terrain-notes §3); only their vertices' heights follow the ground",
            what.join(", ")
        ));
    }
}

/// The map's Land1.wea as `gltf2msh --base` checks repaints against it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Land1Rows {
    /// The file found beside the base (an input of the run).
    pub path: Option<std::path::PathBuf>,
    /// Its material rows, when it was read and parsed.
    pub rows: Option<usize>,
    /// Why the rows are unknown (not found, unreadable, broken), naming
    /// where it looked.
    pub warning: Option<String>,
}

/// Finds `<stem>1.wea` (any case) beside the map `base` and counts its
/// WEAR material rows (format-notes §4.1), read through the regular-file,
/// size-capped reader. A missing, unreadable or broken file leaves `rows`
/// unknown with a warning naming it.
///
/// # Errors
/// `limits.work` when the file's lines cost more than `max_work` units
/// ([`super::source::sibling_work`]), counted before it is parsed.
pub fn land1_beside(base: &std::path::Path, max_work: u64) -> Result<Land1Rows, TerrainError> {
    let dir = base
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let stem = base
        .file_stem()
        .map_or_else(|| "Land".into(), |s| s.to_string_lossy().into_owned());
    let name = format!("{stem}1.wea");
    let Some(p) = crate::source::file_any_case(dir, &name) else {
        return Ok(Land1Rows {
            warning: Some(format!(
                "{name} not found in {}: repainted faces' material rows are not checked",
                dir.display()
            )),
            ..Default::default()
        });
    };
    let bytes = crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES);
    if let Ok(b) = &bytes {
        let (units, what) = super::source::sibling_work(false, b);
        if units > max_work {
            return Err(TerrainError::file(
                "limits.work",
                format!(
                    "{}: {what} make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                    p.display()
                ),
            ));
        }
    }
    let rows = bytes.map_err(|e| e.to_string()).and_then(|b| {
        crate::material::Wear::parse(&b)
            .map(|w| w.materials.len())
            .map_err(|e| e.to_string())
    });
    Ok(match rows {
        Ok(n) => Land1Rows {
            path: Some(p),
            rows: Some(n),
            warning: None,
        },
        Err(e) => Land1Rows {
            warning: Some(format!(
                "{}: {e}; repainted faces' material rows are not checked",
                p.display()
            )),
            path: Some(p),
            rows: None,
        },
    })
}
