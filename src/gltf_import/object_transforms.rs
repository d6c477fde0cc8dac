//! `--base`: object-level transforms of mesh nodes written, as authoring
//! bakes them (issue 24; gltf-mapping.md "Nodes and rest pose": MSH nodes
//! have no scale).
//!
//! Before geometry and animation read the document, a copy of it is
//! rewritten so that every Res1 node (and `--all-cells` carrier) is rigid:
//!
//! - **Scale** (Object mode ×1.5, a `matrix` with scale): per node, parents
//!   first, `A = Mₚ · R · S` (`Mₚ` the residual of the parent) is split by
//!   polar decomposition into a rotation `U` (the node's rotation) and a
//!   residual `P = Uᵀ A` baked into the vertices of its mesh (positions
//!   `P · p`, normals `P⁻ᵀ · n` renormalised when `P` is not a uniform
//!   scale); the node's translation and its translation keys become
//!   `Mₚ · t`. A mesh shown by nodes with different residuals, a mirroring
//!   residual, or rotation keys under a non-uniform residual (shear over
//!   time) are not baked: a warning names the node and why.
//! - **Unkeyed move of an animated node**: Blender exports an animated
//!   object's static TRS as its current pose; when it lies on the node's
//!   channels at no frame, the user moved or turned the object without
//!   keying it. The difference to the channels at the scene extras'
//!   `frame_current` (the add-on writes it; else frame 0) is applied to
//!   every key: translation `+ Δt`, rotation `Δq · q` with
//!   `Δq = r_static · r(F)⁻¹`.
//!
//! Nodes whose transform is already rigid are left as they are, so an
//! unedited document is not copied.

use crate::gltf_import::read::{Elem, TopArray};
use glam::{DMat3, DQuat, DVec3};
use serde_json::{json, Value};

use super::animation::{collect_channels, node_trs_full, sample_tr, Channel};
use super::author::bake::{frobenius, polar};
use super::matching::{child_links, Matched};
use super::read::{arr, idx, msh_extras, GltfFile};
use super::ImportError;
use crate::gltf_export::msh_extras::CONTROL_POINT_KEY;

/// Tolerance of "the residual is the identity" (Frobenius norm of the
/// difference) and of "equal residuals" between the users of one mesh.
pub const RESIDUAL_TOL: f64 = 1e-6;
/// Translation tolerance (relative to `max(1, |v|)`) of "the static TRS lies
/// on the channel".
pub const ON_CHANNEL_POS_TOL: f32 = 1e-4;
/// Rotation tolerance (per component, either sign) of "the static TRS lies
/// on the channel".
pub const ON_CHANNEL_ROT_TOL: f32 = 1e-4;

/// The outcome of [`bake`].
#[derive(Debug, Default)]
pub(crate) struct Baked {
    /// The rewritten document (`None`: nothing to bake).
    pub(crate) doc: Option<GltfFile>,
    /// Res1 nodes whose scale or unkeyed move was written.
    pub(crate) nodes: Vec<usize>,
    /// What could not be written, naming the node and why.
    pub(crate) warnings: Vec<String>,
}

/// One node's rewrite.
struct NodeEdit {
    g: usize,
    t: [f32; 3],
    r: [f32; 4],
    /// Linear map of its translation channel's values and tangents.
    t_map: DMat3,
    /// Offset of its translation channel's values (before `t_map`).
    dt: [f32; 3],
    /// Left factor of its rotation channel's values and tangents.
    dq: DQuat,
}

fn name_of(v: &Elem) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

fn dq(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into()).normalize()
}

fn is_identity(m: &DMat3) -> bool {
    frobenius(&(*m - DMat3::IDENTITY)) <= RESIDUAL_TOL
}

/// `m` is `s · I` for some `s`.
fn is_uniform(m: &DMat3) -> bool {
    let s = (m.determinant().abs()).cbrt();
    frobenius(&(*m - DMat3::IDENTITY * s)) <= RESIDUAL_TOL * s.max(1.0)
}

/// A human-readable residual: `scale [x, y, z]` for a diagonal one.
fn describe(m: &DMat3) -> String {
    let d = [m.x_axis.x, m.y_axis.y, m.z_axis.z];
    let off = frobenius(&(*m - DMat3::from_diagonal(DVec3::from_array(d))));
    if off <= RESIDUAL_TOL {
        format!("scale [{:.4}, {:.4}, {:.4}]", d[0], d[1], d[2])
    } else {
        format!(
            "linear map {:?}",
            m.to_cols_array().map(|x| (x * 1e4).round() / 1e4)
        )
    }
}

/// Nodes in an order where every parent precedes its children (roots
/// first); nodes on no path from a root are left out.
fn top_down(parent: &[Option<usize>]) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); parent.len()];
    let mut order: Vec<usize> = Vec::new();
    for (c, p) in parent.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(c),
            None => order.push(c),
        }
    }
    let mut i = 0;
    while i < order.len() {
        let g = order[i];
        order.extend(children[g].iter().copied());
        i += 1;
    }
    order
}

/// The frame an animated object's static TRS was taken at: the scene
/// extras' `frame_current` (written by the Blender add-on), else 0.
fn current_frame(doc: &GltfFile) -> f32 {
    let s = idx(&doc.json, "scene").unwrap_or(0);
    doc.scenes()
        .get(s)
        .and_then(msh_extras)
        .and_then(|e| e.get("frame_current"))
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite() && (0.0..=1e6).contains(f))
        .map_or(0.0, |f| f as f32)
}

/// The static TRS lies on the channels at frame `f`.
fn on_channels(chans: [Option<&Channel>; 2], t: [f32; 3], r: [f32; 4], f: f32) -> bool {
    let (ct, cr) = sample_tr(chans, (t, r), f);
    let pos = (0..3).all(|k| (ct[k] - t[k]).abs() <= ON_CHANNEL_POS_TOL * t[k].abs().max(1.0));
    let d = |s: f32| {
        (0..4)
            .map(|k| (cr[k] - s * r[k]).abs())
            .fold(0.0f32, f32::max)
    };
    pos && d(1.0).min(d(-1.0)) <= ON_CHANNEL_ROT_TOL
}

/// The unkeyed move of an animated node: `(Δt, Δq)` from its channels at
/// `frame` to its static TRS, or `None` when the static TRS lies on the
/// channels at some frame (the pose Blender showed when exporting).
fn unkeyed_move(
    chans: [Option<&Channel>; 2],
    t: [f32; 3],
    r: [f32; 4],
    frame: f32,
) -> Option<([f32; 3], DQuat)> {
    let present: Vec<&Channel> = chans.iter().flatten().copied().collect();
    if present.is_empty() {
        return None;
    }
    let last = present
        .iter()
        .map(|c| c.last_frame())
        .fold(0.0f32, f32::max);
    let mut frames: Vec<f32> = present
        .iter()
        .flat_map(|c| c.frames.iter().copied())
        .collect();
    frames.push(frame);
    frames.extend((0..=last.clamp(0.0, 1e5).ceil() as u32).map(|f| f as f32));
    if frames.iter().any(|&f| on_channels(chans, t, r, f)) {
        return None;
    }
    let (ct, cr) = sample_tr(chans, (t, r), frame);
    let dt = match chans[0] {
        Some(_) => [t[0] - ct[0], t[1] - ct[1], t[2] - ct[2]],
        None => [0.0; 3],
    };
    let dqv = match chans[1] {
        Some(_) => (dq(r) * dq(cr).conjugate()).normalize(),
        None => DQuat::IDENTITY,
    };
    Some((dt, dqv))
}

/// Rewrites `doc` so that every Res1 node is rigid (see the module docs).
///
/// # Errors
/// `gltf.hierarchy` (a child index out of range), `gltf.anim` and
/// `gltf.accessor` (unreadable channels or vertex data).
pub(crate) fn bake(doc: &GltfFile, m: &Matched, fps: f32) -> Result<Baked, ImportError> {
    let nodes = doc.nodes();
    let parent = child_links(nodes)?;
    let col = collect_channels(doc, fps, Some, nodes.len())?;
    let frame = current_frame(doc);
    let mut out = Baked::default();
    let mut resid = vec![DMat3::IDENTITY; nodes.len()];
    let mut edits: Vec<NodeEdit> = Vec::new();
    for g in top_down(&parent) {
        let nd = &nodes[g];
        let carrier = msh_extras(nd).is_some_and(|e| e.contains_key("cell"));
        let res1 = m.res1_of.get(g).copied().flatten();
        let mp = parent[g].map_or(DMat3::IDENTITY, |p| resid[p]);
        if res1.is_none() && !carrier {
            continue;
        }
        let (trs, _) = node_trs_full(nd);
        let finite = trs
            .t
            .iter()
            .chain(&trs.r)
            .chain(&trs.s)
            .all(|x| x.is_finite());
        if !finite {
            continue; // left to the later steps, which refuse or report it
        }
        let [tc, rc, _] = &col.channels[g];
        let moved =
            res1.and_then(|_| unkeyed_move([tc.as_ref(), rc.as_ref()], trs.t, trs.r, frame));
        let rot = DMat3::from_quat(dq(trs.r));
        let a = mp * rot * DMat3::from_diagonal(DVec3::from_array(trs.s.map(f64::from)));
        let scaled = !is_identity(&(a * rot.transpose()));
        if !scaled && moved.is_none() {
            continue;
        }
        let label = match res1 {
            Some(r) => format!("Res1 node {r} {:?}", name_of(nd)),
            None => format!("cell node {g} {:?}", name_of(nd)),
        };
        let mut u = rot;
        if scaled {
            let det = a.determinant();
            if det.abs() <= 1e-12 * frobenius(&a).powi(3).max(1e-30) || !det.is_finite() {
                out.warnings.push(format!(
                    "{label}: zero scale ({}); not written: it would flatten the mesh (hide the object another way, or undo the scale)",
                    describe(&(rot.transpose() * a))
                ));
            } else if det < 0.0 {
                out.warnings.push(format!(
                    "{label}: mirrored ({}); not written: a mirror would turn its faces inside out (apply the scale in Blender with the faces flipped, or undo it)",
                    describe(&(rot.transpose() * a))
                ));
            } else {
                let (pu, p) = polar(a, rot);
                u = pu;
                if rc.is_some() && !is_uniform(&mp) {
                    out.warnings.push(format!(
                        "{label}: rotation keys under a non-uniform scale of an ancestor ({}); the shape is written as at its static pose (MSH nodes are rigid, the scaled shape would shear as it turns)",
                        describe(&mp)
                    ));
                }
                resid[g] = p;
            }
        }
        let tv = mp * DVec3::from_array(trs.t.map(f64::from));
        let uq = DQuat::from_mat3(&u).normalize();
        let (dt, dqv) = moved.unwrap_or(([0.0; 3], DQuat::IDENTITY));
        edits.push(NodeEdit {
            g,
            t: tv.to_array().map(|x| x as f32),
            r: [uq.x as f32, uq.y as f32, uq.z as f32, uq.w as f32],
            t_map: mp,
            dt,
            dq: dqv,
        });
        if let Some(r) = res1 {
            out.nodes.push(r);
        }
    }
    if edits.is_empty() && resid.iter().all(is_identity) {
        return Ok(out);
    }
    warn_unshown_scales(nodes, m, &parent, &resid, &mut out.warnings);
    let mut new = doc.clone();
    for e in &edits {
        write_node(&mut new, e)?;
    }
    scale_points(&mut new, &parent, &resid);
    bake_meshes(&mut new, m, &resid, &mut out.warnings)?;
    out.doc = Some(new);
    Ok(out)
}

/// Control-point empties under a node whose scale went into its mesh
/// follow that scale (unit-files-notes §5.1: a point's position and
/// direction are in its node's frame): with `Mₚ` the parent's residual,
/// the empty's translation becomes `Mₚ · t`, and its arrow `Mₚ · R · S · Y`
/// becomes its rotation (+Y along it) and its Y scale (its length), which
/// [`crate::unit::cpt_back`] writes into the `.cpt`.
fn scale_points(doc: &mut GltfFile, parent: &[Option<usize>], resid: &[DMat3]) {
    for (g, nd) in doc.list_mut(TopArray::Nodes).iter_mut().enumerate() {
        let is_point = msh_extras(nd).is_some_and(|e| e.contains_key(CONTROL_POINT_KEY));
        let Some(mp) = parent.get(g).copied().flatten().map(|p| resid[p]) else {
            continue;
        };
        if !is_point || is_identity(&mp) {
            continue;
        }
        let (trs, _) = node_trs_full(nd);
        let t = mp * DVec3::from_array(trs.t.map(f64::from));
        let arrow = mp * (dq(trs.r) * DVec3::new(0.0, f64::from(trs.s[1]), 0.0));
        let len = arrow.length();
        let r = crate::gltf_export::msh_extras::rotation_to(arrow.to_array().map(|x| x as f32));
        nd["translation"] = json!(t.to_array().map(|x| x as f32));
        nd["rotation"] = json!(r);
        nd["scale"] = json!([1.0, len as f32, 1.0]);
    }
}

/// A node's own scale, when it shows no mesh and carries no mesh node below
/// it, goes nowhere: a warning names it (a scale inherited from an
/// ancestor moved the node, which is written).
fn warn_unshown_scales(
    nodes: &[Elem],
    m: &Matched,
    parent: &[Option<usize>],
    resid: &[DMat3],
    warnings: &mut Vec<String>,
) {
    for (g, nd) in nodes.iter().enumerate() {
        let Some(r) = m.res1_of.get(g).copied().flatten() else {
            continue;
        };
        let own = node_trs_full(nd).0.s;
        let own_scaled = own
            .iter()
            .any(|x| (f64::from(*x) - 1.0).abs() > RESIDUAL_TOL);
        if !own_scaled || is_identity(&resid[g]) || idx(nd, "mesh").is_some() {
            continue;
        }
        let carries = (0..nodes.len()).any(|c| {
            parent[c] == Some(g)
                && (m.res1_of.get(c).copied().flatten().is_some()
                    || msh_extras(&nodes[c]).is_some_and(|e| e.contains_key("cell")))
        });
        if !carries {
            warnings.push(format!(
                "Res1 node {r} {:?}: scale {:?} not written: the node shows no mesh in this export and carries no node (MSH nodes have no scale; its other cells keep their shape)",
                name_of(nd),
                own
            ));
        }
    }
}

/// Writes one node's rigid TRS and maps its translation and rotation
/// channels (every non-clip animation).
fn write_node(doc: &mut GltfFile, e: &NodeEdit) -> Result<(), ImportError> {
    let nd = &mut doc.list_mut(TopArray::Nodes)[e.g];
    if nd.is_object() {
        nd.remove("matrix");
        nd.remove("scale");
        nd.insert("translation", json!(e.t));
        nd.insert("rotation", json!(e.r));
    }
    let t_edit = !is_identity(&e.t_map) || e.dt.iter().any(|x| *x != 0.0);
    let r_edit = !e.dq.abs_diff_eq(DQuat::IDENTITY, 0.0);
    if !t_edit && !r_edit {
        return Ok(());
    }
    let n_anim = doc.animations().len();
    for ai in 0..n_anim {
        let a = &doc.animations()[ai];
        if msh_extras(a).is_some_and(|x| x.contains_key(crate::gltf_export::msh_extras::CLIP_KEY)) {
            continue;
        }
        let n_ch = arr(a, "channels").len();
        for ci in 0..n_ch {
            let ch = &doc.animations()[ai]["channels"][ci];
            if idx(&ch["target"], "node") != Some(e.g) {
                continue;
            }
            let path = ch["target"]["path"].as_str().unwrap_or("").to_string();
            let Some(si) = idx(ch, "sampler") else {
                continue;
            };
            let s = doc.animations()[ai]["samplers"][si].clone();
            let cubic = s.get("interpolation").and_then(Value::as_str) == Some("CUBICSPLINE");
            let Some(oa) = idx(&s, "output") else {
                continue;
            };
            let what = format!("animation {ai} channel {ci} output");
            let vals = match path.as_str() {
                "translation" if t_edit => {
                    let v = doc.floats(oa, 3, &what)?;
                    map_translations(&v, cubic, e)
                }
                "rotation" if r_edit => {
                    let v = doc.floats(oa, 4, &what)?;
                    map_rotations(&v, e.dq)
                }
                _ => continue,
            };
            let ty = if path == "rotation" { "VEC4" } else { "VEC3" };
            let na = push_floats(doc, &vals, ty, false);
            let mut s2 = s;
            s2["output"] = json!(na);
            let anim = &mut doc.list_mut(TopArray::Animations)[ai];
            let samplers = anim["samplers"]
                .as_array_mut()
                .expect("a sampler was read from this array");
            samplers.push(s2);
            let ns = samplers.len() - 1;
            anim["channels"][ci]["sampler"] = json!(ns);
        }
    }
    Ok(())
}

/// Translation outputs `t_map · (v + dt)` (tangents: `t_map · v`).
fn map_translations(v: &[f32], cubic: bool, e: &NodeEdit) -> Vec<f32> {
    v.chunks_exact(3)
        .enumerate()
        .flat_map(|(i, c)| {
            let is_value = !cubic || i % 3 == 1;
            let off = if is_value { e.dt } else { [0.0; 3] };
            let x = DVec3::new(
                f64::from(c[0] + off[0]),
                f64::from(c[1] + off[1]),
                f64::from(c[2] + off[2]),
            );
            (e.t_map * x).to_array().map(|y| y as f32)
        })
        .collect()
}

/// Rotation outputs (and tangents) `dq · v`.
fn map_rotations(v: &[f32], dqv: DQuat) -> Vec<f32> {
    v.chunks_exact(4)
        .flat_map(|c| {
            let q = DQuat::from_xyzw(c[0].into(), c[1].into(), c[2].into(), c[3].into());
            let r = dqv * q;
            [r.x as f32, r.y as f32, r.z as f32, r.w as f32]
        })
        .collect()
}

/// Appends `vals` as a new buffer, buffer view and FLOAT accessor of type
/// `ty`; returns the accessor index.
fn push_floats(doc: &mut GltfFile, vals: &[f32], ty: &str, minmax: bool) -> usize {
    let n = if ty == "VEC4" { 4 } else { 3 };
    let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
    let len = bytes.len();
    doc.buffers.push(bytes);
    let b = doc.buffers.len() - 1;
    let push = |json: &mut Value, key: &str, v: Value| -> usize {
        if !json.get(key).is_some_and(Value::is_array) {
            json[key] = json!([]);
        }
        let a = json[key].as_array_mut().expect("made an array above");
        a.push(v);
        a.len() - 1
    };
    push(&mut doc.json, "buffers", json!({ "byteLength": len }));
    let view = doc.push_buffer_view(json!({"buffer": b, "byteOffset": 0, "byteLength": len}));
    let mut acc =
        json!({"bufferView": view, "componentType": 5126, "count": vals.len() / n, "type": ty});
    if minmax && !vals.is_empty() {
        let lo: Vec<f32> = (0..n)
            .map(|k| {
                vals.iter()
                    .skip(k)
                    .step_by(n)
                    .copied()
                    .fold(f32::INFINITY, f32::min)
            })
            .collect();
        let hi: Vec<f32> = (0..n)
            .map(|k| {
                vals.iter()
                    .skip(k)
                    .step_by(n)
                    .copied()
                    .fold(f32::NEG_INFINITY, f32::max)
            })
            .collect();
        acc["min"] = json!(lo);
        acc["max"] = json!(hi);
    }
    doc.push_accessor(acc)
}

/// Bakes each mesh's residual into its vertices when every node showing it
/// has the same residual; else a warning names the nodes.
fn bake_meshes(
    doc: &mut GltfFile,
    m: &Matched,
    resid: &[DMat3],
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    let nodes = doc.nodes().to_vec();
    let mut users: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (g, nd) in nodes.iter().enumerate() {
        let carrier = msh_extras(nd).is_some_and(|e| e.contains_key("cell"));
        let is_cpt = msh_extras(nd).is_some_and(|e| e.contains_key(CONTROL_POINT_KEY));
        if is_cpt || !(carrier || m.res1_of.get(g).copied().flatten().is_some()) {
            continue;
        }
        if let Some(mesh) = idx(nd, "mesh") {
            users.entry(mesh).or_default().push(g);
        }
    }
    for (mesh, gs) in users {
        let p = resid[gs[0]];
        if gs.iter().all(|&g| is_identity(&resid[g])) {
            continue;
        }
        let same = gs
            .iter()
            .all(|&g| frobenius(&(resid[g] - p)) <= RESIDUAL_TOL * frobenius(&p).max(1.0));
        if !same {
            let list: Vec<String> = gs
                .iter()
                .map(|&g| format!("{:?} ({})", name_of(&nodes[g]), describe(&resid[g])))
                .collect();
            warnings.push(format!(
                "mesh {mesh} {:?} is shown by nodes with different scales: {}; their scale is not written (one MSH slot has one shape; apply the scale in Blender)",
                name_of(&doc.meshes()[mesh]),
                list.join(", ")
            ));
            continue;
        }
        bake_mesh(doc, mesh, &p)?;
    }
    Ok(())
}

/// Positions `p · v`; normals `p⁻ᵀ · n` renormalised (kept as they are for a
/// uniform `p`, which does not turn them).
fn bake_mesh(doc: &mut GltfFile, mesh: usize, p: &DMat3) -> Result<(), ImportError> {
    let n_prim = doc
        .meshes()
        .get(mesh)
        .map_or(0, |m| arr(m, "primitives").len());
    let nrm = p.inverse().transpose();
    for pi in 0..n_prim {
        let attrs = doc.meshes()[mesh]["primitives"][pi]["attributes"].clone();
        if let Some(a) = idx(&attrs, "POSITION") {
            let v = doc.floats(a, 3, &format!("mesh {mesh} primitive {pi} POSITION"))?;
            let out: Vec<f32> = v
                .chunks_exact(3)
                .flat_map(|c| {
                    (*p * DVec3::new(c[0].into(), c[1].into(), c[2].into()))
                        .to_array()
                        .map(|x| x as f32)
                })
                .collect();
            let na = push_floats(doc, &out, "VEC3", true);
            doc.list_mut(TopArray::Meshes)[mesh]["primitives"][pi]["attributes"]["POSITION"] =
                json!(na);
        }
        if let Some(a) = idx(&attrs, "NORMAL").filter(|_| !is_uniform(p)) {
            let v = doc.floats(a, 3, &format!("mesh {mesh} primitive {pi} NORMAL"))?;
            let out: Vec<f32> = v
                .chunks_exact(3)
                .flat_map(|c| {
                    let n = nrm * DVec3::new(c[0].into(), c[1].into(), c[2].into());
                    n.try_normalize().unwrap_or(n).to_array().map(|x| x as f32)
                })
                .collect();
            let na = push_floats(doc, &out, "VEC3", false);
            doc.list_mut(TopArray::Meshes)[mesh]["primitives"][pi]["attributes"]["NORMAL"] =
                json!(na);
        }
    }
    Ok(())
}
