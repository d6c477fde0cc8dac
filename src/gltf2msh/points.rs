//! `--base` control points (issue 24 item 3; unit-files-notes §5.1): the
//! base model's `.cpt` sibling rebuilt from the glTF's control-point empties
//! by [`crate::unit::cpt_back::read_points`], written where the base keeps
//! it — the `.cpt` entry of the archive copy, or `<output stem>.cpt` beside
//! a bare output — by the run's one transaction. An unedited document
//! writes nothing more than before.

use std::path::Path;

use super::{conversion, read_input, RunError};
use crate::gltf_export::Up;
use crate::gltf_import::{matching, GltfFile};
use crate::nres;
use crate::output::Transaction;
use crate::unit::cpt_back::{self, CptEdit};
use crate::unit::{cpt, siblings};

/// Where the base's `.cpt` lives.
pub(super) enum CptHome {
    /// The archive entry of that index (the base is `ARCHIVE:ENTRY`).
    Entry(usize),
    /// A file beside a bare base (its path is [`BaseCpt::source`]).
    File,
}

/// The base's `.cpt`: where it is, its source name and its bytes.
pub(super) struct BaseCpt {
    /// Where it lives.
    pub home: CptHome,
    /// `ARCHIVE:ENTRY` or the path, for messages.
    pub source: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The `.cpt` of archive entry `i` of `archive` (read from `path`): the
/// entry with the model's stem and `.cpt` (unit-files-notes §3.3).
pub(super) fn in_archive(path: &Path, archive: &[u8], i: usize) -> Option<BaseCpt> {
    let a = nres::read(archive, nres::Mode::Strict).ok()?;
    let s = siblings::in_archive(&a, &path.display().to_string(), a.entries.get(i)?.name).cpt?;
    let want = s.source.rsplit_once(':').map(|(_, e)| e.to_string())?;
    let j = a
        .entries
        .iter()
        .position(|e| crate::source::decode_name(e.name).eq_ignore_ascii_case(&want))?;
    Some(BaseCpt {
        home: CptHome::Entry(j),
        source: s.source,
        bytes: s.data,
    })
}

/// The `<stem>.cpt` beside the bare base `path`, registered as an input of
/// `txn` and read as every input is.
///
/// # Errors
/// The input reader's refusal ([`read_input`]).
pub(super) fn beside(path: &Path, txn: &mut Transaction) -> Result<Option<BaseCpt>, RunError> {
    let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
        return Ok(None);
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(p) = crate::source::file_any_case(dir, &format!("{stem}.cpt")) else {
        return Ok(None);
    };
    txn.add_input(&p);
    let bytes = read_input(&p, "control points")?;
    Ok(Some(BaseCpt {
        home: CptHome::File,
        source: p.display().to_string(),
        bytes,
    }))
}

/// The control points `doc` gives against `base` (`res1_of`: every glTF
/// node's Res1 node, from the `--base` match). `None` when the base has no
/// `.cpt`; then an empty in the document is a warning in `warnings`.
///
/// # Errors
/// `cpt.*` ([`cpt::read`] of the base, [`cpt_back::read_points`]) as
/// [`RunError::Conversion`] naming the `.cpt`.
pub(super) fn edit(
    doc: &GltfFile,
    base: Option<&BaseCpt>,
    res1_of: &[Option<usize>],
    up: Up,
    warnings: &mut Vec<String>,
) -> Result<Option<CptEdit>, RunError> {
    let Some(b) = base else {
        let n = doc
            .nodes()
            .iter()
            .filter(|n| !n["extras"]["msh"][crate::unit::gltf::CONTROL_POINT_KEY].is_null())
            .count();
        if n > 0 {
            warnings.push(format!("{n} control-point empties in the glTF, but the base has no .cpt beside it: not written"));
        }
        return Ok(None);
    };
    let fail = |e: crate::unit::UnitError| conversion(e.in_file(b.source.clone()).to_string());
    let base_points = cpt::read(&b.bytes).map_err(fail)?;
    let parent = matching::parents(doc).map_err(|e| conversion(e.to_string()))?;
    let e = cpt_back::read_points(doc, &parent, res1_of, &base_points, up).map_err(fail)?;
    Ok(Some(e))
}
