//! The glTF animation of a model (gltf-mapping.md, "Animation";
//! msh-animation §3, §5).
//!
//! One channel pair (translation, rotation; `LINEAR`) per node that has a
//! frame map. A canonical track goes out key for key at `key.time / fps`; a
//! track the engine would not play back as a plain linear/slerp curve is
//! baked: the engine [`Sampler`] at every frame `0..frame_count`.
//!
//! Densified rotations: glTF asks for slerp between rotation keys, but
//! Blender (and other DCC tools) interpolate quaternion components linearly
//! and renormalise. For a segment rotating by more than
//! [`MAX_SEGMENT_ANGLE`] that differs visibly from the engine (about 0.016
//! rad at 90°), so such segments get extra keys sampled from the engine (at
//! integer frames where the segment spans enough of them, else at even
//! fractions of it) until every sub-segment rotates by at most that angle
//! (nlerp then stays within 2e-5 rad of slerp). The extra keys lie on the
//! engine's own curve, so glTF slerp playback is unchanged, and `gltf2msh`
//! drops them again (key reduction), giving back the stored track. The
//! animation's `extras.msh.densified` lists them (`{"<glTF node>": [frame,
//! ...]}`), so an editor can hide them: the Blender add-on removes those
//! keys on import, leaving one key per stored AnimKey24 (issue 24 item 4).

use gltf_json as json;
use json::accessor::{ComponentType, Type};
use json::animation::{Channel, Interpolation, Property, Sampler as JSampler, Target};
use json::validation::Checked;
use json::{Index, Root};

use super::axes;
use super::bin::{accessor, view, AccessorSpec, Bin};
use super::Up;
use crate::anim::{self, Sampler, Track};
use crate::msh::Model;

/// Largest rotation (radians, 10°) of a channel segment before extra keys are
/// inserted (see the module docs).
pub const MAX_SEGMENT_ANGLE: f32 = 10.0 * std::f32::consts::PI / 180.0;

/// Times strictly inside `(t0, t1)` (frames) that split a segment rotating
/// from `q0` to `q1` (glTF quaternions) into pieces of at most
/// [`MAX_SEGMENT_ANGLE`]: integer frames when the segment spans enough of
/// them, else even fractions of the segment; empty when the segment is small.
fn split_times(t0: f32, t1: f32, q0: [f32; 4], q1: [f32; 4]) -> Vec<f32> {
    let dot: f32 = (0..4).map(|k| q0[k] * q1[k]).sum::<f32>().abs().min(1.0);
    let angle = 2.0 * dot.acos();
    let gap = t1 - t0;
    if angle <= MAX_SEGMENT_ANGLE || gap <= 0.0 {
        return Vec::new();
    }
    let pieces = (angle / MAX_SEGMENT_ANGLE).ceil();
    let mut times: Vec<f32> = if pieces <= gap {
        (1..pieces as u32)
            .map(|i| (t0 + (gap * i as f32 / pieces).round()).clamp(t0 + 1.0, t1 - 1.0))
            .collect()
    } else {
        (1..pieces as u32)
            .map(|i| t0 + gap * i as f32 / pieces)
            .filter(|&t| t > t0 && t < t1)
            .collect()
    };
    times.dedup();
    times
}

/// What [`build`] produced.
#[derive(Debug, Default)]
pub struct AnimOut {
    /// Nodes that got channels.
    pub animated: usize,
    /// Nodes whose track was baked.
    pub baked: Vec<usize>,
    /// Per node, the frames of the extra rotation keys (module docs).
    pub densified: Vec<(usize, Vec<f32>)>,
}

/// Key times, translations and rotations of one node, glTF-ready.
#[derive(Default)]
struct Curve {
    times: Vec<f32>,
    pos: Vec<[f32; 3]>,
    rot: Vec<[f32; 4]>,
}

impl Curve {
    fn push(&mut self, time: f32, pos: [f32; 3], mut rot: [f32; 4]) {
        // Sign continuity: the engine's interpolation takes the short way
        // (msh-animation §4.4, `dot < 0` flips); glTF slerp gets the same
        // path when consecutive keys have a non-negative dot.
        if let Some(prev) = self.rot.last() {
            let d: f32 = (0..4).map(|k| prev[k] * rot[k]).sum();
            if d < 0.0 {
                rot = rot.map(|c| -c);
            }
        }
        self.times.push(time);
        self.pos.push(pos);
        self.rot.push(rot);
    }
}

/// Extra conditions, beyond [`anim::is_canonical`], under which a keyed
/// curve reproduces the engine: finite, strictly increasing times starting
/// at 0 (before the first key time the engine shows the fallback key) and
/// ending before `frame_count` (past it the engine also shows the fallback).
fn plays_back_linearly(model: &Model, keys: &[crate::msh::AnimKey24]) -> bool {
    let Some(first) = keys.first() else {
        return false;
    };
    let last = keys[keys.len() - 1].time;
    first.time == 0.0
        && keys.windows(2).all(|w| w[0].time < w[1].time)
        && keys
            .iter()
            .all(|k| k.time.is_finite() && k.time.fract() == 0.0)
        && f64::from(last) < f64::from(model.frame_count)
}

/// A canonical track key for key (`keys`, node `node`) into `c`, with the
/// densified rotation keys (module docs), whose frames go to `extra`.
fn keyed_curve(
    sampler: &Sampler<'_>,
    (up, fps): (Up, f32),
    node: usize,
    keys: &[crate::msh::AnimKey24],
    c: &mut Curve,
    extra_frames: &mut Vec<f32>,
    work: &mut crate::limits::Budget,
) -> Result<(), super::ExportError> {
    use crate::limits::UNITS_PER_SAMPLE;
    let layout = sampler.layout();
    let mut prev: Option<(f32, [f32; 4])> = None;
    for k in keys {
        let q = axes::engine_quat_to_gltf(up, anim::decode_quat(k.q, layout));
        if let Some((t0, q0)) = prev {
            let extra = split_times(t0, k.time, q0, q);
            super::budget::spend(
                work,
                (extra.len() as u64 + 1) * UNITS_PER_SAMPLE,
                &format!("the keys of node {node}"),
            )?;
            for f in extra {
                extra_frames.push(f);
                let p = sampler.node_pose(node, f);
                c.push(
                    f / fps,
                    axes::vec3(up, p.pos),
                    axes::engine_quat_to_gltf(up, p.q),
                );
            }
        }
        prev = Some((k.time, q));
        c.push(k.time / fps, axes::vec3(up, k.pos), q);
    }
    Ok(())
}

/// The curve of `node` sampled from the engine at each of the model's
/// frames (msh-animation §3), into `c`; every sample spent from `work`
/// first.
///
/// # Errors
/// `limits.work` when the frames cost more than `work` holds.
fn baked_curve(
    sampler: &Sampler<'_>,
    (up, fps): (Up, f32),
    node: usize,
    c: &mut Curve,
    work: &mut crate::limits::Budget,
) -> Result<(), super::ExportError> {
    use crate::limits::UNITS_PER_SAMPLE;
    let model = sampler.model();
    super::budget::spend(
        work,
        u64::from(model.frame_count.max(1)) * UNITS_PER_SAMPLE,
        &format!(
            "baking node {} at each of {} frames",
            node,
            model.frame_count.max(1)
        ),
    )?;
    for f in 0..model.frame_count.max(1) {
        let p = sampler.node_pose(node, f as f32);
        c.push(
            f as f32 / fps,
            axes::vec3(up, p.pos),
            axes::engine_quat_to_gltf(up, p.q),
        );
    }
    Ok(())
}

/// Adds the model's animation (named `name`) to `root` when any node has a
/// frame map. `tracks` comes from [`anim::tracks`]. Every sample is spent
/// from `work` first (`limits.work`).
#[allow(clippy::too_many_arguments)]
pub fn build(
    root: &mut Root,
    bin: &mut Bin,
    sampler: &Sampler<'_>,
    tracks: &[Track],
    up: Up,
    fps: f32,
    name: &str,
    work: &mut crate::limits::Budget,
) -> Result<AnimOut, super::ExportError> {
    let model = sampler.model();
    let empty: &[crate::msh::AnimKey24] = &[];
    let pool = model.keys.as_deref().unwrap_or(empty);
    let mut out = AnimOut::default();
    let mut curves: Vec<(usize, Curve)> = Vec::new();
    for t in tracks.iter().filter(|t| t.has_map) {
        let keys = pool.get(t.first_key..=t.last_key).unwrap_or(empty);
        let mut c = Curve::default();
        let mut extra_frames = Vec::new();
        if !keys.is_empty() && anim::is_canonical(model, t) && plays_back_linearly(model, keys) {
            keyed_curve(
                sampler,
                (up, fps),
                t.node,
                keys,
                &mut c,
                &mut extra_frames,
                work,
            )?;
        } else {
            // msh-animation §3: sample the engine at every frame.
            baked_curve(sampler, (up, fps), t.node, &mut c, work)?;
            out.baked.push(t.node);
        }
        if !extra_frames.is_empty() {
            out.densified.push((t.node, extra_frames));
        }
        curves.push((t.node, c));
    }
    if curves.is_empty() {
        return Ok(out);
    }
    let start = bin.begin();
    let mut offsets = Vec::with_capacity(curves.len());
    for (_, c) in &curves {
        let o_t = bin.data.len() - start;
        bin.put_f32s(&c.times);
        let o_p = bin.data.len() - start;
        for p in &c.pos {
            bin.put_f32s(p);
        }
        let o_r = bin.data.len() - start;
        for r in &c.rot {
            bin.put_f32s(r);
        }
        offsets.push((o_t, o_p, o_r));
    }
    let v = view(root, bin, start, None, None, "animation");
    let mut channels = Vec::with_capacity(curves.len() * 2);
    let mut samplers = Vec::with_capacity(curves.len() * 2);
    for ((node, c), (o_t, o_p, o_r)) in curves.iter().zip(offsets) {
        let n = c.times.len();
        let (tmin, tmax) = (c.times[0], c.times[n - 1]);
        let input = accessor(
            root,
            AccessorSpec {
                view: v,
                offset: o_t,
                count: n,
                component: ComponentType::F32,
                ty: Type::Scalar,
                min: Some(&[tmin]),
                max: Some(&[tmax]),
            },
        );
        for (offset, ty, path) in [
            (o_p, Type::Vec3, Property::Translation),
            (o_r, Type::Vec4, Property::Rotation),
        ] {
            let output = accessor(
                root,
                AccessorSpec {
                    view: v,
                    offset,
                    count: n,
                    component: ComponentType::F32,
                    ty,
                    min: None,
                    max: None,
                },
            );
            push_linear_channel(&mut samplers, &mut channels, input, output, *node, path);
        }
        out.animated += 1;
    }
    root.push(json::Animation {
        extensions: None,
        extras: densified_extras(&out.densified)?,
        channels,
        name: (!name.is_empty()).then(|| name.to_string()),
        samplers,
    });
    Ok(out)
}

/// `extras.msh.densified` of the timeline animation (module docs); `None`
/// when no key was added.
fn densified_extras(d: &[(usize, Vec<f32>)]) -> Result<json::Extras, super::ExportError> {
    if d.is_empty() {
        return Ok(None);
    }
    let map: serde_json::Map<String, serde_json::Value> = d
        .iter()
        .map(|(n, f)| (n.to_string(), serde_json::json!(f)))
        .collect();
    super::extras(&serde_json::json!({"msh": {"densified": map}}))
}

/// Appends a LINEAR sampler (`input` times, `output` values) and the
/// channel driving `path` of glTF node `node` with it (glTF 2.0 §3.11).
pub(crate) fn push_linear_channel(
    samplers: &mut Vec<JSampler>,
    channels: &mut Vec<Channel>,
    input: Index<json::Accessor>,
    output: Index<json::Accessor>,
    node: usize,
    path: Property,
) {
    let sampler = Index::push(
        samplers,
        JSampler {
            extensions: None,
            extras: None,
            input,
            interpolation: Checked::Valid(Interpolation::Linear),
            output,
        },
    );
    channels.push(Channel {
        sampler,
        target: Target {
            extensions: None,
            extras: None,
            node: Index::new(node as u32),
            path: Checked::Valid(path),
        },
        extensions: None,
        extras: None,
    });
}
