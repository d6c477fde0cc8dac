//! glTF 2.0 → MSH with a base model: the lossless reverse path of
//! msh2gltf (gltf-mapping.md, "Reverse rules" and "Extras").
//!
//! [`import_with_base`] takes a loaded glTF ([`read::GltfFile`]) and the
//! base [`Model`] it was exported from (or that it should replace), and
//! returns the edited model:
//!
//! 1. Conventions are read from the scene extras (`fps`, `up`,
//!    `quat_layout`), defaulting to msh2gltf's defaults (24, `y`, `xyzw`);
//!    [`ImportOptions::fps`] overrides the fps.
//! 2. glTF nodes, meshes and primitives are matched to Res1 nodes, Res2
//!    slots and Res13 batches ([`matching`]): extras first, then names
//!    (Blender's `.001` suffixes stripped), then order. A mismatch is an
//!    error that names what differs.
//! 3. Geometry ([`geometry`]): a value equal to what msh2gltf exports from
//!    the base keeps the base's raw bytes; a changed value is quantized by
//!    the seed rules (msh-core §5.4, §5.5). Changed geometry recomputes the
//!    slot's bounds and the Res2 header; changed topology rebuilds Res6,
//!    Res13, Res7 and the slot ranges (msh-core §8.3).
//! 4. Animation ([`animation`]): channels of any interpolation and times
//!    become integer-frame keys; Res8/Res19 are regenerated canonically
//!    (msh-animation §5, §8) unless every track is unchanged.
//! 5. The result passes [`crate::msh::validate()`] or is an error.
//!
//! Without a base, [`author::author`] makes a new model and its WEAR table
//! from any glTF scene.

mod anim_check;
pub mod animation;
pub mod author;
pub mod budget;
pub mod clips;
mod differences;
pub mod geometry;
pub mod matching;
pub mod material_edits;
pub mod materials;
pub mod object_transforms;
pub mod read;
pub mod simplify;

use crate::convention;
use crate::gltf_export::Up;
use crate::msh::{self, Model, MshError};

pub use author::{author, AuthorOptions, AuthorReport, Authored};
pub use read::{load_path, load_path_with, parse, GltfFile, ReadOptions};

/// An import failure, with a stable rule id.
///
/// Rules: `io`, `gltf.json`, `gltf.glb`, `gltf.version`, `gltf.extension`,
/// `gltf.buffer`, `gltf.index`, `gltf.accessor` (reading);
/// `gltf.match.node`, `gltf.match.mesh`, `gltf.match.primitive`,
/// `gltf.match.material`, `gltf.hierarchy` (matching); `gltf.material_edit`
/// (`--base`: an edit of a library material); `gltf.mode`,
/// `gltf.skin`, `gltf.morph`, `gltf.scale`, `gltf.unsupported` (features
/// the format cannot hold); `gltf.empty` (authoring: no triangles); `gltf.anim` (animation data); `gltf.limits` (u16 ranges);
/// `msh.*` (the edited model breaks a codec rule, see
/// [`crate::msh::validate()`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct ImportError {
    /// Stable rule id.
    pub rule: &'static str,
    /// What was found.
    pub detail: String,
}

impl ImportError {
    /// A new error.
    pub fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        ImportError {
            rule,
            detail: detail.into(),
        }
    }
}

impl From<MshError> for ImportError {
    fn from(e: MshError) -> Self {
        ImportError {
            rule: e.rule,
            detail: format!("the edited model is invalid: {e}"),
        }
    }
}

/// Options of [`import_with_base`].
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// Frames per second of the glTF timeline; `None`: the scene extras'
    /// `fps`, else 24.
    pub fps: Option<f32>,
    /// Drop keys that the engine's interpolation of their neighbours
    /// reproduces within [`animation::REDUCE_POS_TOL`] /
    /// [`animation::REDUCE_ROT_TOL`] (keys that keep a base key's raw
    /// values are never dropped). Always applied to resampled channels
    /// (STEP, CUBICSPLINE, non-integer times); with `reduce_keys` also to
    /// integer-time LINEAR channels (Blender samples every frame).
    pub reduce_keys: bool,
    /// Material edits are the caller's to write (`gltf2msh --base
    /// --game-dir`, [`material_edits::edits`]); otherwise they are refused
    /// ([`material_edits::check`]).
    pub write_materials: bool,
    /// The clips of the base's `.ctl` (unit-files-notes §1.7, built by
    /// `unit::clips::base_clips`): the frame range and clip time of every
    /// clip animation come from them, never from the glTF's extras
    /// ([`clips::fold_clips`]); `None`: the base has no `.ctl`, and an
    /// edited clip is not written (a warning).
    pub base_clips: Option<Vec<crate::gltf_export::msh_extras::BaseClip>>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            fps: None,
            reduce_keys: true,
            write_materials: false,
            base_clips: None,
        }
    }
}

/// The context of one import: the timeline and axes the glTF was written
/// with (scene extras) and the base model's conventions (format-notes §6),
/// carried as one value through matching, geometry and animation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Context {
    /// Frames per second.
    pub fps: f32,
    /// Up axis.
    pub up: Up,
    /// The model's conventions (names, batch layout, quaternion order, WEAR
    /// key, UV sign): the scene extras' `conventions`, else detected on the
    /// base, else retail.
    pub model: convention::Conventions,
    /// Whether lit batches are lit (scene extras `lightmaps`; default: the
    /// base has Res18), as [`crate::gltf_export::ExportOptions::lightmaps`]
    /// and Res18 decided on export.
    pub lightmaps: bool,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    /// Conventions used: fps.
    pub fps: f32,
    /// `"y"` or `"z"`.
    pub up: String,
    /// `"xyzw"` or `"wxyz"`.
    pub quat_layout: String,
    /// The model conventions used (the base's, format-notes §6).
    pub conventions: Option<convention::Conventions>,
    /// Vertices whose position changed.
    pub moved_vertices: usize,
    /// Vertices whose normal changed.
    pub changed_normals: usize,
    /// Vertices whose UV changed.
    pub changed_uvs: usize,
    /// Vertices appended (new corners of edited topology).
    pub new_vertices: usize,
    /// Slots whose geometry changed (bounds recomputed).
    pub changed_slots: Vec<usize>,
    /// Slots whose topology was rebuilt (Res6/Res13/Res7).
    pub rebuilt_slots: Vec<usize>,
    /// Batches whose material index changed.
    pub changed_materials: usize,
    /// Nodes whose animation track changed.
    pub changed_tracks: Vec<usize>,
    /// True when Res8/Res19 were regenerated.
    pub animation_regenerated: bool,
    /// True when the Res2 header was recomputed.
    pub header_recomputed: bool,
    /// Renamed nodes.
    pub renamed_nodes: Vec<usize>,
    /// Res1 nodes whose object transform (scale, unkeyed move) was written
    /// ([`object_transforms`]).
    pub baked_nodes: Vec<usize>,
    /// Res8 key count written.
    pub keys: usize,
    /// Res19 frame count written.
    pub frame_count: u32,
    /// True when the model equals the base and nothing in the glTF
    /// differs from it (no warning).
    pub unchanged: bool,
    /// Everything approximated or ignored.
    pub warnings: Vec<String>,
    /// Cells the glTF does not show that show a vertex edit anyway, because
    /// their slot draws the same Res3 vertices (one line per cell, naming
    /// the node, the state and the slot; issue 39). The cells an edit does
    /// not reach are warnings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_edits: Vec<String>,
    /// Control points written (`gltf2msh --base` with the base's `.cpt`):
    /// one line per moved, turned, renamed, re-parented, deleted or added
    /// point (unit-files-notes §5.1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub control_points: Vec<String>,
}

/// An imported model and its report.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The edited model (validated).
    pub model: Model,
    /// What changed.
    pub report: ImportReport,
    /// The Res1 node of every glTF node (`None`: a cell carrier, a control
    /// point or another node that is not a Res1 node), from the match.
    pub res1_of: Vec<Option<usize>>,
    /// The document's up axis (its scene extras, else `y`).
    pub up: Up,
    /// The document with object transforms baked (`None`: none to bake),
    /// whose control-point empties under a scaled node carry the scaled
    /// position and direction the `.cpt` takes
    /// ([`crate::unit::cpt_back::read_points`] reads it).
    pub points_doc: Option<GltfFile>,
}

/// Reads the import context (gltf-mapping.md, "Extras"): `fps` and `up`
/// from the scene extras (`opts.fps` first); the model conventions from the
/// scene extras' `conventions` when present, else from `base` by
/// [`convention::detect`] (the scene's `quat_layout` still wins for R3),
/// else retail.
pub fn context(doc: &GltfFile, opts: &ImportOptions, base: Option<&Model>) -> Context {
    let scene_i = read::idx(&doc.json, "scene").unwrap_or(0);
    let ex = doc.scenes().get(scene_i).and_then(read::msh_extras);
    let fps = opts
        .fps
        .or_else(|| {
            ex.and_then(|e| e.get("fps"))
                .and_then(|v| v.as_f64())
                .map(|f| f as f32)
        })
        .filter(|f| crate::limits::check_fps(*f).is_ok())
        .unwrap_or(24.0);
    let up = match ex.and_then(|e| e.get("up")).and_then(|v| v.as_str()) {
        Some("z") | Some("Z") => Up::Z,
        _ => Up::Y,
    };
    let stored: Option<convention::Conventions> = ex
        .and_then(|e| e.get("conventions"))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    let model = match (stored, base) {
        (Some(c), _) => c,
        (None, Some(b)) => {
            let mut c = convention::detect(b, None, &Default::default()).conventions;
            if let Some(q) = ex
                .and_then(|e| e.get("quat_layout"))
                .and_then(|v| v.as_str())
                .and_then(convention::parse_quat)
            {
                c.quat = q;
            }
            c
        }
        (None, None) => convention::Conventions::RETAIL,
    };
    let lightmaps = ex
        .and_then(|e| e.get("lightmaps"))
        .and_then(read::extra_bool)
        .unwrap_or(true)
        && base.is_some_and(|b| b.res18.is_some());
    Context {
        fps,
        up,
        model,
        lightmaps,
    }
}

/// Imports `doc` onto `base` (see the module docs).
///
/// # Errors
/// [`ImportError`]: a mismatch between the glTF and the base
/// (`gltf.match.*`, `gltf.hierarchy`), a feature MSH cannot hold
/// (`gltf.mode`, `gltf.skin`, `gltf.morph`), unreadable data
/// (`gltf.accessor`, `gltf.anim`), u16 limits (`gltf.limits`), or a
/// broken `msh.*` rule of the edited model.
pub fn import_with_base(
    doc: &GltfFile,
    base: &Model,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    clips::refuse_assembled(doc)?;
    let conv = context(doc, opts, Some(base));
    // Edited clip animations go into the timeline first (clips).
    let folded = clips::fold_clips(
        doc,
        (base, opts.base_clips.as_deref()),
        conv.up,
        conv.model.quat,
        conv.fps,
    )?;
    let doc = folded.doc.as_ref().unwrap_or(doc);
    let mut report = ImportReport {
        fps: conv.fps,
        up: match conv.up {
            Up::Y => "y".into(),
            Up::Z => "z".into(),
        },
        quat_layout: convention::quat_str(conv.model.quat).into(),
        conventions: Some(conv.model),
        ..Default::default()
    };
    report.warnings.extend(folded.warnings);
    let m = matching::match_document(doc, base, conv.model)?;
    matching::check_mesh_assignment(doc, &m, base)?;
    if !opts.write_materials {
        material_edits::check(doc)?;
    }
    report.warnings.extend(m.warnings.iter().cloned());
    // Object transforms (scale, unkeyed moves) made rigid (issue 24).
    let baked = object_transforms::bake(doc, &m, conv.fps)?;
    let doc = baked.doc.as_ref().unwrap_or(doc);
    report.warnings.extend(baked.warnings.iter().cloned());
    report.baked_nodes.clone_from(&baked.nodes);
    let mut model = base.clone();
    matching::apply_nodes(doc, &m, base, &mut model, conv.model, &mut report)?;
    let geo = geometry::apply(doc, &m, base, &mut model, conv, &mut report)?;
    animation::apply(doc, &m, base, &mut model, conv, opts, &mut report)?;
    geometry::finish(base, &mut model, conv, &geo, &mut report);
    msh::validate(&model)?;
    differences::check(doc, &m, &model, conv, &mut report.warnings);
    report.keys = model.keys.as_ref().map_or(0, Vec::len);
    report.frame_count = model.frame_count;
    // "unchanged" only when nothing differs: a warning names a difference.
    report.unchanged = model == *base && report.warnings.is_empty();
    Ok(Imported {
        model,
        report,
        res1_of: m.res1_of,
        up: conv.up,
        points_doc: baked.doc,
    })
}
