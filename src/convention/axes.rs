//! Axis change and quaternion convention (gltf-mapping.md, "Axes" and
//! "Engine pose").
//!
//! The game is Z-up (format-notes §5). With [`Up::Y`] a game vector
//! `(x, y, z)` becomes the glTF vector `(x, z, -y)`: a proper rotation `A`
//! (det +1, no mirroring), applied to positions, normals, translations and
//! the vector part of quaternions. [`Up::Z`] keeps game coordinates.

use super::Up;
use crate::anim::Quat;

/// Applies the axis change `A` to a game-space vector.
#[inline]
pub fn vec3(up: Up, v: [f32; 3]) -> [f32; 3] {
    match up {
        Up::Y => [v[0], v[2], -v[1]],
        Up::Z => v,
    }
}

/// Applies the inverse axis change `A⁻¹` to a glTF-space vector.
#[inline]
pub fn vec3_inv(up: Up, v: [f32; 3]) -> [f32; 3] {
    match up {
        Up::Y => [v[0], -v[2], v[1]],
        Up::Z => v,
    }
}

/// The axis change as a row-major 3x3 matrix (`glTF = A · game`).
pub fn matrix(up: Up) -> [[f64; 3]; 3] {
    match up {
        Up::Y => [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]],
        Up::Z => [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    }
}

/// Converts an engine runtime quaternion `[w, x, y, z]` (msh-animation §3.4)
/// into a unit glTF rotation `[x, y, z, w]` in glTF axes.
///
/// The engine's `quat_to_matrix` (msh-animation §4.4) read with column
/// vectors is the transpose of the usual rotation of `q`, i.e. the rotation
/// of the conjugate; so the glTF rotation in game axes is
/// `normalize(-x, -y, -z, w)`, then the vector part goes through `A`.
/// An all-zero (or non-finite) quaternion becomes the identity.
#[inline]
pub fn engine_quat_to_gltf(up: Up, q: Quat) -> [f32; 4] {
    let [w, x, y, z] = q.map(f64::from);
    let n2 = w * w + x * x + y * y + z * z;
    if n2 <= 0.0 || !n2.is_finite() {
        return [0.0, 0.0, 0.0, 1.0];
    }
    let inv = 1.0 / n2.sqrt();
    let v = vec3(
        up,
        [(-x * inv) as f32, (-y * inv) as f32, (-z * inv) as f32],
    );
    [v[0], v[1], v[2], (w * inv) as f32]
}

/// Normalises a game-space vector in f64 and rounds to f32; `None` for a
/// zero or non-finite vector.
#[inline]
pub fn normalize3(v: [f64; 3]) -> Option<[f32; 3]> {
    let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if l2 <= 0.0 || !l2.is_finite() {
        return None;
    }
    let inv = 1.0 / l2.sqrt();
    Some([
        (v[0] * inv) as f32,
        (v[1] * inv) as f32,
        (v[2] * inv) as f32,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_change_is_a_rotation() {
        let a = matrix(Up::Y);
        let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
        assert_eq!(det, 1.0);
        assert_eq!(vec3(Up::Y, [1.0, 2.0, 3.0]), [1.0, 3.0, -2.0]);
        assert_eq!(
            vec3_inv(Up::Y, vec3(Up::Y, [1.0, 2.0, 3.0])),
            [1.0, 2.0, 3.0]
        );
        assert_eq!(vec3(Up::Z, [1.0, 2.0, 3.0]), [1.0, 2.0, 3.0]);
    }

    #[test]
    fn quaternion_is_conjugated_and_normalised() {
        assert_eq!(engine_quat_to_gltf(Up::Z, [0.0; 4]), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            engine_quat_to_gltf(Up::Z, [2.0, 0.0, 0.0, 0.0]),
            [0.0, 0.0, 0.0, 1.0]
        );
        // Engine q = [w, x, y, z] = [0, 0, 0, 1]: glTF (0, 0, -1, 0) in game axes,
        // (0, -1, 0, 0) after A (game z becomes glTF y).
        assert_eq!(
            engine_quat_to_gltf(Up::Z, [0.0, 0.0, 0.0, 1.0]),
            [0.0, 0.0, -1.0, 0.0]
        );
        assert_eq!(
            engine_quat_to_gltf(Up::Y, [0.0, 0.0, 0.0, 1.0]),
            [0.0, -1.0, 0.0, 0.0]
        );
    }
}
