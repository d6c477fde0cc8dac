//! Units as the game shows them (unit-files-notes.md): the files beside a
//! model (`.cpt` control points, `.ctl` controller), unit files (`.dat`)
//! and what the converter builds from them — control-point empties, one
//! glTF animation per clip, and assembled units.
//!
//! This is a sibling pipeline over the same container and IR layers:
//! bytes ([`cpt`], [`ctl`], [`dat`]: bounded readers, each layout consumes
//! its file exactly) → IR ([`clips`]) → glTF ([`gltf`], [`assemble`]).
//! Sibling lookup lives in [`siblings`], the per-model pipeline in
//! [`pipeline`].

pub mod assemble;
pub mod bas;
/// The way back of clips and assembled units, part of the model import
/// ([`crate::gltf_import::clips`]).
pub use crate::gltf_import::clips as back;
mod bytes;
pub mod clips;

pub mod cpt;
pub mod cpt_back;
pub mod ctl;
pub mod dat;
pub mod gltf;
pub mod hallway;
pub mod pipeline;
pub mod siblings;
pub mod split;

/// A unit file broke a layout rule (unit-files-notes §3.3, §5.1, §5.2).
///
/// `rule` is a stable id (`cpt.size`, `ctl.counts`, `dat.tree`, ...),
/// `file` names the file or `ARCHIVE:ENTRY`, `detail` the record and the
/// values found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {rule}: {detail}")]
pub struct UnitError {
    /// The file or `ARCHIVE:ENTRY` (empty when the reader was given bare bytes).
    pub file: String,
    /// Stable rule id.
    pub rule: &'static str,
    /// What was found.
    pub detail: String,
}

impl UnitError {
    pub(crate) fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        UnitError {
            file: String::new(),
            rule,
            detail: detail.into(),
        }
    }

    /// The same error, naming `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }
}
