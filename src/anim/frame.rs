//! The x87 frame rule (msh-animation §3.1, §11).

/// 2^63 as an f32 (exact): the first value an x87 64-bit `FISTP` cannot store.
const TWO_POW_63: f32 = 9_223_372_036_854_775_808.0;

/// Frame index of sample time `t` (frames), exactly as the engine computes it
/// (msh-animation §3.1, §11): `frame = x87 FISTP(t - 0.5)` through a 64-bit
/// buffer, the low 32 bits of which are the result.
///
/// The engine's control word is `(cw & 0xF0FF) | 0x003F` (`Ngi32::sub_10006D00`):
/// round-to-nearest-even (RC = 00), precision control single (PC = 00), all
/// exceptions masked. The Rust code is exactly equivalent:
///
/// 1. `x = t - 0.5` is an `f32` subtraction. With PC = single the x87 rounds
///    the difference to a 24-bit significand with round-to-nearest-even, which
///    is the IEEE single result: `t - 0.5` for a finite f32 `t` can neither
///    overflow nor become subnormal (it is 0 or at least 2^-25 in magnitude),
///    so the x87's wider exponent range changes nothing. Infinities and NaN
///    propagate identically.
/// 2. `FISTP m64` rounds `x` to an integer with the current rounding mode:
///    [`f32::round_ties_even`] (so `-0.5 → -0`, `0.5 → 0`, `1.5 → 2`,
///    `2.5 → 2`).
/// 3. When the rounded value is NaN or outside `[-2^63, 2^63)` the invalid
///    operation is masked and the x87 stores the "integer indefinite"
///    `0x8000_0000_0000_0000`, whose low dword is 0. In range, the stored i64
///    is the rounded value. Rust's saturating `as i64` gives `i64::MIN` (low
///    dword 0) below `-2^63`, so only NaN and `>= 2^63` need the explicit case.
/// 4. The engine keeps the low 32 bits (`as i32`, two's complement wrap).
///    Callers compare `frame as u32 >= frame_count` (§3.2), so negative frames
///    fall back.
///
/// Consequences worth knowing: `t = 1e30`, `±inf` and NaN give frame 0 (not a
/// fallback), `t = 2^32` gives frame 0, `t = -1` gives frame -2.
pub fn frame_index(t: f32) -> i32 {
    let r = (t - 0.5).round_ties_even();
    if r.is_nan() || r >= TWO_POW_63 {
        // x87 integer indefinite 0x8000_0000_0000_0000: low dword 0.
        return 0;
    }
    (r as i64) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_round_to_even() {
        assert_eq!(frame_index(0.0), 0); // -0.5 -> -0
        assert_eq!(frame_index(1.0), 0); // 0.5 -> 0
        assert_eq!(frame_index(2.0), 2); // 1.5 -> 2
        assert_eq!(frame_index(3.0), 2); // 2.5 -> 2
        assert_eq!(frame_index(4.0), 4); // 3.5 -> 4
        assert_eq!(frame_index(299.0), 298); // 298.5 -> 298
    }

    #[test]
    fn fractional_times() {
        assert_eq!(frame_index(0.5), 0);
        assert_eq!(frame_index(1.25), 1); // 0.75 -> 1
        assert_eq!(frame_index(0.9), 0); // 0.4 -> 0
        assert_eq!(frame_index(150.3), 150); // 149.8 -> 150
        assert_eq!(frame_index(0.25), 0); // -0.25 -> -0
    }

    #[test]
    fn negative_times() {
        assert_eq!(frame_index(-1.0), -2); // -1.5 -> -2
        assert_eq!(frame_index(-0.5), -1); // -1.0
        assert_eq!(frame_index(-2.0), -2); // -2.5 -> -2
        assert_eq!(frame_index(-0.2), -1); // -0.7 -> -1
        assert!(frame_index(-1.0) as u32 >= 300);
    }

    #[test]
    fn indefinite_and_wrapping() {
        assert_eq!(frame_index(f32::NAN), 0);
        assert_eq!(frame_index(f32::INFINITY), 0);
        assert_eq!(frame_index(f32::NEG_INFINITY), 0);
        assert_eq!(frame_index(1e30), 0);
        assert_eq!(frame_index(-1e30), 0);
        assert_eq!(frame_index(TWO_POW_63), 0);
        // -2^63 itself is representable: i64::MIN, low dword 0.
        assert_eq!(frame_index(-TWO_POW_63), 0);
        // 2^32 + 512 (f32 spacing there is 512): low dword 512.
        assert_eq!(frame_index(4_294_967_808.0), 512);
        assert_eq!(frame_index(4_294_967_296.0), 0);
        // 2^31 wraps to i32::MIN.
        assert_eq!(frame_index(2_147_483_648.0), i32::MIN);
        // Large f32 below 2^63: low 32 bits of the integer (2^62 -> 0).
        assert_eq!(frame_index(4_611_686_018_427_387_904.0), 0);
        // 16777216.0 - 0.5 rounds (f32) back to 16777216.
        assert_eq!(frame_index(16_777_216.0), 16_777_216);
    }
}
