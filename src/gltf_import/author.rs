//! Authoring a new model from any glTF 2.0 scene (no base model):
//! `gltf2msh scene.glb -o NEW.msh` (gltf-mapping.md, "Reverse rules",
//! last point; msh-core §5, §8; msh-animation §5, §8).
//!
//! [`author`] turns the default scene into a [`Model`] and its WEAR table:
//!
//! 1. **Nodes.** The default scene's node tree (`scene`, else scene 0;
//!    without scenes, every parentless node, with a warning), depth-first,
//!    parents before children (msh2gltf's `{"msh": {"node": i}}` extras
//!    order the nodes when every node has a distinct one that keeps parents
//!    first). Every tree node becomes a Res1 node (at most 65535: `hdr1` is
//!    a u16 with 0xFFFF = none), except cell carriers, whose mesh goes into
//!    their parent's cell `c` (`5 * state + lod`, format-notes §6 R7): mesh
//!    leaves with an identity transform marked by msh2gltf's
//!    `{"msh": {"cell": c}}` extra, else named `<parent>.S<s>L<l>` or
//!    `<parent>.L<l>G<g>` ([`cell_from_name`]); and the levels of an
//!    `MSFT_lod` extension (`ids[i]` → cell `i + 1`, in or outside the
//!    scene; their own transform is ignored with a warning). `hdr0` is the node's
//!    `{"msh": {"flags"}}` extra, else 0. Names: Res10 in Windows-1251,
//!    characters it cannot encode become `_` (reported). A cycle or a node
//!    with two parents is `gltf.hierarchy`.
//! 2. **Rigid baking.** MSH nodes have no scale (format-notes §3). Per
//!    node and integer frame (every frame up to the last key of the node or
//!    of an ancestor) the glTF world matrix `W = [A | t]` is evaluated in
//!    f64; its rotation is the polar factor `U` of `A` ([`polar`]: `A = U·P`,
//!    `det U = +1`) and its translation `t` is taken exactly. The key is
//!    `(U_pᵀ (t - t_p), U_pᵀ U)`, i.e. both expressed in the parent's rigid
//!    frame `(U_p, t_p)`, so node origins match the glTF at every frame. The
//!    residual `M = Uᵀ A` at frame 0 (scale, mirror, and the shear of a
//!    rotated child under a non-uniform scale) is baked into the node's
//!    geometry (positions `M p`, normals by the cofactor of `M`, winding
//!    reversed when `det M < 0`). When `M` changes over the frames (a
//!    rotation animated under a non-uniform ancestor scale shears the
//!    source), the node is reported in [`AuthorReport::sheared_nodes`] with
//!    the largest vertex error `|(M(f) - M(0)) v|` (above [`SHEAR_TOL`]).
//!    A scale channel whose values are all equal (within [`SCALE_TOL`]) is
//!    baked like a static scale; any other is `gltf.scale`. Keys of a node
//!    that only moves with its ancestors collapse to one static key.
//! 3. **Geometry.** One Res2 slot per (glTF mesh, baked residual), in cell
//!    `(state 0, lod 0)` of the node (carriers: their cell), shared by
//!    nodes with the same mesh and scale. One or more batches per primitive:
//!    [`split_part`] keeps each batch within 65536 vertices and 65535
//!    indices (`base_vertex`). `TRIANGLES`, `TRIANGLE_STRIP` and
//!    `TRIANGLE_FAN` are accepted (strips and fans converted), any index
//!    type; points and lines are `gltf.mode`. Missing normals are generated
//!    flat (glTF 2.0 §3.7.2.1: each triangle gets its own corners with the
//!    face normal); zero normals get the area-weighted normal of their
//!    triangles. Missing UVs are 0. Positions must be finite (`gltf.accessor`).
//! 4. **Materials.** One WEAR row per glTF material, in order (row `i` =
//!    material `i`), then a `DEFAULT.0` row when a primitive has no
//!    material. Names come from the material's `{"msh": {"name"}}` extra,
//!    else its `name`, else `MATERIAL<i>`, and are made valid by
//!    [`wear_name`] (renames reported).
//! 5. **Animation.** Translation and rotation channels of every glTF
//!    animation (merged onto one timeline; STEP, LINEAR, CUBICSPLINE, any
//!    times) are sampled at every integer frame `0..=ceil(last * fps)` of the
//!    node, glTF semantics (values held before the first and after the last
//!    key). With [`AuthorOptions::reduce_keys`] the keys are reduced like the
//!    `--base` path: a key is dropped when the engine's interpolation of its
//!    kept neighbours reproduces every dropped frame within
//!    [`super::animation::REDUCE_POS_TOL`] (game units) and
//!    [`super::animation::REDUCE_ROT_TOL`] (runtime quaternion component).
//!    A track whose keys are all equal becomes a static key. Res8/Res19 are
//!    canonical (msh-animation §5.4, §8), quaternions in the retail `wxyz`
//!    layout.
//! 6. **Refused:** skins (`gltf.skin`, unless [`AuthorOptions::ignore_skins`]:
//!    the mesh is then placed as stored, in its bind pose, by its node's
//!    transform; joints and weights are ignored), morph targets
//!    (`gltf.morph`, same option: the base shape), an animation whose only
//!    channels are morph weights (`gltf.morph`), a scene without triangles
//!    (`gltf.empty`), more than [`MAX_TRIANGLES`] triangles (`gltf.limits`)
//!    unless [`AuthorOptions::simplify`]: then every primitive is reduced
//!    by meshoptimizer ([`simplify::fit`]) and the error is reported in
//!    [`AuthorReport::simplified`].
//! 7. **Derived and unknown fields** are the [`ModelBuilder`] defaults (its
//!    module docs list them); the model passes [`crate::msh::validate()`]
//!    before it is returned.
//! 8. **Lightmaps and Res15.** A primitive whose material has an
//!    `occlusionTexture` reading `TEXCOORD_1` is lit: its TEXCOORD_1 becomes
//!    the Res18 lightmap UV (u16 `round(uv * 1024)`, clamped to 0..65535,
//!    format-notes §6 R5; 0 for unlit vertices), its batches are marked
//!    [`crate::msh::build::Part::lit`], and the WEAR gets one LIGHTMAPS row
//!    named after that occlusion image (the first such material's; others
//!    are reported). A `_RES15` attribute (8 bytes per vertex, as msh2gltf
//!    exports it) is written back to Res15.

use std::collections::{HashMap, HashSet};

use glam::{DMat3, DMat4, DQuat, DVec3};
use serde_json::Value;

use super::animation::{self, collect_channels, node_trs_full, quantize_gltf_rotation, Channel};
use super::geometry::{read_primitive, PrimRules};
use super::read::{arr, floats, idx, msh_extras, GltfFile};
use super::simplify::{self, RawPrim, Simplified, MAX_TRIANGLES};
use super::{context, ImportError, ImportOptions};
use crate::anim;
use crate::gltf_export::{axes, Up};
use crate::material::wear::{Wear, WearRow};
use crate::msh::build::{split_part, ModelBuilder, NodeSpec, Vertex};
use crate::msh::{self, AnimKey24, Model, CELLS, NONE16};

/// Relative tolerance under which a scale channel counts as constant.
pub const SCALE_TOL: f32 = 1e-6;
/// Most characters of a WEAR material name before its `.N` suffix.
pub const MAX_MATERIAL_STEM: usize = 15;
/// Most Res1 nodes a model can hold (`hdr1` is a u16, 0xFFFF = none).
pub const MAX_NODES: usize = NONE16 as usize;

fn err(rule: &'static str, detail: impl Into<String>) -> ImportError {
    ImportError::new(rule, detail)
}

/// Options of [`author`].
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorOptions {
    /// Frames per second of the glTF timeline; `None`: the scene extras'
    /// `fps`, else 24.
    pub fps: Option<f32>,
    /// Reduce the per-frame keys (see the module docs); `false` keeps a key
    /// at every frame of an animated node.
    pub reduce_keys: bool,
    /// Convert skinned meshes in their bind pose and morphed meshes with
    /// their base shape instead of refusing them.
    pub ignore_skins: bool,
    /// Over [`MAX_TRIANGLES`] triangles: simplify with meshoptimizer
    /// ([`simplify::fit`]) instead of refusing.
    pub simplify: bool,
    /// Work budget (units, [`crate::limits`]; `--max-work`): the baking
    /// pass (nodes x frames, [`crate::limits::UNITS_PER_BAKED_SAMPLE`]) is
    /// spent before it runs.
    pub max_work: u64,
}

impl Default for AuthorOptions {
    fn default() -> Self {
        AuthorOptions {
            fps: None,
            reduce_keys: true,
            ignore_skins: false,
            simplify: false,
            max_work: crate::limits::DEFAULT_MAX_WORK,
        }
    }
}

/// A WEAR name that had to change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rename {
    /// WEAR row (glTF material index; the last row for `DEFAULT`).
    pub row: usize,
    /// The glTF name.
    pub from: String,
    /// The WEAR name.
    pub to: String,
}

/// A node whose glTF shape changes under its animation (a rotation under a
/// non-uniform ancestor scale), which a rigid MSH node cannot follow.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Shear {
    /// Res1 node.
    pub node: usize,
    /// The glTF node it was authored from.
    pub gltf_node: usize,
    /// Its name (the glTF node name, as written to Res9).
    pub name: String,
    /// Largest distance (glTF units, world) between a source vertex and the
    /// authored one over all frames.
    pub max_vertex_error: f64,
    /// The frame of that error.
    pub frame: u32,
}

/// What [`author`] made.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AuthorReport {
    /// Frames per second used.
    pub fps: f32,
    /// `"y"` or `"z"`.
    pub up: String,
    /// Res1 node count.
    pub nodes: usize,
    /// Res2 slot count.
    pub slots: usize,
    /// Res13 batch count.
    pub batches: usize,
    /// Res3 vertex count.
    pub vertices: usize,
    /// Res7 triangle count.
    pub triangles: usize,
    /// Res8 key count.
    pub keys: usize,
    /// Res19 frame count.
    pub frame_count: u32,
    /// Names of the animated Res1 nodes.
    pub animated_nodes: Vec<String>,
    /// WEAR material names, by row.
    pub materials: Vec<String>,
    /// Material names that were changed to fit WEAR rules.
    pub renamed_materials: Vec<Rename>,
    /// Res1 nodes whose name had characters Windows-1251 cannot encode.
    pub renamed_nodes: Vec<usize>,
    /// Res1 nodes whose accumulated scale was baked into geometry (not 1).
    pub scaled_nodes: Vec<usize>,
    /// The LIGHTMAPS row 0 name, when batches are lit (module docs, point 8).
    pub lightmap: Option<String>,
    /// Set when `--simplify` reduced the triangles (module docs, point 3).
    pub simplified: Option<Simplified>,
    /// Nodes whose source shape shears over time (module docs, point 2).
    pub sheared_nodes: Vec<Shear>,
    /// Primitives whose normals were generated.
    pub generated_normals: usize,
    /// Everything approximated or ignored.
    pub warnings: Vec<String>,
}

/// An authored model, its WEAR table and the report.
#[derive(Debug, Clone)]
pub struct Authored {
    /// The new model (validated).
    pub model: Model,
    /// Its material table (row `i` = `Batch20.material_index` `i`).
    pub wear: Wear,
    /// What was done.
    pub report: AuthorReport,
}

/// Makes a WEAR material name (`NAME.N`, format-notes §4): characters other
/// than ASCII letters, digits, `_` and `-` and the letters Windows-1251
/// encodes become `_`, letters are upper-cased, the stem is cut to
/// [`MAX_MATERIAL_STEM`] characters, a trailing `.digits` of the input is
/// kept as the suffix (else `.0`), and the result is made unique
/// (case-insensitively) among `used` by replacing the stem's end with `_2`,
/// `_3`, ... The name is added to `used`.
pub fn wear_name(name: &str, used: &mut HashSet<String>) -> String {
    let (stem, suffix) = match name.rsplit_once('.') {
        Some((s, d))
            if !s.is_empty()
                && !d.is_empty()
                && d.len() <= 3
                && d.bytes().all(|c| c.is_ascii_digit()) =>
        {
            (s, d.to_string())
        }
        _ => (name, "0".to_string()),
    };
    let clean: Vec<char> = stem
        .chars()
        .map(|c| {
            let ok = c.is_ascii_alphanumeric()
                || c == '_'
                || c == '-'
                || (!c.is_ascii() && c.is_alphabetic() && cp1251_encodable(c));
            if ok {
                c.to_uppercase()
                    .next()
                    .filter(|u| cp1251_encodable(*u))
                    .unwrap_or(c)
            } else {
                '_'
            }
        })
        .collect();
    let mut clean: Vec<char> = clean.into_iter().take(MAX_MATERIAL_STEM).collect();
    if clean.is_empty() {
        clean = "MATERIAL".chars().collect();
    }
    let make = |stem: &[char]| format!("{}.{suffix}", stem.iter().collect::<String>());
    let mut out = make(&clean);
    let mut k = 2usize;
    while used.contains(&out.to_uppercase()) {
        let tag: Vec<char> = format!("_{k}").chars().collect();
        let keep = clean.len().min(MAX_MATERIAL_STEM - tag.len());
        let mut s = clean[..keep].to_vec();
        s.extend(tag);
        out = make(&s);
        k += 1;
    }
    used.insert(out.to_uppercase());
    out
}

fn cp1251_encodable(c: char) -> bool {
    let mut buf = [0u8; 4];
    let (_, _, bad) = encoding_rs::WINDOWS_1251.encode(c.encode_utf8(&mut buf));
    !bad
}

/// Windows-1251 bytes of a node name; unencodable characters become `_`.
/// Returns the bytes and whether anything was replaced.
fn cp1251_name(name: &str) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(name.len());
    let mut replaced = false;
    for c in name.chars() {
        let mut buf = [0u8; 4];
        let (b, _, bad) = encoding_rs::WINDOWS_1251.encode(c.encode_utf8(&mut buf));
        if bad || c == '\0' {
            out.push(b'_');
            replaced = true;
        } else {
            out.extend_from_slice(&b);
        }
    }
    (out, replaced)
}

/// The tree of the default scene.
struct Tree {
    /// Res1 order: glTF node indices.
    order: Vec<usize>,
    /// glTF node → Res1 index.
    res1_of: Vec<Option<usize>>,
    /// glTF node → parent glTF node.
    parent: Vec<Option<usize>>,
    /// Cell carriers: (glTF node, Res1 parent, cell).
    carriers: Vec<(usize, usize, usize)>,
}

/// Cells per state (format-notes §6 R7: `cell = 5 * state + lod`).
const CELLS_PER_STATE: usize = 5;

/// The cell a carrier's name gives under a parent named `parent`:
/// `<parent>.S<s>L<l>` (cell `5 s + l`, s < 3, l < 5; what msh2gltf
/// `--all-cells` writes after the retail renaming) or `<parent>.L<l>G<g>`
/// (the earlier naming, cell `5 l + g`, l < 3, g < 5). A Blender duplicate
/// suffix `.001` is allowed after it.
pub fn cell_from_name(name: &str, parent: &str) -> Option<usize> {
    let rest = name.strip_prefix(parent)?.strip_prefix('.')?;
    let rest = match rest.rsplit_once('.') {
        Some((r, d)) if d.len() == 3 && d.bytes().all(|c| c.is_ascii_digit()) => r,
        _ => rest,
    };
    let b = rest.as_bytes();
    if b.len() != 4 || !b[1].is_ascii_digit() || !b[3].is_ascii_digit() {
        return None;
    }
    let (x, y) = (usize::from(b[1] - b'0'), usize::from(b[3] - b'0'));
    match (b[0], b[2]) {
        (b'S', b'L') | (b'L', b'G') if x < CELLS / CELLS_PER_STATE && y < CELLS_PER_STATE => {
            Some(CELLS_PER_STATE * x + y)
        }
        _ => None,
    }
}

fn is_identity(node: &Value) -> bool {
    let (trs, _) = node_trs_full(node);
    trs.t.iter().all(|x| x.abs() < 1e-6)
        && trs.s.iter().all(|x| (x - 1.0).abs() < 1e-6)
        && (trs.r[3].abs() - 1.0).abs() < 1e-6
}

fn scene_tree(doc: &GltfFile, warnings: &mut Vec<String>) -> Result<Tree, ImportError> {
    let nodes = arr(&doc.json, "nodes");
    let n = nodes.len();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (i, nd) in nodes.iter().enumerate() {
        for c in arr(nd, "children") {
            let c = c
                .as_u64()
                .map(|c| c as usize)
                .filter(|&c| c < n)
                .ok_or_else(|| {
                    err(
                        "gltf.index",
                        format!("node {i}: child {c} is not a node index (< {n})"),
                    )
                })?;
            if let Some(p) = parent[c] {
                return Err(err(
                    "gltf.hierarchy",
                    format!("node {c} is a child of nodes {p} and {i} (a node has one parent)"),
                ));
            }
            parent[c] = Some(i);
        }
    }
    let scenes = arr(&doc.json, "scenes");
    let roots: Vec<usize> = if scenes.is_empty() {
        if n > 0 {
            warnings.push("the document has no scene: every parentless node is used".into());
        }
        (0..n).filter(|&i| parent[i].is_none()).collect()
    } else {
        let si = idx(&doc.json, "scene").unwrap_or(0);
        let sc = doc.get("scenes", si)?;
        let mut r = Vec::new();
        for v in arr(sc, "nodes") {
            let g = v
                .as_u64()
                .map(|g| g as usize)
                .filter(|&g| g < n)
                .ok_or_else(|| {
                    err(
                        "gltf.index",
                        format!("scene {si}: root {v} is not a node index (< {n})"),
                    )
                })?;
            r.push(g);
        }
        r
    };
    // Depth-first preorder with cycle detection.
    let mut seen = vec![false; n];
    let mut order = Vec::new();
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(g) = stack.pop() {
        if seen[g] {
            return Err(err(
                "gltf.hierarchy",
                format!("node {g} is reached twice from the scene (a cycle, or a root that is also a child)"),
            ));
        }
        seen[g] = true;
        order.push(g);
        for c in arr(&nodes[g], "children").iter().rev() {
            if let Some(c) = c.as_u64() {
                stack.push(c as usize);
            }
        }
    }
    // Cell carriers: msh2gltf --all-cells children (`{"msh": {"cell"}}`
    // extras, else the names `<node>.S<s>L<l>` / `<node>.L<l>G<g>`), and
    // MSFT_lod levels. carrier[g] = (glTF parent, cell).
    let mut carrier: Vec<Option<(usize, usize)>> = vec![None; n];
    let name_of = |g: usize| nodes[g].get("name").and_then(Value::as_str).unwrap_or("");
    for &g in &order {
        let nd = &nodes[g];
        let Some(p) = parent[g] else { continue };
        let extra = super::read::msh_u64(nd, "cell").map(|c| c as usize);
        let (cell, how) = match extra {
            Some(c) => (Some(c), "cell extra"),
            None => (cell_from_name(name_of(g), name_of(p)), "cell name"),
        };
        let Some(c) = cell else { continue };
        if c < CELLS
            && arr(nd, "children").is_empty()
            && is_identity(nd)
            && nd.get("mesh").is_some()
        {
            carrier[g] = Some((p, c));
        } else {
            warnings.push(format!(
                "node {g}: {how} {c} ignored (a carrier is a mesh leaf with an identity transform under node {p}, cell < {CELLS}); kept as a node"
            ));
        }
    }
    for &g in &order {
        let Some(ids) = nodes[g]
            .get("extensions")
            .and_then(|e| e.get("MSFT_lod"))
            .and_then(|e| e.get("ids"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (i, id) in ids.iter().enumerate() {
            let lod = i + 1;
            let Some(id) = id.as_u64().map(|x| x as usize).filter(|&x| x < n) else {
                warnings.push(format!("node {g}: MSFT_lod id {id} is not a node; ignored"));
                continue;
            };
            if lod >= CELLS_PER_STATE || nodes[id].get("mesh").is_none() || carrier[id].is_some() {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}) ignored (levels 1..{} with a mesh)",
                    CELLS_PER_STATE - 1
                ));
                continue;
            }
            if seen[id] && !arr(&nodes[id], "children").is_empty() {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}) has children; kept as a node"
                ));
                continue;
            }
            if !is_identity(&nodes[id]) {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}): its own transform is ignored (the level is drawn in node {g}'s frame)"
                ));
            }
            carrier[id] = Some((g, lod));
        }
    }
    let left_out = (0..n).filter(|&g| !seen[g] && carrier[g].is_none()).count();
    if left_out > 0 {
        warnings.push(format!(
            "{left_out} node(s) outside the default scene ignored"
        ));
    }
    let mut order: Vec<usize> = order
        .into_iter()
        .filter(|&g| carrier[g].is_none())
        .collect();
    // msh2gltf's node order, when complete and consistent.
    let hint: Vec<Option<u64>> = order
        .iter()
        .map(|&g| super::read::msh_u64(&nodes[g], "node"))
        .collect();
    if hint.iter().all(Option::is_some) {
        let mut by: Vec<(u64, usize)> = hint
            .iter()
            .zip(&order)
            .map(|(h, &g)| (h.unwrap_or(0), g))
            .collect();
        by.sort_unstable();
        let distinct = by.windows(2).all(|w| w[0].0 != w[1].0);
        let sorted: Vec<usize> = by.iter().map(|&(_, g)| g).collect();
        let mut pos = vec![usize::MAX; n];
        for (i, &g) in sorted.iter().enumerate() {
            pos[g] = i;
        }
        let parents_first = sorted.iter().enumerate().all(|(i, &g)| match parent[g] {
            None => true,
            Some(p) => pos[p] < i,
        });
        if distinct && parents_first {
            order = sorted;
        }
    }
    if order.len() > MAX_NODES {
        return Err(err(
            "gltf.limits",
            format!(
                "the scene has {} nodes; Res1 can address at most {MAX_NODES}",
                order.len()
            ),
        ));
    }
    let mut res1_of = vec![None; n];
    for (i, &g) in order.iter().enumerate() {
        res1_of[g] = Some(i);
    }
    let carriers = (0..n)
        .filter_map(|g| {
            let (p, c) = carrier[g]?;
            Some((g, res1_of[p]?, c))
        })
        .collect();
    Ok(Tree {
        order,
        res1_of,
        parent,
        carriers,
    })
}

fn constant_value(c: &Channel) -> Option<[f32; 3]> {
    let v0 = c.value(0);
    let first = [v0[0], v0[1], v0[2]];
    (0..c.len())
        .all(|k| {
            let v = c.value(k);
            (0..3).all(|i| (v[i] - first[i]).abs() <= SCALE_TOL * first[i].abs().max(1.0))
        })
        .then_some(first)
}

/// Relative size (of the node's largest vertex coordinate, at least 1) above
/// which a residual that changes over time (shear) is reported.
pub const SHEAR_TOL: f64 = 1e-4;

/// Per-node data for the geometry and key passes (glTF axes).
struct NodeInfo {
    /// Linear map baked into the node's geometry: the residual
    /// `U(0)ᵀ · A(0)` of its frame-0 world matrix `A` after the polar
    /// rotation `U` (scale, and shear under a rotated non-uniform scale).
    bake: DMat3,
    /// Local rigid keys at frames `0..=last` (one for a static node):
    /// translation and rotation `(x, y, z, w)` in the parent's rigid frame.
    keys: Vec<([f32; 3], [f32; 4])>,
    /// Frames whose residual differs from `bake`: `(frame, M(f) - bake)`.
    drift: Vec<(u32, DMat3)>,
}

fn frobenius(m: &DMat3) -> f64 {
    m.to_cols_array().iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Polar decomposition `A = U · P` (Higham's scaled Newton iteration, f64):
/// `U` a proper rotation (`det = +1`; for a mirroring `A`, `-U` and `-P`),
/// `P = Uᵀ A`. A (near-)singular `A` takes `fallback` as `U`.
pub fn polar(a: DMat3, fallback: DMat3) -> (DMat3, DMat3) {
    let norm = frobenius(&a);
    let det = a.determinant();
    if !det.is_finite() || det.abs() <= 1e-12 * norm * norm * norm {
        return (fallback, fallback.transpose() * a);
    }
    let mut u = a;
    for _ in 0..60 {
        let inv_t = u.inverse().transpose();
        let g = (frobenius(&inv_t) / frobenius(&u)).sqrt();
        let next = (u * g + inv_t * (1.0 / g)) * 0.5;
        let step = frobenius(&(next - u));
        u = next;
        if step <= 1e-15 * 3.0 {
            break;
        }
    }
    if u.determinant() < 0.0 {
        u = -u;
    }
    (u, u.transpose() * a)
}

/// Checks the baking pass before it runs: `sum(last[r] + 1)` samples (node
/// `r` is baked at every frame up to `last[r]`) are spent from `max_work`
/// ([`crate::limits::UNITS_PER_BAKED_SAMPLE`]), and the Res19 frame map the
/// result needs at least — one block of `max(last) + 1` words for every
/// node whose own translation or rotation channel changes — must start
/// every block below 0xFFFF (msh-animation §8, `msh.anim.map_range`).
///
/// # Errors
/// `limits.work`; `gltf.limits` for a frame map that cannot be addressed.
fn check_bake(
    chans: &[[Option<Channel>; 3]],
    last: &[u32],
    max_work: u64,
) -> Result<(), ImportError> {
    let samples: u64 = last.iter().map(|&l| u64::from(l) + 1).sum();
    let mut b = crate::limits::Budget::new(max_work);
    b.spend(
        samples.saturating_mul(crate::limits::UNITS_PER_BAKED_SAMPLE),
        &format!(
            "baking the animation ({} nodes, {samples} node-frames)",
            last.len()
        ),
    )
    .map_err(|d| err("limits.work", d))?;
    let varies = |c: &Channel| {
        let v0 = c.value(0).to_vec();
        (1..c.len()).any(|k| {
            c.value(k)
                .iter()
                .zip(&v0)
                .any(|(a, b)| (a - b).abs() > 1e-6)
        })
    };
    let animated = chans
        .iter()
        .filter(|[t, r, _]| t.as_ref().is_some_and(varies) || r.as_ref().is_some_and(varies))
        .count() as u64;
    let frames = u64::from(last.iter().copied().max().unwrap_or(0)) + 1;
    if animated > 1 && (animated - 1) * frames >= u64::from(crate::msh::NONE16) {
        return Err(err(
            "gltf.limits",
            format!(
                "{animated} animated nodes x {frames} frames: the Res19 frame map (one block of {frames} words per animated node) cannot be addressed by hdr2 (< 0xFFFF words); shorten the animation or animate fewer nodes"
            ),
        ));
    }
    Ok(())
}

/// The rigid baking pass (module docs, point 2): per node and frame, the
/// glTF world matrix `W = [A | t]`, its polar rotation `U`, the local key
/// `(U_pᵀ (t - t_p), U_pᵀ U)` in the parent's rigid frame, and the residual
/// `Uᵀ A` (baked at frame 0, its later changes recorded as drift).
fn rigid_bake(
    doc: &GltfFile,
    tree: &Tree,
    chans: &[[Option<Channel>; 3]],
    fps: f32,
    max_work: u64,
    report: &mut AuthorReport,
) -> Result<Vec<NodeInfo>, ImportError> {
    let nodes = arr(&doc.json, "nodes");
    let n = tree.order.len();
    let mut statics: Vec<(animation::Trs, Option<DMat4>)> = Vec::with_capacity(n);
    let mut last = vec![0u32; n];
    let mut own_last = vec![0u32; n];
    let mut parent_of = vec![None; n];
    for (r, &g) in tree.order.iter().enumerate() {
        let nd = &nodes[g];
        let (mut trs, note) = node_trs_full(nd);
        if let Some(note) = note {
            report.warnings.push(format!("node {g}: {note}"));
        }
        let [tc, rc, sc] = &chans[r];
        if let Some(sc) = sc {
            match constant_value(sc) {
                Some(s) => trs.s = s,
                None => {
                    return Err(err(
                        "gltf.scale",
                        format!(
                            "node {g} ({:?}): animated scale cannot be stored in MSH (keys hold translation and rotation); apply the scale",
                            nd.get("name").and_then(Value::as_str).unwrap_or("")
                        ),
                    ))
                }
            }
        }
        let matrix = floats(nd, "matrix")
            .filter(|m| m.len() == 16 && tc.is_none() && rc.is_none() && sc.is_none())
            .map(|m| DMat4::from_cols_array(&std::array::from_fn(|i| f64::from(m[i]))));
        let p = tree.parent[g].and_then(|p| tree.res1_of[p]);
        parent_of[r] = p;
        let own = [tc.as_ref(), rc.as_ref()]
            .into_iter()
            .flatten()
            .map(Channel::last_frame)
            .fold(0.0f32, f32::max)
            .ceil();
        if own > anim::MAX_KEY_TIME {
            return Err(err(
                "gltf.limits",
                format!(
                    "node {g}: animation ends at frame {own} (> {}) at {fps} fps",
                    anim::MAX_KEY_TIME
                ),
            ));
        }
        own_last[r] = own as u32;
        last[r] = (own as u32).max(p.map_or(0, |p| last[p]));
        statics.push((trs, matrix));
    }
    check_bake(chans, &last, max_work)?;
    let dq = |q: [f32; 4]| {
        DQuat::from_xyzw(
            f64::from(q[0]),
            f64::from(q[1]),
            f64::from(q[2]),
            f64::from(q[3]),
        )
        .normalize()
    };
    let dv = |v: [f32; 3]| DVec3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2]));
    let mut info: Vec<NodeInfo> = (0..n)
        .map(|_| NodeInfo {
            bake: DMat3::IDENTITY,
            keys: Vec::new(),
            drift: Vec::new(),
        })
        .collect();
    // Current frame's (world matrix, TRS rotation product, U, t) per node.
    let mut world: Vec<(DMat4, DQuat, DMat3, DVec3)> = vec![
        (
            DMat4::IDENTITY,
            DQuat::IDENTITY,
            DMat3::IDENTITY,
            DVec3::ZERO
        );
        n
    ];
    let global_last = last.iter().copied().max().unwrap_or(0);
    for f in 0..=global_last {
        let ff = f as f32;
        for r in 0..n {
            if last[r] < f {
                continue; // held: the node and its ancestors stopped moving
            }
            let (trs, matrix) = &statics[r];
            let [tc, rc, _] = &chans[r];
            let (local, q) = match matrix {
                Some(m) => (*m, dq(trs.r)),
                None => {
                    let t = tc.as_ref().map_or(trs.t, |c| {
                        let v = c.sample(ff, false);
                        [v[0], v[1], v[2]]
                    });
                    let q = dq(rc.as_ref().map_or(trs.r, |c| {
                        let v = c.sample(ff, true);
                        [v[0], v[1], v[2], v[3]]
                    }));
                    (
                        DMat4::from_scale_rotation_translation(dv(trs.s), q, dv(t)),
                        q,
                    )
                }
            };
            let (pw, pq, pu, pt) = match parent_of[r] {
                Some(p) => world[p],
                None => world_root(),
            };
            let w = pw * local;
            let rq = (pq * q).normalize();
            let (u, m) = polar(DMat3::from_mat4(w), DMat3::from_quat(rq));
            let t = w.w_axis.truncate();
            let lt = pu.transpose() * (t - pt);
            let mut lq = DQuat::from_mat3(&(pu.transpose() * u)).normalize();
            let ni = &mut info[r];
            if let Some(prev) = ni.keys.last() {
                let d = lq.x * f64::from(prev.1[0])
                    + lq.y * f64::from(prev.1[1])
                    + lq.z * f64::from(prev.1[2])
                    + lq.w * f64::from(prev.1[3]);
                if d < 0.0 {
                    lq = -lq;
                }
            }
            ni.keys.push((
                [lt.x as f32, lt.y as f32, lt.z as f32],
                [lq.x as f32, lq.y as f32, lq.z as f32, lq.w as f32],
            ));
            if f == 0 {
                ni.bake = m;
            } else {
                let d = m - ni.bake;
                if frobenius(&d) > 1e-9 * frobenius(&ni.bake).max(1.0) {
                    ni.drift.push((f, d));
                }
            }
            world[r] = (w, rq, u, t);
        }
    }
    // Frames past the node's own last key that only repeat it (its ancestors
    // move it rigidly) are dropped: the engine holds the last key.
    let close = |a: &([f32; 3], [f32; 4]), b: &([f32; 3], [f32; 4])| {
        (0..3).all(|k| (a.0[k] - b.0[k]).abs() <= 1e-6 * b.0[k].abs().max(1.0))
            && (0..4).all(|k| (a.1[k] - b.1[k]).abs() <= 1e-6)
    };
    for (r, ni) in info.iter_mut().enumerate() {
        while ni.keys.len() > own_last[r] as usize + 1
            && close(&ni.keys[ni.keys.len() - 1], &ni.keys[ni.keys.len() - 2])
        {
            ni.keys.pop();
        }
    }
    for (r, ni) in info.iter().enumerate() {
        if frobenius(&(ni.bake - DMat3::IDENTITY)) > 1e-6 {
            report.scaled_nodes.push(r);
        }
    }
    Ok(info)
}

/// Reports every node whose baked residual changes over time (a rotation
/// under a non-uniform ancestor scale shears the source): the largest
/// distance, over its frames and the vertices of its meshes, between the
/// glTF vertex and the rigidly moved baked one, `|(M(f) - M(0)) · v|`.
fn shear_warnings(
    doc: &GltfFile,
    tree: &Tree,
    info: &[NodeInfo],
    placements: &[(usize, usize, usize)],
    opts: &AuthorOptions,
    report: &mut AuthorReport,
) -> Result<(), ImportError> {
    let rules = PrimRules {
        triangulate: true,
        ignore_morph: opts.ignore_skins,
    };
    for (r, ni) in info.iter().enumerate() {
        if ni.drift.is_empty() {
            continue;
        }
        let mut pts: Vec<DVec3> = Vec::new();
        for &(_, _, mesh) in placements.iter().filter(|p| p.0 == r) {
            let mj = doc.get("meshes", mesh)?;
            for (pi, p) in arr(mj, "primitives").iter().enumerate() {
                let prim = read_primitive(doc, mesh, pi, p, rules)?;
                pts.extend(
                    prim.pos
                        .iter()
                        .map(|p| DVec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]))),
                );
            }
        }
        let size = pts.iter().fold(1.0f64, |m, p| m.max(p.abs().max_element()));
        let (mut worst, mut at) = (0.0f64, 0u32);
        for &(f, d) in &ni.drift {
            for p in &pts {
                let e = (d * *p).length();
                if e > worst {
                    (worst, at) = (e, f);
                }
            }
        }
        if worst > SHEAR_TOL * size {
            let g = tree.order[r];
            let name = arr(&doc.json, "nodes")[g]
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("");
            report.warnings.push(format!(
                "Res1 node {r} {name:?} (glTF node {g}): a rotation under a non-uniform ancestor scale shears the geometry over time; MSH nodes are rigid, so the shape is kept as at frame 0: largest vertex error {worst:.6} at frame {at}"
            ));
            report.sheared_nodes.push(Shear {
                node: r,
                gltf_node: g,
                name: name.to_string(),
                max_vertex_error: worst,
                frame: at,
            });
        }
    }
    Ok(())
}

fn world_root() -> (DMat4, DQuat, DMat3, DVec3) {
    (
        DMat4::IDENTITY,
        DQuat::IDENTITY,
        DMat3::IDENTITY,
        DVec3::ZERO,
    )
}

/// `m · p` in f64, rounded to f32.
fn apply3(m: &DMat3, p: [f32; 3]) -> [f32; 3] {
    let v = *m * DVec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
    [v.x as f32, v.y as f32, v.z as f32]
}

/// The normal map of a baked linear map: the cofactor matrix (`det · M⁻ᵀ`)
/// with the sign of `det`, well defined for singular maps too.
fn normal_map(m: &DMat3) -> DMat3 {
    let c = m.to_cols_array_2d();
    let cof = |i: usize, j: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        // element (row i, column j) of M is c[j][i]
        c[j1][i1] * c[j2][i2] - c[j2][i1] * c[j1][i2]
    };
    let s = if m.determinant() < 0.0 { -1.0 } else { 1.0 };
    // cofactor (row i, column j) at column-major position [j][i].
    DMat3::from_cols_array_2d(&std::array::from_fn(|j| {
        std::array::from_fn(|i| s * cof(i, j))
    }))
}

/// Authors a new model from `doc` (see the module docs).
///
/// # Errors
/// [`ImportError`]: `gltf.skin`, `gltf.morph`, `gltf.mode`, `gltf.scale`,
/// `gltf.hierarchy`, `gltf.empty`, `gltf.limits` (u16 ranges of Res1, Res2,
/// Res7, Res13, Res8/Res19), `gltf.accessor`, `gltf.anim`, `gltf.index`,
/// and the `msh.*` rule the result would break.
pub fn author(doc: &GltfFile, opts: &AuthorOptions) -> Result<Authored, ImportError> {
    crate::unit::back::refuse_assembled(doc)?;
    let conv = context(
        doc,
        &ImportOptions {
            fps: opts.fps,
            reduce_keys: opts.reduce_keys,
        },
        None,
    );
    let (up, fps) = (conv.up, conv.fps);
    // New models are written in the retail convention (gltf-mapping.md,
    // "Reverse rules"): w first.
    let layout = crate::convention::Conventions::RETAIL.quat;
    let mut report = AuthorReport {
        fps,
        up: match up {
            Up::Y => "y".into(),
            Up::Z => "z".into(),
        },
        ..Default::default()
    };
    let nodes = arr(&doc.json, "nodes");
    let tree = scene_tree(doc, &mut report.warnings)?;
    let in_tree = |g: usize| tree.res1_of[g].is_some() || tree.carriers.iter().any(|c| c.0 == g);

    // Skins.
    let skinned: Vec<usize> = (0..nodes.len())
        .filter(|&g| in_tree(g) && nodes[g].get("skin").is_some())
        .collect();
    if !skinned.is_empty() {
        if !opts.ignore_skins {
            return Err(err(
                "gltf.skin",
                format!(
                    "nodes {skinned:?} are skinned meshes; MSH has rigid nodes only (bake the armature, or --ignore-skins for the bind pose)"
                ),
            ));
        }
        report.warnings.push(format!(
            "skins of nodes {skinned:?} ignored: meshes placed in their bind pose by their node's transform"
        ));
    }

    // Channels.
    let n = tree.order.len();
    let col = collect_channels(doc, fps, |g| tree.res1_of.get(g).copied().flatten(), n)?;
    if col.weights > 0 && col.trs == 0 && !opts.ignore_skins {
        return Err(err(
            "gltf.morph",
            format!(
                "the animation holds only morph target weights ({} channels); MSH animates rigid nodes only (--ignore-skins keeps the base shape, unanimated)",
                col.weights
            ),
        ));
    }
    report.warnings.extend(col.warnings);
    let chans = col.channels;

    // Rigid baking.
    let info = rigid_bake(doc, &tree, &chans, fps, opts.max_work, &mut report)?;

    // Materials.
    let materials = arr(&doc.json, "materials");
    let mut used = HashSet::new();
    let mut rows: Vec<WearRow> = Vec::new();
    let mut add_row =
        |row: usize, src: String, rows: &mut Vec<WearRow>, report: &mut AuthorReport| {
            let name = wear_name(&src, &mut used);
            if name != src && row < materials.len() {
                report.renamed_materials.push(Rename {
                    row,
                    from: src,
                    to: name.clone(),
                });
            }
            rows.push(WearRow {
                legacy_id: row as i32,
                name,
            });
        };
    for (i, m) in materials.iter().enumerate() {
        let src = msh_extras(m)
            .and_then(|e| e.get("name"))
            .and_then(Value::as_str)
            .or_else(|| m.get("name").and_then(Value::as_str))
            .filter(|s| !s.trim().is_empty())
            .map_or_else(|| format!("MATERIAL{i}"), str::to_string);
        add_row(i, src, &mut rows, &mut report);
    }
    let mut default_row: Option<u16> = None;

    // Geometry: one slot per (mesh, baked scale).
    let mut b = ModelBuilder::new();
    let mut slot_of: HashMap<(usize, [i64; 9]), Option<u16>> = HashMap::new();
    let mut cells: Vec<Vec<(usize, u16)>> = vec![Vec::new(); n];
    let mut placements: Vec<(usize, usize, usize)> = Vec::new(); // (Res1, cell, mesh)
    for (r, &g) in tree.order.iter().enumerate() {
        if let Some(m) = idx(&nodes[g], "mesh") {
            placements.push((r, 0, m));
        }
    }
    for &(g, p, c) in &tree.carriers {
        if let Some(m) = idx(&nodes[g], "mesh") {
            if let Some(k) = placements
                .iter()
                .position(|&(r, cell, _)| r == p && cell == c)
            {
                report.warnings.push(format!(
                    "node {g}: cell {c} of Res1 node {p} also holds that node's own mesh; the carrier's mesh is used"
                ));
                placements.remove(k);
            }
            placements.push((p, c, m));
        }
    }
    let mut used_meshes = HashSet::new();
    // Pending slots: the primitives of each (mesh, residual), in slot order.
    let mut pending: Vec<Vec<RawPrim>> = Vec::new();
    for &(r, cell, mesh) in &placements {
        used_meshes.insert(mesh);
        let bake = info[r].bake;
        let key = (
            mesh,
            bake.to_cols_array()
                .map(|x| (x * 1e6).round().clamp(-9e18, 9e18) as i64),
        );
        let slot = match slot_of.get(&key) {
            Some(s) => *s,
            None => {
                let prims = mesh_parts(
                    doc,
                    mesh,
                    &bake,
                    up,
                    opts,
                    materials.len(),
                    &mut default_row,
                    &mut report,
                )?;
                let s = if prims.is_empty() {
                    report
                        .warnings
                        .push(format!("mesh {mesh}: no triangles; no slot"));
                    None
                } else {
                    pending.push(prims);
                    Some((pending.len() - 1) as u16)
                };
                slot_of.insert(key, s);
                s
            }
        };
        if let Some(s) = slot {
            cells[r].push((cell, s));
        }
    }
    let triangles: usize = pending.iter().flatten().map(|p| p.indices.len() / 3).sum();
    if triangles > MAX_TRIANGLES {
        if !opts.simplify {
            return Err(err(
                "gltf.limits",
                format!(
                    "the scene has {triangles} triangles; an MSH model holds at most {MAX_TRIANGLES} (Res7 links and Slot68 triangle ranges are u16): reduce it (Blender: Decimate modifier) or pass --simplify"
                ),
            ));
        }
        let s = simplify::fit(&mut pending, MAX_TRIANGLES)?;
        report.warnings.push(format!(
            "simplified from {} to {} triangles with meshoptimizer; largest geometric error {:.6} units{}",
            s.from,
            s.to,
            s.max_error,
            if s.sloppy > 0 {
                format!(" ({} primitives by the sloppy simplifier)", s.sloppy)
            } else {
                String::new()
            }
        ));
        report.simplified = Some(s);
    }
    // Lightmap: one LIGHTMAPS row (row 0, the one lit batches use).
    let mut lightmaps = Vec::new();
    if pending.iter().flatten().any(|p| p.lit) {
        let (first, others) = super::materials::lightmap_image(doc);
        if let Some((m, img)) = first {
            let stem = super::materials::image_stem(doc, img, "LIGHTMAP");
            let name = crate::material::write::texture_name(&stem, &mut HashSet::new());
            if !others.is_empty() {
                report.warnings.push(format!(
                    "occlusion images {others:?} besides image {img} (material {m}): a model has one lightmap (LIGHTMAPS row 0); image {img} is used for every lit batch"
                ));
            }
            report.lightmap = Some(name.clone());
            lightmaps.push(WearRow { legacy_id: 0, name });
        }
    }
    for prims in &pending {
        let mut parts = Vec::new();
        for p in prims {
            let mut split = split_part(p.material, &p.vertices, &p.indices)
                .map_err(|e| err("gltf.accessor", e.to_string()))?;
            for part in &mut split {
                part.lit = p.lit;
            }
            parts.extend(split);
        }
        b.add_slot(&parts)
            .map_err(|e| err("gltf.limits", e.to_string()))?;
    }
    shear_warnings(doc, &tree, &info, &placements, opts, &mut report)?;
    let meshes = arr(&doc.json, "meshes").len();
    let unused: Vec<usize> = (0..meshes).filter(|m| !used_meshes.contains(m)).collect();
    if !unused.is_empty() {
        report.warnings.push(format!(
            "meshes {unused:?} are used by no node of the scene; ignored"
        ));
    }
    if triangles == 0 {
        return Err(err(
            "gltf.empty",
            "the scene has no triangle geometry (no node with a mesh of triangles)",
        ));
    }
    if let Some(d) = default_row {
        // Synthesized row: its `.0` suffix is not a rename.
        add_row(d as usize, "DEFAULT".into(), &mut rows, &mut report);
    }

    // Nodes and keys.
    for (r, &g) in tree.order.iter().enumerate() {
        let nd = &nodes[g];
        let mut keys: Vec<AnimKey24> = info[r]
            .keys
            .iter()
            .enumerate()
            .map(|(f, &(t, q))| AnimKey24 {
                pos: axes::vec3_inv(up, t),
                time: f as f32,
                q: quantize_gltf_rotation(up, layout, q),
            })
            .collect();
        if opts.reduce_keys && keys.len() > 2 {
            let protect = vec![false; keys.len()];
            keys = animation::reduce(keys, &protect, layout);
        }
        if keys.iter().all(|k| same_key(k, &keys[0])) {
            keys.truncate(1);
        }
        let name = nd
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let name = name.map(|s| {
            let (bytes, replaced) = cp1251_name(s);
            if replaced {
                report.renamed_nodes.push(r);
            }
            bytes
        });
        if keys.len() > 1 {
            report.animated_nodes.push(
                nd.get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("node{r}"), str::to_string),
            );
        }
        let flags = super::read::msh_u64(nd, "flags")
            .filter(|&f| f <= u64::from(u16::MAX))
            .unwrap_or(0) as u16;
        b.add_node(NodeSpec {
            name,
            parent: tree.parent[g].and_then(|p| tree.res1_of[p]),
            flags,
            cells: std::mem::take(&mut cells[r]),
            animated: keys.len() > 1,
            keys,
        });
    }
    let model = b.finish().map_err(|e| {
        let rule = if e.rule.starts_with("msh.") {
            "gltf.limits"
        } else {
            e.rule
        };
        err(rule, format!("the new model does not fit MSH: {e}"))
    })?;
    msh::validate(&model)?;
    report.nodes = n;
    report.slots = model.slots.len();
    report.batches = model.batches.len();
    report.vertices = model.positions.len();
    report.triangles = model.tris.as_ref().map_or(0, Vec::len);
    report.keys = model.keys.as_ref().map_or(0, Vec::len);
    report.frame_count = model.frame_count;
    report.materials = rows.iter().map(|r| r.name.clone()).collect();
    Ok(Authored {
        model,
        wear: Wear {
            materials: rows,
            lightmaps,
            crlf: true,
        },
        report,
    })
}

/// Keys equal up to float noise: positions within
/// [`animation::KEY_POS_TOL`] (relative, at least 1 unit) and stored
/// quaternions within 1 (either sign).
fn same_key(a: &AnimKey24, b: &AnimKey24) -> bool {
    let pos = (0..3)
        .all(|k| (a.pos[k] - b.pos[k]).abs() <= animation::KEY_POS_TOL * b.pos[k].abs().max(1.0));
    let q = |s: i32| (0..4).all(|k| (i32::from(a.q[k]) - s * i32::from(b.q[k])).abs() <= 1);
    pos && (q(1) || q(-1))
}

fn normalize3(v: [f32; 3]) -> Option<[f32; 3]> {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (l > 1e-20 && l.is_finite()).then(|| v.map(|x| x / l))
}

fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The parts (batches) of glTF mesh `mesh` with the linear map `bake`
/// (glTF axes) applied, in game axes.
#[allow(clippy::too_many_arguments)]
fn mesh_parts(
    doc: &GltfFile,
    mesh: usize,
    bake: &DMat3,
    up: Up,
    opts: &AuthorOptions,
    material_count: usize,
    default_row: &mut Option<u16>,
    report: &mut AuthorReport,
) -> Result<Vec<RawPrim>, ImportError> {
    let mj = doc.get("meshes", mesh)?;
    let rules = PrimRules {
        triangulate: true,
        ignore_morph: opts.ignore_skins,
    };
    let mirror = bake.determinant() < 0.0;
    let nmap = normal_map(bake);
    let mut parts = Vec::new();
    for (pi, p) in arr(mj, "primitives").iter().enumerate() {
        let mut prim = read_primitive(doc, mesh, pi, p, rules)?;
        if !arr(p, "targets").is_empty() {
            report.warnings.push(format!(
                "mesh {mesh} primitive {pi}: morph targets ignored (base shape)"
            ));
        }
        if prim.indices.is_empty() {
            continue;
        }
        if let Some(i) = prim
            .pos
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(err(
                "gltf.accessor",
                format!(
                    "mesh {mesh} primitive {pi}: POSITION {i} is not finite ({:?})",
                    prim.pos[i]
                ),
            ));
        }
        let material = match prim.gltf_material.filter(|&m| m < material_count) {
            Some(m) => m,
            None => {
                if let Some(m) = prim.gltf_material {
                    report.warnings.push(format!(
                        "mesh {mesh} primitive {pi}: material {m} does not exist; DEFAULT used"
                    ));
                }
                usize::from(*default_row.get_or_insert(material_count as u16))
            }
        };
        if material > u16::MAX as usize {
            return Err(err(
                "gltf.limits",
                format!("material {material} > 65535 (Batch20.material_index is a u16)"),
            ));
        }
        let pos: Vec<[f32; 3]> = prim.pos.iter().map(|&p| apply3(bake, p)).collect();
        let mut indices = std::mem::take(&mut prim.indices);
        if mirror {
            for t in indices.chunks_exact_mut(3) {
                t.swap(1, 2);
            }
        }
        let uv = |i: usize| prim.uv.as_ref().map_or([0.0; 2], |u| u[i]);
        // Lit: the material's occlusion texture reads TEXCOORD_1 (module docs, point 8).
        let lit = prim.uv1.is_some()
            && prim
                .gltf_material
                .and_then(|m| doc.get("materials", m).ok())
                .and_then(|m| m.get("occlusionTexture"))
                .is_some_and(|o| idx(o, "texCoord") == Some(1));
        let lm = |i: usize| lit.then(|| prim.uv1.as_ref().map_or([0.0; 2], |u| u[i]));
        let face = |t: &[u32]| {
            let (a, b2, c) = (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
            cross3(sub3(b2, a), sub3(c, a))
        };
        let (verts, idx): (Vec<Vertex>, Vec<u32>) = match &prim.nrm {
            None => {
                report.generated_normals += 1;
                let mut verts = Vec::with_capacity(indices.len());
                for t in indices.chunks_exact(3) {
                    let nrm = normalize3(face(t)).unwrap_or([0.0, 1.0, 0.0]);
                    for &v in t {
                        verts.push(Vertex {
                            pos: axes::vec3_inv(up, pos[v as usize]),
                            normal: axes::vec3_inv(up, nrm),
                            uv: uv(v as usize),
                            res15: prim.res15(v as usize).unwrap_or_default(),
                            lightmap_uv: lm(v as usize),
                        });
                    }
                }
                let idx = (0..verts.len() as u32).collect();
                (verts, idx)
            }
            Some(nrm) => {
                let mut normals: Vec<Option<[f32; 3]>> =
                    nrm.iter().map(|&n| normalize3(apply3(&nmap, n))).collect();
                if normals.iter().any(Option::is_none) {
                    let mut acc = vec![[0.0f32; 3]; pos.len()];
                    for t in indices.chunks_exact(3) {
                        let f = face(t);
                        for &v in t {
                            let a = &mut acc[v as usize];
                            *a = [a[0] + f[0], a[1] + f[1], a[2] + f[2]];
                        }
                    }
                    for (i, n) in normals.iter_mut().enumerate() {
                        if n.is_none() {
                            *n = normalize3(acc[i]);
                        }
                    }
                    report.warnings.push(format!(
                        "mesh {mesh} primitive {pi}: zero normals replaced by face normals"
                    ));
                }
                let verts = (0..pos.len())
                    .map(|i| Vertex {
                        pos: axes::vec3_inv(up, pos[i]),
                        normal: axes::vec3_inv(up, normals[i].unwrap_or([0.0; 3])),
                        uv: uv(i),
                        res15: prim.res15(i).unwrap_or_default(),
                        lightmap_uv: lm(i),
                    })
                    .collect();
                (verts, indices)
            }
        };
        parts.push(RawPrim {
            material: material as u16,
            vertices: verts,
            indices: idx,
            lit,
        });
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wear_names() {
        let mut used = HashSet::new();
        assert_eq!(wear_name("HULL_1.2", &mut used), "HULL_1.2");
        assert_eq!(wear_name("hull_1.2", &mut used), "HULL_1_2.2");
        assert_eq!(wear_name("Material #5", &mut used), "MATERIAL__5.0");
        assert_eq!(
            wear_name("a very long material name", &mut used),
            "A_VERY_LONG_MAT.0"
        );
        assert_eq!(
            wear_name("a very long material name 2", &mut used),
            "A_VERY_LONG_M_2.0"
        );
        assert_eq!(wear_name("броня", &mut used), "БРОНЯ.0");
        assert_eq!(wear_name("木材", &mut used), "__.0");
        assert_eq!(wear_name("", &mut used), "MATERIAL.0");
        assert_eq!(wear_name("x.1234", &mut used), "X_1234.0");
        for n in &used {
            let stem = n.split('.').next().unwrap();
            assert!(stem.chars().count() <= MAX_MATERIAL_STEM, "{n}");
        }
    }

    #[test]
    fn polar_decomposition() {
        use glam::{DMat3, DQuat, DVec3};
        let close = |a: &DMat3, b: &DMat3| frobenius(&(*a - *b)) < 1e-10;
        // Rotation x stretch x shear, and a mirrored one.
        let r = DMat3::from_quat(DQuat::from_axis_angle(
            DVec3::new(0.3, 1.0, -0.2).normalize(),
            1.1,
        ));
        let s = DMat3::from_diagonal(DVec3::new(2.0, 1.0, 0.5));
        let r2 = DMat3::from_quat(DQuat::from_rotation_z(0.7));
        for a in [
            r * s,
            s * r2,
            s * r2 * s,
            -(r * s),
            r * DMat3::from_diagonal(DVec3::new(-1.0, 1.0, 1.0)),
        ] {
            let (u, p) = polar(a, DMat3::IDENTITY);
            assert!(close(&(u.transpose() * u), &DMat3::IDENTITY), "{u}");
            assert!((u.determinant() - 1.0).abs() < 1e-10);
            assert!(close(&(u * p), &a));
            assert!(close(&p, &p.transpose()), "{p}");
        }
        // R * S: U = R, P = S.
        let (u, p) = polar(r * s, DMat3::IDENTITY);
        assert!(close(&u, &r) && close(&p, &s));
        // Singular: the fallback rotation.
        let flat = r * DMat3::from_diagonal(DVec3::new(1.0, 0.0, 1.0));
        let (u, p) = polar(flat, r);
        assert!(close(&u, &r) && close(&(u * p), &flat));
        // Normal map: inverse transpose with the determinant's sign.
        let n = normal_map(&s);
        assert!(close(&n, &(s.inverse().transpose() * s.determinant())));
        let m = DMat3::from_diagonal(DVec3::new(-1.0, 1.0, 1.0));
        assert!(close(&normal_map(&m), &m));
    }

    #[test]
    fn cells_from_names() {
        assert_eq!(cell_from_name("hull.S0L0", "hull"), Some(0));
        assert_eq!(cell_from_name("hull.S2L4", "hull"), Some(14));
        assert_eq!(cell_from_name("hull.S1L2.001", "hull"), Some(7));
        assert_eq!(cell_from_name("hull.L1G3", "hull"), Some(8));
        assert_eq!(cell_from_name("hull.S3L0", "hull"), None);
        assert_eq!(cell_from_name("hull.S0L5", "hull"), None);
        assert_eq!(cell_from_name("hull.S0L0", "tower"), None);
        assert_eq!(cell_from_name("hull.X0L0", "hull"), None);
        assert_eq!(cell_from_name("hull.S0L0x", "hull"), None);
    }

    #[test]
    fn node_names_cp1251() {
        assert_eq!(
            cp1251_name("Башня"),
            (vec![0xC1, 0xE0, 0xF8, 0xED, 0xFF], false)
        );
        assert_eq!(cp1251_name("a木b"), (b"a_b".to_vec(), true));
    }
}
