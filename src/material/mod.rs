//! Materials and textures (format-notes §4): the model's WEAR table
//! ([`wear`]), `Material.lib` MAT0 records ([`mat0`]), `Textures.lib` /
//! `LightMap.lib` Texm images ([`texm`]) and the library lookups that tie them
//! together ([`library`]).
//!
//! Chain: `Batch20.material_index` → row of the model's WEAR table → MAT0
//! entry of `Material.lib` by name (missing → `DEFAULT` → entry 0) → first
//! textured phase's name → Texm entry of `Textures.lib` → mip 0 as RGBA8 / PNG.
//! WEAR `LIGHTMAPS` rows name Texm entries of `LightMap.lib`.

pub mod library;
pub mod mat0;
pub mod retexture;
pub mod rewrite;
pub mod texm;
pub mod wear;
pub mod write;

pub use library::{Fallback, Libraries, Library, LibraryLookup, ResolvedMaterial, TexturePng};
pub use mat0::{AnimBlock, Mat0, Phase};
pub use texm::{encode_png, has_alpha, PageRect, TexFormat, Texm};
pub use wear::{Wear, WearRow};

/// NRes type id of a MAT0 material record (`'MAT0'`, format-notes §1).
pub const TYPE_MAT0: u32 = 0x3054_414D;
/// NRes type id of a Texm texture (`'Texm'`, format-notes §1).
pub const TYPE_TEXM: u32 = 0x6D78_6554;
/// NRes type id of a WEAR material table (`'WEAR'`, format-notes §1).
pub const TYPE_WEAR: u32 = 0x5241_4557;

/// A broken material/texture rule. `rule` is a stable identifier shared with
/// the corpus manifest's `check` vocabulary (`wear.syntax`, `wear.count`,
/// `wear.lightmap_separator`, `mat0.size`, `mat0.anim_count`, `texm.magic`,
/// `texm.format`, `texm.size`, `texm.page`) plus the library rules `lib.io`,
/// `lib.missing`, `lib.type`, `png.encode` and the NRes rules (`nres.*`) of a
/// library that is not a valid container. `detail` names the entry, the
/// record and the values found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct MaterialError {
    /// Stable rule identifier, e.g. `texm.size`.
    pub rule: &'static str,
    /// Human-readable description naming the entry and the values.
    pub detail: String,
}

impl MaterialError {
    pub(crate) fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        MaterialError {
            rule,
            detail: detail.into(),
        }
    }

    /// The same error with `context` (e.g. `Textures.lib entry "TX00.0"`)
    /// prefixed to the detail.
    pub(crate) fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.detail = format!("{context}: {}", self.detail);
        self
    }
}

impl From<crate::nres::NresError> for MaterialError {
    fn from(e: crate::nres::NresError) -> Self {
        MaterialError {
            rule: e.rule,
            detail: e.detail,
        }
    }
}

/// Decodes name bytes (Windows-1251, format-notes §1) up to the first NUL.
pub(crate) fn decode_name(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let (s, _, _) = encoding_rs::WINDOWS_1251.decode(&bytes[..end]);
    s.into_owned()
}
