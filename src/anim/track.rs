//! Per-node tracks of the Res8 pool (msh-animation §5.1–§5.4) and the
//! quaternion layout heuristic (gltf-mapping.md, "Engine pose").

use super::canonical::MapGen;
use super::{AnimError, NodeTrackIn, QuatLayout};
use crate::msh::{AnimKey24, Model, NONE16};

/// One node's track: the keys `first_key..=last_key` of the Res8 pool
/// (msh-animation §5.1; `last_key` is the node's fallback key `hdr3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Track {
    /// Node index.
    pub node: usize,
    /// First key index in Res8 (`hdr3` of the previous node + 1, or 0).
    pub first_key: usize,
    /// Last key index = fallback key (`hdr3`).
    pub last_key: usize,
    /// True when the node has a frame map (`hdr2 != 0xFFFF`).
    pub has_map: bool,
}

impl Track {
    /// Number of keys (`last_key - first_key + 1`, at least 1).
    pub fn len(&self) -> usize {
        self.last_key + 1 - self.first_key
    }

    /// Always false: a track holds at least its fallback key.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The track's keys in `model`'s Res8 pool (empty when `model` is not the
    /// model the track was computed from and the range does not fit).
    pub fn keys<'m>(&self, model: &'m Model) -> &'m [AnimKey24] {
        model
            .keys
            .as_deref()
            .and_then(|k| k.get(self.first_key..=self.last_key))
            .unwrap_or(&[])
    }
}

/// Decomposes the Res8 pool into one [`Track`] per node (msh-animation §5.1):
/// `start_i = fallback_{i-1} + 1` (0 for node 0), track `i` =
/// `Res8[start_i ..= fallback_i]`.
///
/// The legacy 24-byte node table (§10.3) has no readable node records: the
/// result is empty.
///
/// # Errors
/// [`AnimError`] `msh.anim.fallback_key` when fallback keys do not increase
/// strictly over the nodes, or one lies outside the pool.
pub fn tracks(model: &Model) -> Result<Vec<Track>, AnimError> {
    let key_count = model.keys.as_ref().map_or(0, Vec::len);
    let nodes = model.nodes38();
    let mut out = Vec::with_capacity(nodes.len());
    let mut start = 0usize;
    for (i, n) in nodes.iter().enumerate() {
        let fb = usize::from(n.fallback_key);
        if fb >= key_count {
            return Err(AnimError::new(
                "msh.anim.fallback_key",
                format!("Res1 node {i}: fallback key (hdr3) {fb} >= Res8 key count {key_count}"),
            ));
        }
        if fb < start {
            return Err(AnimError::new(
                "msh.anim.fallback_key",
                format!(
                    "Res1 node {i}: fallback key (hdr3) {fb} does not follow the previous node's {} (track would be empty)",
                    start as i64 - 1
                ),
            ));
        }
        out.push(Track {
            node: i,
            first_key: start,
            last_key: fb,
            has_map: n.map_start != NONE16,
        });
        start = fb + 1;
    }
    Ok(out)
}

/// True when the track's times are integer, non-negative, strictly
/// increasing and start at 0 (msh-animation §5.2).
pub(crate) fn canonical_times(keys: &[AnimKey24]) -> bool {
    keys.first().is_some_and(|k| k.time == 0.0)
        && keys
            .iter()
            .all(|k| k.time.is_finite() && k.time >= 0.0 && k.time.fract() == 0.0)
        && keys.windows(2).all(|w| w[0].time < w[1].time)
}

/// True when `track` (from [`tracks`]`(model)`) is canonical, i.e. what the
/// §5.4/§8 writer ([`super::canonical_anim`]) would produce and what a glTF
/// `LINEAR` channel of its keys reproduces (gltf-mapping.md, "Animation"):
///
/// - key times integer, non-negative, strictly increasing, starting at 0
///   (§5.2);
/// - a node without map has exactly 1 key (§5.1, §8);
/// - a node with map has at least 2 keys, its last key time is below the
///   model's `frame_count` (so no keyed frame falls outside the timeline),
///   and its stored Res19 block `map[hdr2 .. hdr2 + frame_count]` equals the
///   block the §5.4 rule regenerates (fallback frames `== fallback`).
///
/// Whether the model's `frame_count` is exactly `max last time + 1` is a
/// model-level property not checked here.
pub fn is_canonical(model: &Model, track: &Track) -> bool {
    let keys = track.keys(model);
    if keys.len() != track.len() || !canonical_times(keys) {
        return false;
    }
    if !track.has_map {
        return keys.len() == 1;
    }
    let Some(last) = keys.last() else {
        return false;
    };
    if keys.len() < 2 || f64::from(last.time) >= f64::from(model.frame_count) {
        return false;
    }
    let Some(node) = model.nodes38().get(track.node) else {
        return false;
    };
    let start = usize::from(node.map_start);
    let Some(block) = model
        .frame_map
        .as_deref()
        .and_then(|m| m.get(start..start.checked_add(model.frame_count as usize)?))
    else {
        return false;
    };
    block
        .iter()
        .copied()
        .eq(MapGen::new(keys, track.first_key, model.frame_count))
}

/// Counts, over the keys of tracks without map (static keys), how many hold
/// ±32767 in slot 3 (seed `xyzw`: identity is `(0, 0, 0, 32767)`) and in
/// slot 0 (retail `wxyz`): `(xyzw votes, wxyz votes)` (format-notes §6 R3).
///
/// When the fallback keys do not form tracks ([`tracks`] fails), each static
/// node's fallback key (if inside the pool) is used instead.
pub fn quat_layout_votes(model: &Model) -> (usize, usize) {
    let keys = model.keys.as_deref().unwrap_or(&[]);
    let mut xyzw = 0usize;
    let mut wxyz = 0usize;
    let mut count = |k: &AnimKey24| {
        xyzw += usize::from(k.q[3].unsigned_abs() == 32767);
        wxyz += usize::from(k.q[0].unsigned_abs() == 32767);
    };
    match tracks(model) {
        Ok(ts) => ts
            .iter()
            .filter(|t| !t.has_map)
            .flat_map(|t| t.keys(model))
            .for_each(&mut count),
        Err(_) => model
            .nodes38()
            .iter()
            .filter(|n| n.map_start == NONE16)
            .filter_map(|n| keys.get(usize::from(n.fallback_key)))
            .for_each(&mut count),
    }
    (xyzw, wxyz)
}

/// Picks the quaternion layout of `model` (`--quat-layout auto`,
/// format-notes §6 R3) as [`crate::convention::detect`] does: the static-key
/// vote, then the Res2 box; `true` when the file decided it.
pub fn pick_quat_layout(model: &Model) -> (QuatLayout, bool) {
    let d = crate::convention::detect(
        model,
        None,
        &crate::convention::ConventionChoices::default(),
    );
    (d.conventions.quat, d.quat.by == "file")
}

/// Splits the stored Res8 pool into per-node tracks in node order, the input
/// of [`super::canonical_anim`] (msh-animation §5.1, §6). `has_map` is
/// `hdr2 != 0xFFFF`.
///
/// # Errors
/// As [`tracks`].
pub fn node_tracks(model: &Model) -> Result<Vec<NodeTrackIn>, AnimError> {
    Ok(tracks(model)?
        .iter()
        .map(|t| NodeTrackIn {
            keys: t.keys(model).to_vec(),
            has_map: t.has_map,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msh::{Node38, Nodes};

    fn key(t: f32, q: [i16; 4]) -> AnimKey24 {
        AnimKey24 {
            pos: [0.0; 3],
            time: t,
            q,
        }
    }

    fn node(map_start: u16, fallback: u16) -> Node38 {
        Node38 {
            parent: NONE16,
            map_start,
            fallback_key: fallback,
            slots: [NONE16; 15],
            ..Default::default()
        }
    }

    fn model() -> Model {
        Model {
            nodes: Nodes::Node38(vec![node(NONE16, 0), node(0, 3), node(NONE16, 4)]),
            keys: Some(vec![
                key(0.0, [0, 0, 0, 32767]),
                key(0.0, [0, 0, 0, 32767]),
                key(2.0, [0, 0, 32767, 0]),
                key(4.0, [0, 0, 0, 32767]),
                key(0.0, [0, 0, 0, -32767]),
            ]),
            frame_map: Some(vec![1, 1, 2, 2, 3]),
            frame_count: 5,
            ..Default::default()
        }
    }

    #[test]
    fn split_pool() {
        let m = model();
        let t = tracks(&m).unwrap();
        assert_eq!(
            t,
            vec![
                Track {
                    node: 0,
                    first_key: 0,
                    last_key: 0,
                    has_map: false
                },
                Track {
                    node: 1,
                    first_key: 1,
                    last_key: 3,
                    has_map: true
                },
                Track {
                    node: 2,
                    first_key: 4,
                    last_key: 4,
                    has_map: false
                },
            ]
        );
        assert_eq!(t[1].len(), 3);
        assert_eq!(t[1].keys(&m)[1].time, 2.0);
        let nt = node_tracks(&m).unwrap();
        assert_eq!(nt[1].keys.len(), 3);
        assert!(nt[1].has_map && !nt[2].has_map);
    }

    #[test]
    fn split_errors() {
        let mut m = model();
        if let Nodes::Node38(n) = &mut m.nodes {
            n[2].fallback_key = 3;
        }
        assert_eq!(tracks(&m).unwrap_err().rule, "msh.anim.fallback_key");
        if let Nodes::Node38(n) = &mut m.nodes {
            n[2].fallback_key = 5;
        }
        assert_eq!(tracks(&m).unwrap_err().rule, "msh.anim.fallback_key");
        m.nodes = Nodes::Legacy24 { raw: vec![0; 24] };
        assert_eq!(tracks(&m).unwrap(), vec![]);
    }

    #[test]
    fn canonical_checks() {
        let m = model();
        let t = tracks(&m).unwrap();
        assert!(t.iter().all(|t| is_canonical(&m, t)));
        // Fallback frame stored as a larger word (still a fallback at runtime).
        let mut m2 = model();
        m2.frame_map.as_mut().unwrap()[4] = 4;
        assert!(!is_canonical(&m2, &t[1]));
        // Wrong segment word.
        let mut m2 = model();
        m2.frame_map.as_mut().unwrap()[2] = 1;
        assert!(!is_canonical(&m2, &t[1]));
        // Non-integer time.
        let mut m2 = model();
        m2.keys.as_mut().unwrap()[2].time = 2.5;
        assert!(!is_canonical(&m2, &t[1]));
        // Track not starting at 0.
        let mut m2 = model();
        m2.keys.as_mut().unwrap()[1].time = 1.0;
        assert!(!is_canonical(&m2, &t[1]));
        // Static node with a non-zero time.
        let mut m2 = model();
        m2.keys.as_mut().unwrap()[4].time = 1.0;
        assert!(!is_canonical(&m2, &t[2]));
        // Last key beyond the timeline.
        let mut m2 = model();
        m2.frame_count = 4;
        m2.frame_map = Some(vec![1, 1, 2, 2]);
        assert!(!is_canonical(&m2, &t[1]));
        // Map block past Res19.
        let mut m2 = model();
        m2.frame_map.as_mut().unwrap().pop();
        assert!(!is_canonical(&m2, &t[1]));
        // A static node with 2 keys.
        let mut m2 = model();
        if let Nodes::Node38(n) = &mut m2.nodes {
            n[1].map_start = NONE16;
        }
        let t2 = tracks(&m2).unwrap();
        assert!(!is_canonical(&m2, &t2[1]));
    }

    #[test]
    fn layout_evidence() {
        let m = model();
        // Static keys 0 and 4: both have +-32767 in slot 3.
        assert_eq!(pick_quat_layout(&m), (QuatLayout::Xyzw, true));
        let mut m2 = model();
        for k in m2.keys.as_mut().unwrap() {
            k.q = [k.q[3], k.q[0], k.q[1], k.q[2]];
        }
        assert_eq!(pick_quat_layout(&m2), (QuatLayout::Wxyz, true));
        // Tie: one each.
        let mut m3 = model();
        m3.keys.as_mut().unwrap()[4].q = [32767, 0, 0, 0];
        // (no geometry to fit the Res2 box: w first, format-notes §6 R3)
        assert_eq!(pick_quat_layout(&m3), (QuatLayout::Wxyz, false));
        // No static key.
        let m4 = Model::default();
        assert_eq!(pick_quat_layout(&m4), (QuatLayout::Wxyz, false));
        // Broken tracks: falls back to the static nodes' fallback keys.
        let mut m5 = model();
        for k in m5.keys.as_mut().unwrap() {
            k.q = [k.q[3], k.q[0], k.q[1], k.q[2]];
        }
        if let Nodes::Node38(n) = &mut m5.nodes {
            n[1].fallback_key = 9;
        }
        assert_eq!(pick_quat_layout(&m5), (QuatLayout::Wxyz, true));
    }
}
