//! glTF animation channels in frame units: reading a sampler, sampling it
//! with glTF semantics (glTF 2.0 Appendix C: STEP, LINEAR with slerp,
//! CUBICSPLINE), and collecting every channel of a document by target.

use serde_json::Value;

use super::{err, normalize, FRAME_TOL};
use crate::gltf_import::read::{arr, idx, msh_extras, GltfFile};
use crate::gltf_import::ImportError;
/// A glTF sampler's interpolation (glTF 2.0 Appendix C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interp {
    Step,
    Linear,
    Cubic,
}

/// One glTF channel in frame units.
#[derive(Debug, Clone)]
pub(crate) struct Channel {
    /// Key positions in frames (`t * fps`; rounded for integer channels).
    pub(crate) frames: Vec<f32>,
    /// Output values, `ncomp` per element (3 per key for CUBICSPLINE).
    values: Vec<f32>,
    ncomp: usize,
    interp: Interp,
    /// All frames within [`FRAME_TOL`] of integers and LINEAR.
    pub(crate) integer: bool,
    fps: f32,
}

impl Channel {
    /// Output value of key `k` (the spline vertex for CUBICSPLINE).
    pub(crate) fn value(&self, k: usize) -> &[f32] {
        let n = self.ncomp;
        let e = if self.interp == Interp::Cubic {
            3 * k + 1
        } else {
            k
        };
        &self.values[e * n..(e + 1) * n]
    }

    fn tangent(&self, k: usize, out: bool) -> &[f32] {
        let n = self.ncomp;
        let e = 3 * k + if out { 2 } else { 0 };
        &self.values[e * n..(e + 1) * n]
    }

    /// Last key position in frames.
    pub(crate) fn last_frame(&self) -> f32 {
        self.frames[self.frames.len() - 1]
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    /// Value at frame `f` (glTF 2.0 Appendix C: STEP, LINEAR with slerp for
    /// rotations, CUBICSPLINE Hermite; clamped outside the key range).
    pub(crate) fn sample(&self, f: f32, rotation: bool) -> Vec<f32> {
        let fr = &self.frames;
        let last = fr.len() - 1;
        if f <= fr[0] {
            return self.value(0).to_vec();
        }
        if f >= fr[last] {
            return self.value(last).to_vec();
        }
        let k = fr.partition_point(|&x| x <= f) - 1;
        if fr[k] == f {
            return self.value(k).to_vec();
        }
        let span = fr[k + 1] - fr[k];
        let t = (f - fr[k]) / span;
        let (a, b) = (self.value(k), self.value(k + 1));
        let mut v: Vec<f32> = match self.interp {
            Interp::Step => a.to_vec(),
            Interp::Linear if rotation => slerp(a, b, t),
            Interp::Linear => a.iter().zip(b).map(|(x, y)| x + t * (y - x)).collect(),
            Interp::Cubic => {
                let dt = span / self.fps;
                let (t2, t3) = (t * t, t * t * t);
                let (h00, h10, h01, h11) = (
                    2.0 * t3 - 3.0 * t2 + 1.0,
                    t3 - 2.0 * t2 + t,
                    -2.0 * t3 + 3.0 * t2,
                    t3 - t2,
                );
                let (bo, ai) = (self.tangent(k, true), self.tangent(k + 1, false));
                (0..self.ncomp)
                    .map(|c| h00 * a[c] + h10 * dt * bo[c] + h01 * b[c] + h11 * dt * ai[c])
                    .collect()
            }
        };
        if rotation {
            normalize(&mut v);
        }
        v
    }
}

/// Spherical interpolation of two unit quaternions (f64, shorter arc).
fn slerp(a: &[f32], b: &[f32], t: f32) -> Vec<f32> {
    let a: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let mut b: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    let t = f64::from(t);
    let mut d: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    if d < 0.0 {
        d = -d;
        b.iter_mut().for_each(|x| *x = -*x);
    }
    let (wa, wb) = if d > 0.9995 {
        (1.0 - t, t)
    } else {
        let th = d.min(1.0).acos();
        let s = th.sin();
        (((1.0 - t) * th).sin() / s, (t * th).sin() / s)
    };
    a.iter()
        .zip(&b)
        .map(|(x, y)| (wa * x + wb * y) as f32)
        .collect()
}

/// Reads one animation sampler as a [`Channel`] of `ncomp`-wide values
/// (`what` names the channel in errors).
///
/// # Errors
/// `gltf.anim` (missing input/output, unknown interpolation, counts that do
/// not match, times not finite and increasing), `gltf.accessor`.
pub(crate) fn read_channel(
    doc: &GltfFile,
    sampler: &Value,
    ncomp: usize,
    fps: f32,
    what: &str,
) -> Result<Channel, ImportError> {
    let input = idx(sampler, "input")
        .ok_or_else(|| err("gltf.anim", format!("{what}: sampler without input")))?;
    let output = idx(sampler, "output")
        .ok_or_else(|| err("gltf.anim", format!("{what}: sampler without output")))?;
    let interp = match sampler
        .get("interpolation")
        .and_then(Value::as_str)
        .unwrap_or("LINEAR")
    {
        "STEP" => Interp::Step,
        "CUBICSPLINE" => Interp::Cubic,
        "LINEAR" => Interp::Linear,
        other => {
            return Err(err(
                "gltf.anim",
                format!("{what}: interpolation {other:?} unknown"),
            ))
        }
    };
    let times = doc.floats(input, 1, "animation input")?;
    let values = doc.floats(output, ncomp, "animation output")?;
    let per = if interp == Interp::Cubic { 3 } else { 1 };
    if times.is_empty() || values.len() != times.len() * ncomp * per {
        return Err(err(
            "gltf.anim",
            format!(
                "{what}: {} times but {} output values ({} per key expected)",
                times.len(),
                values.len(),
                ncomp * per
            ),
        ));
    }
    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[0] > w[1]) {
        return Err(err(
            "gltf.anim",
            format!("{what}: input times are not finite and increasing"),
        ));
    }
    let mut frames: Vec<f32> = times
        .iter()
        .map(|&t| (f64::from(t) * f64::from(fps)) as f32)
        .collect();
    let mut integer =
        interp == Interp::Linear && frames.iter().all(|f| (f - f.round()).abs() <= FRAME_TOL);
    if integer {
        let rounded: Vec<f32> = frames.iter().map(|f| f.round()).collect();
        if rounded.windows(2).all(|w| w[0] < w[1]) {
            frames = rounded;
        } else {
            integer = false;
        }
    }
    Ok(Channel {
        frames,
        values,
        ncomp,
        interp,
        integer,
        fps,
    })
}

/// The channels of a document grouped by target: `[translation, rotation,
/// scale]` per target node, and what was skipped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Collected {
    /// Per target: translation, rotation and scale channels.
    pub(crate) channels: Vec<[Option<Channel>; 3]>,
    /// Number of `weights` (morph target) channels seen.
    pub(crate) weights: usize,
    /// Number of translation/rotation/scale channels seen in total.
    pub(crate) trs: usize,
    /// Skipped or duplicate channels.
    pub(crate) warnings: Vec<String>,
}

/// Reads every channel of every glTF animation (one MSH timeline: channels
/// of all animations are merged; a second channel for one target and path
/// keeps the first, with a warning). `target_of(g)` maps a glTF node to a
/// target index `< n` (`None`: ignored with a warning). `weights` channels
/// are counted and skipped.
///
/// # Errors
/// `gltf.anim` for a channel without a sampler; see [`read_channel`].
pub(crate) fn collect_channels(
    doc: &GltfFile,
    fps: f32,
    target_of: impl Fn(usize) -> Option<usize>,
    n: usize,
) -> Result<Collected, ImportError> {
    let mut out = Collected {
        channels: vec![[None, None, None]; n],
        ..Default::default()
    };
    for (ai, a) in doc.animations().iter().enumerate() {
        // Clip animations (crate::unit::gltf) repeat ranges of the timeline;
        // crate::unit::back folds their edits in.
        if msh_extras(a).is_some_and(|e| e.contains_key(crate::gltf_export::msh_extras::CLIP_KEY)) {
            continue;
        }
        let samplers = arr(a, "samplers");
        for (ci, c) in arr(a, "channels").iter().enumerate() {
            let what = format!("animation {ai} channel {ci}");
            let Some(target) = c.get("target") else {
                continue;
            };
            let path = target.get("path").and_then(Value::as_str).unwrap_or("");
            let Some(g) = idx(target, "node") else {
                continue;
            };
            let (slot, ncomp) = match path {
                "translation" => (0, 3),
                "rotation" => (1, 4),
                "scale" => (2, 3),
                "weights" => {
                    out.weights += 1;
                    out.warnings.push(format!(
                        "{what}: weights (morph target) channel ignored (MSH has no morph targets)"
                    ));
                    continue;
                }
                _ => continue,
            };
            out.trs += 1;
            let Some(r) = target_of(g).filter(|&r| r < n) else {
                out.warnings.push(format!(
                    "{what}: targets glTF node {g}, which is not a Res1 node; ignored"
                ));
                continue;
            };
            let s = idx(c, "sampler")
                .and_then(|s| samplers.get(s))
                .ok_or_else(|| err("gltf.anim", format!("{what}: no sampler")))?;
            let ch = read_channel(doc, s, ncomp, fps, &what)?;
            if out.channels[r][slot].is_some() {
                out.warnings.push(format!(
                    "{what}: second {path} channel for node {r}; the first one is used"
                ));
                continue;
            }
            out.channels[r][slot] = Some(ch);
        }
    }
    Ok(out)
}

/// Translation and rotation `(x, y, z, w)` at frame `f`: the translation
/// and rotation channels sampled with glTF semantics, else the static
/// values.
pub(crate) fn sample_tr(
    [tc, rc]: [Option<&Channel>; 2],
    (t_static, r_static): ([f32; 3], [f32; 4]),
    f: f32,
) -> ([f32; 3], [f32; 4]) {
    let t = tc.map_or(t_static, |c| {
        let v = c.sample(f, false);
        [v[0], v[1], v[2]]
    });
    let q = rc.map_or(r_static, |c| {
        let v = c.sample(f, true);
        [v[0], v[1], v[2], v[3]]
    });
    (t, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glTF 2.0 Appendix C on quaternions written with a sign flip between
    /// keys (Blender's CUBICSPLINE exports): LINEAR is slerp along the
    /// shortest arc (`s = sign(dot)`); CUBICSPLINE is the Hermite spline of
    /// the components as written (tangents x key spacing in seconds), then
    /// normalised.
    #[test]
    fn rotation_channels_follow_the_gltf_spec() {
        let h = std::f32::consts::FRAC_PI_4; // 90 degrees about z: half angle 45
        let q1 = [0.0, 0.0, -h.sin(), -h.cos()]; // written with the sign flipped
        let lin = Channel {
            frames: vec![0.0, 24.0],
            values: [[0.0, 0.0, 0.0, 1.0], q1].concat(),
            ncomp: 4,
            interp: Interp::Linear,
            integer: true,
            fps: 24.0,
        };
        let v = lin.sample(12.0, true);
        let want = [0.0, 0.0, (h / 2.0).sin(), (h / 2.0).cos()];
        for k in 0..4 {
            assert!((v[k] - want[k]).abs() < 1e-6, "{v:?} vs {want:?}");
        }
        // CUBICSPLINE, tangents (per second) [in, value, out] per key.
        let (a, b) = ([0.0, 0.0, 0.0, 1.0], q1);
        let (ta, tb) = ([0.0, 0.0, 0.5, 0.0], [0.0, 0.0, -0.25, 0.1]);
        let cub = Channel {
            frames: vec![0.0, 48.0],
            values: [[9.0; 4], a, ta, tb, b, [9.0; 4]].concat(),
            ncomp: 4,
            interp: Interp::Cubic,
            integer: false,
            fps: 24.0,
        };
        let (t, dt) = (0.25f32, 2.0f32);
        let (t2, t3) = (t * t, t * t * t);
        let mut want: Vec<f32> = (0..4)
            .map(|c| {
                (2.0 * t3 - 3.0 * t2 + 1.0) * a[c]
                    + (t3 - 2.0 * t2 + t) * dt * ta[c]
                    + (-2.0 * t3 + 3.0 * t2) * b[c]
                    + (t3 - t2) * dt * tb[c]
            })
            .collect();
        let n = want.iter().map(|x| x * x).sum::<f32>().sqrt();
        want.iter_mut().for_each(|x| *x /= n);
        let v = cub.sample(12.0, true);
        for k in 0..4 {
            assert!((v[k] - want[k]).abs() < 1e-6, "{v:?} vs {want:?}");
        }
    }

    #[test]
    fn channel_sampling() {
        let c = Channel {
            frames: vec![0.0, 2.0],
            values: vec![0.0, 0.0, 0.0, 2.0, 4.0, 6.0],
            ncomp: 3,
            interp: Interp::Linear,
            integer: true,
            fps: 24.0,
        };
        assert_eq!(c.sample(1.0, false), vec![1.0, 2.0, 3.0]);
        assert_eq!(c.sample(5.0, false), vec![2.0, 4.0, 6.0]);
        let s = Channel {
            interp: Interp::Step,
            ..c
        };
        assert_eq!(s.sample(1.5, false), vec![0.0, 0.0, 0.0]);
    }
}
