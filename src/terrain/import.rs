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
//! Topology edits (faces added or removed, new vertices) are refused.
//! When the map's XY extent or its water changes, a warning says that
//! Land.map may be stale (it is kept as is).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::derive;
use super::ir::*;
use super::{validate, Mode, TerrainError};
use crate::convention::{axes, Up};
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

fn class_of(material: &Value) -> Option<FaceClass> {
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

/// Edits read from the glTF, per base vertex and per face.
#[derive(Default)]
struct Edits {
    position: BTreeMap<usize, [f32; 3]>,
    alpha: BTreeMap<usize, f32>,
    uv0: BTreeMap<usize, [u16; 2]>,
    uv1: BTreeMap<usize, [u16; 2]>,
    /// Per LOD: sorted vertex triple → class.
    faces: BTreeMap<usize, HashMap<[u16; 3], FaceClass>>,
}

fn uv_raw(u: f32) -> u16 {
    ((f64::from(u) * 1024.0).round() as i64).rem_euclid(65536) as u16
}

/// Reads one primitive's vertices (mapped to base ids) and faces.
fn read_primitive(
    doc: &GltfFile,
    p: &Value,
    lod: usize,
    up: Up,
    base: &Land,
    ed: &mut Edits,
) -> Result<(), TerrainError> {
    let ge = |e: crate::gltf_import::ImportError| err(e.to_string());
    let attr = |k: &str| {
        p["attributes"]
            .get(k)
            .and_then(Value::as_u64)
            .map(|a| a as usize)
    };
    let mat = p
        .get("material")
        .and_then(Value::as_u64)
        .map(|m| &doc.json["materials"][m as usize]);
    let class = mat.and_then(class_of).ok_or_else(|| err("a terrain primitive's material has no extras.parkan_terrain class (tex1, tex2, flags, surface, word3)"))?;
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
    let uv = |k: &str| attr(k).map(|a| doc.floats(a, 2, k)).transpose().map_err(ge);
    let (t0, t1) = (uv("TEXCOORD_0")?, uv("TEXCOORD_1")?);
    for i in 0..n {
        let v = id_of(i)?;
        let p = axes::vec3_inv(up, [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]);
        if p != base.positions[v] {
            ed.position.entry(v).or_insert(p);
        }
        if let Some(a) = alpha.as_ref().and_then(|al| al.get(i).copied()) {
            if (a - base.alpha_of(v)).abs() > 1e-6 {
                ed.alpha.entry(v).or_insert(a);
            }
        }
        for (t, stream, map, name) in [
            (&t0, &base.uv0, &mut ed.uv0, "TEXCOORD_0"),
            (&t1, &base.uv1, &mut ed.uv1, "TEXCOORD_1"),
        ] {
            if let Some(t) = t {
                let Some(&[u, w]) = t.get(2 * i..2 * i + 2) else {
                    return Err(err(format!(
                        "{name} has {} elements, POSITION {n}: every attribute of a primitive needs one element per vertex (glTF 2.0 §3.7.2.1)",
                        t.len() / 2
                    )));
                };
                let q = [uv_raw(u), uv_raw(w)];
                if q != stream[v] {
                    map.entry(v).or_insert(q);
                }
            }
        }
    }
    let idx = match p.get("indices").and_then(Value::as_u64) {
        Some(a) => doc.indices(a as usize).map_err(ge)?,
        None => (0..n as u32).collect(),
    };
    let faces = ed.faces.entry(lod).or_default();
    for t in idx.chunks_exact(3) {
        let mut k = [0u16; 3];
        for j in 0..3 {
            k[j] = id_of(t[j] as usize)? as u16;
        }
        k.sort_unstable();
        faces.insert(k, class);
    }
    Ok(())
}

/// Reads every terrain node (node extras `lod`) of the scene.
fn read_edits(doc: &GltfFile, base: &Land) -> Result<(Edits, Vec<usize>), TerrainError> {
    let scene_x = doc.json["scenes"]
        .get(0)
        .and_then(|s| s.get("extras"))
        .and_then(|e| e.get("parkan_terrain"));
    let up = match scene_x.and_then(|x| x.get("up")).and_then(Value::as_str) {
        Some("z") => Up::Z,
        _ => Up::Y,
    };
    let mut ed = Edits::default();
    let mut lods = Vec::new();
    for node in doc.json["nodes"].as_array().map_or(&[][..], Vec::as_slice) {
        let (Some(lod), Some(mesh)) = (
            node.get("extras")
                .and_then(|e| e.get("lod"))
                .and_then(Value::as_u64),
            node.get("mesh").and_then(Value::as_u64),
        ) else {
            continue;
        };
        let lod = lod.min(1) as usize;
        lods.push(lod);
        for p in doc.json["meshes"][mesh as usize]["primitives"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            read_primitive(doc, p, lod, up, base, &mut ed)?;
        }
    }
    if lods.is_empty() {
        return Err(err("no terrain node (node extras {\"lod\": n} with a mesh): was this glTF exported from a Land.msh?"));
    }
    Ok((ed, lods))
}

/// Applies repaints: checks the face sets match, sets class fields.
fn apply_faces(
    land: &mut Land,
    ed: &Edits,
    lods: &[usize],
    skipped: &BTreeSet<usize>,
    rep: &mut TerrainImportReport,
) -> Result<BTreeSet<usize>, TerrainError> {
    let mut repainted = BTreeSet::new();
    let none = HashMap::new();
    for &lod in lods {
        // A LOD node whose mesh has no primitives (or names no mesh) has no faces.
        let got = ed.faces.get(&lod).unwrap_or(&none);
        let range = land.lod_range(lod);
        let mut seen = 0usize;
        for i in range.clone() {
            let mut k = land.faces[i].v;
            k.sort_unstable();
            let Some(c) = got.get(&k) else {
                if skipped.contains(&i) {
                    continue;
                }
                return Err(TerrainError::record("terrain.topology", 21, i, format!("LOD{lod} face {:?} is missing from the glTF: removing faces is refused (re-cutting at the grid lines is not implemented)", land.faces[i].v)));
            };
            seen += 1;
            let f = &mut land.faces[i];
            if f.class() != *c {
                (f.tex1, f.tex2, f.flags, f.surface, f.word3) =
                    (c.tex1, c.tex2, c.flags, c.surface, c.word3);
                repainted.insert(i);
            }
        }
        if seen != got.len() {
            return Err(TerrainError::file("terrain.topology", format!("LOD{lod}: the glTF has {} faces, the base {seen}: adding faces is refused (re-cutting at the grid lines is not implemented)", got.len())));
        }
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
const REPAIRED: [&str; 2] = ["terrain.res11_range", "terrain.res11_permutation"];

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

/// Rebuilds `base` with the edits of `doc` (an export of `base`).
///
/// `skipped` are the faces a tolerant export left out (kept from the base).
/// The result passes the strict validator or the import fails.
///
/// # Errors
/// Any error-level rule the base breaks ([`check_base`]), `terrain.import`
/// (no terrain node, a material without class extras, unreadable
/// accessors, an attribute shorter than POSITION), `terrain.topology` (faces or vertices added or
/// removed), and any strict rule of [`validate::validate`] the edited map
/// breaks (e.g. a vertex moved out of its cell: `terrain.cell_box` is a
/// warning, reported).
pub fn import_with_base(
    doc: &GltfFile,
    base: &Land,
) -> Result<(Land, TerrainImportReport), TerrainError> {
    let regenerate_order = check_base(base)?;
    let (ed, lods) = read_edits(doc, base)?;
    let skipped: BTreeSet<usize> = doc.json["scenes"][0]["extras"]["parkan_terrain"]
        ["skipped_faces"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|x| x as usize)
                .collect()
        })
        .unwrap_or_default();
    let mut land = base.clone();
    let mut rep = TerrainImportReport::default();
    let repainted = apply_faces(&mut land, &ed, &lods, &skipped, &mut rep)?;
    let moved_faces = apply_vertices(&mut land, &ed, &mut rep);
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
    let f = validate::validate(&land, Mode::Strict)?;
    rep.warnings
        .extend(f.warnings.iter().map(ToString::to_string));
    rep.notes = f.notes.iter().map(ToString::to_string).collect();
    rep.unchanged = land == *base && rep.material_edits_dropped == 0;
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
            .any(|&v| land.positions[usize::from(v)] != base.positions[usize::from(v)])
    });
    let water_class = water_faces(land) != water_faces(base)
        || repainted
            .iter()
            .any(|&i| land.faces[i].is_water() != base.faces[i].is_water());
    if extent || water_moved || water_class {
        rep.warnings.push("the map's XY extent or its water changed: Land.map (navigation areals) may be stale; it is kept as is".into());
    }
}
