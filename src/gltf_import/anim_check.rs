//! After `gltf2msh --base` has written the animation: every glTF key the
//! written model does not play is reported, naming the node, the channel
//! and the time (issue 15: no edit is dropped silently).
//!
//! The written model is sampled with the engine's own rule
//! ([`Sampler::node_pose`], msh-animation §3) at the time of every glTF
//! key, including keys between whole frames, and compared with the glTF
//! channel's value there (glTF 2.0 Appendix C). Res8 key times are whole
//! frames in the canonical writer and the frame map addresses one segment
//! per frame, so a key between frames (an edited or added half-frame key)
//! cannot be played as glTF interpolates it: such a key is reported unless
//! the written model happens to play it (the keys msh2gltf adds between
//! frames lie on the engine's curve and are never reported). Keys at
//! negative times are reported too (the MSH timeline starts at frame 0).

use super::animation::Channel;
use crate::anim::Sampler;
use crate::gltf_export::{axes, Up};

/// Translation tolerance (game units, relative to `max(1, |value|)`, per
/// component) of "the model plays the glTF key".
pub const PLAYED_POS_TOL: f32 = 1e-3;
/// Rotation tolerance (unit quaternion component, either sign) of "the
/// model plays the glTF key": about 0.1°.
pub const PLAYED_ROT_TOL: f32 = 1e-3;

/// Most keys listed per node and channel in one warning (the rest are
/// counted).
const LISTED: usize = 4;

/// Appends one warning per node and channel (`[translation, rotation]`
/// per Res1 node, glTF axes) whose keys `model` (through `sampler`) does
/// not play: `Res1 node r "name": rotation keys not played by the written
/// model at frame 1.5 (t = 0.0625 s) ...`. `names[r]` names Res1 node `r`.
pub(crate) fn warn_unplayed(
    chans: &[[Option<Channel>; 2]],
    sampler: &Sampler<'_>,
    up: Up,
    fps: f32,
    names: &[String],
    warnings: &mut Vec<String>,
) {
    for (r, pair) in chans.iter().enumerate() {
        for (path, ch) in pair.iter().enumerate() {
            let Some(ch) = ch else { continue };
            let rotation = path == 1;
            let mut bad: Vec<String> = Vec::new();
            for k in 0..ch.len() {
                let f = ch.frames[k];
                let mut want = ch.value(k).to_vec();
                if rotation {
                    let n = want.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if n > 0.0 && n.is_finite() {
                        want.iter_mut().for_each(|x| *x /= n);
                    }
                }
                let p = sampler.node_pose(r, f.max(0.0));
                let played = if rotation {
                    let q = axes::engine_quat_to_gltf(up, p.q);
                    rot_close(&want, &q)
                } else {
                    let t = axes::vec3(up, p.pos);
                    (0..3)
                        .all(|c| (want[c] - t[c]).abs() <= PLAYED_POS_TOL * want[c].abs().max(1.0))
                };
                if f < 0.0 || !played {
                    let why = if f < 0.0 {
                        " (before frame 0)"
                    } else if f.fract() != 0.0 {
                        " (between frames)"
                    } else {
                        ""
                    };
                    bad.push(format!(
                        "frame {f} (t = {} s){why}: glTF {:?}",
                        f / fps,
                        want
                    ));
                }
            }
            if bad.is_empty() {
                continue;
            }
            let more = bad.len().saturating_sub(LISTED);
            bad.truncate(LISTED);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            warnings.push(format!(
                "Res1 node {r} {:?}: {} key(s) not played by the written model (MSH keys sit on whole frames from frame 0; the game plays its own pose there): {}{tail}; key whole frames instead",
                names.get(r).map_or("", String::as_str),
                if rotation { "rotation" } else { "translation" },
                bad.join("; ")
            ));
        }
    }
}

fn rot_close(a: &[f32], b: &[f32; 4]) -> bool {
    let d = |s: f32| {
        (0..4)
            .map(|k| (a[k] - s * b[k]).abs())
            .fold(0.0f32, f32::max)
    };
    d(1.0) <= PLAYED_ROT_TOL || d(-1.0) <= PLAYED_ROT_TOL
}
