//! Reading glTF primitives for the geometry passes: triangle lists (strips
//! and fans converted), per-vertex data in glTF axes, UVs with the
//! material's `KHR_texture_transform` (gltf-mapping.md "Meshes"; glTF 2.0
//! §3.7.2.1).

use crate::gltf_import::read::TopArray;
use serde_json::Value;

use super::err;
use crate::convention::quant::uv_turns;
use crate::convention::UvSign;
use crate::gltf_export::BatchMaterial;
use crate::gltf_import::matching::Matched;
use crate::gltf_import::read::{arr, floats, idx, GltfFile, RawAccessor};
use crate::gltf_import::ImportError;
/// One glTF primitive, read: triangle list indices and per-vertex data in
/// glTF axes (UVs with the material's `KHR_texture_transform` applied).
#[derive(Debug, Clone)]
pub(crate) struct Prim {
    /// Triangle corners, 3 per triangle, each `< pos.len()`.
    pub(crate) indices: Vec<u32>,
    /// glTF-axes positions.
    pub(crate) pos: Vec<[f32; 3]>,
    pub(crate) nrm: Option<Vec<[f32; 3]>>,
    pub(crate) uv: Option<Vec<[f32; 2]>>,
    /// `TEXCOORD_1` as stored: the Res18 lightmap UV (format-notes §6 R5).
    pub(crate) uv1: Option<Vec<[f32; 2]>>,
    /// `_RES15` (8 bytes per vertex), when the primitive carries it.
    pub(super) r15: Option<RawAccessor>,
    /// Batch material (the `--base` path's material matching).
    pub(super) material: Option<BatchMaterial>,
    /// The glTF material index.
    pub(crate) gltf_material: Option<usize>,
}

/// How [`read_primitive`] treats what a triangle list cannot hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PrimRules {
    /// Convert TRIANGLE_STRIP and TRIANGLE_FAN to triangle lists (glTF 2.0
    /// §3.7.2.1 corner order; triangles with a repeated corner dropped);
    /// otherwise any mode but TRIANGLES is a `gltf.mode` error.
    pub(crate) triangulate: bool,
    /// Ignore morph targets (the base shape is read) instead of a
    /// `gltf.morph` error.
    pub(crate) ignore_morph: bool,
}

const MODE_NAMES: [&str; 7] = [
    "POINTS",
    "LINES",
    "LINE_LOOP",
    "LINE_STRIP",
    "TRIANGLES",
    "TRIANGLE_STRIP",
    "TRIANGLE_FAN",
];

/// Triangle list of a strip or fan over `src` (glTF 2.0 §3.7.2.1): strip
/// triangle `i` is `(v[i], v[i+1+i%2], v[i+2-i%2])`, fan triangle `i` is
/// `(v[i+1], v[i+2], v[0])`. Triangles with a repeated corner are dropped.
pub(crate) fn triangulate(mode: usize, src: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(src.len().saturating_sub(2) * 3);
    for i in 0..src.len().saturating_sub(2) {
        let t = if mode == 5 {
            [src[i], src[i + 1 + i % 2], src[i + 2 - i % 2]]
        } else {
            [src[i + 1], src[i + 2], src[0]]
        };
        if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
            out.extend_from_slice(&t);
        }
    }
    out
}

fn to_vec3(v: Vec<f32>) -> Vec<[f32; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// KHR_texture_transform of a material's base colour texture, as a 2x3
/// matrix, and the texCoord set it applies to.
fn texture_transform(doc: &GltfFile, material: Option<usize>) -> (usize, Option<[[f32; 3]; 2]>) {
    let Some(mat) = material.and_then(|m| doc.materials().get(m)) else {
        return (0, None);
    };
    let Some(info) = mat.pointer("/pbrMetallicRoughness/baseColorTexture") else {
        return (0, None);
    };
    let set = idx(info, "texCoord").unwrap_or(0);
    let Some(t) = info.pointer("/extensions/KHR_texture_transform") else {
        return (set, None);
    };
    let set = idx(t, "texCoord").unwrap_or(set);
    let off = floats(t, "offset")
        .filter(|v| v.len() == 2)
        .unwrap_or(vec![0.0, 0.0]);
    let sc = floats(t, "scale")
        .filter(|v| v.len() == 2)
        .unwrap_or(vec![1.0, 1.0]);
    let r = t.get("rotation").and_then(Value::as_f64).unwrap_or(0.0) as f32;
    let (s, c) = r.sin_cos();
    // T * R * S (KHR_texture_transform): R = [[c, s], [-s, c]].
    (
        set,
        Some([
            [c * sc[0], s * sc[1], off[0]],
            [-s * sc[0], c * sc[1], off[1]],
        ]),
    )
}

/// The primitives of glTF mesh `mesh`, each primitive's `TEXCOORD_0` moved
/// by whole turns as one batch ([`uv_turns`]) for the model's UV sign.
pub(super) fn read_prims(
    doc: &GltfFile,
    m: &Matched,
    mesh: usize,
    sign: UvSign,
) -> Result<Vec<Prim>, ImportError> {
    let mj = doc.elem(TopArray::Meshes, mesh)?;
    let mut out = Vec::new();
    for (pi, p) in arr(mj, "primitives").iter().enumerate() {
        let mut prim = read_primitive(doc, mesh, pi, p, PrimRules::default())?;
        prim.material = prim
            .gltf_material
            .and_then(|mi| m.materials.get(mi).copied().flatten());
        if let Some(uv) = prim.uv.as_mut() {
            let s = uv_turns(uv.iter().copied(), sign);
            if s != [0.0, 0.0] {
                for u in uv.iter_mut() {
                    *u = [u[0] - s[0], u[1] - s[1]];
                }
            }
        }
        out.push(prim);
    }
    Ok(out)
}

/// Reads primitive `pi` (`p`) of glTF mesh `mesh` as a triangle list.
///
/// # Errors
/// `gltf.mode` (points, lines; strips and fans unless
/// [`PrimRules::triangulate`]), `gltf.morph` (morph targets unless
/// [`PrimRules::ignore_morph`]), `gltf.accessor` (no POSITION, attribute
/// counts that differ, an index out of range, a list that is not a multiple
/// of 3).
pub(crate) fn read_primitive(
    doc: &GltfFile,
    mesh: usize,
    pi: usize,
    p: &Value,
    rules: PrimRules,
) -> Result<Prim, ImportError> {
    let at = |d: &str| format!("mesh {mesh} primitive {pi}: {d}");
    let mode = primitive_mode(p, rules, &at)?;
    let attrs = p.get("attributes").cloned().unwrap_or(Value::Null);
    let a = |name: &str| idx(&attrs, name);
    let pa = a("POSITION").ok_or_else(|| err("gltf.accessor", at("no POSITION attribute")))?;
    let pos = to_vec3(doc.floats(pa, 3, "POSITION")?);
    let n = pos.len();
    let count_ok = |len: usize, what: &str| -> Result<(), ImportError> {
        if len != n {
            return Err(err(
                "gltf.accessor",
                at(&format!("{what} has {len} elements, POSITION has {n}")),
            ));
        }
        Ok(())
    };
    let nrm = match a("NORMAL") {
        Some(x) => {
            let v = to_vec3(doc.floats(x, 3, "NORMAL")?);
            count_ok(v.len(), "NORMAL")?;
            Some(v)
        }
        None => None,
    };
    let material = idx(p, "material");
    let (set, tt) = texture_transform(doc, material);
    let uv = match a(&format!("TEXCOORD_{set}")) {
        Some(x) => {
            let v = doc.floats(x, 2, "TEXCOORD")?;
            count_ok(v.len() / 2, "TEXCOORD")?;
            Some(
                v.chunks_exact(2)
                    .map(|c| match tt {
                        None => [c[0], c[1]],
                        Some(t) => [
                            t[0][0] * c[0] + t[0][1] * c[1] + t[0][2],
                            t[1][0] * c[0] + t[1][1] * c[1] + t[1][2],
                        ],
                    })
                    .collect(),
            )
        }
        None => None,
    };
    let uv1 = match a("TEXCOORD_1") {
        Some(x) => {
            let v = doc.floats(x, 2, "TEXCOORD_1")?;
            count_ok(v.len() / 2, "TEXCOORD_1")?;
            Some(v.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
        }
        None => None,
    };
    let raw = |name: &str, size: usize| -> Result<Option<RawAccessor>, ImportError> {
        match a(name) {
            None => Ok(None),
            Some(x) => {
                let r = doc.accessor(x)?;
                count_ok(r.count, name)?;
                Ok((r.elem_size() == size).then_some(r))
            }
        }
    };
    let r15 = raw("_RES15", 8)?;
    let mut indices = match idx(p, "indices") {
        Some(x) => doc.indices(x)?,
        None => (0..n as u32).collect(),
    };
    if let Some(&bad) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(err(
            "gltf.accessor",
            at(&format!("index {bad} >= {n} vertices")),
        ));
    }
    if mode != 4 {
        indices = triangulate(mode, &indices);
    }
    if indices.len() % 3 != 0 {
        return Err(err(
            "gltf.accessor",
            at(&format!("{} indices is not a multiple of 3", indices.len())),
        ));
    }
    Ok(Prim {
        indices,
        pos,
        nrm,
        uv,
        uv1,
        r15,
        material: None,
        gltf_material: material,
    })
}

/// The primitive mode of `p` (glTF `mode`, 4 when absent) that
/// [`read_primitive`] reads: TRIANGLES, or a strip or fan when
/// [`PrimRules::triangulate`]; `at` names the primitive in errors.
///
/// # Errors
/// `gltf.mode` for a mode outside 0..=6 or one MSH cannot hold;
/// `gltf.morph` for morph targets unless [`PrimRules::ignore_morph`].
fn primitive_mode(
    p: &Value,
    rules: PrimRules,
    at: &dyn Fn(&str) -> String,
) -> Result<usize, ImportError> {
    let mode = match p.get("mode") {
        None => 4,
        Some(m) => match m.as_u64().filter(|&m| m <= 6) {
            Some(m) => m as usize,
            None => {
                return Err(err(
                    "gltf.mode",
                    at(&format!("mode {m} is not a glTF primitive mode (0..=6)")),
                ))
            }
        },
    };
    let name = MODE_NAMES.get(mode).copied().unwrap_or("unknown");
    if mode != 4 && !(rules.triangulate && (mode == 5 || mode == 6)) {
        let why = if rules.triangulate {
            "MSH holds triangles only (TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN)"
        } else {
            "is not TRIANGLES (4)"
        };
        return Err(err("gltf.mode", at(&format!("mode {mode} ({name}) {why}"))));
    }
    if !arr(p, "targets").is_empty() && !rules.ignore_morph {
        return Err(err(
            "gltf.morph",
            at("morph targets cannot be stored in MSH; apply the shape keys"),
        ));
    }
    Ok(mode)
}

impl Prim {
    /// The `_RES15` bytes of vertex `i` (8 per vertex), when the primitive
    /// carries them.
    pub(crate) fn res15(&self, i: usize) -> Option<[u8; 8]> {
        let r = self.r15.as_ref()?;
        r.elem(i).try_into().ok()
    }
}
