//! The codec's error type: one broken rule of msh-core §7 / msh-animation §9
//! (or of the NRes container, format-notes §1), located by stream and record.

use std::fmt;

use crate::nres::NresError;

/// A broken MSH (or NRes) rule.
///
/// `rule` is a stable identifier from the corpus manifest's `check`
/// vocabulary (`msh.index_range`, `msh.anim.map_range`, `nres.total_size`,
/// ...). `stream` is the stream type id (`13` for Res13) and `record` the
/// record index inside that stream, when the finding has a location.
///
/// Displayed as `Res13 record 4: msh.index_range: <detail>`; the location
/// parts are left out when unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct MshError {
    /// Stable rule identifier.
    pub rule: &'static str,
    /// Stream type id (`Res<N>`), if the finding belongs to one stream.
    pub stream: Option<u32>,
    /// Record index inside the stream (node, slot, batch, key, word, vertex...).
    pub record: Option<usize>,
    /// What was found, with the values.
    pub detail: String,
}

impl MshError {
    /// An error without a location.
    pub fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        MshError {
            rule,
            stream: None,
            record: None,
            detail: detail.into(),
        }
    }

    /// An error located in stream `Res<stream>`.
    pub fn at_stream(rule: &'static str, stream: u32, detail: impl Into<String>) -> Self {
        MshError {
            rule,
            stream: Some(stream),
            record: None,
            detail: detail.into(),
        }
    }

    /// An error located at record `record` of stream `Res<stream>`.
    pub fn at(rule: &'static str, stream: u32, record: usize, detail: impl Into<String>) -> Self {
        MshError {
            rule,
            stream: Some(stream),
            record: Some(record),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for MshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.stream, self.record) {
            (Some(s), Some(r)) => write!(f, "Res{s} record {r}: ")?,
            (Some(s), None) => write!(f, "Res{s}: ")?,
            (None, Some(r)) => write!(f, "record {r}: ")?,
            (None, None) => {}
        }
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

impl From<NresError> for MshError {
    /// Keeps the container's `nres.*` rule.
    fn from(e: NresError) -> Self {
        MshError::new(e.rule, e.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_stream_and_record() {
        let e = MshError::at("msh.index_range", 13, 4, "index 9 >= 3 vertices");
        assert_eq!(
            e.to_string(),
            "Res13 record 4: msh.index_range: index 9 >= 3 vertices"
        );
        let e = MshError::at_stream("msh.stride", 3, "size 13");
        assert_eq!(e.to_string(), "Res3: msh.stride: size 13");
        let e = MshError::new("msh.missing_stream", "no Res1");
        assert_eq!(e.to_string(), "msh.missing_stream: no Res1");
        let n = NresError {
            rule: "nres.magic",
            detail: "x".into(),
        };
        assert_eq!(MshError::from(n).to_string(), "nres.magic: x");
    }
}
