//! Terrain maps (terrain-notes): `Land.msh` (nine streams), `Land.map`
//! (ArealMap) and the `Land1.wea` / `Land2.wea` material tables.
//!
//! A sibling pipeline of the model code over the same container
//! ([`crate::nres`]) and material layers ([`crate::material`]):
//! bytes → [`ir::Land`] ([`read`]) → checks ([`validate`]) → glTF
//! ([`export`]) and back ([`import`], [`write`](mod@write)). A terrain file is recognised
//! by its streams ([`crate::source::looks_like_terrain`]), never by its name.

pub mod areals;
pub mod author;
pub mod batch;
pub mod convert;
pub mod derive;
pub mod export;
pub mod ground;
pub mod import;
pub mod ir;
pub mod map;
pub mod patches;
pub mod read;
pub mod source;
pub mod validate;
pub mod write;

pub use ir::Land;

/// NRes type ids of the Land.msh streams in their retail stored order
/// (terrain-notes §1.0).
pub const STREAM_ORDER: [u32; 9] = [1, 2, 3, 4, 5, 18, 14, 11, 21];

/// How strictly terrain files are read (terrain-notes §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every error rule (and the retail invariants the corpus lists as
    /// rejections: adjacency, chained runs, Res11 permutation) rejects the file.
    #[default]
    Strict,
    /// What is locally broken is skipped (faces) or regenerated (Res11,
    /// adjacency) and reported; structural damage still rejects.
    Tolerant,
}

/// A broken terrain rule, naming the stream, the record and the rule.
///
/// `rule` is a stable id shared with the corpus manifest's `check`
/// vocabulary (`terrain.stride`, `terrain.res1_grid`,
/// `terrain.float.non_finite`, `terrain.face_vertex_range`,
/// `terrain.neighbour_mutual`, `terrain.slot_chain`,
/// `terrain.res11_permutation`, ...; `map.*` for Land.map, `wear.*` /
/// `lib.*` for the material tables).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {}{detail}", where_(stream, record))]
pub struct TerrainError {
    /// Stable rule id.
    pub rule: &'static str,
    /// NRes type id of the stream (`None`: the file or Land.map as a whole).
    pub stream: Option<u32>,
    /// Record (element) index inside the stream.
    pub record: Option<usize>,
    /// What was found.
    pub detail: String,
}

fn where_(stream: &Option<u32>, record: &Option<usize>) -> String {
    match (stream, record) {
        (Some(s), Some(r)) => format!("Res{s} record {r}: "),
        (Some(s), None) => format!("Res{s}: "),
        (None, Some(r)) => format!("record {r}: "),
        (None, None) => String::new(),
    }
}

impl TerrainError {
    /// A rule broken by the file as a whole.
    pub fn file(rule: &'static str, detail: impl Into<String>) -> Self {
        TerrainError {
            rule,
            stream: None,
            record: None,
            detail: detail.into(),
        }
    }

    /// A rule broken by stream `stream` as a whole.
    pub fn stream(rule: &'static str, stream: u32, detail: impl Into<String>) -> Self {
        TerrainError {
            rule,
            stream: Some(stream),
            record: None,
            detail: detail.into(),
        }
    }

    /// A rule broken by record `record` of stream `stream`.
    pub fn record(
        rule: &'static str,
        stream: u32,
        record: usize,
        detail: impl Into<String>,
    ) -> Self {
        TerrainError {
            rule,
            stream: Some(stream),
            record: Some(record),
            detail: detail.into(),
        }
    }
}

impl From<crate::nres::NresError> for TerrainError {
    fn from(e: crate::nres::NresError) -> Self {
        TerrainError::file(e.rule, e.detail)
    }
}

impl From<crate::material::MaterialError> for TerrainError {
    fn from(e: crate::material::MaterialError) -> Self {
        TerrainError::file(e.rule, e.detail)
    }
}
