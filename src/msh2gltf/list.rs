//! `--list`: the model entries of INPUT (or a mission's placed objects),
//! converting nothing.

use std::path::Path;

use super::RunError;
use crate::source::{self, FileKind};
use crate::{nres, output};

/// What `--list` found.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    /// `{"file", "kind", "models": [{"name", "index", "bytes"}]}`: the
    /// `.msh` entries of an archive in directory order, or the file itself
    /// (`index` null) for a bare model or a map.
    Models(serde_json::Value),
    /// INPUT holds no models (its kind, for the message).
    Nothing(FileKind),
}

/// Lists the models of `input` (a path; read whole, up to
/// [`output::MAX_UPDATE_BYTES`]); a mission's tables are counted against
/// `max_work` before they are read ([`crate::mission::tma::read_counted`]).
///
/// # Errors
/// `cannot read INPUT` ([`RunError::Io`]); an archive or a mission
/// ([`source::Content::Mission`]) that does not read, naming its rule
/// (`mission.*`, `limits.work`) ([`RunError::Usage`]).
pub fn list(input: &str, max_work: u64) -> Result<Listing, RunError> {
    let path = Path::new(input);
    let bytes = source::read_regular(path, output::MAX_UPDATE_BYTES)
        .map_err(|e| RunError::io(format!("cannot read {input}"), e))?;
    let whole = || {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        vec![serde_json::json!({"name": name, "index": null, "bytes": bytes.len()})]
    };
    let (kind, models) = match source::classify(&bytes) {
        FileKind::Model => ("model", whole()),
        FileKind::ModelArchive => {
            let a = nres::read(&bytes, nres::Mode::Tolerant)
                .map_err(|e| RunError::Usage(format!("{input}: {e}")))?;
            let rows = source::model_entries(&a)
                .into_iter()
                .map(|i| {
                    let e = &a.entries[i];
                    serde_json::json!({"name": source::decode_name(e.name), "index": i, "bytes": e.data.len()})
                })
                .collect();
            ("archive", rows)
        }
        FileKind::Terrain => ("terrain", whole()),
        other => {
            let name = path.as_os_str().as_encoded_bytes();
            if source::content_kind(&bytes, name) != source::Content::Mission {
                return Ok(Listing::Nothing(other));
            }
            return mission_listing(input, &bytes, max_work)
                .map(Listing::Models)
                .map_err(|e| RunError::Usage(format!("{input}: {e}")));
        }
    };
    Ok(Listing::Models(
        serde_json::json!({"file": input, "kind": kind, "models": models}),
    ))
}

/// A `data.tma` (read tolerantly, mission-notes §2, its tables counted
/// against `max_work`: a listed object costs what a placed one does) as
/// `{"file", "kind": "mission", "map_path", "objects": [{"index", "kind",
/// "kind_name", "path", "clan", "clan_name", "logical_id", "position"}]}`
/// (position in game axes).
///
/// # Errors
/// The reader's [`crate::mission::MissionError`] (its rule and record).
fn mission_listing(
    input: &str,
    bytes: &[u8],
    max_work: u64,
) -> Result<serde_json::Value, crate::mission::MissionError> {
    let mut budget = crate::limits::Budget::new(max_work);
    let (m, _) =
        crate::mission::tma::read_counted(bytes, crate::mission::Mode::Tolerant, &mut budget)?;
    let names = ["building", "unit", "vegetation", "rock"];
    let objects: Vec<serde_json::Value> = m
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let clan = usize::try_from(o.clan)
                .ok()
                .filter(|_| o.is_owned())
                .and_then(|c| m.clans.get(c))
                .map(|c| source::decode_name(&c.name));
            serde_json::json!({"index": i, "kind": o.kind, "kind_name": names.get(o.kind as usize),
                "path": o.path_text(), "clan": o.clan, "clan_name": clan,
                "logical_id": o.logical_id, "position": o.position})
        })
        .collect();
    Ok(serde_json::json!({"file": input, "kind": "mission",
        "map_path": source::decode_name(&m.map_path), "objects": objects}))
}
