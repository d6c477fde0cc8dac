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
/// file would exceed 4 GiB; `gltf.non_finite` (`budget::check_finite`).
pub fn to_glb(e: &Exported) -> Result<Vec<u8>, ExportError> {
    super::budget::check_finite(&e.root, &e.bin)?;
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
/// (`budget::check_finite`).
pub fn to_gltf(e: &Exported, bin_uri: &str) -> Result<(Vec<u8>, Vec<u8>), ExportError> {
    super::budget::check_finite(&e.root, &e.bin)?;
    let mut root = e.root.clone();
    if let Some(b) = root.buffers.first_mut() {
        b.uri = Some(bin_uri.to_string());
    }
    let json = serde_json::to_vec_pretty(&root)?;
    Ok((json, e.bin.clone()))
}
