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
//! without case and trailing `.<digits>` groups, `norm_texture`). Materials
//! without that record (other tools, older exports) are not checked. The
//! pixels of an image are not compared: a texture painted over under the
//! same name is not detected.

use serde_json::Value;

use super::read::{arr, floats, idx, msh_extras, GltfFile};
use super::ImportError;

/// Largest difference of a colour component (0..1) that is not an edit:
/// half a step of the 8-bit MAT0 colour.
pub const COLOR_TOL: f32 = 0.5 / 255.0;

/// The base colour image name of material `m`: the image's `name`, else
/// its URI's file stem; `Some(None)` without a base colour texture, `None`
/// when the image has neither name nor URI (not comparable).
fn texture_name(doc: &GltfFile, m: &Value) -> Option<Option<String>> {
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
fn norm_texture(name: &str) -> String {
    let mut n = name.trim();
    while let Some((head, tail)) = n.rsplit_once('.') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) || head.is_empty() {
            break;
        }
        n = head;
    }
    n.to_ascii_uppercase()
}

/// What changed in material `m` against its `exported` record, one phrase
/// per change (empty: unedited or not comparable).
fn changes(doc: &GltfFile, m: &Value, rec: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
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
    if let Some(was) = was {
        if (0..3).any(|k| (was[k] - now[k]).abs() > COLOR_TOL) {
            out.push(format!("colour {:?} -> {:?}", &was[..3], &now[..3]));
        }
        if (was[3] - now[3]).abs() > COLOR_TOL {
            out.push(format!("opacity {} -> {}", was[3], now[3]));
        }
    }
    if let Some(was) = rec.get("texture").filter(|v| v.is_null() || v.is_string()) {
        let was = was.as_str();
        if let Some(now) = texture_name(doc, m) {
            if was.map(norm_texture) != now.as_deref().map(norm_texture) {
                out.push(format!("texture {was:?} -> {now:?}"));
            }
        }
    }
    if let Some(was) = rec.get("alpha_mode").and_then(Value::as_str) {
        let now = m
            .get("alphaMode")
            .and_then(Value::as_str)
            .unwrap_or("OPAQUE");
        if was != now {
            out.push(format!("alphaMode {was} -> {now}"));
        }
    }
    out
}

/// Refuses edits of the materials msh2gltf exported (see the module docs).
///
/// # Errors
/// `gltf.material_edit`, naming every edited material (index, name) and
/// what changed in it.
pub fn check(doc: &GltfFile) -> Result<(), ImportError> {
    let mut edited = Vec::new();
    for (i, m) in arr(&doc.json, "materials").iter().enumerate() {
        let Some(rec) = msh_extras(m)
            .and_then(|e| e.get("exported"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let c = changes(doc, m, rec);
        if !c.is_empty() {
            edited.push(format!(
                "material {i} {:?}: {}",
                m.get("name").and_then(Value::as_str).unwrap_or(""),
                c.join(", ")
            ));
        }
    }
    if edited.is_empty() {
        return Ok(());
    }
    Err(ImportError::new(
        "gltf.material_edit",
        format!(
            "{}: material colour, opacity, texture and blend mode live in the game's Material.lib and Textures.lib, which --base does not write; revert these edits, or author the model anew with --game-dir to write new materials",
            edited.join("; ")
        ),
    ))
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
