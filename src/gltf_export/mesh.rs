//! Geometry: the model-wide vertex streams, the Res6 index view and one glTF
//! mesh per Res2 slot (gltf-mapping.md, "Meshes"; msh-core §5.3–§5.8, §6.3).

use std::collections::{BTreeMap, HashMap};

use gltf_json as json;
use json::accessor::{ComponentType, Type};
use json::buffer::Target;
use json::mesh::{Mode, Primitive, Semantic};
use json::validation::Checked;
use json::{Index, Root};

use super::axes;
use super::bin::{accessor, view, AccessorSpec, Bin};
use super::{extras, BatchMaterial, ExportError, Up};
use crate::convention::{quant, UvSign};
use crate::msh::{Batch20, Model};

/// Accessors of one `(base_vertex, count)` vertex range.
#[derive(Debug, Clone)]
struct Attrs {
    list: Vec<(Semantic, Index<json::Accessor>)>,
}

/// The vertex and index views of a model and the accessor caches over them.
pub struct Geometry<'m> {
    model: &'m Model,
    /// Positions in glTF axes (one conversion per vertex).
    positions: Vec<[f32; 3]>,
    pos_view: Option<Index<json::buffer::View>>,
    nrm_view: Option<Index<json::buffer::View>>,
    uv_view: Option<Index<json::buffer::View>>,
    r15_view: Option<Index<json::buffer::View>>,
    r18_view: Option<Index<json::buffer::View>>,
    idx_view: Option<Index<json::buffer::View>>,
    attrs: HashMap<(u32, u32), Attrs>,
    index_acc: HashMap<(u32, u32), Index<json::Accessor>>,
    /// Number of primitives written.
    pub primitives: usize,
}

/// A checked batch: its Res6 range and its vertex range.
#[derive(Debug, Clone, Copy)]
pub struct BatchRange {
    /// The batch record.
    pub batch: Batch20,
    /// First vertex (`base_vertex`).
    pub base: u32,
    /// Vertices addressed: max index + 1.
    pub count: u32,
    /// True when an index equals 0xFFFF (primitive restart value of
    /// UNSIGNED_SHORT; such a batch gets UNSIGNED_INT indices).
    pub needs_u32: bool,
    /// The batch's material (set by the exporter from the conventions).
    pub material: BatchMaterial,
}

/// Checks a batch against Res6 and Res3 (`msh.index_range`,
/// `msh.index_count`). Returns `None` for an empty batch.
pub fn check_batch(model: &Model, b: usize) -> Result<Option<BatchRange>, ExportError> {
    let batch = *model.batches.get(b).ok_or_else(|| {
        ExportError::model(
            "msh.batch_range",
            format!(
                "Res13: batch {b} outside the {} batches",
                model.batches.len()
            ),
        )
    })?;
    let n = usize::from(batch.index_count);
    if n == 0 {
        return Ok(None);
    }
    if n % 3 != 0 {
        return Err(ExportError::model(
            "msh.index_count",
            format!("Res13 batch {b}: index_count {n} is not a multiple of 3"),
        ));
    }
    let start = batch.index_start as usize;
    let idx = model
        .indices
        .get(start..start.saturating_add(n))
        .ok_or_else(|| {
            ExportError::model(
                "msh.index_range",
                format!(
                    "Res13 batch {b}: Res6 range {start}+{n} outside the {} indices",
                    model.indices.len()
                ),
            )
        })?;
    let max = idx.iter().copied().max().unwrap_or(0);
    let count = u32::from(max) + 1;
    let end = u64::from(batch.base_vertex) + u64::from(count);
    if end > model.positions.len() as u64 {
        return Err(ExportError::model(
            "msh.index_range",
            format!(
                "Res13 batch {b}: base_vertex {} + index {max} outside the {} Res3 vertices",
                batch.base_vertex,
                model.positions.len()
            ),
        ));
    }
    Ok(Some(BatchRange {
        batch,
        base: batch.base_vertex,
        count,
        needs_u32: max == 0xFFFF,
        material: BatchMaterial::default(),
    }))
}

impl<'m> Geometry<'m> {
    /// Writes the vertex streams (positions, normals, UVs, Res15, Res18, in
    /// glTF axes where they are vectors) and the Res6 index view.
    ///
    /// Zero normals get the face normal of one of their triangles (any
    /// batch of the model), or +up when no triangle uses them; one warning
    /// per model says how many.
    pub fn write(
        root: &mut Root,
        bin: &mut Bin,
        model: &'m Model,
        up: Up,
        uv_sign: UvSign,
        warnings: &mut Vec<String>,
    ) -> Result<Self, ExportError> {
        let nv = model.positions.len();
        let positions: Vec<[f32; 3]> = model.positions.iter().map(|&p| axes::vec3(up, p)).collect();
        let mut g = Geometry {
            model,
            positions,
            pos_view: None,
            nrm_view: None,
            uv_view: None,
            r15_view: None,
            r18_view: None,
            idx_view: None,
            attrs: HashMap::new(),
            index_acc: HashMap::new(),
            primitives: 0,
        };
        if nv > 0 {
            let start = bin.begin();
            bin.data.reserve(nv * 12);
            for p in &g.positions {
                bin.put_f32s(p);
            }
            g.pos_view = Some(view(
                root,
                bin,
                start,
                Some(12),
                Some(Target::ArrayBuffer),
                "Res3",
            ));

            if let Some(normals) = model.normals.as_ref().filter(|n| n.len() == nv) {
                let nrm = g.normals(normals, up, warnings);
                let start = bin.begin();
                bin.data.reserve(nv * 12);
                for n in &nrm {
                    bin.put_f32s(n);
                }
                g.nrm_view = Some(view(
                    root,
                    bin,
                    start,
                    Some(12),
                    Some(Target::ArrayBuffer),
                    "Res4",
                ));
            }
            if let Some(uvs) = model.uvs.as_ref().filter(|n| n.len() == nv) {
                let start = bin.begin();
                bin.data.reserve(nv * 8);
                for &uv in uvs {
                    bin.put_f32s(&quant::dequantize_uv(uv, uv_sign));
                }
                g.uv_view = Some(view(
                    root,
                    bin,
                    start,
                    Some(8),
                    Some(Target::ArrayBuffer),
                    "Res5",
                ));
            }
            if let Some(r15) = model.res15.as_ref().filter(|n| n.len() == nv) {
                let start = bin.begin();
                bin.data.extend_from_slice(r15.as_flattened());
                g.r15_view = Some(view(
                    root,
                    bin,
                    start,
                    Some(8),
                    Some(Target::ArrayBuffer),
                    "Res15",
                ));
            }
            if let Some(r18) = model.res18.as_ref().filter(|n| n.len() == nv) {
                let start = bin.begin();
                bin.data.reserve(nv * 8);
                for &raw in r18 {
                    bin.put_f32s(&quant::dequantize_lightmap_uv(raw));
                }
                g.r18_view = Some(view(
                    root,
                    bin,
                    start,
                    Some(8),
                    Some(Target::ArrayBuffer),
                    "Res18",
                ));
            }
            if model.res16.is_some() {
                warnings.push(
                    "Res16: per-vertex stream present but not exported (meaning unknown)".into(),
                );
            }
        }
        if !model.indices.is_empty() {
            let start = bin.begin();
            bin.data.reserve(model.indices.len() * 2);
            for i in &model.indices {
                bin.data.extend_from_slice(&i.to_le_bytes());
            }
            g.idx_view = Some(view(
                root,
                bin,
                start,
                None,
                Some(Target::ElementArrayBuffer),
                "Res6",
            ));
        }
        Ok(g)
    }

    /// Decoded normals in glTF axes (msh-core §5.4): `/127`, clamped,
    /// normalised; zero normals replaced (see [`Geometry::write`]).
    fn normals(&self, packed: &[[i8; 4]], up: Up, warnings: &mut Vec<String>) -> Vec<[f32; 3]> {
        let dec = quant::dequantize_normal_component;
        let mut zero: Vec<usize> = Vec::new();
        let mut out: Vec<[f32; 3]> = packed
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v = [
                    f64::from(dec(n[0])),
                    f64::from(dec(n[1])),
                    f64::from(dec(n[2])),
                ];
                match axes::normalize3(v) {
                    Some(u) => axes::vec3(up, u),
                    None => {
                        zero.push(i);
                        [0.0; 3]
                    }
                }
            })
            .collect();
        if zero.is_empty() {
            return out;
        }
        let mut pending = vec![false; out.len()];
        for &i in &zero {
            pending[i] = true;
        }
        let mut left = zero.len();
        'batches: for b in 0..self.model.batches.len() {
            let Ok(Some(r)) = check_batch(self.model, b) else {
                continue;
            };
            let start = r.batch.index_start as usize;
            let idx = &self.model.indices[start..start + usize::from(r.batch.index_count)];
            for t in idx.chunks_exact(3) {
                let v = [t[0], t[1], t[2]].map(|i| r.base as usize + usize::from(i));
                if !v.iter().any(|&i| pending[i]) {
                    continue;
                }
                let [a, b, c] = v.map(|i| self.positions[i].map(f64::from));
                let e1 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                let e2 = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
                let n = [
                    e1[1] * e2[2] - e1[2] * e2[1],
                    e1[2] * e2[0] - e1[0] * e2[2],
                    e1[0] * e2[1] - e1[1] * e2[0],
                ];
                let Some(fnrm) = axes::normalize3(n) else {
                    continue;
                };
                for i in v {
                    if pending[i] {
                        pending[i] = false;
                        out[i] = fnrm;
                        left -= 1;
                    }
                }
                if left == 0 {
                    break 'batches;
                }
            }
        }
        let upv = axes::vec3(up, [0.0, 0.0, 1.0]);
        for (i, p) in pending.iter().enumerate() {
            if *p {
                out[i] = upv;
            }
        }
        warnings.push(format!(
            "Res4: {} zero normals (first at vertex {}) replaced by a face normal ({} on no non-degenerate triangle got +up)",
            zero.len(),
            zero[0],
            left
        ));
        out
    }

    /// The vertex attribute accessors of `(base, count)`, shared between
    /// primitives (POSITION with exact min/max).
    fn attrs(&mut self, root: &mut Root, base: u32, count: u32) -> Attrs {
        if let Some(a) = self.attrs.get(&(base, count)) {
            return a.clone();
        }
        let (b, n) = (base as usize, count as usize);
        let mut list = Vec::with_capacity(5);
        if let Some(v) = self.pos_view {
            let mut min = [f32::INFINITY; 3];
            let mut max = [f32::NEG_INFINITY; 3];
            for p in &self.positions[b..b + n] {
                for k in 0..3 {
                    min[k] = min[k].min(p[k]);
                    max[k] = max[k].max(p[k]);
                }
            }
            let spec = AccessorSpec {
                view: v,
                offset: b * 12,
                count: n,
                component: ComponentType::F32,
                ty: Type::Vec3,
                min: Some(&min),
                max: Some(&max),
            };
            list.push((Semantic::Positions, accessor(root, spec)));
        }
        let plain = |root: &mut Root, v, stride: usize, component, ty| {
            accessor(
                root,
                AccessorSpec {
                    view: v,
                    offset: b * stride,
                    count: n,
                    component,
                    ty,
                    min: None,
                    max: None,
                },
            )
        };
        if let Some(v) = self.nrm_view {
            list.push((
                Semantic::Normals,
                plain(root, v, 12, ComponentType::F32, Type::Vec3),
            ));
        }
        if let Some(v) = self.uv_view {
            list.push((
                Semantic::TexCoords(0),
                plain(root, v, 8, ComponentType::F32, Type::Vec2),
            ));
        }
        if let Some(v) = self.r15_view {
            list.push((
                Semantic::Extras("RES15".into()),
                plain(root, v, 8, ComponentType::U16, Type::Vec4),
            ));
        }
        if let Some(v) = self.r18_view {
            list.push((
                Semantic::TexCoords(1),
                plain(root, v, 8, ComponentType::F32, Type::Vec2),
            ));
        }
        let a = Attrs { list };
        self.attrs.insert((base, count), a.clone());
        a
    }

    /// The index accessor of a batch: the raw Res6 slice (UNSIGNED_SHORT), or
    /// a UNSIGNED_INT copy when the slice holds 0xFFFF.
    fn indices(&mut self, root: &mut Root, bin: &mut Bin, r: &BatchRange) -> Index<json::Accessor> {
        let (start, n) = (r.batch.index_start, u32::from(r.batch.index_count));
        if !r.needs_u32 {
            if let Some(a) = self.index_acc.get(&(start, n)) {
                return *a;
            }
        }
        let (v, offset, component) = match (r.needs_u32, self.idx_view) {
            (false, Some(v)) => (v, start as usize * 2, ComponentType::U16),
            _ => {
                let s = start as usize;
                let off = bin.begin();
                for &i in &self.model.indices[s..s + n as usize] {
                    bin.data.extend_from_slice(&u32::from(i).to_le_bytes());
                }
                let v = view(
                    root,
                    bin,
                    off,
                    None,
                    Some(Target::ElementArrayBuffer),
                    "Res6.u32",
                );
                (v, 0, ComponentType::U32)
            }
        };
        let a = accessor(
            root,
            AccessorSpec {
                view: v,
                offset,
                count: n as usize,
                component,
                ty: Type::Scalar,
                min: None,
                max: None,
            },
        );
        if !r.needs_u32 {
            self.index_acc.insert((start, n), a);
        }
        a
    }

    /// Builds one glTF mesh from the batches `first..first + count`.
    /// Returns `None` when every batch is empty (a glTF mesh needs a
    /// primitive). Material indices are mapped through `materials`.
    #[allow(clippy::too_many_arguments)]
    pub fn mesh(
        &mut self,
        root: &mut Root,
        bin: &mut Bin,
        name: String,
        ranges: &[BatchRange],
        materials: &BTreeMap<BatchMaterial, Index<json::Material>>,
        mesh_extras: serde_json::Value,
    ) -> Result<Option<Index<json::Mesh>>, ExportError> {
        let mut primitives = Vec::with_capacity(ranges.len());
        for r in ranges {
            let attrs = self.attrs(root, r.base, r.count);
            let indices = self.indices(root, bin, r);
            primitives.push(Primitive {
                attributes: attrs
                    .list
                    .iter()
                    .map(|(s, a)| (Checked::Valid(s.clone()), *a))
                    .collect(),
                extensions: None,
                extras: None,
                indices: Some(indices),
                material: materials.get(&r.material).copied(),
                mode: Checked::Valid(Mode::Triangles),
                targets: None,
            });
        }
        if primitives.is_empty() {
            return Ok(None);
        }
        self.primitives += primitives.len();
        Ok(Some(root.push(json::Mesh {
            extensions: None,
            extras: extras(&mesh_extras)?,
            name: Some(name),
            primitives,
            weights: None,
        })))
    }
}
