//! Rigid baking (module docs of [`super`], point 2): glTF world matrices
//! per node and integer frame split into MSH rigid keys and a residual
//! linear map baked into the geometry, with its drift over time reported
//! as shear.

use crate::gltf_import::read::TopArray;
use glam::{DMat3, DMat4, DQuat, DVec3};
use serde_json::Value;

use super::tree::Tree;
use super::{err, AuthorOptions, AuthorReport, Shear, SCALE_TOL};
use crate::anim;
use crate::gltf_import::animation::{self, node_trs_full, sample_tr, Channel};
use crate::gltf_import::geometry::{read_primitive, PrimRules};
use crate::gltf_import::read::{arr, floats, GltfFile};
use crate::gltf_import::ImportError;

/// The first value of a scale channel when every value equals it within
/// [`SCALE_TOL`] (relative, at least 1).
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
pub(super) struct NodeInfo {
    /// Linear map baked into the node's geometry: the residual
    /// `U(0)ᵀ · A(0)` of its frame-0 world matrix `A` after the polar
    /// rotation `U` (scale, and shear under a rotated non-uniform scale).
    pub(super) bake: DMat3,
    /// Local rigid keys at frames `0..=last` (one for a static node):
    /// translation and rotation `(x, y, z, w)` in the parent's rigid frame.
    pub(super) keys: Vec<([f32; 3], [f32; 4])>,
    /// Frames whose residual differs from `bake`: `(frame, M(f) - bake)`.
    pub(super) drift: Vec<(u32, DMat3)>,
}

/// The Frobenius norm of `m`.
pub(crate) fn frobenius(m: &DMat3) -> f64 {
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

/// The rigid baking pass (module docs of [`super`], point 2): per node and
/// frame, the glTF world matrix `W = [A | t]`, its polar rotation `U`, the
/// local key `(U_pᵀ (t - t_p), U_pᵀ U)` in the parent's rigid frame, and the
/// residual `Uᵀ A` (baked at frame 0, its later changes recorded as drift).
/// Nodes whose residual is not the identity go to
/// [`AuthorReport::scaled_nodes`].
///
/// # Errors
/// `gltf.scale` (an animated scale), `gltf.limits` (a key past
/// [`anim::MAX_KEY_TIME`], a Res19 map that cannot be addressed),
/// `limits.work` (see [`check_bake`]).
pub(super) fn rigid_bake(
    doc: &GltfFile,
    tree: &Tree,
    chans: &[[Option<Channel>; 3]],
    fps: f32,
    max_work: u64,
    report: &mut AuthorReport,
) -> Result<Vec<NodeInfo>, ImportError> {
    let inputs = bake_inputs(doc, tree, chans, fps, report)?;
    check_bake(chans, &inputs.last, max_work)?;
    let mut info = bake_frames(&inputs, chans);
    drop_held_keys(&mut info, &inputs.own_last);
    for (r, ni) in info.iter().enumerate() {
        if frobenius(&(ni.bake - DMat3::IDENTITY)) > 1e-6 {
            report.scaled_nodes.push(r);
        }
    }
    Ok(info)
}

/// Per-node inputs of the baking pass, in Res1 order (glTF axes).
struct BakeInputs {
    /// The node's static TRS (a constant scale channel folded in) and its
    /// `matrix`, used when it has no channel.
    statics: Vec<(animation::Trs, Option<DMat4>)>,
    /// Last frame to bake: the node's own last key or an ancestor's.
    last: Vec<u32>,
    /// The node's own last key frame (`ceil`).
    own_last: Vec<u32>,
    /// Res1 parent.
    parent_of: Vec<Option<usize>>,
}

/// Reads the static transform, parent and last frame of every Res1 node;
/// TRS notes go to the warnings.
///
/// # Errors
/// `gltf.scale` (a scale channel that is not constant, [`SCALE_TOL`]),
/// `gltf.limits` (a channel ending past [`anim::MAX_KEY_TIME`]).
fn bake_inputs(
    doc: &GltfFile,
    tree: &Tree,
    chans: &[[Option<Channel>; 3]],
    fps: f32,
    report: &mut AuthorReport,
) -> Result<BakeInputs, ImportError> {
    let nodes = doc.nodes();
    let n = tree.order.len();
    let mut out = BakeInputs {
        statics: Vec::with_capacity(n),
        last: vec![0u32; n],
        own_last: vec![0u32; n],
        parent_of: vec![None; n],
    };
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
        out.parent_of[r] = p;
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
        out.own_last[r] = own as u32;
        out.last[r] = (own as u32).max(p.map_or(0, |p| out.last[p]));
        out.statics.push((trs, matrix));
    }
    Ok(out)
}

/// A glTF `(x, y, z, w)` quaternion in f64, normalized.
fn dquat(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(
        f64::from(q[0]),
        f64::from(q[1]),
        f64::from(q[2]),
        f64::from(q[3]),
    )
    .normalize()
}

/// A vector in f64.
fn dvec3(v: [f32; 3]) -> DVec3 {
    DVec3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2]))
}

/// The local matrix and TRS rotation of a node at frame `ff`: its `matrix`
/// when it has one (no channels), else its TRS with the translation and
/// rotation channels sampled (glTF semantics).
fn local_at(
    (trs, matrix): &(animation::Trs, Option<DMat4>),
    [tc, rc, _]: &[Option<Channel>; 3],
    ff: f32,
) -> (DMat4, DQuat) {
    match matrix {
        Some(m) => (*m, dquat(trs.r)),
        None => {
            let (t, r) = sample_tr([tc.as_ref(), rc.as_ref()], (trs.t, trs.r), ff);
            let q = dquat(r);
            (
                DMat4::from_scale_rotation_translation(dvec3(trs.s), q, dvec3(t)),
                q,
            )
        }
    }
}

/// Evaluates every node at every integer frame up to its last (parents
/// first): its world matrix, polar rotation, local rigid key (sign kept
/// continuous with the previous key) and residual (frame 0: the bake;
/// later: drift above 1e-9 relative).
fn bake_frames(inputs: &BakeInputs, chans: &[[Option<Channel>; 3]]) -> Vec<NodeInfo> {
    let n = inputs.statics.len();
    let last = &inputs.last;
    let mut info: Vec<NodeInfo> = (0..n)
        .map(|_| NodeInfo {
            bake: DMat3::IDENTITY,
            keys: Vec::new(),
            drift: Vec::new(),
        })
        .collect();
    // Current frame's (world matrix, TRS rotation product, U, t) per node.
    let mut world: Vec<(DMat4, DQuat, DMat3, DVec3)> = vec![world_root(); n];
    let global_last = last.iter().copied().max().unwrap_or(0);
    for f in 0..=global_last {
        let ff = f as f32;
        for r in 0..n {
            if last[r] < f {
                continue; // held: the node and its ancestors stopped moving
            }
            let (local, q) = local_at(&inputs.statics[r], &chans[r], ff);
            let (pw, pq, pu, pt) = match inputs.parent_of[r] {
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
    info
}

/// Frames past the node's own last key that only repeat it (its ancestors
/// move it rigidly) are dropped: the engine holds the last key.
fn drop_held_keys(info: &mut [NodeInfo], own_last: &[u32]) {
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
}

/// Reports every node whose baked residual changes over time (a rotation
/// under a non-uniform ancestor scale shears the source): the largest
/// distance, over its frames and the vertices of its meshes, between the
/// glTF vertex and the rigidly moved baked one, `|(M(f) - M(0)) · v|`.
///
/// # Errors
/// Reading a primitive (see [`read_primitive`]).
pub(super) fn shear_warnings(
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
            let mj = doc.elem(TopArray::Meshes, mesh)?;
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
            let name = doc.nodes()[g]
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

/// The world frame of a root's parent: identity matrix, rotation and
/// origin.
fn world_root() -> (DMat4, DQuat, DMat3, DVec3) {
    (
        DMat4::IDENTITY,
        DQuat::IDENTITY,
        DMat3::IDENTITY,
        DVec3::ZERO,
    )
}
