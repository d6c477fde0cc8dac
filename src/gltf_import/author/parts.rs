//! The batches of one authored slot (module docs of [`super`], points 3,
//! 4 and 8): glTF primitives with the node's residual baked in, normals
//! generated or mapped, in game axes.

use crate::gltf_import::read::TopArray;
use glam::{DMat3, DVec3};

use super::{err, AuthorCx, AuthorReport};
use crate::gltf_export::{axes, Up};
use crate::gltf_import::geometry::{read_primitive, Prim, PrimRules};
use crate::gltf_import::read::{arr, idx};
use crate::gltf_import::simplify::RawPrim;
use crate::gltf_import::ImportError;
use crate::msh::build::Vertex;

/// `m · p` in f64, rounded to f32.
pub(super) fn apply3(m: &DMat3, p: [f32; 3]) -> [f32; 3] {
    let v = *m * DVec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
    [v.x as f32, v.y as f32, v.z as f32]
}

/// The normal map of a baked linear map: the cofactor matrix (`det · M⁻ᵀ`)
/// with the sign of `det`, well defined for singular maps too.
pub(super) fn normal_map(m: &DMat3) -> DMat3 {
    let c = m.to_cols_array_2d();
    let cof = |i: usize, j: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        // element (row i, column j) of M is c[j][i]
        c[j1][i1] * c[j2][i2] - c[j2][i1] * c[j1][i2]
    };
    let s = if m.determinant() < 0.0 { -1.0 } else { 1.0 };
    // cofactor (row i, column j) at column-major position [j][i].
    DMat3::from_cols_array_2d(&std::array::from_fn(|j| {
        std::array::from_fn(|i| s * cof(i, j))
    }))
}

/// `v` normalized, `None` when its length is 0 or not finite.
fn normalize3(v: [f32; 3]) -> Option<[f32; 3]> {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (l > 1e-20 && l.is_finite()).then(|| v.map(|x| x / l))
}

/// `a - b`.
fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a × b`.
fn cross3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The parts (batches) of glTF mesh `mesh` with the linear map `bake`
/// (glTF axes) applied, in game axes (module docs of [`super`], points 3,
/// 4 and 8): one part per primitive with triangles; a mirroring `bake`
/// reverses the winding.
///
/// # Errors
/// Reading a primitive ([`read_primitive`]), `gltf.accessor` (a position
/// that is not finite), `gltf.limits` (a material index over 65535).
pub(super) fn mesh_parts(
    cx: &mut AuthorCx,
    mesh: usize,
    bake: &DMat3,
    report: &mut AuthorReport,
) -> Result<Vec<RawPrim>, ImportError> {
    let mj = cx.doc.elem(TopArray::Meshes, mesh)?;
    let rules = PrimRules {
        triangulate: true,
        ignore_morph: cx.opts.ignore_skins,
    };
    let mirror = bake.determinant() < 0.0;
    let nmap = normal_map(bake);
    let mut parts = Vec::new();
    for (pi, p) in arr(mj, "primitives").iter().enumerate() {
        let mut prim = read_primitive(cx.doc, mesh, pi, p, rules)?;
        if !arr(p, "targets").is_empty() {
            report.warnings.push(format!(
                "mesh {mesh} primitive {pi}: morph targets ignored (base shape)"
            ));
        }
        if prim.indices.is_empty() {
            continue;
        }
        if let Some(i) = prim
            .pos
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(err(
                "gltf.accessor",
                format!(
                    "mesh {mesh} primitive {pi}: POSITION {i} is not finite ({:?})",
                    prim.pos[i]
                ),
            ));
        }
        let material = cx.material(&prim, mesh, pi, report)?;
        let pos: Vec<[f32; 3]> = prim.pos.iter().map(|&p| apply3(bake, p)).collect();
        let mut indices = std::mem::take(&mut prim.indices);
        if mirror {
            for t in indices.chunks_exact_mut(3) {
                t.swap(1, 2);
            }
        }
        // Lit: the material's occlusion texture reads TEXCOORD_1 (module docs, point 8).
        let lit = prim.uv1.is_some()
            && prim
                .gltf_material
                .and_then(|m| cx.doc.elem(TopArray::Materials, m).ok())
                .and_then(|m| m.get("occlusionTexture"))
                .is_some_and(|o| idx(o, "texCoord") == Some(1));
        let corners = Corners {
            up: cx.up,
            pos: &pos,
            prim: &prim,
            lit,
        };
        let (verts, idx) = match &prim.nrm {
            None => {
                report.generated_normals += 1;
                corners.flat(&indices)
            }
            Some(nrm) => {
                let (verts, zero) = corners.smooth(&indices, nrm, &nmap);
                if zero {
                    report.warnings.push(format!(
                        "mesh {mesh} primitive {pi}: zero normals replaced by face normals"
                    ));
                }
                (verts, indices)
            }
        };
        parts.push(RawPrim {
            material: material as u16,
            vertices: verts,
            indices: idx,
            lit,
        });
    }
    Ok(parts)
}

impl AuthorCx<'_> {
    /// The WEAR row of a primitive: its glTF material, else (no material,
    /// or one that does not exist, with a warning) the `DEFAULT` row.
    ///
    /// # Errors
    /// `gltf.limits`: a row over 65535 (`Batch20.material_index` is a u16).
    fn material(
        &mut self,
        prim: &Prim,
        mesh: usize,
        pi: usize,
        report: &mut AuthorReport,
    ) -> Result<usize, ImportError> {
        let material_count = self.material_count;
        let material = match prim.gltf_material.filter(|&m| m < material_count) {
            Some(m) => m,
            None => {
                if let Some(m) = prim.gltf_material {
                    report.warnings.push(format!(
                        "mesh {mesh} primitive {pi}: material {m} does not exist; DEFAULT used"
                    ));
                }
                usize::from(*self.default_row.get_or_insert(material_count as u16))
            }
        };
        if material > u16::MAX as usize {
            return Err(err(
                "gltf.limits",
                format!("material {material} > 65535 (Batch20.material_index is a u16)"),
            ));
        }
        Ok(material)
    }
}

/// The corners of one baked primitive: positions (baked, glTF axes) and
/// the primitive's other attributes, made into game-axes [`Vertex`]es.
struct Corners<'a> {
    /// Up axis of the glTF.
    up: Up,
    /// Baked positions, glTF axes.
    pos: &'a [[f32; 3]],
    /// The primitive (UVs, lightmap UVs, Res15).
    prim: &'a Prim,
    /// Whether the primitive is lit (TEXCOORD_1 is its Res18 UV).
    lit: bool,
}

impl Corners<'_> {
    /// Vertex `i` with the normal `normal` (glTF axes): UV 0 when absent,
    /// the lightmap UV when lit.
    fn vertex(&self, i: usize, normal: [f32; 3]) -> Vertex {
        let prim = self.prim;
        Vertex {
            pos: axes::vec3_inv(self.up, self.pos[i]),
            normal: axes::vec3_inv(self.up, normal),
            uv: prim.uv.as_ref().map_or([0.0; 2], |u| u[i]),
            res15: prim.res15(i).unwrap_or_default(),
            lightmap_uv: self
                .lit
                .then(|| prim.uv1.as_ref().map_or([0.0; 2], |u| u[i])),
        }
    }

    /// The (unnormalized) face normal of triangle `t`.
    fn face(&self, t: &[u32]) -> [f32; 3] {
        let pos = self.pos;
        let (a, b2, c) = (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        cross3(sub3(b2, a), sub3(c, a))
    }

    /// Flat normals (glTF 2.0 §3.7.2.1): every triangle gets its own three
    /// corners with its face normal. Returns the vertices and indices.
    fn flat(&self, indices: &[u32]) -> (Vec<Vertex>, Vec<u32>) {
        let mut verts = Vec::with_capacity(indices.len());
        for t in indices.chunks_exact(3) {
            let nrm = normalize3(self.face(t)).unwrap_or([0.0, 1.0, 0.0]);
            for &v in t {
                verts.push(self.vertex(v as usize, nrm));
            }
        }
        let idx = (0..verts.len() as u32).collect();
        (verts, idx)
    }

    /// The given normals mapped by `nmap` and normalized; zero ones get the
    /// area-weighted normal of their triangles. Returns the vertices and
    /// whether a zero normal was replaced.
    fn smooth(&self, indices: &[u32], nrm: &[[f32; 3]], nmap: &DMat3) -> (Vec<Vertex>, bool) {
        let mut normals: Vec<Option<[f32; 3]>> =
            nrm.iter().map(|&n| normalize3(apply3(nmap, n))).collect();
        let zero = normals.iter().any(Option::is_none);
        if zero {
            let mut acc = vec![[0.0f32; 3]; self.pos.len()];
            for t in indices.chunks_exact(3) {
                let f = self.face(t);
                for &v in t {
                    let a = &mut acc[v as usize];
                    *a = [a[0] + f[0], a[1] + f[1], a[2] + f[2]];
                }
            }
            for (i, n) in normals.iter_mut().enumerate() {
                if n.is_none() {
                    *n = normalize3(acc[i]);
                }
            }
        }
        let verts = (0..self.pos.len())
            .map(|i| self.vertex(i, normals[i].unwrap_or([0.0; 3])))
            .collect();
        (verts, zero)
    }
}
