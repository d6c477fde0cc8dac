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
//!   unit-files-notes §5.1): `--base` writes the model, not its `.cpt`; a
//!   point moved, turned, scaled, renamed, re-parented, deleted, or whose
//!   node's scale was baked into the mesh is reported by name.

use serde_json::Value;

use super::anim_check::{PLAYED_POS_TOL, PLAYED_ROT_TOL};
use super::animation::{collect_channels, node_trs_full};
use super::matching::{child_links, strip_blender_suffix, Matched};
use super::read::{arr, idx, msh_extras, GltfFile};
use super::Context;
use crate::anim::Sampler;
use crate::gltf_export::axes;
use crate::msh::{Model, Nodes};
use crate::unit::gltf::CONTROL_POINT_KEY;

/// Position tolerance (relative to `max(1, |v|)`) of "the control point is
/// where the `.cpt` has it".
pub const POINT_POS_TOL: f32 = 1e-4;
/// Direction tolerance (per component of the unit direction) of "the
/// control point points where the `.cpt` has it".
pub const POINT_DIR_TOL: f32 = 1e-4;

fn name_of(v: &Value) -> &str {
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
/// docs). `scaled`: glTF nodes whose frame was scaled by a baked object
/// scale of an ancestor.
pub(crate) fn check(
    doc: &GltfFile,
    m: &Matched,
    model: &Model,
    conv: Context,
    scaled: &[usize],
    warnings: &mut Vec<String>,
) {
    static_nodes(doc, m, model, conv, warnings);
    control_points(doc, m, conv, scaled, warnings);
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
    let nodes = arr(&doc.json, "nodes");
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

/// What differs between a control-point empty and its `.cpt` record (the
/// extras msh2gltf wrote), as phrases.
fn point_changes(
    nd: &Value,
    cp: &serde_json::Map<String, Value>,
    (parent_res1, n_res1): (Option<usize>, usize),
    parent_scaled: bool,
    conv: Context,
) -> Vec<String> {
    let f3 = |k: &str| -> Option<[f32; 3]> {
        let a = cp.get(k)?.as_array()?;
        (a.len() == 3).then(|| std::array::from_fn(|i| a[i].as_f64().unwrap_or(0.0) as f32))
    };
    let (trs, _) = node_trs_full(nd);
    let mut what = Vec::new();
    let want_name = cp.get("name").and_then(Value::as_str).unwrap_or("");
    let name = name_of(nd);
    if !name.is_empty() && strip_blender_suffix(name) != want_name {
        what.push(format!("renamed {want_name:?} -> {name:?}"));
    }
    let want_node = cp.get("node").and_then(Value::as_i64);
    if let Some(wn) = want_node {
        let was = usize::try_from(wn).ok().filter(|&x| x < n_res1);
        if was != parent_res1 {
            what.push(format!(
                "re-parented from node {wn} to {}",
                parent_res1.map_or("the scene root".to_string(), |r| format!("node {r}"))
            ));
        }
    }
    if let Some(p) = f3("position") {
        let want = axes::vec3(conv.up, p);
        if !close3(trs.t, want, POINT_POS_TOL) {
            what.push(format!("moved {:?} -> {:?}", round4(want), round4(trs.t)));
        }
    }
    if let Some(d) = f3("direction") {
        let want = axes::normalize3(axes::vec3(conv.up, d).map(f64::from));
        let q = glam::Quat::from_xyzw(trs.r[0], trs.r[1], trs.r[2], trs.r[3]);
        let y = (q * glam::Vec3::Y).to_array();
        match want {
            Some(w) if !close3(y, w, POINT_DIR_TOL) => {
                what.push(format!(
                    "turned (direction {:?} -> {:?})",
                    round4(w),
                    round4(y)
                ));
            }
            _ => {
                // Same direction (or none): a turn about it is a roll the
                // .cpt cannot hold (it stores a direction only).
                let exported = crate::unit::gltf::rotation_to(axes::vec3(conv.up, d));
                if !rot_close(trs.r, exported) {
                    what.push(
                        "turned about its own direction (the .cpt stores a direction only, no roll)"
                            .into(),
                    );
                }
            }
        }
    }
    if trs.s.iter().any(|s| (s - 1.0).abs() > 1e-4) {
        what.push(format!("scaled {:?}", round4(trs.s)));
    }
    if parent_scaled {
        what.push(
            "its node's scale was written into the mesh, the point keeps its .cpt position".into(),
        );
    }
    what
}

/// Control points against their `.cpt` records (see the module docs).
fn control_points(
    doc: &GltfFile,
    m: &Matched,
    conv: Context,
    scaled: &[usize],
    warnings: &mut Vec<String>,
) {
    let nodes = arr(&doc.json, "nodes");
    let Ok(parent) = child_links(nodes) else {
        return;
    };
    let why = "not written: gltf2msh --base writes the model, not its .cpt (unit-files-notes §5.1); the game keeps the point as it was";
    let mut seen: Vec<u64> = Vec::new();
    for (g, nd) in nodes.iter().enumerate() {
        let Some(cp) = msh_extras(nd)
            .and_then(|e| e.get(CONTROL_POINT_KEY))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let i = cp.get("index").and_then(Value::as_u64);
        seen.extend(i);
        let parent_res1 = parent[g].and_then(|p| m.res1_of.get(p).copied().flatten());
        let parent_scaled = scaled.contains(&g);
        let what = point_changes(nd, cp, (parent_res1, m.node_of.len()), parent_scaled, conv);
        if !what.is_empty() {
            warnings.push(format!(
                "control point {} {:?}: {}; {why}",
                i.map_or("?".to_string(), |i| i.to_string()),
                cp.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(name_of(nd)),
                what.join(", ")
            ));
        }
    }
    let s = idx(&doc.json, "scene").unwrap_or(0);
    let count = arr(&doc.json, "scenes")
        .get(s)
        .and_then(msh_extras)
        .and_then(|e| e.get("control_points"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let missing: Vec<String> = (0..count.min(1 << 16))
        .filter(|i| !seen.contains(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        warnings.push(format!(
            "control point(s) {} deleted (the scene had {count}); {why}",
            missing.join(", ")
        ));
    }
}
