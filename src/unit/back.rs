//! The way back for glTF written by this layer (issue 18 "Back"):
//! assembled units are export-only, and (see [`fold_clips`]) edited clip
//! animations are written into the timeline over their frame range.

use serde_json::Value;

use super::assemble::UNIT_KEY;
use crate::gltf_import::{GltfFile, ImportError};

/// Refuses an assembled unit (scene `extras.msh.unit`): its parts are
/// separate models, so the error names each part's archive entry to export
/// and edit on its own (unit-files-notes §3.5 step 5).
///
/// # Errors
/// `gltf.unit` for an assembled unit.
pub fn refuse_assembled(doc: &GltfFile) -> Result<(), ImportError> {
    let scene = doc.json["scene"].as_u64().unwrap_or(0) as usize;
    let unit = &doc.json["scenes"][scene]["extras"]["msh"][UNIT_KEY];
    if unit.is_null() {
        return Ok(());
    }
    let parts: Vec<String> = unit["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{} ({}:{})",
                p["record"].as_str().unwrap_or("?"),
                p["archive"].as_str().unwrap_or("?"),
                p["mesh_entry"].as_str().unwrap_or("?")
            )
        })
        .collect();
    Err(ImportError::new(
        "gltf.unit",
        format!(
            "this glTF is the assembled unit {} (export only); edit a part instead: msh2gltf ARCHIVE:ENTRY part.glb, then gltf2msh part.glb --base ARCHIVE:ENTRY, for one of its parts: {}",
            unit["source"].as_str().unwrap_or("?"),
            parts.join(", ")
        ),
    ))
}

/// True when a glTF animation is a clip animation (`extras.msh.clip`).
pub fn is_clip(anim: &Value) -> bool {
    anim["extras"]["msh"].get(super::gltf::CLIP_KEY).is_some()
}
