//! The static transform of a glTF node (glTF 2.0 §3.5.2): TRS or a
//! matrix decomposed into translation, rotation and scale (mirror and shear
//! reported), in glTF axes.

use crate::gltf_import::read::{Elem, Props};
use serde_json::Value;

use super::normalize;
use crate::gltf_import::read::floats;
/// A glTF node's static transform in glTF axes: translation, unit rotation
/// `(x, y, z, w)` and per-axis scale (negative for a mirror).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    /// Translation.
    pub t: [f32; 3],
    /// Unit rotation quaternion `(x, y, z, w)`.
    pub r: [f32; 4],
    /// Scale along the node's local axes.
    pub s: [f32; 3],
}

impl Default for Trs {
    fn default() -> Self {
        Trs {
            t: [0.0; 3],
            r: [0.0, 0.0, 0.0, 1.0],
            s: [1.0; 3],
        }
    }
}

/// Quaternion `(x, y, z, w)` of an orthonormal rotation given by its
/// columns `r[col][row]`.
pub fn mat3_to_quat(r: [[f32; 3]; 3]) -> [f32; 4] {
    let (m00, m11, m22) = (r[0][0], r[1][1], r[2][2]);
    let tr = m00 + m11 + m22;
    let mut q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            (r[1][2] - r[2][1]) / s,
            (r[2][0] - r[0][2]) / s,
            (r[0][1] - r[1][0]) / s,
            0.25 * s,
        ]
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        [
            0.25 * s,
            (r[1][0] + r[0][1]) / s,
            (r[2][0] + r[0][2]) / s,
            (r[1][2] - r[2][1]) / s,
        ]
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        [
            (r[1][0] + r[0][1]) / s,
            0.25 * s,
            (r[2][1] + r[1][2]) / s,
            (r[2][0] - r[0][2]) / s,
        ]
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        [
            (r[2][0] + r[0][2]) / s,
            (r[2][1] + r[1][2]) / s,
            0.25 * s,
            (r[0][1] - r[1][0]) / s,
        ]
    };
    normalize(&mut q);
    q
}

/// Decomposes a column-major glTF `matrix` into [`Trs`]: scale = column
/// lengths (the first negated when the determinant is negative), rotation =
/// the Gram-Schmidt orthonormalised columns. Returns a note when the matrix
/// is not a TRS (shear, a zero scale, a projective row): the result is then
/// the nearest TRS in that sense.
pub fn decompose_matrix(m: &[f32; 16]) -> (Trs, Option<String>) {
    let col = |c: usize| [m[4 * c] as f64, m[4 * c + 1] as f64, m[4 * c + 2] as f64];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let (c0, c1, c2) = (col(0), col(1), col(2));
    let det = dot(c0, cross(c1, c2));
    let mut s = [dot(c0, c0).sqrt(), dot(c1, c1).sqrt(), dot(c2, c2).sqrt()];
    let mut note = None;
    if det < 0.0 {
        s[0] = -s[0];
    }
    let t = [m[12], m[13], m[14]];
    if [m[3], m[7], m[11]].iter().any(|x| x.abs() > 1e-6) || (m[15] - 1.0).abs() > 1e-6 {
        note = Some("the matrix has a projective row; it is ignored".to_string());
    }
    if s.iter().any(|x| x.abs() < 1e-12) || !det.is_finite() {
        let trs = Trs {
            t,
            r: [0.0, 0.0, 0.0, 1.0],
            s: s.map(|x| x as f32),
        };
        return (
            trs,
            Some("the matrix has a zero scale; rotation set to identity".into()),
        );
    }
    let unit = |v: [f64; 3]| {
        let n = dot(v, v).sqrt();
        v.map(|x| x / n)
    };
    let r0 = unit(c0.map(|x| x / s[0].signum()));
    let r1 = unit(c1);
    let shear = dot(r0, r1)
        .abs()
        .max(dot(r0, unit(c2)).abs())
        .max(dot(r1, unit(c2)).abs());
    if shear > 1e-3 && note.is_none() {
        note = Some(format!(
            "the matrix has shear (column cosine {shear:.4}); approximated by the nearest rotation and scale"
        ));
    }
    let r1 = unit([
        r1[0] - dot(r0, r1) * r0[0],
        r1[1] - dot(r0, r1) * r0[1],
        r1[2] - dot(r0, r1) * r0[2],
    ]);
    let r2 = cross(r0, r1);
    let f = |v: [f64; 3]| v.map(|x| x as f32);
    let r = mat3_to_quat([f(r0), f(r1), f(r2)]);
    (
        Trs {
            t,
            r,
            s: s.map(|x| x as f32),
        },
        note,
    )
}

/// A node's static [`Trs`] (glTF axes) from `matrix` or from `translation`,
/// `rotation` (normalised) and `scale`, with a note for a matrix that is not
/// a TRS (see [`decompose_matrix`]).
pub fn node_trs_full<P: Props + ?Sized>(node: &P) -> (Trs, Option<String>) {
    if let Some(m) = floats(node, "matrix").filter(|m| m.len() == 16) {
        let mut a = [0.0f32; 16];
        a.copy_from_slice(&m);
        return decompose_matrix(&a);
    }
    let t = floats(node, "translation")
        .filter(|v| v.len() == 3)
        .map_or([0.0; 3], |v| [v[0], v[1], v[2]]);
    let mut r = floats(node, "rotation")
        .filter(|v| v.len() == 4)
        .map_or([0.0, 0.0, 0.0, 1.0], |v| [v[0], v[1], v[2], v[3]]);
    normalize(&mut r);
    let s = floats(node, "scale")
        .filter(|v| v.len() == 3)
        .map_or([1.0; 3], |v| [v[0], v[1], v[2]]);
    (Trs { t, r, s }, None)
}

/// A node's static TRS (glTF axes): translation and rotation; scale is
/// dropped with a warning (the `--base` path: MSH nodes have no scale).
pub(super) fn node_trs(node: &Elem, g: usize, warnings: &mut Vec<String>) -> ([f32; 3], [f32; 4]) {
    let (trs, note) = node_trs_full(node);
    if let Some(n) = note {
        warnings.push(format!("glTF node {g}: {n}"));
    }
    if trs.s.iter().any(|x| (x - 1.0).abs() > 1e-4) {
        let what = if node.get("matrix").is_some() {
            "matrix scale"
        } else {
            "scale"
        };
        warnings.push(format!(
            "glTF node {g}: {what} {:?} ignored (MSH nodes have no scale)",
            trs.s
        ));
    }
    (trs.t, trs.r)
}

/// Legacy 24-byte-node models (`MTCHECK.MSH`): msh2gltf exports one
/// untransformed node (the record layout is unknown), so any node transform
/// in the glTF (an edited rest rotation, translation or scale) cannot be
/// stored; each is reported, naming the node and its values.
pub(super) fn warn_legacy_transforms(nodes: &[Elem], warnings: &mut Vec<String>) {
    for (g, nd) in nodes.iter().enumerate() {
        let (trs, _) = node_trs_full(nd);
        let mut what = Vec::new();
        if trs.t.iter().any(|x| x.abs() > 1e-6) {
            what.push(format!("translation {:?}", trs.t));
        }
        if (trs.r[3].abs() - 1.0).abs() > 1e-6 {
            what.push(format!("rotation {:?}", trs.r));
        }
        if trs.s.iter().any(|x| (x - 1.0).abs() > 1e-6) {
            what.push(format!("scale {:?}", trs.s));
        }
        if !what.is_empty() {
            warnings.push(format!(
                "glTF node {g} {:?}: {} not stored (legacy 24-byte-node model: its node records are kept as stored, their layout is unknown); apply the transform to the mesh instead (Blender: Apply > All Transforms)",
                nd.get("name").and_then(Value::as_str).unwrap_or(""),
                what.join(", ")
            ));
        }
    }
}
