//! Property tests of the animation runtime primitives (msh-animation §3.1,
//! §4.4).

use mshgltf::anim::{dot4, frame_index, quat_interp};
use proptest::prelude::*;

/// Reference frame rule: `t - 0.5` rounded to f32, then round-half-even in
/// f64 and converted to i64 (finite `t` with `|t| < 2^62`, so no x87
/// "integer indefinite" case), low 32 bits.
fn reference_frame(t: f32) -> i32 {
    let x = f64::from(t - 0.5);
    let r = x.round_ties_even();
    (r as i64) as i32
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn frame_index_matches_reference_small(t in -1.0e6f32..1.0e6f32) {
        prop_assert_eq!(frame_index(t), reference_frame(t));
    }

    #[test]
    fn frame_index_matches_reference_halves(n in -4_000_000i32..4_000_000) {
        // Exact .5 ties and integers: t = n / 2.
        let t = n as f32 * 0.5;
        prop_assert_eq!(frame_index(t), reference_frame(t));
    }

    #[test]
    fn frame_index_matches_reference_wide(bits in any::<u32>()) {
        let t = f32::from_bits(bits);
        prop_assume!(t.is_finite() && t.abs() < 4.0e18);
        prop_assert_eq!(frame_index(t), reference_frame(t));
    }

    #[test]
    fn interp_at_zero_is_q0(
        q0 in prop::array::uniform4(-1.0f32..1.0),
        q1 in prop::array::uniform4(-1.0f32..1.0),
    ) {
        prop_assume!(dot4(&q0, &q1) >= 0.0);
        let r = quat_interp(q0, q1, 0.0);
        prop_assert_eq!(r, q0);
    }

    #[test]
    fn interp_at_one_is_near_q1(
        q0 in prop::array::uniform4(-1.0f32..1.0),
        q1 in prop::array::uniform4(-1.0f32..1.0),
    ) {
        // Unit inputs, positive dot: a = 1 reproduces q1 up to rounding.
        let n = |q: [f32; 4]| {
            let l = dot4(&q, &q).sqrt();
            [q[0] / l, q[1] / l, q[2] / l, q[3] / l]
        };
        prop_assume!(dot4(&q0, &q0) > 0.01 && dot4(&q1, &q1) > 0.01);
        let (a, b) = (n(q0), n(q1));
        prop_assume!(dot4(&a, &b) >= 0.0);
        let r = quat_interp(a, b, 1.0);
        for i in 0..4 {
            prop_assert!((r[i] - b[i]).abs() < 1e-5, "{:?} vs {:?}", r, b);
        }
    }
}
