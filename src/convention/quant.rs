//! Quantisation of the packed vertex streams and keys, each decode beside
//! its encode (format-notes §3, §6 R5/R6; gltf-mapping.md "Reverse rules";
//! msh-core §5.4–§5.5; msh-animation §2.1, §10.4).

use super::{QuatLayout, UvSign};

/// Res4 component → float: `c / 127` clamped to `[-1, 1]` (format-notes §3).
#[inline]
pub fn dequantize_normal_component(c: i8) -> f32 {
    (f32::from(c) / 127.0).clamp(-1.0, 1.0)
}

/// Inverse of [`dequantize_normal_component`] for a unit normal:
/// `clamp(round(v*127), -128, 127)`; the 4th byte is 0.
pub fn quantize_normal(n: [f32; 3]) -> [i8; 4] {
    let q = |v: f32| (v * 127.0).round().clamp(-128.0, 127.0) as i8;
    [q(n[0]), q(n[1]), q(n[2]), 0]
}

/// Tolerance, per component, of "a glTF normal is the one msh2gltf exported
/// for a stored Res4 normal" (`--base`): one quantum of
/// [`dequantize_normal_component`] / [`quantize_normal`], `1/127`.
///
/// What the tolerance has to absorb: msh2gltf exports `c / 127`
/// renormalised (so an exported component already lies up to half a
/// quantum off `c / 127`), and Blender holds an imported normal as a custom
/// split normal, an angle pair relative to the fan of faces around the
/// corner, clamped to that fan's cone: a normal outside the cone comes
/// back turned towards it. Measured over every archive model of the
/// corpus through Blender 3.4.1 with `--all-cells` (287 762 matched
/// triangles): at most 0.0043 per component (0.55 quantum), 14 triangles
/// above half a quantum, none above one. An edit of a normal by less than
/// one quantum is not told apart from that and keeps the stored bytes.
pub const NORMAL_TOL: f32 = 1.0 / 127.0;

/// Tolerance of "a glTF translation is the one msh2gltf exported for a
/// stored translation" (a Res8 key's `pos`, f32 game units, exported exactly
/// with its axes permuted, so the reverse of an unedited value is exact),
/// per component: [`same_translation`]. `TRANSLATION_TOL` game units plus
/// [`TRANSLATION_ULPS`] f32 roundings of the value.
///
/// What it has to absorb: the game stores the translation as f32, whose
/// quantum (ulp) is `|v| * 2^-23`: 6e-8 at 0.9, 2e-6 at 20; Blender holds
/// object transforms as f32 matrices and its glTF exporter decomposes each
/// node's local matrix from them (`parent⁻¹ · world`), which is off by a few
/// ulps of the model's world coordinates: a building's node came back
/// 2.5e-6 off (0.88720703 → 0.8872045, issue 39), 40 times below this; a
/// move of 1e-3 (a millimetre if a unit is a metre) is ten times above it
/// and is written. Key reduction already treats 1e-4 as "the engine plays
/// the same" (`gltf_import::animation::REDUCE_POS_TOL`).
pub const TRANSLATION_TOL: f32 = 1e-4;

/// The relative part of [`same_translation`]: f32 roundings (ulps, `|v| *
/// f32::EPSILON` each) of the value itself, for the values far from the
/// origin whose own quantum approaches [`TRANSLATION_TOL`] (|v| > 50).
pub const TRANSLATION_ULPS: f32 = 16.0;

/// Whether `got` (a translation read back from a glTF, game or glTF axes)
/// is `exported` (what msh2gltf wrote for the stored value, the same axes):
/// `|got - exported| <= TRANSLATION_TOL + TRANSLATION_ULPS * ε * |exported|`
/// per component (see [`TRANSLATION_TOL`]). `true` keeps the stored raw
/// f32; `false` is an edit, stored as `got`.
pub fn same_translation(got: [f32; 3], exported: [f32; 3]) -> bool {
    (0..3).all(|k| {
        let tol = TRANSLATION_TOL + TRANSLATION_ULPS * f32::EPSILON * exported[k].abs();
        (got[k] - exported[k]).abs() <= tol
    })
}

/// Res5 UV → float: `c / 1024`, `c` read as u16 ([`UvSign::Unsigned`],
/// retail) or i16 ([`UvSign::Signed`], seed) (format-notes §6 R6). Exact.
#[inline]
pub fn dequantize_uv(uv: [i16; 2], sign: UvSign) -> [f32; 2] {
    uv.map(|c| sign.raw_value(c) as f32 / 1024.0)
}

/// Inverse of [`dequantize_uv`]: `round(uv * 1024)`, stored as i16 bits.
/// Signed: clamped to `-32768..=32767`. Unsigned: taken modulo 65536, i.e.
/// moved by whole multiples of 64 texture turns into `0..64` (a negative
/// UV then samples the same texel under REPEAT wrapping, format-notes §6
/// R6); non-finite values give 0.
pub fn quantize_uv(uv: [f32; 2], sign: UvSign) -> [i16; 2] {
    uv.map(|v| {
        let r = (v * 1024.0).round();
        match sign {
            UvSign::Unsigned if r.is_finite() => {
                (r.clamp(-2.0e9, 2.0e9) as i64).rem_euclid(65536) as u16 as i16
            }
            UvSign::Unsigned => 0,
            UvSign::Signed => r.clamp(-32768.0, 32767.0) as i16,
        }
    })
}

/// Whole texture turns to subtract from every UV of one batch before
/// [`quantize_uv`] so that none is negative under the unsigned (retail)
/// reading: per component `floor(min(0, smallest UV))` over the finite
/// values; `[0, 0]` for [`UvSign::Signed`]. The batch then samples the same
/// texels under REPEAT wrapping, and, the shift being one for the whole
/// batch, no triangle straddles the wrap of [`quantize_uv`] (a triangle
/// from u = -0.2 to 0.3 would otherwise span 63.5 turns) (format-notes §6
/// R6). A batch whose UVs already lie in `0..` gets `[0, 0]`: unedited
/// values keep their bits.
pub fn uv_turns(uvs: impl IntoIterator<Item = [f32; 2]>, sign: UvSign) -> [f32; 2] {
    if sign == UvSign::Signed {
        return [0.0, 0.0];
    }
    let mut lo = [0.0f32; 2];
    for uv in uvs {
        for (l, c) in lo.iter_mut().zip(uv) {
            if c.is_finite() {
                *l = l.min(c);
            }
        }
    }
    lo.map(f32::floor)
}

/// Res18 lightmap UV → float: u16 u, v ÷ 1024 (format-notes §6 R5). Exact.
#[inline]
pub fn dequantize_lightmap_uv(raw: [u8; 4]) -> [f32; 2] {
    [
        f32::from(u16::from_le_bytes([raw[0], raw[1]])) / 1024.0,
        f32::from(u16::from_le_bytes([raw[2], raw[3]])) / 1024.0,
    ]
}

/// Inverse of [`dequantize_lightmap_uv`]: `clamp(round(uv*1024), 0, 65535)`.
pub fn quantize_lightmap_uv(uv: [f32; 2]) -> [u8; 4] {
    let q = |v: f32| ((v * 1024.0).round().clamp(0.0, 65535.0) as u16).to_le_bytes();
    let (u, v) = (q(uv[0]), q(uv[1]));
    [u[0], u[1], v[0], v[1]]
}

/// Stored Res8 i16 quaternion → the engine's runtime `[w, x, y, z]`
/// (`s * (1/32767)`, msh-animation §2.1) under the storage order `layout`
/// (format-notes §6 R3).
pub fn dequantize_quat(q: [i16; 4], layout: QuatLayout) -> crate::anim::Quat {
    crate::anim::decode_quat(q, layout)
}

/// Inverse of [`dequantize_quat`]: runtime `[w, x, y, z]` →
/// `clamp(round(c*32767), -32767, 32767)` in the storage order `layout`.
pub fn quantize_quat(q: crate::anim::Quat, layout: QuatLayout) -> [i16; 4] {
    let c = |x: f32| (x * 32767.0).round().clamp(-32767.0, 32767.0) as i16;
    let [w, x, y, z] = q.map(c);
    match layout {
        QuatLayout::Xyzw => [x, y, z, w],
        QuatLayout::Wxyz => [w, x, y, z],
    }
}

/// A glTF-style unit rotation `(x, y, z, w)` in game axes → the stored
/// quaternion. The engine rotates by the conjugate of its runtime
/// quaternion (gltf-mapping.md, "Engine pose"), so the runtime value is
/// `(w, -x, -y, -z)`.
pub fn quantize_rotation(r: [f32; 4], layout: QuatLayout) -> [i16; 4] {
    quantize_quat([r[3], -r[0], -r[1], -r[2]], layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn uv_round_trips(raw in any::<[i16; 2]>()) {
            for sign in [UvSign::Unsigned, UvSign::Signed] {
                prop_assert_eq!(quantize_uv(dequantize_uv(raw, sign), sign), raw);
            }
        }

        #[test]
        fn lightmap_uv_round_trips(raw in any::<[u8; 4]>()) {
            prop_assert_eq!(quantize_lightmap_uv(dequantize_lightmap_uv(raw)), raw);
        }

        #[test]
        fn quat_round_trips(q in any::<[i16; 4]>()) {
            let q = q.map(|c| c.max(-32767));
            for layout in [QuatLayout::Xyzw, QuatLayout::Wxyz] {
                prop_assert_eq!(quantize_quat(dequantize_quat(q, layout), layout), q);
            }
        }

        #[test]
        fn uv_turns_keep_a_batch_whole(
            uvs in proptest::collection::vec(any::<[i16; 2]>().prop_map(|r| r.map(|c| f32::from(c) / 1024.0)), 1..16),
            turns in -20i32..20,
        ) {
            // A batch of signed-range UVs moved by whole turns: after the
            // shift every stored value is the source moved by whole turns,
            // and when the batch spans less than the 64 turns a u16 holds,
            // by the same turns for every vertex (what a triangle
            // interpolates is kept).
            let moved: Vec<[f32; 2]> = uvs.iter().map(|u| u.map(|c| c + turns as f32)).collect();
            let s = uv_turns(moved.iter().copied(), UvSign::Unsigned);
            prop_assert_eq!(s.map(f32::fract), [0.0, 0.0]);
            let mut offsets = Vec::new();
            for (u, m) in uvs.iter().zip(&moved) {
                let q = dequantize_uv(quantize_uv([m[0] - s[0], m[1] - s[1]], UvSign::Unsigned), UvSign::Unsigned);
                prop_assert_eq!([q[0] - u[0], q[1] - u[1]].map(|d| d.fract()), [0.0, 0.0]);
                offsets.push([q[0] - u[0], q[1] - u[1]]);
            }
            for k in 0..2 {
                let (lo, hi) = moved.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), m| (a.min(m[k]), b.max(m[k])));
                if hi - lo.min(0.0).floor() < 64.0 {
                    prop_assert!(offsets.iter().all(|o| o[k] == offsets[0][k]), "component {}: {:?}", k, offsets);
                }
            }
            let lo = |k: usize| moved.iter().map(|m| m[k]).fold(f32::INFINITY, f32::min);
            if lo(0) >= 0.0 && lo(1) >= 0.0 {
                prop_assert_eq!(s, [0.0, 0.0]);
            }
            prop_assert_eq!(uv_turns(moved.iter().copied(), UvSign::Signed), [0.0, 0.0]);
        }

        #[test]
        fn normal_round_trips(n in any::<[i8; 3]>()) {
            let n = n.map(|c| c.max(-127));
            let f = n.map(dequantize_normal_component);
            let q = quantize_normal(f);
            prop_assert_eq!([q[0], q[1], q[2]], n);
        }
    }

    #[test]
    fn negative_uv_wraps_by_whole_turns_when_unsigned() {
        let q = quantize_uv([-1.7, 0.25], UvSign::Unsigned);
        assert_eq!(q, [-1741, 256]);
        let back = dequantize_uv(q, UvSign::Unsigned);
        assert_eq!(back[0], 64.0 - 1741.0 / 1024.0);
        assert_eq!(quantize_uv([f32::NAN, 1e30], UvSign::Unsigned)[0], 0);
        assert_eq!(quantize_uv([-1e30, 1e30], UvSign::Signed), [-32768, 32767]);
    }

    #[test]
    fn identity_rotation_in_both_orders() {
        assert_eq!(
            quantize_rotation([0.0, 0.0, 0.0, 1.0], QuatLayout::Wxyz),
            [32767, 0, 0, 0]
        );
        assert_eq!(
            quantize_rotation([0.0, 0.0, 0.0, 1.0], QuatLayout::Xyzw),
            [0, 0, 0, 32767]
        );
    }
}
