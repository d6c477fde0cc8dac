//! `--list`: the model entries of INPUT, converting nothing.

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
/// [`output::MAX_UPDATE_BYTES`]).
///
/// # Errors
/// `cannot read INPUT` ([`RunError::Io`]); an archive that does not read
/// ([`RunError::Usage`]).
pub fn list(input: &str) -> Result<Listing, RunError> {
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
        other => return Ok(Listing::Nothing(other)),
    };
    Ok(Listing::Models(
        serde_json::json!({"file": input, "kind": kind, "models": models}),
    ))
}
