//! The export's work budget and finiteness guarantee (docs/safety.md):
//! a model whose export would exceed [`crate::limits::max_work`] fails with
//! `limits.work` before the work is done, and no export ever writes a NaN or
//! infinity into a float accessor or a node transform (`gltf.non_finite`).

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

/// Refuses NaN and infinities anywhere in the document: the one check,
/// made by [`super::to_glb`] and [`super::to_gltf`] as the document is
/// serialised (after a unit's siblings added their nodes and animations),
/// that every model and unit GLB or `.gltf` + `.bin` goes through. Every
/// node's `translation`, `rotation`, `scale` and `matrix` (printed as serialised: a non-finite number is `null`), every
/// accessor's `min`/`max`, and every element of every FLOAT accessor in
/// `bin` (accessor `byteOffset`, view `byteOffset`/`byteStride`; elements
/// outside `bin` are not this check's business). Works on the typed root:
/// a `serde_json::Value` of it took about 3 KB per node (docs/safety.md).
///
/// # Errors
/// `gltf.non_finite` naming the node (index and name) and property, or the
/// accessor and element.
pub fn check_finite(root: &gltf_json::Root, bin: &[u8]) -> Result<(), ExportError> {
    let bad = |d: String| ExportError::model("gltf.non_finite", d);
    for (i, n) in root.nodes.iter().enumerate() {
        let props: [(&str, Option<&[f32]>); 4] = [
            ("translation", n.translation.as_ref().map(|v| &v[..])),
            ("rotation", n.rotation.as_ref().map(|q| &q.0[..])),
            ("scale", n.scale.as_ref().map(|v| &v[..])),
            ("matrix", n.matrix.as_ref().map(|v| &v[..])),
        ];
        for (key, v) in props {
            if let Some(v) = v.filter(|v| !v.iter().all(|x| x.is_finite())) {
                return Err(bad(format!(
                    "node {i} {:?}: {key} {} is not finite (a NaN or infinity in the source)",
                    n.name.as_deref().unwrap_or(""),
                    serde_json::to_string(v).unwrap_or_default()
                )));
            }
        }
    }
    for (i, a) in root.accessors.iter().enumerate() {
        check_accessor_finite(root, i, a, bin).map_err(bad)?;
    }
    Ok(())
}

/// One accessor of [`check_finite`]: `min`/`max`, then every element
/// of a FLOAT accessor on buffer 0 that lies in `bin`.
fn check_accessor_finite(
    root: &gltf_json::Root,
    i: usize,
    a: &gltf_json::Accessor,
    bin: &[u8],
) -> Result<(), String> {
    use gltf_json::accessor::{ComponentType, Type};
    use gltf_json::validation::Checked;
    for (key, v) in [("min", &a.min), ("max", &a.max)] {
        let Some(v) = v else { continue };
        let finite = v
            .as_array()
            .is_some_and(|a| a.iter().all(|x| x.as_f64().is_some_and(f64::is_finite)));
        if !finite {
            return Err(format!("accessor {i}: {key} {v} is not finite"));
        }
    }
    let ncomp = match a.type_ {
        Checked::Valid(Type::Scalar) => 1,
        Checked::Valid(Type::Vec2) => 2,
        Checked::Valid(Type::Vec3) => 3,
        Checked::Valid(Type::Vec4 | Type::Mat2) => 4,
        Checked::Valid(Type::Mat3) => 9,
        Checked::Valid(Type::Mat4) => 16,
        Checked::Invalid => return Ok(()),
    };
    let Some(view) = a.buffer_view.and_then(|v| root.buffer_views.get(v.value())) else {
        return Ok(());
    };
    if !matches!(a.component_type, Checked::Valid(c) if c.0 == ComponentType::F32)
        || view.buffer.value() != 0
    {
        return Ok(());
    }
    let start = (view.byte_offset.map_or(0, |o| o.0) as usize)
        .saturating_add(a.byte_offset.map_or(0, |o| o.0) as usize);
    let stride = match view.byte_stride.map_or(0, |s| s.0) {
        0 => 4 * ncomp,
        s => s,
    };
    for k in 0..a.count.0 as usize {
        let at = start.saturating_add(k.saturating_mul(stride));
        let Some(el) = bin.get(at..at.saturating_add(4 * ncomp)) else {
            break;
        };
        if let Some(c) = el
            .chunks_exact(4)
            .position(|b| !f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_finite())
        {
            return Err(format!(
                "accessor {i} {:?}: element {k} component {c} is not finite (a NaN or infinity in the source)",
                a.name.as_deref().unwrap_or("")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod finite_tests {
    use super::check_finite;
    use serde_json::json;

    /// A typed root from glTF JSON (the asset added).
    fn root(mut v: serde_json::Value) -> gltf_json::Root {
        v["asset"] = json!({"version": "2.0"});
        serde_json::from_value(v).unwrap()
    }

    /// Nodes, accessor elements and `min`/`max` are named when not finite
    /// (a NaN is set after parsing: JSON cannot hold one); elements
    /// outside `bin` are not checked.
    #[test]
    fn non_finite_nodes_and_accessors_are_named() {
        let mut r = root(json!({
            "nodes": [{"name": "a"}, {"name": "p", "translation": [1.0, 2.0, 3.0]}],
            "buffers": [{"byteLength": 12}],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 12}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "name": "t"}]}));
        let mut bin = Vec::new();
        for x in [0.0f32, 1.0, f32::INFINITY] {
            bin.extend_from_slice(&x.to_le_bytes());
        }
        let msg =
            |r: &gltf_json::Root, bin: &[u8]| check_finite(r, bin).err().map(|e| e.to_string());
        assert_eq!(msg(&r, &bin[..8]), None);
        assert_eq!(
            msg(&r, &bin).unwrap(),
            "gltf.non_finite: accessor 0 \"t\": element 2 component 0 is not finite (a NaN or infinity in the source)"
        );
        r.nodes[1].translation = Some([1.0, f32::NAN, 3.0]);
        assert_eq!(
            msg(&r, &bin).unwrap(),
            "gltf.non_finite: node 1 \"p\": translation [1.0,null,3.0] is not finite (a NaN or infinity in the source)"
        );
        r.nodes[1].translation = None;
        r.nodes[0].matrix = Some([f32::INFINITY; 16]);
        assert!(msg(&r, &bin)
            .unwrap()
            .contains("node 0 \"a\": matrix [null,"));
        r.nodes[0].matrix = None;
        r.accessors[0].min = Some(json!([f64::NAN]));
        assert_eq!(
            msg(&r, &bin).unwrap(),
            "gltf.non_finite: accessor 0: min [null] is not finite"
        );
    }

    /// The one finiteness check is the serialisation's: a node added to a
    /// finished export (as a unit's `.cpt` sibling does) is refused by both
    /// writers with the same rule and message, and a finite one is written.
    #[test]
    fn both_writers_check_what_was_added_after_the_export() {
        let mut e = crate::gltf_export::Exported {
            root: root(json!({"nodes": [{"name": "body"}]})),
            bin: Vec::new(),
            report: Default::default(),
        };
        assert!(crate::gltf_export::to_glb(&e).is_ok());
        assert!(crate::gltf_export::to_gltf(&e, "m.bin").is_ok());
        let mut n = e.root.nodes[0].clone();
        n.name = Some("dust_01".into());
        n.translation = Some([0.0, 0.0, f32::INFINITY]);
        e.root.nodes.push(n);
        let want = "gltf.non_finite: node 1 \"dust_01\": translation [0.0,0.0,null] is not finite (a NaN or infinity in the source)";
        let glb = crate::gltf_export::to_glb(&e).unwrap_err();
        assert_eq!(
            (glb.rule(), glb.to_string().as_str()),
            ("gltf.non_finite", want)
        );
        let gltf = crate::gltf_export::to_gltf(&e, "m.bin").unwrap_err();
        assert_eq!(gltf.to_string(), want);
    }
}
