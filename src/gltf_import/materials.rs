//! Materials and textures of an authored model for the game's libraries
//! (`gltf2msh scene.glb -o NEW.msh --game-dir GAME`; format-notes §4, §6
//! R8–R10; gltf-mapping.md "Materials and textures", read backwards).
//!
//! [`library_content`] turns the glTF materials behind the WEAR rows of an
//! [`super::Authored`] model into new `Material.lib` and `Textures.lib`
//! entries:
//!
//! - **MAT0** (one per glTF material, named by its WEAR row): one phase,
//!   [`Mat0::new_colour`] from `baseColorFactor` (diffuse `p[4..=6]`,
//!   opacity `p[3] = round(alpha * 100)`), the texture name of
//!   `baseColorTexture`; the directory entry's attr1 is the blend mode from
//!   `alphaMode`: `OPAQUE` 0, `MASK` 2, `BLEND` 4 ([`blend_mode`]); attr2 =
//!   version 6. The synthesized `DEFAULT` row gets no entry (the engine
//!   falls back to the library's `DEFAULT`).
//! - **Texm** (one per glTF image used as a base colour texture): decoded
//!   from PNG or JPEG (`bufferView`, `data:` or a file beside the glTF),
//!   resized with a triangle filter to power-of-two sides (each side to the
//!   nearest power of two, at most [`TextureOptions::max_size`]), a full mip
//!   chain, format 565 when every alpha is 255, else 8888
//!   ([`TextureBits::Auto`]; 4444 with [`TextureBits::Sixteen`]), bytes in
//!   [`TextureOptions::order`] (the retail B, G, R, A by default),
//!   `flags4 = 32` like the retail textures. Names: the image's `name`, else
//!   its file stem, else `TEXTURE`, made valid by
//!   [`crate::material::write::texture_name`] (≤ 15 bytes, upper case).
//!   The UVs are the base colour texture's set (with KHR_texture_transform
//!   applied) as the primitive reader takes them.
//! - **Lightmap** (`LightMap.lib`, when the WEAR has a LIGHTMAPS row): the
//!   occlusion image of [`lightmap_image`], opaque 565, full mip chain,
//!   `flags4 = 0` like the retail lightmaps, named by the WEAR row.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use image::RgbaImage;
use serde_json::Value;

use super::read::{floats, idx, GltfFile};
use super::ImportError;
use crate::convention::TexmOrder;
use crate::material::texm::{self, TexFormat};
use crate::material::wear::Wear;
use crate::material::write::{texture_name, NewEntry};
use crate::material::{Mat0, TYPE_MAT0, TYPE_TEXM};

fn err(rule: &'static str, detail: impl Into<String>) -> ImportError {
    ImportError::new(rule, detail)
}

/// Texm depth choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextureBits {
    /// 565 when opaque, 8888 with alpha.
    #[default]
    Auto,
    /// 565 when opaque, 4444 with alpha.
    Sixteen,
    /// 8888 always.
    ThirtyTwo,
}

/// Options of [`library_content`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureOptions {
    /// Texm format choice.
    pub bits: TextureBits,
    /// Largest side in pixels (a power of two).
    pub max_size: u32,
    /// Byte order of 8888 (format-notes §6 R8; `--texm-order`).
    pub order: TexmOrder,
    /// Work budget (units, [`crate::limits`]; `--max-work`): an image whose
    /// pixels need more is refused (`limits.work`) before it is decoded.
    pub max_work: u64,
    /// Also read image URIs that are absolute or lead outside the glTF's
    /// folder (`--allow-outside`; the rule buffer URIs follow).
    pub allow_outside: bool,
}

impl Default for TextureOptions {
    fn default() -> Self {
        TextureOptions {
            bits: TextureBits::Auto,
            max_size: 1024,
            order: TexmOrder::Retail,
            max_work: crate::limits::DEFAULT_MAX_WORK,
            allow_outside: false,
        }
    }
}

/// One new texture.
#[derive(Debug, Clone)]
pub struct NewTexture {
    /// `Textures.lib` entry name.
    pub name: String,
    /// glTF image index.
    pub image: usize,
    /// Stored format.
    pub format: TexFormat,
    /// Source size, when it was resized.
    pub resized_from: Option<(u32, u32)>,
    /// Level-0 pixels before quantisation (after resizing).
    pub rgba: RgbaImage,
    /// The Texm payload.
    pub texm: Vec<u8>,
}

/// One new material.
#[derive(Debug, Clone)]
pub struct NewMaterial {
    /// `Material.lib` entry name (the WEAR row's name).
    pub name: String,
    /// WEAR row = glTF material index.
    pub row: usize,
    /// The record.
    pub mat0: Mat0,
    /// Directory attr1: the blend mode (format-notes §6 R10).
    pub blend: u32,
}

/// The new library entries of an authored model.
#[derive(Debug, Clone, Default)]
pub struct LibraryContent {
    /// MAT0 records, by WEAR row.
    pub materials: Vec<NewMaterial>,
    /// Texm images.
    pub textures: Vec<NewTexture>,
    /// The lightmap (`LightMap.lib`), when the WEAR has a LIGHTMAPS row.
    pub lightmaps: Vec<NewTexture>,
    /// What was approximated or ignored.
    pub warnings: Vec<String>,
}

impl LibraryContent {
    /// The `Material.lib` entries (type MAT0, attr1 blend, attr2 6).
    pub fn material_entries(&self) -> Vec<NewEntry> {
        self.materials
            .iter()
            .map(|m| NewEntry {
                name: encoding_rs::WINDOWS_1251.encode(&m.name).0.into_owned(),
                type_id: TYPE_MAT0,
                attr1: m.blend,
                attr2: m.mat0.version,
                attr3: 0,
                data: m.mat0.to_bytes(),
            })
            .collect()
    }

    /// The `Textures.lib` entries (type Texm, attributes 0).
    pub fn texture_entries(&self) -> Vec<NewEntry> {
        Self::texm_entries(&self.textures)
    }

    /// The `LightMap.lib` entries (type Texm, attributes 0).
    pub fn lightmap_entries(&self) -> Vec<NewEntry> {
        Self::texm_entries(&self.lightmaps)
    }

    fn texm_entries(list: &[NewTexture]) -> Vec<NewEntry> {
        list.iter()
            .map(|t| NewEntry {
                name: t.name.as_bytes().to_vec(),
                type_id: TYPE_TEXM,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                data: t.texm.clone(),
            })
            .collect()
    }
}

/// The model's lightmap: the first material whose `occlusionTexture` reads
/// `TEXCOORD_1`, as `(material, image)`; and every other image such a
/// material names (the WEAR holds one LIGHTMAPS row per model here).
pub fn lightmap_image(doc: &GltfFile) -> (Option<(usize, usize)>, Vec<usize>) {
    let mut first = None;
    let mut others = Vec::new();
    for (m, mat) in doc.materials().iter().enumerate() {
        let Some(o) = mat
            .get("occlusionTexture")
            .filter(|o| idx(o, "texCoord") == Some(1))
        else {
            continue;
        };
        let Some(img) = idx(o, "index")
            .and_then(|t| doc.get("textures", t).ok())
            .and_then(|t| idx(t, "source"))
        else {
            continue;
        };
        match first {
            None => first = Some((m, img)),
            Some((_, i)) if i != img => others.push(img),
            Some(_) => {}
        }
    }
    (first, others)
}

/// The source name of glTF image `i`: its `name`, else its file stem, else
/// `fallback`.
pub fn image_stem(doc: &GltfFile, i: usize, fallback: &str) -> String {
    let Ok(im) = doc.get("images", i) else {
        return fallback.into();
    };
    im.get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            im.get("uri")
                .and_then(Value::as_str)
                .filter(|u| !u.starts_with("data:"))
                .map(|u| {
                    let f = u.rsplit(['/', '\\']).next().unwrap_or(u);
                    f.rsplit_once('.').map_or(f, |(s, _)| s).to_string()
                })
        })
        .unwrap_or_else(|| fallback.into())
}

/// The MAT0 blend mode (directory attr1, format-notes §6 R10) of a glTF
/// `alphaMode`: `OPAQUE` (or absent) 0, `MASK` 2, `BLEND` 4.
pub fn blend_mode(alpha_mode: Option<&str>) -> u32 {
    match alpha_mode {
        Some("MASK") => 2,
        Some("BLEND") => 4,
        _ => 0,
    }
}

/// The encoded bytes of glTF image `i` (bufferView, `data:` URI, or a file
/// relative to `base_dir`), read as [`image_bytes_with`] with the default
/// options (confined to `base_dir`, default budget).
///
/// # Errors
/// See [`image_bytes_with`].
pub fn image_bytes(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    i: usize,
) -> Result<Vec<u8>, ImportError> {
    image_bytes_with(doc, base_dir, i, &TextureOptions::default())
}

/// Most bytes of an image file: `max_work` x [`crate::limits::BYTES_PER_UNIT`]
/// (32 MB at the default budget).
pub fn max_image_file_bytes(max_work: u64) -> u64 {
    max_work.saturating_mul(crate::limits::BYTES_PER_UNIT)
}

/// The files the external image URIs of `doc` name, resolved against `dir`
/// (those that resolve to an existing file, wherever it is): inputs of the
/// run, never to be written.
pub fn image_files(doc: &GltfFile, dir: &Path) -> Vec<PathBuf> {
    doc.json
        .get("images")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|im| im.get("uri").and_then(Value::as_str))
        .filter(|u| !u.starts_with("data:"))
        .filter_map(|u| super::read::resolve_uri(dir, u, true).ok())
        .collect()
}

/// [`image_bytes`] with `opts`: an external URI goes through the rule of
/// buffer URIs (relative, inside `base_dir` after resolving `..`,
/// percent-escapes and symlinks, unless `opts.allow_outside`; a regular
/// file) and the file may hold at most [`max_image_file_bytes`], checked
/// before it is read.
///
/// # Errors
/// `gltf.uri` for a refused URI (with the reason: outside the folder, not
/// a regular file, ...); `limits.work` for a file over the cap;
/// `gltf.image` for other failures.
pub fn image_bytes_with(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    i: usize,
    opts: &TextureOptions,
) -> Result<Vec<u8>, ImportError> {
    let im = doc.get("images", i)?;
    if let Some(v) = idx(im, "bufferView") {
        let bv = doc.buffer_view_def(v)?;
        let b = idx(bv, "buffer").unwrap_or(0);
        let off = idx(bv, "byteOffset").unwrap_or(0);
        let len = idx(bv, "byteLength").unwrap_or(0);
        let buf = doc.buffers.get(b).ok_or_else(|| {
            err(
                "gltf.index",
                format!("image {i}: bufferView {v}: no buffer {b}"),
            )
        })?;
        return buf
            .get(off..off.saturating_add(len))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                err(
                    "gltf.buffer",
                    format!(
                        "image {i}: bufferView {v} ({off}+{len}) runs past buffer {b} ({} bytes)",
                        buf.len()
                    ),
                )
            });
    }
    let uri = im.get("uri").and_then(Value::as_str).ok_or_else(|| {
        err(
            "gltf.image",
            format!("image {i}: neither bufferView nor uri"),
        )
    })?;
    if let Some(rest) = uri.strip_prefix("data:") {
        return super::read::data_uri_bytes(rest, "gltf.image", &format!("image {i}"));
    }
    let dir = base_dir.ok_or_else(|| {
        err(
            "gltf.image",
            format!("image {i}: external uri {uri:?} but no folder to resolve it"),
        )
    })?;
    let p = super::read::resolve_uri(dir, uri, opts.allow_outside)
        .map_err(|d| err("gltf.uri", format!("image {i}: uri {uri:?}: {d}")))?;
    let cap = max_image_file_bytes(opts.max_work);
    crate::source::read_regular(&p, cap).map_err(|e| {
        let rule = if e.kind() == std::io::ErrorKind::InvalidData {
            "limits.work"
        } else {
            "gltf.image"
        };
        err(
            rule,
            format!("image {i}: uri {uri:?}: {}: {e}", p.display()),
        )
    })
}

/// The nearest power of two to `d` (in log scale), at most `max`.
pub fn pow2(d: u32, max: u32) -> u32 {
    let d = d.max(1);
    let lo = 1u32 << (31 - d.leading_zeros());
    let p = if lo == d || (d as u64) * (d as u64) < (lo as u64) * (2 * lo as u64) {
        lo
    } else {
        lo.saturating_mul(2)
    };
    p.min(max.max(1))
}

/// Decodes glTF image `i` to RGBA8 (PNG or JPEG; the size read from its
/// header is spent against `opts.max_work` before any pixel is decoded).
///
/// # Errors
/// `gltf.image` when the image cannot be read or decoded; `limits.work`
/// when its size needs more than `opts.max_work`
/// ([`crate::limits::IMAGE_PIXELS_PER_UNIT`]).
pub fn decode_image(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    i: usize,
    opts: &TextureOptions,
) -> Result<RgbaImage, ImportError> {
    let bytes = image_bytes_with(doc, base_dir, i, opts)?;
    let undecodable = |e: String| {
        err(
            "gltf.image",
            format!("image {i}: cannot decode ({e}); PNG and JPEG are supported"),
        )
    };
    let reader = || {
        image::ImageReader::new(std::io::Cursor::new(&bytes[..]))
            .with_guessed_format()
            .map_err(|e| undecodable(e.to_string()))
    };
    // The size from the header is spent before any pixel is decoded.
    let (w, h) = reader()?
        .into_dimensions()
        .map_err(|e| undecodable(e.to_string()))?;
    let pixels = u64::from(w) * u64::from(h);
    let units = pixels.div_ceil(crate::limits::IMAGE_PIXELS_PER_UNIT);
    if units > opts.max_work {
        return Err(err(
            "limits.work",
            format!(
                "image {i} is {w} x {h} pixels: decoding it needs {units} work units, over the budget of {} (see README \"Safety\"; scale the image down, or raise the budget with --max-work {units})",
                opts.max_work
            ),
        ));
    }
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(pixels.saturating_mul(8).max(1 << 20));
    let mut r = reader()?;
    r.limits(limits);
    Ok(r.decode()
        .map_err(|e| undecodable(e.to_string()))?
        .into_rgba8())
}

/// Decodes ([`decode_image`]), resizes and encodes glTF image `i` (see the
/// module docs).
///
/// # Errors
/// The errors of [`decode_image`]; the Texm encoder's rules.
pub fn texture_from_image(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    i: usize,
    name: String,
    opts: &TextureOptions,
) -> Result<NewTexture, ImportError> {
    let img = decode_image(doc, base_dir, i, opts)?;
    let (w, h) = img.dimensions();
    let max = opts.max_size.max(1).next_power_of_two();
    let (tw, th) = (pow2(w, max), pow2(h, max));
    let (rgba, resized_from) = if (tw, th) == (w, h) {
        (img, None)
    } else {
        // Halving or more: area averaging (`thumbnail`, no intermediate
        // image: a 2828² source would need a 46 MB one with `resize`);
        // smaller changes: the triangle filter.
        let out = if w >= 2 * tw && h >= 2 * th {
            image::imageops::thumbnail(&img, tw, th)
        } else {
            image::imageops::resize(&img, tw, th, image::imageops::FilterType::Triangle)
        };
        drop(img);
        (out, Some((w, h)))
    };
    let alpha = texm::has_alpha(&rgba);
    let format = match (opts.bits, alpha) {
        (TextureBits::ThirtyTwo, _) | (TextureBits::Auto, true) => TexFormat::Argb8888,
        (TextureBits::Sixteen, true) => TexFormat::Argb4444,
        _ => TexFormat::Rgb565,
    };
    let texm = texm::encode(
        &rgba,
        format,
        &opts.order.channel_order(),
        0,
        texm::TEXTURE_FLAGS4,
    )
    .map_err(|e| err("gltf.image", format!("image {i}: {e}")))?;
    Ok(NewTexture {
        name,
        image: i,
        format,
        resized_from,
        rgba,
        texm,
    })
}

/// The images [`library_content`] decodes for `wear`: the base colour
/// image of every material with a WEAR row, and the lightmap image when the
/// WEAR has a LIGHTMAPS row; each once, in ascending order.
fn used_images(doc: &GltfFile, wear: &Wear) -> Vec<usize> {
    let mut out: Vec<usize> = doc
        .materials()
        .iter()
        .take(wear.materials.len())
        .filter_map(|m| {
            let t = idx(
                m.get("pbrMetallicRoughness")?.get("baseColorTexture")?,
                "index",
            )?;
            idx(doc.get("textures", t).ok()?, "source")
        })
        .collect();
    if let (Some(_), (Some((_, img)), _)) = (wear.lightmaps.first(), lightmap_image(doc)) {
        out.push(img);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Spends the pixels of every image the model uses, read from their
/// headers before any is decoded (docs/safety.md: the images of one model
/// share the budget, [`crate::limits::IMAGE_PIXELS_PER_UNIT`]).
///
/// # Errors
/// `limits.work` naming the images' sizes; `gltf.image` for an image whose
/// header cannot be read.
fn spend_images(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    wear: &Wear,
    opts: &TextureOptions,
) -> Result<(), ImportError> {
    let mut pixels = 0u64;
    let mut sizes = Vec::new();
    for i in used_images(doc, wear) {
        let bytes = image_bytes_with(doc, base_dir, i, opts)?;
        let (w, h) = image::ImageReader::new(std::io::Cursor::new(&bytes[..]))
            .with_guessed_format()
            .map_err(|e| e.to_string())
            .and_then(|r| r.into_dimensions().map_err(|e| e.to_string()))
            .map_err(|e| {
                err(
                    "gltf.image",
                    format!("image {i}: cannot decode ({e}); PNG and JPEG are supported"),
                )
            })?;
        pixels = pixels.saturating_add(u64::from(w) * u64::from(h));
        sizes.push(format!("image {i} {w} x {h}"));
        let units = pixels.div_ceil(crate::limits::IMAGE_PIXELS_PER_UNIT);
        if units > opts.max_work {
            return Err(err(
                "limits.work",
                format!(
                    "the model's images ({}{}) need {units} work units to decode, over the budget of {} (see README \"Safety\"; scale the images down, or raise the budget with --max-work)",
                    sizes.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                    if sizes.len() > 8 { format!(" and {} more", sizes.len() - 8) } else { String::new() },
                    opts.max_work
                ),
            ));
        }
    }
    Ok(())
}

/// The new library entries for the materials of `wear` (row `i` = glTF
/// material `i`; see the module docs). The images' pixels together are
/// spent from `opts.max_work` before any is decoded.
///
/// # Errors
/// `gltf.image` (an image that cannot be read or decoded), `gltf.index`,
/// `limits.work`.
pub fn library_content(
    doc: &GltfFile,
    base_dir: Option<&Path>,
    wear: &Wear,
    opts: &TextureOptions,
) -> Result<LibraryContent, ImportError> {
    spend_images(doc, base_dir, wear, opts)?;
    let mut out = LibraryContent::default();
    let materials = doc.materials();
    let mut tex_of_image: HashMap<usize, String> = HashMap::new();
    let mut used = HashSet::new();
    for (row, m) in materials.iter().enumerate() {
        let Some(w) = wear.materials.get(row) else {
            break;
        };
        let pbr = m.get("pbrMetallicRoughness");
        let colour = pbr
            .and_then(|p| floats(p, "baseColorFactor"))
            .filter(|c| c.len() == 4)
            .map_or([1.0; 4], |c| [c[0], c[1], c[2], c[3]]);
        let alpha_mode = m.get("alphaMode").and_then(Value::as_str);
        let mut texture = None;
        if let Some(ti) = pbr.and_then(|p| p.get("baseColorTexture")) {
            let t = idx(ti, "index").ok_or_else(|| {
                err(
                    "gltf.index",
                    format!("material {row}: baseColorTexture without index"),
                )
            })?;
            let tex = doc.get("textures", t)?;
            match idx(tex, "source") {
                None => out.warnings.push(format!(
                    "material {row}: texture {t} has no PNG/JPEG source (extensions are not read); untextured"
                )),
                Some(img) => {
                    let name = match tex_of_image.get(&img) {
                        Some(n) => n.clone(),
                        None => {
                            doc.get("images", img)?;
                            let src = image_stem(doc, img, "TEXTURE");
                            let name = texture_name(&src, &mut used);
                            let t = texture_from_image(doc, base_dir, img, name.clone(), opts)?;
                            if let Some((w0, h0)) = t.resized_from {
                                out.warnings.push(format!(
                                    "image {img}: {w0} x {h0} resized to {} x {} (power-of-two sides, at most {})",
                                    t.rgba.width(),
                                    t.rgba.height(),
                                    opts.max_size
                                ));
                            }
                            out.textures.push(t);
                            tex_of_image.insert(img, name.clone());
                            name
                        }
                    };
                    texture = Some(name);
                }
            }
        }
        let mat0 = Mat0::new_colour(colour, texture.as_deref().map(str::as_bytes))
            .map_err(|e| err("gltf.image", e.to_string()))?;
        out.materials.push(NewMaterial {
            name: w.name.clone(),
            row,
            mat0,
            blend: blend_mode(alpha_mode),
        });
    }
    if let (Some(row), (Some((_, img)), _)) = (wear.lightmaps.first(), lightmap_image(doc)) {
        let mut t = texture_from_image(
            doc,
            base_dir,
            img,
            row.name.clone(),
            &TextureOptions {
                bits: TextureBits::Sixteen,
                ..*opts
            },
        )?;
        if t.format != TexFormat::Rgb565 {
            // Lightmaps are opaque 565 (every retail LightMap.lib entry).
            let mut rgba = t.rgba.clone();
            for p in rgba.pixels_mut() {
                p.0[3] = 255;
            }
            t.texm = texm::encode(&rgba, TexFormat::Rgb565, &opts.order.channel_order(), 0, 0)
                .map_err(|e| err("gltf.image", format!("image {img}: {e}")))?;
            t.format = TexFormat::Rgb565;
            t.rgba = rgba;
        } else {
            t.texm = texm::encode(
                &t.rgba,
                TexFormat::Rgb565,
                &opts.order.channel_order(),
                0,
                0,
            )
            .map_err(|e| err("gltf.image", format!("image {img}: {e}")))?;
        }
        out.lightmaps.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two() {
        assert_eq!(pow2(1, 1024), 1);
        assert_eq!(pow2(64, 1024), 64);
        assert_eq!(pow2(90, 1024), 64);
        assert_eq!(pow2(91, 1024), 128);
        assert_eq!(pow2(300, 1024), 256);
        assert_eq!(pow2(5000, 1024), 1024);
        assert_eq!(pow2(3, 1024), 4);
    }

    #[test]
    fn blend_modes() {
        assert_eq!(blend_mode(None), 0);
        assert_eq!(blend_mode(Some("OPAQUE")), 0);
        assert_eq!(blend_mode(Some("MASK")), 2);
        assert_eq!(blend_mode(Some("BLEND")), 4);
    }
}
