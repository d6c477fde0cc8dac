//! glTF materials, textures and images (gltf-mapping.md, "Materials and
//! textures"; format-notes §4).

use std::collections::{BTreeMap, HashMap};

use gltf_json as json;
use json::material::{AlphaMode, PbrBaseColorFactor, PbrMetallicRoughness, StrengthFactor};
use json::texture::{MagFilter, MinFilter, WrappingMode};
use json::validation::Checked;
use json::{Index, Root};

use super::bin::{view, Bin};
use super::{extras, BatchMaterial, Blend, ExportError, ExportMaterial, TextureImage};

/// Adds one glTF material per used [`BatchMaterial`] (ascending) and
/// returns the map from batch material to glTF material
/// (gltf-mapping.md, "Materials and textures"; format-notes §6 R9, R10).
///
/// Keys without an [`ExportMaterial`] get a default white material named
/// `material<key>`. A lit variant's name gets `+<lightmap>` (`+lightmap`
/// when the lightmap is unknown). The base colour texture needs
/// `TEXCOORD_0` (`has_uv`), the lightmap (`occlusionTexture`, `texCoord 1`)
/// needs `TEXCOORD_1` (`has_uv1`, Res18). One image + texture per distinct
/// image name, PNG bytes embedded in the buffer; one shared REPEAT sampler.
pub fn build(
    root: &mut Root,
    bin: &mut Bin,
    used: &[BatchMaterial],
    materials: &[ExportMaterial],
    has_uv: bool,
    has_uv1: bool,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<BatchMaterial, Index<json::Material>>, ExportError> {
    let mut out = BTreeMap::new();
    let mut textures = Textures::default();
    let mut skipped_tex = 0usize;
    for &bm in used {
        let m = materials.iter().find(|m| m.key == bm);
        let name = m.and_then(|m| m.name.clone());
        let mut base_color_texture = None;
        if let Some(tex) = m.and_then(|m| m.texture.as_ref()) {
            if has_uv {
                base_color_texture = Some(json::texture::Info {
                    index: textures.get(root, bin, tex),
                    tex_coord: 0,
                    extensions: None,
                    extras: None,
                });
            } else {
                skipped_tex += 1;
            }
        }
        let lightmap_name = m.and_then(|m| m.lightmap_name.clone());
        let mut occlusion_texture = None;
        if bm.lit {
            if let (Some(lm), true) = (m.and_then(|m| m.lightmap.as_ref()), has_uv1) {
                occlusion_texture = Some(json::material::OcclusionTexture {
                    index: textures.get(root, bin, lm),
                    strength: StrengthFactor(1.0),
                    tex_coord: 1,
                    extensions: None,
                    extras: None,
                });
            }
        }
        let blend = m.map_or(Blend::Opaque, |m| m.blend);
        let alpha = match blend {
            Blend::Opaque => AlphaMode::Opaque,
            Blend::Alpha | Blend::Additive => AlphaMode::Blend,
        };
        let color = m.and_then(|m| m.base_color).unwrap_or([1.0; 4]);
        let mut display = name
            .clone()
            .unwrap_or_else(|| format!("material{}", bm.key));
        if bm.lit {
            display.push('+');
            display.push_str(lightmap_name.as_deref().unwrap_or("lightmap"));
        }
        // What this material looked like when exported, so that gltf2msh
        // --base can tell an edited colour, opacity or texture from an
        // unedited one (crate::gltf_import::material_edits).
        let tex_name = base_color_texture
            .as_ref()
            .and(m.and_then(|m| m.texture.as_ref()))
            .map(|t| t.name.clone());
        let ex = material_extras(
            bm,
            name,
            lightmap_name,
            blend,
            Exported {
                color,
                texture: tex_name,
                alpha,
            },
        );
        let mat = json::Material {
            alpha_cutoff: None,
            alpha_mode: Checked::Valid(alpha),
            double_sided: true,
            name: Some(display),
            pbr_metallic_roughness: PbrMetallicRoughness {
                base_color_factor: PbrBaseColorFactor(color),
                base_color_texture,
                metallic_factor: StrengthFactor(0.0),
                roughness_factor: StrengthFactor(1.0),
                metallic_roughness_texture: None,
                extensions: None,
                extras: None,
            },
            occlusion_texture,
            extras: extras(&ex)?,
            ..Default::default()
        };
        out.insert(bm, root.push(mat));
    }
    if skipped_tex > 0 {
        warnings.push(format!(
            "Res5 missing: {skipped_tex} material textures not attached (no TEXCOORD_0)"
        ));
    }
    Ok(out)
}

/// The embedded images of one export: one image + texture per distinct
/// image name, PNG bytes in the buffer, one shared REPEAT sampler made with
/// the first texture (gltf-mapping.md, "Materials and textures").
#[derive(Default)]
struct Textures {
    /// glTF texture per image name.
    by_name: HashMap<String, Index<json::Texture>>,
    /// The shared sampler, once pushed.
    sampler: Option<Index<json::texture::Sampler>>,
}

impl Textures {
    /// The glTF texture of `tex`: pushed (sampler on first use, buffer
    /// view, image, texture) the first time its name is seen.
    fn get(&mut self, root: &mut Root, bin: &mut Bin, tex: &TextureImage) -> Index<json::Texture> {
        if let Some(t) = self.by_name.get(tex.name.as_str()) {
            return *t;
        }
        let s = *self.sampler.get_or_insert_with(|| {
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
        self.by_name.insert(tex.name.clone(), t);
        t
    }
}

/// What a material looked like when exported (`extras.msh.exported`).
struct Exported {
    /// Linear RGBA base colour factor.
    color: [f32; 4],
    /// Name of the attached base colour texture.
    texture: Option<String>,
    /// glTF alpha mode.
    alpha: AlphaMode,
}

/// The material's `extras.msh` (gltf-mapping.md, "Extras"): material key,
/// WEAR name, `lit` and `lightmap` of a lit variant, `blend: additive`, and
/// the `exported` look gltf2msh `--base` compares edits against.
fn material_extras(
    bm: BatchMaterial,
    name: Option<String>,
    lightmap_name: Option<String>,
    blend: Blend,
    exported: Exported,
) -> serde_json::Value {
    let mut ex = serde_json::json!({"msh": {"material_index": bm.key, "name": name}});
    if bm.lit {
        ex["msh"]["lit"] = serde_json::Value::Bool(true);
        ex["msh"]["lightmap"] = serde_json::json!(lightmap_name);
    }
    if blend == Blend::Additive {
        ex["msh"]["blend"] = serde_json::json!("additive");
    }
    ex["msh"]["exported"] = serde_json::json!({
        "color": exported.color,
        "texture": exported.texture,
        "alpha_mode": if exported.alpha == AlphaMode::Opaque { "OPAQUE" } else { "BLEND" },
    });
    ex
}
