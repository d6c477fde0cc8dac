//! Container output: GLB 2.0 (glTF 2.0 spec §4.4) and `.gltf` + `.bin`.

use super::{ExportError, Exported};

/// `"glTF"`.
pub const GLB_MAGIC: u32 = 0x4654_6C67;
/// Chunk type `"JSON"`.
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type `"BIN\0"`.
pub const CHUNK_BIN: u32 = 0x004E_4942;

fn padded(len: usize) -> usize {
    len.div_ceil(4) * 4
}

/// Serialises `e` as GLB 2.0 ([`frame`]).
///
/// # Errors
/// [`ExportError::Json`] when serialisation fails; `gltf.size` when the
/// file would exceed 4 GiB; `gltf.non_finite` ([`check_root_finite`]).
pub fn to_glb(e: &Exported) -> Result<Vec<u8>, ExportError> {
    check_root_finite(&e.root, &e.bin)?;
    let json = serde_json::to_vec(&e.root)?;
    frame(&json, &e.bin).map_err(|total| {
        ExportError::model("gltf.size", format!("GLB of {total} bytes exceeds 4 GiB"))
    })
}

/// GLB 2.0 framing (glTF 2.0 spec §4.4) of a serialised JSON document and
/// its buffer, for every content kind: 12-byte header, a JSON chunk padded
/// with spaces to 4 bytes, and (when `bin` is not empty) a BIN chunk padded
/// with zeros to 4 bytes.
///
/// # Errors
/// The file's size in bytes when it would exceed 4 GiB (the header's
/// `length` is a u32).
pub fn frame(json: &[u8], bin: &[u8]) -> Result<Vec<u8>, usize> {
    let jlen = padded(json.len());
    let blen = padded(bin.len());
    let total = 12 + 8 + jlen + if bin.is_empty() { 0 } else { 8 + blen };
    let total32 = u32::try_from(total).map_err(|_| total)?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(jlen as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(20 + jlen, b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(blen as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    Ok(out)
}

/// Serialises `e` as a `.gltf` JSON document whose buffer points at
/// `bin_uri` (relative URI of the `.bin` file written next to it), and the
/// buffer bytes. The JSON is pretty-printed.
///
/// # Errors
/// [`ExportError::Json`] when serialisation fails; `gltf.non_finite`
/// ([`check_root_finite`]).
pub fn to_gltf(e: &Exported, bin_uri: &str) -> Result<(Vec<u8>, Vec<u8>), ExportError> {
    check_root_finite(&e.root, &e.bin)?;
    let mut root = e.root.clone();
    if let Some(b) = root.buffers.first_mut() {
        b.uri = Some(bin_uri.to_string());
    }
    let json = serde_json::to_vec_pretty(&root)?;
    Ok((json, e.bin.clone()))
}

/// [`check_finite`] on the typed document, without serialising it into a
/// `serde_json::Value` first (that tree took about 3 KB per node: 90 MB
/// for a 30 000-node model, docs/safety.md): the same properties, the same
/// messages (a non-finite number printed as `null`, as serialised).
///
/// # Errors
/// `gltf.non_finite` naming the node (index and name) and property, or the
/// accessor and element.
pub fn check_root_finite(root: &gltf_json::Root, bin: &[u8]) -> Result<(), ExportError> {
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

/// One accessor of [`check_root_finite`]: `min`/`max`, then every element
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

/// The last check before a glTF is written (glTF 2.0 §3.6.2.2, §5.25: no
/// NaN or infinity anywhere): every node's `translation`, `rotation`,
/// `scale` and `matrix` (serialised, a non-finite number is `null`), every
/// accessor's `min`/`max`, and every element of every FLOAT accessor in
/// `bin` (accessor `byteOffset`, view `byteOffset`/`byteStride`; elements
/// outside `bin` are not this check's business).
///
/// # Errors
/// `gltf.non_finite` naming the node (index and name) and property, or the
/// accessor and element.
pub fn check_finite(doc: &serde_json::Value, bin: &[u8]) -> Result<(), ExportError> {
    use serde_json::Value;
    let bad = |d: String| ExportError::model("gltf.non_finite", d);
    let all_numbers = |v: &Value| {
        v.as_array()
            .is_some_and(|a| a.iter().all(|x| x.as_f64().is_some_and(f64::is_finite)))
    };
    let list = |k: &str| {
        doc.get(k)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    for (i, n) in list("nodes").iter().enumerate() {
        for key in ["translation", "rotation", "scale", "matrix"] {
            if n.get(key).is_some_and(|v| !all_numbers(v)) {
                return Err(bad(format!(
                    "node {i} {:?}: {key} {} is not finite (a NaN or infinity in the source)",
                    n["name"].as_str().unwrap_or(""),
                    n[key]
                )));
            }
        }
    }
    let views = list("bufferViews");
    let u = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
    for (i, a) in list("accessors").iter().enumerate() {
        for key in ["min", "max"] {
            if a.get(key).is_some_and(|v| !all_numbers(v)) {
                return Err(bad(format!("accessor {i}: {key} {} is not finite", a[key])));
            }
        }
        let ncomp = match a["type"].as_str().unwrap_or("") {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" | "MAT2" => 4,
            "MAT3" => 9,
            "MAT4" => 16,
            _ => continue,
        };
        let Some(view) = a
            .get("bufferView")
            .and_then(Value::as_u64)
            .and_then(|v| views.get(v as usize))
        else {
            continue;
        };
        if a["componentType"].as_u64() != Some(5126) || u(view, "buffer") != 0 {
            continue;
        }
        let start = u(view, "byteOffset").saturating_add(u(a, "byteOffset"));
        let stride = match u(view, "byteStride") {
            0 => 4 * ncomp,
            s => s,
        };
        for k in 0..u(a, "count") {
            let at = start.saturating_add(k.saturating_mul(stride));
            let Some(el) = bin.get(at..at.saturating_add(4 * ncomp)) else {
                break;
            };
            if let Some(c) = el
                .chunks_exact(4)
                .position(|b| !f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_finite())
            {
                return Err(bad(format!(
                    "accessor {i} {:?}: element {k} component {c} is not finite (a NaN or infinity in the source)",
                    a["name"].as_str().unwrap_or("")
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod finite_tests {
    use super::check_finite;
    use serde_json::json;

    #[test]
    fn non_finite_nodes_and_accessors_are_named() {
        let ok = json!({"nodes": [{"name": "a", "translation": [1.0, 2.0, 3.0]}]});
        check_finite(&ok, &[]).unwrap();
        let nan = json!({"nodes": [{"name": "a"}, {"name": "p", "translation": [1.0, null, 3.0]}]});
        let e = check_finite(&nan, &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("gltf.non_finite: node 1 \"p\": translation"),
            "{e}"
        );
        let mut bin = Vec::new();
        for x in [0.0f32, 1.0, f32::INFINITY] {
            bin.extend_from_slice(&x.to_le_bytes());
        }
        let acc = json!({"bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 12}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "name": "t"}]});
        let e = check_finite(&acc, &bin).unwrap_err().to_string();
        assert_eq!(
            e,
            "gltf.non_finite: accessor 0 \"t\": element 2 component 0 is not finite (a NaN or infinity in the source)"
        );
        check_finite(&acc, &bin[..8]).unwrap();
    }

    /// The typed check says what the `Value` check says, on the same
    /// documents (a NaN set after parsing: JSON cannot hold one).
    #[test]
    fn typed_check_matches_the_value_check() {
        use super::check_root_finite;
        let doc = json!({"asset": {"version": "2.0"},
            "nodes": [{"name": "a"}, {"name": "p", "translation": [1.0, 2.0, 3.0]}],
            "buffers": [{"byteLength": 12}],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 12}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "name": "t"}]});
        let mut root: gltf_json::Root = serde_json::from_value(doc).unwrap();
        let mut bin = Vec::new();
        for x in [0.0f32, 1.0, f32::INFINITY] {
            bin.extend_from_slice(&x.to_le_bytes());
        }
        let msg = |r: &gltf_json::Root, bin: &[u8]| {
            let typed = check_root_finite(r, bin).err().map(|e| e.to_string());
            let v = serde_json::to_value(r).unwrap();
            assert_eq!(typed, check_finite(&v, bin).err().map(|e| e.to_string()));
            typed
        };
        assert_eq!(msg(&root, &bin[..8]), None);
        assert!(msg(&root, &bin)
            .unwrap()
            .contains("accessor 0 \"t\": element 2"));
        root.nodes[1].translation = Some([1.0, f32::NAN, 3.0]);
        assert_eq!(
            msg(&root, &bin).unwrap(),
            "gltf.non_finite: node 1 \"p\": translation [1.0,null,3.0] is not finite (a NaN or infinity in the source)"
        );
        root.nodes[1].translation = None;
        root.nodes[0].matrix = Some([f32::INFINITY; 16]);
        assert!(msg(&root, &bin)
            .unwrap()
            .contains("node 0 \"a\": matrix [null,"));
        root.nodes[0].matrix = None;
        root.accessors[0].min = Some(json!([f64::NAN]));
        assert_eq!(
            msg(&root, &bin).unwrap(),
            "gltf.non_finite: accessor 0: min [null] is not finite"
        );
    }
}
