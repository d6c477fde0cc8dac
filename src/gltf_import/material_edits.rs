//! `gltf2msh --base` writes the model only: a material's colour, opacity,
//! texture and blend mode live in the game's `Material.lib` and
//! `Textures.lib` (format-notes §4, §6 R9, R10), which `--base` does not
//! write. An edit of them is refused with a message naming the material and
//! what changed, never reported as "unchanged" (issue 15).
//!
//! msh2gltf records what it exported per material in its extras
//! (`{"msh": {"exported": {"color": [r, g, b, a], "texture": name | null,
//! "alpha_mode": "OPAQUE" | "BLEND"}}}`, gltf-mapping.md "Extras"); the
//! document's `baseColorFactor` (default white), the `name` (else URI
//! stem) of its base colour image and
//! its `alphaMode` (default `OPAQUE`) are compared with it (texture names
//! without case and trailing `.<digits>` groups, `norm_texture`); the
//! alpha of a material exported `OPAQUE` and still `OPAQUE` is not compared
//! (glTF ignores it and Blender drops it, `opaque_both`), nor is `BLEND`
//! coming back `OPAQUE` for an untextured material of alpha 1 (Blender
//! 4.2+ writes `BLEND` only for an alpha below 1). Materials
//! without that record (other tools, older exports) are not checked. The
//! pixels of an image are not compared: a texture painted over under the
//! same name is not detected.

use crate::gltf_import::read::Elem;
use serde_json::Value;

use super::read::{arr, floats, idx, msh_extras, GltfFile};
use super::ImportError;

/// Largest difference of a colour component (0..1) that is not an edit:
/// half a step of the 8-bit MAT0 colour.
pub const COLOR_TOL: f32 = 0.5 / 255.0;

/// The base colour image name of material `m`: the image's `name`, else
/// its URI's file stem; `Some(None)` without a base colour texture, `None`
/// when the image has neither name nor URI (not comparable).
fn texture_name(doc: &GltfFile, m: &Elem) -> Option<Option<String>> {
    let Some(info) = m
        .get("pbrMetallicRoughness")
        .and_then(|p| p.get("baseColorTexture"))
    else {
        return Some(None);
    };
    let img = idx(info, "index")
        .and_then(|t| arr(&doc.json, "textures").get(t))
        .and_then(|t| idx(t, "source"))
        .and_then(|i| arr(&doc.json, "images").get(i))?;
    let name = img
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            img.get("uri")
                .and_then(Value::as_str)
                .filter(|u| !u.starts_with("data:"))
                .map(|u| {
                    let f = u.rsplit(['/', '\\']).next().unwrap_or(u);
                    f.rsplit_once('.').map_or(f, |(s, _)| s).to_string()
                })
        })?;
    Some(Some(name))
}

/// A texture name as compared: upper case, every trailing `.<digits>` group
/// removed (Blender's `.001` duplicate suffix, and the `.0` of a game name
/// such as `TX35_88.0`, which Blender's exporter drops as if it were a file
/// extension).
pub fn norm_texture(name: &str) -> String {
    let mut n = name.trim();
    while let Some((head, tail)) = n.rsplit_once('.') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) || head.is_empty() {
            break;
        }
        n = head;
    }
    n.to_ascii_uppercase()
}

/// True when material `m` was exported `OPAQUE` and still is: its
/// `baseColorFactor` alpha is then not an edit. glTF ignores the alpha of an
/// opaque material, and Blender's importer drops it (3.4 and 5.x export such
/// a material with alpha 1.0), so an `OPAQUE` material whose MAT0 opacity
/// `p[3]` is below 1 (format-notes §6 R9, R10; msh2gltf writes it as the
/// alpha whatever the blend mode) comes back with another alpha unedited.
/// Such an alpha is never written either: the MAT0 opacity is kept.
fn opaque_both(rec: &serde_json::Map<String, Value>, m: &Elem) -> bool {
    let was = rec.get("alpha_mode").and_then(Value::as_str);
    let now = m
        .get("alphaMode")
        .and_then(Value::as_str)
        .unwrap_or("OPAQUE");
    was == Some("OPAQUE") && now == "OPAQUE"
}

/// One material msh2gltf exported (it carries the `exported` record) and
/// what the document asks of it: each field is `Some` when it differs from
/// the record (see the module docs for the comparison).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MaterialEdit {
    /// glTF material index.
    pub index: usize,
    /// glTF material name.
    pub gltf_name: String,
    /// The WEAR row name (`extras.msh.name`): the `Material.lib` entry.
    pub name: Option<String>,
    /// The texture name msh2gltf exported (`exported.texture`).
    pub exported_texture: Option<String>,
    /// The glTF image of the base colour texture now.
    pub image: Option<usize>,
    /// New diffuse RGB (0..1).
    pub color: Option<[f32; 3]>,
    /// New opacity (0..1).
    pub opacity: Option<f32>,
    /// New `alphaMode`.
    pub alpha_mode: Option<String>,
    /// New base colour image name (`None` inside: the texture was removed).
    pub texture: Option<Option<String>>,
    /// One phrase per change, for messages.
    pub changes: Vec<String>,
}

/// The glTF image of material `m`'s base colour texture.
fn base_image(doc: &GltfFile, m: &Elem) -> Option<usize> {
    let info = m.get("pbrMetallicRoughness")?.get("baseColorTexture")?;
    let t = idx(info, "index")?;
    idx(arr(&doc.json, "textures").get(t)?, "source")
}

/// Material `m` against its `exported` record `rec`.
fn compare(
    doc: &GltfFile,
    i: usize,
    m: &Elem,
    rec: &serde_json::Map<String, Value>,
) -> MaterialEdit {
    let mut e = MaterialEdit {
        index: i,
        gltf_name: m.get("name").and_then(Value::as_str).unwrap_or("").into(),
        name: msh_extras(m)
            .and_then(|x| x.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string),
        exported_texture: rec
            .get("texture")
            .and_then(Value::as_str)
            .map(str::to_string),
        image: base_image(doc, m),
        ..MaterialEdit::default()
    };
    let was = rec
        .get("color")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_f64)
                .map(|x| x as f32)
                .collect::<Vec<_>>()
        })
        .filter(|c| c.len() == 4);
    let now = m
        .get("pbrMetallicRoughness")
        .and_then(|p| floats(p, "baseColorFactor"))
        .filter(|c| c.len() == 4)
        .unwrap_or_else(|| vec![1.0; 4]);
    let was_alpha = was.as_ref().map(|c| c[3]);
    let now_alpha = now[3];
    if let Some(was) = was {
        if (0..3).any(|k| (was[k] - now[k]).abs() > COLOR_TOL) {
            e.changes
                .push(format!("colour {:?} -> {:?}", &was[..3], &now[..3]));
            e.color = Some([now[0], now[1], now[2]]);
        }
        if !opaque_both(rec, m) && (was[3] - now[3]).abs() > COLOR_TOL {
            e.changes.push(format!("opacity {} -> {}", was[3], now[3]));
            e.opacity = Some(now[3]);
        }
    }
    if let Some(was) = rec.get("texture").filter(|v| v.is_null() || v.is_string()) {
        let was = was.as_str();
        if let Some(now) = texture_name(doc, m) {
            if was.map(norm_texture) != now.as_deref().map(norm_texture) {
                let name = |t: Option<&str>| t.map_or("none".to_owned(), |t| format!("{t:?}"));
                e.changes
                    .push(format!("texture {} -> {}", name(was), name(now.as_deref())));
                e.texture = Some(now);
            }
        }
    }
    if let Some(was) = rec.get("alpha_mode").and_then(Value::as_str) {
        let now = m
            .get("alphaMode")
            .and_then(Value::as_str)
            .unwrap_or("OPAQUE");
        let alpha_one = |c: Option<f32>| c.is_some_and(|a| a >= 1.0 - COLOR_TOL);
        let untextured = e.exported_texture.is_none() && e.image.is_none();
        // Blender 4.2+ has no blend mode: its exporter writes BLEND only for
        // an alpha below 1 or a linked one, so an untextured BLEND material
        // of opacity 1 (drawn as opaque) comes back OPAQUE unedited.
        let blend_of_one = was == "BLEND"
            && now == "OPAQUE"
            && untextured
            && alpha_one(was_alpha)
            && alpha_one(Some(now_alpha));
        if was != now && !blend_of_one {
            e.changes.push(format!("alphaMode {was} -> {now}"));
            e.alpha_mode = Some(now.to_string());
        }
    }
    e
}

/// Every material of `doc` that carries msh2gltf's `exported` record,
/// compared with it (edited or not); materials without the record (other
/// tools, older exports) are left out.
pub fn exported_materials(doc: &GltfFile) -> Vec<MaterialEdit> {
    doc.materials()
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let rec = msh_extras(m)
                .and_then(|e| e.get("exported"))
                .and_then(Value::as_object)?;
            Some(compare(doc, i, m, rec))
        })
        .collect()
}

/// The materials of [`exported_materials`] with a change.
pub fn edits(doc: &GltfFile) -> Vec<MaterialEdit> {
    exported_materials(doc)
        .into_iter()
        .filter(|e| !e.changes.is_empty())
        .collect()
}

/// The error refusing `edited` materials (rule `gltf.material_edit`),
/// naming each (index, name) and what changed, and `--game-dir`.
pub fn refusal(edited: &[MaterialEdit]) -> ImportError {
    let list: Vec<String> = edited
        .iter()
        .map(|e| {
            format!(
                "material {} {:?}: {}",
                e.index,
                e.gltf_name,
                e.changes.join(", ")
            )
        })
        .collect();
    ImportError::new(
        "gltf.material_edit",
        format!(
            "{}: material colour, opacity, texture and blend mode live in the game's Material.lib and Textures.lib; give --game-dir GAME to write these edits into copies of its libraries beside the output (or into the game's own with --in-place), or revert them",
            list.join("; ")
        ),
    )
}

/// Refuses edits of the materials msh2gltf exported (see the module docs).
///
/// # Errors
/// `gltf.material_edit` ([`refusal`]), naming every edited material
/// (index, name), what changed in it and `--game-dir`.
pub fn check(doc: &GltfFile) -> Result<(), ImportError> {
    let edited = edits(doc);
    if edited.is_empty() {
        Ok(())
    } else {
        Err(refusal(&edited))
    }
}

#[cfg(test)]
mod tests {
    use super::norm_texture;

    #[test]
    fn texture_names_compare_as_blender_writes_them() {
        // Blender 3.4 exports the image of game texture TX35_88.0 as TX35_88.
        assert_eq!(norm_texture("TX35_88.0"), norm_texture("TX35_88"));
        assert_eq!(norm_texture("TX35_88.0.001"), "TX35_88");
        assert_eq!(norm_texture("tx35_88"), "TX35_88");
        assert_ne!(norm_texture("TX35_88"), norm_texture("RUST"));
        assert_eq!(norm_texture(".001"), ".001");
        assert_eq!(norm_texture("A.B"), "A.B");
    }
}
