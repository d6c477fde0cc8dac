//! The last step of `gltf2msh --base` (issue 24: no edit unreported): what
//! will be written is compared with the glTF, and every difference that no
//! earlier step wrote or reported becomes a warning naming the node or
//! control point, what differs and why it is not written. "unchanged" is
//! said only when the model equals the base and there is no warning
//! ([`super::import_with_base`]).
//!
//! - **Static nodes** (no translation or rotation channel): the node's glTF
//!   translation and rotation against the written model's engine pose at
//!   frame 0 (gltf-mapping.md "Nodes and rest pose"), within
//!   [`PLAYED_POS_TOL`] / [`PLAYED_ROT_TOL`]. Keyed channels are checked by
//!   [`super::anim_check`].
//! - **Control points** (empties with `extras.msh.control_point`,
//!   unit-files-notes §5.1): their moves, turns, renames, re-parenting and
//!   deletions are written into the `.cpt` (`gltf2msh`'s `points`,
//!   [`crate::unit::cpt_back`]); what a `.cpt` record cannot hold (a roll
//!   about the direction, a scale across it) is reported by name.

use crate::gltf_import::read::Elem;
use serde_json::Value;

use super::anim_check::{PLAYED_POS_TOL, PLAYED_ROT_TOL};
use super::animation::{collect_channels, node_trs_full};
use super::matching::Matched;
use super::read::{msh_extras, GltfFile};
use super::Context;
use crate::anim::Sampler;
use crate::gltf_export::axes;
use crate::gltf_export::msh_extras::CONTROL_POINT_KEY;
use crate::msh::{Model, Nodes};

fn name_of(v: &Elem) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

fn close3(a: [f32; 3], b: [f32; 3], tol: f32) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol * b[k].abs().max(1.0))
}

fn rot_close(a: [f32; 4], b: [f32; 4]) -> bool {
    let d = |s: f32| {
        (0..4)
            .map(|k| (a[k] - s * b[k]).abs())
            .fold(0.0f32, f32::max)
    };
    d(1.0).min(d(-1.0)) <= PLAYED_ROT_TOL
}

fn round4<const N: usize>(v: [f32; N]) -> [f32; N] {
    v.map(|x| (x * 1e4).round() / 1e4)
}

/// Appends a warning for every difference between `doc` and the written
/// `model` that is neither written nor already reported (see the module
/// docs).
pub(crate) fn check(
    doc: &GltfFile,
    m: &Matched,
    model: &Model,
    conv: Context,
    warnings: &mut Vec<String>,
) {
    static_nodes(doc, m, model, conv, warnings);
    control_points(doc, conv, warnings);
}

/// Static Res1 nodes against the written pose at frame 0.
fn static_nodes(
    doc: &GltfFile,
    m: &Matched,
    model: &Model,
    conv: Context,
    warnings: &mut Vec<String>,
) {
    if !matches!(model.nodes, Nodes::Node38(_)) || model.keys.is_none() {
        return;
    }
    let Ok(sampler) = Sampler::new(model, conv.model.quat) else {
        return;
    };
    let n = m.node_of.len();
    let Ok(col) = collect_channels(doc, conv.fps, |g| m.res1_of.get(g).copied().flatten(), n)
    else {
        return;
    };
    let nodes = doc.nodes();
    for (r, &g) in m.node_of.iter().enumerate() {
        let Some(nd) = nodes.get(g) else { continue };
        let [tc, rc, _] = &col.channels[r];
        if tc.is_some() || rc.is_some() {
            continue;
        }
        let (trs, _) = node_trs_full(nd);
        let pose = sampler.node_pose(r, 0.0);
        let (wt, wq) = (
            axes::vec3(conv.up, pose.pos),
            axes::engine_quat_to_gltf(conv.up, pose.q),
        );
        let mut what = Vec::new();
        if !close3(trs.t, wt, PLAYED_POS_TOL) {
            what.push(format!(
                "translation {:?} (written {:?})",
                round4(trs.t),
                round4(wt)
            ));
        }
        if !rot_close(trs.r, wq) {
            what.push(format!(
                "rotation {:?} (written {:?})",
                round4(trs.r),
                round4(wq)
            ));
        }
        if !what.is_empty() {
            warnings.push(format!(
                "Res1 node {r} {:?}: {} not written (the model holds its own pose there)",
                name_of(nd),
                what.join(", ")
            ));
        }
    }
}

/// What a control-point empty carries that its `.cpt` record cannot hold
/// (unit-files-notes §5.1: a position and a direction whose length is a
/// magnitude), as phrases: a turn about its own direction (a roll) and a
/// scale across it (X or Z). Moves, turns, scales along it, renames,
/// re-parenting and deletions are written ([`crate::unit::cpt_back`]).
fn point_changes(nd: &Elem, cp: &serde_json::Map<String, Value>, conv: Context) -> Vec<String> {
    let (trs, _) = node_trs_full(nd);
    let mut what = Vec::new();
    let dir = cp
        .get("direction")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 3);
    if let Some(d) = dir {
        let d: [f32; 3] = std::array::from_fn(|i| d[i].as_f64().unwrap_or(0.0) as f32);
        // One rule with the writer (crate::gltf_export::msh_extras::point_turn).
        if crate::gltf_export::msh_extras::point_turn(trs.r, axes::vec3(conv.up, d))
            == crate::gltf_export::msh_extras::PointTurn::Rolled
        {
            what.push(
                "turned about its own direction (the .cpt stores a direction only, no roll)".into(),
            );
        }
    }
    if [trs.s[0], trs.s[2]].iter().any(|s| (s - 1.0).abs() > 1e-4) {
        what.push(format!(
            "scaled across its direction {:?} (the .cpt keeps only the length along it)",
            round4(trs.s)
        ));
    }
    what
}

/// Control points: what the `.cpt` cannot hold (see [`point_changes`]).
fn control_points(doc: &GltfFile, conv: Context, warnings: &mut Vec<String>) {
    let why = "not written: the game keeps the point's direction and length only";
    for nd in doc.nodes() {
        let Some(cp) = msh_extras(nd)
            .and_then(|e| e.get(CONTROL_POINT_KEY))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let what = point_changes(nd, cp, conv);
        if !what.is_empty() {
            warnings.push(format!(
                "control point {:?}: {}; {why}",
                cp.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(name_of(nd)),
                what.join(", ")
            ));
        }
    }
}
