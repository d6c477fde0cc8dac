//! The engine's node sampler, two-pose blend and world matrices
//! (msh-animation §3, §4, §11).

use super::quat::{decode_quat, dot4, mat_mul, quat_blend, quat_interp, quat_to_matrix};
use super::{frame_index, AnimError, Branch, Mat4, Pose, QuatLayout};
use crate::msh::{AnimKey24, Model, NONE16};

/// Samples node poses of one model exactly as the engine does
/// (msh-animation §3, §4, §11). Construction validates every index the
/// engine would follow unchecked, so sampling never reads out of bounds.
///
/// A model with the legacy 24-byte node table (msh-animation §10.3) has no
/// node records the runtime can read: its sampler has zero nodes and
/// [`Sampler::world_matrices`] returns an empty `Vec`.
#[derive(Debug, Clone)]
pub struct Sampler<'m> {
    model: &'m Model,
    layout: QuatLayout,
    /// Res8 (empty when absent).
    keys: &'m [AnimKey24],
    /// Res19 words (empty when absent).
    map: &'m [u16],
    /// Node indices ordered so that every parent precedes its children.
    order: Vec<usize>,
}

impl<'m> Sampler<'m> {
    /// Prepares sampling of `model` with the given quaternion layout.
    ///
    /// Checks, per 38-byte node `i` (msh-animation §3.2, §9):
    /// - `hdr3` (fallback key) `< Res8 key count` (`msh.anim.fallback_key`);
    /// - when `hdr2 != 0xFFFF`: `hdr2 + frame_count <= Res19 words`, in u64
    ///   (`msh.anim.map_range`). The §9.4 rule "a map word `< fallback` has
    ///   `word + 1 < key count`" then holds by itself, since
    ///   `word < fallback < key count`, so every `k0 + 1` read is in range;
    /// - `hdr1` (parent) is [`NONE16`] or `< node count`
    ///   (`msh.hierarchy.parent_range`) and no node is its own ancestor
    ///   (`msh.hierarchy.cycle`).
    ///
    /// Key times are not checked: NaN or unordered times sample to NaN or
    /// extrapolated poses, as in the engine, without any out-of-bounds read.
    ///
    /// # Errors
    /// [`AnimError`] with the rules above.
    pub fn new(model: &'m Model, layout: QuatLayout) -> Result<Self, AnimError> {
        let nodes = model.nodes38();
        let keys: &[AnimKey24] = model.keys.as_deref().unwrap_or(&[]);
        let map: &[u16] = model.frame_map.as_deref().unwrap_or(&[]);
        let fc = u64::from(model.frame_count);
        for (i, n) in nodes.iter().enumerate() {
            if usize::from(n.fallback_key) >= keys.len() {
                return Err(AnimError::new(
                    "msh.anim.fallback_key",
                    format!(
                        "Res1 node {i}: fallback key (hdr3) {} >= Res8 key count {}",
                        n.fallback_key,
                        keys.len()
                    ),
                ));
            }
            if n.map_start != NONE16 && u64::from(n.map_start) + fc > map.len() as u64 {
                return Err(AnimError::new(
                    "msh.anim.map_range",
                    format!(
                        "Res1 node {i}: frame map start (hdr2) {} + frame count {} > Res19 word count {}",
                        n.map_start,
                        model.frame_count,
                        map.len()
                    ),
                ));
            }
        }
        let order = hierarchy_order(&nodes.iter().map(|n| n.parent).collect::<Vec<_>>())?;
        Ok(Sampler {
            model,
            layout,
            keys,
            map,
            order,
        })
    }

    /// The model being sampled.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The quaternion layout in use.
    pub fn layout(&self) -> QuatLayout {
        self.layout
    }

    /// Number of nodes the sampler poses (0 for the legacy node table).
    pub fn node_count(&self) -> usize {
        self.order.len()
    }

    /// Node indices in an order where every parent precedes its children.
    pub fn hierarchy_order(&self) -> &[usize] {
        &self.order
    }

    fn decoded(&self, k: &AnimKey24) -> ([f32; 4], [f32; 3]) {
        (decode_quat(k.q, self.layout), k.pos)
    }

    /// Pose of `node` at time `t` (frames), msh-animation §3.2–§3.3 / §11:
    ///
    /// - `frame = `[`frame_index`]`(t)`; when `frame as u32 >= frame_count`,
    ///   the node has no map, or `map[hdr2 + frame] >= hdr3`, the fallback key
    ///   `hdr3` is returned as stored ([`Branch::Fallback`]);
    /// - otherwise `k0 = map[hdr2 + frame]`: `t == k0.time` returns `k0`
    ///   ([`Branch::ExactK0`]), `t == k1.time` returns `k1 = k0 + 1`
    ///   ([`Branch::ExactK1`]), both compared as f32;
    /// - else `a = (t - t0) / (t1 - t0)`, `pos = p0 + a * (p1 - p0)`,
    ///   `q = quat_interp(q0, q1, a)` ([`Branch::Interp`]).
    ///
    /// [`Pose::key`] is the key whose values were returned (`k0 + 1` for
    /// [`Branch::ExactK1`]) and `k0` for [`Branch::Interp`].
    ///
    /// # Panics
    /// When `node >= self.node_count()` (a caller error, not a file error).
    pub fn node_pose(&self, node: usize, t: f32) -> Pose {
        let n = &self.model.nodes38()[node];
        let fallback = n.fallback_key;
        let frame = frame_index(t) as u32;
        let mapped = if frame >= self.model.frame_count || n.map_start == NONE16 {
            None
        } else {
            // In range: map_start + frame < map_start + frame_count <= len.
            let w = self.map[usize::from(n.map_start) + frame as usize];
            (w < fallback).then_some(w)
        };
        let Some(k0i) = mapped else {
            let (q, pos) = self.decoded(&self.keys[usize::from(fallback)]);
            return Pose {
                q,
                pos,
                key: fallback,
                branch: Branch::Fallback,
            };
        };
        // k0i < fallback < key count, so k0i + 1 is a valid key.
        let k0 = &self.keys[usize::from(k0i)];
        if t == k0.time {
            let (q, pos) = self.decoded(k0);
            return Pose {
                q,
                pos,
                key: k0i,
                branch: Branch::ExactK0,
            };
        }
        let k1 = &self.keys[usize::from(k0i) + 1];
        if t == k1.time {
            let (q, pos) = self.decoded(k1);
            return Pose {
                q,
                pos,
                key: k0i + 1,
                branch: Branch::ExactK1,
            };
        }
        let a = (t - k0.time) / (k1.time - k0.time);
        let lerp = |p0: f32, p1: f32| p0 + a * (p1 - p0);
        let pos = [
            lerp(k0.pos[0], k1.pos[0]),
            lerp(k0.pos[1], k1.pos[1]),
            lerp(k0.pos[2], k1.pos[2]),
        ];
        let q = quat_interp(
            decode_quat(k0.q, self.layout),
            decode_quat(k1.q, self.layout),
            a,
        );
        Pose {
            q,
            pos,
            key: k0i,
            branch: Branch::Interp,
        }
    }

    /// Local matrix of `node` at `t`: `quat_to_matrix(q)` with translation in
    /// `m[3]`, `m[7]`, `m[11]` (msh-animation §4.3, §4.4).
    ///
    /// # Panics
    /// When `node >= self.node_count()`.
    pub fn local_matrix(&self, node: usize, t: f32) -> Mat4 {
        let p = self.node_pose(node, t);
        pose_matrix(p.q, p.pos)
    }

    /// World matrices of every node at `t`: `world = parent_world * local`
    /// (f32 products, [`super::mat_mul`]), roots `world = local`. One entry per
    /// node in node order.
    pub fn world_matrices(&self, t: f32) -> Vec<Mat4> {
        let nodes = self.model.nodes38();
        let mut world = vec![[0.0f32; 16]; nodes.len()];
        for &i in &self.order {
            let local = self.local_matrix(i, t);
            let p = nodes[i].parent;
            world[i] = if p == NONE16 {
                local
            } else {
                // The parent precedes `i` in `order`.
                mat_mul(&world[usize::from(p)], &local)
            };
        }
        world
    }

    /// Two-pose blend of `node` (`sub_10012560`, msh-animation §4.1–§4.3):
    /// pose A at `t_a` is used when `blend < 1 && t_a >= 0`, pose B at `t_b`
    /// when `blend > 0 && t_b >= 0`. With both, `qB` is negated when
    /// `|qA + qB|^2 < |qA - qB|^2`, `q = quat_blend(qA, qB, blend)` and
    /// `pos = (1 - blend) * pA + blend * pB`. Returns the local matrix
    /// (translation in `m[3]`, `m[7]`, `m[11]`).
    ///
    /// Returns `None` when neither pose is valid (a path the engine leaves
    /// undefined, §4.1).
    ///
    /// # Panics
    /// When `node >= self.node_count()`.
    pub fn blend(&self, node: usize, t_a: f32, t_b: f32, blend: f32) -> Option<Mat4> {
        let has_a = blend < 1.0 && t_a >= 0.0;
        let has_b = blend > 0.0 && t_b >= 0.0;
        match (has_a, has_b) {
            (false, false) => None,
            (true, false) => {
                let p = self.node_pose(node, t_a);
                Some(pose_matrix(p.q, p.pos))
            }
            (false, true) => {
                let p = self.node_pose(node, t_b);
                Some(pose_matrix(p.q, p.pos))
            }
            (true, true) => {
                let a = self.node_pose(node, t_a);
                let b = self.node_pose(node, t_b);
                let qa = a.q;
                let mut qb = b.q;
                let sum = [qa[0] + qb[0], qa[1] + qb[1], qa[2] + qb[2], qa[3] + qb[3]];
                let diff = [qa[0] - qb[0], qa[1] - qb[1], qa[2] - qb[2], qa[3] - qb[3]];
                if dot4(&sum, &sum) < dot4(&diff, &diff) {
                    qb = [-qb[0], -qb[1], -qb[2], -qb[3]];
                }
                let q = quat_blend(qa, qb, blend);
                let mix = |pa: f32, pb: f32| (1.0 - blend) * pa + blend * pb;
                let pos = [
                    mix(a.pos[0], b.pos[0]),
                    mix(a.pos[1], b.pos[1]),
                    mix(a.pos[2], b.pos[2]),
                ];
                Some(pose_matrix(q, pos))
            }
        }
    }
}

/// `quat_to_matrix(q)` with `pos` in `m[3]`, `m[7]`, `m[11]`.
fn pose_matrix(q: [f32; 4], pos: [f32; 3]) -> Mat4 {
    let mut m = quat_to_matrix(q);
    m[3] = pos[0];
    m[7] = pos[1];
    m[11] = pos[2];
    m
}

/// Orders nodes parents-first; checks parent range and acyclicity.
fn hierarchy_order(parents: &[u16]) -> Result<Vec<usize>, AnimError> {
    let n = parents.len();
    for (i, &p) in parents.iter().enumerate() {
        if p != NONE16 && usize::from(p) >= n {
            return Err(AnimError::new(
                "msh.hierarchy.parent_range",
                format!("Res1 node {i}: parent (hdr1) {p} >= node count {n}"),
            ));
        }
    }
    // 0 = unvisited, 1 = on the current path, 2 = placed.
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut path = Vec::new();
    for i in 0..n {
        let mut cur = i;
        while state[cur] == 0 {
            state[cur] = 1;
            path.push(cur);
            let p = parents[cur];
            if p == NONE16 {
                break;
            }
            cur = usize::from(p);
        }
        if state[cur] == 1 && parents[cur] != NONE16 {
            return Err(AnimError::new(
                "msh.hierarchy.cycle",
                format!(
                    "Res1 node {cur}: node is its own ancestor (parent chain from node {i} loops)"
                ),
            ));
        }
        while let Some(j) = path.pop() {
            state[j] = 2;
            order.push(j);
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::super::quat::IDENTITY;
    use super::*;
    use crate::msh::{Node38, Nodes};

    fn key(t: f32, pos: [f32; 3], q: [i16; 4]) -> AnimKey24 {
        AnimKey24 { pos, time: t, q }
    }

    fn node(parent: u16, map_start: u16, fallback: u16) -> Node38 {
        Node38 {
            parent,
            map_start,
            fallback_key: fallback,
            slots: [NONE16; 15],
            ..Default::default()
        }
    }

    const ID: [i16; 4] = [0, 0, 0, 32767];

    /// Node 0: static root, key 0. Node 1: animated, keys 1..=3 at times
    /// 0, 2, 4 (canonical map, frame_count 5). Node 2: child of 1, static.
    fn model() -> Model {
        let keys = vec![
            key(0.0, [10.0, 0.0, 0.0], ID),
            key(0.0, [0.0, 0.0, 0.0], ID),
            key(2.0, [2.0, 4.0, 8.0], [0, 0, 32767, 0]),
            key(4.0, [4.0, 0.0, 0.0], ID),
            key(0.0, [1.0, 0.0, 0.0], ID),
        ];
        Model {
            nodes: Nodes::Node38(vec![
                node(NONE16, NONE16, 0),
                node(0, 0, 3),
                node(1, NONE16, 4),
            ]),
            keys: Some(keys),
            frame_map: Some(vec![1, 1, 2, 2, 3]),
            frame_count: 5,
            ..Default::default()
        }
    }

    #[test]
    fn branches() {
        let m = model();
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        let p = s.node_pose(0, 1.0);
        assert_eq!((p.key, p.branch), (0, Branch::Fallback));
        assert_eq!(p.pos, [10.0, 0.0, 0.0]);
        assert_eq!(p.q, [1.0, 0.0, 0.0, 0.0]);
        // t = 0: frame 0 -> k0 = 1, exact hit.
        let p = s.node_pose(1, 0.0);
        assert_eq!((p.key, p.branch), (1, Branch::ExactK0));
        // t = 1: frame 0 (0.5 -> 0) -> k0 = 1, interp a = 0.5.
        let p = s.node_pose(1, 1.0);
        assert_eq!((p.key, p.branch), (1, Branch::Interp));
        assert_eq!(p.pos, [1.0, 2.0, 4.0]);
        // t = 2: frame 2 (1.5 -> 2) -> k0 = 2: exact k0.
        let p = s.node_pose(1, 2.0);
        assert_eq!((p.key, p.branch), (2, Branch::ExactK0));
        assert_eq!(p.q, [0.0, 0.0, 0.0, 1.0]);
        // t = 1.75: frame 1 (1.25 -> 1) -> k0 = 1, k1.time == 2 != 1.75: interp.
        let p = s.node_pose(1, 1.75);
        assert_eq!((p.key, p.branch), (1, Branch::Interp));
        // t = 4: frame 4 (3.5 -> 4) -> map word 3 == fallback -> fallback.
        let p = s.node_pose(1, 4.0);
        assert_eq!((p.key, p.branch), (3, Branch::Fallback));
        // t = 3.0: frame 2 (2.5 -> 2) -> k0 = 2, interp a = 0.5.
        let p = s.node_pose(1, 3.0);
        assert_eq!((p.key, p.branch), (2, Branch::Interp));
        assert_eq!(p.pos, [3.0, 2.0, 4.0]);
        // Out of range and negative frames fall back.
        assert_eq!(s.node_pose(1, 5.6).branch, Branch::Fallback);
        assert_eq!(s.node_pose(1, -1.0).branch, Branch::Fallback);
        // NaN: frame 0 -> map word 1, no exact hit, NaN alpha; no panic.
        let p = s.node_pose(1, f32::NAN);
        assert_eq!(p.branch, Branch::Interp);
        assert!(p.pos[0].is_nan());
    }

    #[test]
    fn exact_k1_and_map_word_above_fallback() {
        let mut m = model();
        // Frame 1 of node 1 points to key 1 while t = 2.0 rounds to frame 2;
        // use t slightly below: t = 1.5 -> frame 1 (1.0). Put key 2 at 1.5.
        m.keys.as_mut().unwrap()[2].time = 1.5;
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        let p = s.node_pose(1, 1.5);
        assert_eq!((p.key, p.branch), (2, Branch::ExactK1));
        assert_eq!(p.pos, [2.0, 4.0, 8.0]);
        // A map word > fallback (but in the pool) is a fallback too (§3.2).
        let mut m = model();
        m.frame_map.as_mut().unwrap()[0] = 4;
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        assert_eq!(s.node_pose(1, 0.0).branch, Branch::Fallback);
        assert_eq!(s.node_pose(1, 0.0).key, 3);
    }

    #[test]
    fn world_matrices_compose() {
        let m = model();
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        let w = s.world_matrices(2.0);
        let mut w0 = IDENTITY;
        w0[3] = 10.0;
        assert_eq!(w[0], w0);
        // Node 1 at t=2: key 2, stored (0, 0, 32767, 0) = runtime
        // [w,x,y,z] = [0,0,0,1]: 180 degrees about z, at (2,4,8), under
        // node 0: world translation (12, 4, 8).
        #[rustfmt::skip]
        let w1 = [
            -1.0, 0.0, 0.0, 12.0,
            0.0, -1.0, 0.0, 4.0,
            0.0, 0.0, 1.0, 8.0,
            0.0, 0.0, 0.0, 1.0,
        ];
        assert_eq!(w[1], w1);
        // Node 2: local T(1,0,0), rotated by node 1: (12 - 1, 4, 8).
        assert_eq!((w[2][3], w[2][7], w[2][11]), (11.0, 4.0, 8.0));
        assert_eq!(s.local_matrix(2, 2.0)[3], 1.0);
    }

    #[test]
    fn parent_after_child() {
        let mut m = model();
        // Node 0 becomes a child of node 2.
        if let Nodes::Node38(n) = &mut m.nodes {
            n[1].parent = NONE16;
            n[0].parent = 2;
        }
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        assert_eq!(s.hierarchy_order(), &[1, 2, 0]);
        let w = s.world_matrices(0.0);
        assert_eq!((w[0][3], w[0][7], w[0][11]), (11.0, 0.0, 0.0));
    }

    #[test]
    fn blend_paths() {
        let m = model();
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        assert_eq!(s.blend(1, -1.0, -1.0, 0.5), None);
        assert_eq!(s.blend(1, 0.0, 2.0, 1.0), Some(s.local_matrix(1, 2.0)));
        assert_eq!(s.blend(1, 0.0, 2.0, 0.0), Some(s.local_matrix(1, 0.0)));
        assert_eq!(s.blend(1, 0.0, -1.0, 0.5), Some(s.local_matrix(1, 0.0)));
        assert_eq!(s.blend(1, -0.5, 4.0, 0.5), Some(s.local_matrix(1, 4.0)));
        // Both: t=0 (identity, pos 0) and t=4 (identity, pos (4,0,0)).
        let b = s.blend(1, 0.0, 4.0, 0.25).unwrap();
        let mut want = IDENTITY;
        want[3] = 0.75 * 0.0 + 0.25 * 4.0;
        assert_eq!(b, want);
        // Sign flip: qB = -qA blends to qA (no 360-degree detour).
        let mut m2 = model();
        m2.keys.as_mut().unwrap()[3].q = [0, 0, 0, -32767];
        let s2 = Sampler::new(&m2, QuatLayout::Xyzw).unwrap();
        let b = s2.blend(1, 0.0, 4.0, 0.5).unwrap();
        assert_eq!(&b[..3], &[1.0, 0.0, 0.0]);
        assert_eq!(b[3], 2.0);
    }

    #[test]
    fn new_rejects_bad_indices() {
        let mut m = model();
        if let Nodes::Node38(n) = &mut m.nodes {
            n[2].fallback_key = 5;
        }
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.anim.fallback_key"
        );
        let mut m = model();
        m.frame_count = u32::MAX;
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.anim.map_range"
        );
        let mut m = model();
        m.frame_map = None;
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.anim.map_range"
        );
        let mut m = model();
        m.keys = None;
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.anim.fallback_key"
        );
        let mut m = model();
        if let Nodes::Node38(n) = &mut m.nodes {
            n[1].parent = 3;
        }
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.hierarchy.parent_range"
        );
        let mut m = model();
        if let Nodes::Node38(n) = &mut m.nodes {
            n[2].parent = 2;
        }
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.hierarchy.cycle"
        );
        let mut m = model();
        if let Nodes::Node38(n) = &mut m.nodes {
            n[0].parent = 2;
        }
        assert_eq!(
            Sampler::new(&m, QuatLayout::Xyzw).unwrap_err().rule,
            "msh.hierarchy.cycle"
        );
    }

    #[test]
    fn legacy_has_no_nodes() {
        let m = Model {
            nodes: Nodes::Legacy24 { raw: vec![0; 24] },
            keys: Some(vec![key(0.0, [0.0; 3], ID)]),
            frame_count: 1,
            ..Default::default()
        };
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        assert_eq!(s.node_count(), 0);
        assert!(s.world_matrices(0.0).is_empty());
    }

    #[test]
    fn zero_quaternion_is_identity_rotation() {
        let mut m = model();
        m.keys.as_mut().unwrap()[0].q = [0; 4];
        let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
        let mut want = IDENTITY;
        want[3] = 10.0;
        assert_eq!(s.local_matrix(0, 0.0), want);
    }
}
