//! Missions (mission-notes.md): `MISSIONS/<name>/data.tma` — routes, clans,
//! placed objects with their properties, the map path, the description and
//! the mineral lodes — and the text files beside it.
//!
//! A sibling pipeline over the shared layers: bytes → [`ir::Mission`]
//! ([`tma::read`], consuming the file exactly and keeping every field raw:
//! float bits, raw strings, duplicate property names in order, the
//! description's fill) → checks ([`validate`], mission-notes §9) → back to
//! the same bytes ([`tma::write`]). Placed objects resolve to models through
//! the unit files and `objects.rlb` ([`validate::resolve`], §4).
//!
//! To and from glTF (§8): [`gltf::build`] makes one scene of the map, every
//! placed object (each model converted once, its meshes shared by every
//! copy), the routes, clans and lodes, with every raw field in the extras
//! ([`extras`]); [`pipeline`] runs it file to file and in a batch;
//! [`back::apply`] writes an edited scene back over its `data.tma`
//! (placed objects; [`layers`]: lodes, clan bases, zones, route points;
//! [`shapes`]: what the file cannot hold, each a warning), compared with
//! the scene msh2gltf makes of the base.

pub mod assets;
pub mod back;
pub mod clan_edits;
pub mod extras;
pub mod gltf;
pub mod ground;
pub mod ir;
pub mod layers;
pub mod library;
pub mod new;
pub mod owners;
pub mod pipeline;
pub mod shapes;
pub mod tma;
pub mod validate;

pub use ir::Mission;

/// How strictly a mission is read (mission-notes §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every §9 error rejects the file; the versions must be the shipped
    /// ones (format 1, clans 6, objects 10, lode word 1).
    #[default]
    Strict,
    /// What parses is kept: rule violations that leave the layout intact
    /// (a wrong marker or kind, a clan index out of range, non-finite
    /// transforms, a missing host, trailing bytes) are warnings; a file that
    /// does not parse still fails.
    Tolerant,
}

/// A broken mission rule, naming the record and the rule.
///
/// `rule` is a stable id shared with the corpus manifest's `check`
/// vocabulary: `mission.exact_eof` (the file ends inside a field, or bytes
/// follow the lode table), `mission.count_fits` (a count whose records
/// cannot fit in the bytes left), `mission.version`, `mission.marker`,
/// `mission.kind`, `mission.finite`, `mission.property_type`,
/// `mission.clan_index`, `mission.host`, `mission.host_vertex` (a hosted
/// unit's hall-way vertex past its building's Res17 vertex count),
/// `mission.resolve`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}{rule}: {}{detail}", if file.is_empty() { "" } else { ": " }, record.as_ref().map_or(String::new(), |r| format!("{r}: ")))]
pub struct MissionError {
    /// The file (empty when the reader was given bare bytes).
    pub file: String,
    /// Stable rule id.
    pub rule: &'static str,
    /// The record (`object 2 (st_s_rock_75)`, `clan 1`, `lode 0`), if any.
    pub record: Option<String>,
    /// What was found.
    pub detail: String,
}

impl MissionError {
    pub(crate) fn new(
        rule: &'static str,
        record: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        MissionError {
            file: String::new(),
            rule,
            record,
            detail: detail.into(),
        }
    }

    /// The same error naming `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }
}
