//! The way back for glTF written by this layer (issue 18 "Back"):
//! assembled units are export-only, and (see [`fold_clips`]) edited clip
//! animations are written into the timeline over their frame range.

use crate::gltf_import::read::{Elem, Props, TopArray};
use serde_json::Value;

use super::animation::{read_channel, Channel};
use super::read::{arr, idx};
use super::{GltfFile, ImportError};
use crate::anim::{QuatLayout, Sampler, MAX_KEY_TIME};
use crate::gltf_export::msh_extras::{BaseClip, ClipTime, CLIP_KEY, PART_KEY, UNIT_KEY};
use crate::gltf_export::{axes, Up};
use crate::msh::{Model, Nodes};

/// Refuses an assembled unit given a model base: scene `extras.msh.unit`,
/// or (Blender keeps node extras, not always the scene's) a node with
/// `extras.msh.part` ([`PART_KEY`]). Its parts are separate
/// models: the error names the unit route (`--base` the unit file) and
/// each part's archive entry (unit-files-notes §3.5 step 5).
///
/// # Errors
/// `gltf.unit` for an assembled unit.
pub fn refuse_assembled(doc: &GltfFile) -> Result<(), ImportError> {
    let scene = doc.json["scene"].as_u64().unwrap_or(0) as usize;
    let unit = doc
        .scenes()
        .get(scene)
        .map_or(&Value::Null, |s| &s["extras"]["msh"][UNIT_KEY]);
    let parted = doc
        .nodes()
        .iter()
        .any(|n| !n["extras"]["msh"][PART_KEY].is_null());
    if unit.is_null() && !parted {
        return Ok(());
    }
    let parts: Vec<String> = unit["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{} ({}:{})",
                p["record"].as_str().unwrap_or("?"),
                p["archive"].as_str().unwrap_or("?"),
                p["mesh_entry"].as_str().unwrap_or("?")
            )
        })
        .collect();
    let list = if parts.is_empty() {
        String::new()
    } else {
        format!("; its parts: {}", parts.join(", "))
    };
    Err(ImportError::new(
        "gltf.unit",
        format!(
            "this glTF is the assembled unit {}: give its unit file as the base (gltf2msh unit.glb --base UNITS/<class>/x.dat) to write each edited part into its archive entry, or export and edit one part on its own (msh2gltf ARCHIVE:ENTRY){list}",
            unit["source"].as_str().unwrap_or("(a unit)"),
        ),
    ))
}

/// True when a glTF animation is a clip animation (`extras.msh.clip`).
pub fn is_clip<P: Props + ?Sized>(anim: &P) -> bool {
    anim.prop("extras")
        .and_then(|e| e.get("msh"))
        .and_then(|m| m.get(CLIP_KEY))
        .is_some()
}

/// Tolerance (glTF units, quaternion components) under which a clip or
/// the timeline counts as unedited against the base's engine pose.
pub const EDIT_TOL: f32 = 1e-3;

/// What [`fold_clips`] did.
#[derive(Debug, Default)]
pub struct Folded {
    /// The document with edited clips written into its timeline, when any.
    pub doc: Option<GltfFile>,
    /// One line per edited clip channel written, per moved control point.
    pub warnings: Vec<String>,
}

/// One edited clip channel, in frames and glTF values.
struct Edit {
    clip: String,
    node: usize,
    slot: usize,
    range: [f32; 2],
    frames: Vec<f32>,
    values: Vec<f32>,
}

fn base_value(s: &Sampler<'_>, up: Up, r: usize, slot: usize, f: f32) -> Vec<f32> {
    let p = s.node_pose(r, f);
    match slot {
        0 => axes::vec3(up, p.pos).to_vec(),
        _ => axes::engine_quat_to_gltf(up, p.q).to_vec(),
    }
}

/// Largest difference between two values (quaternions compared up to sign).
fn diff(a: &[f32], b: &[f32]) -> f32 {
    let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let s = if a.len() == 4 && d < 0.0 { -1.0 } else { 1.0 };
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - s * y).abs())
        .fold(0.0, f32::max)
}

/// The timeline frames a clip channel is compared at: its keys (timeline
/// frames, ascending) and every integer frame of its range.
fn check_frames(keys: &[f32], [lo, hi]: [f32; 2]) -> Vec<f32> {
    let mut f: Vec<f32> = keys.to_vec();
    f.extend((lo.ceil() as u32..=hi.floor() as u32).map(|x| x as f32));
    f.sort_by(f32::total_cmp);
    f.dedup();
    f
}

/// The timeline animation: the first one that is not a clip.
fn timeline_index(doc: &GltfFile) -> Option<usize> {
    doc.animations()
        .iter()
        .position(|a| a.is_object() && !is_clip(a))
}

/// The timeline's channel for (glTF node, path), read.
fn timeline_channel(
    doc: &GltfFile,
    g: usize,
    path: &str,
    fps: f32,
) -> Result<Option<Channel>, ImportError> {
    let Some(t) = timeline_index(doc) else {
        return Ok(None);
    };
    let a = &doc.animations()[t];
    let Some(c) = arr(a, "channels")
        .iter()
        .find(|c| idx(&c["target"], "node") == Some(g) && c["target"]["path"] == path)
    else {
        return Ok(None);
    };
    let Some(s) = idx(c, "sampler").and_then(|s| arr(a, "samplers").get(s)) else {
        return Ok(None);
    };
    let n = if path == "rotation" { 4 } else { 3 };
    read_channel(doc, s, n, fps, "timeline").map(Some)
}

/// Reads one clip channel's edit: `None` when it matches the base within
/// [`EDIT_TOL`]. The channel's keys are in clip time `ct`; the edit is in
/// timeline frames (ascending).
///
/// # Errors
/// `gltf.clip.range` for keys outside the clip's frame range;
/// `gltf.clip.conflict` when the timeline was also edited there, differently.
#[allow(clippy::too_many_arguments)]
fn clip_edit(
    doc: &GltfFile,
    s: &Sampler<'_>,
    (up, fps): (Up, f32),
    (name, range, ct): (&str, [f32; 2], ClipTime),
    (g, r): (usize, usize),
    path: &str,
    sampler: &Value,
) -> Result<Option<Edit>, ImportError> {
    let slot = usize::from(path == "rotation");
    let ch = read_channel(doc, sampler, 3 + slot, fps, &format!("clip {name:?}"))?;
    let [lo, hi] = range;
    let mut keys: Vec<f32> = ch.frames.iter().map(|&c| ct.to_timeline(c)).collect();
    if let Some((c, f)) = ch
        .frames
        .iter()
        .zip(&keys)
        .find(|(_, &f)| f < lo - 1e-3 || f > hi + 1e-3)
    {
        return Err(ImportError::new(
            "gltf.clip.range",
            format!(
                "clip {name:?}: a {path} key of glTF node {g} at clip frame {c} (timeline frame {f}) leaves the clip's frames {lo}..{hi} (clip frames 0..{}); move the key back inside (the .ctl, which holds the range, is not rewritten)",
                (hi - lo)
            ),
        ));
    }
    if ct.dir() < 0.0 {
        keys.reverse();
    }
    let frames = check_frames(&keys, range);
    let rot = slot == 1;
    let at = |f: f32| ch.sample(ct.to_clip(f), rot);
    let edited = frames
        .iter()
        .any(|&f| diff(&at(f), &base_value(s, up, r, slot, f)) > EDIT_TOL);
    if !edited {
        return Ok(None);
    }
    if let Some(tl) = timeline_channel(doc, g, path, fps)? {
        for &f in &frames {
            let t = tl.sample(f, rot);
            if diff(&t, &base_value(s, up, r, slot, f)) > EDIT_TOL && diff(&t, &at(f)) > EDIT_TOL {
                return Err(ImportError::new(
                    "gltf.clip.conflict",
                    format!(
                        "clip {name:?} and the whole timeline were both edited, differently, for Res1 node {r} {path} at frame {f}; keep the edit in one of them"
                    ),
                ));
            }
        }
    }
    let values = keys.iter().flat_map(|&f| at(f)).collect();
    Ok(Some(Edit {
        clip: name.to_string(),
        node: g,
        slot,
        range,
        frames: keys,
        values,
    }))
}

/// Folds edited clip animations into the timeline (issue 18 "Back"): a
/// clip channel that differs from the base's engine pose (beyond
/// [`EDIT_TOL`]) replaces the timeline's keys over the clip's frame range;
/// unedited clips are ignored. (Control points are written by
/// `crate::unit::cpt_back`.)
///
/// # Errors
/// `gltf.clip.range` (a clip key outside its range), `gltf.clip.conflict`
/// (the timeline, or another clip, edited differently over the same
/// frames), `gltf.anim` (unreadable channels).
pub fn fold_clips(
    doc: &GltfFile,
    (base, ctl): (&Model, Option<&[BaseClip]>),
    up: Up,
    layout: QuatLayout,
    fps: f32,
) -> Result<Folded, ImportError> {
    let mut out = Folded {
        ..Default::default()
    };
    if !matches!(base.nodes, Nodes::Node38(_)) || !doc.animations().iter().any(is_clip) {
        return Ok(out);
    }
    let s = Sampler::new(base, layout).map_err(|e| ImportError::new(e.rule, e.detail))?;
    let nodes = doc.nodes();
    let base_clips = ctl.unwrap_or_default();
    let mut edits: Vec<Edit> = Vec::new();
    for a in doc.animations().iter().filter(is_clip) {
        let c = &a["extras"]["msh"][CLIP_KEY];
        let name = a["name"].as_str().unwrap_or("clip");
        // The clip, its range and clip time are the base's .ctl's, never
        // the glTF's.
        let targets: Vec<usize> = arr(a, "channels")
            .iter()
            .filter_map(|ch| clip_target(nodes, a, ch, s.node_count()).map(|t| t.1))
            .collect();
        let Some(bc) = base_clip_of(base_clips, c, &targets) else {
            if clip_edited(doc, &s, (up, fps), a, name)? {
                out.warnings.push(format!(
                    "clip {name:?}: edited, but the base has no .ctl {} holding it, so its frame range is unknown: the clip's keys are not written (edit the timeline animation instead)",
                    if ctl.is_some() { "clip" } else { "beside it" }
                ));
            }
            continue;
        };
        let range = clamp_range(bc.range());
        let ct = bc.time;
        for ch in arr(a, "channels") {
            let Some((g, r, path, smp)) = clip_target(nodes, a, ch, s.node_count()) else {
                continue;
            };
            if let Some(e) = clip_edit(doc, &s, (up, fps), (name, range, ct), (g, r), path, smp)? {
                check_overlap(&edits, &e)?;
                edits.push(e);
            }
        }
    }
    if !edits.is_empty() {
        out.doc = Some(splice(doc, &edits, fps)?);
        for e in &edits {
            out.warnings.push(format!(
                "clip {:?}: edited {} of glTF node {} written into the timeline over frames {}..{}",
                e.clip,
                ["translation", "rotation"][e.slot],
                e.node,
                e.range[0],
                e.range[1]
            ));
        }
    }
    Ok(out)
}

/// What clip channel `ch` of animation `a` animates: (glTF node, its Res1
/// node below `res1_count`, `translation` or `rotation`, its sampler);
/// `None` for any other channel (scale, weights, nodes without
/// `extras.msh.node`, unreadable targets).
fn clip_target<'a>(
    nodes: &[Elem],
    a: &'a Elem,
    ch: &'a Value,
    res1_count: usize,
) -> Option<(usize, usize, &'a str, &'a Value)> {
    let g = idx(&ch["target"], "node")?;
    let path = ch["target"]["path"].as_str()?;
    let r = nodes.get(g)?["extras"]["msh"]["node"].as_u64()? as usize;
    let smp = idx(ch, "sampler").and_then(|i| arr(a, "samplers").get(i))?;
    (r < res1_count && matches!(path, "translation" | "rotation")).then_some((g, r, path, smp))
}

/// The base clip a glTF clip animation is, from the base's `.ctl` (issue
/// 36 item 11): the clips that animate every Res1 node of `targets` (the
/// animation's translation and rotation targets); one such clip is the
/// answer whatever the extras `c` say, and among several (channels on one
/// node, the chains of states sharing the body) the extras choose
/// ([`same_clip`]). A forged `channel` index therefore never moves an edit
/// into another clip's frames. Without targets (nothing to write) the
/// extras alone choose.
fn base_clip_of<'b>(base: &'b [BaseClip], c: &Value, targets: &[usize]) -> Option<&'b BaseClip> {
    if targets.is_empty() {
        return base.iter().find(|b| same_clip(b, c));
    }
    let on: Vec<&BaseClip> = base
        .iter()
        .filter(|b| targets.iter().all(|t| b.nodes.contains(t)))
        .collect();
    match on.as_slice() {
        [one] => Some(one),
        several => several.iter().copied().find(|b| same_clip(b, c)),
    }
}

/// Whether the glTF clip extras `c` name base clip `b`: the same `.ctl`
/// channel, or the same chain of states; where the extras lost that key
/// (the add-on keeps only scalar fields: a chain's `states` list is
/// gone), the same kind with the same `first`/`last` (a clip widened in
/// the extras then names no base clip and is not written).
fn same_clip(b: &BaseClip, c: &Value) -> bool {
    let key = if b.channel { "channel" } else { "states" };
    if c["kind"] != b.source["kind"] {
        return false;
    }
    if !c[key].is_null() {
        return c[key] == b.source[key];
    }
    let f = |k: &str| c[k].as_f64().map(|x| x as f32);
    f("first") == Some(b.first) && f("last") == Some(b.last)
}

fn clamp_range([lo, hi]: [f32; 2]) -> [f32; 2] {
    [lo.max(0.0), hi.min(MAX_KEY_TIME)]
}

/// Whether a clip animation the base's `.ctl` does not hold differs from
/// the base (judged over the range its own extras claim; a key outside
/// that range counts as an edit). Only for the warning: nothing of it is
/// written.
fn clip_edited(
    doc: &GltfFile,
    s: &Sampler<'_>,
    (up, fps): (Up, f32),
    a: &Elem,
    name: &str,
) -> Result<bool, ImportError> {
    let c = &a["extras"]["msh"][CLIP_KEY];
    let (f0, f1) = (
        c["first"].as_f64().unwrap_or(0.0) as f32,
        c["last"].as_f64().unwrap_or(0.0) as f32,
    );
    let range = clamp_range([f0.min(f1), f0.max(f1)]);
    let ct = ClipTime::from_extras(&a["extras"]["msh"]);
    let nodes = doc.nodes();
    for ch in arr(a, "channels") {
        let Some((g, r, path, smp)) = clip_target(nodes, a, ch, s.node_count()) else {
            continue;
        };
        match clip_edit(doc, s, (up, fps), (name, range, ct), (g, r), path, smp) {
            Ok(None) => {}
            Ok(Some(_)) => return Ok(true),
            Err(e) if e.rule == "gltf.clip.range" => return Ok(true),
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// Two edited clips of one node and path must agree where they overlap.
fn check_overlap(done: &[Edit], e: &Edit) -> Result<(), ImportError> {
    for d in done.iter().filter(|d| d.node == e.node && d.slot == e.slot) {
        let (lo, hi) = (d.range[0].max(e.range[0]), d.range[1].min(e.range[1]));
        if lo > hi {
            continue;
        }
        let differs = e
            .frames
            .iter()
            .zip(e.values.chunks(3 + e.slot))
            .any(|(&f, v)| {
                (lo..=hi).contains(&f)
                    && d.frames.iter().position(|&x| x == f).is_some_and(|k| {
                        diff(v, &d.values[k * (3 + d.slot)..(k + 1) * (3 + d.slot)]) > EDIT_TOL
                    })
            });
        if differs {
            return Err(ImportError::new(
                "gltf.clip.conflict",
                format!(
                    "clips {:?} and {:?} both edit glTF node {} over frames {lo}..{hi}, differently; keep the edit in one of them",
                    d.clip, e.clip, e.node
                ),
            ));
        }
    }
    Ok(())
}

/// Appends `frames`/`values` as a LINEAR sampler (new buffer, view and
/// accessors) to animation `t` of `doc`; returns the sampler index.
fn push_sampler(doc: &mut GltfFile, t: usize, frames: &[f32], values: &[f32], fps: f32) -> usize {
    let times: Vec<f32> = frames.iter().map(|f| f / fps).collect();
    let mut data: Vec<u8> = times
        .iter()
        .chain(values)
        .flat_map(|x| x.to_le_bytes())
        .collect();
    while !data.len().is_multiple_of(4) {
        data.push(0);
    }
    let b = doc.buffers.len();
    let len = data.len();
    doc.buffers.push(data);
    // Appends `v` to the array `slot` (made one when it is not).
    let push = |slot: &mut Value, v: Value| -> usize {
        if !slot.is_array() {
            *slot = Value::Array(Vec::new());
        }
        let a = slot.as_array_mut().expect("array");
        a.push(v);
        a.len() - 1
    };
    push(
        &mut doc.json["buffers"],
        serde_json::json!({"byteLength": len}),
    );
    let view =
        doc.push_buffer_view(serde_json::json!({"buffer": b, "byteOffset": 0, "byteLength": len}));
    let n = times.len();
    let ty = if values.len() == n * 4 {
        "VEC4"
    } else {
        "VEC3"
    };
    let input = doc.push_accessor(
        serde_json::json!({"bufferView": view, "componentType": 5126, "count": n, "type": "SCALAR",
                           "min": [times[0]], "max": [times[n - 1]]}),
    );
    let output = doc.push_accessor(
        serde_json::json!({"bufferView": view, "byteOffset": 4 * n, "componentType": 5126, "count": n, "type": ty}),
    );
    push(
        &mut doc.list_mut(TopArray::Animations)[t]["samplers"],
        serde_json::json!({"input": input, "output": output, "interpolation": "LINEAR"}),
    )
}

/// The node's rest value (glTF TRS) for a node without a timeline channel.
fn rest_value(doc: &GltfFile, g: usize, slot: usize) -> Vec<f32> {
    let n = &doc.nodes()[g];
    let (key, def) = if slot == 0 {
        ("translation", vec![0.0, 0.0, 0.0])
    } else {
        ("rotation", vec![0.0, 0.0, 0.0, 1.0])
    };
    n[key]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect())
        .unwrap_or(def)
}

/// A copy of `doc` whose timeline carries every edit over its clip's range
/// (timeline keys outside the range kept, the clip's keys inside).
fn splice(doc: &GltfFile, edits: &[Edit], fps: f32) -> Result<GltfFile, ImportError> {
    let mut d = doc.clone();
    let t = match timeline_index(&d) {
        Some(t) => t,
        None => {
            if !d.has(TopArray::Animations) {
                return Err(ImportError::new(
                    "gltf.clip",
                    "clip edits but no `animations` array to write the timeline into",
                ));
            }
            let timeline = serde_json::json!({"name": "timeline", "channels": [], "samplers": []});
            d.push(TopArray::Animations, timeline)
        }
    };
    for e in edits {
        let path = ["translation", "rotation"][e.slot];
        let w = 3 + e.slot;
        let [lo, hi] = e.range;
        let (mut frames, mut values) = (Vec::new(), Vec::new());
        let mut keep = |f: f32, v: &[f32]| {
            frames.push(f);
            values.extend_from_slice(v);
        };
        match timeline_channel(&d, e.node, path, fps)? {
            Some(tl) => {
                for k in (0..tl.len()).filter(|&k| tl.frames[k] < lo - 1e-3) {
                    keep(tl.frames[k], tl.value(k));
                }
                for (k, &f) in e.frames.iter().enumerate() {
                    keep(f, &e.values[k * w..(k + 1) * w]);
                }
                for k in (0..tl.len()).filter(|&k| tl.frames[k] > hi + 1e-3) {
                    keep(tl.frames[k], tl.value(k));
                }
            }
            None => {
                let rest = rest_value(&d, e.node, e.slot);
                if lo >= 1.0 {
                    keep(0.0, &rest);
                    keep(lo - 1.0, &rest);
                }
                for (k, &f) in e.frames.iter().enumerate() {
                    keep(f, &e.values[k * w..(k + 1) * w]);
                }
                keep(hi + 1.0, &rest);
            }
        }
        if frames.is_empty() {
            continue; // nothing to key (an edit always brings keys; defensive)
        }
        let s = push_sampler(&mut d, t, &frames, &values, fps);
        // The timeline is an object (timeline_index); a missing or
        // malformed `channels` is replaced by an empty list.
        let anim = &mut d.list_mut(TopArray::Animations)[t];
        if !anim["channels"].is_array() {
            anim["channels"] = Value::Array(Vec::new());
        }
        let Some(chans) = anim["channels"].as_array_mut() else {
            continue;
        };
        let target = serde_json::json!({"node": e.node, "path": path});
        match chans.iter_mut().find(|c| c["target"] == target) {
            Some(c) => c["sampler"] = Value::from(s),
            None => chans.push(serde_json::json!({"sampler": s, "target": target})),
        }
    }
    Ok(d)
}
