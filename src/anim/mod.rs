//! Animation runtime and tracks (msh-animation §3–§5, §8, §11).
//!
//! - [`frame_index`]: the x87 `FISTP(t - 0.5)` frame rule (§3.1).
//! - [`quat_interp`], [`quat_to_matrix`]: `g_FastProc[17]` / `[14]` (§4.4).
//! - [`Sampler`]: per-node pose at time t (§3.2–§3.3, §11), two-pose blend
//!   (§4), world matrices (`world = parent_world * local`).
//! - [`tracks`]: decomposition of the Res8 pool into per-node tracks (§5.1);
//!   [`canonical_anim`]: canonical Res8/Res19 regeneration (§5.4, §8).

use crate::msh::{AnimKey24, Model};

/// Which stored i16 of a Res8 quaternion is `w` (gltf-mapping.md, "Engine
/// pose"). The seed reads stored `(qx, qy, qz, qw)` as runtime `[w, x, y, z]`
/// = `[s3, s0, s1, s2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuatLayout {
    /// Seed layout: stored x, y, z, w.
    #[default]
    Xyzw,
    /// Peer layout: stored w, x, y, z.
    Wxyz,
}

/// A 4x4 matrix, 16 floats row-major with column vectors: translation in
/// `m[3], m[7], m[11]` (msh-animation §4.3, §4.4).
pub type Mat4 = [f32; 16];

/// The runtime quaternion `[w, x, y, z]` of the engine.
pub type Quat = [f32; 4];

/// Which branch of the key selection produced a pose (msh-animation §3.2–§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// Fallback key (frame out of range, no map, or map word >= fallback).
    Fallback,
    /// `t == k0.time`.
    ExactK0,
    /// `t == k1.time`.
    ExactK1,
    /// Interpolated between k0 and k0+1.
    Interp,
}

/// A node pose at time t.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Runtime quaternion `[w, x, y, z]`, not normalised.
    pub q: Quat,
    /// Node-local translation.
    pub pos: [f32; 3],
    /// The key index that was selected (k0).
    pub key: u16,
    /// The branch taken.
    pub branch: Branch,
}

/// Errors that make a model's animation unsampleable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct AnimError {
    /// Stable rule identifier (`msh.anim.fallback_key`, ...).
    pub rule: &'static str,
    /// What was found.
    pub detail: String,
}

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

/// Samples node poses of one model exactly as the engine does
/// (msh-animation §3, §4, §11). Construction validates every index the
/// engine would follow unchecked, so sampling never reads out of bounds.
#[derive(Debug, Clone)]
pub struct Sampler<'m> {
    model: &'m Model,
    layout: QuatLayout,
}

impl<'m> Sampler<'m> {
    /// Prepares sampling of `model` with the given quaternion layout.
    ///
    /// # Errors
    /// [`AnimError`] when a fallback key or a frame map lies outside Res8/Res19
    /// (`msh.anim.fallback_key`, `msh.anim.map_range`, `msh.anim.map_value`),
    /// or a parent index is out of range or cyclic.
    pub fn new(model: &'m Model, layout: QuatLayout) -> Result<Self, AnimError> {
        let _ = (model, layout);
        todo!("anim::Sampler::new")
    }

    /// The model being sampled.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The quaternion layout in use.
    pub fn layout(&self) -> QuatLayout {
        self.layout
    }

    /// Pose of `node` at time `t` (frames), §3.2–§3.3 / §11.
    pub fn node_pose(&self, node: usize, t: f32) -> Pose {
        let _ = (node, t);
        todo!("anim::Sampler::node_pose")
    }

    /// Local matrix of `node` at `t`: `quat_to_matrix(q)` with translation in
    /// m[3], m[7], m[11].
    pub fn local_matrix(&self, node: usize, t: f32) -> Mat4 {
        let _ = (node, t);
        todo!("anim::Sampler::local_matrix")
    }

    /// World matrices of every node at `t`: `world = parent_world * local`
    /// (f32 products), roots `world = local`.
    pub fn world_matrices(&self, t: f32) -> Vec<Mat4> {
        let _ = t;
        todo!("anim::Sampler::world_matrices")
    }
}

/// Decomposes the Res8 pool into one [`Track`] per node (msh-animation §5.1).
///
/// # Errors
/// [`AnimError`] when fallback keys do not increase strictly, or lie outside
/// the pool (`msh.anim.fallback_key`).
pub fn tracks(model: &Model) -> Result<Vec<Track>, AnimError> {
    let _ = model;
    todo!("anim::tracks")
}

/// Converts stored i16 components to the runtime `[w, x, y, z]`
/// (`s / 32767`, msh-animation §2.1, §3.4).
pub fn decode_quat(q: [i16; 4], layout: QuatLayout) -> Quat {
    let _ = (q, layout);
    todo!("anim::decode_quat")
}

/// Key used by [`decode_quat`]; re-exported for the reverse path.
pub fn key_quat(k: &AnimKey24, layout: QuatLayout) -> Quat {
    decode_quat(k.q, layout)
}
