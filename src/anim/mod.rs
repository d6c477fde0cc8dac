//! Animation runtime and tracks (msh-animation §3–§5, §8, §11).
//!
//! - [`frame_index`]: the x87 `FISTP(t - 0.5)` frame rule (§3.1).
//! - [`quat_interp`], [`quat_to_matrix`]: `g_FastProc[17]` / `[14]` (§4.4).
//! - [`Sampler`]: per-node pose at time t (§3.2–§3.3, §11), two-pose blend
//!   (§4), world matrices (`world = parent_world * local`).
//! - [`tracks`]: decomposition of the Res8 pool into per-node tracks (§5.1);
//!   [`canonical_anim`]: canonical Res8/Res19 regeneration (§5.4, §8).

mod canonical;
mod frame;
mod quat;
mod sampler;
mod track;

pub use canonical::{canonical_anim, CanonicalAnim, NodeTrackIn, MAX_KEYS, MAX_KEY_TIME};
pub use frame::frame_index;
pub use quat::{decode_quat, dot4, mat_mul, quat_blend, quat_interp, quat_to_matrix, IDENTITY};
pub use sampler::Sampler;
pub use track::{is_canonical, node_tracks, pick_quat_layout, quat_layout_votes, tracks, Track};

use crate::msh::AnimKey24;

/// Which stored i16 of a Res8 quaternion is `w` (gltf-mapping.md, "Engine
/// pose"). The seed reads stored `(qx, qy, qz, qw)` as runtime `[w, x, y, z]`
/// = `[s3, s0, s1, s2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
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
    /// The key whose values were returned: the fallback key, `k0`, or
    /// `k0 + 1` for [`Branch::ExactK1`]; `k0` for [`Branch::Interp`].
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

impl AnimError {
    pub(crate) fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        AnimError {
            rule,
            detail: detail.into(),
        }
    }
}

/// Key used by [`decode_quat`]; re-exported for the reverse path.
pub fn key_quat(k: &AnimKey24, layout: QuatLayout) -> Quat {
    decode_quat(k.q, layout)
}
