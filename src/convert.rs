//! The import pipeline for one model (application layer): bytes → IR
//! ([`crate::msh::read`]) → materials ([`crate::material`]) → glTF
//! ([`crate::gltf_export`]). Used by the single-model CLI, archives and the
//! batch converter alike.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::convention::{self, Decided};
use crate::gltf_export::{
    self, batch_material, BatchMaterial, Blend, ExportMaterial, ExportOptions, Exported,
    TextureImage,
};
use crate::material::{library::Fallback, wear::Wear, Libraries};
use crate::msh::read::{decode, Mode};
use crate::msh::MshError;
pub use crate::run::{ConvertOptions, Counts};

/// One model to convert: its bytes and where they came from.
#[derive(Debug, Clone)]
pub struct ModelRef<'a> {
    /// Display name: the file path, or `ARCHIVE:ENTRY`.
    pub source: String,
    /// Model stem (entry or file name without extension), names the glTF animation.
    pub stem: String,
    /// The model NRes bytes.
    pub bytes: &'a [u8],
    /// The sibling WEAR table, when the model sits in an archive that has one.
    pub wear: Option<&'a [u8]>,
}

/// What went wrong with one model, with the rule that was broken.
#[derive(Debug)]
pub enum ConvertErrorKind {
    /// The model (or its container) breaks a format rule.
    Msh(MshError),
    /// The sibling WEAR table is malformed (strict mode).
    Wear(String, &'static str),
    /// glTF export failed (its rule: `limits.work`, `gltf.non_finite`, ...).
    Export(gltf_export::ExportError),
    /// The output could not be written (`output.exists`, `output.is_input`, `io`, ...).
    Output(crate::output::OutputError),
}

/// A failed conversion of one model: names the source (file, archive
/// entry), and through the kind the stream, record and rule.
#[derive(Debug)]
pub struct ConvertError {
    /// `file` or `ARCHIVE:ENTRY`.
    pub source: String,
    /// The failure.
    pub kind: ConvertErrorKind,
}

impl ConvertError {
    /// The stable rule id (`msh.index_range`, `nres.total_size`, `wear.lightmap_separator`, ...).
    pub fn rule(&self) -> &'static str {
        match &self.kind {
            ConvertErrorKind::Msh(e) => e.rule,
            ConvertErrorKind::Wear(_, r) => r,
            ConvertErrorKind::Export(e) => e.rule(),
            ConvertErrorKind::Output(e) => e.rule(),
        }
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ConvertErrorKind::Msh(e) => write!(f, "{}: {}", self.source, e),
            ConvertErrorKind::Wear(e, _) => write!(f, "{}: WEAR: {}", self.source, e),
            ConvertErrorKind::Export(e) => write!(f, "{}: glTF export: {}", self.source, e),
            ConvertErrorKind::Output(e) => write!(f, "{}: output: {}", self.source, e),
        }
    }
}

impl std::error::Error for ConvertError {}

/// A converted model: the glTF document and binary, warnings and counts.
pub struct Converted {
    /// The glTF document and binary buffer.
    pub exported: Exported,
    /// Everything tolerated or approximated (tolerant repairs, material
    /// fallbacks, quaternion layout choice, baked tracks).
    pub warnings: Vec<String>,
    /// Counts for reports.
    pub counts: Counts,
    /// The model's conventions and how each was decided (format-notes §6).
    pub conventions: Decided,
    /// Names of the embedded textures (Textures.lib entries).
    pub textures: Vec<String>,
    /// The WEAR row names the model's materials use (sorted, distinct):
    /// with no `Material.lib`/`Textures.lib` found they come out white and
    /// untextured, which the caller reports with where it looked.
    pub wear_materials: Vec<String>,
}

/// A decoded library image as an embeddable texture; its name is recorded
/// once in `names` (the model's texture list for reports and
/// `--textures-out`).
fn embed(t: &crate::material::library::TexturePng, names: &mut Vec<String>) -> Arc<TextureImage> {
    if !names.contains(&t.name) {
        names.push(t.name.clone());
    }
    Arc::new(TextureImage {
        name: t.name.clone(),
        png: t.png.clone(),
        has_alpha: t.has_alpha,
    })
}

/// The decoded pixels of a model's library textures, counted in its export
/// budget (docs/safety.md, [`crate::limits::IMAGE_PIXELS_PER_UNIT`]) from
/// the Texm header before decoding: each texture once per model; a texture
/// that does not fit in what is left is not embedded, with a warning, and
/// what the textures spent is not available to the rest of the export.
struct TexturePixels {
    budget: crate::limits::Budget,
    seen: std::collections::HashSet<String>,
}

impl TexturePixels {
    fn new(max_work: u64) -> Self {
        TexturePixels {
            budget: crate::limits::Budget::new(max_work),
            seen: Default::default(),
        }
    }

    /// True when texture `name` (`what`: texture or lightmap) may be
    /// decoded. A header that does not parse is left to the decoder, which
    /// reports it.
    fn allow<E>(
        &mut self,
        texm: Result<crate::material::texm::Texm<'_>, E>,
        what: &str,
        name: &str,
        warnings: &mut Vec<String>,
    ) -> bool {
        if self.seen.contains(name) {
            return true;
        }
        let Ok(t) = texm else { return true };
        let units = (u64::from(t.width) * u64::from(t.height))
            .div_ceil(crate::limits::IMAGE_PIXELS_PER_UNIT);
        if self.budget.used.saturating_add(units) > self.budget.max {
            warnings.push(format!(
                "{what} {name:?} ({} x {}) not embedded: decoding it needs {units} work units, {} of the budget of {} are left (README \"Safety\"; raise it with --max-work)",
                t.width,
                t.height,
                self.budget.max.saturating_sub(self.budget.used),
                self.budget.max
            ));
            return false;
        }
        self.budget.used += units;
        self.seen.insert(name.to_string());
        true
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Converts one model to glTF.
///
/// Material names come from the WEAR sibling; with `libs`, base colours and
/// textures are resolved through Material.lib / Textures.lib (format-notes §4).
///
/// # Errors
/// [`ConvertError`] naming the source and the broken rule: a strict decode
/// failure, a malformed WEAR table in strict mode, or an export failure.
pub fn convert(
    m: &ModelRef<'_>,
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    let err = |kind| ConvertError {
        source: m.source.clone(),
        kind,
    };
    let decoded = decode(m.bytes, opts.mode).map_err(|e| err(ConvertErrorKind::Msh(e)))?;
    let model = decoded.model;
    let mut warnings: Vec<String> = decoded.warnings.iter().map(|w| w.to_string()).collect();
    let wear = read_wear(m, opts.mode, &mut warnings)?;

    let decided = convention::detect(&model, wear.as_ref(), &opts.conventions);
    let conv = decided.conventions;
    let lightmaps = wear.as_ref().is_none_or(|w| !w.lightmaps.is_empty());
    let lit_allowed = lightmaps && model.res18.is_some();
    let used: BTreeSet<BatchMaterial> = model
        .batches
        .iter()
        .map(|b| batch_material(&conv, lit_allowed, b))
        .collect();
    let mut mats = MaterialSet {
        wear: wear.as_ref(),
        libs,
        opts,
        materials: Vec::with_capacity(used.len()),
        texture_names: Vec::new(),
        pixels: TexturePixels::new(opts.max_work),
        warnings,
    };
    mats.add_all(&used, &conv);

    let export_opts = ExportOptions {
        fps: opts.fps,
        up: opts.up,
        conventions: Some(decided.clone()),
        lightmaps,
        cells: opts.cells,
        source: m.source.clone(),
        sha256: sha256_hex(m.bytes),
        name: m.stem.clone(),
        max_work: opts.max_work.saturating_sub(mats.pixels.budget.used).max(1),
    };
    let exported = gltf_export::export(&model, &mats.materials, &export_opts)
        .map_err(|e| err(ConvertErrorKind::Export(e)))?;
    let mut warnings = mats.warnings;
    let r = &exported.report;
    warnings.extend(r.warnings.iter().cloned());
    if !r.baked_nodes.is_empty() {
        warnings.push(format!(
            "{} non-canonical track(s) baked at every frame (nodes {:?})",
            r.baked_nodes.len(),
            r.baked_nodes
        ));
    }
    let counts = Counts {
        nodes: model.nodes.len(),
        slots: model.slots.len(),
        vertices: model.positions.len(),
        triangles: model.indices.len() / 3,
        batches: model.batches.len(),
        animated_nodes: r.animated_nodes,
        frame_count: model.frame_count,
        materials: used.len(),
        textures: mats.texture_names.len(),
    };
    Ok(Converted {
        exported,
        warnings,
        counts,
        conventions: decided,
        textures: mats.texture_names,
        wear_materials: mats
            .materials
            .iter()
            .filter_map(|m| m.name.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    })
}

/// The model's WEAR table (format-notes §4), when it has one. In tolerant
/// mode a malformed table is a warning (materials fall back to DEFAULT,
/// untextured).
///
/// # Errors
/// [`ConvertErrorKind::Wear`] with the table's rule, in strict mode.
fn read_wear(
    m: &ModelRef<'_>,
    mode: Mode,
    warnings: &mut Vec<String>,
) -> Result<Option<Wear>, ConvertError> {
    let Some(text) = m.wear else {
        return Ok(None);
    };
    match Wear::parse(text) {
        Ok(w) => Ok(Some(w)),
        Err(e) if mode == Mode::Tolerant => {
            warnings.push(format!(
                "WEAR: {e}; materials fall back to DEFAULT, untextured"
            ));
            Ok(None)
        }
        Err(e) => {
            let rule = e.rule;
            Err(ConvertError {
                source: m.source.clone(),
                kind: ConvertErrorKind::Wear(e.to_string(), rule),
            })
        }
    }
}

/// The glTF materials of one model, built from its batches' material keys
/// through the WEAR table and the libraries (format-notes §4), with the
/// textures embedded so far and the warnings of the conversion.
struct MaterialSet<'a> {
    wear: Option<&'a Wear>,
    libs: Option<&'a Libraries>,
    opts: &'a ConvertOptions,
    materials: Vec<ExportMaterial>,
    texture_names: Vec<String>,
    pixels: TexturePixels,
    warnings: Vec<String>,
}

impl MaterialSet<'_> {
    /// One material per distinct (key, lit) of `used`, in order; a key that
    /// selects no WEAR row (by `conv.wear_key`, R4) is named in one warning.
    fn add_all(&mut self, used: &BTreeSet<BatchMaterial>, conv: &convention::Conventions) {
        let mut missing_rows: BTreeSet<u16> = Default::default();
        for &bm in used {
            let wear = self.wear;
            let row = wear.and_then(|w| conv.wear_key.row(w, bm.key));
            let name = row.and_then(|r| wear.map(|w| w.materials[r].name.clone()));
            if wear.is_some() && name.is_none() {
                missing_rows.insert(bm.key);
            }
            let lightmap_name = if bm.lit {
                wear.and_then(|w| w.lightmaps.first())
                    .map(|r| r.name.clone())
            } else {
                None
            };
            let mut em = ExportMaterial {
                key: bm,
                name: name.clone(),
                lightmap_name: lightmap_name.clone(),
                ..Default::default()
            };
            if let (Some(libs), Some(name)) = (self.libs, name.as_deref()) {
                self.resolve(&mut em, libs, name);
            }
            if let (Some(libs), Some(lm), true) =
                (self.libs, lightmap_name.as_deref(), self.opts.textures)
            {
                self.attach_lightmap(&mut em, libs, lm);
            }
            self.materials.push(em);
        }
        if !missing_rows.is_empty() {
            self.warnings.push(format!(
                "material keys {missing_rows:?} select no row of the WEAR table ({} rows, keyed by {})",
                self.wear.map_or(0, |w| w.materials.len()),
                match conv.wear_key {
                    convention::WearKey::Id => "id",
                    convention::WearKey::Row => "row",
                }
            ));
        }
    }

    /// Material `name` through Material.lib: base colour, blend and (with
    /// textures) its texture, within the pixel budget. A broken library
    /// entry is the library's fault, not the model's: it is reported on
    /// every model that uses it, in both modes.
    fn resolve(&mut self, em: &mut ExportMaterial, libs: &Libraries, name: &str) {
        let warnings = &mut self.warnings;
        let r = libs.resolve_material(name);
        if let Some(e) = &r.error {
            warnings.push(format!("material {name:?}: {e}"));
        }
        match r.fallback {
            Some(Fallback::Default) | Some(Fallback::FirstEntry) => warnings.push(format!(
                "material {name:?} is not usable in Material.lib: using {:?} instead",
                r.resolved
            )),
            Some(Fallback::NoLibrary) => warnings.push(format!(
                "material {name:?}: no Material.lib; untextured white"
            )),
            None => {}
        }
        em.base_color = Some(r.base_color);
        em.blend = Blend::from_attr1(r.blend_attr1);
        if !self.opts.textures {
            return;
        }
        let pixels = &mut self.pixels;
        if let Some(tex) = r
            .texture
            .as_deref()
            .filter(|t| pixels.allow(libs.texture_texm(t), "texture", t, warnings))
        {
            match libs.texture_png(tex) {
                Ok(t) => em.texture = Some(embed(&t, &mut self.texture_names)),
                Err(e) => warnings.push(format!("texture {tex:?}: {e}; untextured")),
            }
        }
    }

    /// Lightmap `lm` from LightMap.lib, within the pixel budget.
    fn attach_lightmap(&mut self, em: &mut ExportMaterial, libs: &Libraries, lm: &str) {
        if !self
            .pixels
            .allow(libs.lightmap_texm(lm), "lightmap", lm, &mut self.warnings)
        {
            return;
        }
        match libs.lightmap_png(lm) {
            Ok(t) => em.lightmap = Some(embed(&t, &mut self.texture_names)),
            Err(e) => self
                .warnings
                .push(format!("lightmap {lm:?}: {e}; not attached")),
        }
    }
}

#[cfg(test)]
mod texture_budget_tests {
    use super::*;
    use crate::convention::TexmOrder;
    use crate::material::texm::{self, TexFormat, Texm};

    fn texm_bytes(side: u32) -> Vec<u8> {
        let img = image::RgbaImage::new(side, side);
        texm::encode(
            &img,
            TexFormat::Rgb565,
            &TexmOrder::Retail.channel_order(),
            0,
            0,
        )
        .unwrap()
    }

    #[test]
    fn library_textures_spend_the_export_budget_from_their_header() {
        let (small, big) = (texm_bytes(64), texm_bytes(512));
        // 64² = 512 units, 512² = 32 768 units; a budget of 10 000 units.
        let mut p = TexturePixels::new(10_000);
        let mut w = Vec::new();
        assert!(p.allow(Texm::parse(&small), "texture", "SMALL", &mut w));
        assert_eq!(p.budget.used, 512);
        // Counted once per model.
        assert!(p.allow(Texm::parse(&small), "texture", "SMALL", &mut w));
        assert_eq!(p.budget.used, 512);
        assert!(!p.allow(Texm::parse(&big), "texture", "BIG", &mut w));
        assert_eq!(p.budget.used, 512);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("\"BIG\" (512 x 512) not embedded") && w[0].contains("--max-work"),
            "{}",
            w[0]
        );
    }
}
