//! Animation clips from a controller (unit-files-notes §1.3, §1.4, §1.7):
//! one clip per channel and one per zero-cost chain of body states. Clips
//! are frame ranges of the model's single timeline; nothing here touches
//! glTF ([`super::gltf`] writes them).

use serde_json::json;

use super::ctl::{Channel, Controller, State};
use crate::gltf_export::Namer;

/// What a clip was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClipKind {
    /// A section-2 channel (§1.4).
    Channel,
    /// A chain of section-1 states (§1.3).
    StateChain,
}

impl ClipKind {
    /// `channel` / `state_chain` (the word in the extras).
    pub fn as_str(self) -> &'static str {
        match self {
            ClipKind::Channel => "channel",
            ClipKind::StateChain => "state_chain",
        }
    }
}

/// One clip: a frame range of the timeline played on some nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// Suggested name (`Turn_m1o1_yaw`, `walk_fwd`, ...; unique per model).
    pub name: String,
    /// Channel or state chain.
    pub kind: ClipKind,
    /// Res1 nodes the clip animates (ascending).
    pub nodes: Vec<usize>,
    /// First frame as played (a state chain with `first > last` plays backwards).
    pub first: f32,
    /// Last frame as played.
    pub last: f32,
    /// Everything the source says (frames, rate, step, flags, boxes...),
    /// for the glTF animation's extras.
    pub source: serde_json::Value,
}

impl Clip {
    /// The frame range `[min, max]` the clip covers on the timeline.
    pub fn range(&self) -> [f32; 2] {
        [self.first.min(self.last), self.first.max(self.last)]
    }
}

pub use crate::gltf_export::msh_extras::{BaseClip, ClipTime};

impl ClipTime {
    /// The clip time of `clip`: from its first to its last frame, reversed
    /// for an inverting channel.
    pub fn of(clip: &Clip) -> Self {
        let invert = clip.kind == ClipKind::Channel && clip.source["invert"] == true;
        if invert {
            ClipTime {
                start: clip.last,
                end: clip.first,
            }
        } else {
            ClipTime {
                start: clip.first,
                end: clip.last,
            }
        }
    }
}

/// The clips of a base model's `.ctl` as the way back needs them
/// ([`BaseClip`]: identity, frames, clip time); node names do not matter
/// there, only ranges and identities.
pub fn base_clips(ctl: &Controller, base: &crate::msh::Model) -> Vec<BaseClip> {
    let crate::msh::Nodes::Node38(nodes) = &base.nodes else {
        return Vec::new();
    };
    let names: Vec<String> = (0..nodes.len()).map(|i| format!("node{i}")).collect();
    let animated: Vec<bool> = nodes.iter().map(|n| n.map_start != 0xFFFF).collect();
    derive(ctl, &names, &animated, &mut Vec::new())
        .iter()
        .map(|c| BaseClip {
            channel: c.kind == ClipKind::Channel,
            first: c.first,
            last: c.last,
            nodes: c.nodes.clone(),
            source: c.source.clone(),
            time: ClipTime::of(c),
        })
        .collect()
}

/// The role of a channel from its component class, span and flags
/// (§1.4, §1.7.3): class 1 yaw (span ≥ π) or pitch, 2 fire, 4 camera,
/// 24 arm; other classes: wrap → spin for wheels/tracks (by node name, or
/// flag 0x40: the previous channel's value) else rotor, no span → slide,
/// else door.
pub fn channel_role(class: Option<i32>, ch: &Channel, node_name: &str) -> &'static str {
    let wrap = ch.flags & 1 != 0;
    match class {
        Some(1) if ch.span >= std::f32::consts::PI => "yaw",
        Some(1) => "pitch",
        Some(2) => "fire",
        Some(4) => "camera",
        Some(24) => "arm",
        _ if wrap => {
            let n = node_name.to_ascii_lowercase();
            let wheel = ["wheel", "weel", "track", "trk", "колесо"]
                .iter()
                .any(|w| n.contains(w));
            // 0x40: takes the previous channel's value (wheels of one side).
            if wheel || ch.flags & 0x40 != 0 {
                "spin"
            } else {
                "rotor"
            }
        }
        _ if ch.span == 0.0 => "slide",
        _ => "door",
    }
}

/// The clips of `ctl` for a model of `node_names.len()` nodes, of which
/// `animated[i]` have a frame map (unit-files-notes §1.7). Channels on a
/// node outside the model are left out with a warning.
pub fn derive(
    ctl: &Controller,
    node_names: &[String],
    animated: &[bool],
    warnings: &mut Vec<String>,
) -> Vec<Clip> {
    let mut namer = Namer::default();
    let mut out = Vec::new();
    let mut driven = vec![false; node_names.len()];
    for (i, ch) in ctl.channels.iter().enumerate() {
        let Some(node) = usize::try_from(ch.node)
            .ok()
            .filter(|&n| n < node_names.len())
        else {
            warnings.push(format!(
                "ctl channel {i}: node {} outside the model's {} nodes; no clip",
                ch.node,
                node_names.len()
            ));
            continue;
        };
        driven[node] = true;
        let owner = ctl
            .components
            .iter()
            .position(|c| c.channels.contains(&(i as i32)));
        let class = owner.map(|c| ctl.components[c].class());
        let role = channel_role(class, ch, &node_names[node]);
        out.push(Clip {
            name: namer.unique(format!("{}_{role}", node_names[node])),
            kind: ClipKind::Channel,
            nodes: vec![node],
            first: ch.first,
            last: ch.last,
            source: json!({
                "kind": "channel", "channel": i, "role": role, "first": ch.first, "last": ch.last,
                "rate": ch.rate, "duration_s": if ch.rate > 0.0 { 1.0 / ch.rate } else { 0.0 },
                "span": ch.span, "initial": ch.initial, "flags": ch.flags,
                "loop": ch.flags & 1 != 0, "invert": ch.flags & 2 != 0,
                "component": owner, "component_class": class,
                "point": ch.point, "second_point": ch.second_point,
            }),
        });
    }
    let body: Vec<usize> = (0..node_names.len())
        .filter(|&n| animated.get(n).copied().unwrap_or(false) && !driven[n])
        .collect();
    if ctl.states.len() > 1 && !body.is_empty() {
        for chain in state_chains(ctl) {
            out.push(chain_clip(ctl, &chain, &body, &mut namer));
        }
    }
    out
}

/// `from → to` is a chain edge: zero cost, `to ≠ from`, and B(from) ends
/// where B(to) starts (§1.3 step 5).
fn edge(ctl: &Controller, from: usize, to: usize) -> bool {
    to != from
        && ctl.cost(from, to) == 0.0
        && ctl.states[from].frames_b()[1] == ctl.states[to].frames_b()[0]
}

/// The zero-cost chains: each starts at a state without a predecessor (then
/// at the lowest unvisited state, for pure cycles) and follows the first
/// unvisited successor. Every state is in exactly one chain. Quadratic in
/// the states, which the cost table already is.
pub fn state_chains(ctl: &Controller) -> Vec<Vec<usize>> {
    let a = ctl.states.len();
    let has_pred: Vec<bool> = (0..a).map(|s| (0..a).any(|p| edge(ctl, p, s))).collect();
    let mut visited = vec![false; a];
    let mut chains = Vec::new();
    let starts: Vec<usize> = (0..a)
        .filter(|&s| !has_pred[s])
        .chain((0..a).filter(|&s| has_pred[s]))
        .collect();
    for s in starts {
        if visited[s] {
            continue;
        }
        let mut chain = vec![s];
        visited[s] = true;
        let mut cur = s;
        while let Some(t) = (0..a).find(|&t| !visited[t] && edge(ctl, cur, t)) {
            visited[t] = true;
            chain.push(t);
            cur = t;
        }
        chains.push(chain);
    }
    chains
}

/// An axis range of a box, `None` when the box switch leaves the axis free.
fn axis(st: &State, spin: bool, k: usize) -> Option<[f32; 2]> {
    let bit = if spin { 4 + k } else { k };
    (st.switches() & (1 << bit) != 0).then(|| {
        let b = if spin {
            st.spin_box()
        } else {
            st.velocity_box()
        };
        [b[0][k], b[1][k]]
    })
}

/// A name from the first state's boxes (§1.7.2): turn_left/right from the
/// yaw spin, stand when the forward speed range holds 0 inside, walk/run
/// (run from 4 m/s) fwd/back by the sign, `_start`/`_entry` for chains that
/// neither loop nor anchor.
pub fn chain_name(st: &State, looping: bool) -> String {
    let vy = axis(st, false, 1);
    if let Some([lo, hi]) = axis(st, true, 2) {
        if lo > 0.0 {
            return "turn_left".into();
        }
        if hi < 0.0 {
            return "turn_right".into();
        }
    }
    let Some([lo, hi]) = vy else {
        return "state".into();
    };
    if lo < 0.0 && hi > 0.0 {
        return "stand".into();
    }
    let slowest = if lo >= 0.0 { lo } else { -hi };
    let gait = if slowest >= 4.0 { "run" } else { "walk" };
    let entry = !looping && st.mode() & 1 == 0;
    match (entry, lo >= 0.0) {
        (true, _) if gait == "walk" => "walk_start".into(),
        (true, true) => format!("{gait}_entry"),
        (true, false) => format!("{gait}_back_entry"),
        (false, true) => format!("{gait}_fwd"),
        (false, false) => format!("{gait}_back"),
    }
}

fn chain_clip(ctl: &Controller, chain: &[usize], body: &[usize], namer: &mut Namer) -> Clip {
    let (s0, sn) = (chain[0], chain[chain.len() - 1]);
    let st0 = &ctl.states[s0];
    let looping = ctl.cost(sn, s0) == 0.0 && ctl.states[sn].frames_b()[1] == st0.frames_b()[0];
    let first = st0.frames_b()[0];
    let last = ctl.states[sn].frames_b()[1];
    let mut frames = vec![first];
    frames.extend(chain.iter().map(|&s| ctl.states[s].frames_b()[1]));
    let boxes = |spin: bool| {
        let b = if spin {
            st0.spin_box()
        } else {
            st0.velocity_box()
        };
        (0..3).any(|k| axis(st0, spin, k).is_some()).then_some(b)
    };
    Clip {
        name: namer.unique(chain_name(st0, looping)),
        kind: ClipKind::StateChain,
        nodes: body.to_vec(),
        first,
        last,
        source: json!({
            "kind": "state_chain", "states": chain, "first": first, "last": last, "frames": frames,
            "step_ms": chain.iter().map(|&s| ctl.states[s].step_ms()).collect::<Vec<_>>(),
            "loop": looping, "reversed": first > last, "anchor": st0.mode() & 1 != 0,
            "mode": st0.mode(), "switches": st0.switches(),
            "frames_a": chain.iter().map(|&s| ctl.states[s].frames_a()).collect::<Vec<_>>(),
            "velocity_box": boxes(false), "spin_box": boxes(true),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::ctl::tests::sample;

    #[test]
    fn channels_and_chains() {
        let mut c = sample();
        // Box switches: velocity y on every state.
        for s in &mut c.states {
            s.raw[0] = 0b010;
        }
        let names: Vec<String> = ["hull", "Turn_m1o1", "Gun02_m1o1", "leg"]
            .map(String::from)
            .to_vec();
        let animated = [false, true, true, true];
        let mut w = Vec::new();
        let clips = derive(&c, &names, &animated, &mut w);
        assert!(w.is_empty(), "{w:?}");
        let got: Vec<(&str, ClipKind, Vec<usize>, f32, f32)> = clips
            .iter()
            .map(|k| (k.name.as_str(), k.kind, k.nodes.clone(), k.first, k.last))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Turn_m1o1_yaw", ClipKind::Channel, vec![1], 20.0, 24.0),
                ("Gun02_m1o1_fire", ClipKind::Channel, vec![2], 25.0, 27.0),
                ("stand", ClipKind::StateChain, vec![3], 2.0, 2.0),
                ("walk_fwd", ClipKind::StateChain, vec![3], 5.0, 13.0),
            ]
        );
        assert_eq!(clips[3].source["states"], json!([1, 2]));
        assert_eq!(clips[3].source["loop"], json!(false));
        assert_eq!(clips[0].source["loop"], json!(true));
        assert_eq!(clips[1].source["component_class"], json!(2));
    }

    #[test]
    fn clip_time_runs_in_the_game_direction() {
        let mut c = sample();
        c.channels[0].flags |= 2; // invert
        let names: Vec<String> = ["hull", "Turn_m1o1", "Gun02_m1o1", "leg"]
            .map(String::from)
            .to_vec();
        let clips = derive(&c, &names, &[false, true, true, true], &mut Vec::new());
        let inv = ClipTime::of(&clips[0]);
        assert_eq!((inv.start, inv.end, inv.dir()), (24.0, 20.0, -1.0));
        assert_eq!((inv.to_clip(21.0), inv.to_timeline(3.0)), (3.0, 21.0));
        let fwd = ClipTime::of(&clips[1]);
        assert_eq!((fwd.start, fwd.end, fwd.length()), (25.0, 27.0, 2.0));
        let back = ClipTime {
            start: 112.0,
            end: 42.0,
        };
        for f in [42.0, 50.5, 112.0] {
            assert_eq!(back.to_timeline(back.to_clip(f)), f);
        }
        assert_eq!(back.to_clip(112.0), 0.0);
        assert_eq!(back.to_clip(42.0), 70.0);
        let ex = serde_json::json!({"start": 112.0, "end": 42.0});
        assert_eq!(ClipTime::from_extras(&ex), back);
        assert_eq!(
            ClipTime::from_extras(&serde_json::json!({})),
            ClipTime::TIMELINE
        );
        assert_eq!(ClipTime::TIMELINE.to_timeline(7.0), 7.0);
    }

    #[test]
    fn out_of_range_channel_is_reported() {
        let mut c = sample();
        c.channels[0].node = 99;
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut w = Vec::new();
        let clips = derive(&c, &names, &[false; 3], &mut w);
        assert_eq!(clips.len(), 1);
        assert!(w[0].contains("node 99"), "{w:?}");
    }
}
