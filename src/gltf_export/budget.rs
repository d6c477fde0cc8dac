//! The export's work budget and finiteness guarantee (docs/safety.md):
//! a model whose export would exceed [`crate::limits::max_work`] fails with
//! `limits.work` before the work is done, and no export ever writes a NaN or
//! infinity into a float accessor or a node transform (`gltf.non_finite`).

use gltf_json as json;
use json::accessor::{ComponentType, Type};
use json::Root;

use super::ExportError;
use crate::limits::{Budget, BYTES_PER_UNIT, UNITS_PER_NODE, UNITS_PER_PRIMITIVE};

/// Maps a budget overrun to the `limits.work` rule.
pub(crate) fn spend(budget: &mut Budget, units: u64, what: &str) -> Result<(), ExportError> {
    budget
        .spend(units, what)
        .map_err(|d| ExportError::model("limits.work", d))
}

/// Spends the structure of the export: `nodes` glTF nodes, `primitives`
/// primitives, and the `bytes` already in the buffer (geometry).
pub(crate) fn spend_structure(
    budget: &mut Budget,
    nodes: usize,
    primitives: usize,
    bytes: usize,
) -> Result<(), ExportError> {
    let units = (nodes as u64)
        .saturating_mul(UNITS_PER_NODE)
        .saturating_add((primitives as u64).saturating_mul(UNITS_PER_PRIMITIVE))
        .saturating_add(bytes as u64 / BYTES_PER_UNIT);
    spend(
        budget,
        units,
        &format!("{nodes} nodes, {primitives} primitives and {bytes} geometry bytes"),
    )
}

/// Components of an accessor type.
fn components(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// Refuses NaN and infinities in every float accessor of `root` (over
/// `bin`, the only buffer) and in every node's translation, rotation and
/// scale.
///
/// # Errors
/// `gltf.non_finite`, naming the accessor or node.
pub(crate) fn check_finite(root: &Root, bin: &[u8]) -> Result<(), ExportError> {
    for (i, a) in root.accessors.iter().enumerate() {
        let (Some(v), json::validation::Checked::Valid(ct), json::validation::Checked::Valid(t)) =
            (a.buffer_view, &a.component_type, &a.type_)
        else {
            continue;
        };
        if ct.0 != ComponentType::F32 {
            continue;
        }
        let Some(view) = root.buffer_views.get(v.value()) else {
            continue;
        };
        let base = view.byte_offset.map_or(0, |o| o.0 as usize)
            + a.byte_offset.map_or(0, |o| o.0 as usize);
        let n = components(*t);
        let stride = view.byte_stride.map_or(n * 4, |s| s.0);
        for e in 0..a.count.0 as usize {
            for c in 0..n {
                let o = base + e * stride + c * 4;
                let Some(b) = bin.get(o..o + 4) else {
                    continue;
                };
                let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if !x.is_finite() {
                    let what = view.name.as_deref().unwrap_or("data");
                    return Err(ExportError::model(
                        "gltf.non_finite",
                        format!(
                            "accessor {i} ({what}) element {e} component {c} is {x}: the model's values overflow f32 on export"
                        ),
                    ));
                }
            }
        }
    }
    for (i, nd) in root.nodes.iter().enumerate() {
        let vals = nd
            .translation
            .iter()
            .flatten()
            .chain(nd.rotation.iter().flat_map(|r| r.0.iter()))
            .chain(nd.scale.iter().flatten());
        if let Some(x) = vals.copied().find(|x| !x.is_finite()) {
            return Err(ExportError::model(
                "gltf.non_finite",
                format!(
                    "node {i} ({}) has a transform value {x}",
                    nd.name.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    Ok(())
}
