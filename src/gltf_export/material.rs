//! glTF materials, textures and images (gltf-mapping.md, "Materials and
//! textures"; format-notes §4).

use std::collections::{BTreeMap, HashMap};

use gltf_json as json;
use json::material::{
    AlphaCutoff, AlphaMode, PbrBaseColorFactor, PbrMetallicRoughness, StrengthFactor,
};
use json::texture::{MagFilter, MinFilter, WrappingMode};
use json::validation::Checked;
use json::{Index, Root};

use super::bin::{view, Bin};
use super::{extras, ExportError, ExportMaterial};

/// Adds one glTF material per `material_index` in `used` (ascending), and
/// returns the map from `material_index` to glTF material.
///
/// Indices without an [`ExportMaterial`] get a default white material named
/// `material<i>`. Textures are attached only when `has_uv` (a texture needs
/// `TEXCOORD_0`); one image + texture per distinct `TextureImage::name`,
/// PNG bytes embedded in the buffer; one shared REPEAT sampler.
pub fn build(
    root: &mut Root,
    bin: &mut Bin,
    used: &[u16],
    materials: &[ExportMaterial],
    has_uv: bool,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<u16, Index<json::Material>>, ExportError> {
    let mut out = BTreeMap::new();
    let mut textures: HashMap<&str, Index<json::Texture>> = HashMap::new();
    let mut sampler: Option<Index<json::texture::Sampler>> = None;
    let mut skipped_tex = 0usize;
    for &i in used {
        let m = materials.iter().find(|m| m.index == i);
        let name = m.and_then(|m| m.name.clone());
        let mut base_color_texture = None;
        let mut alpha = AlphaMode::Opaque;
        if let Some(tex) = m.and_then(|m| m.texture.as_ref()) {
            if !has_uv {
                skipped_tex += 1;
            } else {
                let t = match textures.get(tex.name.as_str()) {
                    Some(t) => *t,
                    None => {
                        let s = *sampler.get_or_insert_with(|| {
                            root.push(json::texture::Sampler {
                                mag_filter: Some(Checked::Valid(MagFilter::Linear)),
                                min_filter: Some(Checked::Valid(MinFilter::LinearMipmapLinear)),
                                name: None,
                                wrap_s: Checked::Valid(WrappingMode::Repeat),
                                wrap_t: Checked::Valid(WrappingMode::Repeat),
                                extensions: None,
                                extras: None,
                            })
                        });
                        let start = bin.begin();
                        bin.data.extend_from_slice(&tex.png);
                        let v = view(root, bin, start, None, None, &tex.name);
                        let image = root.push(json::Image {
                            buffer_view: Some(v),
                            mime_type: Some(json::image::MimeType("image/png".into())),
                            name: Some(tex.name.clone()),
                            uri: None,
                            extensions: None,
                            extras: None,
                        });
                        let t = root.push(json::Texture {
                            name: Some(tex.name.clone()),
                            sampler: Some(s),
                            source: image,
                            extensions: None,
                            extras: None,
                        });
                        textures.insert(tex.name.as_str(), t);
                        t
                    }
                };
                if tex.has_alpha {
                    alpha = AlphaMode::Mask;
                }
                base_color_texture = Some(json::texture::Info {
                    index: t,
                    tex_coord: 0,
                    extensions: None,
                    extras: None,
                });
            }
        }
        let color = m.and_then(|m| m.base_color).unwrap_or([1.0; 4]);
        let mat = json::Material {
            alpha_cutoff: (alpha == AlphaMode::Mask).then(AlphaCutoff::default),
            alpha_mode: Checked::Valid(alpha),
            double_sided: true,
            name: Some(name.clone().unwrap_or_else(|| format!("material{i}"))),
            pbr_metallic_roughness: PbrMetallicRoughness {
                base_color_factor: PbrBaseColorFactor(color),
                base_color_texture,
                metallic_factor: StrengthFactor(0.0),
                roughness_factor: StrengthFactor(1.0),
                metallic_roughness_texture: None,
                extensions: None,
                extras: None,
            },
            extras: extras(&serde_json::json!({"msh": {"material_index": i, "name": name}}))?,
            ..Default::default()
        };
        out.insert(i, root.push(mat));
    }
    if skipped_tex > 0 {
        warnings.push(format!(
            "Res5 missing: {skipped_tex} material textures not attached (no TEXCOORD_0)"
        ));
    }
    Ok(out)
}
