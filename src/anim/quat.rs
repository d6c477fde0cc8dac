//! `g_FastProc[14/17/22]` and the key quaternion decode (msh-animation §2.1,
//! §3.4, §4.4). Every arithmetic operation is an IEEE single operation in the
//! order the spec writes it (x87 with PC = single); `acos`, `sin`, `cos` are
//! evaluated in f64 by the platform libm and rounded to f32.

use super::{Mat4, Quat, QuatLayout};

/// `1.0f / 32767.0f` (msh-animation §2.1).
const INV_32767: f32 = 1.0 / 32767.0;

/// The `1 - dot` threshold of the linear branch of `quat_interp` (§4.4):
/// the seed's `9.9999997e-6f`, which is the f32 nearest to `1e-5`
/// (bits `0x3727_C5AC`).
const LINEAR_EPS: f32 = 1.0e-5;

/// The 4x4 identity.
pub const IDENTITY: Mat4 = [
    1.0, 0.0, 0.0, 0.0, //
    0.0, 1.0, 0.0, 0.0, //
    0.0, 0.0, 1.0, 0.0, //
    0.0, 0.0, 0.0, 1.0,
];

/// Converts stored i16 components to the runtime `[w, x, y, z]`
/// (`(float)s * (1.0f / 32767.0f)`, msh-animation §2.1, §3.4).
///
/// With [`QuatLayout::Xyzw`] (seed) the stored `(s0, s1, s2, s3)` are
/// `(qx, qy, qz, qw)` and the result is `[s3, s0, s1, s2] / 32767`; with
/// [`QuatLayout::Wxyz`] the stored order already is `w, x, y, z`.
/// An all-zero key decodes to `[0, 0, 0, 0]`, which [`quat_to_matrix`] turns
/// into the identity rotation.
pub fn decode_quat(q: [i16; 4], layout: QuatLayout) -> Quat {
    let d = |s: i16| f32::from(s) * INV_32767;
    match layout {
        QuatLayout::Xyzw => [d(q[3]), d(q[0]), d(q[1]), d(q[2])],
        QuatLayout::Wxyz => [d(q[0]), d(q[1]), d(q[2]), d(q[3])],
    }
}

/// `dot4(a, b)` summed left to right in f32.
pub fn dot4(a: &Quat, b: &Quat) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

fn acos_f32(x: f32) -> f32 {
    f64::from(x).acos() as f32
}

fn sin_f32(x: f32) -> f32 {
    f64::from(x).sin() as f32
}

fn cos_f32(x: f32) -> f32 {
    f64::from(x).cos() as f32
}

/// `g_FastProc[17]` (`quat_interp`), msh-animation §4.4: closed-form SLERP
/// weights, no renormalisation of the result.
///
/// ```text
/// dot = dot4(q0, q1); sign = 1; if dot < 0 { dot = -dot; sign = -1 }
/// if 1 - dot <= 9.9999997e-6 { w0 = 1 - a; w1 = a }
/// else { theta = acos(dot); inv = 1 / sin(theta);
///        w1 = sin(a*theta) * inv; w0 = cos(a*theta) - w1*dot }
/// w1 *= sign; out = w0*q0 + w1*q1
/// ```
///
/// Never panics: a NaN `dot` takes the `acos` branch and yields NaN.
pub fn quat_interp(q0: Quat, q1: Quat, a: f32) -> Quat {
    let mut dot = dot4(&q0, &q1);
    let mut sign = 1.0f32;
    if dot < 0.0 {
        dot = -dot;
        sign = -1.0;
    }
    let (w0, mut w1);
    if 1.0 - dot <= LINEAR_EPS {
        w0 = 1.0 - a;
        w1 = a;
    } else {
        let theta = acos_f32(dot);
        let inv_sin_theta = 1.0 / sin_f32(theta);
        let at = a * theta;
        w1 = sin_f32(at) * inv_sin_theta;
        w0 = cos_f32(at) - w1 * dot;
    }
    w1 *= sign;
    [
        w0 * q0[0] + w1 * q1[0],
        w0 * q0[1] + w1 * q1[1],
        w0 * q0[2] + w1 * q1[2],
        w0 * q0[3] + w1 * q1[3],
    ]
}

/// `g_FastProc[22]` (`quat_blend`): the same algorithm as [`quat_interp`]
/// (msh-animation §4.4: "index 17 и 22, один и тот же алгоритм").
pub fn quat_blend(q0: Quat, q1: Quat, a: f32) -> Quat {
    quat_interp(q0, q1, a)
}

/// `g_FastProc[14]` (`quat_to_matrix`) for `q = [w, x, y, z]`, verbatim from
/// msh-animation §4.4: row-major, translation cells `m[3], m[7], m[11]` zero,
/// `m[15] = 1`. No normalisation: a zero quaternion gives the identity.
pub fn quat_to_matrix(q: Quat) -> Mat4 {
    let [w, x, y, z] = q;
    [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y + w * z),
        2.0 * (x * z - w * y),
        0.0,
        2.0 * (x * y - w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z + w * x),
        0.0,
        2.0 * (x * z + w * y),
        2.0 * (y * z - w * x),
        1.0 - 2.0 * (x * x + y * y),
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
    ]
}

/// Row-major product `a * b` (column vectors: `world = parent * local`),
/// each cell `a[i][0]*b[0][j] + ... + a[i][3]*b[3][j]` summed left to right in
/// f32.
pub fn mat_mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut c = [0.0f32; 16];
    for i in 0..4 {
        for j in 0..4 {
            c[i * 4 + j] = a[i * 4] * b[j]
                + a[i * 4 + 1] * b[4 + j]
                + a[i * 4 + 2] * b[8 + j]
                + a[i * 4 + 3] * b[12 + j];
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_layouts() {
        let q = [1, -2, 3, 32767];
        let a = decode_quat(q, QuatLayout::Xyzw);
        assert_eq!(a[0], 1.0);
        assert_eq!(a[1], 1.0f32 * INV_32767);
        assert_eq!(a[2], -2.0f32 * INV_32767);
        assert_eq!(a[3], 3.0f32 * INV_32767);
        let b = decode_quat([32767, 1, -2, 3], QuatLayout::Wxyz);
        assert_eq!(a, b);
        assert_eq!(decode_quat([0, 0, 0, -32767], QuatLayout::Xyzw)[0], -1.0);
        assert_eq!(
            decode_quat([-32768, 0, 0, 0], QuatLayout::Wxyz)[0],
            -32768.0 * INV_32767
        );
        assert_eq!(INV_32767.to_bits(), 0x3800_0100);
        assert_eq!(LINEAR_EPS.to_bits(), 0x3727_C5AC);
        assert_eq!(LINEAR_EPS, "9.9999997e-6".parse::<f32>().unwrap());
    }

    #[test]
    fn matrix_of_known_quats() {
        assert_eq!(quat_to_matrix([1.0, 0.0, 0.0, 0.0]), IDENTITY);
        assert_eq!(quat_to_matrix([-1.0, 0.0, 0.0, 0.0]), IDENTITY);
        // All-zero stored quaternion: identity rotation.
        assert_eq!(quat_to_matrix([0.0; 4]), IDENTITY);
        // 180 degrees about z: [w,x,y,z] = [0,0,0,1].
        let m = quat_to_matrix([0.0, 0.0, 0.0, 1.0]);
        #[rustfmt::skip]
        let want = [
            -1.0, 0.0, 0.0, 0.0,
            0.0, -1.0, 0.0, 0.0,
            0.0, 0.0, 1.0, 0.0,
            0.0, 0.0, 0.0, 1.0,
        ];
        assert_eq!(m, want);
        // 90 degrees about z with an exactly representable half-angle pair
        // (w = z = 0.5, not unit): m[1] = 2*w*z = 0.5, m[4] = -0.5,
        // m[0] = m[5] = 1 - 2*0.25 = 0.5, m[10] = 1.
        let m = quat_to_matrix([0.5, 0.0, 0.0, 0.5]);
        #[rustfmt::skip]
        let want = [
            0.5, 0.5, 0.0, 0.0,
            -0.5, 0.5, 0.0, 0.0,
            0.0, 0.0, 1.0, 0.0,
            0.0, 0.0, 0.0, 1.0,
        ];
        assert_eq!(m, want);
        // General: w=0.5,x=0.5,y=0.5,z=0.5 (120 degrees about (1,1,1)):
        // the permutation x->y->z->x transposed per the seed's formula.
        let m = quat_to_matrix([0.5, 0.5, 0.5, 0.5]);
        #[rustfmt::skip]
        let want = [
            0.0, 1.0, 0.0, 0.0,
            0.0, 0.0, 1.0, 0.0,
            1.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 1.0,
        ];
        assert_eq!(m, want);
    }

    #[test]
    fn interp_endpoints_linear_branch() {
        let q0 = [1.0, 0.0, 0.0, 0.0];
        let q1 = [0.999_999_5, 0.001, 0.0, 0.0];
        // 1 - dot = 5e-7 <= 1e-5: linear weights.
        assert_eq!(quat_interp(q0, q1, 0.0), q0);
        assert_eq!(quat_interp(q0, q1, 1.0), q1);
        let h = quat_interp(q0, q1, 0.5);
        assert_eq!(h[0], 0.5 * 1.0 + 0.5 * 0.999_999_5f32);
        assert_eq!(h[1], 0.5 * 0.001f32);
    }

    #[test]
    fn interp_slerp_branch() {
        // 90 degrees apart on the unit 4-sphere: theta = pi/2.
        let q0 = [1.0, 0.0, 0.0, 0.0];
        let q1 = [0.0, 0.0, 0.0, 1.0];
        assert_eq!(quat_interp(q0, q1, 0.0), q0);
        let e = quat_interp(q0, q1, 1.0);
        // w0 = cos(theta) - w1*0 ~ -4.37e-8 (f32 of cos(f32(pi/2))).
        let theta = (0.0f64).acos() as f32;
        let w0 = f64::from(theta).cos() as f32;
        let w1 = (f64::from(theta).sin() as f32) * (1.0 / (f64::from(theta).sin() as f32));
        assert_eq!(e, [w0, 0.0, 0.0, w1]);
        let h = quat_interp(q0, q1, 0.5);
        let at = 0.5 * theta;
        let s = f64::from(at).sin() as f32;
        let c = f64::from(at).cos() as f32;
        let inv = 1.0 / (f64::from(theta).sin() as f32);
        assert_eq!(h, [c - (s * inv) * 0.0, 0.0, 0.0, s * inv]);
        assert!((h[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((h[3] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn interp_negative_dot_flips_q1() {
        let q0 = [1.0, 0.0, 0.0, 0.0];
        let q1 = [-1.0, 0.0, 0.0, 0.0];
        // dot = -1 -> 1, linear branch with sign -1: out = (1-a)q0 - a q1 = q0.
        assert_eq!(quat_interp(q0, q1, 0.5), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(quat_interp(q0, q1, 1.0), [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn interp_branch_threshold() {
        // Near 1 the f32 spacing is 2^-24 and 1 - d is exact, so the last
        // dot taking the linear branch is 1 - 167 * 2^-24 (167 * 2^-24 =
        // 9.954e-6 <= 9.9999997e-6 < 168 * 2^-24).
        let q0 = [1.0, 0.0, 0.0, 0.0];
        let ulp = 1.0 / 16_777_216.0f32;
        let d_lin = 1.0 - 167.0 * ulp;
        assert!(1.0 - d_lin <= LINEAR_EPS);
        let lin = quat_interp(q0, [d_lin, 0.0, 0.0, 0.0], 0.5);
        assert_eq!(lin[0], 0.5 + 0.5 * d_lin);
        let d_acos = 1.0 - 168.0 * ulp;
        assert!(1.0 - d_acos > LINEAR_EPS);
        let s = quat_interp(q0, [d_acos, 0.0, 0.0, 0.0], 0.5);
        let theta = acos_f32(d_acos);
        let inv = 1.0 / sin_f32(theta);
        let w1 = sin_f32(0.5 * theta) * inv;
        let w0 = cos_f32(0.5 * theta) - w1 * d_acos;
        assert_eq!(s[0], w0 + w1 * d_acos);
    }

    #[test]
    fn interp_nan_does_not_panic() {
        let r = quat_interp([f32::NAN; 4], [1.0, 0.0, 0.0, 0.0], 0.5);
        assert!(r[0].is_nan());
    }

    #[test]
    fn blend_is_interp() {
        let q0 = [0.9, 0.1, 0.2, 0.3];
        let q1 = [0.1, 0.9, 0.2, -0.3];
        assert_eq!(quat_blend(q0, q1, 0.3), quat_interp(q0, q1, 0.3));
    }

    #[test]
    fn mat_mul_exact() {
        #[rustfmt::skip]
        let a = [
            1.0, 2.0, 3.0, 4.0,
            5.0, 6.0, 7.0, 8.0,
            9.0, 10.0, 11.0, 12.0,
            13.0, 14.0, 15.0, 16.0,
        ];
        assert_eq!(mat_mul(&a, &IDENTITY), a);
        assert_eq!(mat_mul(&IDENTITY, &a), a);
        let c = mat_mul(&a, &a);
        assert_eq!(c[0], 90.0);
        assert_eq!(c[1], 100.0);
        assert_eq!(c[15], 600.0);
        // Translation composes: parent T(1,2,3) * child T(4,5,6).
        let mut p = IDENTITY;
        p[3] = 1.0;
        p[7] = 2.0;
        p[11] = 3.0;
        let mut l = IDENTITY;
        l[3] = 4.0;
        l[7] = 5.0;
        l[11] = 6.0;
        let w = mat_mul(&p, &l);
        assert_eq!((w[3], w[7], w[11]), (5.0, 7.0, 9.0));
    }
}
