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
//!
//! [`split_part`]: crate::msh::build::split_part
//! [`MAX_TRIANGLES`]: super::simplify::MAX_TRIANGLES
//! [`simplify::fit`]: super::simplify::fit

pub(crate) mod bake;
mod keys;
mod names;
mod parts;
mod slots;
mod tree;

use super::animation::{collect_channels, Channel};
use super::read::GltfFile;
use super::simplify::Simplified;
use super::{context, ImportError, ImportOptions};
use crate::gltf_export::Up;
use crate::material::wear::{Wear, WearRow};
use crate::msh::build::ModelBuilder;
use crate::msh::{self, Model, NONE16};

use bake::rigid_bake;
pub use bake::{polar, SHEAR_TOL};
pub use names::wear_name;
use names::WearRows;
pub use tree::cell_from_name;
use tree::{scene_tree, Tree};

/// Relative tolerance under which a scale channel counts as constant.
pub const SCALE_TOL: f32 = 1e-6;
/// Most characters of a WEAR material name before its `.N` suffix.
pub const MAX_MATERIAL_STEM: usize = 15;
/// Most Res1 nodes a model can hold (`hdr1` is a u16, 0xFFFF = none).
pub const MAX_NODES: usize = NONE16 as usize;

/// An [`ImportError`] (shorthand).
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
    ///
    /// [`MAX_TRIANGLES`]: super::simplify::MAX_TRIANGLES
    /// [`simplify::fit`]: super::simplify::fit
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

/// What the steps of one authoring share: the document, the up axis, the
/// options, the glTF material count and the `DEFAULT` WEAR row (made on
/// first use: a primitive without a valid material).
struct AuthorCx<'a> {
    /// The glTF document.
    doc: &'a GltfFile,
    /// Up axis of the glTF (game axes conversion).
    up: Up,
    /// The authoring options.
    opts: &'a AuthorOptions,
    /// Number of glTF materials (WEAR rows `0..material_count`).
    material_count: usize,
    /// The `DEFAULT` row (`material_count`), once a primitive needs it.
    default_row: Option<u16>,
}

/// Authors a new model from `doc` (see the module docs).
///
/// # Errors
/// [`ImportError`]: `gltf.skin`, `gltf.morph`, `gltf.mode`, `gltf.scale`,
/// `gltf.hierarchy`, `gltf.empty`, `gltf.limits` (u16 ranges of Res1, Res2,
/// Res7, Res13, Res8/Res19), `gltf.accessor`, `gltf.anim`, `gltf.index`,
/// and the `msh.*` rule the result would break.
pub fn author(doc: &GltfFile, opts: &AuthorOptions) -> Result<Authored, ImportError> {
    crate::gltf_import::clips::refuse_assembled(doc)?;
    let conv = context(
        doc,
        &ImportOptions {
            fps: opts.fps,
            reduce_keys: opts.reduce_keys,
            write_materials: false,
            base_clips: None,
        },
        None,
    );
    let (up, fps) = (conv.up, conv.fps);
    let mut report = AuthorReport {
        fps,
        up: match up {
            Up::Y => "y".into(),
            Up::Z => "z".into(),
        },
        ..Default::default()
    };
    let tree = scene_tree(doc, &mut report.warnings)?;
    check_skins(doc, &tree, opts, &mut report)?;
    let chans = channels(doc, &tree, fps, opts, &mut report)?;
    let info = rigid_bake(doc, &tree, &chans, fps, opts.max_work, &mut report)?;
    let materials = doc.materials();
    let mut rows = WearRows::from_materials(materials, &mut report);
    let mut cx = AuthorCx {
        doc,
        up,
        opts,
        material_count: materials.len(),
        default_row: None,
    };
    let mut b = ModelBuilder::new();
    let slots = slots::build(&mut cx, &tree, &info, &mut b, &mut report)?;
    if let Some(d) = cx.default_row {
        // Synthesized row: its `.0` suffix is not a rename.
        rows.add(d as usize, "DEFAULT".into(), &mut report);
    }
    keys::add_nodes(&mut b, &cx, &tree, &info, slots.cells, &mut report);
    finish(b, tree.order.len(), rows.rows, slots.lightmaps, report)
}

/// Skins (module docs, point 6): skinned nodes of the tree are an error,
/// or with [`AuthorOptions::ignore_skins`] a warning (bind pose).
///
/// # Errors
/// `gltf.skin`.
fn check_skins(
    doc: &GltfFile,
    tree: &Tree,
    opts: &AuthorOptions,
    report: &mut AuthorReport,
) -> Result<(), ImportError> {
    let nodes = doc.nodes();
    let in_tree = |g: usize| tree.res1_of[g].is_some() || tree.carriers.iter().any(|c| c.0 == g);
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
    Ok(())
}

/// The translation, rotation and scale channels of every Res1 node (module
/// docs, point 5), all animations merged; skipped channels are warnings.
///
/// # Errors
/// `gltf.morph` (only morph weight channels, without
/// [`AuthorOptions::ignore_skins`]); reading a channel (`gltf.anim`,
/// `gltf.accessor`).
fn channels(
    doc: &GltfFile,
    tree: &Tree,
    fps: f32,
    opts: &AuthorOptions,
    report: &mut AuthorReport,
) -> Result<Vec<[Option<Channel>; 3]>, ImportError> {
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
    Ok(col.channels)
}

/// Finishes the model (module docs, point 7): the builder's derived
/// fields, [`msh::validate()`], and the report's counts.
///
/// # Errors
/// `gltf.limits` (the builder refuses an `msh.*` range), the builder's
/// other rules, and the `msh.*` rule the model breaks.
fn finish(
    b: ModelBuilder,
    nodes: usize,
    rows: Vec<WearRow>,
    lightmaps: Vec<WearRow>,
    mut report: AuthorReport,
) -> Result<Authored, ImportError> {
    let model = b.finish().map_err(|e| {
        let rule = if e.rule.starts_with("msh.") {
            "gltf.limits"
        } else {
            e.rule
        };
        err(rule, format!("the new model does not fit MSH: {e}"))
    })?;
    msh::validate(&model)?;
    report.nodes = nodes;
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

#[cfg(test)]
mod tests {
    use super::bake::frobenius;
    use super::names::cp1251_name;
    use super::parts::normal_map;
    use super::*;
    use std::collections::HashSet;

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
