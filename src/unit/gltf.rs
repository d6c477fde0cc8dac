//! Control points and clips into an exported glTF document
//! (unit-files-notes §5.1 "Blender mapping", §1.7). Works on the output of
//! [`crate::gltf_export::export`], where glTF node `i` is Res1 node `i` and
//! animation 0 is the whole timeline.
//!
//! - Control points: one empty per point, named as in the file, child of
//!   its node, at its position, its local +Y along the direction (the
//!   length, carrier node and raw fields in `extras.msh.control_point`).
//! - Clips: one glTF animation per clip, channels only on the clip's nodes,
//!   keys = the timeline's keys inside the clip's frame range plus the
//!   timeline sampled at both ends (so the ends equal the timeline there),
//!   in clip time ([`ClipTime`]: 0 at the frame the game starts the clip
//!   from, so a reversed clip plays backwards along the timeline, as the
//!   game plays it); the source in `extras.msh.clip`, the clip time's
//!   timeline frames in `extras.msh.start` / `extras.msh.end`.

use std::collections::BTreeMap;

use gltf_json as json;
use json::accessor::{ComponentType, Type};
use json::animation::Property;
use json::validation::{Checked, USize64};
use json::{Index, Root};
use serde_json::{json, Value};

use super::clips::{Clip, ClipTime};
use super::cpt::ControlPoints;
use crate::gltf_export::bin::{accessor, view, AccessorSpec, Bin};
use crate::gltf_export::{axes, extras, ExportError, Namer, Up};

pub(crate) use crate::gltf_export::msh_extras::rotation_to;
pub use crate::gltf_export::msh_extras::{
    direction_of, point_turn, PointTurn, CLIP_KEY, CONTROL_POINT_KEY, POINT_TURN_TOL,
};

/// Adds one empty per control point (unit-files-notes §5.1) under the first
/// `res1_nodes` glTF nodes; a point on a node outside them hangs on the
/// scene root, with a warning. Returns the glTF indices of the empties.
pub fn add_control_points(
    root: &mut Root,
    cpt: &ControlPoints,
    res1_nodes: usize,
    up: Up,
    warnings: &mut Vec<String>,
) -> Result<Vec<usize>, ExportError> {
    let mut namer = Namer::default();
    for n in &root.nodes {
        if let Some(name) = &n.name {
            namer.unique(name.clone());
        }
    }
    let mut added = Vec::with_capacity(cpt.points.len());
    for (i, p) in cpt.points.iter().enumerate() {
        let ex = json!({"msh": {CONTROL_POINT_KEY: {
            "index": i, "name": p.name(), "node": p.node, "carrier": p.carrier,
            "word0": format!("{:#x}", p.word0), "position": p.position, "direction": p.direction,
            "magnitude": p.magnitude(),
        }}});
        let node = json::Node {
            name: Some(namer.unique(p.name())),
            translation: Some(axes::vec3(up, p.position)),
            rotation: Some(json::scene::UnitQuaternion(rotation_to(axes::vec3(
                up,
                p.direction,
            )))),
            extras: extras(&ex)?,
            ..Default::default()
        };
        let idx = root.push(node);
        match usize::try_from(p.node).ok().filter(|&n| n < res1_nodes) {
            Some(n) => root.nodes[n]
                .children
                .get_or_insert_with(Vec::new)
                .push(idx),
            None => {
                warnings.push(format!(
                    "cpt point {i} ({}): node {} outside the model's {res1_nodes} nodes; placed at the scene root",
                    p.name(),
                    p.node
                ));
                if let Some(s) = root.scene {
                    root.scenes[s.value()].nodes.push(idx);
                }
            }
        }
        added.push(idx.value());
    }
    Ok(added)
}

/// One keyed curve of the timeline: times (s) and flat values.
#[derive(Debug, Clone)]
struct Curve {
    times: Vec<f32>,
    values: Vec<f32>,
    width: usize,
}

impl Curve {
    fn value(&self, k: usize) -> &[f32] {
        &self.values[k * self.width..(k + 1) * self.width]
    }

    /// The curve at `t` as glTF plays it: held before the first and after
    /// the last key, lerp (translation) or shortest-path slerp (rotation).
    fn sample(&self, t: f32) -> Vec<f32> {
        let n = self.times.len();
        if t <= self.times[0] {
            return self.value(0).to_vec();
        }
        if t >= self.times[n - 1] {
            return self.value(n - 1).to_vec();
        }
        let k = self.times.partition_point(|&x| x <= t) - 1;
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let a = (t - t0) / (t1 - t0);
        let (p, q) = (self.value(k), self.value(k + 1));
        if self.width == 4 {
            slerp(p, q, a)
        } else {
            p.iter().zip(q).map(|(x, y)| x + a * (y - x)).collect()
        }
    }
}

fn slerp(p: &[f32], q: &[f32], a: f32) -> Vec<f32> {
    let p: Vec<f64> = p.iter().map(|&x| f64::from(x)).collect();
    let mut q: Vec<f64> = q.iter().map(|&x| f64::from(x)).collect();
    let mut d: f64 = (0..4).map(|k| p[k] * q[k]).sum();
    if d < 0.0 {
        q.iter_mut().for_each(|x| *x = -*x);
        d = -d;
    }
    let a = f64::from(a);
    let (s0, s1) = if d > 0.9995 {
        (1.0 - a, a)
    } else {
        let th = d.min(1.0).acos();
        (((1.0 - a) * th).sin() / th.sin(), (a * th).sin() / th.sin())
    };
    let mut r: Vec<f64> = (0..4).map(|k| s0 * p[k] + s1 * q[k]).collect();
    let n = r.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 {
        r.iter_mut().for_each(|x| *x /= n);
    }
    r.into_iter().map(|x| x as f32).collect()
}

/// The f32 data of accessor `a` (tightly packed, as the exporter writes it).
fn read_accessor(root: &Root, bin: &[u8], a: Index<json::Accessor>) -> Option<(Vec<f32>, usize)> {
    let acc = root.accessors.get(a.value())?;
    let width = match acc.type_ {
        Checked::Valid(Type::Scalar) => 1,
        Checked::Valid(Type::Vec3) => 3,
        Checked::Valid(Type::Vec4) => 4,
        _ => return None,
    };
    let v = root.buffer_views.get(acc.buffer_view?.value())?;
    let start =
        v.byte_offset.map_or(0, |o| o.0 as usize) + acc.byte_offset.map_or(0, |o| o.0 as usize);
    let len = acc.count.0 as usize * width * 4;
    let bytes = bin.get(start..start.checked_add(len)?)?;
    let vals = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Some((vals, width))
}

/// Per glTF node: the timeline's translation and rotation curves.
type Timeline = BTreeMap<usize, [Option<Curve>; 2]>;

fn timeline(root: &Root, bin: &[u8], anim: usize) -> Timeline {
    let mut out = Timeline::new();
    let a = &root.animations[anim];
    for ch in &a.channels {
        let slot = match ch.target.path {
            Checked::Valid(Property::Translation) => 0,
            Checked::Valid(Property::Rotation) => 1,
            _ => continue,
        };
        let Some(s) = a.samplers.get(ch.sampler.value()) else {
            continue;
        };
        let (Some((times, _)), Some((values, width))) = (
            read_accessor(root, bin, s.input),
            read_accessor(root, bin, s.output),
        ) else {
            continue;
        };
        if times.is_empty() || values.len() != times.len() * width {
            continue;
        }
        out.entry(ch.target.node.value()).or_insert([None, None])[slot] = Some(Curve {
            times,
            values,
            width,
        });
    }
    out
}

/// The clip's curve for one path: the timeline's keys strictly inside
/// `(t0, t1)` plus the timeline sampled at `t0` and `t1`; a node without
/// a curve holds its rest value.
fn clip_curve(c: Option<&Curve>, rest: Vec<f32>, t0: f32, t1: f32) -> (Vec<f32>, Vec<f32>) {
    let mut times = vec![t0];
    let mut vals = Vec::new();
    match c {
        Some(c) => {
            vals.extend(c.sample(t0));
            for (k, &t) in c.times.iter().enumerate() {
                if t > t0 && t < t1 {
                    times.push(t);
                    vals.extend_from_slice(c.value(k));
                }
            }
            if t1 > t0 {
                times.push(t1);
                vals.extend(c.sample(t1));
            }
        }
        None => {
            vals.extend(&rest);
            if t1 > t0 {
                times.push(t1);
                vals.extend(rest);
            }
        }
    }
    (times, vals)
}

/// Rewrites a clip curve from timeline seconds to clip seconds (`ct`,
/// frames at `fps`): times `|t − start|`, keys reordered for a clip
/// running toward lower frames.
fn to_clip_time(
    (times, vals): (Vec<f32>, Vec<f32>),
    ct: ClipTime,
    fps: f32,
) -> (Vec<f32>, Vec<f32>) {
    let start = ct.start / fps;
    let width = vals.len() / times.len().max(1);
    let mut keys: Vec<(f32, &[f32])> = times
        .iter()
        .zip(vals.chunks(width.max(1)))
        .map(|(&t, v)| ((t - start) * ct.dir(), v))
        .collect();
    if ct.dir() < 0.0 {
        keys.reverse();
    }
    // `f32::max` may return either zero for -0.0 vs 0.0 (IEEE maxNum), and
    // which one depends on the optimisation level: the clip's first time
    // (`-(t - start)` on a reversed clip) is written +0.0 always, so every
    // build writes the same bytes.
    let t = keys
        .iter()
        .map(|k| if k.0 > 0.0 { k.0 } else { 0.0 })
        .collect();
    let v = keys.iter().flat_map(|k| k.1.iter().copied()).collect();
    (t, v)
}

/// One node's clip curves, ready to write.
struct NodeCurves {
    node: usize,
    t: (Vec<f32>, Vec<f32>),
    r: (Vec<f32>, Vec<f32>),
}

/// Adds one glTF animation per clip (unit-files-notes §1.7) after the
/// timeline (animation 0, when the model has one), into `bin` (the
/// export's buffer 0, whose length is updated). Returns each clip's
/// animation index (`None` for a clip without nodes in the model).
///
/// # Errors
/// `gltf.json` when the extras cannot be serialised.
pub fn add_clips(
    root: &mut Root,
    bin: &mut Vec<u8>,
    clips: &[Clip],
    fps: f32,
) -> Result<Vec<Option<usize>>, ExportError> {
    let tl = if root.animations.is_empty() {
        Timeline::new()
    } else {
        timeline(root, bin, 0)
    };
    let mut b = Bin {
        data: std::mem::take(bin),
    };
    let mut out = Vec::with_capacity(clips.len());
    for clip in clips {
        let [lo, hi] = clip.range();
        let (t0, t1) = (lo / fps, hi / fps);
        let ct = ClipTime::of(clip);
        let curves: Vec<NodeCurves> = clip
            .nodes
            .iter()
            .filter(|&&n| n < root.nodes.len())
            .map(|&n| {
                let nd = &root.nodes[n];
                let rest_t = nd.translation.unwrap_or([0.0; 3]).to_vec();
                let rest_r = nd.rotation.map_or([0.0, 0.0, 0.0, 1.0], |q| q.0).to_vec();
                let c = tl.get(&n);
                NodeCurves {
                    node: n,
                    t: to_clip_time(
                        clip_curve(c.and_then(|c| c[0].as_ref()), rest_t, t0, t1),
                        ct,
                        fps,
                    ),
                    r: to_clip_time(
                        clip_curve(c.and_then(|c| c[1].as_ref()), rest_r, t0, t1),
                        ct,
                        fps,
                    ),
                }
            })
            .collect();
        if curves.is_empty() {
            out.push(None);
            continue;
        }
        let ex = json!({"msh": {CLIP_KEY: clip.source, "name": clip.name, "fps": fps,
                                 "start": ct.start, "end": ct.end}});
        out.push(Some(write_clip(
            root,
            &mut b,
            &clip.name,
            &curves,
            extras(&ex)?,
        )));
    }
    b.align4();
    *bin = b.data;
    if !bin.is_empty() {
        match root.buffers.first_mut() {
            Some(buf) => buf.byte_length = USize64(bin.len() as u64),
            None => {
                root.push(json::Buffer {
                    byte_length: USize64(bin.len() as u64),
                    name: None,
                    uri: None,
                    extensions: None,
                    extras: None,
                });
            }
        }
    }
    Ok(out)
}

fn write_clip(
    root: &mut Root,
    b: &mut Bin,
    name: &str,
    curves: &[NodeCurves],
    ex: json::Extras,
) -> usize {
    let start = b.begin();
    let mut offs = Vec::with_capacity(curves.len() * 2);
    for c in curves {
        for (times, vals) in [&c.t, &c.r] {
            let ot = b.data.len() - start;
            b.put_f32s(times);
            let ov = b.data.len() - start;
            b.put_f32s(vals);
            offs.push((ot, ov, times.len()));
        }
    }
    let v = view(root, b, start, None, None, "clip");
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for (k, (ot, ov, n)) in offs.into_iter().enumerate() {
        let c = &curves[k / 2];
        let times = if k % 2 == 0 { &c.t.0 } else { &c.r.0 };
        let (ty, path) = if k % 2 == 0 {
            (Type::Vec3, Property::Translation)
        } else {
            (Type::Vec4, Property::Rotation)
        };
        let spec = |offset, ty, min, max| AccessorSpec {
            view: v,
            offset,
            count: n,
            component: ComponentType::F32,
            ty,
            min,
            max,
        };
        let input = accessor(
            root,
            spec(ot, Type::Scalar, Some(&times[..1]), Some(&times[n - 1..])),
        );
        let output = accessor(root, spec(ov, ty, None, None));
        crate::gltf_export::anim::push_linear_channel(
            &mut samplers,
            &mut channels,
            input,
            output,
            c.node,
            path,
        );
    }
    root.push(json::Animation {
        extensions: None,
        extras: ex,
        channels,
        name: Some(name.to_string()),
        samplers,
    })
    .value()
}

/// Mirrors the clip table and the control-point count into the scene's
/// `extras.msh` (`clips`: name, kind, frames, animation index;
/// `control_points`), since Blender may not keep animation extras
/// (unit-files-notes §1.7.5).
pub fn mirror_in_scene(
    root: &mut Root,
    clips: &[Clip],
    anims: &[Option<usize>],
    points: usize,
) -> Result<(), ExportError> {
    let Some(s) = root.scene else {
        return Ok(());
    };
    let scene = &mut root.scenes[s.value()];
    let mut ex: Value = match &scene.extras {
        Some(raw) => serde_json::from_str(raw.get())?,
        None => json!({}),
    };
    let table: Vec<Value> = clips
        .iter()
        .zip(anims)
        .map(|(c, a)| {
            let ct = ClipTime::of(c);
            json!({"name": c.name, "kind": c.kind.as_str(), "first": c.first, "last": c.last,
                   "start": ct.start, "end": ct.end, "animation": a})
        })
        .collect();
    if !ex.get("msh").is_some_and(Value::is_object) {
        ex["msh"] = json!({});
    }
    ex["msh"]["clips"] = Value::from(table);
    ex["msh"]["control_points"] = Value::from(points);
    scene.extras = extras(&ex)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reversed clip (start 10, end 4) keyed at its start frame: clip
    /// time 0 is written +0.0 (bits 0), never -0.0, in every build.
    #[test]
    fn a_reversed_clip_starts_at_positive_zero() {
        let ct = ClipTime {
            start: 10.0,
            end: 4.0,
        };
        let fps = 2.0;
        let (t, v) = to_clip_time((vec![2.0, 3.5, 5.0], vec![1.0, 2.0, 3.0]), ct, fps);
        assert_eq!(
            t.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            [0.0f32, 1.5, 3.0].map(f32::to_bits)
        );
        assert_eq!(v, [3.0, 2.0, 1.0]);
    }

    #[test]
    fn rotation_points_y_along_direction() {
        for d in [
            [0.0, 0.0, 2.0],
            [1.0, 0.0, 0.0],
            [0.0, -3.0, 0.0],
            [0.3, 0.4, -0.5],
        ] {
            let q = rotation_to(d);
            // Rotate +Y by q.
            let [x, y, z, w] = q.map(f64::from);
            let v = [
                2.0 * (x * y - w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z + w * x),
            ];
            let n = axes::normalize3(d.map(f64::from)).unwrap();
            for k in 0..3 {
                assert!((v[k] - f64::from(n[k])).abs() < 1e-6, "{d:?} -> {v:?}");
            }
        }
        assert_eq!(rotation_to([0.0; 3]), [0.0, 0.0, 0.0, 1.0]);
        for d in [[0.0, 0.0, 1.0], [0.6, -0.8, 0.0], [0.0, -1.0, 0.0]] {
            let back = direction_of(rotation_to(d));
            assert!(
                (0..3).all(|k| (back[k] - d[k]).abs() < 1e-6),
                "{d:?} -> {back:?}"
            );
        }
    }

    #[test]
    fn point_turns_are_told_apart() {
        let d = [0.3, 0.4, -0.5];
        let q = rotation_to(d);
        assert_eq!(point_turn(q, d), PointTurn::Same);
        assert_eq!(point_turn(q.map(|x| -x), d), PointTurn::Same);
        // A roll: turned about the direction itself.
        let w = glam::Vec3::from(d).normalize();
        let roll = glam::Quat::from_axis_angle(w, 0.5) * glam::Quat::from_array(q);
        assert_eq!(point_turn(roll.to_array(), d), PointTurn::Rolled);
        // A turn: somewhere else, with the new direction.
        match point_turn(rotation_to([1.0, 0.0, 0.0]), d) {
            PointTurn::Turned(n) => assert!((n[0] - 1.0).abs() < 1e-6, "{n:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn clip_curve_cuts_and_samples() {
        let c = Curve {
            times: vec![0.0, 1.0, 2.0, 3.0],
            values: vec![
                0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 20.0, 0.0, 0.0, 30.0, 0.0, 0.0,
            ],
            width: 3,
        };
        let (t, v) = clip_curve(Some(&c), vec![0.0; 3], 0.5, 2.0);
        assert_eq!(t, vec![0.5, 1.0, 2.0]);
        assert_eq!(v, vec![5.0, 0.0, 0.0, 10.0, 0.0, 0.0, 20.0, 0.0, 0.0]);
        let (t, v) = clip_curve(None, vec![1.0, 2.0, 3.0], 1.0, 1.0);
        assert_eq!((t, v), (vec![1.0], vec![1.0, 2.0, 3.0]));
        // Reversed (frames 2 -> 0.5 at 1 fps): clip time from 0, keys reordered.
        let back = ClipTime {
            start: 2.0,
            end: 0.5,
        };
        let (t, v) = to_clip_time(clip_curve(Some(&c), vec![0.0; 3], 0.5, 2.0), back, 1.0);
        assert_eq!(t, vec![0.0, 1.0, 1.5]);
        assert_eq!(v, vec![20.0, 0.0, 0.0, 10.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
    }
}
